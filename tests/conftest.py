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
    session has its own empty cache (``METASCORE_CACHE``), so the tests run with this Python."""
    old = os.environ.get("METASCORE_CACHE")
    os.environ["METASCORE_CACHE"] = str(tmp_path_factory.mktemp("metascore-cache"))
    yield
    if old is None:
        os.environ.pop("METASCORE_CACHE", None)
    else:
        os.environ["METASCORE_CACHE"] = old


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

        from metascore.bundle import phase_dates

        monkeypatch.setattr(phase_dates, "utc_now", lambda: dt.datetime.fromisoformat(TEST_NOW))
