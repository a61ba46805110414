# 11: 680 MB of System V shared memory, touched page by page.
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
size = 680 << 20
shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(size), IPC_CREAT | 0o600)
if shmid < 0:
    sys.exit(f"held: shmget refused ({os.strerror(ctypes.get_errno())})")
addr = libc.shmat(shmid, None, 0)
ctypes.memset(addr, 1, size)
print("ESCAPE: 680 MB of SysV shared memory")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
