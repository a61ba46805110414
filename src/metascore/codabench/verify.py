"""``metascore codabench verify``: the published winner, checked from what anyone can read.

With no token (an anonymous visitor) or a participant's, it reads only what the site shows
everyone, never a results export, reference data or a program:

1. ``GET /api/competitions/<id>/``: the phases, the leaderboards' columns, and the "Final
   ranking" page, whose section written by ``metascore codabench publish`` links the meta
   submission's ranking page (:func:`published_section`);
2. ``GET /api/submissions/<sub>/get_detail_result/`` and the address it gives: the ranking
   page, ``detailed_results.html``, with its record (:mod:`metascore.render.ranking_record`);
3. ``GET /api/phases/<pid>/get_leaderboard/`` of each phase the record ranks: the public
   leaderboard, each score rounded to its column's precision, hidden columns left out.

It builds from those leaderboards the scoring-output tree ``codabench pull`` would write
(:func:`public_tree`, with pull's own pieces), recomputes the ranking with the configuration
the page publishes (in a temporary folder, removed after), and compares
(:func:`metascore.verify.compare.compare`), as well as the "Final ranking" page's table with the
ranking page. A row of the leaderboard is matched to the ranking's by its submission id, or,
where a multi-task phase shows a task's submission instead of the one ranked, by its owner.
A value of the page that rounds to what the leaderboard shows is taken as the page gives it
(the leaderboard shows fewer decimals); one that does not is a changed score.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bundle.meta.ranking_page import PAGE_TITLE
from ..config import judge_key
from ..leaderboard import Leaderboard
from ..program import recompute
from ..readers.configured import InputConfig
from ..readers.tree import MANIFEST
from ..submission_order import split_submission_key
from ..verify.compare import compare
from ..verify.record import PublishedBoard, PublishedRow, Record, counted_hidden, read_record, recompute_config
from .api import (CompetitionInfo, ExportRow, LeaderboardInfo, PhaseInfo, PublicBoard, PublicRow, parse_competition,
                  parse_leaderboard)
from .client import Client, PlatformError
from .publish import MARK_END, MARK_START
from .pull import (PROVENANCE_NAME, find_phase, manifest_csv, phase_provenance, scores_files,
                   submission_folder, task_folders, write)

__all__ = ["Checked", "verify_site", "published_section", "public_tree", "match_rows", "page_table_differences"]

SOURCE = "the public leaderboard"
Log = Callable[[str], None]
_LINK = re.compile(r"/competitions/(\d+)/detailed_results/(\d+)/")


@dataclass
class Checked:
    """What ``verify`` found: the record, the recomputed leaderboard, the differences and
    what it could not check."""

    record: Record
    leaderboard: Leaderboard | None
    differences: list[str]
    notes: list[str] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)  # why the ranking could not be recomputed


def verify_site(client: Client, competition_id: int, sub_id: int | None = None, *,
                log: Log = print) -> Checked:
    """Check competition ``competition_id``'s published final ranking (``sub_id``: that meta
    submission's ranking page instead of the one the "Final ranking" page links)."""
    what = f"competition {competition_id}"
    detail = client.get_json(f"/api/competitions/{competition_id}/", what=what)
    comp = parse_competition(detail, what)
    section = published_section(detail)
    if sub_id is None:
        if section is None:
            raise PlatformError(f"competition {comp.id}'s {PAGE_TITLE!r} page publishes no final ranking "
                                "(no section written by `metascore codabench publish`); give the meta "
                                "submission's id with --submission to check its ranking page.")
        sub_id = _linked_submission(section, comp.id)
    record = read_record(_ranking_page(client, sub_id), f"the ranking page of submission {sub_id}")
    log(f"[*] {what}: the ranking page of submission {sub_id} ranks phase {record.final.phase!r} by "
        f"{record.config.get('ranking', {}).get('method')}")
    export = record.export or {}
    if export.get("competition") not in (None, comp.id):
        raise PlatformError(f"the ranking page of submission {sub_id} was made from an export of "
                            f"competition {export.get('competition')}, not {comp.id}.")
    hidden = counted_hidden(record)
    if hidden:
        return Checked(record, None, [], cannot=[
            f"the ranking counts judges {hidden}, on columns the competition hides: the page does not "
            "publish their values and the leaderboard does not show them, so the ranking cannot be "
            "recomputed from public data (only the organizers can check it)"])
    boards = {b.phase: _public_board(client, comp, b.phase) for b in record.boards}
    files, notes = public_tree(comp, record, boards)
    with tempfile.TemporaryDirectory(prefix="metascore-verify-") as tmp:
        write(files, Path(tmp))
        lb = recompute(recompute_config(record, InputConfig("tree", ".")), tmp)
    differences = compare(record, lb, SOURCE)
    if section is not None and _LINK.search(section) and _linked_submission(section, comp.id) == sub_id:
        differences += page_table_differences(section, record)
    return Checked(record, lb, differences, notes)


# ---------------------------------------------------------------------- the published pages
def published_section(detail: Mapping[str, Any]) -> str | None:
    """The text between ``publish``'s markers on the "Final ranking" page (else on any page)."""
    pages = [p for p in detail.get("pages") or () if isinstance(p, dict)]
    pages.sort(key=lambda p: p.get("title") != PAGE_TITLE)
    for page in pages:
        text = str(page.get("content") or "")
        start, end = text.find(MARK_START), text.find(MARK_END)
        if start != -1 and end > start:
            return text[start + len(MARK_START):end]
    return None


def _linked_submission(section: str, competition_id: int) -> int:
    match = _LINK.search(section)
    if match is None or int(match.group(1)) != competition_id:
        raise PlatformError(f"the {PAGE_TITLE!r} page of competition {competition_id} links no ranking "
                            "page of this competition; give the meta submission's id with --submission.")
    return int(match.group(2))


def _ranking_page(client: Client, sub_id: int) -> str:
    """The text of submission ``sub_id``'s detailed results (its ranking page)."""
    what = f"the detailed results of submission {sub_id}"
    try:
        url = client.get_json(f"/api/submissions/{sub_id}/get_detail_result/", what=what)
    except PlatformError as exc:
        if exc.status not in (403, 404):
            raise
        raise PlatformError(f"{what}: the site does not show them to this visitor (HTTP {exc.status}: "
                            "detailed results disabled, or a competition that is not published, whose "
                            "pages only its participants see: give a participant's token).", exc.status) from None
    if not isinstance(url, str) or not url:
        raise PlatformError(f"{what}: the site gives no page (did the submission finish?).")
    try:
        return client.download(url, what).decode("utf-8")
    except UnicodeDecodeError:
        raise PlatformError(f"{what} are not UTF-8 text, so not a metascore ranking page.") from None


_TABLE_ROW = re.compile(r"^\|\s*(\d+)\s*\|((?:[^|\\\n]|\\.)*)\|", re.M)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def page_table_differences(section: str, record: Record) -> list[str]:
    """Where the "Final ranking" page's table (position, participant) disagrees with the
    ranking page's final board."""
    shown = [(int(p), " ".join(html.unescape(_ESCAPED.sub(r"\1", name)).split()))
             for p, name in _TABLE_ROW.findall(section)]
    ranked = [r for r in record.final.rows if r.position is not None]
    lines = []
    for (position, name), row in zip(shown, ranked):
        names = {row.candidate, row.participant or row.candidate}
        if position != row.position or not any(name == n or name.startswith(f"{n} ") for n in names):
            lines.append(f"the {PAGE_TITLE!r} page lists {name!r} at position {position}, the ranking page "
                         f"{row.participant or row.candidate!r} at position {row.position}")
    if len(shown) > len(ranked):
        lines.append(f"the {PAGE_TITLE!r} page lists {len(shown)} ranked participants, the ranking page "
                     f"{len(ranked)}")
    return lines


# ---------------------------------------------------------------------- the public leaderboards
_Shown = tuple[PhaseInfo, LeaderboardInfo, PublicBoard]  # a phase, its leaderboard, what anyone sees of it


def _public_board(client: Client, comp: CompetitionInfo, phase_name: str) -> _Shown:
    phase = find_phase(comp, phase_name)
    what = f"the public leaderboard of phase {phase.name!r} (id {phase.id})"
    public = parse_leaderboard(client.get_json(f"/api/phases/{phase.id}/get_leaderboard/", what=what), what)
    board = next((b for b in comp.leaderboards if b.title == public.title), None)
    if board is None:
        raise PlatformError(f"{what}: its leaderboard {public.title!r} is hidden from this visitor (a "
                            "blind phase), so the ranking cannot be checked from public data.")
    return phase, board, public


def public_tree(comp: CompetitionInfo, record: Record,
                boards: Mapping[str, _Shown]) -> tuple[dict[str, str], list[str]]:
    """The files ``codabench pull`` would write from the public leaderboards (scores,
    ``submissions.csv``, ``codabench.json``), and what could not be checked."""
    files: dict[str, str] = {}
    manifest: list[tuple[str, str, str, str | None]] = []
    flags: list[bool] = []
    provenance = []
    notes: list[str] = []
    for published in record.boards:
        phase, board, public = boards[published.phase]
        folders = task_folders(phase)
        matched = match_rows(published, public)
        if len(phase.tasks) > 1:
            notes.append(f"phase {phase.name!r} has {len(phase.tasks)} tasks: its leaderboard shows each "
                         "task's submission, not the one ranked, so rows were matched by their owner and "
                         "the submission times are the page's")
        for row, candidate, mine in matched:
            participant = mine.participant if mine is not None and mine.participant else _owner(candidate, row)
            own = mine is None or mine.submission in (None, row.id)
            folder = candidate if mine is not None else submission_folder(candidate)  # as pull names it
            manifest.append((phase.name, folder, participant,
                             row.created_when if own or mine is None else mine.submitted_at))
            flags.append(_baseline(published, candidate, mine))
            scores = _values(row, mine, published, folders, public.precision)
            files.update(scores_files(phase, ExportRow(candidate, participant, row.id, scores), board, folders,
                                      folder))
        provenance.append(phase_provenance(phase, board, folders, "", len(matched)))
        if not published.values_published:
            notes.append(f"the page does not publish the judges' values of phase {phase.name!r} (too many "
                         "to print): the leaderboard's values, rounded to each column's precision, were used")
    files[MANIFEST] = manifest_csv(manifest, flags)
    files[PROVENANCE_NAME] = json.dumps({"competition": {"id": comp.id, "title": comp.title},
                                         "phases": provenance}, indent=2) + "\n"
    notes.append("each value the page gives was checked against the leaderboard to the column's "
                 "precision (the leaderboard shows it rounded) and used as the page gives it where they agree")
    return files, notes


def match_rows(published: PublishedBoard, public: PublicBoard) -> list[tuple[PublicRow, str, PublishedRow | None]]:
    """Each public row (in order) with its candidate: the published row with one of its
    submission ids, else the one published row of its owner (a multi-task phase shows a
    task's submission), else a candidate the page does not know (``<owner>-<id>``)."""
    by_id: dict[int, tuple[str, PublishedRow | None]] = {}
    for r in published.rows:
        if r.submission is not None:
            by_id[r.submission] = (r.candidate, r)
    for c in published.not_selected:
        parts = split_submission_key(c)
        if parts is not None:
            by_id.setdefault(parts[1], (c, None))
    found: dict[int, tuple[str, PublishedRow | None]] = {}
    for n, row in enumerate(public.rows):
        hit = next((by_id[i] for i in row.ids if i in by_id), None)
        if hit is not None:
            found[n] = hit
    taken = {c for c, _ in found.values()}
    left = [r for r in published.rows if r.candidate not in taken]
    for n, row in enumerate(public.rows):
        if n in found:
            continue
        mine = [r for r in left if row.owner in (r.participant, r.owner)]
        same = [p for k, p in enumerate(public.rows) if k not in found and p.owner == row.owner]
        if len(mine) == 1 and len(same) == 1:
            found[n] = (mine[0].candidate, mine[0])
            left.remove(mine[0])
    out = []
    for n, row in enumerate(public.rows):
        candidate, mine = found.get(n, (f"{row.owner}-{row.id}", None))
        out.append((row, candidate, mine))
    return out


def _owner(candidate: str, row: PublicRow) -> str:
    parts = split_submission_key(candidate)
    return parts[0] if parts is not None else row.owner


def _baseline(published: PublishedBoard, candidate: str, mine: PublishedRow | None) -> bool:
    """A published row's flag; a submission not selected is a baseline when its owner's
    selected one is."""
    if mine is not None:
        return mine.baseline
    parts = split_submission_key(candidate)
    return parts is not None and any(r.baseline and r.owner == parts[0] for r in published.rows)


def _values(row: PublicRow, mine: PublishedRow | None, published: PublishedBoard,
            folders: Mapping[int, str], precision: Mapping[str, int]) -> dict[tuple[int, str], float]:
    """The row's scores: the page's value where it rounds to the one shown (the leaderboard
    shows ``round(value, precision)``), else the one shown."""
    out = {}
    given = mine.values if mine is not None and mine.values is not None else {}
    for (task, key), shown in row.scores.items():
        value = given.get(judge_key(folders[task], key)) if task in folders else None
        digits = precision.get(key)
        agree = value is not None and digits is not None and round(value, digits) == shown
        out[(task, key)] = value if agree and value is not None else shown
    return out
