"""The Codabench HTTP client: token handling, retries with backoff, one-line failures."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import requests

from codabench_replay import TOKEN, Answer, Replay, serve
from metascore.codabench.client import Client, PlatformError, read_token
from metascore.codabench import TOKEN_ENV


@pytest.fixture
def replay():
    r = Replay()
    stop = serve(r)
    yield r
    stop()


def client(replay: Replay, **kw) -> tuple[Client, list[float]]:
    waits: list[float] = []
    options = {"timeout": 2.0, "retries": 2, "backoff": 0.5, "sleep": waits.append} | kw
    return Client(replay.url, TOKEN, **options), waits


def test_token_header_sent_to_the_api(replay):
    replay.add("GET", "/api/x/", {"ok": 1})
    c, _ = client(replay)
    assert c.get_json("/api/x/") == {"ok": 1}
    assert replay.log[0].headers["Authorization"] == f"Token {TOKEN}"


def test_500_then_success_retries_with_backoff(replay):
    replay.replace("GET", "/api/x/", [Answer(500, {"detail": "boom"}), Answer(503), Answer(200, [1])])
    c, waits = client(replay)
    assert c.get_json("/api/x/") == [1]
    assert len(replay.log) == 3
    assert waits == [0.5, 1.0]  # doubled each time


def test_429_honours_retry_after(replay):
    replay.replace("GET", "/api/x/", [
        Answer(429, {"detail": "Request was throttled."}, headers={"Retry-After": "3"}),
        Answer(200, {})])
    c, waits = client(replay)
    assert c.get_json("/api/x/") == {}
    assert waits == [3.0]  # Retry-After is longer than the backoff


def test_persistent_500_gives_one_line_after_all_attempts(replay):
    replay.add("GET", "/api/x/", {"detail": "Server Error"}, status=500)
    c, waits = client(replay)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/x/", what="results export")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("results export: HTTP 500 (Server Error) (3 attempts)")
    assert len(replay.log) == 3 and len(waits) == 2


def test_post_is_not_retried_on_500(replay):
    replay.add("POST", "/api/submissions/", {"detail": "oops"}, status=500)
    c, _ = client(replay)
    with pytest.raises(PlatformError):
        c.send_json("POST", "/api/submissions/", {"phase": 1})
    assert len(replay.requests("POST")) == 1


def test_slow_answer_beyond_timeout(replay):
    replay.add("GET", "/api/slow/", {"late": True}, delay=1.0)
    c, waits = client(replay, timeout=0.2, retries=1)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/slow/", what="competition 41")
    assert str(err.value).startswith("competition 41: no answer within 0.2 s (2 attempts)")
    assert waits == [0.5]


@pytest.mark.parametrize("status", [401, 403])
def test_refused_token_names_the_rights_needed(replay, status):
    replay.add("GET", "/api/competitions/1/results.json", {"detail": "You are not a competition "
               "admin or superuser"}, query="phase=2", status=status)
    c, _ = client(replay)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/competitions/1/results.json", {"phase": 2}, what="results export")
    message = str(err.value)
    assert f"HTTP {status} (You are not a competition admin or superuser)" in message
    assert "organizer or collaborator" in message
    assert TOKEN not in message
    assert len(replay.log) == 1  # not retried


def test_wrong_token_is_refused(replay):
    replay.add("GET", "/api/x/", {})
    c = Client(replay.url, "not-the-token", retries=0)
    with pytest.raises(PlatformError, match=r"HTTP 403 \(Invalid token.\)"):
        c.get_json("/api/x/")


def test_not_json_and_bad_site():
    with pytest.raises(PlatformError, match="not an http"):
        Client("ftp://example.org")


def test_html_answer_is_reported(replay):
    replay.add("GET", "/api/x/", "<html>login</html>", content_type="text/html")
    c, _ = client(replay)
    with pytest.raises(PlatformError, match="answered text/html, not JSON"):
        c.get_json("/api/x/")


def test_upload_sends_no_token(replay):
    replay.add("PUT", "/storage/abc", None)
    c, _ = client(replay)
    c.upload(f"{replay.url}/storage/abc", b"PK\x05\x06" + bytes(18))
    put = replay.requests("PUT")[0]
    assert "Authorization" not in put.headers
    assert put.headers["Content-Type"] == "application/zip"


def test_read_token(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, " abc \n")
    assert read_token() == "abc"
    path = tmp_path / "token"
    path.write_text("from-file\n")
    assert read_token(path) == "from-file"
    path.write_text("")
    with pytest.raises(PlatformError, match="is empty"):
        read_token(path)
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(PlatformError, match="set CODABENCH_TOKEN or give --token-file"):
        read_token()
    assert read_token(required=False) is None


def test_connection_refused_is_one_line():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    c = Client(f"http://127.0.0.1:{port}", TOKEN, retries=1, backoff=0.25, sleep=waits.append)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/competitions/1/", what="competition 1")
    assert str(err.value).startswith(f"competition 1: cannot connect to 127.0.0.1:{port} (")
    assert str(err.value).endswith("(2 attempts); is --site right, and the site up?")
    assert waits == [0.25]


# ---------------------------------------------------------------- the token is never shown
SECRET = "tok_3f9a1c\n7b2e5d"  # a token file with a line break inside the token


def test_token_with_a_line_break_is_refused_without_showing_it(tmp_path, monkeypatch):
    path = tmp_path / "token"
    path.write_text(SECRET + "\n")
    with pytest.raises(PlatformError) as err:
        read_token(path)
    message = str(err.value)
    assert message.startswith(f"the API token in the token file {path} contains whitespace")
    assert "tok_3f9a1c" not in message and "7b2e5d" not in message
    path.write_bytes(b"tok_\xff\xfe")
    with pytest.raises(PlatformError, match=f"cannot read the token file {path}: it is not UTF-8"):
        read_token(path)
    monkeypatch.setenv(TOKEN_ENV, "abc def")
    with pytest.raises(PlatformError, match=r"the API token in \$CODABENCH_TOKEN contains") as err:
        read_token()
    assert "abc" not in str(err.value)


@pytest.mark.parametrize("inside", ["\n", "\x00", " ", "\t", "\u00e9", "\u2028"])
def test_client_refuses_a_token_it_cannot_send(inside):
    with pytest.raises(PlatformError, match="the API token given to Client contains") as err:
        Client("http://127.0.0.1:9", f"q7w3{inside}z9x5")
    assert "q7w3" not in str(err.value) and "z9x5" not in str(err.value)


def test_cli_never_prints_the_token(tmp_path, capsys):
    from metascore.cli import main

    path = tmp_path / "token"
    path.write_text(SECRET)
    code = main(["codabench", "pull", "--site", "http://127.0.0.1:9", "--competition", "1",
                 "--token-file", str(path), "--retries", "0", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "tok_3f9a1c" not in out + err and "7b2e5d" not in out + err
    assert str(path) in err


def test_errors_building_a_request_never_quote_it(replay, monkeypatch):
    c, waits = client(replay)

    def refuse(*args, **kwargs):  # what requests says of a header it cannot send
        raise requests.exceptions.InvalidHeader(
            f"Invalid return character or leading space in header: Authorization: 'Token {TOKEN}'")

    monkeypatch.setattr(c.session, "request", refuse)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/x/", what="competition 1")
    assert TOKEN not in str(err.value)
    assert str(err.value).startswith("competition 1: the request could not be sent (InvalidHeader)")
    assert waits == []  # not retried


def test_invalid_url_is_a_platform_error():
    c = Client("http://127.0.0.1:99999", TOKEN, retries=0)  # no such port
    with pytest.raises(PlatformError, match="could not be sent") as err:
        c.get_json("/api/x/")
    assert TOKEN not in str(err.value)


# ---------------------------------------------------------------- the whole request is bounded
def _serve(listener: socket.socket, serve_one, stop: threading.Event | None = None) -> str:
    """Answer each connection to ``listener`` with ``serve_one`` in a thread (until ``stop``
    is set or the listener closed); the site's address."""
    def accept() -> None:
        while stop is None or not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.fixture
def drip():
    """``drip(first, byte)``: a site on 127.0.0.1 that answers every request with ``first``,
    then ``byte`` every 0.2 s for 8 s (far beyond the timeouts below), then closes."""
    servers = []

    def start(first: bytes, byte: bytes = b" ") -> str:
        stop = threading.Event()
        listener = socket.create_server(("127.0.0.1", 0))

        def serve_one(conn: socket.socket) -> None:
            with conn:
                conn.recv(65536)  # the request
                try:
                    conn.sendall(first)
                    end = time.monotonic() + 8.0
                    while time.monotonic() < end and not stop.wait(0.2):
                        conn.sendall(byte)
                except OSError:  # the client hung up
                    pass

        servers.append((stop, listener))
        return _serve(listener, serve_one, stop)

    yield start
    for stop, listener in servers:
        stop.set()
        listener.close()


@pytest.mark.parametrize("first", [
    HEAD + b"Content-Length: 1000\r\n\r\n",  # the body, one byte at a time
    HEAD + b"Connection: close\r\n\r\n[",  # the body up to the end of the stream
    HEAD + b"X-Slow: ",  # the headers themselves, one byte at a time
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1\r\n[\r\n",  # chunks
], ids=["body", "body-until-close", "headers", "chunked"])
def test_a_slow_drip_cannot_outlast_the_timeout(drip, first):
    byte = b"1\r\n \r\n" if b"chunked" in first else b" "
    c = Client(drip(first, byte), TOKEN, timeout=1.0, retries=0)
    start = time.monotonic()
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/x/", what="competition 1")
    assert time.monotonic() - start < 5.0
    assert str(err.value).startswith("competition 1: no answer within 1 s;")


def test_a_slow_drip_is_retried_and_each_attempt_bounded(drip):
    waits: list[float] = []
    c = Client(drip(HEAD + b"X-Slow: "), TOKEN, timeout=0.5, retries=2, sleep=waits.append)
    start = time.monotonic()
    with pytest.raises(PlatformError, match=r"no answer within 0.5 s \(3 attempts\)"):
        c.get_json("/api/x/", what="competition 1")
    assert time.monotonic() - start < 5.0
    assert waits == [1.0, 2.0]


def test_a_slow_drip_through_a_proxy_is_bounded_too(drip):
    c = Client("http://codabench.invalid", TOKEN, timeout=1.0, retries=0)
    c.session.proxies = {"http": drip(HEAD + b"X-Slow: ")}  # e.g. from $HTTP_PROXY
    start = time.monotonic()
    with pytest.raises(PlatformError, match="no answer within 1 s"):
        c.get_json("/api/x/")
    assert time.monotonic() - start < 5.0



def test_a_slow_drip_of_a_proxy_tunnel_is_bounded_too(drip):
    # https through an HTTP proxy: the proxy's answer to CONNECT, one byte at a time
    c = Client("https://codabench.invalid", TOKEN, timeout=1.0, retries=0)
    c.session.proxies = {"https": drip(b"HTTP/1.1 200 Connection established\r\nX-Slow: ")}
    start = time.monotonic()
    with pytest.raises(PlatformError, match="no answer within 1 s"):
        c.get_json("/api/x/")
    assert time.monotonic() - start < 5.0


# ---------------------------------------------------------------- the answer's size is bounded
@pytest.fixture
def flood():
    """``flood(head)``: a site on 127.0.0.1 that answers every request with ``head``, then
    as many bytes as it can (256 MiB), then closes: an answer without a length."""
    servers = []

    def start(head: bytes) -> tuple[str, dict]:
        sent = {"bytes": 0}
        listener = socket.create_server(("127.0.0.1", 0))

        def serve_one(conn: socket.socket) -> None:
            with conn:
                conn.recv(65536)
                try:
                    conn.sendall(head)
                    chunk = b"[" + b" " * ((1 << 20) - 1)
                    for _ in range(256):
                        conn.sendall(chunk)
                        sent["bytes"] += len(chunk)
                except OSError:  # the client hung up
                    pass

        servers.append(listener)
        return _serve(listener, serve_one), sent

    yield start
    for listener in servers:
        listener.close()


def test_an_answer_beyond_the_bound_is_cut_there_in_one_line(flood):
    """Issue 42, item 7: an answer of unannounced length is read up to ``max_answer`` and no
    further; the error names the address and the bound, and no retry reads it again."""
    url, sent = flood(HEAD + b"Connection: close\r\n\r\n")
    c = Client(url, TOKEN, timeout=20.0, retries=2, max_answer=4 << 20)
    start = time.monotonic()
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/competitions/1/results.json", {"phase": 5}, what="results export")
    assert time.monotonic() - start < 10.0
    assert str(err.value) == (f"results export: the answer of {url}/api/competitions/1/results.json"
                              "?phase=5 is larger than 4 MiB, the most this client reads; raise "
                              "--max-answer if the site really sends that much.")
    assert "\n" not in str(err.value) and TOKEN not in str(err.value)
    time.sleep(0.5)
    assert sent["bytes"] < 64 << 20  # the client hung up near the bound


def test_an_announced_answer_beyond_the_bound_is_refused_unread(replay):
    replay.add("GET", "/api/x/", "[" + " " * (2 << 20) + "]")
    c, _ = client(replay, max_answer=1 << 20)
    with pytest.raises(PlatformError, match=r"the answer of .*/api/x/ is larger than 1 MiB \(it "
                       r"announces 2,097,154 bytes\), the most this client reads"):
        c.get_json("/api/x/")
    assert len(replay.requests("GET")) == 1  # not retried


@pytest.mark.parametrize("payload, message", [
    (b"[" * 200_000 + b"]" * 200_000, "is nested too deep to read"),
    (b"[" + b"1" * 5000 + b"]", "holds a number too long to read"),
    (b'{"a": 1, "b": {"x": 1, "x": 2}}', "gives the key 'x' twice in one object"),
], ids=["200,000 deep", "5,000 digits", "key twice"])
def test_json_the_decoder_cannot_take_is_one_line(replay, payload, message):
    """Issue 42, items 10 and 12: ``_json`` caught ValueError only (a RecursionError got
    through), and a key given twice silently kept its last value."""
    replay.add("GET", "/api/x/", payload)
    c, _ = client(replay)
    with pytest.raises(PlatformError) as err:
        c.get_json("/api/x/", what="competition 1")
    text = str(err.value)
    assert text.startswith(f"competition 1: the answer of {replay.url}/api/x/ ") and message in text
    assert "\n" not in text
