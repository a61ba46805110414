"""Stand-in for image pulls in the compute worker (no registry is reachable here).

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
