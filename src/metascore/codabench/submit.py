"""``metascore codabench submit``: send pulled results to the meta phase and wait.

The request sequence is the one Codabench's own upload form makes
(``src/static/riot/competitions/detail/submission_upload.tag`` and ``client.js``):

1. ``GET  /api/competitions/<cid>/``: the meta phase's id, its tasks and the queue;
2. ``POST /api/datasets/`` ``{type: submission, competition, request_sassy_file_name,
   file_name, file_size}`` -> ``{key, sassy_url}``;
3. ``PUT  <sassy_url>``: the zip itself, to the signed storage URL (no API token);
4. ``PUT  /api/datasets/completed/<key>/``;
5. ``POST /api/submissions/`` ``{data: <key>, phase, fact_sheet_answers, tasks,
   organization, queue}`` -> the submission's ``id``;
6. ``GET  /api/submissions/<id>/`` until its status is Finished, Failed or Cancelled.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..io.readers import read_scores
from .api import TERMINAL_STATUSES, SubmissionInfo, parse_dataset, parse_submission
from .client import Client, PlatformError
from .pull import fetch_competition, find_phase

__all__ = ["ZIP_NAME", "zip_results", "submit"]

ZIP_NAME = "metascore_results.zip"
Log = Callable[[str], None]


def zip_results(folder: Path) -> bytes:
    """The pulled folder as a zip (its files at the root), after checking it reads as scores."""
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder; give the folder `metascore codabench pull` wrote.")
    read_scores(folder, "tree")  # refuse a folder the meta-scoring program could not read
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if path.is_file() and not any(part.startswith(".") for part in rel.parts):
                archive.write(path, rel.as_posix())
    return buf.getvalue()


def submit(
    client: Client,
    competition_id: int,
    phase_name: str,
    folder: Path,
    *,
    dry_run: bool = False,
    poll_interval: float = 10.0,
    max_wait: float = 3600.0,
    log: Log = print,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> SubmissionInfo | None:
    """Zip ``folder``, submit it to ``phase_name`` and wait for the result.

    With ``dry_run`` the requests are printed and nothing is sent. Returns the finished
    submission (``None`` on a dry run); a failed or cancelled one raises
    :class:`PlatformError`.
    """
    data = zip_results(folder)
    if dry_run:
        log(f"[dry-run] GET  {client.url(f'/api/competitions/{competition_id}/')}  (id of phase "
            f"{phase_name!r}, its tasks, the queue)")
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
            f"until {', '.join(TERMINAL_STATUSES)}")
        log("[dry-run] nothing was sent")
        return None

    comp = fetch_competition(client, competition_id)
    phase = find_phase(comp, phase_name)
    body = {"type": "submission", "competition": comp.id, "request_sassy_file_name": ZIP_NAME,
            "file_name": ZIP_NAME, "file_size": len(data)}
    key, upload_url = parse_dataset(
        client.send_json("POST", "/api/datasets/", body, what="dataset creation"), "dataset creation")
    log(f"[*] uploading {ZIP_NAME} ({len(data)} bytes)")
    client.upload(upload_url, data)
    client.request("PUT", f"/api/datasets/completed/{key}/", what="upload completion")
    body = {"data": key, "phase": phase.id, "fact_sheet_answers": None,
            "tasks": [t.id for t in phase.tasks], "organization": None, "queue": comp.queue}
    what = f"submission to phase {phase.name!r}"
    sub = parse_submission(client.send_json("POST", "/api/submissions/", body, what=what), what)
    page = f"{client.site}/competitions/{comp.id}/"
    log(f"[*] submission {sub.id} created in phase {phase.name!r}; waiting for the platform")
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
    scores = ", ".join(f"{k}={v:g}" for k, v in sub.scores) or "none"
    log(f"[*] submission {sub.id} Finished: scores {scores}")
    log(f"[*] detailed results: {client.site}/competitions/{comp.id}/detailed_results/{sub.id}/")
    return sub
