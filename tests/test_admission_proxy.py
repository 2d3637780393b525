"""The admission proxy keeps no state across tenants and holds no connection for ever (issue
#39, item 5): no cookie crosses tenants, a slow client is cut off after a stated time,
credentials in ``--upstream`` are never printed, a query string is refused and client input in
log lines is cut and escaped, a secret file others may read is refused, an upstream failing
mid-answer gives one log line, and ``GET /v1/models`` is served. All on loopback, each test
bounded to seconds."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from test_admission import COMPLETION, SECRET, auth, captured_logs

from pytools.admission import app as app_mod
from pytools.admission.app import ProxyConfig, create_app
from pytools.admission.cli import main as admission_cli
from pytools.admission.display import redacted, shown, split_upstream
from pytools.admission.limits import MAX_HEAD_BYTES, Limits
from pytools.admission.loopback import serve_in_thread
from pytools.admission.salt import keyed_salt
from pytools.admission.standin import create_standin
from pytools.admission.tenants import (
    ConfigError,
    add_tenant,
    load_secret,
    load_tenants,
)

ROOT = Path(__file__).resolve().parent.parent
#: Short limits, so the tests that wait for them take seconds.
FAST = Limits(head_timeout_s=1.0, keep_alive_s=1, max_head_bytes=16 * 1024, max_concurrency=64)


@pytest.fixture()
def keys(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tenants.json"
    return {"path": path, "acme": add_tenant(path, "acme"), "globex": add_tenant(path, "globex")}


@contextlib.contextmanager
def proxy(keys: dict[str, Any], upstream: str, limits: Limits | None = FAST,
          **options: Any) -> Iterator[str]:
    config = ProxyConfig(upstream=upstream, tenants=load_tenants(keys["path"]), secret=SECRET,
                         **options)
    with serve_in_thread(create_app(config), max_seconds=60, limits=limits) as url:
        yield url


def unique(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    """Each record once (the capture sees a record at its logger and again at the root)."""
    return list({id(r): r for r in records}.values())


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


# --------------------------------------------------------------------------- cookies


def cookie_upstream(seen: list[dict[str, str | None]]) -> Starlette:
    """An upstream that sets a cookie on every answer (naming the tenant it served) and notes
    the Cookie and Authorization headers each request brought."""

    async def completions(request: Request) -> Response:
        doc = json.loads(await request.body())
        seen.append({"cookie": request.headers.get("cookie"),
                     "authorization": request.headers.get("authorization"),
                     "salt": doc.get("cache_salt")})
        response = JSONResponse({"choices": [{"index": 0, "text": "ok"}]})
        response.set_cookie("session", f"of-{doc.get('cache_salt')}", path="/")
        return response

    return Starlette(routes=[Route("/v1/completions", completions, methods=["POST"])])


def run_two_tenants(keys: dict[str, Any]) -> tuple[list[dict[str, str | None]],
                                                   list[httpx.Response]]:
    seen: list[dict[str, str | None]] = []
    answers = []
    with serve_in_thread(cookie_upstream(seen), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url:
        for tenant in ("acme", "globex", "acme"):
            # a fresh client each time: any cookie that arrives upstream came from the proxy
            with httpx.Client(base_url=url, timeout=30) as client:
                answers.append(client.post("/v1/completions", json=COMPLETION,
                                           headers={**auth(keys[tenant]), "cookie": "mine=1"}))
    return seen, answers


def test_no_cookie_crosses_tenants(keys: dict[str, Any]) -> None:
    """Before: the proxy's one httpx client kept the upstream's ``Set-Cookie`` from acme's
    answer and sent it upstream with globex's next request."""
    seen, answers = run_two_tenants(keys)
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [s["salt"] for s in seen] == [keyed_salt(SECRET, t) for t in ("acme", "globex", "acme")]
    assert [s["cookie"] for s in seen] == [None, None, None]  # not the jar's, not the client's
    assert all("set-cookie" not in a.headers for a in answers)  # nor back to the client


def test_planted_defect_a_shared_cookie_jar_is_caught(keys: dict[str, Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above catches the defect it is about: with an ordinary cookie jar in the
    proxy's client, globex's request arrives with the cookie set on acme's answer."""
    import http.cookiejar

    monkeypatch.setattr(app_mod, "NoCookies", http.cookiejar.CookieJar)
    seen, _ = run_two_tenants(keys)
    assert seen[1]["cookie"] == f"session=of-{keyed_salt(SECRET, 'acme')}"


# --------------------------------------------------------------------------- slow clients


def closed_after(sock: socket.socket, drip: bytes, every_s: float, limit_s: float) -> float:
    """Send ``drip`` a byte at a time, one per ``every_s``, until the server closes the
    connection; how long that took (``limit_s`` + 1 if it never did)."""
    started = time.monotonic()
    sock.settimeout(every_s)
    for i in range(10_000):
        if time.monotonic() - started > limit_s:
            return limit_s + 1
        try:
            sock.sendall(drip[i % len(drip):i % len(drip) + 1])
            data = sock.recv(65536)
            if not data:
                return time.monotonic() - started
            if b"\r\n\r\n" in data and b"connection: close" in data.lower():
                with contextlib.suppress(OSError):
                    while sock.recv(65536):
                        pass
                return time.monotonic() - started
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - started
    return limit_s + 1


HEAD = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 1000 + b"\r\n\r\n"


@pytest.mark.parametrize("after_a_request", [False, True], ids=["first", "after-a-request"])
def test_a_client_dripping_its_head_is_cut_off(keys: dict[str, Any],
                                               after_a_request: bool) -> None:
    """Before: a head dripped one byte per half second held the connection for ever (uvicorn
    times out only an idle connection, and any byte resets that); now the whole head must
    arrive within the head timeout, on a new connection and between requests alike."""
    with serve_in_thread(create_standin(), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url, captured_logs() as logs, \
            socket.create_connection(address(url), timeout=10) as sock:
        if after_a_request:
            body = json.dumps(COMPLETION).encode()
            sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                         + keys["acme"].encode() + b"\r\nContent-Type: application/json\r\n"
                         + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        took = closed_after(sock, HEAD, 0.5, 5.0)
    assert FAST.head_timeout_s - 0.1 <= took <= FAST.head_timeout_s + 1.5, took
    assert "no complete request head within 1 s" in logs.text()
    logs.assert_no_traceback()


def test_planted_defect_plain_uvicorn_keeps_a_dripping_client(keys: dict[str, Any]) -> None:
    """The drip check catches what it is about: uvicorn without the head deadline (as the
    proxy was served before) still holds the connection after three seconds."""
    with serve_in_thread(create_standin(), max_seconds=60) as upstream, \
            proxy(keys, upstream, limits=None) as url, \
            socket.create_connection(address(url), timeout=10) as sock:
        assert closed_after(sock, HEAD, 0.5, 3.0) > 3.0


def test_a_client_dripping_its_body_gets_408(keys: dict[str, Any]) -> None:
    """Before: a body dripped one byte per half second was waited for without end."""
    with serve_in_thread(create_standin(), max_seconds=60) as upstream, \
            proxy(keys, upstream, body_timeout_s=1.0) as url, captured_logs() as logs, \
            socket.create_connection(address(url), timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + keys["acme"].encode() + b"\r\nContent-Length: 1000\r\n\r\n")
        started = time.monotonic()
        out = b""
        sock.settimeout(0.5)
        while time.monotonic() - started < 5:
            with contextlib.suppress(OSError):
                sock.sendall(b" ")
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        took = time.monotonic() - started
    head, _, data = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b"connection: close" in head.lower(), out
    assert b"did not arrive within 1 s" in data
    assert 0.9 <= took <= 3.0, took
    logs.assert_no_traceback()


def test_hundreds_of_half_open_requests_are_cut_off(keys: dict[str, Any]) -> None:
    """Before: 300 connections each holding half a request head were kept for ever. Now past
    the concurrency cap a new request gets 503 at once, and after the head timeout every
    half-open connection is closed and the proxy serves again."""
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url, httpx.Client(base_url=url, timeout=10) as client:
        socks = [socket.create_connection(address(url), timeout=10) for _ in range(300)]
        try:
            for sock in socks:
                sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
            busy = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
            assert busy.status_code == 503 and received == []
            time.sleep(FAST.head_timeout_s + 0.5)
            for sock in socks:
                sock.settimeout(2)
                assert sock.recv(1) == b"", "a half-open connection outlived the head timeout"
        finally:
            for sock in socks:
                sock.close()
        ok = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
        assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("pause", [False, True], ids=["at-once", "in-two-parts"])
def test_an_oversized_head_is_refused(keys: dict[str, Any], pause: bool) -> None:
    """Before: a 17 KiB head sent at once was served (h11's cap counts only a head still
    incomplete); now 431 from the app, or h11's 400 when the head is still arriving."""
    big = b"a" * (MAX_HEAD_BYTES + 1024)
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url, \
            socket.create_connection(address(url), timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + keys["acme"].encode() + b"\r\nContent-Length: 2\r\nX-Big: " + big)
        if pause:
            time.sleep(0.3)
        sock.sendall(b"\r\nConnection: close\r\n\r\n{}")
        out = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                out += chunk
    assert out.startswith(b"HTTP/1.1 400 " if pause else b"HTTP/1.1 431 "), out[:200]
    assert received == []


# --------------------------------------------------------------------------- credentials


def test_upstream_credentials_are_split_out_and_redacted() -> None:
    assert split_upstream("http://u%40x:p%3Ass@h:8/v") == ("http://h:8/v", ("u@x", "p:ss"))
    assert split_upstream("http://h:8/") == ("http://h:8", None)
    assert redacted("http://user:s3cret@h:8/v") == "http://***@h:8/v"
    assert redacted("http://h:8") == "http://h:8"


def test_upstream_credentials_go_as_basic_auth_and_are_never_logged(
        keys: dict[str, Any]) -> None:
    seen: list[dict[str, str | None]] = []
    with serve_in_thread(cookie_upstream(seen), max_seconds=60) as upstream:
        with_creds = upstream.replace("http://", "http://user:s3cret@")
        with proxy(keys, with_creds) as url, httpx.Client(base_url=url, timeout=30) as client, \
                captured_logs() as logs:
            r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
            assert r.status_code == 200
    assert seen[0]["authorization"] == "Basic dXNlcjpzM2NyZXQ="  # user:s3cret
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()
    with proxy(keys, f"http://user:s3cret@127.0.0.1:{port}") as url, \
            httpx.Client(base_url=url, timeout=30) as client, captured_logs() as logs:
        r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
    assert r.status_code == 502 and "s3cret" not in r.text
    # the credentials left the URL before anything could print it
    assert f"upstream http://127.0.0.1:{port}/v1/completions failed" in logs.text()
    assert "s3cret" not in logs.text() and "user" not in logs.text()


def private_secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_text(SECRET.hex() + "\n")
    path.chmod(0o600)
    return path


def test_the_cli_never_prints_upstream_credentials(keys: dict[str, Any],
                                                   tmp_path: Path) -> None:
    """Before: the start-up line printed ``--upstream`` whole, and a refused URL was quoted
    whole in the error."""
    secret = private_secret(tmp_path)
    for bad in ("ftp://user:s3cret@h", "http://user:s3cret@h:notaport"):
        out = CliRunner().invoke(admission_cli, ["--upstream", bad, "--tenants",
                                                 str(keys["path"]), "--secret-file", str(secret)])
        assert out.exit_code != 0 and "not an http(s) base URL" in out.output, out.output
        assert "s3cret" not in out.output and "***@" in out.output
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "pytools", "admission", "--upstream",
                                 "http://user:s3cret@127.0.0.1:9", "--tenants",
                                 str(keys["path"]), "--secret-file", str(secret), "--port", "0"],
                                stdout=out, stderr=err, env=env, cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while "LISTENING" not in out_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            url = out_path.read_text().split("LISTENING ")[1].split()[0]
            with httpx.Client(base_url=url, timeout=30) as client:
                r = client.post("/v1/completions?k=v", json=COMPLETION,
                                headers=auth(keys["acme"]))
                assert r.status_code == 400
                r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
                assert r.status_code == 502
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    printed = out_path.read_text() + err_path.read_text()
    assert "upstream http://***@127.0.0.1:9" in printed and "s3cret" not in printed, printed
    assert "'/v1/completions' ?<3 bytes> 400" in out_path.read_text(), printed  # access lines
    assert "k=v" not in printed and "Traceback" not in printed


# --------------------------------------------------------------------------- queries, log lines


def test_a_query_string_is_400_and_never_logged(keys: dict[str, Any]) -> None:
    """Before: ``?...`` was dropped silently (the body forwarded) and logged verbatim."""
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url, httpx.Client(base_url=url, timeout=30) as client, \
            captured_logs() as logs:
        r = client.post("/v1/completions?model=other&x=" + "q" * 5000, json=COMPLETION,
                        headers=auth(keys["acme"]))
        models = client.get("/v1/models?limit=1", headers=auth(keys["acme"]))
    assert r.status_code == 400 and "query strings are not accepted" in r.json()["error"]["message"]
    assert models.status_code == 400 and received == []
    assert "qqq" not in logs.text() and "model=other" not in logs.text()
    assert "'/v1/completions' ?<5014 bytes> 400" in logs.text(), logs.text()


def safe_log(text: str, limit: int = 400) -> bool:
    """Whether every line of ``text`` is short and holds no control character."""
    return all(len(line) <= limit and all(ch.isprintable() for ch in line)
               for line in text.splitlines())


def test_log_lines_never_echo_unbounded_client_input(keys: dict[str, Any]) -> None:
    path = "/%1b%5b2J%1b%5b1A%e2%80%ae" + "a" * 10_000
    with serve_in_thread(create_standin(), max_seconds=60) as upstream, \
            proxy(keys, upstream) as url, captured_logs() as logs, \
            socket.create_connection(address(url), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n".encode())
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    assert out.startswith(b"HTTP/1.1 404 ")
    access = [r.getMessage() for r in unique(logs.records) if r.name == app_mod.ACCESS_LOG]
    assert len(access) == 1 and "\\x1b[2J" in access[0] and "(+9890 chars)" in access[0]
    assert safe_log(logs.text()), logs.text()[:500]


def test_planted_defect_an_unescaped_log_line_is_caught() -> None:
    assert not safe_log("POST /\x1b[2J 404")
    assert not safe_log("POST /" + "a" * 1000 + " 404")
    assert safe_log("POST " + shown("/\x1b[2J\u202e" + "a" * 1000) + " 404")


# --------------------------------------------------------------------------- secret file


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_secret_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = private_secret(tmp_path)
    path.chmod(mode)
    with pytest.raises(ConfigError) as info:
        load_secret(path, environ={})
    assert str(info.value) == (f"{path}: permissions {mode:04o} let group or others read the "
                               f"secret; run chmod 600 {path}")
    path.chmod(0o600)
    assert load_secret(path, environ={}) == SECRET
    path.chmod(0o400)
    assert load_secret(path, environ={}) == SECRET


def test_the_cli_refuses_a_readable_secret_file(keys: dict[str, Any], tmp_path: Path) -> None:
    path = private_secret(tmp_path)
    path.chmod(0o644)
    out = CliRunner().invoke(admission_cli, ["--upstream", "http://127.0.0.1:9", "--tenants",
                                             str(keys["path"]), "--secret-file", str(path),
                                             "--port", "0"])
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code != 0 and lines == [
        f"Error: {path}: permissions 0644 let group or others read the secret; "
        f"run chmod 600 {path}"], out.output


# --------------------------------------------------------------------------- upstream failing


@contextlib.contextmanager
def dying_upstream(content_type: str, first: bytes) -> Iterator[str]:
    """An upstream that answers every request with ``first`` as one chunk of a chunked body,
    then closes the connection without ending the body."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n".encode()
                             + f"{len(first):x}\r\n".encode() + first + b"\r\n")
                time.sleep(0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=10)
        listener.close()


def test_an_upstream_dying_mid_stream_gives_one_log_line(keys: dict[str, Any]) -> None:
    """Before: the exception escaped the streaming response (uvicorn logged a traceback and
    the client's read failed); now one warning, and the stream ends with an error event."""
    first = b'data: {"choices": [{"index": 0, "text": "t0"}]}\n\n'
    with dying_upstream("text/event-stream", first) as upstream, proxy(keys, upstream) as url, \
            httpx.Client(base_url=url, timeout=30) as client, captured_logs() as logs:
        with client.stream("POST", "/v1/completions", json={**COMPLETION, "stream": True},
                           headers=auth(keys["acme"])) as r:
            events = [line for line in r.iter_lines() if line.startswith("data: ")]
        assert client.get("/health").status_code == 200
    assert r.status_code == 200 and len(events) == 2, events
    assert json.loads(events[1][6:])["error"]["code"] == 502
    failed = [rec for rec in unique(logs.records) if "failed mid-answer" in rec.getMessage()]
    assert len(failed) == 1 and "RemoteProtocolError" in failed[0].getMessage()
    logs.assert_no_traceback()


def test_an_upstream_dying_mid_json_ends_the_answer_cleanly(keys: dict[str, Any]) -> None:
    with dying_upstream("application/json", b'{"choices": [') as upstream, \
            proxy(keys, upstream) as url, httpx.Client(base_url=url, timeout=30) as client, \
            captured_logs() as logs:
        r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
    assert r.content == b'{"choices": ['  # cut short, as the upstream left it
    assert sum("failed mid-answer" in rec.getMessage() for rec in unique(logs.records)) == 1
    logs.assert_no_traceback()


# --------------------------------------------------------------------------- /v1/models


def test_models_are_listed_for_an_authenticated_tenant(keys: dict[str, Any]) -> None:
    """Before: ``GET /v1/models`` was 404, and many OpenAI clients list the models first."""
    received: list[dict[str, Any]] = []
    standin = create_standin(upstream_api_key="up-key", received=received)
    with serve_in_thread(standin, max_seconds=60) as upstream, \
            proxy(keys, upstream, upstream_api_key="up-key") as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        r = client.get("/v1/models", headers=auth(keys["acme"]))
        missing = client.get("/v1/models")
        wrong = client.get("/v1/models", headers=auth("sk-wrong"))
        with_body = client.request("GET", "/v1/models", content=b"{}",
                                   headers=auth(keys["acme"]))
        post = client.post("/v1/models", json={}, headers=auth(keys["acme"]))
    assert r.status_code == 200 and [m["id"] for m in r.json()["data"]] == ["standin"]
    assert received == [{"path": "/v1/models", "body": None}]
    assert missing.status_code == 401 and wrong.status_code == 401
    assert with_body.status_code == 400 and "takes no body" in with_body.text
    assert post.status_code == 405


def test_the_docs_state_the_limits_the_code_has() -> None:
    """docs/admission.md's connection limits and salt label are the code's (not typed in to
    drift)."""
    from pytools.admission.display import SHOWN_LOG
    from pytools.admission.limits import BODY_TIMEOUT_S
    from pytools.admission.salt import SALT_LABEL

    doc = " ".join((ROOT / "docs" / "admission.md").read_text().split())
    d = Limits()
    for words in (f"within {d.head_timeout_s:g} s of the connection opening",
                  f"at most {d.max_head_bytes // 1024} KiB", f"within {BODY_TIMEOUT_S:g} s",
                  f"after uvicorn's {d.keep_alive_s} s", f"past {d.max_concurrency} connections",
                  f"cut to {SHOWN_LOG} characters", f"label `{SALT_LABEL.decode()}`"):
        assert words in doc, words
