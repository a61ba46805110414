"""CodaLab's v1 ``competition.yaml`` (``version: 1``, ``1.5`` or none), as Codabench maps it.

Codabench's v1 unpacker (``unpackers/v1.py``) needs the logo ``image`` and ``html.terms``,
orders phases by ``phasenumber``, turns each phase into a phase with exactly one task
(phase name = ``label``, task name = ``"<label> Task"``; ``auto_migration`` ->
``auto_migrate_to_this_phase``), reads the first leaderboard (by ``rank``) and its columns
(``label`` -> ``title``, ``sort`` -> ``sorting``, ``numeric_format`` -> ``precision``,
ordered by ``rank``). In a v1.8 bundle (any phase with ``is_parallel_parent`` or
``parent_phasenumber``) it drops the first phase, the parallel parent, and the runner does
not run it. It drops ``computed:`` columns to plain columns, a warning here. Every key it
does not read (``force_submission_to_leaderboard``: the rule stays ``Add``;
``leaderboard_management_mode``, ``admin_names``, ``allow_teams``, a phase's ``datasets:``
links, ...) is named with what the organizer will see and the v2 setting that says the same
(:mod:`~metascore.bundle.schema.v1_unread`). A blank ``competition_docker_image`` is the
default image, as none. Codabench attaches the first leaderboard of the file (in the
file's order) to every phase.
"""

from __future__ import annotations

from typing import Any

from ...errors import did_you_mean
from .competition import DEFAULT_IMAGE, DEFAULT_TIME_LIMIT, SORTINGS, Competition, LeaderboardSpec, Phase, Task
from ...readers.columns import Column
from .base import SchemaChecker
from .v1_unread import unread_keys

__all__ = ["SchemaV1"]


class SchemaV1(SchemaChecker):
    """Parse a v1 ``competition.yaml`` mapping into the v2 model, recording every problem."""

    def parse(self, data: dict) -> Competition | None:
        title = self.get(data, "title", "", str, required=True, default="")
        pages = self._logo_and_pages(data)
        given = self.get(data, "competition_docker_image", "", str, default="")
        image = given or DEFAULT_IMAGE  # Codabench: a blank image is the default one too
        self._unread(data)
        nodes = self.get(data, "phases", "", dict, required=True, default={})
        tasks: dict[int, Task] = {}
        phases: list[Phase] = []
        for order, (number, node) in enumerate(self._phase_nodes(nodes)):
            tasks[order], phase = self._phase(order, number, node)
            phases.append(phase)
        if data.get("end_date") not in (None, "", "null"):  # the last phase's end (a time is dropped too)
            self.date(data, "end_date", "", required=False)
        if not phases and "phases" in data:
            self.error("phases", "at least one phase is required.")
        leaderboard = self.leaderboard_v1(data)
        if not phases or leaderboard is None:
            return None
        return Competition(
            root=self.root, version=1, title=title, docker_image=image, image_given=bool(given), tasks=tasks,
            phases=tuple(phases), leaderboard=leaderboard, pages=tuple(pages),
            enable_detailed_results=bool(self.get(data, "enable_detailed_results", "", bool, default=False)),
            # Codabench: registration_auto_approve = not has_registration (default: true)
            registration_auto_approve=not self.get(data, "has_registration", "", bool, default=True),
        )

    def _logo_and_pages(self, data: dict) -> list[tuple[str, str]]:
        """The logo (required by Codabench's v1 unpacker) and the ``html`` pages (the terms
        required): each page's key and file."""
        if data.get("image") is None:
            self.error("image", "this key is required: Codabench's v1 unpacker refuses the bundle "
                       "without a logo ('An image for this competition could not be found in the yaml').")
        else:
            self.path(data, "image", "")
        html = self.get(data, "html", "", dict, default={})
        if "terms" not in html:
            self.error("html", "Codabench's v1 unpacker needs html.terms (the terms page).")
        pages = []
        for key in html:
            ref = self.path(html, key, "html")
            pages.append((str(key), ref or ""))
        return pages

    def _unread(self, data: dict) -> None:
        """The keys Codabench's v1 import does not read: a warning each, or one note for those
        nothing depends on."""
        unread, quiet = unread_keys(data)
        for key in unread:
            self.warn(key.where, key.check_text())
        if quiet:
            self.note(", ".join(quiet), "not read by Codabench's v1 import, with nothing a "
                      "participant depends on.")

    def _phase_nodes(self, nodes: dict) -> list[tuple[Any, dict]]:
        """The phases' mappings by ``phasenumber``, without a v1.8 parallel parent."""
        ordered = sorted(nodes.items(), key=lambda kv: _phase_number(kv))
        for number, node in ordered:
            if not isinstance(node, dict):
                self.error(f"phases.{number}", f"expected a mapping; got {node!r}.")
        ordered = [(number, node) for number, node in ordered if isinstance(node, dict)]
        if any(node.get("is_parallel_parent") or node.get("parent_phasenumber") for _, node in ordered):
            dropped = ordered.pop(0)[0]
            self.warn(f"phases.{dropped}", "v1.8 parallel phases: Codabench drops the first phase (the "
                      "parallel parent) and makes each child its own phase; it is not run.")
        return ordered

    def _phase(self, order: int, number: Any, node: dict) -> tuple[Task, Phase]:
        """A v1 phase as Codabench maps it: a phase of one task, ``"<label> Task"``."""
        where = f"phases.{number}"
        name = str(self.get(node, "label", where, str, required=True, default=f"Phase {number}"))
        task = Task(
            index=order, name=f"{name} Task",
            scoring_program=self.path(node, "scoring_program", where, required=True),
            ingestion_program=self.path(node, "ingestion_program", where),
            input_data=self.path(node, "input_data", where),
            reference_data=self.path(node, "reference_data", where),
            ingestion_only_during_scoring=bool(self.get(
                node, "ingestion_program_only_during_scoring", where, bool, default=False)),
        )
        return task, Phase(
            index=order, name=name, tasks=(order,),
            execution_time_limit=self.get(node, "execution_time_limit", where, int,
                                          default=DEFAULT_TIME_LIMIT),
            starting_kit=self.path(node, "starting_kit", where),
            public_data=self.path(node, "public_data", where),
            start=self.date(node, "start_date", where, required=True),
            auto_migrate=order > 0 and bool(self.get(node, "auto_migration", where, bool, default=False)),
            yaml_key=where, hide_output=bool(self.get(node, "hide_output", where, bool, default=False)),
        )

    def leaderboard_v1(self, data: dict) -> LeaderboardSpec | None:
        node = self.get(data, "leaderboard", "", dict, required=True)
        if node is None:
            return None
        boards = self.get(node, "leaderboards", "leaderboard", dict, required=True, default={})
        if not boards:
            return None
        ranked = list(boards.items())  # Codabench: the first in the file's order, whatever its rank
        first_key, first = ranked[0]
        first = first or {}
        if len(ranked) > 1:
            self.warn("leaderboard.leaderboards", f"several leaderboards; Codabench attaches only "
                      f"the first of the file, {first_key!r} (not the first by rank), to the phases.")
        label = str(first.get("label", first_key))
        raw = []
        columns = self.get(node, "columns", "leaderboard", dict, required=True, default={})
        ordered = sorted(columns.items(), key=lambda kv: (kv[1] or {}).get("rank", 1))
        index = 0
        for key, col in ordered:
            where = f"leaderboard.columns.{key}"
            col = col or {}
            board = col.get("leaderboard") or {}
            if str(board.get("label", "")).lower() != label.lower():
                continue
            dropped = None
            if "computed" in col:
                comp = col["computed"] if isinstance(col["computed"], dict) else {}
                dropped = str(comp.get("operation") or "computed")
                self.warn(f"{where}.computed", (
                    f"operation {comp.get('operation')!r} over {comp.get('fields')!r} is dropped by "
                    "Codabench's v1 unpacker: the column becomes a plain column that no scoring "
                    "program fills, so it shows n/a. CodaLab v1 computed the average of the "
                    "fields' ranks; on Codabench rank with a metascore meta phase instead."))
            sort = col.get("sort", "desc")
            if sort not in SORTINGS:
                self.error(f"{where}.sort", f"{sort!r} is not one of 'desc', 'asc'{did_you_mean(str(sort), SORTINGS)}.")
                sort = "desc"
            raw.append((where, Column(
                key=str(key), title=str(col.get("label", key)), index=index, sorting=sort,
                precision=int(col.get("numeric_format", 2) or 2), hidden=bool(col.get("hidden", False)),
                dropped_computation=dropped,
            )))
            index += 1
        return LeaderboardSpec(title=label, key=str(first_key), columns=self.check_columns(raw))


def _phase_number(item: tuple[Any, Any]) -> tuple[int, str]:
    number, node = item
    value = node.get("phasenumber", number) if isinstance(node, dict) else number
    try:
        return int(value), str(number)
    except (TypeError, ValueError):
        return 0, str(number)
