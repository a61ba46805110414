"""Drive the real Codabench site that ``tools/codabench_site/site.py`` stands up.

Used by ``tests/real_site/test_real_site.py`` (opt-in: ``METASCORE_SITE=1``). Everything goes through
the site's HTTP API as its own pages do (``src/static/js/ours/client.js`` and the upload
forms), with one API token per account; only what has no API or needs e-mail goes through
the ORM (``site.py admin``): creating the accounts and their tokens, moving phase dates
(time passing), and sending the beat scheduler's ``do_phase_migrations`` task now rather
than at its next 5-minute tick.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
import os
import re
import subprocess
import sys
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parent.parent
SITE_TOOL = REPO / "tools" / "codabench_site" / "site.py"
TERMINAL = ("Finished", "Failed", "Cancelled")


class SiteError(AssertionError):
    """The site refused a request or did not get where the test waits for."""


def site_up(timeout: float = 3600) -> tuple[dict, float]:
    """Run ``site.py up`` (idempotent); returns its state and how long it took."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(SITE_TOOL), "up"], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ})
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise SiteError("tools/codabench_site/site.py up failed:\n" + "\n".join(
            (proc.stdout + proc.stderr).strip().splitlines()[-30:]))
    return json.loads((site_home() / "state.json").read_text()), took


def site_home() -> Path:
    """Where ``site.py`` keeps the site, its logs and the tests' evidence."""
    return Path(os.environ.get("CODABENCH_SITE_HOME", "/var/tmp/metascore-codabench-site"))


def evidence(folder: str) -> Path:
    """``evidence/<folder>/`` of the site's home (made if missing): what a run keeps for a reader."""
    out = site_home() / "evidence" / folder
    out.mkdir(parents=True, exist_ok=True)
    return out


def admin(op: str, payload: dict) -> Any:
    """``site.py admin OP JSON``: its last output line, parsed."""
    proc = subprocess.run([sys.executable, str(SITE_TOOL), "admin", op, json.dumps(payload)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SiteError(f"site.py admin {op} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@dataclass
class Api:
    """One account's view of the site's API."""

    site: str
    token: str
    session: requests.Session = field(default_factory=requests.Session)

    def call(self, method: str, path: str, *, ok: tuple[int, ...] = (200, 201), **kwargs: Any) -> Any:
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        r = self.session.request(method, self.site + path, headers=headers, timeout=60, **kwargs)
        if r.status_code not in ok:
            raise SiteError(f"{method} {path} -> {r.status_code}: {r.text[:1500]}")
        return r.json() if r.content else None

    def upload(self, kind: str, name: str, data: bytes, competition: int | None = None) -> str:
        """Create a dataset of ``kind``, PUT ``data`` to its signed URL, mark it complete."""
        # dataset names are unique per account
        body = {"type": kind, "request_sassy_file_name": name, "file_name": name, "file_size": len(data),
                "name": f"{name} {uuid.uuid4().hex[:12]}"}
        if competition is not None:
            body["competition"] = competition
        made = self.call("POST", "/api/datasets/", json=body)
        r = requests.put(made["sassy_url"], data=data, headers={"Content-Type": "application/zip"}, timeout=120)
        if r.status_code not in (200, 204):
            raise SiteError(f"PUT to the signed storage URL -> {r.status_code}: {r.text[:500]}")
        done = self.call("PUT", f"/api/datasets/completed/{made['key']}/")
        return done.get("status_id", made["key"]) if kind == "competition_bundle" else made["key"]


def upload_bundle(api: Api, zip_bytes: bytes, timeout: float = 300) -> tuple[int, dict]:
    """Upload a competition bundle; wait for the unpacker; returns (competition id, status)."""
    status = unpack(api, zip_bytes, timeout)
    if status["status"] != "Finished":
        raise SiteError(f"the unpacker failed: {status['details']}")
    return status["resulting_competition"], status


def unpack(api: Api, zip_bytes: bytes, timeout: float = 300) -> dict:
    """Upload a competition bundle and return the unpacker's final status (Finished or
    Failed, with its ``details``)."""
    status_id = api.upload("competition_bundle", "bundle.zip", zip_bytes)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = api.call("GET", f"/api/competitions/{status_id}/creation_status/")
        if status["status"] in ("Finished", "Failed"):
            return status
        time.sleep(1)
    raise SiteError(f"the unpacker did not finish in {timeout:g} s")


def zip_folder(folder: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                z.write(p, p.relative_to(folder).as_posix())
    return buf.getvalue()


def signed_zip(files: dict[str, bytes], api: Api, cid: int, phase: str = "Final ranking") -> bytes:
    """A results export zip signed with the organizer's key on this machine (``metascore.sig``)
    for competition ``cid``'s meta ``phase``, as ``metascore codabench sign`` makes it: the
    meta phase's token read from its reference data with ``api``'s token, the dates as the
    site says them now (issues 46, 49); an unsigned zip is refused."""
    from metascore.codabench.client import Client
    from metascore.codabench.pull import fetch_competition, find_phase
    from metascore.codabench.signing import binding_for, now_iso, site_tokens, zip_signed
    from metascore.signature import organizer_key

    client = Client(api.site, api.token)
    comp = fetch_competition(client, cid)
    meta = find_phase(comp, phase)
    binding = binding_for(client.site, comp, meta, Path("/nonexistent"), site_tokens(client, meta))
    return zip_signed(files, organizer_key(), binding, now_iso())


def competition(api: Api, cid: int) -> dict:
    return api.call("GET", f"/api/competitions/{cid}/")


def phase_by_name(comp: dict, name: str) -> dict:
    for phase in comp["phases"]:
        if phase["name"] == name:
            return phase
    raise SiteError(f"no phase {name!r} in competition {comp['id']}")


def submit(api: Api, cid: int, phase: dict, data: bytes, name: str = "submission.zip") -> int:
    key = api.upload("submission", name, data, competition=cid)
    tasks = [t["id"] for t in phase["tasks"]]
    made = api.call("POST", "/api/submissions/", json={
        "data": key, "phase": phase["id"], "fact_sheet_answers": None, "tasks": tasks,
        "organization": None, "queue": None})
    return made["id"]


def wait_phase(api: Api, phase_id: int, count: int, timeout: float = 900) -> list[dict]:
    """Wait until the phase holds ``count`` top-level submissions, all finished or failed,
    and their scores have stopped changing: the worker sets Finished *before* it posts the
    scores, so a submission can read Finished with none or some of its scores."""
    deadline = time.monotonic() + timeout
    subs: list[dict] = []
    settled = None
    while time.monotonic() < deadline:
        subs = api.call("GET", "/api/submissions/", params={"phase": phase_id})
        top = [s for s in subs if s["parent"] is None]
        if len(top) >= count and all(s["status"] in TERMINAL for s in subs):
            seen = sorted((s["id"], s["status"], json.dumps(s["scores"], sort_keys=True)) for s in subs)
            if seen == settled:
                return sorted(subs, key=lambda s: s["id"])
            settled = seen
            time.sleep(2)
            continue
        settled = None
        time.sleep(3)
    shown = [(s["id"], s["owner"], s["status"]) for s in subs]
    raise SiteError(f"phase {phase_id}: not {count} terminal submissions after {timeout:g} s: {shown}")


def results_json(api: Api, cid: int, phase_id: int) -> dict:
    return api.call("GET", f"/api/competitions/{cid}/results.json", params={"phase": phase_id})


def scoring_output(api: Api, sub_id: int) -> dict[str, bytes]:
    """The files of a finished submission's scoring output (its ``scoring_result`` zip)."""
    details = api.call("GET", f"/api/submissions/{sub_id}/get_details/")
    r = requests.get(details["scoring_result"], timeout=120)
    if r.status_code != 200:
        raise SiteError(f"scoring_result of submission {sub_id} -> {r.status_code}")
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def logs(api: Api, sub_id: int) -> dict[str, str]:
    """The logs the worker uploaded for a submission: name (e.g. ``scoring_stderr``) -> text."""
    details = api.call("GET", f"/api/submissions/{sub_id}/get_details/")
    out = {}
    for item in details["logs"]:
        r = requests.get(item["data_file"], timeout=60)
        out[item["name"]] = r.text if r.status_code == 200 else ""
    return out


@contextlib.contextmanager
def token_env(token: str):
    old = os.environ.get("CODABENCH_TOKEN")
    os.environ["CODABENCH_TOKEN"] = token
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CODABENCH_TOKEN", None)
        else:
            os.environ["CODABENCH_TOKEN"] = old


def cli(*args: str) -> str:
    """Run ``metascore ARGS`` in this process; its standard output."""
    from metascore.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    assert rc == 0, f"metascore {' '.join(args)} -> {rc}\n{out.getvalue()[-2000:]}\n{err.getvalue()[-2000:]}"
    return out.getvalue()


class Stopwatch:
    """Named stage timings, in seconds, kept in insertion order."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._start = time.monotonic()

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.times[name] = round(now - self._start, 1)
        self._start = now


class Competition:
    """One competition on the site: uploaded from a bundle zip by ``organizer``, published,
    with every other account of ``apis`` registered (auto-approved)."""

    def __init__(self, apis: dict[str, Api], organizer: str, bundle_zip: bytes) -> None:
        self.apis, self.organizer = apis, organizer
        self.org = apis[organizer]
        self.id, _ = upload_bundle(self.org, bundle_zip)
        self.org.call("POST", f"/api/competitions/{self.id}/toggle_publish/")
        for name, api in apis.items():
            if name != organizer:  # the organizer is a participant of what it creates
                api.call("POST", f"/api/competitions/{self.id}/register/")
        self.phases = {p["name"]: p for p in competition(self.org, self.id)["phases"]}

    def submit(self, user: str, phase: str, data: bytes, name: str = "submission.zip") -> int:
        return submit(self.apis[user], self.id, self.phases[phase], data, name)

    def wait(self, phase: str, count: int, timeout: float = 900) -> list[dict]:
        return wait_phase(self.org, self.phases[phase]["id"], count, timeout)

    def open_phase(self, phase: str) -> None:
        """Time passes: ``phase`` starts a minute ago and the one before it ends then."""
        names = list(self.phases)
        start = (dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(minutes=1)).isoformat()
        dates = {phase: {"start": start}}
        if names.index(phase) > 0:
            dates[names[names.index(phase) - 1]] = {"end": start}
        admin("phase_dates", {"competition": self.id, "phases": dates})

    def migrate(self) -> None:
        """What the beat scheduler does every 5 minutes, now."""
        admin("run_task", {"task": "do_phase_migrations"})

    def export(self, phase: str) -> dict:
        """The rows of ``phase``'s results export (``results.json?phase=``)."""
        (rows,) = results_json(self.org, self.id, self.phases[phase]["id"]).values()
        return rows

    def to_leaderboard(self, user: str, sub_id: int) -> None:
        """The participant's "add to leaderboard" click (the Add rules)."""
        self.apis[user].call("POST", f"/api/submissions/{sub_id}/submission_leaderboard_connection/")

    def snapshot(self) -> dict:
        return admin("competition", {"competition": self.id})

    def through_final(self, bundle: Path, people: list[tuple[str, str]], baseline: str) -> list[dict]:
        """The template's course to its final phase: each person's sample submission and the
        baseline's starting kit in Development, then the Final phase open and migrated; the
        final phase's submissions."""
        for person, sample in people:
            self.submit(person, "Development", zip_folder(bundle / "sample_submissions" / sample))
        self.submit(baseline, "Development", zip_folder(bundle / "starting_kit" / "baseline_submission"))
        self.wait("Development", len(people) + 1)
        self.open_phase("Final")
        self.migrate()
        return self.wait("Final", len(people) + 1)


# ----------------------------------------------------------------------------- leaderboards
def board(text: str | bytes) -> list[dict[str, str]]:
    if isinstance(text, bytes):
        text = text.decode()
    return list(csv.DictReader(io.StringIO(text)))


def normalized(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """A leaderboard with candidates named by participant and no submission times (a
    candidate's name may appear in other rows' text, e.g. the baseline's in a reason, and
    may be another phase's: ``<participant>-<id>`` with any id)."""
    names = {r["candidate"]: r["participant"] for r in rows}
    people = sorted({r["participant"] for r in rows}, key=len, reverse=True)
    alternatives = [re.escape(c) for c in sorted(names, key=len, reverse=True)]
    alternatives += [rf"{re.escape(p)}-\d+" for p in people]
    pattern = re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")

    def person(match: re.Match) -> str:
        text = match.group(0)
        return names.get(text) or text.rsplit("-", 1)[0]

    return [{k: pattern.sub(person, v) for k, v in r.items() if k != "submitted_at"} for r in rows]


def same_board(site: list[dict[str, str]], local: list[dict[str, str]]) -> None:
    """Assert that a final leaderboard of the site and one of ``bundle run`` agree column for
    column: the same columns in the same order, every value exactly, the ids read as
    ``<owner>-<number>`` (the site's come from its database sequence) and the times as times
    (every row carries one; the site's are when its submissions were made, bundle run's when
    its phase opened plus a second per submission, issue 50 item 8)."""
    numbered = re.compile(r"\b([A-Za-z0-9_.]+)-\d+\b")
    assert list(site[0]) == list(local[0])
    for row in site + local:
        assert dt.datetime.fromisoformat(row["submitted_at"]), row

    def unid(rows):
        return [{k: "<time>" if k == "submitted_at" else numbered.sub(r"\1-#", v) for k, v in r.items()}
                for r in rows]
    assert unid(site) == unid(local)


def pulled_export(api: Api, cid: int, out: Path, *options: str) -> dict[str, bytes]:
    """What ``metascore codabench pull OPTIONS`` writes for competition ``cid`` with ``api``'s
    token (the organizer's), as the files of the result submission: relative path -> content."""
    with token_env(api.token):
        cli("codabench", "pull", "--site", api.site, "--competition", str(cid), "--out", str(out), *options)
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
