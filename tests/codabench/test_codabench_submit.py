"""``metascore codabench submit``: the request sequence Codabench's upload form makes."""

from __future__ import annotations

import copy
import io
import json
import zipfile

import pytest

from codabench_replay import TOKEN, Answer, Replay, serve
from metascore.cli import main
from metascore.codabench import TOKEN_ENV
from metascore.config import load_config
from metascore.program import run, score_main
from metascore.signature.binding import COMPETITION_FILE, Binding, token_text
from metascore.signature import PUBLIC_KEY_NAME, SignedExport, organizer_key, public_key_text

KEY = "5f1c3a52-8d0e-4c61-9b7a-2e4f6a8c0d12"  # Data.key is a UUID
SUBMISSION = {"id": 777, "data": KEY, "phase": 103, "status": "Submitting", "status_details": None,
              "filename": "metascore_results.zip", "md5": None, "fact_sheet_answers": None,
              "organization": None, "queue": None, "created_when": "2024-03-20 10:00", "scores": []}


TASK = {"id": 205, "name": "meta-ranking", "description": "", "key": "6b1f0a6e-0c55-4d3e-9d71-1c3a0e2f0005",
        "input_data": None, "ingestion_program": None,
        "reference_data": {"id": 9, "key": "a1b2c3d4-0000-4000-8000-000000000009", "name": "ref"},
        "scoring_program": {"id": 10, "key": "a1b2c3d4-0000-4000-8000-000000000010", "name": "program"}}


#: What `submit` reads to publish the outcome: the submission list, the files, the output zip,
#: the competition, the task.
PUBLISH_READS = 5
#: What `submit` reads to sign: the meta task, its reference data (a redirect), the zip.
SIGN_READS = 3
#: The meta phase's competition token, in its reference data (`bundle zip` wrote it).
TOKEN_41 = "c0ffee" + "0" * 26
REF_ZIP = "/storage/reference_9.zip"


def reference_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("metascore.yaml", "input: {path: .}\n")
        archive.writestr(COMPETITION_FILE, token_text(TOKEN_41, "competition 41"))
    return buf.getvalue()


def polled(status: str, scores=(), details=None) -> dict:
    return {"phase_name": "Final ranking", "name": None, "filename": "metascore_results.zip",
            "description": None, "created_when": "2024-03-20T10:00:00.000000Z", "is_public": False,
            "is_specific_task_re_run": False, "status": status, "status_details": details,
            "owner": "organizers", "has_children": False, "parent": None, "children": [],
            "pk": 777, "id": 777, "phase": 103,
            "scores": [{"id": 9100 + i, "index": 3 + i, "score": s, "column_key": k}
                       for i, (k, s) in enumerate(scores)],
            "fact_sheet_answers": None, "leaderboard": 61, "on_leaderboard": True,
            "task": {"id": 205, "name": "meta-ranking"}, "auto_run": True,
            "can_make_submissions_public": False, "is_soft_deleted": False}


@pytest.fixture
def site(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    r = Replay()
    r.load("competition_41.json")
    stop = serve(r)
    folder = tmp_path / "pulled"
    assert main(["codabench", "pull", "--site", r.url, "--competition", "41", "--baseline",
                 "organizers", "--out", str(folder)]) == 0
    capsys.readouterr()
    r.log.clear()
    signed = "/storage/submission/metascore_results.zip"
    r.add("POST", "/api/datasets/", {"key": KEY, "sassy_url": f"{r.url}{signed}?X-Amz-Signature=00ff"},
          status=201)
    r.add("PUT", signed, None, query="X-Amz-Signature=00ff")
    r.add("PUT", f"/api/datasets/completed/{KEY}/", {"key": KEY})
    r.add("POST", "/api/submissions/", SUBMISSION, status=201)
    # what `submit` reads and writes once the submission is Finished (codabench/publish.py):
    # the meta program's output as the site keeps it, the page and the task's name
    organizer_key()  # the key `bundle zip` made on this machine
    ranked = tmp_path / "ranked"
    signed = SignedExport("0123456789abcdef", Binding(r.url, 41, "Final ranking", 103, (TOKEN_41,),
                                                      "2026-01-01T00:00:00+00:00"), "2026-01-01T00:00:00+00:00")
    run(load_config(folder / "metascore.yaml"), folder, ranked, log=lambda _: None, signed=signed)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.write(ranked / "leaderboard.json", "leaderboard.json")
    r.add("GET", "/api/submissions/777/get_details/", {"scoring_result": f"{r.url}/storage/scoring_777.zip?sig=1"})
    r.add("GET", "/storage/scoring_777.zip", buf.getvalue(), query="sig=1", content_type="application/zip")
    r.add("PATCH", "/api/competitions/41/", {})
    r.add("GET", "/api/tasks/205/", TASK)
    r.add("PATCH", "/api/tasks/205/", {})
    r.add("GET", f"/datasets/download/{TASK['reference_data']['key']}/", None, status=302)
    r.routes[("GET", f"/datasets/download/{TASK['reference_data']['key']}/", "")][0].headers["Location"] = \
        f"{r.url}{REF_ZIP}?sig=2"
    r.add("GET", REF_ZIP, reference_zip(), query="sig=2", content_type="application/zip")
    r.replace("GET", "/api/submissions/", [Answer(200, [
        {"id": 777, "owner": "organizers", "parent": None, "status": "Finished", "created_when": None}])],
        query="phase=103")
    yield r, folder
    stop()


def _at(r: Replay) -> list[str]:
    return ["--site", r.url, "--competition", "41"]


def submit(r: Replay, folder, capsys, *extra: str) -> tuple[int, str, str]:
    rc = main(["codabench", "submit", "--site", r.url, "--competition", "41", "--phase",
               "Final ranking", str(folder), "--poll-interval", "0", *extra])
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    return rc, out, err


def test_request_sequence(site, capsys, tmp_path):
    r, folder = site
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Submitted")), Answer(200, polled("Running")),
        Answer(200, polled("Scoring")),
        Answer(200, polled("Finished", [("n_qualified", "3.0000000000"),
                                        ("winner_score", "-1.5000000000")]))])
    rc, out, err = submit(r, folder, capsys)
    assert rc == 0, err
    seq = [(q.method, q.path) for q in r.log]
    assert seq == [
        ("GET", "/api/competitions/41/"),
        ("GET", "/api/tasks/205/"),
        ("GET", f"/datasets/download/{TASK['reference_data']['key']}/"),
        ("GET", REF_ZIP),
        ("POST", "/api/datasets/"),
        ("PUT", "/storage/submission/metascore_results.zip"),
        ("PUT", f"/api/datasets/completed/{KEY}/"),
        ("POST", "/api/submissions/"),
    ] + [("GET", "/api/submissions/777/")] * 4 + [
        ("GET", "/api/submissions/"),
        ("GET", "/api/submissions/777/get_details/"),
        ("GET", "/storage/scoring_777.zip"),
        ("GET", "/api/competitions/41/"),
        ("PATCH", "/api/competitions/41/"),
        ("GET", "/api/tasks/205/"),
        ("PATCH", "/api/tasks/205/"),
    ]
    dataset, upload, _, created = r.log[4], r.log[5], r.log[6], r.log[7]
    fields = dataset.json()
    assert fields == {"type": "submission", "competition": 41,
                      "request_sassy_file_name": "metascore_results.zip",
                      "file_name": "metascore_results.zip", "file_size": len(upload.body)}
    storage = [q for q in r.log if q.path.startswith("/storage/")]  # signed URLs
    assert [q.method for q in storage] == ["GET", "PUT", "GET"] and upload is storage[1]
    assert not any("Authorization" in q.headers for q in storage)  # the token stays with the API
    assert all(q.headers.get("Authorization") == f"Token {TOKEN}" for q in r.log if q not in storage)
    archive = zipfile.ZipFile(io.BytesIO(upload.body))
    assert "submissions.csv" in archive.namelist()
    assert "Final/alice-611/iris/scores.json" in archive.namelist()
    # the meta phase's scoring program reads the uploaded zip as the worker unpacks it
    assert "metascore.sig" in archive.namelist()  # signed with the organizer's key
    archive.extractall(tmp_path / "input" / "res")
    (tmp_path / "input" / "ref").mkdir()
    (tmp_path / "input" / "ref" / "metascore.yaml").write_bytes((folder / "metascore.yaml").read_bytes())
    (tmp_path / "input" / "ref" / COMPETITION_FILE).write_text(token_text(TOKEN_41))
    program = tmp_path / "program"
    program.mkdir()
    (program / PUBLIC_KEY_NAME).write_text(public_key_text(organizer_key().public))
    assert score_main(tmp_path / "input", tmp_path / "output", program_dir=program) == 0
    assert (tmp_path / "output" / "leaderboard.csv").is_file()
    assert created.json() == {"data": KEY, "phase": 103, "fact_sheet_answers": None,
                              "tasks": [205], "organization": None, "queue": None}
    assert "submission 777 Finished: scores n_qualified=3, winner_score=-1.5" in out
    assert f"{r.url}/competitions/41/detailed_results/777/" in out
    # the outcome where participants look: a "Final ranking" page (the competition had none)
    # added with every other page and the whitelist, which the site's update replaces whole
    board = json.loads((tmp_path / "ranked" / "leaderboard.json").read_text())
    winner = next(row["participant"] for row in board["final"]["rows"] if row["position"] == 1)
    patched = r.log[-3].json()
    assert patched["whitelist_emails"] == [] and [p["title"] for p in patched["pages"]] == ["Final ranking"]
    page = patched["pages"][0]["content"]
    assert f"## Result: {winner} wins" in page
    assert f"]({r.url}/competitions/41/detailed_results/777/)" in page
    # the task's new name, its data kept (the site clears a key the PATCH leaves out)
    renamed = r.log[-1].json()
    assert renamed["name"].startswith(f"Final ranking: {winner} wins (")
    assert renamed["reference_data"] == TASK["reference_data"]["key"]
    assert renamed["scoring_program"] == TASK["scoring_program"]["key"]
    assert renamed["input_data"] is None and renamed["ingestion_program"] is None


def test_dry_run_sends_nothing(site, capsys, monkeypatch):
    r, folder = site
    monkeypatch.delenv(TOKEN_ENV)  # no token needed to print the plan
    rc, out, _ = submit(r, folder, capsys, "--dry-run")
    assert rc == 0
    assert r.log == []
    assert "[dry-run] POST" in out and "/api/datasets/" in out and "/api/submissions/" in out
    assert "nothing was sent" in out


def test_failed_submission_is_one_line_exit_1(site, capsys):
    r, folder = site
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Running")), Answer(200, polled("Failed", details="scoring failed"))])
    rc, _, err = submit(r, folder, capsys)
    assert rc == 1
    assert err.count("\n") == 1
    assert "submission 777 to phase 'Final ranking' ended Failed (scoring failed)" in err


def test_gives_up_after_max_wait(site, capsys):
    r, folder = site
    r.replace("GET", "/api/submissions/777/", [Answer(200, polled("Running"))])
    rc, _, err = submit(r, folder, capsys, "--max-wait", "0")
    assert rc == 1 and "submission 777 is still Running after 0 s" in err


def test_unknown_phase_and_bad_folder(site, capsys, tmp_path):
    r, folder = site
    rc = main(["codabench", "submit", "--site", r.url, "--competition", "41", "--phase",
               "Final rank", str(folder)])
    assert rc == 1 and "no phase 'Final rank' (did you mean 'Final ranking'?)" in capsys.readouterr().err
    assert [q.method for q in r.log] == ["GET"]
    empty = tmp_path / "empty"
    empty.mkdir()
    r.log.clear()
    rc, _, err = submit(r, empty, capsys)
    assert rc == 1 and "no scores found" in err
    assert not [q for q in r.log if q.method != "GET"]  # read to sign; nothing sent


# ------------------------------------------------------------ scores posted after Finished
# The compute worker sets Finished, then posts the scores, which the site stores one column
# at a time (compute_worker.py `start` then `push_scores`; `upload_submission_scores`): the
# real site showed a Finished meta submission with no score, then one, then both.

def with_meta_columns(r: Replay) -> None:
    """Competition 41 with the meta phase's columns (the keys the pulled metascore.yaml's
    output.scores names) on its leaderboard, as the template's has."""
    (route,) = r.routes[("GET", "/api/competitions/41/", "")]
    body = copy.deepcopy(route.body)
    columns = body["leaderboards"][0]["columns"]
    for n, key in enumerate(("n_qualified", "winner_score"), start=len(columns)):
        columns.append({**columns[0], "id": 900 + n, "index": n, "key": key, "title": key,
                        "computation": None, "computation_indexes": None, "sorting": "desc"})
    r.replace("GET", "/api/competitions/41/", [Answer(200, body)])


def test_waits_for_every_score_the_meta_program_writes(site, capsys):
    r, folder = site
    with_meta_columns(r)
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Running")), Answer(200, polled("Finished")),
        Answer(200, polled("Finished", [("n_qualified", "4.0000000000")])),
        Answer(200, polled("Finished", [("n_qualified", "4.0000000000"),
                                        ("winner_score", "-1.6666666667")]))])
    rc, out, _ = submit(r, folder, capsys)
    assert rc == 0
    assert "submission 777 Finished: scores n_qualified=4, winner_score=-1.66667" in out
    # the competition, then each status until complete (then the publishing's 4 reads)
    assert len(r.requests("GET")) == 1 + SIGN_READS + 4 + PUBLISH_READS
    assert "[!]" not in out


def test_scores_that_stop_changing_are_complete(site, capsys):
    """A statistic the meta-scoring program cannot compute is left out of scores.json, so
    its column never gets a score: two reads with the same scores end the wait."""
    r, folder = site
    with_meta_columns(r)
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Finished")), Answer(200, polled("Finished", [("n_qualified", "0E-10")])),
        Answer(200, polled("Finished", [("n_qualified", "0E-10")])),
        Answer(200, polled("Finished", [("n_qualified", "0E-10"), ("winner_score", "-2.0")]))])
    rc, out, _ = submit(r, folder, capsys)
    assert rc == 0
    assert len(r.requests("GET")) == 1 + SIGN_READS + 3 + PUBLISH_READS
    assert "submission 777: no score for winner_score" in out
    assert "submission 777 Finished: scores n_qualified=0" in out


def test_a_pulled_folder_without_configuration_waits_for_stable_scores(site, capsys):
    r, folder = site
    (folder / "metascore.yaml").unlink()
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Finished")), Answer(200, polled("Finished", [("n_qualified", "3.0")])),
        Answer(200, polled("Finished", [("n_qualified", "3.0"), ("winner_score", "-1.5")])),
        Answer(200, polled("Finished", [("n_qualified", "3.0"), ("winner_score", "-1.5")]))])
    rc, out, _ = submit(r, folder, capsys)
    assert rc == 0
    assert len(r.requests("GET")) == 1 + SIGN_READS + 4 + PUBLISH_READS
    assert "submission 777 Finished: scores n_qualified=3, winner_score=-1.5" in out


def test_scores_that_never_come_are_named_after_the_wait(site, capsys):
    r, folder = site
    with_meta_columns(r)
    r.replace("GET", "/api/submissions/777/", [Answer(200, polled("Finished"))])
    rc, out, _ = submit(r, folder, capsys, "--scores-wait", "0")
    assert rc == 0  # the submission did finish; what is missing is said
    assert ("[!] submission 777 is Finished but the platform has posted no score (not n_qualified, "
            "winner_score) after 0 s") in out
    assert f"see {r.url}/competitions/41/ (My Submissions)" in out
    assert "submission 777 Finished: scores none" in out


def test_under_add_the_meta_submission_is_put_on_the_leaderboard(site, capsys):
    """Issue 31: under the Add rules nothing reaches a leaderboard without the "add to
    leaderboard" click, the organizer's meta submission included: participants would see no
    Final ranking row, hence no link to the ranking page."""
    r, folder = site
    (answer,) = r.routes[("GET", "/api/competitions/41/", "")]
    body = copy.deepcopy(answer.body)
    for board in [p["leaderboard"] for p in body["phases"] if isinstance(p.get("leaderboard"), dict)] \
            + body.get("leaderboards", []):
        board["submission_rule"] = "Add"
    r.replace("GET", "/api/competitions/41/", [Answer(200, body)])
    r.add("POST", "/api/submissions/777/submission_leaderboard_connection/", {})
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Finished", [("n_qualified", "3.0000000000"), ("winner_score", "-1.5")]))])
    rc, out, _ = submit(r, folder, capsys)
    assert rc == 0
    clicked = [n for n, q in enumerate(r.log) if q.path.endswith("/submission_leaderboard_connection/")]
    assert [r.log[n].method for n in clicked] == ["POST"]
    assert [q.path for q in r.log[clicked[0] + 1:clicked[0] + 3]] == [  # then the publishing
        "/api/submissions/", "/api/submissions/777/get_details/"]
    assert "submission 777 put on the leaderboard of phase 'Final ranking' (its rule is Add" in out


def test_under_force_last_nothing_more_is_sent(site, capsys):
    r, folder = site
    r.replace("GET", "/api/submissions/777/", [
        Answer(200, polled("Finished", [("n_qualified", "3.0000000000"), ("winner_score", "-1.5")]))])
    rc, out, _ = submit(r, folder, capsys)
    assert rc == 0 and "leaderboard_connection" not in " ".join(q.path for q in r.log)
    assert "put on the leaderboard" not in out


def test_submit_signs_with_the_key_it_is_given_and_says_when_there_is_none(site, capsys, tmp_path):
    """Issue 46: the zip is signed with --key FILE (the organizer key of the machine that ran
    `bundle zip`, copied here); a missing key is one line before anything is sent."""
    r, folder = site
    rc, _, err = submit(r, folder, capsys, "--key", str(tmp_path / "absent_key"))
    assert rc == 1 and err.count("\n") == 1 and f"no organizer key at {tmp_path / 'absent_key'}" in err
    assert r.log == []
    other = organizer_key(tmp_path / "copied_key")
    rc, out, _ = submit(r, folder, capsys, "--key", str(tmp_path / "copied_key"), "--dry-run")
    assert rc == 0 and f"signed with the organizer key {other.fingerprint} ({tmp_path / 'copied_key'})" in out


def test_sign_writes_the_zip_submit_would_send_and_nothing_else(site, capsys, tmp_path):
    """`codabench sign`: the organizer who uploads through the site's own form gets the zip
    `submit` sends, signed with their key; no request is made, an existing file is kept, and
    a missing key is one line."""
    from metascore.signature import verify_folder

    r, folder = site
    key = organizer_key()
    target = tmp_path / "final_ranking.zip"
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(target)]) == 0
    out, _ = capsys.readouterr()
    assert f"signed with the organizer key {key.fingerprint}" in out
    assert not [q for q in r.log if q.method != "GET"]  # read, nothing sent
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(target) as archive:
        archive.extractall(unpacked)
    signed = verify_folder(unpacked, key.public, TOKEN_41)
    assert signed.fingerprint == key.fingerprint and signed.binding.competition == 41
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(target)]) == 1
    assert "exists already" in capsys.readouterr().err
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(tmp_path / "b.zip"), "--key",
                 str(tmp_path / "absent")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no organizer key at" in err and not (tmp_path / "b.zip").exists()


def test_sign_writes_the_whole_zip_or_nothing(site, capsys, tmp_path):
    """`codabench sign -o`: the zip is readable by all (0644) with no temporary file left
    beside it; into a folder that does not exist it is one line and exit 1, nothing made."""
    r, folder = site
    organizer_key()
    out = tmp_path / "signed"
    out.mkdir()
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(out / "final.zip")]) == 0
    assert [p.name for p in out.iterdir()] == ["final.zip"]
    assert (out / "final.zip").stat().st_mode & 0o777 == 0o644
    capsys.readouterr()
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(tmp_path / "absent" / "final.zip")]) == 1
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "absent").exists()


# ---------------------------------------------------------------------- issue 49, item 1
def test_the_signature_names_this_competitions_meta_phase_and_its_moment(site, capsys, tmp_path):
    """What `submit` signs: the meta task's token (read from its reference data on the site),
    the competition and phase, when the folder was pulled and the phases' dates as the site
    says them."""
    from metascore.signature import verify_folder

    r, folder = site
    assert main(["codabench", "sign", *_at(r), str(folder), "-o", str(tmp_path / "s.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        archive.extractall(tmp_path / "s")
    binding = verify_folder(tmp_path / "s", organizer_key().public, TOKEN_41).binding
    pulled = json.loads((folder / "codabench.json").read_text())["pulled_at"]
    assert binding == Binding(r.url, 41, "Final ranking", 103, (TOKEN_41,), pulled, "2024-03-16T00:00:00Z",
                              (("Development", "2024-02-29T23:59:00Z"), ("Final", "2024-03-15T23:59:00Z")))


def test_a_folder_pulled_before_the_phases_closed_is_refused_before_anything_is_sent(site, capsys):
    r, folder = site
    (answer,) = r.routes[("GET", "/api/competitions/41/", "")]
    body = copy.deepcopy(answer.body)
    body["phases"][1]["end"] = "2099-01-01T00:00:00Z"  # Final still open when the folder was pulled
    r.replace("GET", "/api/competitions/41/", [Answer(200, body)])
    rc, _, err = submit(r, folder, capsys)
    assert rc == 1 and err.count("\n") == 1, err
    assert "is stale: its leaderboards were pulled at" in err and "before phase 'Final' ended (2099-01-01T00:00:00Z)" in err
    assert not [q for q in r.log if q.method != "GET"]


def test_a_folder_pulled_from_another_competition_is_refused(site, capsys):
    r, folder = site
    provenance = json.loads((folder / "codabench.json").read_text())
    provenance["competition"]["id"] = 40
    (folder / "codabench.json").write_text(json.dumps(provenance))
    rc, _, err = submit(r, folder, capsys)
    assert rc == 1 and f"{folder} was pulled from competition 40, not from competition 41" in err
    assert not [q for q in r.log if q.method != "GET"]


def test_a_meta_task_without_a_token_is_one_line(site, capsys):
    r, folder = site
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("metascore.yaml", "input: {path: .}\n")
    r.replace("GET", REF_ZIP, [Answer(200, buf.getvalue(), content_type="application/zip")], query="sig=2")
    rc, _, err = submit(r, folder, capsys)
    assert rc == 1 and err.count("\n") == 1, err
    assert f"holds no {COMPETITION_FILE}: the bundle was not zipped by `metascore bundle zip`" in err


def test_sign_reads_the_token_from_the_uploaded_bundle_zip(site, capsys, tmp_path):
    """`bundle zip` writes a new token into each meta task's reference data, one per zip;
    `sign --bundle ZIP` names the one of the zip that was uploaded, without the site's
    reference data."""
    from metascore.bundle.bundle_zip import build_bundle_zip
    from metascore.signature.binding import token_of
    from metascore.signature import verify_folder
    from repo_paths import ROOT

    r, folder = site
    zips = [build_bundle_zip(ROOT / "bundle_template", tmp_path / f"b{n}.zip", meta_python="image") for n in (1, 2)]
    tokens = []
    for z in zips:
        with zipfile.ZipFile(z) as bundle, zipfile.ZipFile(io.BytesIO(bundle.read("final_ranking/reference_data.zip"))) as ref:
            tokens.append(token_of(ref.read(COMPETITION_FILE), "ref"))
            assert "metascore.yaml" in ref.namelist()
    assert tokens[0] != tokens[1]  # one per zip: one per competition made from it
    r.log.clear()
    assert main(["codabench", "sign", *_at(r), "--bundle", str(zips[1]), str(folder), "-o", str(tmp_path / "s.zip")]) == 0
    assert not [q for q in r.log if q.path.startswith(("/api/tasks/", "/datasets/"))]
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        archive.extractall(tmp_path / "s")
    assert verify_folder(tmp_path / "s", organizer_key().public, tokens[1]).binding.tokens == (tokens[1],)
