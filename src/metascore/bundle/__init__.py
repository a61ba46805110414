"""Codabench/CodaLab bundles: check ``competition.yaml``, run a whole competition locally
as a compute worker would, and zip a bundle for upload.

- :mod:`~metascore.bundle.schema`: v2 and v1 ``competition.yaml`` parsing, errors and warnings.
- :mod:`~metascore.bundle.runner`: the mock bundle runner (every phase x submission x task,
  then the meta-scoring phase).
- :mod:`~metascore.bundle.backend`: the runner <-> backend contract;
  :mod:`~metascore.bundle.local` (subprocesses) and ``docker_backend`` (containers).
- :mod:`~metascore.bundle.archive`: safe zip extraction and bundle zipping.
- :mod:`~metascore.bundle.cli`: ``metascore bundle check | run | zip``.
"""

from .archive import build_bundle_zip, safe_extract
from .runner import RunReport, run_bundle  # noqa: E402
from .schema import BundleReport, Competition, check_bundle, load_competition

__all__ = [
    "BundleReport",
    "Competition",
    "RunReport",
    "build_bundle_zip",
    "check_bundle",
    "load_competition",
    "run_bundle",
    "safe_extract",
]
