"""``metascore codabench submit``: send pulled results to the meta phase and wait.

The request sequence is the one Codabench's own upload form makes
(``src/static/riot/competitions/detail/submission_upload.tag`` and ``client.js``):

1. ``GET  /api/competitions/<cid>/``: the meta phase's id, its tasks and the queue; the meta
   tasks' competition token (``GET /api/tasks/<id>/`` and its reference data), which the
   signature names;
2. ``POST /api/datasets/`` ``{type: submission, competition, request_sassy_file_name,
   file_name, file_size}`` -> ``{key, sassy_url}``;
3. ``PUT  <sassy_url>``: the zip itself, to the signed storage URL (no API token);
4. ``PUT  /api/datasets/completed/<key>/``;
5. ``POST /api/submissions/`` ``{data: <key>, phase, fact_sheet_answers, tasks,
   organization, queue}`` -> the submission's ``id``;
6. ``GET  /api/submissions/<id>/`` until its status is Finished, Failed or Cancelled;
7. once Finished, ``GET /api/submissions/<id>/`` again until its scores are complete: the
   compute worker sets Finished *before* it posts the scores (``compute_worker.py``:
   ``_update_status(STATUS_FINISHED)`` in ``start``, then ``push_scores``), and the site
   stores them one column at a time (``upload_submission_scores``), so a Finished
   submission can show none or some of them. The scores are complete when every column
   the meta-scoring program writes (``output.scores`` of the folder's ``metascore.yaml``
   that is a column of the competition's leaderboard) is there, or when two reads in a row
   give the same non-empty scores (a statistic the program leaves out is never posted);
   after ``scores_wait`` seconds the scores read last are printed with what is missing;
8. under the ``Add`` rules, ``POST /api/submissions/<id>/submission_leaderboard_connection/``
   (the "add to leaderboard" click): no submission reaches a leaderboard without it, so
   participants would see no Final ranking row, hence no link to the ranking page;
9. the outcome where participants look first (:func:`metascore.codabench.publish.publish`):
   the competition's "Final ranking" page and the meta task's name.

The zip carries the organizer's signature (``metascore.sig``, :mod:`metascore.signature`),
made with the organizer's key on this machine (``key``) for this competition's meta phase and
the moment the folder was pulled (:mod:`metascore.codabench.signing`): the meta-scoring
program ranks nothing else, so a participant's upload to the meta phase ends Failed, and so
does an export signed for another competition or pulled before the phases closed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ..config import load_config
from ..errors import InputError
from ..bundle.platform.leaderboard_rules import MANUAL_RULES
from . import SCORES_WAIT
from .api import TERMINAL_STATUSES, CompetitionInfo, PhaseInfo, SubmissionInfo, parse_dataset, parse_submission
from .client import Client, PlatformError
from ..config import CONFIG_NAME
from ..bundle.meta.ranking_page import PAGE_TITLE
from .pull import fetch_competition, find_phase
from .publish import publish
from ..signature.binding import Binding
from ..signature import OrganizerKey, organizer_key
from .signing import binding_for, bundle_tokens, signed_zip, site_tokens

__all__ = ["ZIP_NAME", "SCORES_POLL", "expected_scores", "submit"]

ZIP_NAME = "metascore_results.zip"
#: Seconds between the reads of a Finished submission's scores (at most the poll interval).
SCORES_POLL = 2.0
Log = Callable[[str], None]


def expected_scores(folder: Path, comp: CompetitionInfo) -> frozenset[str] | None:
    """The score keys the meta-scoring program will post: ``output.scores`` of the folder's
    ``metascore.yaml`` that are (not computed) columns of the competition's leaderboards.
    ``None`` when the folder has no readable configuration (then only the scores' settling
    says they are complete)."""
    try:
        keys = set(load_config(folder / CONFIG_NAME).scores)
    except (InputError, ValueError):
        return None
    columns = {c.key for board in comp.leaderboards for c in board.columns if not c.computation}
    return frozenset(keys & columns) if comp.leaderboards else frozenset(keys)


def submit(
    client: Client,
    competition_id: int,
    phase_name: str,
    folder: Path,
    *,
    dry_run: bool = False,
    key: OrganizerKey | None = None,
    bundle: Path | None = None,
    poll_interval: float = 10.0,
    max_wait: float = 3600.0,
    scores_wait: float = SCORES_WAIT,
    log: Log = print,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> SubmissionInfo | None:
    """Zip ``folder``, submit it to ``phase_name`` and wait for the result.

    ``key``: the organizer's key that signs the zip (default: the key on this machine,
    :func:`~metascore.signature.organizer_key`); ``bundle``: the bundle zip that was uploaded,
    whose competition token the signature names (default: the meta tasks' reference data on
    the site). With ``dry_run`` the requests are printed
    and nothing is sent. Returns the finished
    submission with its scores once they are complete (see the module's docstring; at most
    ``scores_wait`` seconds after Finished), ``None`` on a dry run; a failed or cancelled
    one raises :class:`PlatformError`.
    """
    key = organizer_key(create=False) if key is None else key
    if dry_run:
        _dry_run(client, competition_id, phase_name, folder, key, bundle, poll_interval, scores_wait, log)
        return None
    comp = fetch_competition(client, competition_id)
    phase = find_phase(comp, phase_name)
    tokens = bundle_tokens(bundle) if bundle is not None else site_tokens(client, phase)
    binding = binding_for(client.site, comp, phase, folder, tokens)
    data = signed_zip(folder, key, binding)
    log(f"[*] signed for {binding.describe()}, pulled at {binding.pulled_at}")
    sub = _upload(client, comp, phase, data, key, log)
    page = f"{client.site}/competitions/{comp.id}/"
    log(f"[*] submission {sub.id} created in phase {phase.name!r}; waiting for the platform")
    sub = _until_done(client, sub, phase, page, poll_interval, max_wait, log=log, sleep=sleep, clock=clock)
    sub = _complete_scores(client, sub, expected_scores(folder, comp), page,
                           poll=min(poll_interval, SCORES_POLL), wait=scores_wait, log=log,
                           sleep=sleep, clock=clock)
    scores = ", ".join(f"{k}={v:g}" for k, v in sub.scores) or "none"
    log(f"[*] submission {sub.id} Finished: scores {scores}")
    _to_leaderboard(client, comp, phase, sub, log)
    log(f"[*] detailed results: {client.site}/competitions/{comp.id}/detailed_results/{sub.id}/")
    publish(client, comp, phase, sub.id, log=log)
    return sub


def _dry_run(client: Client, competition_id: int, phase_name: str, folder: Path, key: OrganizerKey,
             bundle: Path | None, poll_interval: float, scores_wait: float, log: Log) -> None:
    """Print the requests :func:`submit` would make; send nothing."""
    data = signed_zip(folder, key, Binding(client.site, competition_id, phase_name, None, ("0" * 32,)))
    log(f"[dry-run] {ZIP_NAME}: {folder} signed with the organizer key {key.fingerprint} ({key.path})")
    log(f"[dry-run] GET  {client.url(f'/api/competitions/{competition_id}/')}  (id of phase "
        f"{phase_name!r}, its tasks, the queue)")
    log(f"[dry-run] GET  {client.url('/api/tasks/<id>/')} and its reference data: the competition "
        "token the signature names" + (f" (from {bundle} instead)" if bundle else ""))
    body = {"type": "submission", "competition": competition_id,
            "request_sassy_file_name": ZIP_NAME, "file_name": ZIP_NAME, "file_size": len(data)}
    log(f"[dry-run] POST {client.url('/api/datasets/')}  {json.dumps(body)}")
    log(f"[dry-run] PUT  <sassy_url from the answer>  {ZIP_NAME}, {len(data)} bytes, "
        "application/zip")
    log(f"[dry-run] PUT  {client.url('/api/datasets/completed/<key>/')}")
    body2 = {"data": "<key>", "phase": f"<id of {phase_name!r}>", "fact_sheet_answers": None,
             "tasks": "<its task ids>", "organization": None, "queue": "<the competition's queue>"}
    log(f"[dry-run] POST {client.url('/api/submissions/')}  {json.dumps(body2)}")
    log(f"[dry-run] GET  {client.url('/api/submissions/<id>/')}  every {poll_interval:g} s "
        f"until {', '.join(TERMINAL_STATUSES)}, then until the scores are complete (at most "
        f"{scores_wait:g} s)")
    log("[dry-run] then `metascore codabench publish`: the final board from the submission's "
        f"output, the {PAGE_TITLE!r} page and the meta task's name (PATCH "
        f"{client.url(f'/api/competitions/{competition_id}/')}, {client.url('/api/tasks/<id>/')})")
    log("[dry-run] nothing was sent")


def _upload(client: Client, comp: CompetitionInfo, phase: PhaseInfo, data: bytes, key: OrganizerKey,
            log: Log) -> SubmissionInfo:
    """Steps 2 to 5: the dataset, the zip to its signed URL, the upload marked complete, the
    submission made."""
    body = {"type": "submission", "competition": comp.id, "request_sassy_file_name": ZIP_NAME,
            "file_name": ZIP_NAME, "file_size": len(data)}
    data_key, upload_url = parse_dataset(
        client.send_json("POST", "/api/datasets/", body, what="dataset creation"), "dataset creation")
    log(f"[*] uploading {ZIP_NAME} ({len(data)} bytes, signed with the organizer key {key.fingerprint})")
    client.upload(upload_url, data)
    client.request("PUT", f"/api/datasets/completed/{data_key}/", what="upload completion")
    body = {"data": data_key, "phase": phase.id, "fact_sheet_answers": None,
            "tasks": [t.id for t in phase.tasks], "organization": None, "queue": comp.queue}
    what = f"submission to phase {phase.name!r}"
    return parse_submission(client.send_json("POST", "/api/submissions/", body, what=what), what)


def _until_done(client: Client, sub: SubmissionInfo, phase: PhaseInfo, page: str, poll_interval: float,
                max_wait: float, *, log: Log, sleep: Callable[[float], None],
                clock: Callable[[], float]) -> SubmissionInfo:
    """Step 6: ``sub`` read again until Finished (a Failed or Cancelled one, or one still
    running after ``max_wait`` seconds, raises :class:`PlatformError`)."""
    start, status = clock(), sub.status
    while True:
        what = f"submission {sub.id}"
        sub = parse_submission(client.get_json(f"/api/submissions/{sub.id}/", what=what), what)
        if sub.status != status:
            log(f"[*] submission {sub.id}: {sub.status}")
            status = sub.status
        if sub.status in TERMINAL_STATUSES:
            break
        if clock() - start > max_wait:
            raise PlatformError(f"submission {sub.id} is still {sub.status or 'waiting'} after "
                                f"{max_wait:g} s; follow it on {page}")
        sleep(poll_interval)
    if sub.status != "Finished":
        detail = f" ({sub.status_details})" if sub.status_details else ""
        raise PlatformError(f"submission {sub.id} to phase {phase.name!r} ended {sub.status}"
                            f"{detail}; its logs are on {page} (My Submissions).")
    return sub


def _to_leaderboard(client: Client, comp: CompetitionInfo, phase: PhaseInfo, sub: SubmissionInfo, log: Log) -> None:
    """Step 8: under the ``Add`` rules, the "add to leaderboard" click."""
    manual = sorted({b.submission_rule for b in comp.leaderboards if b.submission_rule in MANUAL_RULES})
    if manual:
        client.request("POST", f"/api/submissions/{sub.id}/submission_leaderboard_connection/",
                       what=f"putting submission {sub.id} on the leaderboard")
        log(f"[*] submission {sub.id} put on the leaderboard of phase {phase.name!r} (its rule is "
            f"{manual[0]}: without this click participants see no row, hence no ranking page)")


def _complete_scores(
    client: Client, sub: SubmissionInfo, expected: frozenset[str] | None, page: str, *,
    poll: float, wait: float, log: Log, sleep: Callable[[float], None], clock: Callable[[], float],
) -> SubmissionInfo:
    """Read the Finished ``sub`` again until its scores are complete: every ``expected``
    key is there, or two reads in a row give the same non-empty scores; after ``wait``
    seconds, the last read with a note naming what is missing."""
    start, previous = clock(), None
    what = f"submission {sub.id}"
    while True:
        have = dict(sub.scores)
        if expected is not None and expected <= have.keys():
            return sub
        if have and have == previous:
            if expected is not None and expected - have.keys():
                log(f"[*] {what}: no score for {', '.join(sorted(expected - have.keys()))} (the "
                    "meta-scoring program leaves out a statistic it cannot compute; its log says why)")
            return sub
        if clock() - start >= wait:
            missing = sorted(expected - have.keys()) if expected else []
            log(f"[!] {what} is Finished but the platform has posted "
                + (f"only {', '.join(sorted(have))}" if have else "no score")
                + (f" (not {', '.join(missing)})" if missing else "")
                + f" after {wait:g} s (the worker sets Finished before it posts the scores); "
                f"they may still arrive: see {page} (My Submissions)")
            return sub
        previous = have
        sleep(poll)
        sub = parse_submission(client.get_json(f"/api/submissions/{sub.id}/", what=what), what)
