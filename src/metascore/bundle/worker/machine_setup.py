"""What ``metascore bundle run --setup`` installs on this machine: the local sandbox.

A fresh machine lacks bubblewrap, and the local backend then falls back to a mode that
isolates almost nothing (or refuses ``--submissions``). :func:`install_bubblewrap` installs
it with the system's ``apt-get`` (as root, else through ``sudo``, which may ask for the
password), once; a system without ``apt-get``, or that is not Linux, is told what to do
instead. The image's Python packages, the other step of a first local run, are
:func:`~metascore.bundle.worker.pyenv.build_env`'s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable

from ...errors import ConfigError
from .sandbox import sandbox_available

__all__ = ["install_bubblewrap"]


def install_bubblewrap(log: Callable[[str], None] = lambda _: None) -> bool:
    """Install bubblewrap unless ``bwrap`` is there; return whether it installed it.

    Raises
    ------
    ConfigError
        Where it cannot: not Linux, no ``apt-get``, not root and no ``sudo``, or
        ``apt-get`` failed (its last lines said).
    """
    if shutil.which("bwrap") is not None:
        return False
    if not sys.platform.startswith("linux"):
        raise ConfigError("--setup: bubblewrap, the local sandbox, is Linux's; here use --backend "
                          "docker (or --sandbox rewrite, which isolates almost nothing).")
    apt = shutil.which("apt-get")
    if apt is None:
        raise ConfigError("--setup: there is no apt-get here to install bubblewrap with; install "
                          "it with this system's package manager (e.g. `dnf install bubblewrap`), "
                          "then run again.")
    sudo: list[str] = []
    if os.geteuid() != 0:
        found = shutil.which("sudo")
        if found is None:
            raise ConfigError("--setup: installing bubblewrap needs root; run `apt-get install "
                              "bubblewrap` as root, then run again.")
        sudo = [found]
    install = [*sudo, apt, "install", "-y", "bubblewrap"]
    log(f"[*] --setup: installing bubblewrap, the local sandbox: {' '.join(install)}")
    if _apt(install) != 0:  # a fresh system's package lists may be empty: fetch them first
        log(f"[*] --setup: {' '.join([*sudo, apt, 'update'])}, then again")
        _apt([*sudo, apt, "update"])
        if (code := _apt(install)) != 0:
            raise ConfigError(f"--setup: `{' '.join(install)}` failed (exit code {code}); install "
                              "bubblewrap yourself, or run with --backend docker.")
    sandbox_available.cache_clear()  # checked once per process: again, now that it is there
    return True


def _apt(argv: list[str]) -> int:
    """Run an ``apt-get`` command, its output on this terminal; its exit code."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(argv, env=env, check=False).returncode
