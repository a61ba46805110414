"""The edits of ``metascore bundle add-meta``: a bundle's ``competition.yaml`` with the meta phase.

:class:`BundleEditor` reads a bundle (the schema check, then the text of ``competition.yaml``
as :class:`~metascore.bundle.meta.yaml_text.YamlText`), removes an existing meta phase (its
phase, its task and the leaderboard columns its configuration writes, with the comments
add-meta wrote above them), then adds the meta task, the "Final ranking" phase and the
output columns in the file's own style (v2: list items; v1: a numbered phase and column
keys that name the leaderboard by the same alias), sets, on request, the image, the
leaderboard's ``submission_rule`` and the last phase's end. It returns the files to write
and collects a short list of changes and the notes an organizer must read; it writes
nothing (:func:`metascore.bundle.meta.add.add_meta` does).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ...config import parse_config
from ...errors import ConfigError
from ...config import CONFIG_NAME
from .baseline_files import add_given
from .choices import ConfigPlan, MetaChoices, plan_config
from ..check.image_checks import meta_python_sentence
from ..check.meta_config import find_meta_configs
from ..schema.competition import DEFAULT_IMAGE, Competition, Phase
from ..platform.meta_program import META_PROGRAM_NAME, meta_python_in, needs_meta_program
from .ranking_page import PAGE_TITLE, ranking_page
from ..schema.load import check_schema
from ..schema import phase_dates
from ..schema.phase_dates import command_line_end, end_mark
from ..platform.commands import ADD_META
from ..platform.leaderboard_rules import MANUAL_RULES
from ..platform.page_text import page_text
from ..site.submissions import collect_submissions
from ..check.visibility import registration_note, silent_scoring_programs
from .yaml_text import Raw, YamlText, flow

__all__ = ["BundleEditor", "MARKER", "WRITTEN_FOLDERS"]

#: The comment that starts every block add-meta writes into competition.yaml.
MARKER = "metascore add-meta:"
_REF_DIR = "final_ranking/reference_data/"
_PROGRAM_DIR = f"{META_PROGRAM_NAME}/"
_PAGE_NAME = "final_ranking.md"
#: The folders add-meta writes into unless the bundle's meta phase names others.
WRITTEN_FOLDERS = (_PROGRAM_DIR, _REF_DIR)
_POINTER = f"""# {META_PROGRAM_NAME}/ (filled automatically)

Written by `metascore bundle add-meta`. This folder is a pointer: the "Final ranking" task's
scoring program is metascore's meta-scoring program, and it is not copied here, so that the
bundle always gets the installed version:

- `metascore bundle run BUNDLE` fills it, inside its run folder;
- `metascore bundle zip BUNDLE -o bundle.zip` puts it into the zip, with a vendored copy of
  the `metascore` package next to `score.py`; it runs with the image's `python3` where the
  image is known to run it (codalab/codalab-legacy:py312), else with its own Python
  (`runtime/`, for any Linux x86_64 image with glibc >= 2.17). Upload that zip, not this
  folder as it is.

To freeze a version, replace this README by the program's files (`metadata.yaml`,
`score.py` and a `metascore/` package folder).
"""
_RULES_EFFECT = {
    "Force_Last": "each participant's last finished submission goes on the leaderboard by itself "
                  "and replaces their previous one, even a worse one (participants no longer "
                  "choose what shows)",
    "Force_Best": "each participant's best finished submission (by the primary column) stays on "
                  "the leaderboard by itself",
    "Force_Latest_Multiple": "every finished submission goes on the leaderboard",
}


class BundleEditor:
    """Plans the new competition.yaml and files of one bundle; collects changes and notes."""

    def __init__(self, root: Path, tmp: Path, choices: MetaChoices, *, end: str | None,
                 submission_rule: str | None, image: str | None, check_links: bool = True,
                 meta_python: str | None = None) -> None:
        self.root, self.tmp, self.choices, self.meta_python = root, tmp, choices, meta_python
        self.check_links = check_links  # False: ``root`` is a view made of links to a bundle
        self.end, self.rule, self.image = end, submission_rule, image
        self.changes: list[str] = []
        self.notes: list[str] = []
        self.existing = ""
        self.program_ref = _PROGRAM_DIR
        self.ref_dir = _REF_DIR
        self.page_ref: str | None = None  # the ranking page of an existing meta phase
        #: the last phase's end given on the command line, now or by the run that wrote the
        #: meta phase (its mark in competition.yaml): `bundle zip --start` keeps it
        self.command_line_end: dt.datetime | None = None
        #: the files or folders to copy into the bundle (path in it -> source): ``--baseline FILE``
        self.copies: dict[str, Path] = {}
        self.submissions: list = []  # what a local run submits (planned)

    # ------------------------------------------------------------------ reading
    def load(self) -> tuple[Competition, YamlText]:
        report = check_schema(self.root, outside_links=self.check_links)
        if report.errors or report.competition is None:
            first = report.errors[0] if report.errors else "competition.yaml cannot be read"
            raise ConfigError(f"{self.root}: fix the bundle first: {first} (run `metascore bundle "
                              "check`); nothing written.")
        try:
            text = (self.root / "competition.yaml").read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{self.root}: competition.yaml is not UTF-8 text ({exc.reason} at byte "
                              f"{exc.start}); add-meta edits it as text.") from None
        self.command_line_end = command_line_end(text)
        return report.competition, YamlText(text)

    def plan(self, fill_program: bool) -> tuple[dict[str, str], bool]:
        """The files to write (path -> text) and whether to fill the meta program (zip)."""
        comp, yt = self.load()
        if comp.leaderboard is None:
            raise ConfigError(f"{self.root}: the competition has no leaderboard.")
        comp, removed_keys, old_start = self.strip(comp, yt)
        phases = list(comp.phases)
        if not phases:
            raise ConfigError(f"{self.root}: competition.yaml has no phase to rank besides the meta phase.")
        columns = [c for c in comp.leaderboard.columns if c.key not in removed_keys]
        taken = [c.key for c in columns]
        submissions, _ = collect_submissions(comp, self.choices.submissions, cache=self.tmp / "submissions")
        self.submissions = submissions
        cfg = plan_config(comp, phases, self.choices, columns=columns,
                          unsorted=self.unsorted(comp, yt), submissions=submissions,
                          taken_keys=taken, program_ref=self.program_ref)
        self.set_image(comp, yt)
        self.set_rule(comp, yt)
        self.set_visibility(comp, yt)
        start = self.meta_start(comp, yt, phases[-1], old_start)
        if comp.version == 2:
            phase_name = self.append_v2(comp, yt, phases[-1], start, cfg)
        else:
            phase_name = self.append_v1(yt, phases[-1], start, cfg)
        page_ref, page = self.add_page(comp, yt, cfg, phase_name)
        self.changes.append(f"+ {self.ref_dir}{CONFIG_NAME}: {cfg.summary}")
        self.notes.extend(cfg.notes)
        files = {"competition.yaml": yt.text, f"{self.ref_dir}{CONFIG_NAME}": cfg.text, page_ref: page}
        self.copies = add_given(self.root, cfg.given, files, self.changes)
        program = comp.path(self.program_ref)
        fill = False
        if program is not None and needs_meta_program(program):
            if fill_program:
                fill = True
                self.changes.append(f"+ {self.program_ref}: metascore's meta-scoring program with a "
                                    "vendored metascore (the zip uploads as it is)")
            elif not program.exists() or not any(program.iterdir()):
                files[f"{self.program_ref}README.md"] = _POINTER
                self.changes.append(f"+ {self.program_ref}README.md: a pointer; `bundle run` and "
                                    "`bundle zip` fill the folder with the meta-scoring program")
        return files, fill

    def platform_edits(self) -> str:
        """competition.yaml with only this run's image, submission rule and end date applied,
        the meta phase left as it is: equal to the planned text when this run differs from
        the one that wrote the meta phase only in those options (no --force needed)."""
        comp, yt = self.load()
        stripped, _, old_start = self.strip(comp, YamlText(yt.text))
        if not stripped.phases:
            return yt.text
        self.set_image(stripped, yt)
        self.set_rule(stripped, yt)
        self.set_visibility(stripped, yt)
        self.meta_start(stripped, yt, stripped.phases[-1], old_start)
        return yt.text

    def unsorted(self, comp: Competition, yt: YamlText) -> list[str]:
        """Keys of the leaderboard columns whose sorting is not written."""
        if comp.version == 2:
            cols = yt.path("leaderboards", 0, "columns")
            items = cols.value if isinstance(cols, yaml.SequenceNode) else []
            return [str(yt.get(c, "key").value) for c in items
                    if yt.get(c, "key") is not None and yt.blank(yt.get(c, "sorting"))]
        cols = yt.path("leaderboard", "columns")
        pairs = cols.value if isinstance(cols, yaml.MappingNode) else []
        return [str(k.value) for k, v in pairs if yt.blank(yt.get(v, "sort"))]

    # ------------------------------------------------------------------ an existing meta phase
    def strip(self, comp: Competition, yt: YamlText) -> tuple[Competition, set[str], dt.datetime | None]:
        """Remove the meta phase(s), their tasks and output columns from ``yt``; the
        competition without them, the removed column keys and the old meta phase's start."""
        metas = {id(m.task): m for m in find_meta_configs(comp)}
        meta_phases = [p for p in comp.phases if p.tasks and all(
            id(comp.tasks[i]) in metas or _is_meta_program(comp.tasks[i].scoring_program)
            for i in p.tasks)]
        if not meta_phases:
            return comp, set(), None
        tasks = {i for p in meta_phases for i in p.tasks}
        keys: set[str] = set()
        for i in tasks:
            meta = metas.get(id(comp.tasks[i]))
            if meta is not None and meta.config is not None:
                keys |= set(meta.config.scores)
            else:  # no readable configuration: the default output columns
                keys |= {"n_qualified", "winner_score"}
        task = comp.tasks[min(tasks)]
        self.existing = (f"phase {meta_phases[0].name!r}, task {task.name!r}, "
                         f"{(task.reference_data or '').rstrip('/')}/{CONFIG_NAME}")
        ref = comp.path(task.reference_data)
        if ref is not None and ref.is_dir():
            self.ref_dir = task.reference_data.rstrip("/") + "/"
        if task.scoring_program:
            self.program_ref = task.scoring_program
        names = {p.name for p in meta_phases}
        keys &= {c.key for c in comp.leaderboard.columns}
        used = {i for p in comp.phases if p.name not in names for i in p.tasks}
        page = next(((title, ref) for title, ref in comp.pages if _is_ranking_page(title, ref)), None)
        if page is not None:
            self.page_ref = page[1]
        if comp.version == 2:
            self._remove_items(yt, ("phases",), lambda n: yt.scalar(n, "name") in names)
            self._remove_items(yt, ("tasks",), lambda n: yt.integer(n, "index") in tasks - used)
            self._remove_items(yt, ("leaderboards", 0, "columns"), lambda n: yt.scalar(n, "key") in keys)
            self._remove_items(yt, ("pages",), lambda n: _is_ranking_page(yt.scalar(n, "title"),
                                                                          yt.scalar(n, "file")))
        else:
            self._remove_pairs(yt, ("phases",), lambda v: yt.scalar(v, "label") in names)
            self._remove_pairs(yt, ("leaderboard", "columns"), lambda v: False, keys)
            if page is not None:
                self._remove_pairs(yt, ("html",), lambda v: False, {page[0]})
        board = replace(comp.leaderboard, columns=tuple(
            c for c in comp.leaderboard.columns if c.key not in keys))
        return replace(comp, phases=tuple(p for p in comp.phases if p.name not in names),
                       tasks={i: t for i, t in comp.tasks.items() if i not in tasks - used},
                       leaderboard=board, pages=tuple(p for p in comp.pages if p != page)), \
            keys, meta_phases[0].start

    def _remove_items(self, yt: YamlText, where: tuple, match) -> None:
        while True:
            seq = yt.path(*where)
            items = seq.value if isinstance(seq, yaml.SequenceNode) else []
            hit = next((i for i in range(len(items) - 1, -1, -1) if match(items[i])), None)
            if hit is None:
                return
            yt.remove_item(seq, hit, MARKER)

    def _remove_pairs(self, yt: YamlText, where: tuple, match, keys: set[str] = frozenset()) -> None:
        while True:
            node = yt.path(*where)
            pairs = node.value if isinstance(node, yaml.MappingNode) else []
            hit = next((str(k.value) for k, v in reversed(pairs) if str(k.value) in keys or match(v)), None)
            if hit is None:
                return
            yt.remove_pair(node, hit, MARKER)

    # ------------------------------------------------------------------ image and rule
    def set_image(self, comp: Competition, yt: YamlText) -> None:
        """Set the image only when asked (--image); else say that it is left as it is."""
        key = "docker_image" if comp.version == 2 else "competition_docker_image"
        node = yt.get(yt.root, key)
        written = None if node is None or yt.blank(node) else str(node.value)
        current = written or DEFAULT_IMAGE
        shown = current if written else f"{DEFAULT_IMAGE} (Codabench's default: no {key})"
        if self.image is None:
            said = meta_python_sentence(current, meta_python_in(current, self.meta_python))
            self.notes.append(f"{key} left as it is, {shown}: every phase keeps running in it "
                              f"(--image sets another); {said}")
            return
        if written and _image_key(self.image) == _image_key(current):
            return
        if node is not None:
            yt.replace_value(node, flow(self.image))
        else:
            after = "title" if yt.get(yt.root, "title") is not None else str(yt.root.value[0][0].value)
            yt.insert_pair_after(yt.root, after, key, self.image, comment=[
                f"{MARKER} the image of every phase (--image)"])
        self.changes.append(f"~ {key}: {shown} -> {self.image}")
        self.notes.append(f"image {self.image} (--image): Codabench runs every phase in this one image, "
                          "so check that your programs still run in it with `metascore bundle run` "
                          "(the local backend takes the image's packages from `metascore bundle env "
                          "BUNDLE`; --backend docker runs the image itself).")

    def set_rule(self, comp: Competition, yt: YamlText) -> None:
        current = comp.leaderboard.submission_rule
        if self.rule is not None:
            if self.rule != current:
                board = yt.path("leaderboards", 0)
                node = yt.get(board, "submission_rule")
                if node is not None:
                    yt.replace_value(node, self.rule)
                else:
                    after = "key" if yt.get(board, "key") is not None else str(board.value[0][0].value)
                    yt.insert_pair_after(board, after, "submission_rule", self.rule)
                self.changes.append(f"~ leaderboard submission_rule: {current} -> {self.rule}")
            effect = _RULES_EFFECT.get(self.rule)
            if effect:
                self.notes.append(f"submission_rule {self.rule}: {effect}; the results export, migration "
                                  "and so the Final ranking phase get these submissions.")
                return
            current = self.rule
        if current in MANUAL_RULES:
            v1 = (" (a v1 bundle: Codabench's import makes it Add)" if comp.version == 1
                  else " (Codabench's default)" if self.rule is None
                  and yt.get(yt.path("leaderboards", 0), "submission_rule") is None else "")
            fix = (f"`{ADD_META} --submission-rule Force_Last`: each participant's last finished "
                   "submission then goes there by itself (participants no longer choose which one "
                   "shows)" + ("; a v1 competition.yaml is then written in the v2 form, which can set "
                               "the rule (or choose it after the upload in the Leaderboard tab of "
                               "Codabench's competition editor)" if comp.version == 1 else ""))
            self.notes.append(
                f"leaderboard submission_rule {current}{v1}: nothing reaches the leaderboard, and so "
                "the results export the Final ranking phase ranks, until a participant clicks 'add to "
                "leaderboard'; nor does the organizer's own submission to the Final ranking phase, "
                "whose row is the ranking (`metascore codabench submit` adds it). Fix: "
                f"{fix}. Kept as it is, a participant can also add their refused upload to the Final "
                "ranking phase to its leaderboard, as a row of n/a that no organizer can remove, and "
                "a local `bundle run` feeds the meta phase only what a submissions manifest marks "
                "on_leaderboard.")

    # ------------------------------------------------------------------ what participants see
    def set_visibility(self, comp: Competition, yt: YamlText) -> None:
        """``enable_detailed_results: true``, so that participants can open the final ranking
        (:mod:`~metascore.bundle.check.visibility`); a note when registrations wait for approval."""
        key = "enable_detailed_results"
        if not comp.enable_detailed_results:
            node = yt.get(yt.root, key)
            if node is not None:
                yt.replace_value(node, "true")
                self.changes.append(f"~ {key}: {node.value} -> true")
            else:
                image = "docker_image" if comp.version == 2 else "competition_docker_image"
                after = next((k for k in (image, "title") if yt.get(yt.root, k) is not None),
                             str(yt.root.value[0][0].value))
                yt.insert_pair_after(yt.root, after, key, True, comment=[
                    f"{MARKER} participants open the final ranking as the Final ranking row's",
                    "  Detailed Results (Codabench's default, false, answers 404)."])
                self.changes.append(f"+ {key}: true (the final ranking page is the meta phase's "
                                    "detailed results)")
            self.notes.append(f"{key}: true shows participants the final ranking; it also shows the "
                              "detailed results your own scoring programs write (detailed_results.html), "
                              "in every phase, to whoever can see the leaderboard.")
        self.set_eye_icons(comp, yt)
        note = registration_note(comp)
        if note is not None:
            self.notes.append(note.removeprefix("competition.yaml: "))

    def set_eye_icons(self, comp: Competition, yt: YamlText) -> None:
        """Detailed results are on for the whole competition: each leaderboard row gets an eye
        icon, which opens an empty page when the phase's scoring program writes no
        ``detailed_results.html`` (the site stores an empty one for every submission). Say so;
        with ``--eye-icons hide``, ``show_detailed_results_in_leaderboard: false`` removes every
        eye icon, and participants open the ranking from the "Final ranking" page's link."""
        key = "show_detailed_results_in_leaderboard"
        silent = silent_scoring_programs(comp, lambda ref: _is_meta_program(ref) or ref == self.program_ref)
        if self.choices.eye_icons == "hide":
            node = yt.get(yt.root, key)
            if node is None:
                yt.insert_pair_after(yt.root, "enable_detailed_results", key, False, comment=[
                    f"{MARKER} no eye icon on any leaderboard (--eye-icons hide): participants open",
                    "  the final ranking from the link at the top of the 'Final ranking' page."])
                self.changes.append(f"+ {key}: false (--eye-icons hide)")
            elif str(node.value).lower() != "false":
                yt.replace_value(node, "false")
                self.changes.append(f"~ {key}: {node.value} -> false (--eye-icons hide)")
            self.notes.append(f"{key}: false: no leaderboard shows an eye icon, so no row opens an empty "
                              f"page; participants reach the final ranking through the link at the top of "
                              f"the {PAGE_TITLE!r} page, which `metascore codabench submit` writes there once "
                              "the meta submission finishes (`metascore codabench publish` writes it again).")
            return
        shown = yt.get(yt.root, key)
        if not silent or (shown is not None and str(shown.value).lower() == "false"):
            return
        self.notes.append(
            f"the scoring program(s) {', '.join(silent)} write no detailed_results.html, and detailed "
            "results are on for the whole competition: on the leaderboards of "
            + ", ".join(repr(p.name) for p in comp.phases if not _meta_phase(comp, p, self.program_ref))
            + ", the eye icon of every row opens an empty page (Codabench stores an empty "
            "detailed_results.html for each submission). Choose: keep them (participants see a blank "
            "page there, and the Final ranking row's eye icon opens the ranking), write a "
            "detailed_results.html in those programs' output, or --eye-icons hide (no eye icon on any "
            f"leaderboard; the link at the top of the {PAGE_TITLE!r} page, written by `metascore "
            "codabench submit`, leads to the ranking).")

    def add_page(self, comp: Competition, yt: YamlText, cfg: ConfigPlan, phase: str) -> tuple[str, str]:
        """The competition page that says how the final ranking is computed: its path and text,
        and its entry in ``pages`` (v1: ``html``)."""
        ref = self.page_ref
        if ref is None:
            first = next((r for _, r in comp.pages if r), None)  # beside the bundle's pages
            folder = "pages" if first is None else PurePosixPath(first).parent.as_posix()
            ref = _PAGE_NAME if folder == "." else f"{folder}/{_PAGE_NAME}"
        config = parse_config(yaml.safe_load(cfg.text), source=CONFIG_NAME)
        hidden = yt.get(yt.root, "show_detailed_results_in_leaderboard")  # hidden by an earlier run too
        text = ranking_page(config, meta_phase=phase, columns={c.key: c.title for c in cfg.columns},
                            eye_icons=self.choices.eye_icons != "hide"
                            and (hidden is None or str(hidden.value).lower() != "false"))
        comment = [f"{MARKER} how the final ranking is computed (from {self.ref_dir}{CONFIG_NAME})"]
        if comp.version == 2:
            yt.append_item(yt.get(yt.root, "pages"), {"title": PAGE_TITLE, "file": ref}, comment=comment)
        else:
            yt.append_pair(yt.get(yt.root, "html"), PAGE_TITLE, ref, comment=comment)
        self.changes.append(f"+ page {PAGE_TITLE!r} ({ref}): how the final ranking is computed, "
                            f"written from {CONFIG_NAME}")
        return ref, text

    # ------------------------------------------------------------------ dates
    def meta_start(self, comp: Competition, yt: YamlText, last: Phase, old_start: dt.datetime | None) -> dt.datetime:
        """The meta phase's start: the day after the last phase ends (setting its end if asked)."""
        given = phase_dates.parse_date(self.end) if self.end is not None else None
        set_end = None  # v1: the end_date of competition.yaml
        if comp.version == 2:
            if last.end is not None:
                if given is not None and given != last.end:
                    raise ConfigError(f"--end {self.end}: phase {last.name!r} already ends at "
                                      f"{last.end}; drop --end (or edit its end in competition.yaml).")
                end = last.end
            elif given is None:
                raise ConfigError(_no_end(comp.phases))
            else:
                node = next(n for n in yt.get(yt.root, "phases").value if yt.scalar(n, "name") == last.name)
                yt.insert_pair_after(node, "start", "end", Raw(phase_dates.date_text(given)), comment=[
                    f"{MARKER} {end_mark(given)};", "  the Final ranking phase starts the day after this phase ends"])
                self.changes.append(f"~ phase {last.name!r}: end {phase_dates.date_text(given)} (--end; it had none)")
                end = given
        else:
            node = yt.get(yt.root, "end_date")
            set_end = None if node is None or yt.blank(node) else phase_dates.parse_date(str(node.value), "competition.yaml: end_date:")
            end = given or set_end or (old_start - dt.timedelta(days=1) if old_start else None)
            if end is None:
                raise ConfigError(_no_end(comp.phases))
            kept = self.command_line_end
            self.command_line_end = given or (kept if given is None and set_end is None and kept is not None
                                              and end.date() == kept.date() else None)
            if given is not None:
                self.changes.append(f"~ phase {last.name!r}: ends {phase_dates.date_text(given)} (--end; a v1 phase "
                                    "ends the day before the next one starts)")
            if set_end is not None:
                yt.replace_value(node, "null")
                self.changes.append(f"~ end_date: {node.value} -> null (it now ends phase {last.name!r}, "
                                    "and the Final ranking phase starts the day after)")
        if last.start is not None and end <= last.start:
            if given is not None:
                raise ConfigError(f"--end {self.end}: phase {last.name!r} starts at {last.start}; its "
                                  "end must come after that.")
            source = ("its end in competition.yaml" if comp.version == 2
                      else "competition.yaml's end_date" if set_end is not None
                      else "the day before the existing Final ranking phase starts")
            raise ConfigError(f"phase {last.name!r} (the last phase) would end on {end:%Y-%m-%d}, "
                              f"{source}, which is not after its start, {last.start:%Y-%m-%d}: give "
                              f"--end DATE, a day after {last.start:%Y-%m-%d} when {last.name!r} "
                              "closes; the Final ranking phase starts the day after.")
        return dt.datetime.combine(end.date() + dt.timedelta(days=1), dt.time())

    # ------------------------------------------------------------------ appending
    def append_v2(self, comp: Competition, yt: YamlText, last: Phase, start: dt.datetime, cfg: ConfigPlan) -> str:
        data = yaml.safe_load(yt.text)
        task_index = max((t.get("index", -1) for t in data["tasks"] if isinstance(t, dict)), default=-1) + 1
        given = [p["index"] for p in data["phases"] if isinstance(p, dict) and isinstance(p.get("index"), int)]
        phase_index = max([len(data["phases"]) - 1, *given]) + 1  # after every phase, numbered or not
        phase_name = _unique("Final ranking", [p.name for p in comp.phases])
        # the v2 form of a v1 file (every task "<phase> Task"): named as the v1 import names it
        v1_form = all(len(p.tasks) == 1 and comp.tasks[p.tasks[0]].name == f"{p.name} Task" for p in comp.phases)
        task_name = _unique(f"{phase_name} Task" if v1_form else "meta-ranking", [t.name for t in comp.tasks.values()])
        yt.append_item(yt.get(yt.root, "tasks"), {
            "index": task_index, "name": task_name,
            "description": f"{cfg.method} over the leaderboard columns, metascore's meta-scoring program",
            "reference_data": self.ref_dir, "scoring_program": self.program_ref,
        }, comment=[f"{MARKER} the Final ranking task: metascore's meta-scoring program, configured",
                    f"  by {self.ref_dir}{CONFIG_NAME} (`metascore bundle run` and `bundle zip`",
                    f"  fill {self.program_ref} while it holds only a README)."])
        yt.append_item(yt.get(yt.root, "phases"), {
            "index": phase_index, "name": phase_name,
            "description": _phase_description(cfg), "start": Raw(phase_dates.date_text(start)),
            "execution_time_limit": 300, "max_submissions": 10, "hide_output": True,
            "tasks": [task_index],
        }, comment=[f"{MARKER} the Final ranking phase, after {last.name!r}: the organizer submits the",
                    "  results export of the ranked phases here and metascore ranks the participants;",
                    "  hide_output keeps that export (every participant's scores) for the organizers,",
                    "  while the ranking (the row's detailed results) is open to every participant."])
        index = max(c.index for c in comp.leaderboard.columns) + 1
        for n, col in enumerate(cfg.columns):
            yt.append_item(yt.path("leaderboards", 0, "columns"), {
                "title": col.title, "key": col.key, "index": index + n, "sorting": "desc",
                "precision": 0 if col.statistic.startswith("n_") else 4,
            }, comment=[f"{MARKER} written by the Final ranking phase (empty in the other phases)"]
                if n == 0 else ())
        self._said(task_name, task_index, phase_name, start, last, cfg)
        return phase_name

    def append_v1(self, yt: YamlText, last: Phase, start: dt.datetime, cfg: ConfigPlan) -> str:
        data = yaml.safe_load(yt.text)
        phases = data["phases"]
        number = max((int(p.get("phasenumber", k)) for k, p in phases.items() if isinstance(p, dict)),
                     default=0) + 1
        key = number if all(isinstance(k, int) for k in phases) else str(number)
        label = _unique("Final ranking", [str(p.get("label")) for p in phases.values() if isinstance(p, dict)])
        yt.append_pair(yt.get(yt.root, "phases"), key, {
            "phasenumber": number, "label": label, "description": _phase_description(cfg),
            "start_date": Raw(phase_dates.date_text(start)), "execution_time_limit": 300, "max_submissions": 10,
            "hide_output": True, "scoring_program": self.program_ref, "reference_data": self.ref_dir,
        }, comment=[f"{MARKER} the Final ranking phase, after {last.name!r}: the organizer submits",
                    "  the results export here; metascore's meta-scoring program, configured by",
                    f"  {self.ref_dir}{CONFIG_NAME}, ranks the participants (`metascore bundle run`",
                    f"  and `bundle zip` fill {self.program_ref} while it holds only a README);",
                    "  hide_output keeps that export for the organizers, the ranking stays open.",
                    *([f"  It starts the day after {last.name!r} ends, {end_mark(self.command_line_end)}."]
                      if self.command_line_end is not None else [])])
        columns = yt.path("leaderboard", "columns")
        board = self._v1_board(yt, columns, data)
        rank = max((int(c.get("rank", 1)) for c in data["leaderboard"]["columns"].values()
                    if isinstance(c, dict)), default=0) + 1
        for n, col in enumerate(cfg.columns):
            yt.append_pair(yt.path("leaderboard", "columns"), col.key, {
                "leaderboard": board, "label": col.title,
                "numeric_format": 0 if col.statistic.startswith("n_") else 4, "rank": rank + n,
                "sort": "desc",
            }, comment=[f"{MARKER} written by the Final ranking phase (empty in the other phases)"]
                if n == 0 else ())
        self._said(f"{label} Task", None, label, start, last, cfg)
        return label

    @staticmethod
    def _v1_board(yt: YamlText, columns: Any, data: dict) -> object:
        """How the existing columns name their leaderboard: the alias (``*RESULTS``), else a
        mapping with the first leaderboard's label (Codabench matches columns by label)."""
        for k, _ in columns.value:
            key_node = yt.key_node(yt.get(columns, str(k.value)), "leaderboard")
            if key_node is None:
                continue
            rest = yt.text[key_node.end_mark.index:yt.text.find("\n", key_node.end_mark.index)]
            alias = rest.split(":", 1)[-1].strip().split("#")[0].strip()
            if alias.startswith("*"):
                return Raw(alias)
        boards = data["leaderboard"]["leaderboards"]
        first = sorted(boards.items(), key=lambda kv: (kv[1] or {}).get("rank", 1))[0]
        return {"label": str((first[1] or {}).get("label", first[0]))}

    def _said(self, task: str, index: int | None, phase: str, start: dt.datetime, last: Phase,
              cfg: ConfigPlan) -> None:
        at = f" {index}" if index is not None else ""
        self.changes[:0] = [
            f"+ task{at} {task!r}: {self.program_ref} with {self.ref_dir}",
            f"+ phase {phase!r}: starts {phase_dates.date_text(start)}, the day after {last.name!r} ends",
            "+ leaderboard columns " + ", ".join(f"{c.key} ({c.title})" for c in cfg.columns),
        ]


def _no_end(phases: list[Phase]) -> str:
    """The last phase has no end: say so, and propose one (:func:`proposed_end`)."""
    name = phases[-1].name
    end, why = phase_dates.proposed_end(phases, phase_dates.utc_now())
    return (f"phase {name!r} (the last phase) has no end date, so the Final ranking phase cannot start "
            f"after it: give --end DATE, the day {name!r} closes (the Final ranking phase opens the "
            f"day after); proposed: --end {end:%Y-%m-%d} ({why}; the Final ranking phase then opens "
            f"{end + dt.timedelta(days=1):%Y-%m-%d}).")


# ====================================================================== helpers
def _is_ranking_page(title: str | None, ref: str | None) -> bool:
    """The competition page add-meta wrote (:func:`BundleEditor.add_page`)."""
    return title == PAGE_TITLE and bool(ref) and PurePosixPath(ref).name == _PAGE_NAME


def _meta_phase(comp: Competition, phase: Phase, program: str) -> bool:
    return bool(phase.tasks) and all(
        _is_meta_program(comp.tasks[i].scoring_program) or comp.tasks[i].scoring_program == program
        for i in phase.tasks if i in comp.tasks)


def _is_meta_program(ref: str | None) -> bool:
    return bool(ref) and PurePosixPath(ref.rstrip("/")).name.removesuffix(".zip") == META_PROGRAM_NAME


def _image_key(image: str) -> str:
    image = image.strip().removeprefix("docker.io/").removeprefix("index.docker.io/")
    return image if ":" in image.rsplit("/", 1)[-1] else image + ":latest"


def _unique(name: str, taken: list[str]) -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name} ({n})", n + 1
    return out


def _phase_description(cfg: ConfigPlan) -> str:
    """The meta phase's description (Markdown on the site: names as text, :func:`page_text`)."""
    dev, final = page_text(cfg.development), page_text(cfg.final or "")
    phases = dev if cfg.final is None else f"{dev} and {final}"
    first = cfg.columns[0]
    counts = ("the participants who qualified" if first.statistic == "n_qualified"
              else "the participants ranked")
    # written before any run: what the columns mean, never a result
    return (f"The final ranking. The organizers submit the results of {phases} here and metascore "
            f"ranks them ({cfg.method}); open the Detailed Results of their row for the whole "
            f"ranking, and the {PAGE_TITLE!r} page for how it is computed. The {page_text(first.title)} "
            f"column counts {counts}.")
