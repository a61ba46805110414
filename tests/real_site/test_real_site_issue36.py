"""Issue 36 on the real Codabench: the meta phase in the image the competition already has.

Opt-in like ``tests/real_site/test_real_site.py`` (``METASCORE_SITE=1``, marker ``site``). The
template, its ``docker_image`` set to each image below and zipped by ``metascore bundle zip``
with its default ``--meta-python auto``, is uploaded; its Final ranking phase is opened and the
same results export (``tests/data/exports/template_results.json``) submitted to it; the real
compute worker runs the meta-scoring program in that image:

- ``codalab/codalab-legacy:py312`` (the site's stand-in: Debian 12, Python 3.11 with the
  image's packages): the program runs with the image's ``python3`` (a 0.5 MB zip), and, with
  ``--meta-python bundled``, with its own Python;
- Debian 11 with its own ``python3`` 3.9, numpy 1.19, scipy 1.6, pandas 1.1
  (``tests/standin_images.py``): too old for metascore, so the zip carries the program's
  own Python (CPython 3.13 for glibc >= 2.17, what the program loads: about 45 MB, 3,100 files);
- Debian 11 without any Python: the same.

Every run must finish, and the final files (``leaderboard.csv``, ``leaderboard.json``,
``scores.json``, ``detailed_results.html``) must be byte for byte those of the py312 run, but
for the record of the signed export (each run is its own competition, signed for then).
The bundled runs need the runtime built on this machine (``metascore bundle runtime build``,
reused from the cache).
"""

from __future__ import annotations

import html
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import real_site as rs
import real_site_bundles as rb
import standin_images as standin
from repo_paths import ROOT

pytestmark = rb.SITE_MARKS

REPO = ROOT
ORGANIZER = "organizer"
META = "Final ranking"
PY312 = "codalab/codalab-legacy:py312"
FILES = ("leaderboard.csv", "leaderboard.json", "scores.json", "detailed_results.html")
VARIANTS = {  # name -> (image, --meta-python)
    "py312": (PY312, "auto"),
    "py312-bundled": (PY312, "bundled"),
    "bullseye-python": (standin.BULLSEYE_PYTHON, "auto"),
    "bullseye-bare": (standin.BULLSEYE_BARE, "auto"),
}


@dataclass
class MetaRun:
    image: str
    zip_bytes: int = 0
    program_files: int = 0
    submission: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    logs: dict = field(default_factory=dict)
    times: dict = field(default_factory=dict)


def run_meta_phase(name: str, tmp: Path) -> MetaRun:
    image, meta_python = VARIANTS[name]
    run = MetaRun(image)
    t = rs.Stopwatch()
    bundle = rb.copy_template(tmp)
    path = bundle / "competition.yaml"
    path.write_text(path.read_text().replace(f"docker_image: {PY312}", f"docker_image: {image}"))
    old = os.environ.get("METASCORE_META_PYTHON")
    os.environ["METASCORE_META_PYTHON"] = meta_python  # the tests' default is image
    try:
        zipped = rb.zip_bundle(bundle, tmp / "bundle.zip")
    finally:
        os.environ.pop("METASCORE_META_PYTHON") if old is None else os.environ.update(METASCORE_META_PYTHON=old)
    run.zip_bytes = len(zipped)
    with zipfile.ZipFile(io.BytesIO(zipped)) as z, zipfile.ZipFile(z.open("meta_scoring_program.zip")) as m:
        run.program_files = len(m.namelist())
    t.lap("bundle zip")
    api = {ORGANIZER: rs.Api(rs.site_up()[0]["site"], rs.admin("users", {"users": [{"username": ORGANIZER}]})[ORGANIZER])}
    comp = rs.Competition(api, ORGANIZER, zipped)
    t.lap("upload + unpack")
    comp.open_phase(META)
    sub_id = comp.submit(ORGANIZER, META, rb.template_export_zip(comp, META), "results.zip")
    (run.submission,) = comp.wait(META, 1, timeout=900)
    t.lap("meta phase: submit + run")
    run.logs = rs.logs(api[ORGANIZER], sub_id)
    if run.submission["status"] == "Finished":
        run.files = rs.scoring_output(api[ORGANIZER], sub_id)
    evidence = rs.evidence(f"issue36/{name}")
    for file in FILES:  # kept for a reader comparing the images' outputs
        if file in run.files:
            (evidence / file).write_bytes(run.files[file])
    run.times = t.times
    print(f"\n[{name}] {image}: zip {run.zip_bytes / 1e6:.1f} MB, meta program {run.program_files} files; "
          f"timings (s): {json.dumps(run.times)}")
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, MetaRun]:
    standin.build_bullseye(standin.BULLSEYE_PYTHON)
    standin.build_bullseye(standin.BULLSEYE_BARE)
    return {name: run_meta_phase(name, tmp_path_factory.mktemp(name)) for name in VARIANTS}


def test_the_meta_phase_finishes_in_every_image(runs):
    for name, run in runs.items():
        assert run.submission["status"] == "Finished", (name, run.submission, run.logs.get("scoring_stderr", "")[-2000:])


def without_export(files: dict[str, bytes]) -> dict[str, bytes]:
    """The final files with the signed export's record (who signed it, when, for which
    competition, meta phase and token: ``input.export`` in ``leaderboard.json`` and the
    page's data block, issue 49) put as ``"<export>"``: each run is its own competition."""
    export = json.loads(files["leaderboard.json"])["input"]["export"]
    assert export["competition"] and export["tokens"], export
    forms = (json.dumps(export),  # leaderboard.json
             json.dumps(export, ensure_ascii=False, separators=(",", ":")),  # the page's data block
             html.escape(json.dumps(export, indent=2).replace("\n", "\n  ")))  # the page's "What was read"
    out = {}
    for name in FILES:
        text, found = files[name].decode(), 0
        for form in forms:
            found += text.count(form)
            text = text.replace(form, '"<export>"')
        assert found == {"leaderboard.json": 1, "detailed_results.html": 2}.get(name, 0), (name, found)
        out[name] = text.encode()
    return out


def test_the_final_files_are_the_same_bytes_in_every_image(runs):
    reference = runs["py312"].files
    assert set(FILES) <= set(reference)
    expected = without_export(reference)
    for name, run in runs.items():
        assert set(FILES) <= set(run.files), name
        for file, data in without_export(run.files).items():
            assert data == expected[file], (name, file)


def test_the_program_carries_its_python_only_where_the_image_needs_it(runs):
    assert runs["py312"].zip_bytes < 2e6 and runs["py312"].program_files < 400
    for name in ("py312-bundled", "bullseye-python", "bullseye-bare"):
        # issue 43: the runtime's 44.2 MB, plus metascore's code and the bundle's own files
        assert 30e6 < runs[name].zip_bytes <= 46e6 and runs[name].program_files > 2500, name
