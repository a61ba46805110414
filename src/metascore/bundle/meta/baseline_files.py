"""Baselines given as files (``bundle add-meta --baseline FILE``): where a local run finds
them in the bundle, and the manifest that flags them.

A starting kit that is code holds no submission, so a local run has no baseline to run;
``--baseline FILE`` (a submission zip or folder) gives one: :func:`given_baselines` says
where it goes (``sample_submissions/<development phase>/baseline__<name>``, which ``bundle
zip`` leaves out: it is the local run's, not the participants') and the submission a local
run makes of it, and :func:`manifest_with` the folder's manifest with it flagged
``is_baseline`` (so a second add-meta finds the same baseline).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

import yaml

from ..schema.competition import SUBMISSION_MANIFESTS
from ..site.submissions import Submission, read_manifest, safe_name

__all__ = ["SAMPLES", "GIVEN_BASELINE", "given_baselines", "add_given", "manifest_with"]

#: The folder of the bundle's own sample submissions (a local run's).
SAMPLES = "sample_submissions"
#: The participant a ``--baseline FILE`` runs as there.
GIVEN_BASELINE = "baseline"


def given_baselines(files: Sequence[Path], dev: str) -> dict[str, Submission]:
    """Each ``--baseline FILE`` as the submission a local run makes of it: its path in the
    bundle (``sample_submissions/<dev>/baseline__<name>``) -> the baseline's submission,
    made to ``dev``, where the filter compares."""
    out: dict[str, Submission] = {}
    for path in files:
        name = f"{GIVEN_BASELINE}__{path.name}"
        stem = name[:-4] if name.endswith(".zip") else name
        out[f"{SAMPLES}/{safe_name(dev)}/{name}"] = Submission(
            stem, path, GIVEN_BASELINE, None, True, None, "--baseline FILE", phase=dev)
    return out


def add_given(root: Path, given: dict[str, Submission], files: dict[str, str],
              changes: list[str]) -> dict[str, Path]:
    """Plan each given baseline (:func:`given_baselines`) into the bundle ``root``: its
    folder's manifest flags it (written into ``files``), a line of ``changes`` says so;
    return what to copy (path in the bundle -> the file or folder given)."""
    for rel, sub in given.items():
        folder, name = rel.rsplit("/", 1)
        manifest, text = manifest_with(root, folder, name, files)
        if text is not None:
            files[f"{folder}/{manifest}"] = text
        changes.append(f"+ {rel}: the baseline (--baseline {sub.source}), run in {sub.phase!r} by `bundle run` "
                       f"as participant {GIVEN_BASELINE!r} (is_baseline in {folder}/{manifest}; "
                       f"{SAMPLES}/ is not uploaded)")
    return {rel: sub.source for rel, sub in given.items()}


def manifest_with(root: Path, folder: str, name: str, files: dict[str, str]) -> tuple[str, str | None]:
    """The manifest of the folder of submissions ``root/folder`` (as ``files`` plans it, else
    as it is) with ``name`` flagged as the baseline: ``(its file name, its new text)``, the
    text ``None`` when it says so already."""
    found = next((m for m in SUBMISSION_MANIFESTS
                  if f"{folder}/{m}" in files or (root / folder / m).is_file()), None)
    if found is None:
        return SUBMISSION_MANIFESTS[0], ("# Written by `metascore bundle add-meta --baseline`: the "
                                         "baseline a local run makes in this phase.\n"
                                         f"- {{file: {name}, participant: baseline, is_baseline: true}}\n")
    text = files.get(f"{folder}/{found}")
    if text is None:
        if str(read_manifest(root / folder).get(name, {}).get("is_baseline", "")).lower() == "true":
            return found, None
        text = (root / folder / found).read_text(encoding="utf-8")
    text += "" if not text or text.endswith("\n") else "\n"
    if found.endswith(".csv"):
        header = next(csv.reader([text.splitlines()[0]])) if text.strip() else []
        row = {"file": name, "participant": "baseline", "is_baseline": "true"}
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow([row.get(col, "") for col in header])
        return found, text + line.getvalue()
    if isinstance(yaml.safe_load(text) if text.strip() else [], dict):
        return found, text + f"{name}: {{participant: baseline, is_baseline: true}}\n"
    return found, text + f"- {{file: {name}, participant: baseline, is_baseline: true}}\n"
