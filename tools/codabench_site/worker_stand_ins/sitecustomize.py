"""Stand-ins in the compute worker for image pulls (no registry is reachable here) and for
two answers of podman's Docker-compatible API that differ from Docker's (below).

Codabench's compute worker pulls the competition image before every job
(``Run._get_container_image`` -> ``docker.APIClient.pull``), and podman's compatible API
always asks the registry. This module, put first on the worker's ``PYTHONPATH`` by
``site.py``, wraps ``APIClient.pull``: when the image is already in the local store (the
stand-in ``site.py`` built under the image's own name), the pull answers as a registry
would for an up-to-date image, without a network request; otherwise the real pull runs
(and fails here as it would on a worker that cannot reach the registry). The worker's code
is not changed.
"""

import json
import logging
import time

try:
    import docker.api.image as _image_api
    import docker.errors as _errors
except ImportError:  # not the worker's environment
    _image_api = None

if _image_api is not None:
    _real_pull = _image_api.ImageApiMixin.pull
    _log = logging.getLogger("metascore.site.pull-stand-in")

    def _pull(self, repository, tag=None, stream=False, auth_config=None, decode=False,
              platform=None, all_tags=False):
        name = repository if tag is None or ":" in repository.rsplit("/", 1)[-1] else f"{repository}:{tag}"
        try:
            self.inspect_image(name)
        except _errors.APIError:
            return _real_pull(self, repository, tag=tag, stream=stream, auth_config=auth_config,
                              decode=decode, platform=platform, all_tags=all_tags)
        _log.warning("pull stand-in: %s is in the local image store; no registry request", name)
        status = {"status": f"Status: Image is up to date for {name}"}
        if stream:
            return iter([status] if decode else [(json.dumps(status) + "\n").encode()])
        return status["status"]

    _image_api.ImageApiMixin.pull = _pull


# Docker vs podman 4.3 (Debian bookworm's): two answers of podman's Docker-compatible API
# differ from Docker's in the way the compute worker reads a finished job
# (``_run_container_engine_cmd``: stream the logs while the container runs, then
# ``attach(logs=True, demux=True)`` for the whole logs, then ``wait`` for the exit code):
# - after the container exits, Docker's non-streaming attach returns its logs; podman's
#   refuses ("container state improper") or answers with an unframed or empty stream
#   (docker-py: "41 is not a valid stream"), and the worker then records exit code 1;
# - after an attach, podman's ``wait`` often answers StatusCode -1 for a container that
#   exited 0 (the worker then fails the scoring step with "program_rc=-1").
# For those two calls only, the shim answers as Docker does, from podman's own records:
# the logs API ((stdout, stderr), None for an empty stream) and the container's recorded
# ExitCode when wait says -1. The non-streaming attach first waits up to 30 s for the
# container to stop (Docker answers at once with the logs so far; the worker waits for the
# exit right after it, so only a container still running 30 s later gives partial logs,
# as it would on Docker).
try:
    import docker.api.container as _container_api
except ImportError:
    _container_api = None

if _container_api is not None:
    _real_attach = _container_api.ContainerApiMixin.attach
    _real_wait = _container_api.ContainerApiMixin.wait

    def _attach(self, container, stdout=True, stderr=True, stream=False, logs=False, demux=False):
        if stream or not logs:
            return _real_attach(self, container, stdout=stdout, stderr=stderr, stream=stream, logs=logs,
                                demux=demux)
        _exit_code(self, container)  # the whole logs, once the container has stopped
        out = self.logs(container, stdout=True, stderr=False) if stdout else b""
        err = self.logs(container, stdout=False, stderr=True) if stderr else b""
        if demux:
            return (out or None, err or None)
        return out + err

    def _exit_code(client, container, timeout=30.0):
        """The exit code podman recorded, once the container has stopped (None: still running)."""
        deadline = time.monotonic() + timeout
        while True:
            state = client.inspect_container(container)["State"]
            finished = not str(state.get("FinishedAt") or "0001").startswith("0001")
            # podman 4.3 may show an exited container as "created" again after an attach
            if state["Status"].lower() in ("exited", "stopped") or (state["Status"].lower() == "created" and finished):
                return state["ExitCode"]
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)

    def _wait(self, container, timeout=None, condition=None):
        result = _real_wait(self, container, timeout=timeout, condition=condition)
        if isinstance(result, dict) and result.get("StatusCode") == -1:
            code = _exit_code(self, container)
            if code is not None:
                _log.warning("wait stand-in: podman answered -1; the container's recorded exit code is %s", code)
                result = {**result, "StatusCode": code}
        return result

    _container_api.ContainerApiMixin.attach = _attach
    _container_api.ContainerApiMixin.wait = _wait


# Visibility only: the worker runs each program in a coroutine gathered with
# return_exceptions=True, so an error creating its container (a name already taken, an
# engine error) is never logged, and the job then waits for its time limit. Log it; the
# error still goes where it went.
if _container_api is not None:
    _real_create = _container_api.ContainerApiMixin.create_container

    def _create_container(self, *args, **kwargs):
        try:
            return _real_create(self, *args, **kwargs)
        except Exception as exc:
            _log.error("create_container(name=%r) failed: %s: %s", kwargs.get("name"), type(exc).__name__, exc)
            raise

    _container_api.ContainerApiMixin.create_container = _create_container
