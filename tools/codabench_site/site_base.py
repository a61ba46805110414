"""Shared pieces of ``site.py``: settings, logging, state, the setup steps and the
processes it starts (see ``site.py`` and README.md beside it)."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
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
