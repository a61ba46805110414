"""The meta phase: ``metascore bundle add-meta`` (:mod:`~metascore.bundle.meta.add`, with the
``competition.yaml`` edits of :mod:`~metascore.bundle.meta.edit` made as text by
:mod:`~metascore.bundle.meta.yaml_text`, the ``metascore.yaml`` of
:mod:`~metascore.bundle.meta.choices`, the baselines given as files of
:mod:`~metascore.bundle.meta.baseline_files`, the page of :mod:`~metascore.bundle.meta.ranking_page`
and what a second run keeps, :mod:`~metascore.bundle.meta.previous`),
the meta-scoring program put into a bundle (:mod:`~metascore.bundle.meta.program_folder`, with
its own Python from :mod:`metascore.bundle.runtime`). The top layer of the bundle package but for the
runner and ``bundle zip``, which fill the meta program with it: it runs ``bundle check``
(:mod:`metascore.bundle.check`) on what add-meta writes; what a meta program folder *is*
(the placeholder, how it runs in an image) is the platform's
(:mod:`metascore.bundle.platform.meta_program`), so the layers below need not import this one.
"""
