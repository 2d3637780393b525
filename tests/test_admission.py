"""The admission proxy on loopback, in front of a stand-in upstream that checks every forwarded
body; the pure policy; the tenants file and the secret; planted defects for the checkers."""

from __future__ import annotations

import json
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from pytools.admission import tenants as tenants_mod
from pytools.admission.app import ProxyConfig, create_app
from pytools.admission.bench import quantile
from pytools.admission.cli import main as admission_cli
from pytools.admission.loopback import serve_in_thread
from pytools.admission.policy import Admitted, Refused, admit
from pytools.admission.salt import SaltError, keyed_salt, vllm_salt_problem
from pytools.admission.standin import create_standin
from pytools.admission.tenants import ConfigError, add_tenant, load_secret, load_tenants

SECRET = bytes.fromhex(secrets.token_hex(32))  # throw-away, per test run
MAX_BODY = 4096


@pytest.fixture()
def keys(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tenants.json"
    return {"path": path, "acme": add_tenant(path, "acme"), "globex": add_tenant(path, "globex")}


@pytest.fixture()
def stack(keys: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A stand-in upstream and the proxy in front of it, both on 127.0.0.1."""
    received: list[dict[str, Any]] = []
    with serve_in_thread(create_standin(received=received), max_seconds=120) as upstream:
        config = ProxyConfig(upstream=upstream, tenants=load_tenants(keys["path"]),
                             secret=SECRET, max_body=MAX_BODY)
        with serve_in_thread(create_app(config), max_seconds=120) as proxy, \
                httpx.Client(base_url=proxy, timeout=30) as client:
            yield {"client": client, "received": received, "upstream": upstream, **keys}


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
    assert stack["received"] == [], "a refused request reached the upstream"


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


def test_upstream_down_is_502(keys: dict[str, Any]) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    config = ProxyConfig(upstream=f"http://127.0.0.1:{port}", tenants=load_tenants(keys["path"]),
                         secret=SECRET)
    with serve_in_thread(create_app(config), max_seconds=60) as proxy, \
            httpx.Client(base_url=proxy, timeout=30) as client:
        r = client.post("/v1/completions", json=COMPLETION, headers=auth(keys["acme"]))
    assert r.status_code == 502 and "unreachable" in r.json()["error"]["message"]


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
    assert load_secret(f, environ={}) == SECRET
    with pytest.raises(ConfigError, match="cannot read"):
        load_secret(tmp_path / "absent", environ={})


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
