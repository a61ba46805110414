"""Issue 25 items 2-5 on the real Codabench: what the unpacker and the scheduler do with the
template's dates, a hand-zipped template and a phase that names a missing task, and
whether ``bundle check`` / ``bundle run`` predict it.

Opt-in like ``tests/real_site/test_real_site.py`` (``METASCORE_SITE=1``, marker ``site``; the site
comes from ``tools/codabench_site/site.py up``). Each test asserts what the site does (so a
new pin that behaves otherwise is noticed), then asserts that metascore predicts it (the
fixes of items 2-5 are in: a regression fails the test).
"""

from __future__ import annotations

import datetime as dt

import pytest

import real_site as rs
import real_site_bundles as rb

pytestmark = rb.SITE_MARKS

ORGANIZER = "organizer"


@pytest.fixture(scope="module")
def apis() -> dict[str, rs.Api]:
    state, _ = rs.site_up()
    tokens = rs.admin("users", {"users": [{"username": ORGANIZER}, {"username": "alice"}]})
    return {name: rs.Api(state["site"], token) for name, token in tokens.items()}


@pytest.fixture(scope="module")
def org(apis) -> rs.Api:
    return apis[ORGANIZER]


def stored(snapshot: dict, name: str, key: str) -> dt.datetime | None:
    phase = next(p for p in snapshot["phases"] if p["name"] == name)
    return dt.datetime.fromisoformat(phase[key]) if phase[key] else None


def test_item2_phase_times_become_midnight(org, tmp_path):
    """The unpacker keeps the date of an unquoted YAML date-time and drops its time
    (``unpackers/utils.get_datetime``): ``end: 2027-05-31 23:59:00`` is stored as 2027-05-31
    00:00 UTC, while a quoted one (``"2027-05-31 23:59:00"``, parsed by dateutil) keeps it.
    The bundle model holds the dates as the site stores them, and `bundle check` warns
    about the dropped time."""
    from metascore.bundle import check_bundle, load_competition

    bundle = rb.copy_template(tmp_path)
    path = bundle / "competition.yaml"
    lines = path.read_text().splitlines(keepends=True)
    ends = [n for n, line in enumerate(lines) if line.strip().startswith("end: ")]
    dev_end, final_end = ends[0], ends[1]
    day = lines[dev_end].split('"')[1].split()[0]
    lines[dev_end] = lines[dev_end].replace(f'"{day} 00:00:00"', f"{day} 23:59:00")  # unquoted
    day = lines[final_end].split('"')[1].split()[0]
    lines[final_end] = lines[final_end].replace(f'"{day} 00:00:00"', f'"{day} 23:59:00"')  # quoted
    path.write_text("".join(lines))

    cid, _ = rs.upload_bundle(org, rb.zip_bundle(bundle, tmp_path / "bundle.zip"))
    snapshot = rs.admin("competition", {"competition": cid})
    assert stored(snapshot, "Development", "end").time() == dt.time(0, 0)  # the time dropped
    assert stored(snapshot, "Final", "end").time() == dt.time(23, 59)  # the quoted time kept
    comp = load_competition(bundle)
    for phase in comp.phases:
        for key in ("start", "end"):
            local = getattr(phase, key)
            if local is not None and local.tzinfo is None:
                local = local.replace(tzinfo=dt.timezone.utc)
            assert stored(snapshot, phase.name, key) == local, (phase.name, key)
    warned = [w for w in check_bundle(bundle).warnings if "unquoted date-time" in w]
    assert len(warned) == 1 and "phases[0].end" in warned[0] and "23 h 59 min earlier" in warned[0], warned


def test_item3_past_dates_migrate_an_empty_development_phase(apis, tmp_path):
    """A template whose dates are past (uploaded after they were written): the scheduler's
    next tick migrates the empty Development phase into Final and marks Final migrated, so
    later submissions never reach it. `bundle check` and `bundle zip` warn about an
    auto-migrating phase that starts before now, and `bundle zip --start today` moves the
    dates so that the same upload keeps Final for later."""
    from metascore.bundle import check_bundle

    bundle = rb.copy_template(tmp_path, rb.IN_THE_PAST)
    comp = rs.Competition(apis, ORGANIZER, rb.zip_bundle(bundle, tmp_path / "bundle.zip"))
    comp.migrate()  # the scheduler's tick
    snapshot = comp.snapshot()
    final = next(p for p in snapshot["phases"] if p["name"] == "Final")
    assert final["has_been_migrated"] is True and snapshot["submissions"] == []
    comp.submit("alice", "Development", rs.zip_folder(bundle / "sample_submissions" / "alice__centroid"))
    comp.wait("Development", 1)
    comp.migrate()  # the next tick
    after = comp.snapshot()
    assert [s["phase"] for s in after["submissions"]] == ["Development"], after["submissions"]

    said = [w for w in check_bundle(bundle).warnings if "'Final'" in w and "already past" in w]
    assert len(said) == 1 and "--start today" in said[0], said
    zipped = rb.zip_bundle_output(bundle, tmp_path / "again.zip")
    assert "already past" in zipped and "'Final'" in zipped, zipped

    # the same folder zipped with --start today: Final is not migrated at the next tick
    moved = rs.Competition(apis, ORGANIZER, rb.zip_bundle(bundle, tmp_path / "today.zip", "--start", "today"))
    moved.migrate()
    final = next(p for p in moved.snapshot()["phases"] if p["name"] == "Final")
    assert final["has_been_migrated"] is False, final


def test_item4_a_hand_zipped_template_fails_its_meta_phase_only_at_the_time_limit(org, tmp_path):
    """Zipped without `bundle zip`, meta_scoring_program/ holds only its README: the site
    accepts it, and the Final ranking submission fails with "Execution Time Limit
    exceeded" (the worker waits for detailed results that never come). The meta phase's
    limit is 10 s here instead of 300. `bundle check` should refuse such a zip. The export
    is not signed: such a bundle has no meta phase token (``metascore_competition.json``),
    so no export can be signed for it (issue 49), and no program is there to ask."""

    bundle = rb.copy_as_shipped(tmp_path)

    def short(data):
        data["phases"][2]["execution_time_limit"] = 10

    rb.edit_yaml(bundle, short)
    hand = rb.hand_zip(bundle)
    comp = rs.Competition({ORGANIZER: org}, ORGANIZER, hand)
    comp.open_phase("Final ranking")
    sub_id = comp.submit(ORGANIZER, "Final ranking", rb.template_export_zip(comp, "Final ranking", signed=False), "results.zip")
    (sub,) = comp.wait("Final ranking", 1, timeout=300)
    details = next(s for s in comp.snapshot()["submissions"] if s["id"] == sub_id)["status_details"]
    logs = rs.logs(org, sub_id)
    assert sub["status"] == "Failed", sub
    assert "Execution Time Limit exceeded" in f"{details} {logs.get('scoring_stderr', '')}", (details, logs)

    (tmp_path / "hand.zip").write_bytes(hand)
    rc, said = bundle_check(tmp_path / "hand.zip")
    assert rc == 1, said
    assert "meta_scoring_program" in said and "bundle zip" in said, said


def bundle_check(path) -> tuple[int, str]:
    """``metascore bundle check PATH`` (a folder or a zip, as an organizer runs it)."""
    import contextlib
    import io

    from metascore.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = main(["bundle", "check", str(path)])
    return rc, out.getvalue()


@pytest.mark.parametrize("tasks, message", [
    ([1, 7], "error log: 7"),                                # an index no task has (KeyError)
    (None, "'NoneType' object is not iterable"),             # `tasks:` with no value
    ("absent", "Phases must contain at least one task"),     # no `tasks:` key
])
def test_item5_a_phase_naming_a_missing_task_breaks_the_unpacker(org, tmp_path, tasks, message):
    """A phase whose task list names a task the bundle does not define, is empty, or is
    missing: the real unpacker fails, mostly with a message that names neither the phase
    nor the key; `bundle check` must refuse each first."""
    from metascore.bundle import check_bundle

    bundle = rb.copy_template(tmp_path)

    def missing(data):
        if tasks == "absent":
            del data["phases"][1]["tasks"]
        else:
            data["phases"][1]["tasks"] = tasks

    rb.edit_yaml(bundle, missing)
    status = rs.unpack(org, rb.hand_zip(bundle))
    assert status["status"] == "Failed", status
    assert message in (status["details"] or ""), status
    report = check_bundle(bundle)
    assert not report.ok, (tasks, status["details"], report.warnings)
    assert any("phases[1]" in e and "tasks" in e for e in report.errors), report.errors
