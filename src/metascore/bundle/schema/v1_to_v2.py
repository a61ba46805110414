"""A CodaLab v1 ``competition.yaml`` written in the v2 form, as Codabench's v1 import reads it.

Codabench imports v1 bundles, but a v1 file cannot say a leaderboard's ``submission_rule``:
the import leaves it ``Add``, so nothing reaches the leaderboard, the results export or a
meta phase until each participant clicks "add to leaderboard". :func:`v1_to_v2` writes the
same competition in the v2 form, where the rule can be set, mapping each key as Codabench's
v1 unpacker (``unpackers/v1.py`` at c7dbc756) maps it:

- ``competition_docker_image`` -> ``docker_image`` (blank: the default image, left out);
  ``has_registration`` -> ``registration_auto_approve: not has_registration``; the detailed
  results, auto-run and availability switches as they are; ``html.terms`` -> ``terms`` and
  the other ``html`` pages -> ``pages``;
- ``phases``, ordered by ``phasenumber`` (a v1.8 parallel parent, the first phase, dropped),
  each with one task ``"<label> Task"`` holding its programs and data; a phase ends the day
  before the next one starts, the last one at ``end_date``; ``max_submissions`` and
  ``max_submissions_per_day`` default to 100 and 5, ``auto_migration`` is
  ``auto_migrate_to_this_phase``;
- the first leaderboard of the file (the one Codabench attaches to every phase, whatever its
  ``rank``) and its columns, ordered by ``rank``: ``label`` -> ``title``, ``sort`` ->
  ``sorting`` (``desc`` by default), ``numeric_format`` -> ``precision`` (2). A ``computed:``
  column (CodaLab averaged the fields' ranks) is left out: the import keeps it as a plain
  column that nothing fills, empty on every row, which a v2 file cannot tell from a score.

What the v1 import does not read is not written either: add-meta names each such key, what
the organizer will see and the v2 setting for it (:mod:`~metascore.bundle.schema.v1_unread`).
Codabench makes the same competition of the v1 file and of its v2 form but for the rule and
the computed columns: ``tests/real_site/test_real_site_issue41.py`` uploads both and compares
what the site stored, key by key; ``tests/bundle/test_add_meta_site_view.py`` compares the
parsed forms. Comments of the v1 file are not carried over; add-meta keeps the file beside
it as ``competition.v1.yaml``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml

from ...errors import ConfigError
from .phase_dates import site_datetime

__all__ = ["v1_to_v2", "V1_COPY_NAME"]

#: Where add-meta keeps the v1 file it converted (Codabench reads only competition.yaml).
V1_COPY_NAME = "competition.v1.yaml"
_SWITCHES = ("enable_detailed_results", "show_detailed_results_in_submission_panel",
             "show_detailed_results_in_leaderboard", "auto_run_submissions",
             "make_programs_available", "make_input_data_available", "queue")
_TASK_FILES = ("scoring_program", "ingestion_program", "input_data", "reference_data")
_PHASE_SWITCHES = ("hide_output", "hide_prediction_output", "hide_score_output")


def v1_to_v2(data: dict, *, submission_rule: str, source: str = "competition.yaml") -> tuple[str, list[str]]:
    """The v2 ``competition.yaml`` text of the parsed v1 file ``data``, with ``submission_rule``,
    and the keys of the computed columns it leaves out."""
    out: dict[str, Any] = {"version": 2, "title": data.get("title"),
                           "description": data.get("description", "")}
    if data.get("image") is not None:
        out["image"] = data["image"]
    html = dict(data.get("html") or {})
    if "terms" in html:
        out["terms"] = html.pop("terms")
    out["pages"] = [{"title": str(k), "file": v} for k, v in html.items()]
    if data.get("competition_docker_image"):
        out["docker_image"] = data["competition_docker_image"]
    out["registration_auto_approve"] = not bool(data.get("has_registration", True))
    out.update({k: data[k] for k in _SWITCHES if k in data})
    phases = _phases(data, source)
    out["tasks"] = [task for _, task in phases]
    out["phases"] = [phase for phase, _ in phases]
    board, computed = _leaderboard(data, submission_rule, source)
    out["leaderboards"] = [board]
    header = (f"# The v2 form of a CodaLab v1 competition.yaml (kept as {V1_COPY_NAME}), written by\n"
              "# `metascore bundle add-meta --submission-rule`: a v1 file cannot set the rule.\n")
    return header + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=100), computed


def _phases(data: dict, source: str) -> list[tuple[dict, dict]]:
    nodes = data.get("phases")
    if not isinstance(nodes, dict) or not nodes:
        raise ConfigError(f"{source}: phases: a v1 file needs a mapping of phases to convert.")
    ordered = sorted((n for n in nodes.values() if isinstance(n, dict)),
                     key=lambda n: int(n.get("phasenumber", 0)))
    if any(n.get("is_parallel_parent") or n.get("parent_phasenumber") for n in ordered):
        ordered = ordered[1:]
    starts = [_when(n.get("start_date"), source, "start_date") for n in ordered]
    last_end = data.get("end_date")
    out = []
    for i, node in enumerate(ordered):
        label = str(node.get("label"))
        if i + 1 < len(ordered):
            end: Any = _text(starts[i + 1] - dt.timedelta(days=1))
        else:
            end = None if last_end in (None, "", "null") else _text(_when(last_end, source, "end_date"))
        phase: dict[str, Any] = {"index": i, "name": label, **_described(node), "start": _text(starts[i])}
        if end is not None:
            phase["end"] = end
        phase["max_submissions_per_day"] = node.get("max_submissions_per_day", 5)
        phase["max_submissions"] = node.get("max_submissions", 100)
        if node.get("auto_migration"):
            phase["auto_migrate_to_this_phase"] = True
        phase.update({k: node[k] for k in _PHASE_SWITCHES if k in node})
        if node.get("execution_time_limit"):
            phase["execution_time_limit"] = node["execution_time_limit"]
        phase.update({k: node[k] for k in ("public_data", "starting_kit") if k in node})
        phase["tasks"] = [i]
        task: dict[str, Any] = {"index": i, "name": f"{label} Task", **_described(node)}
        task.update({k: node[k] for k in _TASK_FILES if k in node})
        if node.get("ingestion_program_only_during_scoring"):
            task["ingestion_only_during_scoring"] = True
        out.append((phase, task))
    return out


def _leaderboard(data: dict, rule: str, source: str) -> tuple[dict, list[str]]:
    board = data.get("leaderboard") or {}
    boards = board.get("leaderboards") or {}
    if not boards:
        raise ConfigError(f"{source}: leaderboard.leaderboards: a v1 file needs a leaderboard to convert.")
    key, first = next(iter(boards.items()))  # Codabench: the file's first, whatever its rank
    label = str((first or {}).get("label", key))
    columns = sorted(((k, c or {}) for k, c in (board.get("columns") or {}).items()
                      if str(((c or {}).get("leaderboard") or {}).get("label", "")).lower() == label.lower()),
                     key=lambda kc: kc[1].get("rank", 1))
    kept = [(k, c) for k, c in columns if "computed" not in c]
    return {"title": str(key), "key": str(key), "submission_rule": rule, "columns": [
        {"title": str(c.get("label", k)), "key": str(k), "index": i, "sorting": c.get("sort") or "desc",
         "precision": c.get("numeric_format", 2), **({"hidden": True} if c.get("hidden") else {})}
        for i, (k, c) in enumerate(kept)]}, [str(k) for k, c in columns if "computed" in c]


def _described(node: dict) -> dict[str, Any]:
    return {} if node.get("description") is None else {"description": node["description"]}


def _when(value: Any, source: str, key: str) -> dt.datetime:
    """A v1 date as Codabench's unpacker stores it (:func:`~metascore.bundle.schema.phase_dates.site_datetime`)."""
    try:
        return site_datetime(value)[0]
    except (ValueError, OverflowError):
        raise ConfigError(f"{source}: {key}: {value!r} is not a date.") from None


def _text(when: dt.datetime) -> str | dt.date:
    """A date the v2 unpacker stores as given: a plain date at midnight, else a quoted text
    (it keeps only the day of an unquoted date-time)."""
    return when.date() if when.time() == dt.time() else when.strftime("%Y-%m-%d %H:%M:%S")
