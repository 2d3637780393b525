"""The admission proxy on loopback, in front of a stand-in upstream that checks every forwarded
body; the pure policy; the tenants file and the secret; planted defects for the checkers; and
the proxy as a hostile client sees it (issue #26): each hostile request gets a clear status,
nothing reaches the upstream, the keep-alive connection still serves the next request, and no
traceback is logged."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import secrets
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from pytools.admission import request_policy as policy
from pytools.admission import tenants as tenants_mod
from pytools.admission.app import ProxyConfig, create_app
from pytools.admission.bench import quantile
from pytools.admission.cli import main as admission_cli
from pytools.admission.loopback import serve_in_thread
from pytools.admission.request_policy import Admitted, Refused, admit
from pytools.admission.salt import SaltError, keyed_salt, vllm_salt_problem
from pytools.admission.standin import create_standin
from pytools.admission.tenants import ConfigError, add_tenant, load_secret, load_tenants

SECRET = bytes.fromhex(secrets.token_hex(32))  # throw-away, per test run
MAX_BODY = 4096


class Records(logging.Handler):
    """Every log record of the servers (uvicorn's loggers do not propagate to the root)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        return "\n".join(self.format(r) for r in self.records)

    def assert_no_traceback(self) -> None:
        bad = [r for r in self.records if r.exc_info or r.levelno >= logging.ERROR]
        assert not bad and "Traceback" not in self.text(), self.text()


@contextlib.contextmanager
def captured_logs() -> Iterator[Records]:
    """Capture uvicorn's and the proxy's records; attach after the servers started, since
    uvicorn's logging set-up replaces the handlers of its loggers."""
    handler = Records()
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    names = ("uvicorn", "pytools.admission", "")
    proxy_logger = logging.getLogger("pytools.admission")
    level = proxy_logger.level
    proxy_logger.setLevel(logging.INFO)
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        yield handler
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)
        proxy_logger.setLevel(level)


def recording(app: Any, arrived: list[str]) -> Any:
    """The stand-in, noting every request that reaches it (refused by its checks or not)."""
    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            arrived.append(f"{scope['method']} {scope['path']}")
        await app(scope, receive, send)
    return wrapped


@contextlib.contextmanager
def proxy_stack(tenants_path: Path, max_body: int) -> Iterator[dict[str, Any]]:
    """A stand-in upstream and the proxy in front of it, both on 127.0.0.1."""
    received: list[dict[str, Any]] = []
    arrived: list[str] = []
    standin = recording(create_standin(received=received), arrived)
    with serve_in_thread(standin, max_seconds=300) as upstream:
        config = ProxyConfig(upstream=upstream, tenants=load_tenants(tenants_path),
                             secret=SECRET, max_body=max_body)
        with serve_in_thread(create_app(config), max_seconds=300) as proxy, \
                httpx.Client(base_url=proxy, timeout=30) as client, captured_logs() as logs:
            yield {"client": client, "received": received, "arrived": arrived,
                   "upstream": upstream, "proxy": proxy, "logs": logs}
            logs.assert_no_traceback()


@pytest.fixture()
def keys(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tenants.json"
    return {"path": path, "acme": add_tenant(path, "acme"), "globex": add_tenant(path, "globex")}


@pytest.fixture()
def stack(keys: dict[str, Any]) -> Iterator[dict[str, Any]]:
    with proxy_stack(keys["path"], MAX_BODY) as s:
        yield {**s, **keys}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One stack for the table of hostile requests (1 MiB limit, the default), so the cases do
    not each start two servers; :func:`hostile` clears what it saw before each case."""
    path = tmp_path_factory.mktemp("shared") / "tenants.json"
    key = add_tenant(path, "acme")
    with proxy_stack(path, 1 << 20) as s:
        yield {**s, "acme": key}


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


COMPLETION = {"model": "m", "prompt": [1, 2, 3], "max_tokens": 1}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


# --------------------------------------------------------------------------- forwarding


def test_forwards_with_the_tenants_keyed_salt(stack: dict[str, Any]) -> None:
    c = stack["client"]
    r = c.post("/v1/completions", json=COMPLETION, headers=auth(stack["acme"]))
    assert r.status_code == 200, r.text
    r2 = c.post("/v1/chat/completions", json=CHAT, headers=auth(stack["globex"]))
    assert r2.status_code == 200, r2.text
    got = stack["received"]
    assert [g["path"] for g in got] == ["/v1/completions", "/v1/chat/completions"]
    assert got[0]["body"] == {**COMPLETION, "cache_salt": keyed_salt(SECRET, "acme")}
    assert got[1]["body"]["cache_salt"] == keyed_salt(SECRET, "globex")
    assert got[0]["body"]["cache_salt"] != got[1]["body"]["cache_salt"]


def test_streaming_is_passed_through(stack: dict[str, Any]) -> None:
    body = {**COMPLETION, "stream": True}
    with stack["client"].stream("POST", "/v1/completions", json=body,
                                headers=auth(stack["acme"])) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert [e for e in events if "[DONE]" not in e] and events[-1] == "data: [DONE]"
    texts = [json.loads(e[6:])["choices"][0]["text"] for e in events[:-1]]
    assert texts == ["t0", "t1", "t2"]


# --------------------------------------------------------------------------- refusals


def refused(stack: dict[str, Any], response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"]
    assert stack["received"] == [] and stack["arrived"] == [], \
        "a refused request reached the upstream"
    stack["logs"].assert_no_traceback()


def test_unauthenticated_is_401(stack: dict[str, Any]) -> None:
    c = stack["client"]
    r = c.post("/v1/completions", json=COMPLETION)
    refused(stack, r, 401, "missing API key")
    assert r.headers["www-authenticate"] == "Bearer"
    refused(stack, c.post("/v1/completions", json=COMPLETION, headers=auth("sk-wrong")), 401,
            "unknown API key")
    refused(stack, c.post("/v1/completions", json=COMPLETION,
                          headers={"authorization": stack["acme"]}), 401, "missing API key")


@pytest.mark.parametrize("body", [
    {**COMPLETION, "cache_salt": "tenant-a"},
    {**COMPLETION, "cache_salt": None},
    {**COMPLETION, "cache_salt": keyed_salt(SECRET, "acme")},  # even its own salt
])
def test_client_salt_is_400(stack: dict[str, Any], body: dict[str, Any]) -> None:
    r = stack["client"].post("/v1/completions", json=body, headers=auth(stack["acme"]))
    refused(stack, r, 400, "must not carry its own")


def test_escaped_salt_key_is_400(stack: dict[str, Any]) -> None:
    raw = b'{"model": "m", "prompt": [1], "cache\\u005fsalt": "tenant-a"}'
    r = stack["client"].post("/v1/completions", content=raw, headers=auth(stack["acme"]))
    refused(stack, r, 400, "must not carry its own")


@pytest.mark.parametrize("raw, words", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b"", "not valid JSON"),
])
def test_malformed_body_is_400(stack: dict[str, Any], raw: bytes, words: str) -> None:
    r = stack["client"].post("/v1/completions", content=raw, headers=auth(stack["acme"]))
    refused(stack, r, 400, words)


def test_oversized_body_is_413(stack: dict[str, Any]) -> None:
    big = {**COMPLETION, "prompt": list(range(2000))}
    r = stack["client"].post("/v1/completions", json=big, headers=auth(stack["acme"]))
    refused(stack, r, 413, "exceeds the limit")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
        yield b'{"prompt": ['
        for _ in range(MAX_BODY):
            yield b"1,"
        yield b"1]}"

    r = stack["client"].post("/v1/completions", content=chunks(), headers=auth(stack["acme"]))
    refused(stack, r, 413, "exceeds the limit")


def test_unknown_route_404_and_wrong_method_405(stack: dict[str, Any]) -> None:
    c = stack["client"]
    refused(stack, c.post("/v1/embeddings", json=COMPLETION, headers=auth(stack["acme"])), 404,
            "no route /v1/embeddings")
    r = c.get("/v1/completions", headers=auth(stack["acme"]))
    assert r.status_code == 405 and r.json()["error"]["code"] == 405
    assert c.get("/health").json() == {"status": "ok"}


def test_upstream_down_is_502_without_its_address(keys: dict[str, Any]) -> None:
    """Before: the 502 told any tenant the upstream's internal address; now it goes to the
    proxy's log only."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    upstream = f"http://127.0.0.1:{port}"
    config = ProxyConfig(upstream=upstream, tenants=load_tenants(keys["path"]), secret=SECRET)
    with serve_in_thread(create_app(config), max_seconds=60) as proxy, \
            httpx.Client(base_url=proxy, timeout=30) as client, captured_logs() as logs:
        r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
        assert client.get("/health").status_code == 200  # the same connection, still there
    assert r.status_code == 502 and "unreachable" in r.json()["error"]["message"]
    assert str(port) not in r.text and "127.0.0.1" not in r.text and "Error" not in r.text
    assert f"upstream {upstream}/v1/completions failed: ConnectError" in logs.text()
    logs.assert_no_traceback()


def test_upstream_key_replaces_the_clients(keys: dict[str, Any]) -> None:
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(upstream_api_key="up-key", received=received),
                         max_seconds=60) as upstream:
        config = ProxyConfig(upstream=upstream, tenants=load_tenants(keys["path"]),
                             secret=SECRET, upstream_api_key="up-key")
        with serve_in_thread(create_app(config), max_seconds=60) as proxy, \
                httpx.Client(base_url=proxy, timeout=30) as client:
            r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
    assert r.status_code == 200 and len(received) == 1


# --------------------------------------------------------------------------- hostile clients


def send(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
         headers: list[tuple[str, str | bytes]]) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request on ``conn`` exactly as given (raw header bytes, repeated headers)."""
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    names = {name.lower() for name, _ in headers}
    if "host" not in names:
        conn.putheader("Host", "127.0.0.1")
    if body is not None and "content-length" not in names:
        conn.putheader("Content-Length", str(len(body)))
    for name, value in headers:
        conn.putheader(name, value)
    conn.endheaders(body)
    response = conn.getresponse()
    return response.status, response.headers, response.read()


def hostile(shared: dict[str, Any], method: str, path: str, body: bytes | None,
            headers: list[tuple[str, str | bytes]],
            forwarded: bool = False) -> tuple[int, http.client.HTTPMessage, bytes]:
    """Send a hostile request, check that nothing reached the upstream (unless ``forwarded``),
    then that the same keep-alive connection serves a good request and nothing was logged as
    an error."""
    shared["received"].clear()
    shared["arrived"].clear()
    shared["logs"].records.clear()
    host, port = shared["proxy"].removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.connect()
        sock = conn.sock
        status, got, data = send(conn, method, path, body, headers)
        expected = ["POST /v1/completions"] if forwarded else []
        assert shared["arrived"] == expected, f"{status} {data[:300]!r}: upstream saw it"
        assert conn.sock is sock, f"{status}: the proxy closed the keep-alive connection"
        good = json.dumps(COMPLETION).encode()
        again = send(conn, "POST", "/v1/completions", good,
                     [("Authorization", f"Bearer {shared['acme']}"),
                      ("Content-Type", "application/json")])
        assert again[0] == 200, again
        assert conn.sock is sock, "the good request needed a new connection"
    finally:
        conn.close()
    assert shared["arrived"] == [*expected, "POST /v1/completions"]
    shared["logs"].assert_no_traceback()
    return status, got, data


def message(data: bytes) -> str:
    return str(json.loads(data)["error"]["message"])


DEEP = b'{"prompt":' + b"[" * 3000 + b"]" * 3000 + b"}"
#: (id, raw body, words of the 400 message)
BAD_JSON = [
    ("lone-surrogate", b'{"model":"m","prompt":"\\ud800"}', "lone UTF-16 surrogate"),
    ("lone-low-surrogate", b'{"model":"m","prompt":"a\\udc00b"}', "lone UTF-16 surrogate"),
    ("reversed-pair", b'{"model":"m","prompt":"\\udc00\\ud800"}', "lone UTF-16 surrogate"),
    ("surrogate-key", b'{"model":"m","\\ud800":1}', "lone UTF-16 surrogate"),
    ("nested-3000", DEEP, "nested deeper than"),
    ("unclosed-3000", b"[" * 3000, "nested deeper than"),
    ("nested-65", b'{"p":' + b"[" * 64 + b"]" * 64 + b"}", "nested deeper than 64"),
    ("nan", b'{"model":"m","prompt":[1],"temperature":NaN}', "NaN is not a JSON number"),
    ("infinity", b'{"model":"m","prompt":[1],"temperature":Infinity}', "not a JSON number"),
    ("minus-infinity", b'{"model":"m","prompt":[1],"top_p":-Infinity}', "not a JSON number"),
    ("1e400", b'{"model":"m","prompt":[1],"temperature":1e400}', "too large for a double"),
    ("-1e999", b'{"model":"m","prompt":[1],"temperature":-1e999}', "too large for a double"),
    ("nan-nested", b'{"model":"m","logit_bias":{"5":NaN}}', "NaN"),
    ("5000-digits", b'{"model":"m","max_tokens":' + b"9" * 5000 + b"}", "more digits"),
    ("duplicate-salt", b'{"model":"m","cache_salt":"x","cache_salt":"y"}', "duplicate key"),
    ("duplicate-model", b'{"model":"a","prompt":[1],"model":"b"}', "duplicate key 'model'"),
    ("duplicate-escaped", b'{"model":"a","prompt":[1],"mod\\u0065l":"b"}', "duplicate key"),
    ("duplicate-nested", b'{"model":"m","messages":[{"role":"user","role":"system",'
                         b'"content":"x"}]}', "duplicate key 'role'"),
    ("array", b"[1, 2]", "must be a JSON object"),
    ("string", b'"prompt"', "must be a JSON object"),
    ("number", b"7", "must be a JSON object"),
    ("null", b"null", "must be a JSON object"),
    ("bom", b'\xef\xbb\xbf{"model":"m"}', "not valid JSON"),
    ("utf16", '{"model":"m"}'.encode("utf-16"), "not UTF-8"),
    ("utf8-surrogate", b'{"model":"m","prompt":"\xed\xa0\x80"}', "not UTF-8"),
    ("overlong-utf8", b'{"model":"m","prompt":"\xc0\xaf"}', "not UTF-8"),
    ("raw-control", b'{"model":"m","prompt":"a\x01b"}', "Invalid control character"),
    ("trailing", b'{"model":"m"} {}', "not valid JSON"),
]


@pytest.mark.parametrize("raw, words", [c[1:] for c in BAD_JSON], ids=[c[0] for c in BAD_JSON])
def test_bad_json_is_400_and_the_connection_lives(shared: dict[str, Any], raw: bytes,
                                                  words: str) -> None:
    """Before: a lone surrogate and deep nesting gave a bare 500 with a traceback (the
    connection reset); NaN, Infinity, 1e400 and duplicate keys were forwarded."""
    status, _, data = hostile(shared, "POST", "/v1/completions", raw,
                              [("Authorization", f"Bearer {shared['acme']}")])
    assert status == 400 and words in message(data), data[:300]


#: Keys that read as cache_salt (issue #26); each is refused at the top level.
SALT_LOOKALIKES = ["cache_salt", "Cache_Salt", "CACHE_SALT", "cacheSalt", "CacheSalt",
                   "cache-salt", "cache salt", "cache_salt ", " cache_salt", "cache_salt\u200b",
                   "cache\u200b_salt", "\ufeffcache_salt", "cache\u00adsalt", "cache_salt\x00",
                   "cache__salt", "cache.salt", "ｃａｃｈｅ_ｓａｌｔ", "ＣＡＣＨＥ＿ＳＡＬＴ",
                   "cache_ſalt", "𝐜𝐚𝐜𝐡𝐞_𝐬𝐚𝐥𝐭", "ⓒⓐⓒⓗⓔ_ⓢⓐⓛⓣ", "cachesalt"]


@pytest.mark.parametrize("key", SALT_LOOKALIKES, ids=ascii)
@pytest.mark.parametrize("value", ["tenant-a", None, 7, {"a": 1}, [], True, ""],
                         ids=lambda v: type(v).__name__)
def test_salt_lookalike_keys_are_400(key: str, value: Any) -> None:
    """Before: every spelling but the exact one was forwarded beside the proxy's salt; the
    exact key with any value (not only strings) is refused too."""
    out = admit(json.dumps({**COMPLETION, key: value}).encode(), "acme", SECRET)
    assert isinstance(out, Refused) and out.status == 400, (key, out)
    assert "must not carry its own" in out.message
    if key != "cache_salt":
        assert repr(key) in out.message  # names the key, since it is not the obvious one


@pytest.mark.parametrize("key", ["Cache_Salt", "cacheSalt", "cache_salt\u200b",
                                 "ｃａｃｈｅ_ｓａｌｔ"], ids=ascii)
def test_salt_lookalike_through_the_proxy(shared: dict[str, Any], key: str) -> None:
    body = json.dumps({**COMPLETION, key: "tenant-a"}, ensure_ascii=False).encode()
    status, _, data = hostile(shared, "POST", "/v1/completions", body,
                              [("Authorization", f"Bearer {shared['acme']}")])
    assert status == 400 and "must not carry its own" in message(data)


@pytest.mark.parametrize("key", ["cache", "salt", "cache_salts", "cache_salt_id", "xcache_salt",
                                 "c\u0430che_salt",  # Cyrillic а: another letter, not caught
                                 "cáche_salt", "cache1salt", "prompt"], ids=ascii)
def test_keys_that_do_not_read_as_the_salt_pass(key: str) -> None:
    assert not policy.salt_like(key)
    out = admit(json.dumps({**COMPLETION, key: "x"}).encode(), "acme", SECRET)
    assert isinstance(out, Admitted) and json.loads(out.body)[key] == "x"


def test_nested_salt_keys_are_the_tenants_data(stack: dict[str, Any]) -> None:
    """vLLM reads only the top-level cache_salt; a nested one (here a tool's parameter) is
    data and forwarded as it is."""
    tool = {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"cache_salt": {"type": "string"}}}}}
    body = {**CHAT, "tools": [tool], "metadata": {"Cache_Salt": "x"}}
    r = stack["client"].post("/v1/chat/completions", json=body, headers=auth(stack["acme"]))
    assert r.status_code == 200, r.text
    (got,) = stack["received"]
    assert got["body"]["tools"] == [tool] and got["body"]["metadata"] == {"Cache_Salt": "x"}
    assert got["body"]["cache_salt"] == keyed_salt(SECRET, "acme")


def test_strict_json_still_admits_what_is_json() -> None:
    # the body is level 1, so this nests exactly MAX_DEPTH deep
    deepest = json.loads("[" * (policy.MAX_DEPTH - 1) + "]" * (policy.MAX_DEPTH - 1))
    body = json.dumps({**COMPLETION, "temperature": 1e308, "prompt": "\U0001f600 é",
                       "deep": deepest, "n": -0.0, "seed": 2**63 - 1})
    out = admit(body.encode(), "acme", SECRET)
    assert isinstance(out, Admitted), out
    doc = json.loads(out.body)
    assert doc["prompt"] == "\U0001f600 é" and doc["temperature"] == 1e308
    assert "\U0001f600".encode() in out.body  # a surrogate pair is one character, sent as UTF-8
    escaped = admit(b'{"model":"m","prompt":"\\ud83d\\ude00"}', "acme", SECRET)
    assert isinstance(escaped, Admitted) and json.loads(escaped.body)["prompt"] == "\U0001f600"


#: (id, method, path, headers beyond the key, body, status, words in the message or None)
BAD_REQUESTS: list[tuple[str, str, str, list[tuple[str, str | bytes]], bytes, int,
                         str | None]] = [
    ("trailing-slash", "POST", "/v1/completions/", [("Host", "evil.example")], b"{}", 404,
     "no route /v1/completions/"),
    ("chat-trailing-slash", "POST", "/v1/chat/completions/", [("Host", "evil.example")], b"{}",
     404, "no route"),
    ("double-slash", "POST", "//v1/completions", [], b"{}", 404, "no route //v1/completions"),
    ("upper-case", "POST", "/V1/completions", [], b"{}", 404, "no route"),
    ("sub-path", "POST", "/v1/completions/x", [], b"{}", 404, "no route"),
    ("embeddings", "POST", "/v1/embeddings", [], b"{}", 404, "no route /v1/embeddings"),
    ("get", "GET", "/v1/completions", [], None, 405, "Method Not Allowed"),
    ("head", "HEAD", "/v1/completions", [], None, 405, None),
    ("put", "PUT", "/v1/completions", [], b"{}", 405, "Method Not Allowed"),
    ("options", "OPTIONS", "/v1/chat/completions", [], None, 405, "Method Not Allowed"),
    ("lower-case-method", "post", "/v1/completions", [], b"{}", 405, "Method Not Allowed"),
    ("post-health", "POST", "/health", [], b"{}", 405, "Method Not Allowed"),
    ("text-plain", "POST", "/v1/completions", [("Content-Type", "text/plain")],
     json.dumps(COMPLETION).encode(), 415, "must be application/json"),
    ("form", "POST", "/v1/completions", [("Content-Type", "application/x-www-form-urlencoded")],
     json.dumps(COMPLETION).encode(), 415, "must be application/json"),
    ("latin-1", "POST", "/v1/completions",
     [("Content-Type", "application/json; charset=iso-8859-1")],
     json.dumps(COMPLETION).encode(), 415, "must be application/json"),
    ("two-content-types", "POST", "/v1/completions",
     [("Content-Type", "application/json"), ("Content-Type", "text/plain")],
     json.dumps(COMPLETION).encode(), 415, "more than one Content-Type"),
    ("gzip", "POST", "/v1/completions", [("Content-Encoding", "gzip")],
     json.dumps(COMPLETION).encode(), 415, "Content-Encoding"),
    ("over-the-limit", "POST", "/v1/completions", [],
     b'{"prompt":"' + b"a" * (1 << 20) + b'"}', 413, "exceeds the limit"),
]


@pytest.mark.parametrize("method, path, headers, body, status, words",
                         [c[1:] for c in BAD_REQUESTS], ids=[c[0] for c in BAD_REQUESTS])
def test_bad_requests_get_a_clear_status(shared: dict[str, Any], method: str, path: str,
                                         headers: list[tuple[str, str | bytes]],
                                         body: bytes | None, status: int,
                                         words: str | None) -> None:
    """Before: a trailing slash was a 307 to ``http://<the client's Host>/...`` (an open
    redirect), and any Content-Type or Content-Encoding was parsed as JSON."""
    key = [("Authorization", f"Bearer {shared['acme']}")]
    got, response_headers, data = hostile(shared, method, path, body, key + headers)
    assert got == status, data[:300]
    assert "location" not in response_headers
    if status == 405:
        allowed = {m.strip() for m in response_headers["allow"].split(",")}
        assert allowed == ({"GET", "HEAD"} if path == "/health" else {"POST"})
    if words is not None:
        assert words in message(data)


def test_good_content_types_pass(shared: dict[str, Any]) -> None:
    for value in ("application/json", "Application/JSON; charset=UTF-8",
                  'application/json; charset="utf-8"'):
        status, _, data = hostile(shared, "POST", "/v1/completions",
                                  json.dumps(COMPLETION).encode(),
                                  [("Authorization", f"Bearer {shared['acme']}"),
                                   ("Content-Type", value), ("Content-Encoding", "identity")],
                                  forwarded=True)
        assert status == 200, (value, data)


@pytest.mark.parametrize("headers, status, words", [
    ([("Authorization", "Bearer {acme}"), ("Authorization", "Bearer sk-other")], 400,
     "more than one Authorization header"),
    ([("Authorization", "Bearer sk-other"), ("Authorization", "Bearer {acme}")], 400,
     "more than one Authorization header"),
    ([("Authorization", b"Bearer {acme}\xff")], 401, "unknown API key"),
    ([("Authorization", b"Bearer \xe9\xe0\xff")], 401, "unknown API key"),
    ([("Authorization", "Basic {acme}")], 401, "missing API key"),
    ([("Authorization", "Bearer")], 401, "missing API key"),
    ([("X-Api-Key", "{acme}")], 401, "missing API key"),
    ([("Proxy-Authorization", "Bearer {acme}")], 401, "missing API key"),
], ids=["repeated", "repeated-reversed", "trailing-byte", "latin-1", "basic", "empty",
        "x-api-key", "proxy-authorization"])
def test_the_credential_has_one_place(shared: dict[str, Any], headers: list[tuple[str, Any]],
                                      status: int, words: str) -> None:
    """Before: of two Authorization headers the first counted, so a proxy in front that
    reads the last would authorize one tenant and this proxy salt for another."""
    key = shared["acme"]
    filled = [(n, v.replace("{acme}", key) if isinstance(v, str)
               else v.replace(b"{acme}", key.encode())) for n, v in headers]
    got, response_headers, data = hostile(shared, "POST", "/v1/completions",
                                          json.dumps(COMPLETION).encode(), filled)
    assert got == status and words in message(data), data


def raw_exchange(url: str, request: bytes) -> bytes:
    """Send raw bytes, return everything the server sends until it closes (or 10 s)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        out = b""
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                out += chunk
    return out


def test_content_length_with_transfer_encoding_is_400_and_closes(stack: dict[str, Any]) -> None:
    """Before: forwarded (the chunked body read, Content-Length ignored), the connection kept:
    a proxy in front that framed it by Content-Length would be desynchronised from this one."""
    body = json.dumps(COMPLETION).encode()
    request = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               f"{stack['acme']}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
               f"{len(body):x}\r\n").encode() + body + b"\r\n0\r\n\r\n"
    started = time.monotonic()
    out = raw_exchange(stack["proxy"], request)
    assert time.monotonic() - started < 9, "the proxy kept the connection open"
    head, _, data = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"connection: close" in head.lower(), out
    assert b"both Content-Length and Transfer-Encoding" in data
    assert stack["arrived"] == []


@pytest.mark.parametrize("framing", [b"Content-Length: abc", b"Content-Length: -1",
                                     b"Content-Length: 2\r\nContent-Length: 3",
                                     b"Transfer-Encoding: gzip"])
def test_broken_framing_is_refused_by_the_server(stack: dict[str, Any], framing: bytes) -> None:
    request = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               + stack["acme"].encode() + b"\r\n" + framing + b"\r\n\r\n{}")
    out = raw_exchange(stack["proxy"], request)
    assert out.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 501 ")), out
    assert stack["arrived"] == []


@pytest.mark.parametrize("head, status", [
    (b"Content-Length: 0\r\nTransfer-Encoding: chunked", 401),  # no key in the headers
    (b"Authorization : Bearer {acme}\r\nContent-Length: 2", 400),  # space before the colon
    (b"Authorization: Bearer {acme}\x00\r\nContent-Length: 2", 400),  # a NUL
], ids=["key-in-a-trailer", "space-before-colon", "nul"])
def test_a_smuggled_credential_does_not_count(stack: dict[str, Any], head: bytes,
                                               status: int) -> None:
    """The key counts only as one plain Authorization header: not from a chunked body's
    trailer or a malformed field (the server refuses those with 400). A folded line (obs-fold)
    is unfolded by h11 as RFC 9112 5.2 allows, so it is one header, not a second one."""
    key = stack["acme"].encode()
    if b"chunked" in head:
        body = json.dumps(COMPLETION).encode()
        body = (f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\nAuthorization: Bearer "
                + key + b"\r\n\r\n")
        head = head.replace(b"Content-Length: 0\r\n", b"")
    else:
        body = b"{}"
    request = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + head.replace(b"{acme}", key)
               + b"\r\nConnection: close\r\n\r\n" + body)
    out = raw_exchange(stack["proxy"], request)
    assert out.startswith(f"HTTP/1.1 {status} ".encode()), out
    assert stack["arrived"] == []
    stack["logs"].assert_no_traceback()


def test_a_client_gone_mid_body_leaves_no_traceback(stack: dict[str, Any]) -> None:
    """Before: ``ClientDisconnect`` escaped the handler and uvicorn logged a traceback, which
    any client could repeat to fill the log."""
    host, port = stack["proxy"].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     + stack["acme"].encode() + b"\r\nContent-Length: 100\r\n\r\n{\"model\"")
        time.sleep(0.2)
    deadline = time.monotonic() + 10
    while "went away" not in stack["logs"].text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "went away" in stack["logs"].text(), stack["logs"].text()
    stack["logs"].assert_no_traceback()
    assert stack["arrived"] == []


# --------------------------------------------------------------------------- the stand-in


@pytest.mark.parametrize("body, headers, check", [
    ({**COMPLETION}, {}, "cache_salt"),
    ({**COMPLETION, "cache_salt": "a/b"}, {}, "cache_salt"),
    ({**COMPLETION, "cache_salt": "x" * 129}, {}, "cache_salt"),
    ({**COMPLETION, "cache_salt": "ok"}, {"authorization": "Bearer client-key"}, "authorization"),
])
def test_planted_defect_standin_catches_bad_forwarding(body: dict[str, Any],
                                                       headers: dict[str, str],
                                                       check: str) -> None:
    """Planted defects: what a broken proxy would forward is refused by the stand-in."""
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=60) as upstream, \
            httpx.Client(base_url=upstream, timeout=30) as client:
        r = client.post("/v1/completions", json=body, headers=headers)
    assert r.status_code == 422 and r.json()["check"] == check and received == []


# --------------------------------------------------------------------------- policy and salt


def test_policy_is_pure_and_canonical() -> None:
    out = admit(json.dumps(COMPLETION).encode(), "acme", SECRET)
    assert isinstance(out, Admitted) and not out.stream
    assert json.loads(out.body) == {**COMPLETION, "cache_salt": keyed_salt(SECRET, "acme")}
    streamed = admit(json.dumps({**COMPLETION, "stream": True}).encode(), "acme", SECRET)
    assert isinstance(streamed, Admitted) and streamed.stream
    assert admit(b"{}", "acme", SECRET, max_body=1) == Refused(
        413, "request body of 2 bytes exceeds the limit of 1")


def test_keyed_salt_meets_vllm_rules_and_separates_tenants() -> None:
    salts = {keyed_salt(SECRET, f"t{i}") for i in range(200)}
    assert len(salts) == 200
    assert all(vllm_salt_problem(s) is None for s in salts)
    assert keyed_salt(SECRET, "t1") != keyed_salt(bytes(32), "t1")
    with pytest.raises(SaltError, match="at least 32"):
        keyed_salt(b"short", "t1")


@pytest.mark.parametrize("salt, ok", [
    ("a", True), ("x" * 128, True), ("x" * 129, False), ("", False), (None, False),
    ("a@b", False), ("a/b", False), ("a\\b", False), ("a\x00b", False), (7, False),
])
def test_vllm_salt_rules(salt: Any, ok: bool) -> None:
    assert (vllm_salt_problem(salt) is None) == ok


# --------------------------------------------------------------------------- tenants and secret


def test_tenants_file_holds_hashes_only(keys: dict[str, Any]) -> None:
    text = keys["path"].read_text()
    assert keys["acme"] not in text and tenants_mod.key_hash(keys["acme"]) in text
    t = load_tenants(keys["path"])
    assert t.authenticate(keys["acme"]) == "acme" and t.authenticate("sk-nope") is None
    with pytest.raises(ConfigError, match="already exists"):
        add_tenant(keys["path"], "acme")


def test_tenants_file_is_private_to_its_owner(keys: dict[str, Any]) -> None:
    # written through pytools.files with mode 0o600, whatever the umask
    assert keys["path"].stat().st_mode & 0o777 == 0o600
    assert [p.name for p in keys["path"].parent.iterdir()] == ["tenants.json"]  # no temp left


@pytest.mark.parametrize("doc, words", [
    ("{", "not valid JSON"),
    ({"version": 2, "tenants": []}, "version"),
    ({"version": 1, "tenants": []}, "non-empty"),
    ({"version": 1, "tenants": [{"id": "a", "key": "x"}]}, "exactly"),
    ({"version": 1, "tenants": [{"id": "a b", "key_sha256": "0" * 64}]}, "invalid id"),
    ({"version": 1, "tenants": [{"id": "a", "key_sha256": "xyz"}]}, "64 lowercase hex"),
    ({"version": 1, "tenants": [{"id": "a", "key_sha256": "0" * 64},
                                {"id": "a", "key_sha256": "1" * 64}]}, "listed twice"),
    ({"version": 1, "tenants": [{"id": "a", "key_sha256": "0" * 64},
                                {"id": "b", "key_sha256": "0" * 64}]}, "share a key"),
])
def test_bad_tenants_file_is_refused(tmp_path: Path, doc: Any, words: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(ConfigError, match=words) as info:
        load_tenants(path)
    assert str(path) in str(info.value)


def test_secret_never_defaults(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="never starts without one"):
        load_secret(None, environ={})
    with pytest.raises(ConfigError, match="at least 32"):
        load_secret(None, environ={tenants_mod.SECRET_ENV: "ab" * 8})
    assert load_secret(None, environ={tenants_mod.SECRET_ENV: SECRET.hex()}) == SECRET
    with pytest.raises(ConfigError, match="must be hex"):
        load_secret(None, environ={tenants_mod.SECRET_ENV: "correct horse battery staple!" * 2})
    with pytest.raises(ConfigError, match="repeated byte"):
        load_secret(None, environ={tenants_mod.SECRET_ENV: "00" * 32})
    f = tmp_path / "secret"
    f.write_text(SECRET.hex() + "\n")
    f.chmod(0o600)  # a secret its group or others may read is refused (test_admission_proxy)
    assert load_secret(f, environ={}) == SECRET
    with pytest.raises(ConfigError, match="cannot read"):
        load_secret(tmp_path / "absent", environ={})


@pytest.mark.parametrize("content, words", [
    (bytes(range(256)) * 4, "must be hex"),  # binary: was taken as raw bytes before
    (bytes(range(200, 248)), "must be hex"),  # 48 binary bytes, the length of a key
    (b"correct horse battery staple, a long passphrase!", "must be hex"),
    (b"\xef\xbb\xbf" + SECRET.hex().encode(), "must be hex"),  # a byte-order mark
    (SECRET.hex()[:62].encode(), "has 31 bytes; at least 32"),
    (SECRET.hex().encode()[:-1], "must be hex"),  # an odd number of digits
    (b"", "has 0 bytes"),
    (b"ab" * 32, "repeated byte"),
    (b"0" * 5000, "longer than 4096 bytes"),
], ids=["binary", "binary-48", "passphrase", "byte-order-mark", "31-bytes", "odd-digits",
        "empty", "repeated-byte", "oversized"])
def test_secret_file_must_be_hex(tmp_path: Path, content: bytes, words: str) -> None:
    """Before: a file that was not hex was taken as raw bytes (README: hex)."""
    f = tmp_path / "secret.bin"
    f.write_bytes(content)
    f.chmod(0o600)
    with pytest.raises(ConfigError, match=words) as info:
        load_secret(f, environ={})
    assert str(info.value).startswith(f"{f}: ") and "\n" not in str(info.value)


def test_secret_file_keeps_hex_with_whitespace(tmp_path: Path) -> None:
    f = tmp_path / "secret"
    f.write_bytes(b"  " + SECRET.hex().upper().encode() + b"\r\n")
    f.chmod(0o600)
    assert load_secret(f, environ={}) == SECRET
    with pytest.raises(ConfigError, match="cannot read the secret: Is a directory"):
        load_secret(tmp_path, environ={})


def test_cli_refuses_a_binary_secret_file(keys: dict[str, Any], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the proxy started with a binary secret file")

    monkeypatch.setattr(uvicorn.Server, "run", never)
    binary = tmp_path / "secret.bin"
    binary.write_bytes(secrets.token_bytes(64))
    binary.chmod(0o600)
    out = CliRunner().invoke(admission_cli, ["--upstream", "http://127.0.0.1:9", "--tenants",
                                             str(keys["path"]), "--secret-file", str(binary),
                                             "--port", "0"])
    assert out.exit_code != 0 and not isinstance(out.exception, AssertionError), out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert lines == [f"Error: {binary}: the secret must be hex digits (e.g. `python -c 'import "
                     "secrets; print(secrets.token_hex(32))'`)"], out.output
    assert "LISTENING" not in out.output


def test_cli_refuses_to_start_without_what_it_needs(keys: dict[str, Any],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tenants_mod.SECRET_ENV, raising=False)
    runner = CliRunner()
    out = runner.invoke(admission_cli, ["--upstream", "http://127.0.0.1:9",
                                        "--tenants", str(keys["path"])])
    assert out.exit_code != 0 and "never starts without one" in out.output
    monkeypatch.setenv(tenants_mod.SECRET_ENV, SECRET.hex())
    out = runner.invoke(admission_cli, ["--upstream", "ftp://x", "--tenants", str(keys["path"])])
    assert out.exit_code != 0 and "not an http(s) base URL" in out.output
    out = runner.invoke(admission_cli, ["--upstream", "http://127.0.0.1:9",
                                        "--tenants", str(keys["path"]) + ".absent"])
    assert out.exit_code != 0 and "cannot read the tenants file" in out.output
    out = runner.invoke(admission_cli, ["--tenants", str(keys["path"])])
    assert out.exit_code != 0 and "--upstream and --tenants are required" in out.output


def test_cli_add_tenant_prints_the_key_once(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    out = CliRunner().invoke(admission_cli, ["add-tenant", "--tenants", str(path), "--id", "x"])
    assert out.exit_code == 0
    key = out.stdout.strip()
    assert key.startswith("sk-tenant-") and load_tenants(path).authenticate(key) == "x"


def test_quantile_nearest_rank() -> None:
    values = [float(i) for i in range(1, 101)]
    assert quantile(values, 0.99) == 99.0 and quantile(values, 0.5) == 50.0
    assert quantile([3.0], 0.99) == 3.0


def test_bench_measures_overhead() -> None:
    from pytools.admission.bench import measure

    r = measure(requests=20, warmup=3)
    assert r.requests == 20 and r.proxied_median_ms > 0 and r.direct_median_ms > 0


def test_a_started_server_that_logs_more_than_a_pipe_holds_keeps_running(tmp_path: Path) -> None:
    """A started server's output is read to the end: the proxy logs every request, and an
    unread pipe (64 KiB) once blocked it mid-run (a served run hung after ~2,000 requests).
    The child writes 1 MiB after ``LISTENING``, then a marker file; unread, it never gets
    there."""
    from pytools.admission.bench import started

    marker = tmp_path / "done"
    child = ("import sys, pathlib\nprint('LISTENING http://127.0.0.1:1', flush=True)\n"
             "for _ in range(1024):\n    print('x' * 1023, flush=True)\n"
             f"pathlib.Path({str(marker)!r}).write_text('ok')\nsys.stdin.read()\n")
    with started([sys.executable, "-c", child], dict(os.environ)) as url:
        assert url == "http://127.0.0.1:1"
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the server blocked on a full output pipe"
