"""The seccomp filter of the local sandbox: what Docker's default profile refuses a container.

A job run by bwrap as root has no capability, but the kernel still lets any process make a
user namespace (where it has every capability: mounts, a tmpfs outside the memory limit)
and read the keys of its session keyring. Docker's default seccomp profile refuses both,
and the local sandbox does the same with :func:`job_filter`, a classic BPF program that
``bwrap --seccomp FD`` installs just before it starts the job's first process:

- ``EPERM`` for new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag),
  mounts (``mount``, ``umount2``, ``pivot_root`` and the new mount API), the keyring
  (``add_key``, ``keyctl``, ``request_key``), kernel modules and ``kexec``, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, file handles (``open_by_handle_at``), the clock,
  ``reboot``, ``swapon``/``swapoff``, ``acct``, ``quotactl`` and ``syslog``;
- ``ENOSYS`` for ``clone3`` (its flags cannot be read by a filter; the C library then falls
  back to ``clone``, as under Docker), for the x32 calls of x86-64 and for every call made
  through another architecture's entry (32-bit ``int 0x80``), whose numbers differ;
- every other call allowed.

The numbers are those of the two architectures it is built for (x86-64 and AArch64); on
another, :func:`job_filter` returns ``None`` and the backend says that the filter is
missing (:func:`filter_support`).
"""

from __future__ import annotations

import errno
import functools
import os
import struct

__all__ = ["job_filter", "filter_support", "DENIED", "SYSCALLS"]

#: Each call's number on x86_64 and on aarch64 (``os.uname().machine``), written once: the
#: calls of :data:`DENIED`, then ``clone`` and ``clone3``, which are checked apart.
_NUMBERS = {
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "open_tree": (428, 428), "move_mount": (429, 429),
    "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442), "add_key": (248, 217), "keyctl": (250, 219),
    "request_key": (249, 218), "init_module": (175, 105), "finit_module": (313, 273),
    "delete_module": (176, 106), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264), "settimeofday": (164, 170),
    "clock_settime": (227, 112), "clock_adjtime": (305, 266), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60),
    "syslog": (103, 116), "clone": (56, 220), "clone3": (435, 435),
}
_MACHINES = ("x86_64", "aarch64")
#: Calls refused with EPERM (Docker's default profile refuses them to a container).
DENIED = tuple(name for name in _NUMBERS if name not in ("clone", "clone3"))
#: System call numbers, per machine (``os.uname().machine``); ``clone`` and ``clone3`` are
#: checked apart.
SYSCALLS = {machine: {name: numbers[k] for name, numbers in _NUMBERS.items()}
            for k, machine in enumerate(_MACHINES)}
#: ``AUDIT_ARCH_*``: the architecture a call is made through, as ``seccomp_data.arch`` says.
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000  # x86-64's x32 calls: number | this bit
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

# classic BPF: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}; seccomp_data {int nr;
# u32 arch; u64 ip; u64 args[6]}
_LOAD = 0x20        # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15         # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35         # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45        # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06         # BPF_RET | BPF_K
_NR, _ARCH, _ARG0 = 0, 4, 16
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000


def job_filter(machine: str | None = None) -> bytes | None:
    """The filter as ``bwrap --seccomp`` reads it (the ``sock_filter`` instructions), for
    ``machine`` (default: this one); ``None`` for a machine it is not built for."""
    machine = machine or os.uname().machine
    numbers = SYSCALLS.get(machine)
    if numbers is None:
        return None
    # (code, jump-if-true label, jump-if-false label, k); a label is the name of a return
    program: list[tuple[int, str | None, str | None, int]] = [
        (_LOAD, None, None, _ARCH),
        (_JEQ, None, "enosys", _AUDIT_ARCH[machine]),
        (_LOAD, None, None, _NR),
    ]
    if machine == "x86_64":
        program.append((_JGE, "enosys", None, _X32_BIT))
    program += [(_JEQ, "eperm", None, numbers[name]) for name in DENIED]
    program += [(_JEQ, "enosys", None, numbers["clone3"]),
                (_JEQ, "clone", None, numbers["clone"]),
                (_RET, None, None, _ALLOW)]
    labels = {"clone": len(program)}
    program += [(_LOAD, None, None, _ARG0),  # clone's flags (the low half of the first argument)
                (_JSET, "eperm", None, _NAMESPACE_FLAGS),
                (_RET, None, None, _ALLOW)]
    labels["eperm"] = len(program)
    program.append((_RET, None, None, _ERRNO | errno.EPERM))
    labels["enosys"] = len(program)
    program.append((_RET, None, None, _ERRNO | errno.ENOSYS))

    def offset(at: int, label: str | None) -> int:
        return 0 if label is None else labels[label] - at - 1

    return b"".join(struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
                    for i, (code, jt, jf, k) in enumerate(program))


@functools.lru_cache(maxsize=1)
def filter_support() -> str:
    """``""`` when the filter can be used here, else why not (one clause)."""
    machine = os.uname().machine
    if machine not in SYSCALLS:
        return f"no seccomp filter is built for {machine}"
    try:
        with open("/proc/self/status") as handle:
            if not any(line.startswith("Seccomp:") for line in handle):
                return "this kernel has no seccomp"
    except OSError:
        return "this system has no /proc/self/status to tell whether seccomp works"
    return ""
