"""What ``competition.yaml`` says: the schema of a bundle, as Codabench's unpackers read it.

:mod:`~metascore.bundle.schema.load` (``check_schema``, ``load_competition``) reads a bundle
into a :mod:`~metascore.bundle.schema.competition` ``Competition`` (its phases, tasks and
leaderboard) by the rules of each version (:mod:`~metascore.bundle.schema.v2`,
:mod:`~metascore.bundle.schema.v1`, on the shared readers of
:mod:`~metascore.bundle.schema.base`); a program's ``metadata`` file
(:mod:`~metascore.bundle.schema.metadata`) and its command
(:mod:`~metascore.bundle.schema.program_checks`, :mod:`~metascore.bundle.schema.command_checks`);
the dates Codabench keeps (:mod:`~metascore.bundle.schema.phase_dates`); a v1 file in the v2
form (:mod:`~metascore.bundle.schema.v1_to_v2`) and the v1 keys Codabench does not read
(:mod:`~metascore.bundle.schema.v1_unread`). Nothing here runs a program. What the platform
means (a meta program folder, placeholders, submission rules) comes from below
(:mod:`metascore.bundle.platform`); the schema imports neither the worker, the site nor the
commands.
"""
