"""Shared fixtures and the deterministic Hypothesis profile."""

from __future__ import annotations

import os

# Tests solve thousands of tiny problems; a multi-threaded BLAS spends longer waking its
# threads on a busy machine than computing (scipy's L-BFGS-B: 7 ms a call instead of
# 0.1 ms). Set before numpy loads; an explicit setting in the environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings

settings.register_profile(
    "metascore",
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "40")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("metascore")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def umask():
    """``umask(mask)`` sets the process umask for the test; the old one is restored after."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


@pytest.fixture(autouse=True, scope="session")
def _own_env_cache(tmp_path_factory):
    """Bundle runs use no environment ``metascore bundle env`` built on this machine: each test
    session has its own empty cache (``METASCORE_CACHE``), so the tests run with this Python.

    The meta-scoring program's own Python (``bundle runtime``) stays in this machine's cache
    (``METASCORE_RUNTIME_CACHE``): a build is named by a hash of its recipe and of the code
    that builds it, so a cached one is what this code would build, and a few minutes are
    spent once per change of the recipe, not per session. Tests fill meta programs with the
    image's python3 (``METASCORE_META_PYTHON=image``) unless they ask for the bundled one."""
    from metascore.bundle.runtime.store import runtime_cache

    saved = {k: os.environ.get(k) for k in ("METASCORE_CACHE", "METASCORE_RUNTIME_CACHE", "METASCORE_META_PYTHON",
                                            "METASCORE_ORGANIZER_KEY")}
    os.environ["METASCORE_RUNTIME_CACHE"] = str(runtime_cache())  # before the cache moves
    os.environ["METASCORE_CACHE"] = str(tmp_path_factory.mktemp("metascore-cache"))
    # the organizer's key that meta programs carry and runs sign with: the session's own
    os.environ["METASCORE_ORGANIZER_KEY"] = str(tmp_path_factory.mktemp("metascore-key") / "organizer_key")
    os.environ["METASCORE_META_PYTHON"] = "image"
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def built_runtime():
    """The meta-scoring program's own Python (``metascore bundle runtime build``), built once
    per recipe on this machine (7 to 16 minutes on 2 cores the first time, then taken from
    the cache, see ``_own_env_cache``). Opt-in, like the real-site tests, since a fresh CI
    machine would spend most of its time budget on the build: the tests that use it run with
    ``METASCORE_RUNTIME=1`` and skip otherwise with this reason. With it, a machine that
    cannot build it skips (fails under CI=true)."""
    from metascore.bundle.runtime.store import ensure_runtime
    from metascore.bundle.runtime.cpython import check_host
    from metascore.errors import MetascoreError
    from requirements import unavailable

    if os.environ.get("METASCORE_RUNTIME") != "1":
        pytest.skip("needs the meta-scoring program's own Python: set METASCORE_RUNTIME=1 to build "
                    "it once (`metascore bundle runtime build`, several minutes) or reuse the cached one")
    try:
        check_host()
    except MetascoreError as exc:
        unavailable(str(exc))
    return ensure_runtime()


#: The upload time every test sees (`bundle check` and `bundle zip` compare phase dates
#: with it): before every phase date of the template and of tests/data, so that the tests
#: do not start failing once those dates pass. A test about "now" passes its own.
TEST_NOW = "2025-12-01T12:00:00"


@pytest.fixture(autouse=True)
def _fixed_clock(request, monkeypatch):
    """Phase dates are compared with :data:`TEST_NOW`, not with the real clock (tests marked
    ``site``, which upload to a real Codabench, keep the real clock)."""
    if request.node.get_closest_marker("site") is None:
        import datetime as dt

        from metascore.bundle.schema import phase_dates

        monkeypatch.setattr(phase_dates, "utc_now", lambda: dt.datetime.fromisoformat(TEST_NOW))
