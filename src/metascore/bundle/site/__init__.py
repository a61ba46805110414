"""What the Codabench server decides for a bundle run: which submission runs in which phase,
the columns kept, the results export and the meta phase's input
(:mod:`~metascore.bundle.site.server`; the outputs tree it feeds the meta phase, in the shape
``codabench pull`` writes: :mod:`~metascore.bundle.site.export_tree`), the submissions a run has (starting kits, solutions,
folders and manifests: :mod:`~metascore.bundle.site.submissions`), the names the export gives
them (:mod:`~metascore.bundle.site.submission_ids`) and what reaches the leaderboard under
its ``submission_rule`` (:mod:`~metascore.bundle.site.submission_rules`). It runs each job on
the worker (:mod:`metascore.bundle.worker`) and reads the schema; a meta program placeholder
is filled by whatever the runner gives it, so the site imports neither the commands nor
:mod:`metascore.bundle.meta`.
"""
