"""The compute worker: one job at a time (:mod:`~metascore.bundle.worker.job`: the ``/app``
mounts and the command's placeholders as the platform defines them
(:mod:`~metascore.bundle.platform.placeholders`), the time limit; the scores file read by
:mod:`~metascore.bundle.worker.job_scores`) behind one backend interface
(:mod:`~metascore.bundle.worker.backend`: a step, its result, and what a backend can do, its
``Capabilities``), the backends by name (:mod:`~metascore.bundle.worker.backends`): the local
backend (:mod:`~metascore.bundle.worker.local`, its bwrap sandbox
:mod:`~metascore.bundle.worker.sandbox` with :mod:`~metascore.bundle.worker.job_init`,
:mod:`~metascore.bundle.worker.cgroups` and :mod:`~metascore.bundle.worker.syscall_filter`,
installed by ``bundle run --setup`` (:mod:`~metascore.bundle.worker.machine_setup`), the
image's packages :mod:`~metascore.bundle.worker.pyenv`) or containers
(:mod:`~metascore.bundle.worker.docker_backend`, and
:mod:`~metascore.bundle.worker.image_probe` asking one); every backend's limits
(:mod:`~metascore.bundle.worker.limits`) and logs (:mod:`~metascore.bundle.worker.logs`).
What a job and its backends need of a bundle comes from below (the schema's ``Competition``
values, the platform's rules, the file handling); the worker never sees the site, which
calls it.
"""
