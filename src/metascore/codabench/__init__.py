"""From a live Codabench competition to the final ranking.

- :mod:`~metascore.codabench.client`: HTTP (token, timeouts, retries, one-line errors).
- :mod:`~metascore.codabench.api`: the platform's payloads, parsed and checked.
- :mod:`~metascore.codabench.pull`: exports -> a scoring-output tree, manifest and config.
- :mod:`~metascore.codabench.submit`: zip, upload and submit to the meta phase; wait.
- :mod:`~metascore.codabench.cli`: ``metascore codabench pull | rank | submit``.
"""

from .client import Client, PlatformError, read_token
from .pull import Pulled, pull
from .submit import submit

__all__ = ["Client", "PlatformError", "Pulled", "pull", "read_token", "submit"]
