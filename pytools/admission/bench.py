"""The proxy's overhead per request, against a direct call to the same upstream, on loopback.

The stand-in upstream (:mod:`.standin`) and the proxy each run in their own process on
127.0.0.1, as they would be deployed; one client sends ``requests`` pairs of calls,
interleaved: a direct call with the body the proxy would forward (salt included), then the
same request through the proxy (API key, no salt). Latency is wall time from sending to the
last byte. Reported: median and p99 of each, and of the per-pair difference (the overhead).
Throw-away secret and key, made for the run; a bounded number of requests.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from .request_policy import Admitted, admit
from .tenants import SECRET_ENV, add_tenant

MAX_REQUESTS = 20_000


@dataclass(frozen=True)
class Overhead:
    """Latencies in milliseconds."""

    requests: int
    direct_median_ms: float
    direct_p99_ms: float
    proxied_median_ms: float
    proxied_p99_ms: float
    overhead_median_ms: float
    overhead_p99_ms: float

    def as_dict(self) -> dict[str, float | int]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in vars(self).items()}


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 1))))
    return ordered[rank - 1]


def _discard(stream: IO[str]) -> None:
    for _ in stream:
        pass


@contextlib.contextmanager
def started(args: list[str], env: dict[str, str], timeout_s: float = 60.0) -> Iterator[str]:
    """Start a server process that prints ``LISTENING <url>``; yield the URL; stop it."""
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                            text=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        url = None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("LISTENING "):
                url = line.split()[1]
                break
        if url is None:
            raise RuntimeError(f"{args[2:]} did not start (exit {proc.poll()})")
        # The server logs every request to this pipe: read it to the end, or once the pipe's
        # buffer (64 KiB) is full the server blocks on its next log line and stops answering.
        threading.Thread(target=_discard, args=(proc.stdout,), daemon=True).start()
        yield url
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure(requests: int = 300, warmup: int = 20, upstream_python: str | None = None,
            validate: str = "invariants") -> Overhead:
    """Run the interleaved direct/proxied calls and summarise them.

    ``upstream_python``/``validate``: run the stand-in with another interpreter (the engines'
    venv) and ``validate="vllm"`` to time against an upstream that parses every body with
    vLLM's request models.
    """
    if not 1 <= requests <= MAX_REQUESTS:
        raise ValueError(f"requests must be between 1 and {MAX_REQUESTS}")
    py = sys.executable
    up_py = upstream_python or py
    secret_hex = secrets.token_hex(32)
    body = json.dumps({"model": "m", "prompt": [1, 2, 3], "max_tokens": 1}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        tenants = Path(tmp) / "tenants.json"
        key = add_tenant(tenants, "bench")
        admitted = admit(body, "bench", bytes.fromhex(secret_hex))
        assert isinstance(admitted, Admitted)
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, SECRET_ENV: secret_hex, "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": root}
        env.pop("PYTOOLS_ADMISSION_UPSTREAM_KEY", None)
        with started([up_py, "-m", "pytools.admission.standin", "--validate", validate], env,
                     timeout_s=600) as upstream, \
                started([py, "-m", "pytools", "admission", "--upstream", upstream,
                         "--tenants", str(tenants), "--port", "0"], env) as proxy, \
                httpx.Client(timeout=30.0) as client:
            direct_url = upstream + "/v1/completions"
            proxied_url = proxy + "/v1/completions"
            auth = {"authorization": f"Bearer {key}", "content-type": "application/json"}
            plain = {"content-type": "application/json"}
            direct, proxied = [], []
            for i in range(warmup + requests):
                t0 = time.perf_counter()
                r1 = client.post(direct_url, content=admitted.body, headers=plain)
                t1 = time.perf_counter()
                r2 = client.post(proxied_url, content=body, headers=auth)
                t2 = time.perf_counter()
                if r1.status_code != 200 or r2.status_code != 200:
                    raise RuntimeError(f"bench call failed: {r1.status_code}, {r2.status_code}"
                                       f" {r2.text[:200]}")
                if i >= warmup:
                    direct.append((t1 - t0) * 1e3)
                    proxied.append((t2 - t1) * 1e3)
    diffs = [p - d for p, d in zip(proxied, direct, strict=True)]
    return Overhead(
        requests=requests,
        direct_median_ms=statistics.median(direct),
        direct_p99_ms=quantile(direct, 0.99),
        proxied_median_ms=statistics.median(proxied),
        proxied_p99_ms=quantile(proxied, 0.99),
        overhead_median_ms=statistics.median(diffs),
        overhead_p99_ms=quantile(diffs, 0.99),
    )
