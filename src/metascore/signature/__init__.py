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
  the files the readers take as scores): the SHA-256 of every other file, what the export is
  for (:class:`~metascore.signature.binding.Binding`: this competition's meta phase, once its
  phases closed) and when it was signed, and an Ed25519 signature of all that
  (:func:`signature_file`). ``metascore codabench submit`` and ``sign``, and the mock runner,
  write it (:func:`sign_folder`); the meta-scoring program checks it (:func:`verify_folder`):
  the key it carries made it, it is for this competition's meta phase (the token of the
  meta task's reference data) and was pulled once the phases had closed, every file it
  could read is listed with its digest and every listed file is present.
- **The key's files** are private as ssh keeps them: the key's folder is made 700 and the key
  600 whatever the umask, and a key that others may read or write, or that another user owns,
  is refused with the ``chmod`` that mends it (:func:`organizer_key`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_bytes
from ..errors import ConfigError, InputError
from .binding import Binding, stale_reason

__all__ = [
    "KEY_ENV", "PUBLIC_KEY_NAME", "SIGNATURE_NAME", "OrganizerKey", "SignatureError",
    "default_key_path", "organizer_key", "fingerprint", "public_key_text", "read_public_key",
    "signature_file", "folder_files", "sign_folder", "verify_folder", "SignedExport",
    "MAX_SIGNATURE_SIZE",
]

#: The environment variable naming the organizer's private key file.
KEY_ENV = "METASCORE_ORGANIZER_KEY"
#: The public key's file in the meta-scoring program's folder.
PUBLIC_KEY_NAME = "organizer_key.pub"
#: The signature's file at the root of a results export.
SIGNATURE_NAME = "metascore.sig"
#: What the platform itself adds to a submission's folder (the worker's program statuses).
PLATFORM_FILES = frozenset({"metadata"})
_FORMAT = "metascore-signature/2"
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
    (the folders it makes 700, the key 600, whatever the umask) when ``create`` and the file
    does not exist. A key file that others may read or write, or in a folder others may
    write, or owned by another user, is refused (:class:`ConfigError` naming the ``chmod``)."""
    from ecdsa import Ed25519, SigningKey

    where = Path(path).expanduser() if path is not None else default_key_path()
    if not where.exists():
        if not create:
            raise ConfigError(f"no organizer key at {where}: the key that signed the bundle's meta "
                              f"program is on another machine (copy its file here, or set ${KEY_ENV}).")
        seed = secrets.token_bytes(32)
        try:
            _private_folders(where.parent)
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                os.fchmod(fh.fileno(), 0o600)  # not the umask's say
                fh.write(_KEY_HEAD + seed.hex() + "\n")
        except OSError as exc:
            raise ConfigError(f"cannot make the organizer key {where}: {exc.strerror or exc}; set "
                              f"${KEY_ENV} to a file you can write, or copy your key there.") from None
    else:
        _check_private(where)
        seed = _hex_line(where, 32, "organizer key")
    public = SigningKey.from_string(seed, curve=Ed25519).get_verifying_key().to_string()
    return OrganizerKey(seed, public, where)


def _private_folders(folder: Path) -> None:
    """Make ``folder`` and the parents it lacks, each 700 whatever the umask (the folders
    that exist are left as they are)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir(mode=0o700)
        os.chmod(made, 0o700)


def _check_private(path: Path) -> None:
    """Refuse a key others could read or swap: as ssh refuses a private key whose mode is too
    open. The key's folder may not be writable by others either (they could replace the key)."""
    try:
        info, folder = path.stat(), path.resolve().parent.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read the organizer key {path}: {exc.strerror or exc}.") from None
    me = os.geteuid()
    if info.st_uid not in (me, 0) and me != 0:
        raise ConfigError(f"the organizer key {path} belongs to another user (uid {info.st_uid}); use "
                          f"a key of your own (copy it: `cp {path} ~/.config/metascore/organizer_key`).")
    if info.st_mode & 0o077:
        raise ConfigError(f"the organizer key {path} may be read or changed by other users (mode "
                          f"{info.st_mode & 0o777:04o}), so it is not used: run `chmod 600 {path}`.")
    if folder.st_mode & 0o022 and not folder.st_mode & 0o1000:
        where = path.resolve().parent
        raise ConfigError(f"the folder of the organizer key, {where}, may be written by other users "
                          f"(mode {folder.st_mode & 0o777:04o}), who could swap the key, so it is not "
                          f"used: run `chmod 700 {where}`.")


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
@dataclass(frozen=True)
class SignedExport:
    """What :func:`verify_folder` found: the key's fingerprint, what the export is for and
    when it was signed."""

    fingerprint: str
    binding: Binding
    signed_at: str

    def provenance(self) -> dict[str, object]:
        """The export's provenance as the outputs record it (``leaderboard.json``'s ``export``)."""
        return {"signed_by": self.fingerprint, "signed_at": self.signed_at, **self.binding.to_dict()}


def _manifest(files: Mapping[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(files[name]).hexdigest() for name in sorted(files)}


def _message(public: bytes, binding: Mapping[str, object], signed_at: str, digests: Mapping[str, str]) -> bytes:
    return json.dumps({"format": _FORMAT, "key": public.hex(), "for": dict(binding), "signed_at": signed_at,
                       "files": dict(digests)}, sort_keys=True, separators=(",", ":")).encode("utf-8")


def signature_file(files: Mapping[str, bytes], key: OrganizerKey, binding: Binding, signed_at: str) -> str:
    """The text of ``metascore.sig`` for ``files`` (relative POSIX path -> content), signed
    for ``binding`` at ``signed_at`` (ISO 8601)."""
    digests = _manifest({k: v for k, v in files.items() if k != SIGNATURE_NAME})
    signature = key.sign(_message(key.public, binding.to_dict(), signed_at, digests))
    return json.dumps({"format": _FORMAT, "key": key.public.hex(), "fingerprint": key.fingerprint,
                       "for": binding.to_dict(), "signed_at": signed_at, "files": digests,
                       "signature": signature.hex()}, indent=1) + "\n"


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but hidden ones and the signature: relative POSIX path ->
    content (what ``metascore codabench submit`` zips)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(p.startswith(".") for p in rel.parts) and rel.as_posix() != SIGNATURE_NAME:
            out[rel.as_posix()] = path.read_bytes()
    return out


def sign_folder(folder: Path, key: OrganizerKey, binding: Binding, signed_at: str) -> Path:
    """Write ``folder/metascore.sig`` for the files of ``folder`` (:func:`folder_files`)."""
    path = folder / SIGNATURE_NAME
    write_bytes(path, signature_file(folder_files(folder), key, binding, signed_at).encode("utf-8"))
    return path


def verify_folder(folder: Path, public: bytes, token: str) -> SignedExport:
    """Check ``folder/metascore.sig`` against ``public`` and the meta phase's ``token``.

    Raises :class:`SignatureError` (one sentence) when the signature is missing, malformed,
    made by another key or wrong; when it was made for another competition or meta phase
    (``token`` is not among its tokens) or on an export pulled before the phases closed
    (:func:`~metascore.signature.binding.stale_reason`); when a file is missing, changed or not
    listed (the platform's own ``metadata`` at the root aside).
    """
    data = _read_signature(folder / SIGNATURE_NAME)
    try:
        signed_key, signature = bytes.fromhex(data["key"]), bytes.fromhex(data["signature"])
        digests, binding, signed_at = data["files"], Binding.from_dict(data["for"]), data["signed_at"]
        if data.get("format") != _FORMAT or not isinstance(signed_at, str) or not isinstance(digests, dict) \
                or not all(isinstance(k, str) and isinstance(v, str) for k, v in digests.items()):
            raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _not_a_signature(data) from None
    if signed_key != public:
        raise SignatureError(f"this results export is signed by key {fingerprint(signed_key)}, not by "
                             f"the organizer's key {fingerprint(public)} that the meta-scoring program "
                             f"carries, so it is not ranked: {_WHO}.")
    from ecdsa import BadSignatureError, Ed25519, VerifyingKey

    try:
        VerifyingKey.from_string(public, curve=Ed25519).verify(
            signature, _message(public, data["for"], signed_at, digests))
    except (BadSignatureError, ValueError, AssertionError):
        raise SignatureError(f"the signature in {SIGNATURE_NAME} does not match what it signs, so "
                             f"this results export is not ranked: {_WHO}.") from None
    if token not in binding.tokens:
        raise SignatureError(f"this results export was signed for {binding.describe()}, not for this "
                             f"competition's meta phase (its token {token[:8]}... is not the signed "
                             f"{', '.join(t[:8] + '...' for t in binding.tokens) or 'none'}), so it is "
                             f"not ranked: sign this competition's own pull (`metascore codabench submit`).")
    stale = stale_reason(binding)
    if stale is not None:
        raise SignatureError(f"this results export is stale: {stale}, so it is not ranked: pull the "
                             "leaderboards again now and submit that (`metascore codabench pull`, then "
                             "`submit`).")
    _check_files(folder, digests)
    return SignedExport(fingerprint(public), binding, signed_at)


_WHO = "only the organizer's `metascore codabench submit` makes a final ranking"
#: The largest ``metascore.sig`` read (a listing of 100,000 files is about 10 MB).
MAX_SIGNATURE_SIZE = 64 << 20


def _read_signature(path: Path) -> dict:
    if not path.is_file():
        raise SignatureError(f"this results export is not signed by the organizer (no {SIGNATURE_NAME} "
                             f"in it), so it is not ranked: {_WHO}.")
    try:
        if path.stat().st_size > MAX_SIGNATURE_SIZE:
            raise ValueError
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise _not_a_signature(data)
    return data


def _not_a_signature(data: object) -> SignatureError:
    old = isinstance(data, dict) and isinstance(data.get("format"), str) \
        and data["format"].startswith("metascore-signature/") and data["format"] != _FORMAT
    if old:
        return SignatureError(f"{SIGNATURE_NAME} is in an older signature format ({data['format']}), "
                              f"which does not say what the export is for, so it is not ranked: sign "
                              f"it again with this metascore ({_FORMAT}).")
    return SignatureError(f"{SIGNATURE_NAME} is not a metascore signature, so this results export is "
                          f"not ranked: {_WHO}.")


def _check_files(folder: Path, digests: Mapping[str, str]) -> None:
    present = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel == SIGNATURE_NAME or rel in PLATFORM_FILES or path.is_dir():
            continue
        present[rel] = path
    for rel in sorted(set(present) - set(digests)):
        raise SignatureError(f"{rel} is in the results export but not in its signature (added after "
                             f"the organizer signed it), so the export is not ranked: {_WHO}.")
    for rel in sorted(digests):
        path = present.get(rel)
        if path is None or path.is_symlink() or not path.is_file():
            raise SignatureError(f"{rel}, signed by the organizer, is missing from the results export, "
                                 f"so it is not ranked: {_WHO}.")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digests[rel]:
            raise SignatureError(f"{rel} was changed after the organizer signed the results export, so "
                                 f"it is not ranked: {_WHO}.")
