"""A second ``metascore bundle add-meta`` on a bundle whose meta phase add-meta wrote: what it keeps.

The first run's decisions live in the bundle: the last phase's end and the leaderboard's
``submission_rule`` in ``competition.yaml`` (a later run leaves them as they are unless
``--end`` or ``--submission-rule`` says otherwise), and the organizer's choices in the meta
phase's ``metascore.yaml``: ``ranking.method``, ``baselines``, ``filter``, ``phases`` and the
judges' columns. :func:`previous_choices` reads those back (from the file as add-meta writes
it, so that its phases' form says whether the filter ``none`` ranks the final phase alone)
and :func:`kept_choices` returns the ones this run's options do not name, so that a second
run changes only what its options say, without ``--force``. :func:`kept_note` says what was
kept. ``--force`` stays for what a run would otherwise undo: a meta phase add-meta did not
write, or its files edited by hand since (``add.py`` compares them with what add-meta writes
from the kept choices).
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ...config import CONFIG_NAME
from ...errors import MetascoreError
from ...readers.yaml_loader import read_yaml
from ..check.meta_config import find_meta_configs
from ..schema import phase_dates
from ..schema.load import check_schema
from .choices import MetaChoices

__all__ = ["previous_choices", "kept_choices", "base_choices", "meta_options_given", "kept_note",
           "second_changes", "platform_kept"]

#: The comment that starts every block add-meta writes into competition.yaml (edit.MARKER).
_MARKER = "metascore add-meta:"
#: The choices a metascore.yaml keeps, in the order the note names them.
_KEPT = ("method", "baselines", "judges", "filter", "phases")


def previous_choices(root: Path, *, check_links: bool = True) -> dict[str, Any] | None:
    """The choices in the ``metascore.yaml`` of the meta phase add-meta wrote into the bundle
    folder ``root`` (its marker comments in ``competition.yaml``): ``{field of MetaChoices:
    value}``; ``None`` when the bundle has no such meta phase, or its file cannot be read."""
    report = check_schema(root, outside_links=check_links)
    comp = report.competition
    try:
        if comp is None or _MARKER not in (root / "competition.yaml").read_text(encoding="utf-8"):
            return None
    except (OSError, UnicodeDecodeError):
        return None
    metas = [m for m in find_meta_configs(comp) if m.config is not None]
    if len(metas) != 1:
        return None
    ref = comp.path(metas[0].task.reference_data)
    try:
        data = read_yaml(ref / CONFIG_NAME) if ref is not None else None
    except (MetascoreError, OSError, ValueError):
        return None
    return _choices_of(data) if isinstance(data, dict) else None


def _choices_of(data: dict) -> dict[str, Any]:
    """The :class:`MetaChoices` fields a metascore.yaml says (those it says in add-meta's form)."""
    out: dict[str, Any] = {}
    method = (data.get("ranking") or {}).get("method") if isinstance(data.get("ranking"), dict) else None
    if isinstance(method, str):
        out["method"] = method
    if isinstance(data.get("baselines"), list):
        out["baselines"] = tuple(str(b) for b in data["baselines"])
    judges = data.get("judges")
    if isinstance(judges, list) and judges and all(isinstance(j, dict) and j.get("metric") for j in judges):
        out["judges"] = tuple(dict.fromkeys(str(j["metric"]) for j in judges))
    filt = data.get("filter")
    rule = filt.get("rule") if isinstance(filt, dict) else None
    if rule in ("none", "beat_baseline"):
        out["filter"] = rule
    elif rule == "top_k" and filt.get("k") is not None:
        out["filter"] = f"top_k:{filt['k']}"
    phases = data.get("phases")
    if isinstance(phases, dict) and phases.get("development") is not None:  # null: ranked alone (filter none)
        dev, final = phases["development"], phases.get("final")
        out["phases"] = (str(dev),) if final is None else (str(dev), str(final))
    return out


def meta_options_given(choices: MetaChoices) -> bool:
    """Whether this run names any choice that ``metascore.yaml`` holds (or the baseline files
    and eye icons that its page says): then its files are written again."""
    default = MetaChoices()
    return any(getattr(choices, f.name) != getattr(default, f.name)
               for f in fields(MetaChoices) if f.name != "submissions")


def kept_choices(choices: MetaChoices, previous: dict[str, Any]) -> dict[str, Any]:
    """The previous choices that this run's options do not name (``--baseline FILE`` names
    the baselines, and a filter that follows from them; ``--exclude`` the judges)."""
    baselines = choices.baselines is not None or bool(choices.baseline_files)
    named = {
        "method": choices.method is not None,
        "baselines": baselines,
        "judges": choices.judges is not None or bool(choices.exclude),
        # new baselines: beat_baseline or none follows from them, as on a first run
        "filter": choices.filter is not None or (baselines and previous.get("filter") in ("beat_baseline", "none")),
        "phases": choices.phases is not None,
    }
    return {name: value for name, value in previous.items() if not named[name]}


def base_choices(choices: MetaChoices, previous: dict[str, Any]) -> MetaChoices:
    """The choices that write the bundle as the previous run left it: the previous ones,
    this run's submissions folder (where the baselines are looked for)."""
    return replace(MetaChoices(submissions=choices.submissions), **previous)


def kept_note(kept: dict[str, Any], platform: list[str]) -> str | None:
    """``kept as the bundle has them (...): ...``: ``platform``, what competition.yaml keeps
    (the end, the rule), then the choices ``kept`` from metascore.yaml; ``None`` for nothing."""
    said = []
    for name in ("method", "baselines", "filter"):
        if name in kept:
            value = kept[name]
            said.append(f"{name} {(', '.join(value) or 'none') if isinstance(value, tuple) else value}")
    others = [name for name in ("judges", "phases") if name in kept]
    if others:
        said.append(f"its {' and '.join(others)}")
    items = [*platform, *([f"metascore.yaml's {', '.join(said)}"] if said else [])]
    if not items:
        return None
    return ("kept as the bundle has them (a second add-meta changes only what its options name; "
            f"repeat none): {'; '.join(items)}.")


def second_changes(changes: list[str], current: dict[str, str | None], files: dict[str, str]) -> list[str]:
    """A second run's changes: competition.yaml's (``~``), then each file of the meta phase
    that changed, and the leaderboard columns when they are others."""
    out = [c for c in changes if c.startswith("~")]
    for change in changes:
        if not change.startswith("+ "):
            continue
        moved = [rel for rel in files if rel != "competition.yaml" and rel in change and current[rel] != files[rel]]
        keys = re.findall(r"(?:columns |, )(\w+) \(", change) if change.startswith("+ leaderboard columns") else []
        new_keys = [k for k in keys if not re.search(rf"key:\s*['\"]?{k}\b", current.get("competition.yaml") or "")]
        if moved or new_keys:
            out.append("~ " + change[2:])
    return out


def platform_kept(text: str, end: str | None, rule: str | None) -> list[str]:
    """What competition.yaml keeps that an earlier run's options set: the end given to
    ``--end``, a submission rule other than Codabench's default."""
    out = []
    marked = phase_dates.command_line_end(text)
    if end is None and marked is not None:
        out.append(f"the last phase's end {phase_dates.date_text(marked)} (--end)")
    if rule is None:
        found = re.search(r"^\s*submission_rule:\s*(\w+)", text, re.MULTILINE)
        if found and found.group(1) != "Add":
            out.append(f"submission_rule {found.group(1)}")
    return out
