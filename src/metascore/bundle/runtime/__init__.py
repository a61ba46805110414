"""The meta-scoring program's own Python, so that the meta phase runs in any competition image:
the runtimes kept in the cache, found, built once, zipped and put into a program
(:mod:`~metascore.bundle.runtime.store`); CPython compiled from pinned sources
(:mod:`~metascore.bundle.runtime.cpython`) taken from the Debian archive of
:mod:`~metascore.bundle.runtime.debian`; the packages on top and the checks of the result
(:mod:`~metascore.bundle.runtime.build`); the runtime packed as a platform wheel
(:mod:`~metascore.bundle.runtime.wheel`, ``pip install 'metascore[runtime]'``). Below
:mod:`metascore.bundle.meta` and ``bundle zip``, which put it into a bundle; above the worker
(its cache folder) and the platform (what a meta program folder is).
"""
