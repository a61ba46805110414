"""``metascore bundle add-meta``: add the meta-ranking phase to a bundle an organizer already has.

:func:`add_meta` adds what the meta phase needs and nothing else:

- the **meta task**: ``meta_scoring_program/`` (a pointer folder that ``bundle run`` and
  ``bundle zip`` fill with metascore's meta-scoring program, :mod:`~metascore.bundle.meta.program_folder`)
  and reference data holding ``metascore.yaml`` (:mod:`~metascore.bundle.meta.choices`);
- the **"Final ranking" phase** after the last phase, starting the day after that phase ends;
- the **leaderboard columns** the meta-scoring program writes (``output.scores``);
- what the meta phase needs to run on Codabench: the last phase's end date (``--end`` when it
  has none) and, on request (``--submission-rule``), a leaderboard rule that puts submissions
  in the results export.

The competition's ``docker_image`` is left as it is unless ``--image`` is given: the
meta-scoring program runs in it, with the image's ``python3`` where the image is known to run
it, else with its own Python (:mod:`~metascore.bundle.runtime.store`), so every phase keeps the
image the organizer chose; the notes say so, in the words of ``bundle check``.

``competition.yaml`` is edited (:mod:`~metascore.bundle.meta.edit`) as text where the parser says each node is
(:class:`~metascore.bundle.meta.yaml_text.YamlText`): the organizer's comments, key order and
indentation stay; each added block carries a comment saying what it is for. A second run on
the meta phase add-meta wrote keeps what the bundle holds (the end, the rule, and the choices
of its ``metascore.yaml``: :mod:`~metascore.bundle.meta.previous`) and changes only what its
options name, saying what it kept; the same gives "nothing to change". It is refused unless
``force`` only where it would undo something: files of the meta phase edited by hand since
(an end, rule or image alone is still applied, those files left as they are), or a meta
phase add-meta did not write (then the meta phase, its task and columns are removed and
written again). Nothing is written until the result passes
``metascore bundle check`` without errors. v2 and v1 (CodaLab) bundles, folders and zips: a
folder is edited in place (or copied to ``output``); a zip gives a zip (in place, or
``output`` ending in ``.zip``, with the meta-scoring program filled in so it uploads as is)
or, with any other ``output``, a folder.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ...config.model import CONFIG_NAME
from ...errors import ConfigError, InputError, did_you_mean
from ...signature.binding import COMPETITION_FILE, new_token, token_text
from ...readers.yaml_loader import read_yaml
from .choices import MetaChoices
from .previous import (base_choices, kept_choices, kept_note, meta_options_given, platform_kept,
                       previous_choices, second_changes)
from .edit import WRITTEN_FOLDERS, BundleEditor
from ..archive import extract_bundle
from ..check.full import check_bundle as full_check
from ..check.image_checks import LOCAL_RUN_NEEDS_ENV
from ..platform.leaderboard_rules import SUBMISSION_RULES
from ...atomic import replacing
from ..files import new_folder, write_text
from ..links import refuse_writes
from .program_folder import assemble_meta_program
from ..runtime.store import first_build_notice
from ..platform.commands import name_bundle
from ..platform.meta_program import META_PROGRAM_NAME, meta_python_in
from ..site.submissions import SUBMISSIONS_FOLDER, beside_bundle
from ..schema.competition import BundleReport
from ..schema.load import refuse_bundle_links
from ..schema import phase_dates
from ..schema.v1_to_v2 import V1_COPY_NAME, v1_to_v2
from ..schema.v1_unread import unread_keys

__all__ = ["AddMetaResult", "add_meta"]

_WHAT = "add-meta"  # who writes, in the messages of refuse_writes


@dataclass
class AddMetaResult:
    """What :func:`add_meta` did: where, the changes, the notes, and what to run next."""

    bundle: Path
    target: Path
    changed: bool
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: int = 0
    zipped: bool = False
    #: "added", "rewrote" (--force) or "updated" (a second run: what its options name)
    kind: str = "added"
    #: a local run needs the image's packages first (``bundle env``, or ``bundle run --setup``)
    needs_env: bool = False
    #: the submissions folder given (``--submissions``), which the next run uses
    submissions: Path | None = None
    #: the sample submissions beside the bundle, which no run reads (``beside_bundle``)
    beside: str = ""
    #: the bundle has no ``sample_submissions/``: a run needs ``--submissions DIR``
    no_samples: bool = False
    #: whether ``bundle zip --start today`` suits the dates, and whether it is proposed
    #: (:func:`~metascore.bundle.schema.phase_dates.start_advice`)
    dates: tuple[str, bool] | None = None
    #: ``bundle zip`` will build the meta-scoring program's own Python first (none on this machine)
    first_build: bool = False

    def lines(self) -> list[str]:
        where = "" if self.target == self.bundle else f" -> {self.target}"
        if not self.changed:
            out = [f"{self.bundle}: already has the meta phase add-meta would write; nothing changed."]
        else:
            done = {"added": "added the meta-ranking phase",
                    "rewrote": "rewrote the meta-ranking phase (--force)",
                    "updated": "updated (what this run's options name; the rest as it was)"}[self.kind]
            out = [f"{self.bundle}{where}: {done}:"]
            out += [f"  {c}" for c in self.changes if self.kind != "updated" or c.startswith("~")]
            out += [f"note: {name_bundle(n, self.target)}" for n in self.notes]
        given = f" --submissions {self.submissions}" if self.submissions is not None else ""
        subs = given or (" --submissions DIR" if self.zipped or self.no_samples else "")
        seen = f"   ({self.warnings} warning(s) to read)" if self.warnings else ""
        out.append(f"next: metascore bundle check {self.target}{given}{seen}")
        setup = " --setup" if self.needs_env else ""
        out.append(f"      metascore bundle run {self.target}{setup}{subs} --out runs/"
                   + ("   (--setup, once: the image's packages, which this Python lacks)" if setup else ""))
        if subs and not given:
            out.append(f"        {SUBMISSIONS_FOLDER}" + (f"; {self.beside}" if self.beside else ""))
        if not self.zipped:
            start = " --start today" if self.dates and self.dates[1] else ""
            out.append(f"      upload: metascore bundle zip {self.target} -o bundle.zip{start} (it fills "
                       f"{META_PROGRAM_NAME}/ and puts in your organizer key's public half)")
            if self.dates:
                out.append(f"        {self.dates[0]}")
            if self.first_build:
                out.append("        the first zip on this machine builds the meta-scoring program's own "
                           "Python (11 to 15 minutes, once; a 45 MB zip): `bundle zip` says the ways out")
        out.append("      when the ranked phases end: metascore codabench pull ... --out pulled/, then "
                   "metascore codabench submit ... --phase 'Final ranking' pulled/ (signed with your "
                   "organizer key: the meta phase ranks nothing else)")
        return out


def add_meta(
    bundle: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *,
    choices: MetaChoices = MetaChoices(), force: bool = False, end: str | None = None,
    submission_rule: str | None = None, image: str | None = None, meta_python: str | None = None,
) -> AddMetaResult:
    """Add the meta-ranking phase to ``bundle`` (a folder or zip), in place or into ``output``.

    Parameters
    ----------
    choices : the organizer's decisions (method, baselines, judges, filter, phases).
    force : write the meta phase over one add-meta did not write, or over its files edited by
        hand since (otherwise refused); a second run needs it for nothing else.
    end : the end date of the last phase when it has none (v1: of the last phase, whose end is
        the day before the next phase starts); the meta phase starts the day after.
    submission_rule : a leaderboard ``submission_rule`` to set (v2 only).
    image : the competition image to set (default: the image is left as it is).
    meta_python : how the meta-scoring program filled into a zip runs (``"bundled"``,
        the default, or ``"image"``: :mod:`~metascore.bundle.runtime.store`).

    Raises
    ------
    InputError, ConfigError
        One sentence: what cannot be done safely and which option or edit fixes it. Nothing
        is written then.
    """
    src, out, zipped, zip_out = _paths(bundle, output, submission_rule)
    _given_files(choices, zipped)
    given = choices
    with tempfile.TemporaryDirectory(prefix="metascore-add-meta-") as tmp_name:
        tmp = Path(tmp_name)
        root = _readable(src, zipped, tmp)
        previous = previous_choices(root)  # None: no meta phase that add-meta wrote
        kept = kept_choices(given, previous) if previous is not None else {}
        choices = replace(given, **kept)
        v1 = _v1_form(root, tmp, choices, end, image, submission_rule) if submission_rule is not None else None
        edited = v1.root if v1 is not None else root
        editor = BundleEditor(edited, tmp, choices, end=end, submission_rule=submission_rule, image=image,
                              check_links=edited is root, meta_python=meta_python)
        files, fill = editor.plan(fill_program=zip_out)
        if v1 is not None:
            v1.keep(editor, files)
        hand = _hand_edits(root, tmp, base_choices(given, previous), zip_out) if previous is not None else ""
        if hand and not force and v1 is None and not meta_options_given(given):
            files = {"competition.yaml": _platform_text(editor, tmp, end, submission_rule, image)}
            editor.notes.insert(0, f"the meta phase and its files stay as they are: they differ from "
                                   f"what add-meta writes (edited by hand? {hand}); this run changes "
                                   "competition.yaml's end, rule or image only.")
        refuse_writes(root, [*files, *editor.copies], _WHAT)  # and the files there now, before they are read
        current = {rel: _read(root / rel) for rel in files}
        copies = _new_copies(root, editor.copies)
        same = all(current[rel] == text for rel, text in files.items()) and not fill and not copies
        result = AddMetaResult(src, out or src, not same, editor.changes, editor.notes, zipped=zip_out)
        if same:
            return result
        if previous is not None:
            result.kind = _second_run(src, hand, force, v1, given)
            if result.kind == "updated":
                result.changes = second_changes(editor.changes, current, files)
            said = kept_note(kept, platform_kept(files["competition.yaml"], end, submission_rule))
            if said:
                result.notes.insert(0, said)
        else:
            platform_only = v1 is not None and v1.platform_only
            result.kind = _kind(src, editor, files, current, force, platform_only or (
                bool(editor.existing) and _platform_only(editor, files, current, tmp, end, submission_rule, image)))
        report = _check_result(src, root, files, zipped, tmp, choices.submissions, copies)
        result.warnings = len(report.warnings)
        result.needs_env = any(n.startswith(LOCAL_RUN_NEEDS_ENV) for n in report.notes)
        result.no_samples = choices.submissions is None and not (root / "sample_submissions").is_dir()
        result.submissions = choices.submissions
        if result.no_samples:
            result.beside = beside_bundle(src, [s for s in editor.submissions if s.origin == "starting kit"])
        image = report.competition.docker_image if report.competition else None
        result.first_build = (not zip_out and meta_python_in(image, meta_python) == "bundled"
                              and first_build_notice() is not None)
        if report.competition is not None and len(report.competition.phases) > 1:
            kept_end = phase_dates.command_line_end(files["competition.yaml"])
            result.dates = phase_dates.start_advice(report.competition, report.competition.phases[:-1],
                                                    kept_end, phase_dates.utc_now())
        _write(result, root, out, files, editor.program_ref if fill else None, tmp,
               report.competition.docker_image if report.competition else None, meta_python, copies)
    return result


def _hand_edits(root: Path, tmp: Path, choices: MetaChoices, zip_out: bool) -> str:
    """How the bundle differs from what add-meta writes from the previous ``choices`` (its
    files edited by hand, or competition.yaml changed since): ``""`` when it does not."""
    base = BundleEditor(root, tmp / "base", choices, end=None, submission_rule=None, image=None)
    try:
        files, _ = base.plan(fill_program=zip_out)
    except (ConfigError, InputError):  # the previous choices no longer fit the bundle
        return "the previous choices no longer fit competition.yaml"
    now = {rel: _read(root / rel) for rel in files}
    if all(now[rel] == text for rel, text in files.items()):
        return ""
    return _difference(now, files)  # FILE line N: `as add-meta writes it` -> `as it is now`


def _platform_text(editor: BundleEditor, tmp: Path, end: str | None, rule: str | None, image: str | None) -> str:
    """competition.yaml with only this run's end, rule and image applied, the meta phase as it is."""
    return BundleEditor(editor.root, tmp / "platform", editor.choices, end=end, submission_rule=rule,
                        image=image, check_links=editor.check_links).platform_edits()


def _second_run(src: Path, hand: str, force: bool, v1: _V1Form | None, given: MetaChoices) -> str:
    """What a second run on the meta phase add-meta wrote does: ``updated`` (what its options
    name, the rest kept), or ``rewrote`` (``force``, over files edited by hand); refused
    without ``force`` when its options would undo those edits."""
    if not hand:
        return "updated"
    if force:
        return "rewrote"
    if (v1 is not None and v1.platform_only) or (v1 is None and not meta_options_given(given)):
        return "updated"  # the end, rule or image alone: those files left as they are
    raise ConfigError(
        f"{src}: the meta phase's files differ from what add-meta writes ({hand}): edited by hand, "
        "or competition.yaml changed since; this run would write them again from its options and "
        "undo that. Make the change in the file instead, or --force writes them again (what this "
        "run's options do not name is kept).")


# ====================================================================== the steps
def _paths(bundle: str | os.PathLike[str], output: str | os.PathLike[str] | None,
           submission_rule: str | None) -> tuple[Path, Path | None, bool, bool]:
    """``(bundle, output, the bundle is a zip, the result is a zip)``, refused before
    anything is read when they cannot work (``output`` ``None`` when it is the bundle)."""
    if submission_rule is not None and submission_rule not in SUBMISSION_RULES:
        raise ConfigError(f"--submission-rule {submission_rule!r} is not one of "
                          f"{', '.join(SUBMISSION_RULES)}{did_you_mean(submission_rule, SUBMISSION_RULES)}.")
    src = Path(bundle)
    if not src.exists():
        raise InputError(f"{src}: no such bundle folder or zip file.")
    zipped = src.is_file()
    if zipped and not zipfile.is_zipfile(src):
        raise InputError(f"{src}: not a bundle folder or zip file.")
    out = Path(output) if output is not None else None
    zip_out = zipped if out is None else out.suffix.lower() == ".zip"
    if out is not None:
        if not zipped and zip_out:
            raise ConfigError(f"-o {out}: a bundle folder gives a folder; zip the result with "
                              "`metascore bundle zip`, which also fills the meta-scoring program.")
        if out.resolve() == src.resolve():
            out = None
        elif not zipped and out.resolve().is_relative_to(src.resolve()):
            raise InputError(f"-o {out}: inside the bundle {src}; choose a folder outside it.")
        elif out.exists() and not (out.is_dir() and not any(out.iterdir())) and not (zip_out and out.is_file()):
            raise InputError(f"-o {out}: already exists and is not an empty folder; choose a new path.")
    return src, out, zipped, zip_out


def _given_files(choices: MetaChoices, zipped: bool) -> None:
    """``--baseline FILE``: each a submission zip or folder, copied into a bundle folder's
    ``sample_submissions/``, which a zip bundle and a run with ``--submissions`` do not read."""
    for path in choices.baseline_files:
        if not (path.is_dir() or zipfile.is_zipfile(path)):
            raise InputError(f"--baseline {path}: not a submission zip or folder (nor an account "
                             "name: a name with no file of that name).")
    if choices.baseline_files and (zipped or choices.submissions is not None):
        where = ("the folder you give `bundle run --submissions`" if choices.submissions is not None
                 else "the folder of submissions `bundle run --submissions` will read (a zip bundle "
                 "carries none)")
        name = choices.baseline_files[0].name
        raise ConfigError(f"--baseline {choices.baseline_files[0]}: add-meta copies a baseline file into "
                          "the bundle folder's sample_submissions/, which this run does not use; put "
                          f"it in {where}, in the development phase's sub-folder, as baseline__{name}, "
                          "and give --baseline baseline.")


def _new_copies(root: Path, copies: dict[str, Path]) -> dict[str, Path]:
    """The copies to make: those not in the bundle yet (one there already, the same, is
    kept; another is refused)."""
    out = {}
    for rel, source in copies.items():
        there = root / rel
        if not os.path.lexists(there):
            out[rel] = source
        elif _tree_bytes(there) != _tree_bytes(source):
            raise ConfigError(f"{rel} already exists and is not {source}: move it away, or give "
                              "the baseline another file name.")
    return out


def _tree_bytes(path: Path) -> dict[str, bytes]:
    """Each file of a file or folder (by its path inside) and its content."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _readable(src: Path, zipped: bool, tmp: Path) -> Path:
    """The bundle folder to read (a zip extracted into ``tmp``), its links checked first:
    nothing is read or written through one that leaves the bundle."""
    root = src
    if zipped:
        root = tmp / "bundle"
        extract_bundle(src, root)
    refuse_bundle_links(root)
    refuse_writes(root, WRITTEN_FOLDERS, _WHAT)
    return root


@dataclass(frozen=True)
class _V1Form:
    """A v1 ``competition.yaml`` written in the v2 form, which can set the submission rule:
    ``root`` the bundle with the v2 file over it, ``text`` the v1 file kept beside it,
    ``platform_only``: the v1 bundle's meta phase is kept as it is (only the rule changes)."""

    root: Path
    text: str
    data: object
    computed: list[str]
    platform_only: bool

    def keep(self, editor: BundleEditor, files: dict[str, str]) -> None:
        """Keep the v1 file beside the v2 one in ``files``; say so, and what the v2 form
        leaves out, in ``editor``'s changes and notes."""
        files[V1_COPY_NAME] = self.text
        editor.changes.insert(0, f"~ competition.yaml: written in the v2 form, so that it can set the "
                                 f"leaderboard's submission_rule (a v1 file cannot); the v1 file is "
                                 f"kept as {V1_COPY_NAME}, which Codabench does not read"
                                 + (f"; computed column(s) {', '.join(self.computed)} left out (Codabench "
                                    "does not compute them: the v1 import leaves them empty)"
                                    if self.computed else "")
                                 + "; every other key as Codabench's v1 import maps it")
        unread, quiet = unread_keys(self.data)
        editor.notes[:0] = [key.rewrite_text() for key in unread] + (
            [f"not in the v2 form either, with nothing a participant depends on: {', '.join(quiet)}."]
            if quiet else [])


def _v1_form(root: Path, tmp: Path, choices: MetaChoices, end: str | None, image: str | None,
             submission_rule: str) -> _V1Form | None:
    """``root``'s v1 file in the v2 form (``None`` for a v2 bundle)."""
    v1_text = _v1_text(root)
    if v1_text is None:
        return None
    as_v1 = BundleEditor(root, tmp / "v1", choices, end=end, submission_rule=None, image=image)
    v1_files, _ = as_v1.plan(fill_program=False)
    refuse_writes(root, v1_files, _WHAT)
    v1_current = {rel: _read(root / rel) for rel in v1_files}
    platform_only = bool(as_v1.existing) and (
        all(v1_current[rel] == text for rel, text in v1_files.items())
        or _platform_only(as_v1, v1_files, v1_current, tmp / "v1", end, None, image))
    v1_data = read_yaml(root / "competition.yaml")
    v2_text, computed = v1_to_v2(v1_data, submission_rule=submission_rule)
    return _V1Form(_overlay(root, {"competition.yaml": v2_text}, tmp / "v2"), v1_text, v1_data,
                   computed, platform_only)


def _kind(src: Path, editor: BundleEditor, files: dict[str, str], current: dict[str, str | None],
          force: bool, platform_only: bool) -> str:
    """What this run does to the bundle (:attr:`AddMetaResult.kind`): ``added`` (no meta
    phase yet), ``updated`` (``platform_only``: the image, rule or end) or ``rewrote``;
    refused without ``force`` when it would rewrite a meta phase or overwrite a file."""
    if editor.existing:
        kind = "updated" if platform_only else "rewrote"
        if kind == "rewrote" and not force:
            raise ConfigError(
                f"{src}: already has a meta phase ({editor.existing}), and this run would write "
                f"it differently ({_difference(files, current)}); --force rewrites it with these options.")
        return kind
    clash = [rel for rel in files if rel != "competition.yaml" and current[rel] is not None
             and current[rel] != files[rel]]
    if clash and not force:
        raise ConfigError(f"{src}: {clash[0]} already exists and no meta phase uses it; move "
                          "it away, or --force overwrites it.")
    return "added"


def _difference(files: dict[str, str], current: dict[str, str | None], shown: int = 2) -> str:
    """What this run would change, in a few words: the files and their changed lines, the
    first ``shown`` of them that are not comments (``FILE line N: `old` -> `new```, cut)."""
    said, counts = [], {}
    for rel in sorted(files, key=lambda r: (r == "competition.yaml", r)):  # metascore.yaml first
        old, new = (current.get(rel) or "").splitlines(), files[rel].splitlines()
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            for n in range(0 if op == "equal" else max(i2 - i1, j2 - j1)):
                counts[rel] = counts.get(rel, 0) + 1
                before, after = (old[i1 + n] if i1 + n < i2 else ""), (new[j1 + n] if j1 + n < j2 else "")
                if len(said) < shown and not (before.lstrip() + after.lstrip()).startswith("#"):
                    said.append(f"{rel} line {min(i1 + n, i2) + 1}: {_cut(before)} -> {_cut(after)}")
    where = ", ".join(f"{rel}: {n} line(s)" for rel, n in counts.items())
    return f"{where}; " + "; ".join(said) if said else where


def _cut(line: str, width: int = 60) -> str:
    line = line.strip()
    return "nothing" if not line else f"`{line if len(line) <= width else line[:width - 3] + '...'}`"


def _check_result(src: Path, root: Path, files: dict[str, str], zipped: bool, tmp: Path,
                  submissions: Path | None, copies: dict[str, Path]) -> BundleReport:
    """``metascore bundle check`` on the bundle as it would be written (``files`` over
    ``root``: written into a zip's extraction, over links to a folder's entries, with links
    to the ``copies``); an error refuses the run, nothing written."""
    stage = root if zipped else _overlay(root, files, tmp / "stage", copies)
    if zipped:
        for rel, text in files.items():
            write_text(root / rel, text)
    report = full_check(stage, submissions=submissions,
                        outside_links=zipped)  # a folder's stage is links to the bundle
    if report.errors:
        first = report.errors[0].replace(str(stage), str(src))
        raise ConfigError(f"{src}: the bundle with the meta phase would not pass `metascore bundle "
                          f"check`: {first} ({len(report.errors)} error(s)); nothing written.")
    return report


def _write(result: AddMetaResult, root: Path, out: Path | None, files: dict[str, str], program: str | None,
           tmp: Path, image: str | None, meta_python: str | None, copies: dict[str, Path]) -> None:
    """Write the result: a zip (``program``: where the meta-scoring program is filled in, run
    as ``meta_python`` says for ``image``), the extracted zip (``root``) copied to a folder, a
    folder copied to ``out`` with ``files`` and ``copies``, or those written into the bundle
    folder."""
    src = result.bundle
    if result.zipped:
        _write_zip(src, result.target, files, program, tmp, meta_python_in(image, meta_python))
    elif root != src:  # a zip extracted, edited there
        _copy_tree(root, result.target)
    elif out is not None:
        _copy_tree(src, out, files, copies)
    else:
        _write_files(src, files, copies)


def _write_files(root: Path, files: dict[str, str], copies: dict[str, Path] | None = None) -> None:
    """Write ``files`` and the ``copies`` into the bundle folder ``root``, competition.yaml
    last, after checking again that none of them is written through a link that leaves it."""
    copies = copies or {}
    refuse_writes(root, [*files, *copies], _WHAT)
    for rel, source in copies.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, root / rel)
        else:
            shutil.copyfile(source, root / rel)
    for rel in sorted(files, key=lambda r: r == "competition.yaml"):
        write_text(root / rel, files[rel])


def _platform_only(editor: BundleEditor, files: dict[str, str], current: dict[str, str | None],
                   tmp: Path, end: str | None, rule: str | None, image: str | None) -> bool:
    """Whether this run changes an existing meta phase's bundle only by its image, submission
    rule or end date (the meta phase and metascore.yaml stay as they are)."""
    if any(current[rel] != text for rel, text in files.items() if rel != "competition.yaml"):
        return False
    other = BundleEditor(editor.root, tmp / "platform", editor.choices, end=end,
                         submission_rule=rule, image=image, check_links=editor.check_links)
    return other.platform_edits() == files["competition.yaml"]


def _v1_text(root: Path) -> str | None:
    """The text of ``root``'s competition.yaml when it is a v1 file, else ``None``."""
    data = read_yaml(root / "competition.yaml") if (root / "competition.yaml").is_file() else None
    if not isinstance(data, dict) or str(data.get("version", "1.5")) == "2":
        return None
    return (root / "competition.yaml").read_bytes().decode("utf-8", errors="replace")


def _read(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None


# ====================================================================== writing
def _overlay(root: Path, files: dict[str, str], stage: Path, copies: dict[str, Path] | None = None) -> Path:
    """A view of ``root`` with ``files`` written over it and links to the ``copies``: links
    to the bundle's own entries, real folders only on the way to a new file (for the check
    before writing anything)."""
    stage.mkdir()
    for entry in root.iterdir():
        (stage / entry.name).symlink_to(entry.resolve())
    for rel, text in {**files, **(copies or {})}.items():
        parts = PurePosixPath(rel).parts
        here = stage
        for part in parts[:-1]:
            here = here / part
            if here.is_symlink():
                target = here.resolve()
                here.unlink()
                here.mkdir()
                if target.is_dir():
                    for child in target.iterdir():
                        (here / child.name).symlink_to(child.resolve())
            here.mkdir(exist_ok=True)
        path = here / parts[-1]
        if path.is_symlink():
            path.unlink()
        if isinstance(text, Path):
            path.symlink_to(text.resolve())
        else:
            path.write_text(text, encoding="utf-8")
    return stage


def _copy_tree(src: Path, dest: Path, files: dict[str, str] | None = None,
               copies: dict[str, Path] | None = None) -> None:
    """Copy the folder ``src`` to ``dest`` (absent or empty) under a temporary name with
    ``files`` written into it (:func:`_write_files`: a link copied as it is may lead out of
    the copy, e.g. an absolute link back into ``src``), then rename."""
    tmp = dest.with_name(f".{dest.name}.add-meta-tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    with new_folder(dest, tmp):
        shutil.copytree(src, tmp, symlinks=True)
        _write_files(tmp, files or {}, copies)


def _tokens(names: list[str]) -> dict[str, str]:
    """A new competition token file beside each ``metascore.yaml`` among ``names``."""
    folders = {PurePosixPath(n.replace("\\", "/")).parent for n in names
               if PurePosixPath(n.replace("\\", "/")).name == CONFIG_NAME}
    return {(f / COMPETITION_FILE).as_posix().removeprefix("./"): token_text(new_token()) for f in sorted(folders)}


def _write_zip(src: Path, dest: Path, files: dict[str, str], program: str | None, tmp: Path,
               meta_python: str | None = None) -> None:
    """``dest``: the members of the zip ``src`` with ``files`` replaced or added, and the
    meta-scoring program (assembled) under ``program`` when given, with a new competition token
    beside each ``metascore.yaml`` (as ``bundle zip`` writes them); written, then renamed."""
    prefix = program.rstrip("/") + "/" if program else None
    extra: dict[str, Path] = {}
    if prefix:
        built = assemble_meta_program(tmp / "program", python=meta_python)
        extra = {prefix + p.relative_to(built).as_posix(): p for p in sorted(built.rglob("*")) if p.is_file()}
    with replacing(dest) as part, zipfile.ZipFile(src) as zin, \
            zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zout:
        if prefix:
            files = {**files, **_tokens([*zin.namelist(), *files])}
        for info in zin.infolist():
            name = "/".join(PurePosixPath(info.filename.replace("\\", "/")).parts)
            if name in files or (prefix and (name + "/").startswith(prefix)):
                continue
            with zin.open(info) as a, zout.open(info, "w") as b:
                shutil.copyfileobj(a, b)
        for rel, text in files.items():
            zout.writestr(rel, text.encode("utf-8"))
        for rel, path in extra.items():
            zout.write(path, rel)
