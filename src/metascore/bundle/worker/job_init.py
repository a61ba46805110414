"""The first process of every local job: limits, identity, then the job's command.

Run as a script with the runner's own Python (``python -S -I job_init.py OPTIONS -- CMD``),
so it imports nothing but the standard library. The local backend
(:mod:`metascore.bundle.worker.local`) starts it twice per job:

- **outside** the sandbox, as the runner's user: ``--cgroup FILE`` (as root, repeated)
  writes its own pid into each ``cgroup.procs`` file, so that the step's control groups
  hold every process it will make (:mod:`metascore.bundle.worker.cgroups`); ``--new-keyring``
  joins a new, empty session keyring, so that the job cannot reach the keys of the
  runner's (an organizer's shell may hold some); ``--rlimits DATA FSIZE NPROC`` sets the
  per-process limits every process of the job inherits (``-1``: unchanged; core dumps are
  always off), then it ``exec``s ``bwrap``. In the rewrite mode (no sandbox) it adds
  ``--supervise``: it becomes a *child subreaper*, so a process that leaves its session
  (``setsid``, a double fork) is still its descendant; it runs the command as its child,
  and when the command ends it kills what is left and exits with the command's status.
- **inside** the sandbox, when the runner is root: ``--user UID GID`` clears the capability
  bounding set, sets ``no_new_privs``, drops every supplementary group and becomes
  ``UID:GID`` (a user of the job's own, with no capability and no file on the host), then
  ``exec``s the command. The sandbox gives it only the capabilities this needs. With
  ``--supervise`` (the rewrite mode run as root for submissions the bundle does not carry)
  only the command becomes that user: the supervisor stays root, so that the job can
  neither signal it nor leave its control groups.

Exit status 127 with one line on stderr when the command cannot be started. The watcher
(:mod:`metascore.bundle.worker.limits`) and the local backend import :func:`descendants` from here,
:mod:`metascore.bundle.worker.leftovers` :func:`kill_until_gone`.
"""

import os
import signal
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_PR_SET_CHILD_SUBREAPER = 36
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "armv7l": 311}


def _prctl(option, value):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def set_rlimits(data, fsize, nproc):
    """Cap one process's data segment, one file's size and the user's processes (-1: keep)."""
    import resource

    for which, value in ((resource.RLIMIT_DATA, data), (resource.RLIMIT_FSIZE, fsize),
                         (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_CORE, 0)):
        if value < 0:
            continue
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def join_cgroups(files):
    """Move this process into the control groups whose ``cgroup.procs`` are ``files``."""
    for path in files:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))


def new_session_keyring():
    """Join a new anonymous session keyring (the runner's keys stay out of reach); where
    there are no keyrings, nothing to hide."""
    import ctypes

    number = _SYS_KEYCTL.get(os.uname().machine)
    if number is None:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None) < 0 and ctypes.get_errno() != 38:  # ENOSYS
        raise OSError(ctypes.get_errno(), "cannot join a new session keyring: " + os.strerror(ctypes.get_errno()))


def become(uid, gid):
    """Drop to ``uid:gid`` for good: no capability can come back, through ``exec`` or else."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _prctl(_PR_CAPBSET_DROP, cap)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:  # pragma: no cover - the kernel refused
        raise OSError("could not become uid %d" % uid)


def process_table():
    """``pid -> (parent pid, resident pages)`` of every process (Linux ``/proc``)."""
    table = {}
    if not os.path.isdir("/proc/self"):
        return table
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            # after "pid (comm)": state ppid pgrp session ... rss is field 24 (index 21 here)
            table[int(name)] = (int(fields[1]), int(fields[21]))
        except (OSError, IndexError, ValueError):
            continue
    return table


def descendants(root, table=None):
    """Every process whose chain of parents leads to ``root`` (``root`` excluded)."""
    table = process_table() if table is None else table
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def supervise(argv, user=None):
    """Run ``argv`` as a child (as ``user``, a ``(uid, gid)``, if given); when it ends, kill
    and reap every other descendant."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    child = os.fork()
    if child == 0:
        if user is not None:
            try:
                become(*user)
            except OSError as exc:
                sys.stderr.write("metascore: cannot set up the job (%s)\n" % exc)
                os._exit(126)
        start(argv)
    while True:
        try:
            pid, status = os.waitpid(child, 0)
            break
        except InterruptedError:  # pragma: no cover - retried by Python itself
            continue
    me = os.getpid()
    kill_until_gone(lambda: descendants(me), then=_reap)
    return os.waitstatus_to_exitcode(status)


def kill_until_gone(find, then=None):
    """SIGKILL the processes ``find()`` names, again (``then()`` between two rounds) until
    it names none, so that none forks away; at most 100 rounds."""
    for _ in range(100):
        pids = find()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if then is not None:
            then()


def _reap():
    """Reap the children that are gone."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def start(argv):
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write("cannot start %r: %s\n" % (argv[0], exc.strerror or exc))
        os._exit(127)


def main(args):
    split = args.index("--")
    options, argv = args[:split], args[split + 1:]
    supervised, user = False, None
    try:
        supervised, user = _set_up(options)
        if user is not None and not supervised:
            become(*user)
    except OSError as exc:  # the job must not run without its limits: one line, no traceback
        sys.stderr.write("metascore: cannot set up the job (%s)\n" % exc)
        sys.exit(126)
    if supervised:
        code = supervise(argv, user)
        # a death by signal is passed on as such, as the command's own would be
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        sys.exit(code if code >= 0 else 128 - code)
    start(argv)


def _set_up(options):
    """Apply the options before ``--`` but ``--user``; whether the command is to be
    supervised, and the user it is to become (or ``None``)."""
    supervised, user = False, None
    while options:
        flag = options.pop(0)
        if flag == "--rlimits":
            set_rlimits(*(int(options.pop(0)) for _ in range(3)))
        elif flag == "--cgroup":
            join_cgroups([options.pop(0)])
        elif flag == "--new-keyring":
            new_session_keyring()
        elif flag == "--user":
            user = (int(options.pop(0)), int(options.pop(0)))
        elif flag == "--supervise":
            supervised = True
        else:
            raise SystemExit("job_init: unknown option %r" % flag)
    return supervised, user


if __name__ == "__main__":
    main(sys.argv[1:])
