"""The meta phase: ``metascore bundle add-meta`` (:mod:`~metascore.bundle.meta.add`, with the
``competition.yaml`` edits of :mod:`~metascore.bundle.meta.edit` made as text by
:mod:`~metascore.bundle.meta.yaml_text`, the ``metascore.yaml`` of
:mod:`~metascore.bundle.meta.choices` and the page of :mod:`~metascore.bundle.meta.ranking_page`),
the meta-scoring program put into a bundle (:mod:`~metascore.bundle.meta.program_folder`) and
its own Python (:mod:`~metascore.bundle.meta.runtime`: CPython compiled by
:mod:`~metascore.bundle.meta.runtime_cpython` from the Debian archive of
:mod:`~metascore.bundle.meta.runtime_archive`, the packages and the checks of
:mod:`~metascore.bundle.meta.runtime_build`, packed as a wheel by
:mod:`~metascore.bundle.meta.runtime_wheel`).
"""
