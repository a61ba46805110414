"""``metascore codabench sign`` and ``submit``'s first step: a pulled folder as a zip signed
for one competition's meta phase, at one moment.

What the signature covers (:mod:`metascore.signature`, :mod:`metascore.signature.binding`):

- every file of the folder, by its SHA-256;
- the meta phase it is for: the site, the competition's id, the phase's name and id, and the
  **competition token** the meta task's reference data carries (``bundle zip`` made it, one
  per zip): read from the site with the organizer's API token (the task's reference data,
  :func:`site_tokens`), or from the bundle zip that was uploaded (:func:`bundle_tokens`);
- the moment: when the folder was pulled (its ``codabench.json``; the signing time for a
  folder without one), when each phase it pulled ends and when the meta phase opens, as the
  site says when signing.

An export pulled before those phases closed is refused here already, with the meta-scoring
program's own sentence, so the organizer does not wait for a Failed submission.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..signature.binding import COMPETITION_FILE, Binding, token_of, stale_reason
from ..readers.columns import COLUMNS_FILE
from ..readers.formats import read_scores
from ..signature import SIGNATURE_NAME, OrganizerKey, SignatureError, folder_files, signature_file
from .api import CompetitionInfo, PhaseInfo
from .client import Client, PlatformError

__all__ = ["site_tokens", "bundle_tokens", "binding_for", "signed_zip", "zip_signed", "now_iso"]

Log = Callable[[str], None]


def now_iso() -> str:
    """The time now, UTC, ISO 8601 to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def site_tokens(client: Client, phase: PhaseInfo) -> tuple[str, ...]:
    """The competition tokens of the meta phase's tasks: each task's reference data, as the
    organizer's token downloads it (``GET /api/tasks/<id>/``, then its ``reference_data``)."""
    tokens = []
    for task in phase.tasks:
        what = f"task {task.id} ({task.name!r}) of phase {phase.name!r}"
        detail = client.get_json(f"/api/tasks/{task.id}/", what=what)
        ref = detail.get("reference_data") if isinstance(detail, dict) else None
        key = ref.get("key") if isinstance(ref, dict) else ref
        if not isinstance(key, str) or not key:
            raise PlatformError(f"{what} has no reference data, so it is not a metascore meta phase "
                                "(its reference data holds metascore.yaml); give the meta phase with --phase.")
        data = client.dataset(key, f"the reference data of {what}")
        tokens.append(_token_in_zip(data, f"the reference data of {what}"))
    return tuple(dict.fromkeys(tokens))


def bundle_tokens(path: Path) -> tuple[str, ...]:
    """The competition tokens of a bundle zip ``bundle zip`` wrote (each meta task's
    reference data zip holds one): for an export signed offline."""
    try:
        with zipfile.ZipFile(path) as bundle:
            tokens = []
            for name in bundle.namelist():
                if name.lower().endswith(".zip") and bundle.getinfo(name).file_size < (64 << 20):
                    try:
                        tokens.append(_token_in_zip(bundle.read(name), f"{path}:{name}"))
                    except InputError:
                        continue
    except (OSError, zipfile.BadZipFile) as exc:
        raise InputError(f"--bundle {path}: not a readable zip ({exc}).") from None
    if not tokens:
        raise InputError(f"--bundle {path} holds no {COMPETITION_FILE}: give the zip `metascore "
                         "bundle zip` wrote and you uploaded.")
    return tuple(dict.fromkeys(tokens))


def _token_in_zip(data: bytes, what: str) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            name = next((n for n in archive.namelist() if n.rsplit("/", 1)[-1] == COMPETITION_FILE), None)
            if name is None or archive.getinfo(name).file_size > (1 << 16):
                raise InputError(f"{what} holds no {COMPETITION_FILE}: the bundle was not zipped by "
                                 "`metascore bundle zip` (which writes it), so no export can be signed "
                                 "for it; zip it with that and upload it again.")
            return token_of(archive.read(name), f"{what}: {name}")
    except zipfile.BadZipFile:
        raise InputError(f"{what} is not a zip.") from None


def binding_for(site: str, comp: CompetitionInfo, phase: PhaseInfo, folder: Path,
                tokens: tuple[str, ...], *, now: Callable[[], str] = now_iso) -> Binding:
    """What the export of ``folder`` is signed for: the meta ``phase`` of ``comp`` with its
    ``tokens``, pulled when the folder's ``codabench.json`` says (now, for a folder without
    one), the end of each phase it pulled and the meta phase's start as the site says now.

    A folder pulled from another competition is refused."""
    pulled_at, ends = now(), ()
    provenance = _provenance(folder)
    if provenance is not None:
        pulled_from = (provenance.get("competition") or {}).get("id")
        if pulled_from is not None and pulled_from != comp.id:
            raise InputError(f"{folder} was pulled from competition {pulled_from}, not from competition "
                             f"{comp.id}; pull this competition's results (`metascore codabench pull "
                             f"--competition {comp.id}`).")
        if isinstance(provenance.get("pulled_at"), str):
            pulled_at = provenance["pulled_at"]
        ends = tuple(_end_now(comp, p) for p in provenance.get("phases") or () if isinstance(p, dict))
    return Binding(site=site, competition=comp.id, phase=phase.name, phase_id=phase.id, tokens=tokens,
                   pulled_at=pulled_at, opened=phase.start, ends=ends)


def _end_now(comp: CompetitionInfo, pulled: dict[str, Any]) -> tuple[str, str | None]:
    """A pulled phase's name and end, as the site says now (as the pull recorded it when the
    site no longer has the phase)."""
    found = next((p for p in comp.phases if p.id == pulled.get("id")), None)
    if found is not None:
        return found.name, found.end
    return str(pulled.get("name")), pulled.get("end") if isinstance(pulled.get("end"), str) else None


def _provenance(folder: Path) -> dict[str, Any] | None:
    path = folder / COLUMNS_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        raise InputError(f"{path} is not readable JSON; pull the results again.") from None
    return data if isinstance(data, dict) else None


def signed_zip(folder: Path, key: OrganizerKey, binding: Binding, *, now: Callable[[], str] = now_iso) -> bytes:
    """The pulled folder as a zip (its files at the root) signed with ``key`` for ``binding``
    (``metascore.sig``), after checking it reads as scores and is not stale."""
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder; give the folder `metascore codabench pull` wrote.")
    stale = stale_reason(binding)
    if stale is not None:
        raise SignatureError(f"{folder} is stale: {stale}; the meta-scoring program would refuse it, "
                             "so pull the leaderboards again now (`metascore codabench pull`) and "
                             "sign that.")
    read_scores(folder, "tree")  # refuse a folder the meta-scoring program could not read
    return zip_signed(folder_files(folder), key, binding, now())


def zip_signed(files: Mapping[str, bytes], key: OrganizerKey, binding: Binding, signed_at: str) -> bytes:
    """``files`` (relative path -> content) as a zip with their ``metascore.sig``, signed with
    ``key`` for ``binding`` at ``signed_at`` (no check: :func:`signed_zip` checks first)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel, data in files.items():
            archive.writestr(rel, data)
        archive.writestr(SIGNATURE_NAME, signature_file(files, key, binding, signed_at))
    return buf.getvalue()
