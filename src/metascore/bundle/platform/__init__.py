"""What the Codabench platform means, below everything that reads a bundle: the facts the
schema, the worker, the site and the commands share. What a meta-scoring program is in a
bundle and how it runs in an image (:mod:`~metascore.bundle.platform.meta_program`), what the
common images carry (:mod:`~metascore.bundle.platform.images`), what a command's placeholders
become and which folders the worker mounts (:mod:`~metascore.bundle.platform.placeholders`),
and the leaderboard's submission rules (:mod:`~metascore.bundle.platform.leaderboard_rules`).
Nothing here reads a bundle or runs a program.
"""
