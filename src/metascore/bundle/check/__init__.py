"""``metascore bundle check``: :mod:`~metascore.bundle.check.full` (``check_bundle``: the
schema, then the meta-ranking's configuration (:mod:`~metascore.bundle.check.meta_config`,
its baselines against the run's submissions :mod:`~metascore.bundle.check.baselines`),
Codabench's traps (:mod:`~metascore.bundle.check.platform_traps`), the image against the
programs (:mod:`~metascore.bundle.check.image_checks`) and what participants can see of the
meta phase (:mod:`~metascore.bundle.check.visibility`)). It reads the schema, the site's
submissions, the worker's image environments and the platform's facts; ``bundle add-meta``
(:mod:`metascore.bundle.meta`, above) runs it, never the other way round.
"""
