"""The compute worker: one job at a time (:mod:`~metascore.bundle.worker.job`: the ``/app``
mounts, the command's placeholders (:mod:`~metascore.bundle.worker.placeholders`), the time
limit; the scores file read by :mod:`~metascore.bundle.worker.job_scores`) behind one backend interface (:mod:`~metascore.bundle.worker.backend`):
the local backend (:mod:`~metascore.bundle.worker.local`, its bwrap sandbox
:mod:`~metascore.bundle.worker.sandbox` with :mod:`~metascore.bundle.worker.job_init`,
:mod:`~metascore.bundle.worker.cgroups` and :mod:`~metascore.bundle.worker.syscall_filter`,
the image's packages :mod:`~metascore.bundle.worker.pyenv`) or containers
(:mod:`~metascore.bundle.worker.docker_backend`, and
:mod:`~metascore.bundle.worker.image_probe` asking one); every backend's limits
(:mod:`~metascore.bundle.worker.limits`) and logs (:mod:`~metascore.bundle.worker.logs`).
"""
