# 11: a user namespace of its own (every capability inside), a mount namespace and a 680 MB
# tmpfs there: as `unshare -Urm`.
import ctypes
import os
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
    sys.exit(f"held: unshare(CLONE_NEWUSER) refused ({os.strerror(ctypes.get_errno())})")
# root inside, as `unshare -Urm` maps it
open("/proc/self/setgroups", "w").write("deny")
open("/proc/self/uid_map", "w").write(f"0 {uid} 1")
open("/proc/self/gid_map", "w").write(f"0 {gid} 1")
os.makedirs("/tmp/big", exist_ok=True)
if libc.mount(b"none", b"/tmp/big", b"tmpfs", 0, b"size=700m") != 0:
    sys.exit(f"held: a user namespace, but no tmpfs ({os.strerror(ctypes.get_errno())})")
for i in range(68):  # files of 10 MB: one file is capped at --disk-limit
    with open(f"/tmp/big/fill{i}", "wb") as handle:
        handle.write(b"x" * (10 << 20))
print("ESCAPE: 680 MB in a tmpfs of a user namespace")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
