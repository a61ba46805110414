"""Will the meta-scoring program run in the competition's image? Ask a container of it.

:func:`probe_image` starts one short container of the image with the assembled meta-scoring
program mounted read-only at ``/app/program`` and no network, and runs the interpreter of the
program's own command (its bundled Python through the image's loader, or the image's
``python3``) on :data:`PROBE`: the imports the program makes, then one line with the Python
and package versions, the glibc and the machine. It either prints that line (the program
runs there) or fails with the reason the program would fail with on the site: no loader at
``/lib64/ld-linux-x86-64.so.2`` (not a glibc image, e.g. Alpine), a glibc older than the
runtime's, a missing system library (``libstdc++.so.6``), another architecture, or, with
``--meta-python image``, a Python or a package too old or missing.

``bundle check --probe`` and ``bundle run --backend docker`` use it before anything runs
(:func:`metascore.bundle.runner.meta_image_report`); the local backend cannot know (it runs
the program on this machine) and says so (:data:`LOCAL_NOTICE`).
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...errors import ConfigError, MetascoreError
from .backend import Mount, StepSpec
from ..files import METADATA_FILES

__all__ = ["PROBE", "Probe", "probe_command", "probe_image", "probe_meta_program", "LOCAL_NOTICE"]

#: What the probe runs: the meta-scoring program's imports, then one line of facts.
PROBE = (
    "import os, platform, sys; sys.path.insert(0, '/app/program'); "
    "import numpy, scipy, pandas, yaml, metascore.program; "
    "print('Python %s, numpy %s, scipy %s, pandas %s; %s, %s' % (platform.python_version(), "
    "numpy.__version__, scipy.__version__, pandas.__version__, "
    "os.confstr('CS_GNU_LIBC_VERSION'), platform.machine()))"
)
#: What the local backend says about the image (it runs the meta program on this machine).
LOCAL_NOTICE = ("the local backend runs the meta-scoring program on this machine, so whether it "
                "runs in the competition's image {image} is not known here: `metascore bundle check "
                "--probe` or `bundle run --backend docker` try it in a container of that image")
_PROBE_SECONDS = 120


@dataclass(frozen=True)
class Probe:
    """What a container of ``image`` said."""

    image: str
    ok: bool
    detail: str          # the facts line, or why the program cannot run there
    platform: str = ""   # the image's os/architecture, as the engine knows it

    def line(self) -> str:
        where = f"{self.image}{f' ({self.platform})' if self.platform else ''}"
        if self.ok:
            return f"the meta-scoring program runs in {where}: {self.detail}"
        return (f"the meta-scoring program cannot run in {where}: {self.detail}; the meta phase "
                "would fail there on Codabench")


def probe_command(program: Path) -> str:
    """The probe's command: the interpreter part of the program's own command (the tokens
    before ``score.py``), then ``-c`` :data:`PROBE`."""
    for name in METADATA_FILES:
        if (program / name).is_file():
            try:
                command = (yaml.safe_load((program / name).read_text(encoding="utf-8")) or {})["command"]
                tokens = shlex.split(command)
            except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError):
                break
            script = next((i for i, t in enumerate(tokens) if t.endswith("score.py")), None)
            if script:
                return shlex.join([*tokens[:script], "-c", PROBE])
            break
    raise ConfigError(f"{program}: its metadata has no `command` running score.py; cannot probe the image.")


def probe_image(backend: Any, image: str, program: Path) -> Probe:
    """Run :func:`probe_command` in a container of ``image`` (``backend``: a
    :class:`~metascore.bundle.worker.docker_backend.DockerBackend`) and say what it found."""
    with tempfile.TemporaryDirectory(prefix="metascore-probe-") as tmp:
        step = StepSpec(name="image probe", command=probe_command(program),
                        mounts=(Mount("/app/program", program, read_only=True),), image=image,
                        time_limit=_PROBE_SECONDS, stdout_path=Path(tmp) / "out", stderr_path=Path(tmp) / "err")
        arch = _platform(backend, image)
        result = backend.run(step)
    lines = [s for s in (result.stderr or "").splitlines() if s.strip()]
    if result.exit_code == 0 and result.stdout.strip():
        return Probe(image, True, result.stdout.strip().splitlines()[-1], arch)
    if result.timed_out:
        reason = f"the probe did not finish in {_PROBE_SECONDS} s"
    else:
        reason = lines[-1].strip() if lines else f"exit code {result.exit_code}, no message"
    return Probe(image, False, reason, arch)


def _platform(backend: Any, image: str) -> str:
    """``linux/amd64`` as the engine records the image (pulled first if needed), or ``""``."""
    try:
        backend.image_for(StepSpec("image probe", "true", (), image=image))
        attrs = backend.client.images.get(image).attrs
    except MetascoreError:
        raise
    except Exception:  # an engine without these fields: the probe's own line says enough
        return ""
    os_name, arch = attrs.get("Os") or "", attrs.get("Architecture") or ""
    return f"{os_name}/{arch}" if os_name and arch else ""


def probe_meta_program(backend: Any, image: str, assemble: Callable[[Path], Path]) -> Probe:
    """:func:`probe_image` with a meta-scoring program that ``assemble(folder)`` writes into a
    temporary folder (for a bundle whose program is still the placeholder)."""
    with tempfile.TemporaryDirectory(prefix="metascore-probe-program-") as tmp:
        return probe_image(backend, image, assemble(Path(tmp) / "program"))
