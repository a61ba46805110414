"""The organizer's signature on a results export: only the organizer can make a final ranking.

Codabench has no phase only its organizers can submit to, and any registered participant can
upload a results export written by hand to the Final ranking phase. Nothing secret can live in
a bundle either: on Codabench an anonymous client can download a task's reference data and
programs. So the export carries a signature only the organizer can make, and the meta-scoring
program checks it against a public key it carries:

- **The key pair** is Ed25519 (RFC 8032), from python-ecdsa: a well-kept, pure-Python library,
  so the meta-scoring program carries it next to its vendored ``metascore`` and checks a
  signature in any image, with its own Python or the image's (the standard library has no
  public-key signature; a compiled library such as ``cryptography`` would have to be built
  into every Python the program may run with).
- **The private key** is a file on the organizer's machine, never in a bundle:
  ``$METASCORE_ORGANIZER_KEY``, else ``~/.config/metascore/organizer_key`` (``$XDG_CONFIG_HOME``
  when set), made on first use with mode 600 (:func:`organizer_key`).
- **The public key** is ``organizer_key.pub`` in the meta-scoring program's folder, which
  ``metascore bundle zip`` and ``bundle run`` write there when they fill the program
  (:mod:`metascore.bundle.meta.program_folder`).
- **The signature** is ``metascore.sig`` at the root of the export (its suffix keeps it out of
  the files the readers take as scores): the SHA-256 of every other file, and an Ed25519
  signature of that list (:func:`signature_file`). ``metascore codabench submit`` and the
  mock runner write it (:func:`sign_folder`); the meta-scoring program checks it
  (:func:`verify_folder`): every file it could read must be listed with its digest, every
  listed file present, and the signature made by the key it carries.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError, InputError

__all__ = [
    "KEY_ENV", "PUBLIC_KEY_NAME", "SIGNATURE_NAME", "OrganizerKey", "SignatureError",
    "default_key_path", "organizer_key", "fingerprint", "public_key_text", "read_public_key",
    "signature_file", "folder_files", "sign_folder", "verify_folder",
]

#: The environment variable naming the organizer's private key file.
KEY_ENV = "METASCORE_ORGANIZER_KEY"
#: The public key's file in the meta-scoring program's folder.
PUBLIC_KEY_NAME = "organizer_key.pub"
#: The signature's file at the root of a results export.
SIGNATURE_NAME = "metascore.sig"
#: What the platform itself adds to a submission's folder (the worker's program statuses).
PLATFORM_FILES = frozenset({"metadata"})
_FORMAT = "metascore-signature/1"
_KEY_HEAD = "# metascore organizer key (Ed25519). Keep it secret: it signs your final rankings.\n"
_PUB_HEAD = ("# metascore: the organizer's public key (Ed25519). The meta-scoring program ranks only a\n"
             "# results export signed with its private key (`metascore codabench submit` signs).\n")


class SignatureError(InputError):
    """The results export is not signed by the organizer the meta-scoring program knows."""


@dataclass(frozen=True)
class OrganizerKey:
    """An Ed25519 key pair: the 32-byte seed (private) and public key, and the seed's file."""

    seed: bytes
    public: bytes
    path: Path

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    def sign(self, message: bytes) -> bytes:
        from ecdsa import Ed25519, SigningKey

        return SigningKey.from_string(self.seed, curve=Ed25519).sign(message)


def default_key_path() -> Path:
    """``$METASCORE_ORGANIZER_KEY``, else ``<config>/metascore/organizer_key``."""
    given = os.environ.get(KEY_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    return Path(config) / "metascore" / "organizer_key"


def organizer_key(path: str | os.PathLike[str] | None = None, *, create: bool = True) -> OrganizerKey:
    """The organizer's key pair from ``path`` (default :func:`default_key_path`), made there
    (mode 600) when ``create`` and the file does not exist."""
    from ecdsa import Ed25519, SigningKey

    where = Path(path).expanduser() if path is not None else default_key_path()
    if not where.exists():
        if not create:
            raise ConfigError(f"no organizer key at {where}: the key that signed the bundle's meta "
                              f"program is on another machine (copy its file here, or set ${KEY_ENV}).")
        seed = secrets.token_bytes(32)
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(_KEY_HEAD + seed.hex() + "\n")
        except OSError as exc:
            raise ConfigError(f"cannot make the organizer key {where}: {exc.strerror or exc}; set "
                              f"${KEY_ENV} to a file you can write, or copy your key there.") from None
    else:
        seed = _hex_line(where, 32, "organizer key")
    public = SigningKey.from_string(seed, curve=Ed25519).get_verifying_key().to_string()
    return OrganizerKey(seed, public, where)


def fingerprint(public: bytes) -> str:
    """A short name of a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public).hexdigest()[:16]


def public_key_text(public: bytes) -> str:
    """The text of ``organizer_key.pub``."""
    return _PUB_HEAD + public.hex() + "\n"


def read_public_key(path: Path) -> bytes:
    """The public key of an ``organizer_key.pub`` file."""
    return _hex_line(path, 32, "public key")


def _hex_line(path: Path, size: int, what: str) -> bytes:
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the {what} {path}: {getattr(exc, 'strerror', None) or exc}.") from None
    body = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    try:
        value = bytes.fromhex(body[0]) if len(body) == 1 else b""
    except ValueError:
        value = b""
    if len(value) != size:
        raise ConfigError(f"{path}: not a metascore {what} (one line of {2 * size} hex digits).")
    return value


# ---------------------------------------------------------------------- signing
def _manifest(files: Mapping[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(files[name]).hexdigest() for name in sorted(files)}


def _message(public: bytes, digests: Mapping[str, str]) -> bytes:
    return json.dumps({"format": _FORMAT, "key": public.hex(), "files": dict(digests)},
                      sort_keys=True, separators=(",", ":")).encode("utf-8")


def signature_file(files: Mapping[str, bytes], key: OrganizerKey) -> str:
    """The text of ``metascore.sig`` for ``files`` (relative POSIX path -> content)."""
    digests = _manifest({k: v for k, v in files.items() if k != SIGNATURE_NAME})
    signature = key.sign(_message(key.public, digests))
    return json.dumps({"format": _FORMAT, "key": key.public.hex(), "fingerprint": key.fingerprint,
                       "files": digests, "signature": signature.hex()}, indent=1) + "\n"


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but hidden ones and the signature: relative POSIX path ->
    content (what ``metascore codabench submit`` zips)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(p.startswith(".") for p in rel.parts) and rel.as_posix() != SIGNATURE_NAME:
            out[rel.as_posix()] = path.read_bytes()
    return out


def sign_folder(folder: Path, key: OrganizerKey) -> Path:
    """Write ``folder/metascore.sig`` for the files of ``folder`` (:func:`folder_files`)."""
    path = folder / SIGNATURE_NAME
    path.write_text(signature_file(folder_files(folder), key), encoding="utf-8")
    return path


def verify_folder(folder: Path, public: bytes) -> str:
    """Check ``folder/metascore.sig`` against ``public``; returns the key's fingerprint.

    Raises :class:`SignatureError` (one sentence) when the signature is missing, malformed,
    made by another key or wrong, or when a file is missing, changed or not listed (the
    platform's own ``metadata`` at the root aside).
    """
    who = "only the organizer's `metascore codabench submit` makes a final ranking"
    sig_path = folder / SIGNATURE_NAME
    if not sig_path.is_file():
        raise SignatureError(f"this results export is not signed by the organizer (no {SIGNATURE_NAME} "
                             f"in it), so it is not ranked: {who}.")
    try:
        data = json.loads(sig_path.read_text(encoding="utf-8"))
        signed_key = bytes.fromhex(data["key"])
        digests = data["files"]
        signature = bytes.fromhex(data["signature"])
        if data.get("format") != _FORMAT or not isinstance(digests, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in digests.items()):
            raise ValueError
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise SignatureError(f"{SIGNATURE_NAME} is not a metascore signature, so this results export "
                             f"is not ranked: {who}.") from None
    if signed_key != public:
        raise SignatureError(f"this results export is signed by key {fingerprint(signed_key)}, not by "
                             f"the organizer's key {fingerprint(public)} that the meta-scoring program "
                             f"carries, so it is not ranked: {who}.")
    from ecdsa import BadSignatureError, Ed25519, VerifyingKey

    try:
        VerifyingKey.from_string(public, curve=Ed25519).verify(signature, _message(public, digests))
    except (BadSignatureError, ValueError, AssertionError):
        raise SignatureError(f"the signature in {SIGNATURE_NAME} does not match its list of files, so "
                             f"this results export is not ranked: {who}.") from None
    present = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel == SIGNATURE_NAME or rel in PLATFORM_FILES or path.is_dir():
            continue
        present[rel] = path
    for rel in sorted(set(present) - set(digests)):
        raise SignatureError(f"{rel} is in the results export but not in its signature (added after "
                             f"the organizer signed it), so the export is not ranked: {who}.")
    for rel in sorted(digests):
        path = present.get(rel)
        if path is None or path.is_symlink() or not path.is_file():
            raise SignatureError(f"{rel}, signed by the organizer, is missing from the results export, "
                                 f"so it is not ranked: {who}.")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digests[rel]:
            raise SignatureError(f"{rel} was changed after the organizer signed the results export, so "
                                 f"it is not ranked: {who}.")
    return fingerprint(public)
