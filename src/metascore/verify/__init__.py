"""Anyone can check a published ranking (issue 53).

- :mod:`~metascore.verify.record`: the ranking page's record read back (:class:`Record`) and
  the configuration to recompute it with;
- :mod:`~metascore.verify.compare`: the recomputed leaderboard compared with it, row by row,
  and the lines ``verify`` prints.

The commands are ``metascore verify`` (:mod:`metascore.cli.verify`: a page and a pulled
folder) and ``metascore codabench verify`` (:mod:`metascore.codabench.verify`: a live
competition's public pages). Pure: they read no file and print nothing.
"""
