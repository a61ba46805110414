#!/usr/bin/env python3
"""Stand up the real Codabench (site + compute worker) at a pinned commit on this machine.

    python tools/codabench_site/site.py up [--src CODABENCH_GIT]   # idempotent
    python tools/codabench_site/site.py status
    python tools/codabench_site/site.py down                       # stop what `up` started
    python tools/codabench_site/site.py admin OP [JSON]            # ORM operations (see admin_ops.py)

What runs (README.md beside this file says why and what stands in for what):

- Debian's postgresql, redis-server and rabbitmq-server (installed with apt-get when missing,
  started with their own init scripts);
- an S3-compatible server from PyPI (``moto[server]``) with the ``public`` and ``private``
  buckets, standing in for MinIO/S3;
- the site: Codabench's Django app (``src/``) from a checkout of the pinned commit, in a
  virtual environment of Python 3.13 with the exact versions of its ``uv.lock``, served by
  uvicorn; its celery worker with the beat scheduler (queue ``site-worker``: the bundle
  unpacker, phase migrations, ...);
- the compute worker (``compute_worker/compute_worker.py`` of the same checkout, its own
  locked requirements) on the host, against podman's Docker-compatible API; image pulls
  are answered from the local image store (``worker_stand_ins/sitecustomize.py``), and the
  competition image is a local stand-in built from ``localhost/python-base:bookworm``.

Everything lives in the work folder (``$CODABENCH_SITE_HOME``, default
``/var/tmp/metascore-codabench-site``): the checkout, the virtual environments, the
generated secrets (``site.env``, mode 600), logs (``logs/``), pid files (``run/``) and
``state.json`` (addresses and timings). Re-running ``up`` reuses what is there and starts
only what is not running. Only the standard library is used here.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from site_base import (CHECKOUT, DEFAULT_IMAGES, ENV_FILE, HERE, HOME, LOGS, PINNED_COMMIT, PODMAN_SOCK,
                       RUN, S3_PORT, SITE_PORT, WORKER_DIR, SetupError, Timer, ensure_apt, ensure_checkout,
                       ensure_database, ensure_env_file, ensure_services, ensure_venv, http_ok, load_state,
                       locked_requirements, log, log_has, log_size, pid_alive, save_state, sh, start_process,
                       stop_process, wait_for)
from site_engine import (ensure_engine, ensure_image, ensure_worker_dir, remove_stale_job_containers,
                         remove_unused_anonymous_volumes)

# ----------------------------------------------------------------------------- commands

def up(args: argparse.Namespace) -> int:
    for d in (HOME, LOGS, RUN):
        d.mkdir(parents=True, exist_ok=True)
    state = load_state()
    timings: dict[str, float] = {}
    step = Timer(timings)
    t0 = time.monotonic()
    src = args.src or os.environ.get("CODABENCH_SRC")
    with step("apt packages"):
        ensure_apt()
    with step("checkout"):
        commit = ensure_checkout(src, args.commit)
    with step("site venv"):
        reqs = locked_requirements(CHECKOUT, HOME / "site-requirements.txt")
        site_venv = ensure_venv("venv-site", ["-r", str(reqs)], commit + reqs.read_text())
    with step("worker venv"):
        wreqs = locked_requirements(CHECKOUT / "compute_worker", HOME / "worker-requirements.txt")
        worker_venv = ensure_venv("venv-worker", ["-r", str(wreqs)], commit + wreqs.read_text())
        # as packaging/container/Containerfile.compute_worker does: the worker imports it
        shutil.copy2(CHECKOUT / "src" / "settings" / "logs_loguru.py", worker_venv / "bin" / "logs_loguru.py")
    with step("s3 venv"):
        s3_venv = ensure_venv("venv-s3", ["moto[server]==5.2.5"], "moto[server]==5.2.5")
    with step("services"):
        ensure_services()
        env_values = ensure_env_file()
        ensure_database(env_values)
    base_env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "TZ",
                                                               "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")}
    site_env = {**base_env, **env_values, "PYTHONUNBUFFERED": "1",
                "PATH": f"{site_venv / 'bin'}:{base_env.get('PATH', '/usr/bin:/bin')}"}
    Path(env_values["TEMP_SUBMISSION_STORAGE"]).mkdir(parents=True, exist_ok=True)
    with step("s3 server"):
        s3_env = {**base_env, "PYTHONUNBUFFERED": "1"}
        fresh = start_process("s3", [str(s3_venv / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(S3_PORT)],
                              s3_env, HOME)
        wait_for("the S3 server", lambda: http_ok(f"http://127.0.0.1:{S3_PORT}/"), 60, LOGS / "s3.log")
        code = ("import boto3,os\n"
                "s3=boto3.client('s3',endpoint_url=os.environ['AWS_S3_ENDPOINT_URL'],region_name='us-east-1')\n"
                "have={b['Name'] for b in s3.list_buckets().get('Buckets',[])}\n"
                "[s3.create_bucket(Bucket=b) for b in ('public','private') if b not in have]\n")
        sh([str(site_venv / "bin" / "python"), "-c", code], env=site_env)
        if fresh:
            log("S3 server is new: files of earlier runs are gone (their competitions are stale)")
    src_dir = CHECKOUT / "src"
    with step("django migrate"):
        sh([str(site_venv / "bin" / "python"), "manage.py", "migrate", "--no-input"], env=site_env, cwd=CHECKOUT,
           timeout=1800)
    with step("site server"):
        # --timeout-keep-alive: in production a reverse proxy (Caddy) faces the workers; with
        # uvicorn's 5 s default, an idle keep-alive connection of the compute worker is closed
        # just as it PATCHes "Finished" (a scoring job takes about 5 s), and that PATCH is
        # not retried: the submission would stay Running without scores.
        start_process("django", [str(site_venv / "bin" / "uvicorn"), "asgi:application", "--host", "127.0.0.1",
                                 "--port", str(SITE_PORT), "--workers", "2", "--timeout-keep-alive", "120"],
                      site_env, src_dir)
        wait_for("the site", lambda: http_ok(f"http://127.0.0.1:{SITE_PORT}/api/"), 120, LOGS / "django.log")
    with step("site worker"):
        mark = log_size("site-worker")
        started = start_process("site-worker", [
            str(site_venv / "bin" / "celery"), "-A", "celery_config", "worker", "-B", "-Q", "site-worker",
            "-l", "info", "-n", "site-worker@%h", "--concurrency=2",
            "-s", str(RUN / "celerybeat-schedule")], site_env, src_dir)
        if started:
            wait_for("the site worker", lambda: log_has("site-worker", " ready.", mark), 120, LOGS / "site-worker.log")
    with step("container engine and images"):
        ensure_engine()
        build_opts = shlex.split(os.environ.get(
            "METASCORE_BUILD_OPTS",
            "--network=host -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro"))
        for image in args.image or DEFAULT_IMAGES:
            ensure_image(image, build_opts)
    with step("compute worker"):
        ensure_worker_dir()
        worker_env = {**base_env, "PYTHONUNBUFFERED": "1",
                      "PATH": f"{worker_venv / 'bin'}:{base_env.get('PATH', '/usr/bin:/bin')}",
                      "BROKER_URL": env_values["BROKER_URL"],
                      "HOST_DIRECTORY": str(WORKER_DIR),
                      "CONTAINER_ENGINE_EXECUTABLE": "podman",
                      "CONTAINER_SOCKET": f"unix://{PODMAN_SOCK}",
                      "CODALAB_IGNORE_CLEANUP_STEP": "1",
                      "PYTHONPATH": str(HERE / "worker_stand_ins"),
                      "LOG_LEVEL": "INFO"}
        if not pid_alive("compute-worker"):
            remove_stale_job_containers()
        remove_unused_anonymous_volumes()
        mark = log_size("compute-worker")
        started = start_process("compute-worker", [
            str(worker_venv / "bin" / "celery"), "-A", "compute_worker", "worker", "-l", "info",
            "-Q", "compute-worker", "-n", "compute-worker@%h", "--concurrency=1"],
            worker_env, CHECKOUT / "compute_worker")
        if started:
            wait_for("the compute worker", lambda: log_has("compute-worker", " ready.", mark), 120,
                     LOGS / "compute-worker.log")
    timings["total"] = round(time.monotonic() - t0, 1)
    state.update({"site": f"http://127.0.0.1:{SITE_PORT}", "s3": f"http://127.0.0.1:{S3_PORT}",
                  "commit": commit, "home": str(HOME), "images": list(args.image or DEFAULT_IMAGES),
                  "last_up": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "last_up_timings": timings})
    if "first_up_timings" not in state:
        state["first_up_timings"] = timings
    save_state(state)
    log(f"Codabench {commit[:12]} is up at {state['site']} (S3 at {state['s3']}); took {timings['total']} s")
    return 0


def status(_: argparse.Namespace) -> int:
    state = load_state()
    print(json.dumps(state, indent=2, sort_keys=True))
    for name in ("s3", "django", "site-worker", "compute-worker"):
        pid = pid_alive(name)
        print(f"{name:15s} {'running pid ' + str(pid) if pid else 'stopped'}  log {LOGS / (name + '.log')}")
    site = state.get("site")
    up_ = bool(site) and http_ok(site + "/api/")
    print(f"site API: {'answers' if up_ else 'does not answer'}")
    return 0 if up_ else 1


def down(args: argparse.Namespace) -> int:
    for name in ("compute-worker", "site-worker", "django", "s3"):
        if not args.only or name in args.only:
            stop_process(name)
    log("the system services (postgresql, redis-server, rabbitmq-server) are left running")
    return 0


def admin(args: argparse.Namespace) -> int:
    """Run ``admin_ops.py OP JSON`` inside the site's environment (the ORM)."""
    if not ENV_FILE.is_file():
        raise SetupError(f"{ENV_FILE} is missing: run `site.py up` first.")
    env = {**os.environ}
    for line in ENV_FILE.read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    env["PYTHONPATH"] = f"{CHECKOUT / 'src'}:{CHECKOUT / 'src' / 'apps'}"
    proc = subprocess.run([str(HOME / "venv-site" / "bin" / "python"), str(HERE / "admin_ops.py"), args.op,
                           args.payload], cwd=CHECKOUT / "src", env=env)
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("up", help="set up (idempotent) and start everything")
    p.add_argument("--src", help="a Codabench git repository (clone or bare) holding the commit "
                   "(default: $CODABENCH_SRC; not needed once the checkout exists)")
    p.add_argument("--commit", default=PINNED_COMMIT, help=f"the Codabench commit (default {PINNED_COMMIT})")
    p.add_argument("--image", action="append", help="a competition image to build a stand-in of "
                   f"(repeatable; default {', '.join(DEFAULT_IMAGES)})")
    p.set_defaults(func=up)
    sub.add_parser("status", help="what runs, the addresses and timings").set_defaults(func=status)
    p = sub.add_parser("down", help="stop the processes `up` started")
    p.add_argument("--only", nargs="+", choices=("compute-worker", "site-worker", "django", "s3"),
                   help="stop only these (then `up` starts them again)")
    p.set_defaults(func=down)
    p = sub.add_parser("admin", help="an ORM operation of admin_ops.py (prints JSON)")
    p.add_argument("op")
    p.add_argument("payload", nargs="?", default="{}")
    p.set_defaults(func=admin)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SetupError as exc:
        log(f"ERROR: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
