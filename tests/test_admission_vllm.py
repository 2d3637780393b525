"""The proxy against an upstream that validates every forwarded body with vLLM's own request
models (``CompletionRequest``, ``ChatCompletionRequest``), run in the engines' venv on loopback;
and the proxy's overhead against that upstream. Engine-marked: skips without the engines venv.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytools.admission.app import ProxyConfig, create_app
from pytools.admission.bench import started
from pytools.admission.loopback import serve_in_thread
from pytools.admission.salt import keyed_salt
from pytools.admission.tenants import add_tenant, load_tenants

pytestmark = pytest.mark.engines

SECRET = bytes.fromhex(secrets.token_hex(32))  # throw-away


@pytest.fixture(scope="module")
def vllm_upstream(repo_root: Path, engines_py: Path) -> Iterator[str]:
    py = engines_py
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    try:
        with started([str(py), "-m", "pytools.admission.standin", "--validate", "vllm",
                      "--max-seconds", "900"], env, timeout_s=600) as url:
            yield url
    except RuntimeError as exc:
        pytest.skip(f"the vLLM-validating upstream did not start in {py}: {exc}")


@pytest.fixture()
def proxy(vllm_upstream: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    path = tmp_path / "tenants.json"
    key = add_tenant(path, "acme")
    config = ProxyConfig(upstream=vllm_upstream, tenants=load_tenants(path), secret=SECRET)
    with serve_in_thread(create_app(config), max_seconds=300) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield {"client": client, "key": key}


def test_forwarded_bodies_pass_vllms_request_models(proxy: dict[str, Any]) -> None:
    c, headers = proxy["client"], {"authorization": f"Bearer {proxy['key']}"}
    bodies = {
        "/v1/completions": {"model": "m", "prompt": [1, 2, 3], "max_tokens": 4},
        "/v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                 "max_tokens": 4},
    }
    for path, body in bodies.items():
        r = c.post(path, json=body, headers=headers)
        assert r.status_code == 200, r.text
        echo = r.json()["echo"]
        assert echo["validated_by"].startswith("vllm 0.33.0")
        assert echo["cache_salt"] == keyed_salt(SECRET, "acme")
    with c.stream("POST", "/v1/completions", json={**bodies["/v1/completions"], "stream": True},
                  headers=headers) as r:
        events = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert r.status_code == 200 and events[-1] == "data: [DONE]"
    assert json.loads(events[0][6:])["echo"]["validated_by"].endswith("CompletionRequest")


def test_planted_defect_vllm_refuses_a_bad_salt(vllm_upstream: str) -> None:
    """Planted defect: a body a broken proxy might forward (a salt with '/') is refused by
    vLLM's own model, so the validating upstream would catch it."""
    body = {"model": "m", "prompt": [1], "cache_salt": "tenant/a"}
    r = httpx.post(vllm_upstream + "/v1/completions", json=body, timeout=60)
    assert r.status_code == 422
    for path, bad in [("/v1/completions", {"model": "m", "prompt": {"x": 1}}),
                      ("/v1/completions", {"model": "m", "prompt": [1], "temperature": "hot"}),
                      ("/v1/chat/completions", {"model": "m", "prompt": [1]})]:
        r = httpx.post(vllm_upstream + path, json={**bad, "cache_salt": "ok"}, timeout=60)
        assert r.status_code == 422 and r.json()["check"] == "vllm", (path, bad, r.text)


def test_overhead_against_the_vllm_validating_upstream(engines_py: Path) -> None:
    """Reported, not asserted beyond sanity: per-request latency, direct and through the proxy,
    each server in its own process, the upstream parsing every body with vLLM's models."""
    from pytools.admission.bench import measure

    r = measure(requests=200, warmup=20, upstream_python=str(engines_py), validate="vllm")
    sys.stderr.write("proxy overhead vs vLLM-validating upstream: "
                     + json.dumps(r.as_dict(), sort_keys=True) + "\n")
    assert r.proxied_median_ms > 0 and r.direct_median_ms > 0
