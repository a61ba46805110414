# 12: the keys of the runner's session keyring (an organizer's shell may hold some).
import ctypes
import os
import sys

SYS_keyctl = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
KEYCTL_READ, KEY_SPEC_SESSION_KEYRING = 11, -3
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(4096)
n = libc.syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buf, 4096)
if n < 0:
    sys.exit(f"held: the session keyring cannot be read ({os.strerror(ctypes.get_errno())})")
ids = [int.from_bytes(buf.raw[i:i + 4], "little") for i in range(0, min(n, 4096), 4)]
for key in ids:
    got = libc.syscall(SYS_keyctl, KEYCTL_READ, key, buf, 4096)
    if got > 0:
        print(f"ESCAPE: key {key} reads {buf.raw[:got]!r}")
if not ids:
    sys.exit("held: the session keyring is empty")
open(os.path.join(sys.argv[1], "pred.txt"), "w").write("0.5")
