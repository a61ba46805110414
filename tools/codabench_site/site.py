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
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PINNED_COMMIT = "c7dbc756b07b133f8e552ae626fab54817ed93f3"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HOME = Path(os.environ.get("CODABENCH_SITE_HOME", "/var/tmp/metascore-codabench-site"))
PYTHON313 = os.environ.get("CODABENCH_SITE_PYTHON", "/root/.pyenv/versions/3.13.0/bin/python3.13")
SITE_PORT = int(os.environ.get("CODABENCH_SITE_PORT", "8347"))
S3_PORT = int(os.environ.get("CODABENCH_SITE_S3_PORT", "9347"))
PODMAN_SOCK = os.environ.get("CODABENCH_SITE_PODMAN_SOCK", "/run/podman/podman.sock")
BASE_IMAGE = os.environ.get("METASCORE_BASE_IMAGE", "localhost/python-base:bookworm")
#: the competition images built locally (the template's ``docker_image``)
DEFAULT_IMAGES = ("codalab/codalab-legacy:py312",)
#: the compute worker's hard-coded base folder (``BASE_DIR``); HOST_DIRECTORY must equal it
WORKER_DIR = Path("/codabench")
APT_PACKAGES = ("postgresql", "redis-server", "rabbitmq-server")

CHECKOUT = HOME / "codabench"
LOGS = HOME / "logs"
RUN = HOME / "run"
STATE = HOME / "state.json"
ENV_FILE = HOME / "site.env"


# ----------------------------------------------------------------------------- logging

_T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[site {time.monotonic() - _T0:6.1f}s] {message}", flush=True)


class SetupError(RuntimeError):
    """A step of the setup failed; the message says which and where its log is."""


def sh(cmd: list[str] | str, *, check: bool = True, env: dict | None = None, cwd: Path | None = None,
       capture: bool = True, timeout: float | None = 1800) -> subprocess.CompletedProcess:
    shown = cmd if isinstance(cmd, str) else shlex.join(str(c) for c in cmd)
    proc = subprocess.run(cmd, shell=isinstance(cmd, str), env=env, cwd=cwd, text=True,
                          capture_output=capture, timeout=timeout)
    if check and proc.returncode != 0:
        tail = "\n".join(((proc.stdout or "") + (proc.stderr or "")).strip().splitlines()[-25:])
        raise SetupError(f"`{shown}` exited {proc.returncode}:\n{tail}")
    return proc


# ----------------------------------------------------------------------------- state

def load_state() -> dict:
    try:
        return json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {}


def save_state(state: dict) -> None:
    tmp = STATE.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True))
    tmp.replace(STATE)


class Timer:
    """Records how long each step took into ``timings`` (seconds)."""

    def __init__(self, timings: dict) -> None:
        self.timings = timings

    def __call__(self, name: str):
        timer = self

        class _Step:
            def __enter__(self):
                self.start = time.monotonic()
                log(f"--> {name}")

            def __exit__(self, exc_type, *_):
                took = round(time.monotonic() - self.start, 1)
                timer.timings[name] = took
                log(f"<-- {name}: {'failed after ' if exc_type else ''}{took} s")

        return _Step()


# ----------------------------------------------------------------------------- steps

def ensure_apt() -> None:
    missing = [p for p in APT_PACKAGES
               if sh(["dpkg-query", "-W", "-f=${Status}", p], check=False).stdout.strip() != "install ok installed"]
    if not missing:
        log("apt packages already installed: " + ", ".join(APT_PACKAGES))
        return
    log("apt-get install " + " ".join(missing))
    sh("apt-get update -qq")
    sh(["apt-get", "install", "-y", "-qq", *missing],
       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def ensure_checkout(src: str | None, commit: str) -> str:
    if (CHECKOUT / ".git").exists():
        head = sh(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"]).stdout.strip()
        if head == commit:
            log(f"checkout {CHECKOUT} already at {commit[:12]}")
            return head
        if not src:
            raise SetupError(f"{CHECKOUT} is at {head[:12]}, not {commit[:12]}; give --src (or "
                             "$CODABENCH_SRC) to fetch the pinned commit.")
        sh(["git", "-C", str(CHECKOUT), "fetch", "-q", src, commit])
    else:
        if not src:
            raise SetupError("no Codabench source: give --src or $CODABENCH_SRC (a clone or bare "
                             "git directory of codalab/codabench that has commit " + commit + ").")
        sh(["git", "clone", "-q", "--no-checkout", src, str(CHECKOUT)])
    sh(["git", "-C", str(CHECKOUT), "-c", "advice.detachedHead=false", "checkout", "-q", "--force", commit])
    log(f"checked out {commit} into {CHECKOUT}")
    return commit


def ensure_venv(name: str, requirements: list[str], marker_text: str) -> Path:
    """A Python 3.13 venv ``HOME/name`` with ``requirements`` (reinstalled when they change)."""
    venv = HOME / name
    marker = venv / ".installed"
    if marker.is_file() and marker.read_text() == marker_text:
        log(f"venv {name} up to date")
        return venv
    if not Path(PYTHON313).is_file():
        raise SetupError(f"Python 3.13 not found at {PYTHON313}; set CODABENCH_SITE_PYTHON.")
    if not (venv / "bin" / "python").exists():
        sh([PYTHON313, "-m", "venv", str(venv)])
    uv = ensure_uv()
    sh([str(uv), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *requirements], timeout=3600)
    marker.write_text(marker_text)
    log(f"venv {name} installed")
    return venv


def ensure_uv() -> Path:
    tools = HOME / "venv-tools"
    uv = tools / "bin" / "uv"
    if not uv.exists():
        sh([PYTHON313, "-m", "venv", str(tools)])
        sh([str(tools / "bin" / "pip"), "install", "-q", "uv"])
    return uv


def locked_requirements(project: Path, out: Path) -> Path:
    """The exact versions of ``project/uv.lock`` (no dev group) as a requirements file."""
    proc = sh([str(ensure_uv()), "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project",
               "--format", "requirements-txt"], cwd=project)
    out.write_text(proc.stdout)
    return out


def ensure_env_file() -> dict[str, str]:
    """The site's environment (secrets generated once, mode 600, never in the repository)."""
    values: dict[str, str] = {}
    if ENV_FILE.is_file():
        for line in ENV_FILE.read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                values[key] = value
    secret = values.get("SECRET_KEY") or secrets.token_urlsafe(40)
    db_password = values.get("DB_PASSWORD") or secrets.token_hex(16)
    s3_key = values.get("AWS_SECRET_ACCESS_KEY") or secrets.token_hex(16)
    site = f"http://127.0.0.1:{SITE_PORT}"
    values = {
        "DJANGO_SETTINGS_MODULE": "settings.develop",
        "DEBUG": "False",  # True needs the dev group (debug_toolbar)
        "SECRET_KEY": secret,
        "DOMAIN_NAME": f"localhost:{SITE_PORT}",
        "SITE_DOMAIN": site,
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
        "SUBMISSIONS_API_URL": f"{site}/api",
        "MAX_EXECUTION_TIME_LIMIT": "600",
        "DB_HOST": "127.0.0.1", "DB_PORT": "5432", "DB_NAME": "codabench",
        "DB_USERNAME": "codabench", "DB_PASSWORD": db_password,
        "DATABASE_URL": f"postgres://codabench:{db_password}@127.0.0.1:5432/codabench",
        "REDIS_URL": "redis://127.0.0.1:6379",
        "RABBITMQ_HOST": "127.0.0.1", "RABBITMQ_PORT": "5672",
        "RABBITMQ_DEFAULT_USER": "guest", "RABBITMQ_DEFAULT_PASS": "guest",
        "BROKER_URL": "pyamqp://guest:guest@127.0.0.1:5672//",
        "STORAGE_TYPE": "s3",
        "AWS_ACCESS_KEY_ID": "metascore-site", "AWS_SECRET_ACCESS_KEY": s3_key,
        "AWS_STORAGE_BUCKET_NAME": "public", "AWS_STORAGE_PRIVATE_BUCKET_NAME": "private",
        "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{S3_PORT}/",
        "AWS_QUERYSTRING_AUTH": "False", "S3_USE_SIGV4": "true",
        "AWS_DEFAULT_REGION": "us-east-1",
        "TEMP_SUBMISSION_STORAGE": str(HOME / "django-tmp"),
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        "ENABLE_SIGN_UP": "True", "ENABLE_SIGN_IN": "True",
        "LOG_LEVEL": "INFO",
    }
    ENV_FILE.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    ENV_FILE.chmod(0o600)
    return values


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_for(what: str, ready, timeout: float, logfile: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    hint = f"; see {logfile}" if logfile else ""
    raise SetupError(f"{what} is not ready after {timeout:g} s{hint}")


def ensure_services() -> None:
    # postgresql: the Debian cluster (the newest installed major version)
    clusters = sh(["pg_lsclusters", "-h"]).stdout.split()
    if len(clusters) < 4:
        raise SetupError("no PostgreSQL cluster (pg_lsclusters shows none); reinstall postgresql.")
    version, name, status = clusters[0], clusters[1], clusters[3]
    if status != "online":
        sh(["pg_ctlcluster", version, name, "start"])
        log(f"postgresql {version}/{name} started")
    else:
        log(f"postgresql {version}/{name} already online")
    if not port_open(6379):
        sh("/etc/init.d/redis-server start", check=False)  # ulimit warnings, not errors
        wait_for("redis-server", lambda: port_open(6379), 20)
        log("redis-server started")
    else:
        log("redis-server already up")
    if not port_open(5672):
        sh("/etc/init.d/rabbitmq-server start")
        wait_for("rabbitmq-server", lambda: port_open(5672), 60)
        log("rabbitmq-server started")
    else:
        log("rabbitmq-server already up")


def ensure_database(env: dict[str, str]) -> None:
    user, password, db = env["DB_USERNAME"], env["DB_PASSWORD"], env["DB_NAME"]

    def psql(sql: str) -> str:
        return sh(["su", "postgres", "-c", "psql -tAq -v ON_ERROR_STOP=1 -c " + shlex.quote(sql)]).stdout.strip()

    if psql(f"SELECT 1 FROM pg_roles WHERE rolname='{user}'") != "1":
        psql(f"CREATE ROLE {user} LOGIN CREATEDB PASSWORD '{password}'")
    else:
        psql(f"ALTER ROLE {user} PASSWORD '{password}'")
    if psql(f"SELECT 1 FROM pg_database WHERE datname='{db}'") != "1":
        psql(f"CREATE DATABASE {db} OWNER {user}")
        log(f"database {db} created")


# ----------------------------------------------------------------------------- processes

def pid_alive(name: str) -> int | None:
    try:
        pid = int((RUN / f"{name}.pid").read_text())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    try:  # not a recycled pid: our process group leader
        if os.getpgid(pid) != pid:
            return None
    except OSError:
        return None
    return pid


def start_process(name: str, cmd: list[str], env: dict[str, str], cwd: Path) -> bool:
    """Start ``cmd`` in its own session unless it runs already; True when started now."""
    if pid_alive(name):
        log(f"{name} already running (pid {pid_alive(name)})")
        return False
    logfile = LOGS / f"{name}.log"
    with open(logfile, "ab") as out:
        out.write(f"\n===== {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(cmd)}\n".encode())
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    (RUN / f"{name}.pid").write_text(str(proc.pid))
    log(f"{name} started (pid {proc.pid}, log {logfile})")
    return True


def log_has(name: str, text: str, since: int) -> bool:
    try:
        with open(LOGS / f"{name}.log", "rb") as f:
            f.seek(since)
            return text.encode() in f.read()
    except OSError:
        return False


def log_size(name: str) -> int:
    try:
        return (LOGS / f"{name}.log").stat().st_size
    except OSError:
        return 0


def stop_process(name: str) -> None:
    pid = pid_alive(name)
    if not pid:
        log(f"{name} not running")
        return
    os.killpg(pid, signal.SIGTERM)
    for _ in range(40):
        if not pid_alive(name):
            break
        time.sleep(0.25)
    else:
        os.killpg(pid, signal.SIGKILL)
    (RUN / f"{name}.pid").unlink(missing_ok=True)
    log(f"{name} stopped")


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as r:
            return r.status < 500
    except urllib.error.HTTPError as e:
        return e.code < 500
    except OSError:
        return False


# ----------------------------------------------------------------------------- images

LEGACY_DOCKERFILE = """\
ARG BASE_IMAGE=localhost/python-base:bookworm
FROM ${{BASE_IMAGE}}
RUN python3 -m venv /opt/legacy && /opt/legacy/bin/pip install --no-cache-dir {packages}
ENV PATH=/opt/legacy/bin:$PATH PYTHONUNBUFFERED=1
WORKDIR /app/program
LABEL org.metascore.stand-in-for="{image}"
"""


def image_packages(image: str) -> list[str]:
    code = ("import sys; from metascore.bundle.pyenv import packages_for; "
            "print('\\n'.join(packages_for(sys.argv[1]) or ()))")
    proc = sh([sys.executable, "-c", code, image], env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    packages = proc.stdout.split()
    if not packages:
        raise SetupError(f"metascore knows no package list for {image}; cannot build its stand-in.")
    return packages


def full_name(image: str) -> str:
    first = image.split("/", 1)[0]
    if "/" not in image or ("." not in first and ":" not in first and first != "localhost"):
        image = "docker.io/" + (image if "/" in image else "library/" + image)
    return image


def ensure_image(image: str, build_opts: list[str]) -> None:
    """Build a stand-in of ``image`` (which cannot be pulled here) under its own name."""
    text = LEGACY_DOCKERFILE.format(packages=" ".join(shlex.quote(p) for p in image_packages(image)), image=image)
    digest = __import__("hashlib").sha256((text + BASE_IMAGE).encode()).hexdigest()[:16]
    name = full_name(image)
    got = sh(["podman", "image", "inspect", "--format", '{{ index .Labels "org.metascore.stand-in-hash" }}', name],
             check=False)
    if got.returncode == 0 and got.stdout.strip() == digest:
        log(f"image {name} (stand-in) up to date")
        return
    context = HOME / "images" / digest
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(text)
    logfile = LOGS / f"image-{digest}.log"
    log(f"building the stand-in of {image} as {name} (log {logfile})")
    cmd = ["podman", "build", "-t", name, "--label", f"org.metascore.stand-in-hash={digest}",
           "--build-arg", f"BASE_IMAGE={BASE_IMAGE}", *build_opts, str(context)]
    with open(logfile, "w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, timeout=3600).returncode
    if rc != 0:
        raise SetupError(f"building {name} failed; see {logfile}")


def ensure_engine() -> None:
    if sh(["curl", "-s", "--unix-socket", PODMAN_SOCK, "http://d/_ping"], check=False).stdout == "OK":
        log(f"podman API answers on {PODMAN_SOCK}")
        return
    script = REPO.parent / "shared" / "tools" / "container-engine.sh"
    if not script.is_file():
        raise SetupError(f"no container engine answers on {PODMAN_SOCK} and {script} is missing; "
                         "start podman's API service (podman system service --time=0 unix://...).")
    log(f"starting the container engine with {script}")
    sh(["bash", str(script)], env={**os.environ, "PODMAN_SOCK": PODMAN_SOCK})


def remove_stale_job_containers() -> None:
    """Remove the stopped job containers an earlier compute worker left behind.

    The worker names a job's containers ``scoring_uPK-<user>_sID-<submission>`` and
    ``ingestion_...``; a job that failed half-way leaves them, and after the database is
    made anew the same names come back: creating the container then fails, the worker does
    not log why, and the job waits for its time limit. Only stopped containers with those
    names are removed, before this site's compute worker starts.
    """
    proc = sh(["podman", "ps", "-a", "--format", "{{.ID}} {{.Names}} {{.State}}"], check=False)
    stale = [line.split()[0] for line in proc.stdout.splitlines()
             if len(line.split()) >= 3 and line.split()[1].startswith(("scoring_uPK-", "ingestion_uPK-"))
             and line.split()[2].lower() != "running"]
    for cid in stale:
        sh(["podman", "rm", "-f", cid], check=False)
    if stale:
        log(f"removed {len(stale)} stopped job container(s) of an earlier compute worker")


def ensure_worker_dir() -> None:
    target = HOME / "worker"
    target.mkdir(exist_ok=True)
    if WORKER_DIR.is_symlink():
        if WORKER_DIR.resolve() != target.resolve():
            raise SetupError(f"{WORKER_DIR} links to {WORKER_DIR.resolve()}, not {target}; remove it.")
    elif WORKER_DIR.exists():
        log(f"{WORKER_DIR} exists as a folder; the compute worker uses it as it is")
    else:
        WORKER_DIR.symlink_to(target)
        log(f"{WORKER_DIR} -> {target} (the compute worker's fixed base folder)")


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
