"""What the Codabench platform means, below everything that reads a bundle: the facts the
schema, the worker, the site and the commands share. What a meta-scoring program is in a
bundle and how it runs in an image (:mod:`~metascore.bundle.platform.meta_program`), what the
common images carry (:mod:`~metascore.bundle.platform.images`), what a command's placeholders
become and which folders the worker mounts (:mod:`~metascore.bundle.platform.placeholders`),
the leaderboard's submission rules (:mod:`~metascore.bundle.platform.leaderboard_rules`), and
how text goes to a page or a task's name so that the site shows it as text
(:mod:`~metascore.bundle.platform.page_text`), and the commands a message proposes, with the
bundle named (:mod:`~metascore.bundle.platform.commands`).
Nothing here reads a bundle or runs a program.
"""
