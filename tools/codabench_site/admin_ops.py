"""ORM operations on the local Codabench site, run by ``site.py admin OP JSON`` inside the
site's environment (Django settings from ``site.env``). Each prints one JSON document.

- ``users {"users": [{"username": .., "email": .., "password": .., "superuser": false}]}``:
  create the accounts that are missing (active, e-mail verified: sign-up would need e-mail),
  set the password when one is given, and print ``{username: API token}``. Stands in for sign-up, e-mail confirmation and the token page.
- ``phase_dates {"competition": id, "phases": {"<name>": {"start": iso|null, "end": iso|null}}}``:
  move phase dates (stands in for time passing, e.g. the Final phase starting).
- ``run_task {"task": "do_phase_migrations"}``: send a site task to the site worker, as the
  beat scheduler does every 5 minutes (``competitions.tasks.<task>``), and wait for it.
- ``competition {"competition": id}``: phases (dates, migration flags) and every
  submission (id, owner, phase, status, parent, leaderboard, migration origin, scores).
- ``settings {"competition": id}``: what the unpacker stored of a bundle, field by field:
  the competition's fields, its pages, each phase's fields with its tasks (their fields and
  the MD5 of each dataset's file) and the leaderboard with its columns; ids, generated keys
  (UUIDs), creation times and logos (stored under random names) left out, so that two
  uploads compare.
"""

import json
import sys

import django

django.setup()

from django.utils.dateparse import parse_datetime  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from competitions.models import Competition, Submission  # noqa: E402
from profiles.models import User  # noqa: E402


def users(payload):
    tokens = {}
    for spec in payload["users"]:
        user = User.objects.filter(username=spec["username"]).first()
        if user is None:
            user = User.objects.create_user(spec["username"], spec.get("email") or f"{spec['username']}@example.invalid",
                                            spec.get("password") or None)
        user.is_active = True
        if spec.get("password"):  # to log in through the site's pages (the browser tests)
            user.set_password(spec["password"])
        if spec.get("superuser"):
            user.is_staff = user.is_superuser = True
        user.save()
        tokens[user.username] = Token.objects.get_or_create(user=user)[0].key
    return tokens


def phase_dates(payload):
    comp = Competition.objects.get(pk=payload["competition"])
    done = {}
    for name, dates in payload["phases"].items():
        phase = comp.phases.get(name=name)
        for key in ("start", "end"):
            if key in dates:
                setattr(phase, key, parse_datetime(dates[key]) if dates[key] else None)
        phase.save()
        done[name] = {"start": phase.start.isoformat() if phase.start else None,
                      "end": phase.end.isoformat() if phase.end else None}
    return done


def run_task(payload):
    from competitions import tasks

    result = getattr(tasks, payload["task"]).apply_async(queue="site-worker")
    result.get(timeout=payload.get("timeout", 120))
    return {"task": payload["task"], "state": result.state}


def competition(payload):
    comp = Competition.objects.get(pk=payload["competition"])
    phases = [{"id": p.id, "index": p.index, "name": p.name, "start": p.start and p.start.isoformat(),
               "end": p.end and p.end.isoformat(), "auto_migrate_to_this_phase": p.auto_migrate_to_this_phase,
               "has_been_migrated": p.has_been_migrated, "status": p.status,
               "tasks": [t.id for t in p.tasks.all()]} for p in comp.phases.order_by("index")]
    subs = []
    for s in Submission.objects.filter(phase__competition=comp).order_by("pk"):
        subs.append({
            "id": s.pk, "owner": s.owner.username, "phase": s.phase.name, "status": s.status,
            "status_details": s.status_details, "parent": s.parent_id, "has_children": s.has_children,
            "task": s.task_id, "leaderboard": s.leaderboard_id, "is_migrated": s.is_migrated,
            "created_by_migration": s.created_by_migration_id, "created_when": s.created_when.isoformat(),
            "scores": {sc.column.key: str(sc.score) for sc in s.scores.all()},
        })
    return {"id": comp.pk, "title": comp.title, "is_migrating": comp.is_migrating, "phases": phases,
            "submissions": subs}


def _fields(obj, skip=()):
    """The plain (non-relation) fields of a model instance, as JSON values; the generated
    UUIDs (a task's or a dataset's key, a competition's secret key) left out."""
    from django.db import models

    out = {}
    for f in obj._meta.concrete_fields:
        if f.is_relation or f.name in skip or isinstance(f, models.UUIDField):
            continue
        value = getattr(obj, f.attname)
        if hasattr(value, "isoformat"):
            value = value.isoformat()
        elif not isinstance(value, (str, int, float, bool, list, dict, type(None))):
            value = str(value)
        out[f.name] = value
    return out


def _data(data):
    import hashlib

    if data is None:
        return None
    with data.data_file.open("rb") as f:
        return {"type": data.type, "md5": hashlib.md5(f.read()).hexdigest()}


def settings(payload):
    comp = Competition.objects.get(pk=payload["competition"])
    generated = {"id", "created_when", "logo", "logo_icon", "created_by"}
    phases, boards = [], {}
    for p in comp.phases.order_by("index"):
        tasks = []
        for task in p.tasks.order_by("phasetaskinstance__order_index", "pk"):
            tasks.append({**_fields(task, generated),
                          **{kind: _data(getattr(task, kind)) for kind in
                             ("scoring_program", "ingestion_program", "input_data", "reference_data")}})
        board = p.leaderboard
        if board is not None and board.pk not in boards:
            boards[board.pk] = {**_fields(board, generated), "columns": [
                _fields(c, generated) for c in board.columns.order_by("index")]}
        phases.append({**_fields(p, generated), "public_data": _data(p.public_data),
                       "starting_kit": _data(p.starting_kit), "tasks": tasks,
                       "leaderboard": None if board is None else board.title})
    return {"competition": _fields(comp, generated | {"published", "is_migrating"}),
            "pages": [_fields(pg, generated) for pg in comp.pages.order_by("index")],
            "phases": phases, "leaderboards": list(boards.values())}


if __name__ == "__main__":
    op, payload = sys.argv[1], json.loads(sys.argv[2] if len(sys.argv) > 2 else "{}")
    ops = {"users": users, "phase_dates": phase_dates, "run_task": run_task, "competition": competition,
           "settings": settings}
    if op not in ops:
        sys.exit(f"unknown operation {op!r}; one of {', '.join(ops)}")
    print(json.dumps(ops[op](payload)))
