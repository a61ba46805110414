"""Codabench/CodaLab bundles: add the meta-ranking phase to one, check ``competition.yaml``,
run a whole competition locally as a compute worker would, and zip a bundle for upload.

The parts follow Codabench's own split, in layers that import one way (docs/packages.md
draws them; each ``__init__`` lists its modules), from the top layer down:

- :mod:`~metascore.bundle.meta`: ``metascore bundle add-meta``, the meta-scoring program put
  into a bundle;
- :mod:`~metascore.bundle.runtime`: the meta-scoring program's own Python (cached, built
  once, zipped, a wheel);
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

from __future__ import annotations

import importlib
from typing import Any

#: The public names, each from the module that defines it: imported when first asked for, so
#: that importing one part (``metascore.bundle.files`` for ``codabench pull``) does not load
#: the top layer and everything below it.
_HOMES = {
    "BundleReport": ".schema.competition",
    "Competition": ".schema.competition",
    "RunReport": ".runner",
    "build_bundle_zip": ".bundle_zip",
    "check_bundle": ".check.full",
    "load_competition": ".schema.load",
    "run_bundle": ".runner",
    "safe_extract": ".archive",
}

__all__ = ["BundleReport", "Competition", "RunReport", "build_bundle_zip", "check_bundle", "load_competition",
           "run_bundle", "safe_extract"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)
