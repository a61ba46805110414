"""A local stand-in for a Codabench site: replays recorded API answers on 127.0.0.1.

Routes are keyed by (method, path, query string). Each route holds a list of answers
served in turn (the last one repeats), so "a 500, then a success" is two answers. An
answer may be delayed (a response slower than the client's timeout). Every request is
logged with its headers and body. Unknown routes answer 404 ``{"detail": "Not found."}``
as Django REST framework does; a wrong ``Authorization: Token`` answers 403
``{"detail": "Invalid token."}`` (Codabench lists SessionAuthentication first, so DRF
answers 403 rather than 401).

Fixture files (``tests/data/codabench/*.json``) hold ``{"_source": "...", "routes":
[{"method", "path", "query", "status", "body", "delay"}]}``; ``_source`` names the
Codabench commit the shapes were written from and is not served.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DATA = Path(__file__).parent / "data" / "codabench"
TOKEN = "0123456789abcdef-test-token-9f8e7d"


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    delay: float = 0.0
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, (bytes, str)):
            return self.body.encode() if isinstance(self.body, str) else self.body
        return json.dumps(self.body, indent=4).encode()


@dataclass
class Logged:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Replay:
    """The server's routes and request log; ``url`` is set once it listens."""

    token: str = TOKEN
    routes: dict[tuple[str, str, str], list[Answer]] = field(default_factory=dict)
    served: dict[tuple[str, str, str], int] = field(default_factory=dict)
    log: list[Logged] = field(default_factory=list)
    url: str = ""

    def add(self, method: str, path: str, body: Any = None, *, query: str = "", status: int = 200,
            delay: float = 0.0, content_type: str = "application/json") -> None:
        self.routes.setdefault((method, path, query), []).append(
            Answer(status, body, delay, content_type))

    def replace(self, method: str, path: str, answers: list[Answer], query: str = "") -> None:
        self.routes[(method, path, query)] = answers

    def load(self, name: str) -> None:
        data = json.loads((DATA / name).read_text(encoding="utf-8"))
        assert "_source" in data, f"{name}: the fixture must name its source"
        for r in data["routes"]:
            self.add(r["method"], r["path"], r.get("body"), query=r.get("query", ""),
                     status=r.get("status", 200), delay=r.get("delay", 0.0))

    def answer(self, method: str, path: str, query: str, headers: dict[str, str]) -> Answer:
        auth = headers.get("Authorization")
        if auth is not None and auth != f"Token {self.token}":
            return Answer(403, {"detail": "Invalid token."})
        key = (method, path, query)
        answers = self.routes.get(key)
        if not answers:
            return Answer(404, {"detail": "Not found."})
        n = self.served.get(key, 0)
        self.served[key] = n + 1
        return answers[min(n, len(answers) - 1)]

    def requests(self, method: str | None = None) -> list[Logged]:
        return [r for r in self.log if method is None or r.method == method]


def serve(replay: Replay):
    """Start the server in a thread; returns a function that stops it."""

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()}
            replay.log.append(Logged(self.command, parts.path, parts.query, headers, body))
            answer = replay.answer(self.command, parts.path, parts.query, headers)
            if answer.delay:
                time.sleep(answer.delay)
            payload = answer.payload()
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        do_GET = do_POST = do_PUT = do_PATCH = _handle

        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    replay.url = f"http://127.0.0.1:{server.server_address[1]}"

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop


# ---------------------------------------------------------------------- a competition from a bundle
def add_bundle_competition(replay: Replay, comp: Any, competition_id: int, phase_ids: dict[str, int],
                           task_ids: dict[int, int]) -> None:
    """``GET /api/competitions/<id>/`` for a parsed bundle (``metascore.bundle.load_competition``):
    its phases (ids ``phase_ids[name]``), tasks (ids ``task_ids[index]``) and leaderboard, in
    the shape of ``CompetitionDetailSerializer``."""
    board = comp.leaderboard
    columns = [{"id": 300 + c.index, "computation": c.computation,
                "computation_indexes": [str(i) for i in c.computation_indexes] or None,
                "title": c.title, "key": c.key, "sorting": c.sorting, "index": c.index,
                "hidden": c.hidden, "precision": c.precision} for c in board.columns]
    phases = []
    for phase in comp.phases:
        pid = phase_ids[phase.name]
        tasks = [{"task": f"key-{i}", "order_index": n, "phase": pid, "id": task_ids[i],
                  "value": f"key-{i}", "key": f"key-{i}", "name": comp.tasks[i].name,
                  "solutions": [], "public_datasets": []} for n, i in enumerate(phase.tasks)]
        phases.append({"id": pid, "index": phase.index, "name": phase.name, "status": "Previous",
                       "tasks": tasks, "hide_output": False, "is_final_phase": False})
    replay.add("GET", f"/api/competitions/{competition_id}/", {
        "id": competition_id, "title": comp.title, "published": True, "phases": phases,
        "leaderboards": [{"id": 12, "primary_index": board.primary_index, "title": board.title,
                          "key": board.key, "columns": columns, "hidden": False,
                          "submission_rule": board.submission_rule}],
        "queue": None})


def add_phase_results(replay: Replay, competition_id: int, phase_id: int, export: dict[str, Any],
                      created: dict[str, str], task_ids: list[int]) -> None:
    """A phase's ``results.json?phase=`` (``export``, as the site sends it) and its
    ``/api/submissions/?phase=``: one submission per row key ``<owner>-<id>`` created at
    ``created[key]``, with one child per task (ids after its own) when the phase has several."""
    (rows,) = export.values()
    subs: list[dict[str, Any]] = []
    for key in rows:
        owner, _, sid = key.rpartition("-")
        parent = int(sid)
        several = len(task_ids) > 1
        subs.append({"id": parent, "owner": owner, "parent": None, "has_children": several,
                     "created_when": created[key], "status": "Finished",
                     "task": None if several else {"id": task_ids[0]}, "scores": []})
        if several:
            subs.extend({"id": parent + n, "owner": owner, "parent": parent, "has_children": False,
                         "created_when": created[key], "status": "Finished", "task": {"id": tid},
                         "scores": []} for n, tid in enumerate(task_ids, start=1))
    replay.add("GET", f"/api/competitions/{competition_id}/results.json", export, query=f"phase={phase_id}")
    replay.add("GET", "/api/submissions/", subs, query=f"phase={phase_id}")


# ---------------------------------------------------------------------- what anyone can read
def add_public_leaderboards(replay: Replay, competition_id: int, phase_ids: list[int]) -> None:
    """``GET /api/phases/<pid>/get_leaderboard/`` of each phase, as Codabench answers anyone
    (``PhaseViewSet.get_leaderboard`` @ c7dbc756), made of the replay's competition detail,
    results export and submissions: one row per ``<owner><parent or id>`` in the export's
    order, ``id`` its first submission (a task's child in a multi-task phase), its scores
    ``str(round(float(score), precision))`` with their ``task_id``, hidden columns left out,
    and ``detailed_results`` listing each task's submission."""
    detail = replay.routes[("GET", f"/api/competitions/{competition_id}/", "")][0].body
    (board,) = detail["leaderboards"]
    by_title = {c["title"]: c for c in board["columns"]}
    shown = [c for c in board["columns"] if not c["hidden"]]
    for pid in phase_ids:
        export = replay.routes[("GET", f"/api/competitions/{competition_id}/results.json", f"phase={pid}")][0].body
        (rows,) = export.values()
        subs = replay.routes[("GET", "/api/submissions/", f"phase={pid}")][0].body
        phase = next(p for p in detail["phases"] if p["id"] == pid)
        out = []
        for key, row in rows.items():
            owner, _, sid = key.rpartition("-")
            runs = [s for s in subs if s["parent"] == int(sid)] or [s for s in subs if s["id"] == int(sid)]
            scores = []
            for name, cell in row.items():
                if name == "fact_sheet_answers" or cell == "":
                    continue
                task, _, title = name.partition(")-")
                column = by_title[title]
                if not column["hidden"]:
                    scores.append({"id": len(scores), "index": column["index"], "column_key": column["key"],
                                   "score": str(round(float(cell), column["precision"])),
                                   "task_id": int(task.rsplit("(", 1)[1])})
            out.append({"id": runs[0]["id"], "owner": owner, "scores": scores,
                        "detailed_results": [{"task": (s.get("task") or {}).get("id"), "id": s["id"]} for s in runs],
                        "fact_sheet_answers": None, "slug_url": f"/profiles/user/{owner}/",
                        "organization": None, "created_when": runs[0]["created_when"]})
        tasks = [{"name": t["name"], "id": t["id"], "colWidth": len(shown), "columns": shown}
                 for t in phase["tasks"]]
        replay.add("GET", f"/api/phases/{pid}/get_leaderboard/", {
            "title": board["title"], "id": pid, "submissions": out, "tasks": tasks,
            "fact_sheet_keys": None, "primary_index": board["primary_index"]})
