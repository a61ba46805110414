"""Codabench/CodaLab bundles: add the meta-ranking phase to one, check ``competition.yaml``,
run a whole competition locally as a compute worker would, and zip a bundle for upload.

- :mod:`~metascore.bundle.add_meta`: ``add_meta``, the meta phase added to an organizer's
  own bundle; :mod:`~metascore.bundle.add_meta_edit` (the ``competition.yaml`` edits),
  :mod:`~metascore.bundle.add_meta_config` (the ``metascore.yaml`` it writes),
  :mod:`~metascore.bundle.ranking_page` (the competition page saying how the final ranking
  is computed), :mod:`~metascore.bundle.v1_to_v2` (a v1 ``competition.yaml`` in the v2 form,
  which can set a submission rule) and :mod:`~metascore.bundle.yaml_text` (YAML edited as
  text, comments kept).
- :mod:`~metascore.bundle.check`: ``check_bundle``, the whole ``bundle check``: the schema,
  then the meta-ranking's configuration (:mod:`~metascore.bundle.check_config`) and
  Codabench's traps (:mod:`~metascore.bundle.platform_traps`), and what participants can
  see of the meta phase (:mod:`~metascore.bundle.visibility`).
- :mod:`~metascore.bundle.schema`: ``check_schema`` (``competition.yaml`` only) /
  ``load_competition``;
  :mod:`~metascore.bundle.competition` (the parsed competition: Competition, Phase, Task,
  LeaderboardSpec, Column, ...),
  :mod:`~metascore.bundle.schema_v2` and :mod:`~metascore.bundle.schema_v1` (the rules of
  each version), :mod:`~metascore.bundle.program_checks` (metadata and command checks), on the
  shared readers of :mod:`~metascore.bundle.schema_base`.
- :mod:`~metascore.bundle.runner`: the mock bundle runner (``run_bundle``, the report);
  :mod:`~metascore.bundle.site` (which submission runs in which phase, the columns kept, the
  outputs tree and the meta phase), :mod:`~metascore.bundle.submission_rules` (what the
  results export holds under the leaderboard's ``submission_rule``), :mod:`~metascore.bundle.submissions` (starting kits,
  solutions, submission folders) and :mod:`~metascore.bundle.worker` (one job: sandbox,
  mounts, placeholders, time limit, ``metadata``, scores file).
- :mod:`~metascore.bundle.backend`: the worker <-> backend contract;
  :mod:`~metascore.bundle.local` (subprocesses) and ``docker_backend`` (containers); the
  local sandbox is :mod:`~metascore.bundle.sandbox`, :mod:`~metascore.bundle.job_init`,
  :mod:`~metascore.bundle.cgroups` (a control group per step) and
  :mod:`~metascore.bundle.syscall_filter` (its seccomp filter); every backend's limits are
  :mod:`~metascore.bundle.limits`, its logs :mod:`~metascore.bundle.logs`, and the trees a
  job writes are walked, copied and removed by :mod:`~metascore.bundle.trees`.
- :mod:`~metascore.bundle.archive`: safe zip extraction and bundle zipping;
  :mod:`~metascore.bundle.meta_program_folder` (the meta-scoring program assembled from
  metascore's own) and :mod:`~metascore.bundle.files` (noise, clean copies, atomic writes).
- :mod:`~metascore.bundle.runtime`: the meta-scoring program's own Python, cached and put
  into bundles so the meta phase runs in the competition's image;
  :mod:`~metascore.bundle.runtime_build` (its recipe and build),
  :mod:`~metascore.bundle.image_checks` (the image against the programs, without running
  anything) and :mod:`~metascore.bundle.image_probe` (a container of the image asked).
- its command line, ``metascore bundle add-meta | check | run | env | zip | runtime``, is
  :mod:`metascore.cli.bundle`.
"""

from .archive import build_bundle_zip, safe_extract
from .runner import RunReport, run_bundle
from .check import check_bundle
from .competition import BundleReport, Competition
from .schema import load_competition

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
