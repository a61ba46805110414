"""The container side of ``site.py``: the engine, the competition images' stand-ins, the
compute worker's folder and the job containers an earlier worker left."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys

from site_base import BASE_IMAGE, HOME, LOGS, PODMAN_SOCK, REPO, WORKER_DIR, SetupError, log, sh

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
    code = ("import sys; from metascore.bundle.worker.pyenv import packages_for; "
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
    digest = hashlib.sha256((text + BASE_IMAGE).encode()).hexdigest()[:16]
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


def remove_unused_anonymous_volumes() -> None:
    """Remove the anonymous volumes no container uses any more.

    Through podman's Docker-compatible API, each job container the compute worker creates
    leaves an anonymous volume (about 45 per variant of the test, 700 per run of both
    files); the worker never removes them. Podman allocates a lock per volume, 2048 in all:
    past that, creating a container fails ("exceeded num_locks (2048)") and every job waits
    for its time limit. Docker has no such limit. Named volumes and volumes in use stay.
    """
    proc = sh(["podman", "volume", "ls", "--filter", "dangling=true",
               "--format", "{{.Name}} {{.Anonymous}}"], check=False)
    unused = [line.split()[0] for line in proc.stdout.splitlines()
              if len(line.split()) == 2 and line.split()[1] == "true"]
    for start in range(0, len(unused), 200):
        sh(["podman", "volume", "rm", *unused[start:start + 200]], check=False)
    if unused:
        log(f"removed {len(unused)} unused anonymous volume(s) left by earlier job containers")


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
