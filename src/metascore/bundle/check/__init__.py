"""``metascore bundle check``: :mod:`~metascore.bundle.check.full` (``check_bundle``: the
schema, then the meta-ranking's configuration (:mod:`~metascore.bundle.check.meta_config`),
Codabench's traps (:mod:`~metascore.bundle.check.platform_traps`), the image against the
programs (:mod:`~metascore.bundle.check.image_checks`) and what participants can see of the
meta phase (:mod:`~metascore.bundle.check.visibility`)).
"""
