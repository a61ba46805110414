"""``metascore codabench publish``: the final ranking where participants look first.

The meta phase's leaderboard holds one row, the organizer's, with Codabench's gold medal and
the meta-scoring program's numbers: read alone, it says that the organizer won. After the
meta submission finishes, ``metascore codabench submit`` (and ``publish``, to do it again)
puts the outcome where participants look, through the competition API as the organizer:

1. ``GET /api/submissions/<id>/get_details/`` and its ``scoring_result`` zip: the
   ``leaderboard.json`` the meta-scoring program wrote on the site (:func:`outcome_of`);
2. the competition's "Final ranking" page (``PATCH /api/competitions/<id>/`` with every page
   and the whitelist, which the site's update replaces whole): the winner, the top of the
   final board, how many were ranked and excluded, by which rule, and the link to the whole
   ranking, between two markers at the top of the page, replaced on each publish
   (:func:`page_section`); the page is added when the competition has none;
3. the meta task's name (``PATCH /api/tasks/<id>/`` with its data keys, which the site's
   update would otherwise clear): the Results tab shows it above the meta phase's columns,
   so the row reads under "Final ranking: alice wins" (:func:`task_title`). Only the task's
   creator may rename it; a refusal is reported and the page still written.

Every name, phase name and rule text goes to the page through
:func:`~metascore.bundle.platform.page_text.page_text` and to the task's name through
:func:`~metascore.bundle.platform.page_text.plain_name`: a participant's display name is
theirs to choose, and the page is rendered as Markdown with no sanitizer.

Codabench offers no other place on the row: the owner is the submitter's account, the
columns are numbers shared by every phase, and a column's ``precision`` cannot make a count
read as an integer (the site sends ``str(round(float(score), precision))``, ``3.0`` for
precision 0).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..bundle.meta.ranking_page import PAGE_TITLE
from ..bundle.platform.page_text import page_text, plain_name
from ..errors import InputError
from ..method_spec import Display
from ..registry import get_ranking_method
from ..render.report_labels import JUDGES_NAMED, judge_labels, judges_in_words
from .api import CompetitionInfo, PhaseInfo, parse_submissions
from .client import Client, PlatformError

__all__ = ["Outcome", "outcome_of", "page_section", "with_section", "task_title", "publish",
           "MARK_START", "MARK_END"]

MARK_START = "<!-- metascore: the final ranking, written by `metascore codabench publish` -->"
MARK_END = "<!-- metascore: end of the final ranking -->"
#: Ranked participants the page lists (the whole ranking is one click away).
TOP = 10
Log = Callable[[str], None]


@dataclass(frozen=True)
class Outcome:
    """What the final board says, in the participants' names."""

    winners: tuple[str, ...]
    top: tuple[tuple[int, str, float | None], ...]  # (position, participant, score)
    n_ranked: int
    n_excluded: int
    method: str
    phase: str
    rule: str  # who is ranked: the filter, and the phase and judges that decide it
    judges: str = ""  # the judges that rank ("1 judge (Accuracy on Final Task) of phase Final only")


def _name(row: Mapping[str, Any]) -> str:
    return str(row.get("participant") or row.get("candidate"))


def outcome_of(board: Mapping[str, Any]) -> Outcome:
    """The outcome of a ``leaderboard.json`` the meta-scoring program wrote."""
    try:
        final = board["final"]
        rows = final["rows"]
        method = str(board["signature"]["method"])
        phase = str(final["phase"])
    except (KeyError, TypeError):
        raise InputError("the meta submission's leaderboard.json has no final board (was it "
                         "written by metascore's meta-scoring program?).") from None
    ranked = [r for r in rows if r.get("position") is not None]
    excluded = [r for r in rows if r.get("position") is None and not r.get("is_baseline")]
    winners = tuple(_name(r) for r in ranked if r["position"] == 1)
    top = tuple((int(r["position"]), _name(r), r.get("score")) for r in ranked[:TOP])
    only = " only" if board.get("development") else ""  # the development phase only qualifies
    return Outcome(winners, top, len(ranked), len(excluded), method, phase, _rule(board),
                   f"{_judges(board, final)} of phase {phase}{only}")


def _judges(board: Mapping[str, Any], part: Mapping[str, Any]) -> str:
    """The judges of a board of ``leaderboard.json`` in words; beyond ``output.judge_columns``
    the file names none, only their number."""
    judges = part.get("judges")
    if not isinstance(judges, list):
        n = (part.get("per_judge") or {}).get("n_judges")
        return f"{n} judges" if n else "its judges"
    keys, weights = [str(j["key"]) for j in judges], [float(j.get("weight", 1)) for j in judges]
    named = [k for k, w in zip(keys, weights) if w != 0][:JUDGES_NAMED]
    titles = (board.get("input") or {}).get("column_titles")
    return judges_in_words(keys, weights, judge_labels(named, (board.get("config") or {}).get("judges"), titles))


def _rule(board: Mapping[str, Any]) -> str:
    filt = board.get("filter") or {}
    dev = board.get("development") or {}
    if not dev:  # one phase: the filter ranks it on the ranking's judges
        where = f" in phase {(board.get('final') or {}).get('phase')}"
    else:
        same = dev.get("judges") == (board.get("final") or {}).get("judges")
        where = f" in phase {dev.get('phase')}, on {'the same judges' if same else 'its ' + _judges(board, dev)},"
    names = ", ".join(str(b.get("participant") or b.get("candidate")) for b in filt.get("baselines") or [])
    if filt.get("rule") == "beat_baseline":
        which = "every baseline" if filt.get("beat", "all") == "all" else "a baseline"
        return f"only those who beat {which}{f' ({names})' if names else ''}{where} are ranked"
    if filt.get("rule") == "top_k":
        return f"only the {filt.get('k') or filt.get('k_estimate') or 'k'} best{where} are ranked"
    return "every participant is ranked"


def _and(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def winner_headline(outcome: Outcome, name: Callable[[str], str] = plain_name) -> str:
    """``alice wins`` / ``alice and carol share first place`` / ``nobody is ranked``, each
    participant's name written by ``name`` (by default on one line, without control
    characters: for a terminal and a task's name)."""
    if not outcome.winners:
        return "nobody is ranked"
    if len(outcome.winners) == 1:
        return f"{name(outcome.winners[0])} wins"
    return f"{_and(tuple(map(name, outcome.winners)))} share first place"


def task_title(outcome: Outcome) -> str:
    """The meta task's name on the Results tab (at most 256 characters, the site's limit),
    names as :func:`~metascore.bundle.platform.page_text.plain_name` writes them."""
    text = (f"{PAGE_TITLE}: {winner_headline(outcome)} ({outcome.n_ranked} ranked by "
            f"{plain_name(outcome.method.replace('_', ' '))}; see the {PAGE_TITLE!r} page)")
    return text if len(text) <= 256 else text[:253] + "..."


def page_section(outcome: Outcome, link: str, sub_id: int, when: str, *, eye_icon: bool = True) -> str:
    """The Markdown at the top of the "Final ranking" page, between the markers (``eye_icon``:
    whether the leaderboards show the eye icon that opens the same ranking): every text of
    the board written by :func:`_md`."""
    headline = winner_headline(outcome, _md)
    method = f"{_md(outcome.method.replace('_', ' '))} ({_code(outcome.method)})"
    lines = [MARK_START, "", f"## Result: {headline}", ""]
    if outcome.winners:
        lines.append(f"The final ranking of phase **{_md(outcome.phase)}**, by {method}: **{headline}**.")
    judges = f" on {_md(outcome.judges)}" if outcome.judges else ""
    lines += ["", f"- **Ranked**: {outcome.n_ranked} participant(s), by {_md(outcome.method.replace('_', ' '))}"
              f"{judges}.", f"- **Who is ranked**: {_md(outcome.rule)}.",
              f"- **Not ranked**: {outcome.n_excluded} participant(s) (baselines aside); the full "
              "ranking says why each one is left out.", ""]
    if outcome.top:
        shown = _display(outcome.method)
        lines += [f"| position | participant | {_md(shown.label)} ({_md(shown.direction)}) |", "|---|---|---|"]
        lines += [f"| {p} | {_md(n)} | {'' if s is None else shown.short(s)} |" for p, n, s in outcome.top]
        if outcome.n_ranked > len(outcome.top):
            lines.append(f"| ... | {outcome.n_ranked - len(outcome.top)} more | |")
        lines.append("")
    also = f" (also behind the eye icon of the {_md(PAGE_TITLE)} row on the Results tab)" if eye_icon else ""
    lines += [f"**[The full final ranking]({link})**: every participant, their position and score, "
              f"and why each one is or is not ranked{also}.", "",
              f"Published {when} from the organizers' submission {sub_id}.", "", MARK_END, ""]
    return "\n".join(lines)


def with_section(content: str | None, section: str) -> str:
    """``content`` with ``section`` in place of the one between the markers, or first."""
    text = content or ""
    start, end = text.find(MARK_START), text.find(MARK_END)
    if start != -1 and end > start:
        return text[:start] + section + text[end + len(MARK_END):].lstrip("\n")
    return section + "\n" + text


def _display(method: str) -> Display:
    """How people read the method's score (its natural value: an average rank, not its
    negation); the plain score for a method this version does not know."""
    try:
        return get_ranking_method(method).display
    except ValueError:
        return Display()


def _md(text: object) -> str:
    """Text of the board as the page shows it, never as Markdown or HTML."""
    return page_text(text)


def _code(name: str) -> str:
    """A method's name as code when it is one word, else as :func:`_md` text."""
    return f"`{name}`" if re.fullmatch(r"[A-Za-z0-9_]+", name) else _md(name)


# ---------------------------------------------------------------------- the site
def published_submission(client: Client, comp: CompetitionInfo, phase: PhaseInfo, sub_id: int | None = None,
                         *, log: Log = print) -> tuple[int, dict[str, Any]]:
    """The meta submission to publish and its ``leaderboard.json``: an organizer's (the
    competition's creator or a collaborator) Finished submission whose export was signed for
    this competition's meta phase, the newest pulled of them (``sub_id``: that one, refused
    unless it is such a submission and the newest). A participant who replays a signed export
    gets a Finished submission too, but never the published result."""
    what = f"submissions of phase {phase.name!r}"
    subs = parse_submissions(client.get_json("/api/submissions/", {"phase": phase.id}, what=what), what)
    if not comp.organizers:
        raise PlatformError(f"the site does not say who organizes competition {comp.id} (no created_by), "
                            "so an organizer's submission cannot be told from a participant's; nothing "
                            "is published.")
    who = ", ".join(sorted(comp.organizers))
    if sub_id is not None and sub_id not in subs:
        raise PlatformError(f"submission {sub_id} is not a submission of phase {phase.name!r} of "
                            f"competition {comp.id}; nothing is published.")
    if sub_id is not None and subs[sub_id].owner not in comp.organizers:
        raise PlatformError(f"submission {sub_id} was made by {subs[sub_id].owner!r}, not by an organizer "
                            f"of competition {comp.id} ({who}): only the organizers' own results "
                            "export is published.")
    mine = sorted((s for s in subs.values() if s.status == "Finished" and s.parent is None
                   and s.owner in comp.organizers), key=lambda s: s.id, reverse=True)
    others = sum(s.status == "Finished" and s.owner not in comp.organizers for s in subs.values())
    if others:
        log(f"[*] {others} Finished submission(s) of phase {phase.name!r} made by participants are "
            "not published (only an organizer's are)")
    if not mine:
        raise PlatformError(f"phase {phase.name!r} has no Finished submission made by an organizer "
                            f"({who}) to publish; submit the results export first (`metascore "
                            "codabench submit`).")
    boards = {s.id: fetch_board(client, s.id) for s in mine}
    for sid, board in boards.items():
        _check_binding(board, comp, phase, sid)
    newest = max(boards, key=lambda sid: (_moment(boards[sid]), sid))
    if sub_id is None:
        return newest, boards[newest]
    if subs[sub_id].status != "Finished" or sub_id not in boards:
        raise PlatformError(f"submission {sub_id} is {subs[sub_id].status or 'not Finished'}; only a "
                            "Finished one is published.")
    if sub_id != newest and _moment(boards[newest]) > _moment(boards[sub_id]):
        raise PlatformError(f"submission {sub_id}'s export was pulled at {_moment(boards[sub_id])[0]}, "
                            f"and submission {newest}'s at {_moment(boards[newest])[0]}: only the "
                            f"newest becomes the published result; publish {newest}.")
    return sub_id, boards[sub_id]


def _export(board: Mapping[str, Any]) -> Mapping[str, Any]:
    export = (board.get("input") or {}).get("export") if isinstance(board.get("input"), dict) else None
    return export if isinstance(export, dict) else {}


def _moment(board: Mapping[str, Any]) -> tuple[str, str]:
    """When the export was pulled and signed, as its ``leaderboard.json`` records (ISO 8601 in
    UTC, so comparable as text)."""
    export = _export(board)
    return str(export.get("pulled_at") or ""), str(export.get("signed_at") or "")


def _check_binding(board: Mapping[str, Any], comp: CompetitionInfo, phase: PhaseInfo, sub_id: int) -> None:
    """Refuse a board whose export was signed for another competition or phase."""
    export = _export(board)
    if export.get("competition") != comp.id or export.get("phase_id") != phase.id:
        signed = (f"competition {export.get('competition')}'s phase {export.get('phase')!r} (id "
                  f"{export.get('phase_id')})" if export else "no competition (its leaderboard.json "
                  "does not say)")
        raise PlatformError(f"submission {sub_id}'s results export was signed for {signed}, not for "
                            f"competition {comp.id}'s phase {phase.name!r} (id {phase.id}); nothing is "
                            "published.")


def fetch_board(client: Client, sub_id: int) -> dict[str, Any]:
    """The ``leaderboard.json`` of the submission's scoring output."""
    what = f"the files of submission {sub_id}"
    details = client.get_json(f"/api/submissions/{sub_id}/get_details/", what=what)
    url = details.get("scoring_result") if isinstance(details, dict) else None
    if not isinstance(url, str) or not url:
        raise PlatformError(f"{what}: the site gives no scoring output (is it Finished?).")
    data = client.download(url, f"the scoring output of submission {sub_id}")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            name = next(n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "leaderboard.json")
            return json.loads(archive.read(name).decode("utf-8"))
    except (zipfile.BadZipFile, StopIteration, ValueError, UnicodeDecodeError):
        raise PlatformError(f"the scoring output of submission {sub_id} holds no readable "
                            "leaderboard.json (was it scored by metascore's meta-scoring program?).") from None


def publish(client: Client, comp: CompetitionInfo, phase: PhaseInfo, sub_id: int | None = None, *,
            log: Log = print, now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.timezone.utc)) -> Outcome:
    """Write the outcome of the meta submission ``sub_id`` (default: the organizers' newest,
    :func:`published_submission`) to the "Final ranking" page and the meta task's name."""
    sub_id, board = published_submission(client, comp, phase, sub_id, log=log)
    outcome = outcome_of(board)
    link = f"{client.site}/competitions/{comp.id}/detailed_results/{sub_id}/"
    what = f"competition {comp.id}"
    detail = client.get_json(f"/api/competitions/{comp.id}/", what=what)
    eye = (bool(detail.get("enable_detailed_results"))
           and detail.get("show_detailed_results_in_leaderboard", True) is not False)
    section = page_section(outcome, link, sub_id, now().strftime("%Y-%m-%d %H:%M UTC"), eye_icon=eye)
    pages = [{k: p.get(k) for k in ("id", "title", "content", "index")} for p in detail.get("pages") or []]
    page = next((p for p in pages if p["title"] == PAGE_TITLE), None)
    if page is None:
        page = {"title": PAGE_TITLE, "content": "", "index": max((p["index"] for p in pages), default=-1) + 1}
        pages.append(page)
    page["content"] = with_section(page["content"], section)
    body = {"pages": pages, "whitelist_emails": detail.get("whitelist_emails") or []}
    client.send_json("PATCH", f"/api/competitions/{comp.id}/", body,
                     what=f"writing the {PAGE_TITLE!r} page of {what}")
    log(f"[*] the {PAGE_TITLE!r} page now opens with the result: {winner_headline(outcome)} ({outcome.n_ranked} "
        f"ranked, {outcome.n_excluded} not ranked)")
    for task in phase.tasks:
        _rename(client, task.id, task_title(outcome), log)
    return outcome


def _rename(client: Client, task_id: int, name: str, log: Log) -> None:
    what = f"task {task_id}"
    try:
        task = client.get_json(f"/api/tasks/{task_id}/", what=what)
        body: dict[str, Any] = {"name": name}
        for field in ("input_data", "ingestion_program", "reference_data", "scoring_program"):
            value = task.get(field) if isinstance(task, dict) else None
            body[field] = value.get("key") if isinstance(value, dict) else value
        client.send_json("PATCH", f"/api/tasks/{task_id}/", body, what=f"renaming {what}")
    except PlatformError as exc:
        log(f"[!] the Results tab keeps the meta task's name: {exc} (only the account that uploaded "
            "the bundle may rename its tasks)")
        return
    log(f"[*] the Results tab shows the task as {name!r}")
