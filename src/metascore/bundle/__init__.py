"""Codabench/CodaLab bundles: add the meta-ranking phase to one, check ``competition.yaml``,
run a whole competition locally as a compute worker would, and zip a bundle for upload.

The sub-packages follow Codabench's own split (each ``__init__`` lists its modules):

- :mod:`~metascore.bundle.schema`: what ``competition.yaml`` says (v2 and v1), read into a
  ``Competition``;
- :mod:`~metascore.bundle.site`: what the server decides (which submission runs where, the
  submission rules, the results export and the meta phase's input);
- :mod:`~metascore.bundle.worker`: one job (mounts, placeholders, limits) behind one backend
  interface, local (bwrap) or containers;
- :mod:`~metascore.bundle.check`: ``metascore bundle check``;
- :mod:`~metascore.bundle.meta`: ``metascore bundle add-meta``, the meta-scoring program put
  into a bundle and its own Python.

Here: :mod:`~metascore.bundle.runner` (``run_bundle``: the mock runner, site and worker
together, and its report), :mod:`~metascore.bundle.archive` (safe zip extraction, bundle
zips), :mod:`~metascore.bundle.files` (noise, clean copies, atomic writes) and
:mod:`~metascore.bundle.trees` (the trees a job writes, walked, copied and removed without
recursion). The command line, ``metascore bundle add-meta | check | run | env | zip |
runtime``, is :mod:`metascore.cli.bundle`.
"""

from .archive import build_bundle_zip, safe_extract
from .runner import RunReport, run_bundle
from .check.full import check_bundle
from .schema.competition import BundleReport, Competition
from .schema.load import load_competition

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
