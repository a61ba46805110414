"""Boards for the ranking page's re-weighting panel (issue 51): the template's results as the
real site exported them, and a random board of 200 candidates x 20 judges with missing cells
and ties; their configurations, with the weights a link sets, for ``metascore rank``; and a
headless Chromium (Playwright's driver on Debian's ``/usr/bin/chromium``) that opens a page.
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from repo_paths import ROOT

TEMPLATE_CONFIG = ROOT / "bundle_template" / "final_ranking" / "reference_data" / "metascore.yaml"
TEMPLATE_EXPORT = ROOT / "tests" / "data" / "exports" / "template_results_site_ids.json"
#: The judges a link sets (one to 0, another to 2), on each board.
TEMPLATE_WEIGHTS = {"datasets/blobs_accuracy": 0.0, "datasets/churn_brier": 2.0}
RANDOM_WEIGHTS = {"t0/m0": 0.0, "t3/m4": 2.0}  # t3/m4 weighs 0 officially
NO_ANALYSIS = {"bootstrap": 0, "stability": False, "compare": []}


def template_config(method: str, **ranking) -> dict:
    """The template's configuration ranked by ``method``, without the analysis."""
    config = yaml.safe_load(TEMPLATE_CONFIG.read_text())
    config["ranking"] = {**config["ranking"], "method": method, **ranking}
    config["analysis"] = dict(NO_ANALYSIS)
    return config


def reweighted(config: Mapping, weights: Mapping[str, float], final: str | None = "Final") -> dict:
    """``config`` with the judges of phase ``final`` (None: the only phase) weighing
    ``weights``: the development phase's judges, which the filter reads, keep theirs."""
    out = copy.deepcopy(dict(config))
    key = lambda j: f"{j['task']}/{j['metric']}"  # noqa: E731
    judges = out["judges"]
    if final is None:
        out["judges"] = [dict(j, weight=weights.get(key(j), j.get("weight", 1.0))) for j in judges]
    else:
        out["judges"] = ([dict(j, phase=out["phases"]["development"]) for j in judges]
                         + [dict(j, phase=final, weight=weights.get(key(j), j.get("weight", 1.0))) for j in judges])
    return out


def random_board(folder: Path, seed: int = 51, unscored: bool = True) -> tuple[Path, dict]:
    """A long CSV of 200 candidates x 20 judges (4 tasks x 5 metrics) and its configuration
    (one phase, no filter): half the judges score 1 to 5 (many ties), half two decimals in
    (0, 1]; four judges miss 6% of their cells and, with ``unscored``, one candidate has no
    score at all; random directions, official weights 0.5, 1 or 2, and 0 for ``t3/m4``;
    submission ids in random order (the tie-break)."""
    rng = np.random.default_rng(seed)
    n, tasks, metrics = 200, 4, 5
    ids = rng.permutation(np.arange(1000, 1000 + n))
    rows, judges = [], []
    for t in range(tasks):
        for m in range(metrics):
            j = t * metrics + m
            weight = 0.0 if (t, m) == (3, 4) else float(rng.choice([0.5, 1.0, 1.0, 2.0]))
            judges.append({"task": f"t{t}", "metric": f"m{m}", "weight": weight,
                           "direction": str(rng.choice(["higher", "lower"]))})
            values = rng.integers(1, 6, n).astype(float) if j % 2 == 0 else np.round(rng.uniform(0.01, 1, n), 2)
            gone = rng.random(n) < (0.06 if j in (3, 7, 12, 15) else 0.0)
            for c in range(n):
                if not gone[c]:  # candidate 17: no score at all (every cell empty)
                    rows.append({"phase": "Board", "candidate": f"p{c:03d}-{ids[c]}", "participant": f"p{c:03d}",
                                 "task": f"t{t}", "metric": f"m{m}", "value": None if c == 17 and unscored else values[c]})
    path = folder / f"board{'' if unscored else '_scored'}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    config = {"input": {"path": path.name}, "phases": {"development": "Board", "final": None},
              "judges": judges, "filter": {"rule": "none"}, "analysis": dict(NO_ANALYSIS),
              "ranking": {"method": "average_rank"}}
    return path, config


def rank(config: Mapping, input: Path, out: Path) -> list[str]:
    """``metascore rank --config`` (the command line, in this process) of ``config`` on
    ``input`` into ``out``: the ranked candidates in order."""
    from metascore.cli import main

    out.mkdir(parents=True, exist_ok=True)
    path = out / "metascore.yaml"
    path.write_text(yaml.safe_dump(dict(config)))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["rank", "--config", str(path), "--input", str(input), "--output", str(out)])
    assert code == 0, err.getvalue()
    board = pd.read_csv(out / "leaderboard.csv", dtype=str, keep_default_na=False)
    return list(board.loc[board["position"] != "", "candidate"])


def fragment(weights: Mapping[str, float], groups: Mapping[str, float] | None = None) -> str:
    """The link's fragment that sets ``weights`` (and ``groups``' weights)."""
    from urllib.parse import quote

    part = lambda d: ",".join(f"{quote(k, safe='/')}:{v:g}" for k, v in d.items())  # noqa: E731
    return "#weights=" + part(weights) + (f"&groups={part(groups)}" if groups else "")


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium (Playwright's browser object), closed after."""
    from playwright.sync_api import sync_playwright

    from requirements import require_chromium

    executable = require_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            browser.close()


def page_order(browser, page: Path, frag: str = "", viewport=(1155, 710)) -> tuple[list[str], str]:
    """The re-weighted table's candidates in order (``data-candidate``) and the panel's status
    line, on ``page`` opened with ``frag``; a script error fails."""
    tab = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        tab.goto(page.as_uri() + frag)
        order = tab.eval_on_selector_all("#reweighted tbody tr", "rows => rows.map(r => r.dataset.candidate)")
        status = tab.inner_text("#reweight .rw-status")
    finally:
        tab.close()
    assert errors == [], errors
    return order, status
