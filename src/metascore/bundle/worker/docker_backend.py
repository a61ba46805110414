"""The Docker backend: run a step in a container, as the compute worker does.

:class:`DockerBackend` talks to a Docker-compatible engine (Docker, or podman's API
service) through the ``docker`` Python SDK, found with :func:`docker.from_env`, so
``DOCKER_HOST`` is honoured. Each step becomes one container with the worker's settings
(``compute_worker.py: _run_program_directory``):

- the command string split with :func:`shlex.split`
  (:func:`~metascore.bundle.worker.backend.split_command`) and run **without a shell**;
- the step's mounts as bind volumes (``ro`` or ``rw``), its working directory and its
  environment (``PYTHONUNBUFFERED=1``);
- the worker's 14 dropped capabilities and ``no-new-privileges`` (plus ``label=disable``
  under podman, which the worker uses there instead);

and, stricter than the worker's defaults: no network unless ``network=True`` (the worker
enables it unless ``COMPETITION_CONTAINER_NETWORK_DISABLED=true``); under podman the mounts
``nosuid,nodev`` (Docker's API has no such option for a bind: there ``no-new-privileges``
keeps a set-id file from giving anything, and the worker emulation clears what a job leaves
afterwards, :mod:`metascore.bundle.worker.leftovers`); and the job's limits
(:class:`~metascore.bundle.worker.limits.Limits`): memory and process count given to the engine,
and what the container writes watched from here: the growth of every writable mount and of
the container's own writable layer (its ``/tmp``, ``/root``, ...: the engine's ``UpperDir``
folder where this process can read it, else the ``SizeRw`` the engine reports), with the
deleted files the container's processes hold open (the container is killed above the cap).
No ``ulimit`` is set: with any, podman fills in its own defaults for the others, which can
exceed what its service may grant, and the container cannot start. So the size of one file,
which the local backend caps with ``RLIMIT_FSIZE``, is capped by the watch: a file in a
writable folder that claims more than ``--disk-limit`` (a sparse file of 1 TiB holds a few
KB) fails the job as the local backend's limit does, and its output is not kept.

The output is read through an attach made before the container starts, demultiplexed here
in large chunks into capped files (:mod:`metascore.bundle.worker.logs`); the engine keeps no log of
its own (log driver ``none``), so a flood fills neither the engine's disk nor this
process's memory.

Steps given together to :meth:`DockerBackend.run_many` (ingestion and program of one job)
run concurrently under one shared timer, like the worker's ``asyncio.gather`` under one
``signal.alarm``. A step still running at the deadline is killed; its result has
``timed_out=True`` and ``exit_code=None`` (the worker emulation adds the platform's message).
Containers are always removed, also after errors and time-outs.

File ownership: the container runs as the host user (``uid:gid``) on a rootful engine, and
as the container's root on a rootless one (which maps to the host user), so whatever the
step writes into a mount can be read and removed on the host afterwards. On Codabench the
image's own default user runs instead; pass ``user=None`` to do the same.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigError, MetascoreError
from .backend import Capabilities, StepResult, StepSpec, split_command
from .limits import WATCH_INTERVAL, JobWatch, Limits, format_size, limit_error, parse_size
from .logs import CappedLog, tail

__all__ = ["DockerBackend", "STEP_LABEL", "WORKER_CAP_DROP", "connect"]

#: Capabilities the Codabench compute worker drops from every competition container.
WORKER_CAP_DROP = (
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
)

#: Label on every container the backend creates (value: the step's name).
STEP_LABEL = "org.metascore.step"

_HOST_USER = "host"


def _engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unset, so the default unix:///var/run/docker.sock"


def connect() -> Any:
    """A ``docker`` client for the engine named by ``DOCKER_HOST``, checked with a ping.

    Raises
    ------
    MetascoreError
        When the ``docker`` SDK is not installed or no engine answers.
    """
    try:
        import docker
    except ImportError:
        raise MetascoreError(
            "the docker backend needs the docker Python SDK: pip install 'metascore[docker]'."
        ) from None
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # DockerException, requests errors: all mean "not reachable"
        raise MetascoreError(
            f"no container engine is reachable (DOCKER_HOST={_engine_address()}): "
            f"{str(exc).strip() or type(exc).__name__}; start Docker or podman's API service "
            "and set DOCKER_HOST, or use the local backend."
        ) from None
    return client


class DockerBackend:
    """Run steps in containers (see the module docstring for the settings).

    Parameters
    ----------
    image : str, optional
        Image for every step; by default each step's ``StepSpec.image``.
    network : bool
        Give containers a network (the worker's default); ``False`` (default) runs them
        with ``network_mode="none"``.
    memory : str or None
        Memory limit (``"2g"``, ``"512m"``; default: that of
        :class:`~metascore.bundle.worker.limits.Limits`); ``None`` for none, as on the worker.
        Ignored when ``limits`` is given.
    client : docker.DockerClient, optional
        An existing client; by default :func:`connect` makes one from ``DOCKER_HOST``.
    user : str or None
        ``"host"`` (default): the host user, so the files written in mounts belong to it.
        ``None``: the image's default user, as on Codabench. Anything else is passed to the
        engine (``"1000:1000"``, ``"metascore"``).
    limits : Limits, optional
        The per-job limits; by default :class:`~metascore.bundle.worker.limits.Limits` with ``memory``.
    """

    name = "docker"
    #: the containers have the worker's layout and isolation: nothing to say once per run
    notice = ""
    #: the programs run in containers of the competition's image, isolated
    capabilities = Capabilities(runs_image=True)

    def __init__(
        self,
        image: str | None = None,
        network: bool = False,
        memory: str | None = format_size(Limits.memory),
        client: Any = None,
        user: str | None = _HOST_USER,
        limits: Limits | None = None,
    ) -> None:
        self.image = image
        self.network = network
        self.limits = limits or Limits(memory=parse_size(memory) if memory else None)
        self.memory = format_size(self.limits.memory) if self.limits.memory else None
        self.client = client if client is not None else connect()
        self._user = user
        self._engine: dict[str, bool] | None = None
        self._ready_images: set[str] = set()
        self._lock = threading.Lock()

    # -- engine facts ------------------------------------------------------------------------
    def _engine_facts(self) -> dict[str, bool]:
        if self._engine is None:
            components = self.client.version().get("Components") or []
            podman = any("podman" in str(c.get("Name", "")).lower() for c in components)
            options = self.client.info().get("SecurityOptions") or []
            rootless = any("rootless" in str(o) for o in options)
            self._engine = {"podman": podman, "rootless": rootless}
        return self._engine

    @property
    def user(self) -> str | None:
        """The ``user`` containers run as (``None``: the image's default)."""
        if self._user != _HOST_USER:
            return self._user
        if self._engine_facts()["rootless"]:
            return "0:0"  # the container's root is the host user on a rootless engine
        if not hasattr(os, "getuid"):  # Windows: Docker Desktop maps ownership itself
            return None
        return f"{os.getuid()}:{os.getgid()}"

    def describe(self, image: str | None) -> str:
        """One line: the image the programs run in, and the engine that runs them."""
        facts = self._engine_facts()
        engine = ("podman" if facts["podman"] else "Docker") + (" (rootless)" if facts["rootless"] else "")
        shown = self.image or image or "no image (set docker_image in competition.yaml or --image)"
        return (f"docker backend: the programs run in containers of {shown} on {engine} "
                f"(DOCKER_HOST={_engine_address()})")

    def check_run(self, out: Path, image: str | None) -> None:
        """Nothing to refuse up front: the engine runs each job as its container's user."""

    # -- images ------------------------------------------------------------------------------
    def image_for(self, step: StepSpec) -> str:
        """The image a step runs in, pulled if it is not present."""
        image = self.image or step.image
        if not image:
            raise ConfigError(
                f"{step.name}: no docker image; set docker_image in competition.yaml or "
                "pass an image to the docker backend."
            )
        with self._lock:
            if image not in self._ready_images:
                self._ensure_image(image)
                self._ready_images.add(image)
        return image

    def _ensure_image(self, image: str) -> None:
        import docker.errors

        try:
            self.client.images.get(image)
            return
        except docker.errors.ImageNotFound:
            pass
        try:
            self.client.images.pull(image)
        except docker.errors.APIError as exc:
            raise MetascoreError(
                f"docker image {image!r} is not on this engine and cannot be pulled "
                f"({exc.explanation or exc}); build or pull it first."
            ) from None

    # -- running -----------------------------------------------------------------------------
    def run(self, step: StepSpec) -> StepResult:
        return self.run_many([step], step.time_limit)[0]

    def run_many(self, steps: list[StepSpec], time_limit: float) -> list[StepResult]:
        """Run the steps concurrently; kill those still running after ``time_limit`` s."""
        configs = [self._container_config(step) for step in steps]  # errors before starting
        containers: list[Any] = []
        with tempfile.TemporaryDirectory(prefix="metascore-docker-") as tmp:
            try:
                for step, config in zip(steps, configs):
                    containers.append(_create(self.client, step, config))
                runs = [_Run(c, step, self.limits, Path(tmp) / str(i))
                        for i, (c, step) in enumerate(zip(containers, steps))]
                for run in runs:
                    run.start()
                deadline = time.monotonic() + time_limit  # each step has had its whole time once started
                while time.monotonic() < deadline and not all(run.finished.is_set() for run in runs):
                    time.sleep(WATCH_INTERVAL)
                    for run in runs:
                        run.watch()
                for run in runs:
                    if not run.finished.is_set():
                        run.kill("time")
                return [run.result(self.memory) for run in runs]
            finally:
                for container in containers:
                    _remove(container)

    def _container_config(self, step: StepSpec) -> dict[str, Any]:
        import docker.types

        command = split_command(step)
        security = ["no-new-privileges"]
        if self._engine_facts()["podman"]:
            security.append("label=disable")
        config: dict[str, Any] = {
            "image": self.image_for(step),
            "command": command,
            "working_dir": step.working_dir,
            "environment": dict(step.env),
            "labels": {STEP_LABEL: step.name},
            # the output is read through the attach stream: no second copy in the engine's log
            "log_config": docker.types.LogConfig(type="none"),
            "cap_drop": list(WORKER_CAP_DROP),
            "security_opt": security,
            "detach": True,
            "stdin_open": False,
            "tty": False,
        }
        if self._engine_facts()["podman"]:  # bind options Docker's API does not take
            config["binds"] = [f"{m.host_path.resolve()}:{m.container_path}:{'ro' if m.read_only else 'rw'},"
                               "nosuid,nodev" for m in step.mounts]
        else:  # a list: one host folder may be mounted at several places
            config["mounts"] = [docker.types.Mount(m.container_path, str(m.host_path.resolve()), type="bind",
                                                   read_only=m.read_only) for m in step.mounts]
        if not self.network:
            config["network_mode"] = "none"
        limits = self.limits
        if limits.memory:
            config["mem_limit"] = config["memswap_limit"] = self.memory  # no swap on top
        if limits.processes:
            config["pids_limit"] = limits.processes
        if self.user is not None:
            config["user"] = self.user
        return config


@dataclass
class _Outcome:
    exit_code: int | None = None
    error: str = ""
    ended: float | None = None


class _Run:
    """One created container, waited for in a thread, watched for its disk cap."""

    def __init__(self, container: Any, step: StepSpec, limits: Limits, base: Path) -> None:
        self.container, self.step, self.limits = container, step, limits
        self.logs = [CappedLog(step.stdout_path or base.with_suffix(".out"), limits.log),
                     CappedLog(step.stderr_path or base.with_suffix(".err"), limits.log)]
        self._reader: threading.Thread | None = None
        self.finished = threading.Event()
        self.outcome = _Outcome()
        self.killed: str | None = None
        self.started = 0.0
        writable = [m.host_path for m in step.mounts if not m.read_only]
        # the disk cap (the engine has the rest): the mounts and the container's own layer,
        # its folder where this process can read it, else the size the engine reports
        layer = _layer_folder(container)
        self.watcher = JobWatch(None, writable + ([layer] if layer else []), limits,
                                elsewhere=None if layer else lambda: _layer_size(container))
        self._thread = threading.Thread(target=self._wait, daemon=True)

    def start(self) -> None:
        import docker.errors

        try:  # attached before the start: nothing is missed, and nothing is held in memory
            reader = _attach(self.container)
            self._reader = threading.Thread(target=self._read, args=(reader,), daemon=True)
            self._reader.start()
        except Exception:  # no attach on this engine: the logs are fetched at the end
            self._reader = None
        self.started = time.monotonic()
        try:
            self.container.start()
        except docker.errors.APIError as exc:  # e.g. the executable is not in the image
            reason = f"cannot start the container: {exc.explanation or exc}"
            self.outcome = _Outcome(127, reason, time.monotonic())
            self.finished.set()
            return
        self._thread.start()
        try:  # its processes, for the deleted files they hold open (counted as written)
            self.container.reload()
            self.watcher.root = int(self.container.attrs["State"]["Pid"]) or None
        except Exception:  # gone already, or an engine that does not say
            pass

    def _wait(self) -> None:
        try:
            status = self.container.wait()  # no HTTP time-out: returns when the container exits
            self.outcome.exit_code = int(status.get("StatusCode", -1))
            error = status.get("Error") or {}
            self.outcome.error = error.get("Message", "") if isinstance(error, dict) else str(error)
        except Exception as exc:  # engine gone, container removed under us
            self.outcome.error = f"waiting for the container failed: {exc}"
        finally:
            self.outcome.ended = time.monotonic()
            self.finished.set()

    def _read(self, reader: Callable[[], bytes]) -> None:
        try:
            _demux(reader, self.logs)
        except Exception as exc:  # the connection broke: say so in the log
            self.logs[1].write(f"(log stream interrupted: {exc})\n".encode())

    def watch(self) -> None:
        """Kill the container when its writable folders grew past the disk cap (or hold
        more files than it allows)."""
        broken = None if self.finished.is_set() else self.watcher.disk_exceeded(now=False)
        if broken:
            self.kill(broken)

    def kill(self, why: str) -> None:
        import docker.errors

        try:
            self.container.kill()
            self.killed = why
        except docker.errors.APIError:  # it exited between the deadline and the kill
            pass
        self.finished.wait(10)  # the waiting thread returns once the container is dead

    def result(self, memory: str | None) -> StepResult:
        logs = self.logs
        if self._reader is not None:
            self._reader.join(30)  # the stream ends with the container
        else:
            _stream_logs(self.container, logs)
        for log in logs:
            log.close()
        stderr = tail(logs[1].path)
        code = None if self.killed else self.outcome.exit_code
        killed, message = self.killed, ""
        if self.outcome.error and not self.killed:
            logs[1].append(self.outcome.error)
        elif code == 137 and memory:
            killed = "memory"
            logs[1].append(_sigkill_message(self.container, memory))
        elif code not in (0, None):
            killed = limit_error(stderr, self.limits)
        if killed is None:
            killed = self.watcher.disk_exceeded()  # filled between two looks
        if killed not in (None, "time"):
            message = self.limits.message(killed)
            if self.killed:
                logs[1].append(f"metascore: killed: {message}")
        ended = self.outcome.ended if self.outcome.ended is not None else time.monotonic()
        return StepResult(
            exit_code=code,
            timed_out=killed == "time",
            stdout=tail(logs[0].path),
            stderr=tail(logs[1].path),
            elapsed=ended - self.started,
            killed=killed,
            message=message,
        )


#: The settings of :meth:`DockerBackend._container_config` that go into the host config.
_HOST_CONFIG = ("binds", "mounts", "cap_drop", "security_opt", "network_mode", "mem_limit",
                "memswap_limit", "pids_limit", "log_config")


def _create(client: Any, step: StepSpec, config: dict[str, Any]) -> Any:
    """The container, created through the low-level API (the SDK's ``containers.create``
    declares each bind's target with its options as a volume, which podman refuses)."""
    import docker.errors

    host = {key: config[key] for key in _HOST_CONFIG if key in config}
    settings = {key: value for key, value in config.items() if key not in _HOST_CONFIG}
    try:
        created = client.api.create_container(host_config=client.api.create_host_config(**host), **settings)
    except docker.errors.APIError as exc:
        raise MetascoreError(
            f"{step.name}: the engine refused to create the container ({exc.explanation or exc})."
        ) from None
    try:
        return client.containers.get(created["Id"])
    except Exception:  # the engine lost it at once: leave nothing behind
        client.api.remove_container(created["Id"], force=True)
        raise


def _layer_folder(container: Any) -> Path | None:
    """The folder of the container's writable layer (``GraphDriver.Data.UpperDir``) when
    this process may read it (a root runner on a rootful engine, a rootless engine), else
    ``None``."""
    data = (container.attrs.get("GraphDriver") or {}).get("Data") or {}
    upper = data.get("UpperDir")
    if isinstance(upper, str) and os.path.isdir(upper) and os.access(upper, os.R_OK | os.X_OK):
        return Path(upper)
    return None


def _layer_size(container: Any) -> int:
    """The bytes of the container's writable layer as the engine reports them (``SizeRw``
    of an inspect with sizes: files' sizes, not the blocks they hold); 0 when unknown."""
    api = container.client.api
    try:
        info = api._result(api._get(api._url("/containers/{0}/json", container.id), params={"size": 1}), True)
        return int(info.get("SizeRw") or 0)
    except Exception:  # gone, or an engine that does not say
        return 0


def _sigkill_message(container: Any, memory: str) -> str:
    """Why a container we did not kill exited with 137 (SIGKILL)."""
    try:
        container.reload()
        oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
    except Exception:  # gone: say what is likely
        oom = False
    if oom:  # Docker reports it; podman with cgroup v1 does not
        return f"Killed: the program ran out of memory (memory limit {memory})."
    return f"Killed (SIGKILL, exit 137): most likely the memory limit of {memory} was reached."


def _attach(container: Any) -> Callable[[], bytes]:
    """Attach to the container's stdout and stderr (before it starts); returns a reader of
    raw multiplexed chunks of up to a megabyte."""
    from docker.utils.socket import read

    api = container.client.api
    response = api._post(api._url("/containers/{0}/attach", container.id),
                         headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                         params={"logs": 0, "stdout": 1, "stderr": 1, "stream": 1}, stream=True)
    api._raise_for_status(response)
    sock = api._get_raw_response_socket(response)
    return lambda: read(sock, 1 << 20)


def _stream_logs(container: Any, logs: list[CappedLog]) -> None:
    """Copy the container's stdout and stderr into ``logs`` after it ended (no attach)."""
    api = container.client.api
    try:
        response = api._get(api._url("/containers/{0}/logs", container.id),
                            params={"stdout": 1, "stderr": 1, "follow": 0}, stream=True)
        api._raise_for_status(response)
        _demux(lambda: response.raw.read(1 << 20), logs)
    except Exception as exc:  # the container vanished: report it rather than crash
        logs[1].write(f"(logs unavailable: {exc})\n".encode())


def _demux(read: Callable[[], bytes], logs: list[CappedLog]) -> None:
    """Split the engine's multiplexed stream (8-byte headers: stream 1 or 2, 0, 0, 0, size)
    into ``logs``, reading large chunks: the engine sends a frame per write of the program
    (per line under podman), too many to read one by one."""
    pending, need, target = b"", 8, None   # need: bytes of the next header or payload
    while True:
        chunk = read()
        if not chunk:
            return
        data, start = pending + chunk, 0
        while len(data) - start >= need:
            if target is None:
                target = logs[0] if data[start] == 1 else logs[1]
                start, need = start + 8, int.from_bytes(data[start + 4:start + 8], "big")
            else:
                target.write(data[start:start + need])
                start, need, target = start + need, 8, None
        if target is not None and len(data) > start:  # part of a long payload: pass it on
            target.write(data[start:])
            need -= len(data) - start
            start = len(data)
        pending = data[start:]


def _remove(container: Any) -> None:
    """Remove the container, whatever its state; an engine busy with it (podman under load
    answers "container state improper" while it stops) is asked again, a few times."""
    import docker.errors

    for attempt in range(5):
        try:
            container.remove(force=True, v=True)  # and its anonymous volumes
            return
        except docker.errors.NotFound:  # already gone
            return
        except Exception:  # busy or unreachable: try again, then give up
            time.sleep(0.2 * (attempt + 1))
