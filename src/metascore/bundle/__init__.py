"""Codabench/CodaLab bundles: add the meta-ranking phase to one, check ``competition.yaml``,
run a whole competition locally as a compute worker would, and zip a bundle for upload.

The parts follow Codabench's own split, in layers that import one way (docs/packages.md
draws them; each ``__init__`` lists its modules), from the top layer down:

- :mod:`~metascore.bundle.meta`: ``metascore bundle add-meta``, the meta-scoring program put
  into a bundle and its own Python;
- :mod:`~metascore.bundle.check`: ``metascore bundle check``;
- :mod:`~metascore.bundle.site`: what the server decides (which submission runs where, the
  submission rules, the results export and the meta phase's input);
- :mod:`~metascore.bundle.worker`: one job (mounts, limits, scores) behind one backend
  interface, local (bwrap) or containers, each saying what it can do;
- :mod:`~metascore.bundle.schema`: what ``competition.yaml`` says (v2 and v1), read into a
  ``Competition``;
- :mod:`~metascore.bundle.platform`: what the platform means (a meta-scoring program folder,
  the common images, the placeholders of a command, the submission rules).

Here, on top: :mod:`~metascore.bundle.runner` (``run_bundle``: the mock runner, site and
worker together, and its report) and :mod:`~metascore.bundle.bundle_zip`
(``build_bundle_zip``); below the schema: :mod:`~metascore.bundle.archive` (safe zip
extraction, zips), :mod:`~metascore.bundle.files` (noise, clean copies, atomic writes),
:mod:`~metascore.bundle.links` (links in a bundle) and :mod:`~metascore.bundle.trees` (the
trees a job writes, walked, copied and removed without recursion). The command line,
``metascore bundle add-meta | check | run | env | zip | runtime``, is
:mod:`metascore.cli.bundle`.
"""

from .archive import safe_extract
from .bundle_zip import build_bundle_zip
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
