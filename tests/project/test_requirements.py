"""The one rule for tests that need an engine or a browser: skip outside CI, fail under it."""

from __future__ import annotations

import pytest

import requirements
from requirements import require_chromium, require_engine, unavailable


@pytest.mark.parametrize("ci", [None, "", "false", "1", "True"])
def test_skips_outside_ci(monkeypatch, ci):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="^no engine here$"):
        unavailable("no engine here")


def test_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"^no engine here \(CI=true: this test must run"):
        unavailable("no engine here")


def test_engine_and_browser_go_through_it(monkeypatch):
    monkeypatch.setattr(requirements, "engine_available", lambda: (False, "no container engine is reachable"))
    monkeypatch.setattr(requirements, "find_chromium", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no container engine is reachable"):
        require_engine()
    with pytest.raises(pytest.fail.Exception, match="headless Chromium is not installed"):
        require_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no container engine is reachable"):
        require_engine()
    with pytest.raises(pytest.skip.Exception, match="headless Chromium is not installed"):
        require_chromium()


def test_met_needs_pass(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(requirements, "engine_available", lambda: (True, ""))
    monkeypatch.setattr(requirements, "find_chromium", lambda: "/opt/chromium")
    assert require_engine() is None
    assert require_chromium() == "/opt/chromium"
