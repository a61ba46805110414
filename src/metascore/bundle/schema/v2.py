"""Codabench's v2 ``competition.yaml`` (``version: 2``): the rules of its unpacker.

Top-level keys, ``pages`` (a title and a non-empty file each), ``tasks`` (unique indexes;
a task given by ``key`` refers to an existing Codabench task), ``solutions``, ``phases``
(ordered by ``index``; each needs a ``start``, every phase but the last an ``end``, and a
phase starts after the previous one ends; ``execution_time_limit`` positive), and
``leaderboards``: only ``leaderboards[0]`` is attached, to every phase; ``leaderboard:``
singular is not read; keys and titles up to 36 characters; ``computation_indexes`` a list
(a string is iterated per character by Codabench); a column at ``primary_index``.
Unknown keys are warnings (Codabench ignores them).
"""

from __future__ import annotations

import re

from ...config import MAX_KEY_LENGTH
from .competition import COMPETITION_TYPES, COMPUTATIONS, DEFAULT_IMAGE, DEFAULT_TIME_LIMIT, SORTINGS, Competition, LeaderboardSpec, Phase, Solution, Task
from ..platform.leaderboard_rules import SUBMISSION_RULES
from ...readers.columns import Column
from .base import SchemaChecker

__all__ = ["SchemaV2"]

_V2_TOP = {
    "version", "title", "description", "image", "terms", "pages", "tasks", "phases",
    "leaderboards", "solutions", "docker_image", "queue", "registration_auto_approve",
    "enable_detailed_results", "show_detailed_results_in_submission_panel",
    "show_detailed_results_in_leaderboard", "auto_run_submissions",
    "can_participants_make_submissions_public", "make_programs_available",
    "make_input_data_available", "competition_type", "fact_sheet", "reward", "contact_email",
    "forum_enabled",
}
_V2_TASK = {
    "index", "key", "name", "description", "scoring_program", "ingestion_program",
    "input_data", "reference_data", "ingestion_only_during_scoring",
}
_V2_PHASE = {
    "index", "name", "description", "start", "end", "tasks", "execution_time_limit",
    "max_submissions_per_day", "max_submissions", "auto_migrate_to_this_phase", "hide_output",
    "hide_prediction_output", "hide_score_output", "starting_kit", "public_data",
    "accepts_only_result_submissions", "solutions",
}
_V2_LEADERBOARD = {"title", "key", "columns", "submission_rule", "hidden", "primary_index", "index"}
_V2_COLUMN = {
    "title", "key", "index", "sorting", "computation", "computation_indexes", "precision",
    "hidden",
}


class SchemaV2(SchemaChecker):
    """Parse a v2 ``competition.yaml`` mapping, recording every problem."""

    def parse(self, data: dict) -> Competition | None:
        self.unknown_keys(data, _V2_TOP, "")
        title = self.get(data, "title", "", str, required=True, default="")
        self.path(data, "image", "", required=True)
        self.path(data, "terms", "", required=True)
        self.get(data, "competition_type", "", str)
        if "competition_type" in data:
            self.choice(data, "competition_type", "", COMPETITION_TYPES, None)
        pages = self.pages_v2(data)
        tasks = self.tasks_v2(data)
        solutions = self.solutions_v2(data, tasks)
        phases = self.phases_v2(data, tasks)
        leaderboard = self.leaderboards_v2(data)
        given = self.get(data, "docker_image", "", str, default="")
        image = given or DEFAULT_IMAGE
        if self.report.errors and (not phases or leaderboard is None):
            return None
        return Competition(
            root=self.root, version=2, title=title, docker_image=image, image_given=bool(given), tasks=tasks,
            phases=phases, leaderboard=leaderboard, solutions=solutions, pages=pages,
            enable_detailed_results=bool(self.get(data, "enable_detailed_results", "", bool, default=False)),
            registration_auto_approve=bool(self.get(data, "registration_auto_approve", "", bool, default=False)),
        )

    def pages_v2(self, data: dict) -> tuple[tuple[str, str], ...]:
        pages = self.get(data, "pages", "", list, required=True, default=[])
        out = []
        for _, where, page in self.mappings(pages, "pages", "{title, file}"):
            title = self.get(page, "title", where, str, required=True, default="")
            ref = self.path(page, "file", where, required=True)
            if ref and (self.root / ref).is_file() and not (self.root / ref).read_text(
                encoding="utf-8", errors="replace"
            ).strip():
                self.error(f"{where}.file", f"{ref!r} is empty; Codabench refuses empty pages.")
            out.append((title, ref or ""))
        return tuple(out)

    def tasks_v2(self, data: dict) -> dict[int, Task]:
        tasks: dict[int, Task] = {}
        nodes = self.get(data, "tasks", "", list, required=True, default=[])
        for _, where, node in self.mappings(nodes, "tasks"):
            self.unknown_keys(node, _V2_TASK, where)
            index = self.get(node, "index", where, int, required=True)
            if index is None:
                continue
            if index in tasks:
                self.error(f"{where}.index", f"{index} is used by another task; indexes must be unique.")
                continue
            key = self.get(node, "key", where, str)
            if key is not None:
                self.warn(where, f"key {key!r} refers to an existing Codabench task; it cannot be "
                          "run offline and its other keys are ignored.")
                tasks[index] = Task(index=index, name=str(node.get("name") or key), key=key)
                continue
            tasks[index] = Task(
                index=index,
                name=self.get(node, "name", where, str, required=True, default=f"task {index}"),
                scoring_program=self.path(node, "scoring_program", where, required=True),
                ingestion_program=self.path(node, "ingestion_program", where),
                input_data=self.path(node, "input_data", where),
                reference_data=self.path(node, "reference_data", where),
                ingestion_only_during_scoring=bool(
                    self.get(node, "ingestion_only_during_scoring", where, bool, default=False)
                ),
            )
        if not tasks and "tasks" in data:
            self.error("tasks", "at least one task is required.")
        return tasks

    def solutions_v2(self, data: dict, tasks: dict[int, Task]) -> tuple[Solution, ...]:
        out = []
        nodes = self.get(data, "solutions", "", list, default=[])
        for i, where, node in self.mappings(nodes, "solutions", "{index, tasks, path}"):
            index = self.get(node, "index", where, int, required=True, default=i)
            task_ids = self.task_list(node, where, tasks)
            if "key" in node:
                self.warn(where, "a solution given by dataset key cannot be run offline.")
                continue
            out.append(Solution(index=index, tasks=task_ids, path=self.path(node, "path", where, required=True)))
        return tuple(out)

    def task_list(self, node: dict, where: str, tasks: dict[int, Task], *,
                  phase: bool = False) -> tuple[int, ...]:
        """The task indexes of a phase or solution; each must be a task of ``tasks:``
        (Codabench's unpacker fails on a missing one, e.g. "'NoneType' object is not
        iterable" for a phase with ``tasks:`` empty)."""
        if phase and "tasks" in node and node["tasks"] is None:
            self.error(f"{where}.tasks", "empty; list the indexes of the phase's tasks, e.g. "
                       "tasks: [0] (Codabench's unpacker fails on it with \"'NoneType' object is "
                       "not iterable\").")
            return ()
        values = self.get(node, "tasks", where, list, required=True, default=[])
        if phase and "tasks" in node and values == []:
            self.error(f"{where}.tasks", "[] names no task; list the indexes of the phase's tasks, "
                       "e.g. tasks: [0] (Codabench cannot run a submission in a phase without tasks).")
        out = []
        for value in values:
            if not isinstance(value, int) or isinstance(value, bool):
                self.error(f"{where}.tasks", f"expected task indexes (integers); got {value!r}.")
            elif value not in tasks:
                known = ", ".join(str(t) for t in sorted(tasks)) or "none"
                self.error(f"{where}.tasks", f"task index {value} is not defined (tasks: {known}); "
                           "Codabench's unpacker fails on it: name the index of a task of `tasks:`.")
            else:
                out.append(value)
        return tuple(out)

    def phases_v2(self, data: dict, tasks: dict[int, Task]) -> tuple[Phase, ...]:
        nodes = self.get(data, "phases", "", list, required=True, default=[])
        if not nodes and "phases" in data:
            self.error("phases", "at least one phase is required.")
        indexed = [(n.get("index", i) if isinstance(n, dict) else i, i, n) for i, n in enumerate(nodes)]
        indexed.sort(key=lambda t: (t[0] if isinstance(t[0], int) else t[1], t[1]))
        phases: list[Phase] = []
        for order, (_, i, node) in enumerate(indexed):
            where = f"phases[{i}]"
            if not isinstance(node, dict):
                self.error(where, f"expected a mapping; got {node!r}.")
                continue
            self.unknown_keys(node, _V2_PHASE, where)
            name = self.get(node, "name", where, str, required=True, default=f"phase {order}")
            start = self.date(node, "start", where, required=True)
            end = self.date(node, "end", where, required=order < len(indexed) - 1)
            limit = self.get(node, "execution_time_limit", where, int, default=DEFAULT_TIME_LIMIT)
            if limit is not None and limit <= 0:
                self.error(f"{where}.execution_time_limit", f"must be a positive number of seconds; got {limit}.")
                limit = DEFAULT_TIME_LIMIT
            if order == 0 and node.get("auto_migrate_to_this_phase"):
                self.warn(f"{where}.auto_migrate_to_this_phase", "must not be set on the first phase.")
            for key in ("accepts_only_result_submissions", "solutions"):
                if key in node:
                    self.warn(f"{where}.{key}", "documented but not read by Codabench's unpacker; ignored.")
            phases.append(Phase(
                index=order, name=name, tasks=self.task_list(node, where, tasks, phase=True),
                execution_time_limit=limit, starting_kit=self.path(node, "starting_kit", where),
                public_data=self.path(node, "public_data", where), start=start, end=end,
                auto_migrate=order > 0 and bool(self.get(node, "auto_migrate_to_this_phase", where, bool,
                                                         default=False)),
                yaml_key=where, hide_output=bool(self.get(node, "hide_output", where, bool, default=False)),
            ))
        self.check_dates(phases)
        names = [p.name for p in phases]
        for name in {n for n in names if names.count(n) > 1}:
            self.error("phases", f"phase name {name!r} is used twice; the runner names outputs by phase.")
        return tuple(phases)

    def check_dates(self, phases: list[Phase]) -> None:
        """Phases in order, on the dates as Codabench stores them (its unpacker refuses a
        start before or equal to the previous end)."""
        for a, b in zip(phases, phases[1:]):
            if a.end and b.start and b.start <= a.end:
                stored = ({f"{a.yaml_key}.end", f"{b.yaml_key}.start"} & self.dropped_times)
                why = (" (as Codabench stores them: it keeps only the day of an unquoted "
                       f"date-time, here {', '.join(sorted(stored))})") if stored else ""
                self.error(
                    f"phases ({a.name!r} -> {b.name!r})",
                    f"phase {b.name!r} starts at {b.start} but {a.name!r} ends at {a.end}{why}; a "
                    "phase must start after the previous one ends (equal times are refused too).",
                )
            if a.start and a.end and a.end < a.start:
                self.error(f"phases ({a.name!r})", f"ends ({a.end}) before it starts ({a.start}).")

    def leaderboards_v2(self, data: dict) -> LeaderboardSpec | None:
        if "leaderboards" not in data:
            if "leaderboard" in data:
                self.error("leaderboards", "missing; found 'leaderboard:' (singular), which Codabench's "
                           "v2 unpacker does not read: rename it 'leaderboards:' and make it a list.")
            else:
                self.error("leaderboards", "this key is required (a list with at least one leaderboard).")
            return None
        if "leaderboard" in data:
            self.warn("leaderboard", "ignored by Codabench v2; only 'leaderboards:' is read.")
        boards = self.get(data, "leaderboards", "", list, required=True, default=[])
        if not boards:
            self.error("leaderboards", "at least one leaderboard is required.")
            return None
        if len(boards) > 1:
            self.warn("leaderboards", f"{len(boards)} leaderboards given; Codabench attaches only "
                      "leaderboards[0] to every phase, the others are orphaned. Put every column "
                      "(including meta-phase columns) on leaderboards[0].")
        node = boards[0]
        where = "leaderboards[0]"
        if not isinstance(node, dict):
            self.error(where, f"expected a mapping; got {node!r}.")
            return None
        self.unknown_keys(node, _V2_LEADERBOARD, where)
        title = self.get(node, "title", where, str, required=True, default="")
        key = self.get(node, "key", where, str, required=True, default="")
        if len(key) > MAX_KEY_LENGTH:
            self.warn(f"{where}.key", f"{key!r} is longer than {MAX_KEY_LENGTH} characters.")
        rule = self.choice(node, "submission_rule", where, SUBMISSION_RULES, "Add")
        primary = self.get(node, "primary_index", where, int, default=0)
        columns = self.columns_v2(node, where)
        if columns and primary not in {c.index for c in columns}:
            self.warn(f"{where}.columns", f"no column has index {primary} (the primary index); "
                      "Codabench's leaderboard pages fail without it.")
        return LeaderboardSpec(title=title, key=key, columns=columns, primary_index=primary,
                           submission_rule=rule)

    def columns_v2(self, board: dict, where: str) -> tuple[Column, ...]:
        nodes = self.get(board, "columns", where, list, required=True, default=[])
        if not nodes and "columns" in board:
            self.error(f"{where}.columns", "at least one column is required.")
        raw = []
        for _, here, node in self.mappings(nodes, f"{where}.columns"):
            self.unknown_keys(node, _V2_COLUMN, here)
            key = self.get(node, "key", here, str, required=True)
            title = self.get(node, "title", here, str, required=True, default=key or "")
            index = self.get(node, "index", here, int, required=True)
            for label, text in (("key", key), ("title", title)):
                if text and len(text) > MAX_KEY_LENGTH:
                    self.warn(f"{here}.{label}", f"{text!r} is {len(text)} characters, more than "
                              f"Codabench's limit of {MAX_KEY_LENGTH}.")
            indexes = node.get("computation_indexes")
            if isinstance(indexes, str):
                self.warn(f"{here}.computation_indexes", f"{indexes!r} is a string; Codabench "
                          "iterates it per character and fails. Write a YAML list, e.g. [1, 2].")
                indexes = [int(t) for t in re.findall(r"-?\d+", indexes)]
            elif indexes is not None and not (
                isinstance(indexes, list) and all(isinstance(x, int) for x in indexes)
            ):
                self.error(f"{here}.computation_indexes", f"expected a list of column indexes; got {indexes!r}.")
                indexes = None
            raw.append((here, Column(
                key=key or "", title=title, index=index if index is not None else -1,
                sorting=self.choice(node, "sorting", here, SORTINGS, "desc"),
                computation=self.choice(node, "computation", here, COMPUTATIONS, None),
                computation_indexes=tuple(indexes or ()),
                precision=self.get(node, "precision", here, int, default=2),
                hidden=bool(self.get(node, "hidden", here, bool, default=False)),
            )))
        return self.check_columns(raw)

