"""HTTP to a Codabench site: token handling, timeouts, retries and one-line errors.

Every request goes through :class:`Client`. It sends ``Authorization: Token <key>`` to the
site's ``/api/`` only (never to the signed storage URLs the site hands out), retries with
exponential backoff on 429 and 5xx answers and on timeouts or dropped connections (POST
only on 429: a retried POST could create a second submission), and turns every failure
into a :class:`PlatformError`: one sentence naming the request, what the site said, and
what to do. The token never appears in a message, a log line or a file: a token that
cannot go in a header is refused without being shown, and the text of a failed request's
exception (which may quote the headers) is never shown either.

``timeout`` bounds each whole request (connecting, sending, and reading the whole answer),
not each read from the socket: see :class:`_Deadline`. ``max_answer`` bounds what it reads:
the answer is read in pieces and refused, in one line naming the address and the bound,
as soon as it grows beyond (an announced length beyond is refused before any byte is
read), so the time spent on an answer after it arrived (parsing it) is bounded too. A
JSON answer nested too deep to read, holding a number too long to read or a key twice in
one object is refused the same way.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3 import poolmanager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .._version import __version__
from ..errors import MetascoreError
from . import MAX_ANSWER, TOKEN_ENV

__all__ = ["PlatformError", "Client", "read_token"]

#: HTTP answers worth another try: rate limit and server-side failures.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class PlatformError(MetascoreError):
    """The platform refused a request, did not answer, or sent something unexpected.

    ``status`` is the HTTP status of a refused request (``None`` otherwise).
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def read_token(token_file: str | os.PathLike[str] | None = None, *, required: bool = True) -> str | None:
    """The API token: from ``token_file`` when given, else from ``$CODABENCH_TOKEN``.

    Never from the command line (it would land in the shell history and ``ps``).
    """
    if token_file is not None:
        path = Path(token_file)
        try:
            token = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "it is not UTF-8 text"
            raise PlatformError(f"cannot read the token file {path}: {reason}.") from None
        if not token:
            raise PlatformError(f"the token file {path} is empty.")
        return _checked(token, f"in the token file {path}")
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token and required:
        raise PlatformError(
            f"no API token: set {TOKEN_ENV} or give --token-file FILE (the token of an "
            "organizer or collaborator of the competition, from the site's user settings)."
        )
    return _checked(token, f"in ${TOKEN_ENV}") if token else None


def _checked(token: str, where: str) -> str:
    """``token`` if it is one word of printable ASCII, as it must be in a header."""
    if not all("!" <= char <= "~" for char in token):
        # never show the token, not even a part of it
        raise PlatformError(
            f"the API token {where} contains whitespace, a control character or a non-ASCII "
            "character; a token is a single line of printable ASCII with no spaces.")
    return token


class Client:
    """A Codabench site's API.

    Parameters
    ----------
    site : the site's address, e.g. ``https://www.codabench.org``.
    token : the API token (see :func:`read_token`); ``None`` sends no credentials.
    timeout : seconds each request may take in all, from connecting to the answer's last
        byte (each retry has its own).
    max_answer : the most bytes of an answer the client reads (after decompression).
    retries : further attempts after a retryable failure.
    backoff : the first wait between attempts, doubled each time (a 429's
        ``Retry-After`` wins when longer, up to 60 s).
    sleep, log : injectable for tests and progress lines.
    """

    def __init__(
        self,
        site: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        max_answer: int = MAX_ANSWER,
        retries: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] = lambda _: None,
    ) -> None:
        parts = urlsplit(site.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PlatformError(f"--site {site!r} is not an http(s) address such as https://www.codabench.org.")
        self.site = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
        self.timeout, self.retries, self.backoff = float(timeout), int(retries), float(backoff)
        self.max_answer = int(max_answer)
        self.sleep, self.log = sleep, log
        self.session = requests.Session()
        self.session.mount("http://", _Adapter())
        self.session.mount("https://", _Adapter())
        self.session.headers["User-Agent"] = f"metascore/{__version__}"
        self._token = _checked(token, "given to Client") if token else None

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """The full address of an API path (``/api/...``) with its query string."""
        query = f"?{urlencode(dict(params))}" if params else ""
        return f"{self.site}{path}{query}"

    # ------------------------------------------------------------------ JSON API
    def get_json(self, path: str, params: Mapping[str, Any] | None = None, *, what: str = "") -> Any:
        return _json(self.request("GET", path, params=params, what=what), what or path)

    def send_json(self, method: str, path: str, body: Mapping[str, Any], *, what: str = "") -> Any:
        return _json(self.request(method, path, json=dict(body), what=what), what or path)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        what: str = "",
    ) -> requests.Response:
        """One API call with retries; a non-2xx answer raises :class:`PlatformError`."""
        headers = {"Accept": "application/json"}
        if self._token:
            headers["Authorization"] = f"Token {self._token}"
        return self._send(method, self.url(path, params), what or f"{method} {path}",
                          headers=headers, json=json)

    def upload(self, url: str, data: bytes, content_type: str = "application/zip") -> None:
        """PUT a file to a signed storage URL (no API credentials go there)."""
        self._send("PUT", url, "the upload to the storage URL the site returned",
                   headers={"Content-Type": content_type}, data=data)

    def download(self, url: str, what: str) -> bytes:
        """GET a file from a signed storage URL the site returned (no API credentials go there)."""
        return self._send("GET", url, what).content

    def dataset(self, key: str, what: str) -> bytes:
        """A dataset's file by its key: the site's ``/datasets/download/<key>/`` answers with a
        redirect to a signed storage URL, which :meth:`download` then reads."""
        headers = {"Authorization": f"Token {self._token}"} if self._token else {}
        answer = self._send("GET", self.url(f"/datasets/download/{key}/"), what, headers=headers,
                            redirect=True)
        target = answer.headers.get("Location")
        if not target:
            return answer.content  # served directly
        return self.download(urljoin(self.url("/"), target), what)

    def _send(self, method: str, url: str, what: str, *, redirect: bool = False,
              **kwargs: Any) -> requests.Response:
        attempt = 0
        while True:
            attempt += 1
            response = None
            deadline = _Deadline(self.timeout)
            try:
                with deadline:
                    response = self.session.request(method, url, timeout=self.timeout,
                                                    allow_redirects=False, stream=True, **kwargs)
                    _read_body(response, self.max_answer)
                if deadline.expired:  # the answer was cut at the deadline: maybe incomplete
                    response.close()
                    raise requests.Timeout()
            except _TooLarge as big:
                raise PlatformError(
                    f"{what}: the answer of {url} is larger than {_mib(self.max_answer)}"
                    f"{big.announced}, the most this client reads; raise --max-answer if the "
                    "site really sends that much.") from None
            except (OSError, ValueError) as exc:  # every requests error is one or both
                response = None
                failure, retryable, hint = _failure(exc, deadline.expired, self.timeout, url)
                retryable = retryable and method != "POST"
            else:
                if response.status_code < 300 or (redirect and response.status_code in (301, 302, 303, 307, 308)):
                    return response
                failure = _describe(response)
                retryable = response.status_code == 429 or (
                    response.status_code in RETRY_STATUS and method != "POST")
            last = not retryable or attempt > self.retries
            if last and response is not None:
                raise PlatformError(_explain(response, what, failure, attempt), response.status_code)
            if last:
                tries = f" ({attempt} attempts)" if attempt > 1 else ""
                raise PlatformError(f"{what}: {failure}{tries}; {hint}")
            wait = self.backoff * 2 ** (attempt - 1)
            if response is not None and response.status_code == 429:
                wait = max(wait, min(_retry_after(response), 60.0))
            self.log(f"[!] {what}: {failure}; retrying in {wait:g} s")
            self.sleep(wait)


def _failure(exc: Exception, expired: bool, timeout: float, url: str) -> tuple[str, bool, str]:
    """What went wrong with a request that got no answer, whether to retry, and a hint."""
    if expired or isinstance(exc, requests.Timeout):
        return (f"no answer within {timeout:g} s", True,
                "is the site up? Try again later or raise --timeout.")
    if isinstance(exc, requests.ConnectionError):
        return (f"cannot connect to {urlsplit(url).netloc} ({_reason(exc)})", True,
                "is --site right, and the site up?")
    # e.g. InvalidHeader or InvalidURL: their text may quote a header, so the token; name the
    # kind of error only
    return f"the request could not be sent ({type(exc).__name__})", False, "is --site right?"


class _Deadline:
    """Ends one request at ``timeout`` seconds, whatever the server does.

    requests' timeout bounds each read from the socket, so a server sending a byte a second
    (in the headers or the body) keeps a request alive forever. Checking a deadline between
    reads of the body would not help while http.client reads the headers, so a timer thread
    shuts the request's socket down at the deadline instead: any read or write blocked on it
    returns at once (an end of stream or an error), and :meth:`Client._send` then reports a
    timeout whatever requests made of it (``expired``). The connection (:class:`_Tracked`)
    gives its socket to the deadline of the request running in its thread.
    """

    current = threading.local()  # the deadline of the request running in this thread

    def __init__(self, timeout: float) -> None:
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.expired = self.done = False
        self.timer = threading.Timer(timeout, self.expire)
        self.timer.daemon = True

    def __enter__(self) -> _Deadline:
        _Deadline.current.deadline = self
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()
        _Deadline.current.deadline = None
        with self.lock:  # a late timer must not shut a connection another request reuses
            self.done, self.sock = True, None

    def watch(self, sock: socket.socket | None) -> None:
        # the socket itself: http.client drops it from the connection when the answer is
        # read up to the end of the stream
        with self.lock:
            if not self.done and sock is not None:
                self.sock = sock
                if self.expired:  # expired while connecting: no socket to shut back then
                    _shut(sock)

    def expire(self) -> None:
        with self.lock:
            if not self.done:
                self.expired = True
                _shut(self.sock)


def _shut(sock: socket.socket | None) -> None:
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


class _Tracked:
    """An urllib3 connection that gives its socket to the deadline of the request using it."""

    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        # urllib3 (1.26 and 2) opens the socket here: watched from before a TLS handshake or
        # a proxy's answer to CONNECT
        sock = super()._new_conn()  # type: ignore[misc]
        _watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> Any:  # a kept-alive connection
        _watch(self.sock)
        return super().request(*args, **kwargs)  # type: ignore[misc]


def _watch(sock: socket.socket | None) -> None:
    deadline = getattr(_Deadline.current, "deadline", None)
    if deadline is not None:
        deadline.watch(sock)


class _HTTPConnection(_Tracked, HTTPConnection):
    pass


class _HTTPSConnection(_Tracked, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _Adapter(HTTPAdapter):
    """requests' adapter, with connections a :class:`_Deadline` can shut down (also through
    an HTTP proxy; a SOCKS proxy keeps its own connections, bounded per read only)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _tracked_pools(self.poolmanager)

    def proxy_manager_for(self, *args: Any, **kwargs: Any) -> Any:
        return _tracked_pools(super().proxy_manager_for(*args, **kwargs))


def _tracked_pools(manager: poolmanager.PoolManager) -> poolmanager.PoolManager:
    if manager.pool_classes_by_scheme is poolmanager.pool_classes_by_scheme:  # urllib3's own
        manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return manager


class _TooLarge(Exception):
    """An answer beyond the client's bound (``announced``: its announced size, if it was)."""

    def __init__(self, announced: str = "") -> None:
        super().__init__(announced)
        self.announced = announced


def _mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB" if size >= 2**20 else f"{size:,} bytes"


def _read_body(response: requests.Response, limit: int) -> None:
    """Read a streamed answer into ``response`` (its ``content``), at most ``limit`` bytes:
    :class:`_TooLarge` (the connection closed) as soon as it is longer, or announced so."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        response.close()
        raise _TooLarge(f" (it announces {int(declared):,} bytes)")
    chunks, size = [], 0
    for chunk in response.iter_content(1 << 16):
        size += len(chunk)
        if size > limit:
            response.close()
            raise _TooLarge()
        chunks.append(chunk)
    response._content = b"".join(chunks)  # what requests reads .json() and .text from


def _json(response: requests.Response, what: str) -> Any:
    try:
        return _loads(response)
    except json.JSONDecodeError:
        kind = response.headers.get("Content-Type", "unknown content")
        raise PlatformError(
            f"{what}: the site answered {kind}, not JSON; is --site the address of a Codabench "
            "site?"
        ) from None
    except _Duplicate as dup:
        raise PlatformError(f"{what}: the answer of {response.url} gives the key {dup.key} twice in "
                            "one object; a Codabench site sends each once.") from None
    except RecursionError:  # the decoder's own guard: nothing is left half-read
        raise PlatformError(f"{what}: the answer of {response.url} is nested too deep to read; a "
                            "Codabench site sends a few levels.") from None
    except ValueError:  # int() refuses a number of more than 4,300 digits; bytes not UTF-8
        raise PlatformError(f"{what}: the answer of {response.url} holds a number too long to "
                            "read or text that is not UTF-8; is --site a Codabench site?") from None


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = repr(key) if len(key) <= 60 else repr(key[:60]) + "..."


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        raise _Duplicate(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out


def _loads(response: requests.Response) -> Any:
    """The answer's JSON (UTF-8, or UTF-16/32 as JSON allows), a key twice refused."""
    return json.loads(response.content, object_pairs_hook=_unique_keys)


def _describe(response: requests.Response) -> str:
    """``"HTTP 403 (You are not a competition admin or superuser)"``."""
    detail = ""
    try:
        body = _loads(response)
    except (ValueError, RecursionError, _Duplicate):
        body = None
    if isinstance(body, dict):
        detail = str(body.get("detail") or body.get("error") or body.get("error_msg") or "")
        if not detail and body:
            key, value = next(iter(body.items()))
            detail = f"{key}: {value[0] if isinstance(value, list) and value else value}"
    elif isinstance(body, list) and body:
        detail = str(body[0])
    elif len(response.content) < 800 and response.text.strip() and len(response.text) < 200 \
            and "<" not in response.text:
        detail = response.text.strip()
    reason = f"HTTP {response.status_code}"
    return f"{reason} ({detail})" if detail else reason


def _explain(response: requests.Response, what: str, failure: str, attempts: int) -> str:
    status = response.status_code
    if attempts > 1:
        failure += f" ({attempts} attempts)"
    if status in (401, 403):
        return (f"{what}: {failure}: the token was refused or lacks the rights; exports and "
                "submissions to the meta phase need the API token of an organizer or "
                f"collaborator of the competition (in ${TOKEN_ENV} or --token-file).")
    if status == 404:
        return f"{what}: {failure}: not found on {urlsplit(response.url).netloc}."
    if 300 <= status < 400:
        return (f"{what}: {failure}: the site redirects to {response.headers.get('Location', '?')}; "
                "give that address as --site.")
    return f"{what}: {failure}."


def _retry_after(response: requests.Response) -> float:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "0")))
    except ValueError:
        return 0.0


def _reason(exc: Exception) -> str:
    text = str(exc.args[0] if exc.args else exc)
    return text.rsplit(":", 1)[-1].strip(" )'\"") or type(exc).__name__
