"""What a signed results export is for: one competition's meta phase, once its phases closed.

A signature alone says who made an export (:mod:`metascore.signature`), not for what: the
organizer's key is one file per user, shared by every competition they run, and an export
signed yesterday stays signed. So the signed message also names what the export is for (a
:class:`Binding`), and the meta-scoring program, which cannot reach the site, checks the two
things it can know itself:

- **This competition's meta phase.** ``metascore bundle zip`` puts a random token into the
  reference data of each meta task (:data:`COMPETITION_FILE`): one per zip, hence one per
  competition made from it, and per meta phase. ``codabench sign`` and ``submit`` read it
  from the site (the meta task's reference data, with the organizer's token) or from the
  uploaded zip and sign it; the program ranks an export only when its own token is among the
  signed ones. An export signed for another competition or another meta phase is refused.
- **The moment.** The signed message carries when ``codabench pull`` read the leaderboards,
  when each ranked phase ended and when the meta phase opened, as the site said then. The
  program ranks only an export pulled once every ranked phase had ended and the meta phase
  had opened (:func:`stale_reason`): an export pulled while submissions could still come in
  is refused, whoever replays it later.

What it cannot know is whether a newer signed export exists: ``codabench publish`` publishes
only the organizer's own newest meta submission (:mod:`metascore.codabench.publish`).

Standard library only: the meta-scoring program carries this module in any image.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError

__all__ = ["COMPETITION_FILE", "LOCAL_SITE", "Binding", "new_token", "token_text", "competition_token",
           "token_of", "stale_reason"]

#: The token's file in the meta task's reference data (next to ``metascore.yaml``).
COMPETITION_FILE = "metascore_competition.json"
#: The ``site`` of an export a local ``bundle run`` signs.
LOCAL_SITE = "local run"
_TOKEN_FORMAT = "metascore-competition/1"
_MAX_TOKEN_FILE = 1 << 16


@dataclass(frozen=True)
class Binding:
    """What an export is signed for: the meta phase (``site``, ``competition`` id, ``phase``
    name and ``phase_id``, its ``tokens``) and the moment (``pulled_at``; ``opened``: when the
    meta phase opened; ``ends``: each ranked phase's end, as the site said). Times are ISO 8601;
    ``None`` where unknown (a local run has no calendar)."""

    site: str
    competition: int | None
    phase: str
    phase_id: int | None
    tokens: tuple[str, ...]
    pulled_at: str | None = None
    opened: str | None = None
    ends: tuple[tuple[str, str | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "competition": self.competition, "phase": self.phase,
                "phase_id": self.phase_id, "tokens": list(self.tokens), "pulled_at": self.pulled_at,
                "meta_phase_opened": self.opened,
                "phase_ends": [{"phase": name, "end": end} for name, end in self.ends]}

    @classmethod
    def from_dict(cls, data: Any) -> Binding:
        """The binding of a signature file; :class:`ValueError` when it is not one."""
        if not isinstance(data, Mapping):
            raise ValueError("not a mapping")
        tokens, ends = data["tokens"], data.get("phase_ends") or []
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens) or not isinstance(ends, list):
            raise ValueError("tokens")
        return cls(
            site=_text(data["site"]), competition=_int_or_none(data.get("competition")),
            phase=_text(data["phase"]), phase_id=_int_or_none(data.get("phase_id")),
            tokens=tuple(tokens), pulled_at=_time_or_none(data.get("pulled_at")),
            opened=_time_or_none(data.get("meta_phase_opened")),
            ends=tuple((_text(e["phase"]), _time_or_none(e.get("end"))) for e in ends),
        )

    def describe(self) -> str:
        """``competition 12's phase 'Final ranking' (id 34) on https://...``."""
        if self.competition is None:
            return f"phase {self.phase!r} of a {self.site}"
        pid = f" (id {self.phase_id})" if self.phase_id is not None else ""
        return f"competition {self.competition}'s phase {self.phase!r}{pid} on {self.site}"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("text")
    return value


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("integer")
    return value


def _time_or_none(value: Any) -> str | None:
    if value is None:
        return None
    _parse_time(_text(value))
    return value


def _parse_time(text: str) -> dt.datetime:
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.timezone.utc)


# ---------------------------------------------------------------------- the token
def new_token() -> str:
    """A new competition token: 128 random bits, in hex."""
    return secrets.token_hex(16)


def token_text(token: str, title: str | None = None) -> str:
    """The text of :data:`COMPETITION_FILE` for ``token`` (``title``: the competition's, for
    whoever reads the file)."""
    return json.dumps({"format": _TOKEN_FORMAT, "token": token, "competition": title,
                       "note": "written by metascore bundle zip; the meta-scoring program ranks only "
                               "a results export signed for this token"}, indent=1) + "\n"


def token_of(data: bytes, where: str) -> str:
    """The token of a :data:`COMPETITION_FILE`'s content (``where``: its name, for errors)."""
    try:
        parsed = json.loads(data[:_MAX_TOKEN_FILE].decode("utf-8")) if len(data) <= _MAX_TOKEN_FILE else None
        token = parsed.get("token") if isinstance(parsed, dict) and parsed.get("format") == _TOKEN_FORMAT else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        token = None
    if not isinstance(token, str) or len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        raise InputError(f"{where} is not a metascore competition token file; zip the bundle again "
                         "with `metascore bundle zip`, which writes it.")
    return token


def competition_token(ref: Path) -> str:
    """The token in the reference data folder ``ref`` of a meta task."""
    path = ref / COMPETITION_FILE
    if not path.is_file():
        raise ConfigError(
            f"the meta task's reference data has no {COMPETITION_FILE}, so the meta-scoring program "
            "cannot tell an export signed for this competition from one signed for another: zip the "
            "bundle with `metascore bundle zip`, which writes it.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}.") from None
    return token_of(data, str(path))


# ---------------------------------------------------------------------- the moment
def stale_reason(binding: Binding) -> str | None:
    """Why an export with this binding may miss submissions (``None``: it may not): it was
    pulled before a ranked phase ended or before the meta phase opened."""
    if binding.pulled_at is None:
        if binding.opened is None and not any(end for _, end in binding.ends):
            return None
        return "it does not say when its leaderboards were pulled"
    pulled = _parse_time(binding.pulled_at)
    for name, end in binding.ends:
        if end is not None and pulled < _parse_time(end):
            return (f"its leaderboards were pulled at {binding.pulled_at}, before phase {name!r} "
                    f"ended ({end}): a later submission may be missing")
    if binding.opened is not None and pulled < _parse_time(binding.opened):
        return (f"its leaderboards were pulled at {binding.pulled_at}, before the meta phase "
                f"{binding.phase!r} opened ({binding.opened}): a later submission may be missing")
    return None
