"""The keys of a CodaLab v1 ``competition.yaml`` that Codabench's v1 import does not read.

Codabench's v1 unpacker (``unpackers/v1.py`` at c7dbc756) reads a fixed set of keys
(:data:`READ_TOP`, :data:`READ_PHASE`, :data:`READ_COLUMN`); every other key of the file is
dropped without a word, and the competition behaves as Codabench's default says.
:func:`unread_keys` names each key the file sets that way, what the organizer will see on
Codabench instead, and the v2 setting that expresses the intent where there is one:

- **warnings**: the keys whose loss changes what participants or organizers get
  (``leaderboard_management_mode: hide_results``: results shown during the phase;
  ``admin_names``: no co-organizers; ``allow_teams``: no teams;
  ``force_submission_to_leaderboard``: the rule stays Add; ...);
- **one note**: the keys whose loss changes nothing a participant depends on (a phase's
  ``color``, a column's ``column_group``, a key set to what Codabench does anyway, ...).

``bundle check`` prints them for a v1 file (:mod:`~metascore.bundle.schema.v1`), and
``bundle add-meta --submission-rule`` for the v2 form it writes, which carries what the v1
import reads and nothing else (:mod:`~metascore.bundle.schema.v1_to_v2`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..platform.leaderboard_rules import force_last_fix

__all__ = ["READ_TOP", "READ_PHASE", "READ_COLUMN", "UnreadKey", "unread_keys"]

#: Top-level keys the v1 unpacker reads (``version`` chooses the unpacker).
READ_TOP = frozenset({
    "version", "title", "description", "image", "has_registration", "competition_docker_image",
    "enable_detailed_results", "show_detailed_results_in_submission_panel",
    "show_detailed_results_in_leaderboard", "auto_run_submissions", "make_programs_available",
    "make_input_data_available", "end_date", "html", "queue", "phases", "leaderboard"})
#: Keys of a phase it reads (``is_parallel_parent`` / ``parent_phasenumber``: a v1.8 file,
#: whose first phase it drops).
READ_PHASE = frozenset({
    "phasenumber", "label", "description", "start_date", "max_submissions", "max_submissions_per_day",
    "auto_migration", "hide_output", "hide_prediction_output", "hide_score_output",
    "execution_time_limit", "public_data", "starting_kit", "ingestion_program_only_during_scoring",
    "ingestion_program", "input_data", "scoring_program", "reference_data", "is_parallel_parent",
    "parent_phasenumber"})
#: Keys of a leaderboard column it reads (``computed`` is read by the schema, which says what
#: becomes of it).
READ_COLUMN = frozenset({"leaderboard", "label", "rank", "sort", "numeric_format", "hidden", "computed"})

_FORCE = ("Codabench's v1 import ignores it: the leaderboard's submission rule stays Add, so no "
          "submission reaches the leaderboard, the results export or a meta phase until its "
          "participant clicks 'add to leaderboard'. Fix: " + force_last_fix(1) + ".")
_TEAMS = ("participants register and submit as themselves (Codabench has no teams of a "
          "competition); v2: none in competition.yaml (a participant may submit on behalf of an "
          "organization they belong to on Codabench).")
#: key -> (what the organizer sees on Codabench, and the v2 setting), for the keys whose loss
#: changes the competition. ``{v}`` is the value the file sets.
_TOP = {
    "admin_names": "the accounts it names are not organizers of the competition: only the "
                   "account that uploads the bundle manages it; v2: none in competition.yaml (add "
                   "them as collaborators in the competition editor after the upload).",
    "allow_teams": _TEAMS, "enable_teams": _TEAMS, "require_team_approval": _TEAMS,
    "anonymous_leaderboard": "the leaderboard shows each participant's user name; v2: none.",
    "disallow_leaderboard_modifying": "participants choose which submission shows (the rule Add); "
                                      "v2: submission_rule: Force_Last or Force_Best on the "
                                      "leaderboard (participants no longer choose).",
    "force_submission_to_leaderboard": _FORCE,
    "enable_per_submission_metadata": "submissions carry no method name or description; v2: "
                                      "fact_sheet (the questions each submission answers).",
    "reward": "no prize is shown; v2: reward: {v}.",
}
#: Top-level keys that say what Codabench does anyway when they have this value.
_DEFAULTS = {"enable_forum": True, "allow_public_submissions": True}
_OPPOSITE = {
    "enable_forum": "the competition has a forum (Codabench's default); v2: forum_enabled: false.",
    "allow_public_submissions": "participants can make their submissions public (Codabench's "
                                "default); v2: can_participants_make_submissions_public: false.",
}
_PHASE = {
    "leaderboard_management_mode": "the results of {phases} are shown on the leaderboard while "
                                   "each runs (CodaLab hid them until it ended); v2: hidden: true on "
                                   "the leaderboard hides it from participants, in every phase, since "
                                   "Codabench's phases share one leaderboard (a meta phase's row "
                                   "too): set it for the evaluation and clear it in the competition "
                                   "editor when the evaluation ends.",
    "force_best_submission_to_leaderboard": _FORCE,
    "is_scoring_only": "dropped by Codabench's v1 unpacker: a submission without a metadata file "
                       "is a result submission anyway; v2: none.",
    "datasets": "links shown on CodaLab's data page (not dataset keys); Codabench ignores them "
                "(v2: none; put the links on a page).",
    "default_docker_image": "{phases} run in the competition's image; v2: docker_image (one for "
                            "every phase).",
    "disable_custom_docker_image": "{phases} run in the competition's image; v2: docker_image (one "
                                   "for every phase).",
}


@dataclass(frozen=True)
class UnreadKey:
    """A key the v1 import does not read: where (a key path of competition.yaml), the value
    the file gives it (``None``: said by ``effect``), and what that changes on Codabench."""

    where: str
    value: str | None
    effect: str

    def check_text(self) -> str:
        """As ``bundle check`` says it of the v1 file."""
        lead = "" if self.value is None else f"{self.value} is not read by Codabench's v1 import: "
        return lead + self.effect

    def rewrite_text(self) -> str:
        """As ``add-meta`` says it of the v2 form it writes."""
        value = "" if self.value is None else f" {self.value}"
        return (f"not in the v2 form, as Codabench's v1 import does not read it: {self.where}:"
                f"{value}: {self.effect}")


def unread_keys(data: dict) -> tuple[list[UnreadKey], list[str]]:
    """The keys of the v1 mapping ``data`` whose loss changes the competition, and the
    others (``"color (phases 1, 2)"``, ...)."""
    warnings: list[UnreadKey] = []
    quiet: list[str] = []
    for key, value in data.items():
        key = str(key)
        if key in READ_TOP:
            continue
        if key in _DEFAULTS and value is not None and bool(value) != _DEFAULTS[key]:
            warnings.append(UnreadKey(key, _shown(value), _OPPOSITE[key]))
        elif key in _TOP and value not in (None, False, "", [], {}):
            shown = None if key == "force_submission_to_leaderboard" else _shown(value)
            warnings.append(UnreadKey(key, shown, _TOP[key].format(v=_shown(value))))
        else:
            quiet.append(key)
    phases = data.get("phases") if isinstance(data.get("phases"), dict) else {}
    by_key: dict[str, list[tuple[str, Any, str]]] = {}
    for number, node in phases.items():
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if str(key) not in READ_PHASE:
                by_key.setdefault(str(key), []).append((str(number), value, str(node.get("label", number))))
    for key, found in by_key.items():
        used = [f for f in found if f[1] not in (None, False, "", [], {}, "default")]
        if key not in _PHASE or not used:
            quiet.append(f"{key} (phases {', '.join(n for n, _, _ in found)})")
            continue
        where = f"phases.{used[0][0]}.{key}" if len(used) == 1 else \
            f"{key} (phases {', '.join(n for n, _, _ in used)})"
        values = " / ".join(sorted({_shown(v) for _, v, _ in used}))
        if key in ("force_best_submission_to_leaderboard", "is_scoring_only", "datasets"):
            values = None
        names = ", ".join(repr(label) for _, _, label in used)
        warnings.append(UnreadKey(where, values, _PHASE[key].format(phases=f"phase(s) {names}")))
    warnings.extend(_column_keys(data, quiet))
    return warnings, list(dict.fromkeys(quiet))


def _column_keys(data: dict, quiet: list[str]) -> Iterator[UnreadKey]:
    """``selection_default`` (the column the v1 leaderboard was ordered by) as a warning when
    it is not the first column; every other unread column or leaderboard key into ``quiet``."""
    board = data.get("leaderboard") if isinstance(data.get("leaderboard"), dict) else {}
    quiet.extend(f"leaderboard.{k}" for k in board if k not in ("leaderboards", "columns"))
    columns = board.get("columns") if isinstance(board.get("columns"), dict) else {}
    ordered = sorted(((str(k), c) for k, c in columns.items() if isinstance(c, dict)),
                     key=lambda kc: kc[1].get("rank", 1))
    unread: dict[str, list[str]] = {}
    for key, col in ordered:
        for name in col:
            if str(name) not in READ_COLUMN and str(name) != "selection_default":
                unread.setdefault(str(name), []).append(key)
    quiet.extend(f"{name} (columns {', '.join(keys)})" for name, keys in unread.items())
    chosen = [(i, key) for i, (key, col) in enumerate(ordered) if col.get("selection_default")]
    if chosen and chosen[0][0] != 0:
        index, key = max(chosen, key=lambda ik: ordered[ik[0]][1].get("selection_default"))
        yield UnreadKey(f"leaderboard.columns.{key}.selection_default",
                        _shown(ordered[index][1].get("selection_default")),
                        f"the leaderboard is ordered by its first column ({ordered[0][0]!r}), not "
                        f"by {key!r}; v2: primary_index: {index} on the leaderboard.")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
