"""From a live Codabench competition to the final ranking.

- :mod:`~metascore.codabench.client`: HTTP (token, timeouts, retries, one-line errors).
- :mod:`~metascore.codabench.api`: the platform's payloads, parsed and checked.
- :mod:`~metascore.codabench.pull`: exports -> a scoring-output tree, manifest and config.
- :mod:`~metascore.codabench.submit`: zip, sign, upload and submit to the meta phase; wait.
- :mod:`~metascore.codabench.publish`: the outcome on the "Final ranking" page and the
  Results tab.
- :mod:`~metascore.codabench.verify`: the published ranking recomputed from the public
  leaderboards, for anyone.
- their command line, ``metascore codabench phases | pull | rank | submit | sign | publish |
  verify``, is
  :mod:`metascore.cli.codabench`.

Nothing is imported here, so that ``metascore`` starts without loading the HTTP client.
"""

#: Environment variable holding the API token (Codabench: user settings > API token).
TOKEN_ENV = "CODABENCH_TOKEN"
#: Seconds ``codabench submit`` waits, once a submission is Finished, for the scores the
#: platform posts after it sets Finished (``--scores-wait``).
SCORES_WAIT = 60.0
#: The largest answer the client reads by default (``--max-answer``, in MiB): a results
#: export of 100,000 submissions x 20 tasks is about 100 MB.
MAX_ANSWER = 256 << 20
