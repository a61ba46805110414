"""Issue 42 item 2 on the real Codabench: what its unpacker and worker make of a link.

Opt-in like ``tests/real_site/test_real_site.py`` (``METASCORE_SITE=1``, marker ``site``).
The template gets two links that stay inside the bundle: ``pages/terms.md ->
../texts/terms.md`` and the meta phase's ``final_ranking/reference_data/metascore.yaml ->
../../texts/metascore.yaml``. Two zips of it are uploaded, and the template's results
export is submitted to each one's Final ranking phase:

- the zip ``metascore bundle zip`` writes, which stores each link as what it names: the
  Terms page shows the terms, and the meta phase finishes (the worker reads the
  configuration);
- the same zip with both files as link members instead, as ``zip --symlinks`` stores them:
  the unpacker (``ZipFile.extractall`` in ``unpack_competition``) makes the Terms page the
  text ``../texts/terms.md``, and the worker (``ZipFile.extractall`` in ``_get_bundle``)
  gives the meta program a ``metascore.yaml`` holding only the path, so the phase fails.
  This is why ``bundle zip`` stores links as what they name and ``bundle check``/``run``
  refuse a zip holding link members.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

import real_site as rs
import real_site_bundles as rb

pytestmark = rb.SITE_MARKS

ORGANIZER = "organizer"
META = "Final ranking"
LINKS = {"pages/terms.md": "../texts/terms.md", "metascore.yaml": "../../texts/metascore.yaml"}


def linked_template(tmp: Path) -> Path:
    bundle = rb.copy_template(tmp)
    texts = bundle / "texts"
    texts.mkdir()
    for path, target in ((bundle / "pages" / "terms.md", LINKS["pages/terms.md"]),
                         (bundle / "final_ranking" / "reference_data" / "metascore.yaml", LINKS["metascore.yaml"])):
        path.rename(texts / path.name)
        path.symlink_to(target)
    return bundle


def with_link_members(zipped: bytes) -> bytes:
    """``zipped`` with ``pages/terms.md`` and the meta reference data's ``metascore.yaml``
    stored as link members (``zip --symlinks``)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(zipped)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "pages/terms.md":
                zout.writestr(*_link("pages/terms.md", LINKS["pages/terms.md"]))
                continue
            if info.filename == "final_ranking/reference_data.zip":
                data = _relinked(data)
            zout.writestr(info, data)
    return out.getvalue()


def _relinked(zipped: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(zipped)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            if info.filename == "metascore.yaml":
                zout.writestr(*_link("metascore.yaml", LINKS["metascore.yaml"]))
            else:
                zout.writestr(info, zin.read(info))
    return out.getvalue()


def _link(name: str, target: str) -> tuple[zipfile.ZipInfo, str]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target


def upload_and_rank(zipped: bytes) -> tuple[dict, dict, dict]:
    """The competition's Terms page, the meta submission and its logs."""
    api = {ORGANIZER: rs.Api(rs.site_up()[0]["site"], rs.admin("users", {"users": [{"username": ORGANIZER}]})[ORGANIZER])}
    comp = rs.Competition(api, ORGANIZER, zipped)
    page = next(p for p in rs.competition(api[ORGANIZER], comp.id)["pages"] if p["title"] == "Terms")
    comp.open_phase(META)
    sub_id = comp.submit(ORGANIZER, META, rb.template_export_zip(comp, META), "results.zip")
    (submission,) = comp.wait(META, 1, timeout=900)
    return page, submission, rs.logs(api[ORGANIZER], sub_id)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[dict, dict, dict]]:
    tmp = tmp_path_factory.mktemp("issue42")
    bundle = linked_template(tmp)
    ours = rb.zip_bundle(bundle, tmp / "bundle.zip")
    return {"bundle zip": upload_and_rank(ours), "link members": upload_and_rank(with_link_members(ours))}


def test_the_zip_of_bundle_zip_reaches_codabench_with_what_the_links_name(runs):
    page, submission, logs = runs["bundle zip"]
    terms = (rb.TEMPLATE / "pages" / "terms.md").read_text()
    assert page["content"].strip() == terms.strip()
    assert submission["status"] == "Finished", (submission, logs.get("scoring_stderr", "")[-2000:])


def test_link_members_reach_codabench_as_files_holding_their_path(runs):
    page, submission, logs = runs["link members"]
    assert page["content"].strip() == LINKS["pages/terms.md"]
    assert submission["status"] == "Failed", submission
    print(f"\n[link members] meta phase: {submission['status']}; scoring stderr tail: "
          f"{logs.get('scoring_stderr', '')[-600:]}")
