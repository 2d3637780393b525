"""Stock and tenant-partitioned vLLM pools side by side, served through the admission proxy.

One run (:func:`run`, ``pytools leak serve-partition``) starts the same vLLM server twice, one
after the other, with the same flags and the same pool (``num_blocks``): once stock, once with
the project's plugin on (``plugins/vllm_partition``, ``$VLLM_PARTITION_QUOTAS`` naming a quota
file that lists the two tenants' keyed salts, equal split, the unlisted partition included).
Each behind the project's proxy. On each pool, recorded raw (``data/leak/served-partition.json``):

* ``contention``: prime and probe through eviction. Per trial, on an empty cache: the attacker
  (``OTHER``) primes a prompt; by a seeded coin the victim sends ``VICTIM_PROMPTS`` fresh
  prompts of the same length (on the stock pool, enough to evict most of the prime) or
  nothing; the attacker probes its prompt again: its ``cached_tokens`` and TTFT.
* ``concurrent`` (partitioned pool only): what partitioning does not close. Per trial the
  attacker primes; by a coin the victim's long prompt is sent at the same moment as the
  attacker's probe (shared compute and batching); the probe's TTFT and ``cached_tokens``.
* ``price``: a slice of the shared Mooncake trace (tenants derived by the price table's
  uniform rule, 2 tenants), each Mooncake block scaled to one 32-token block, sent in trace
  order: per request ``cached_tokens``, ``prompt_tokens``; the wall time of the slice.

Figures come from the record alone in :mod:`.served_partition_record` (what certify imports).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from pytools.traces.trace import read_trace

from .price import conversations, tenants_of
from .scenarios import OTHER, VICTIM, Salts
from .served import (
    SERVED_NAME,
    SERVER_ENV,
    SHAPES,
    ServeError,
    Timed,
    admission_proxy,
    reset_cache,
    server_version,
    timed_completion,
    vllm_server,
    work_dir,
    write_model_dir,
)
from .served_partition_record import (
    BLOCK_SIZE,
    FORMAT,
    MAX_BLOCKS,
    POOLS,
    PRIME_TOKENS,
    QUOTAS_ENV,
    VICTIM_PROMPTS,
)
from .served_run import environment, fresh_tokens, load_average


@dataclass(frozen=True)
class PartitionParams:
    """What a run is sized by (recorded)."""

    contention_trials: int = 200  # on the partitioned pool (its claims need 200)
    stock_trials: int = 60  # on the stock pool (its channel is wide open: fewer suffice)
    concurrent_trials: int = 40
    price_requests: int = 120
    num_blocks: int = 64
    seed: int = 20261207

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


FULL = PartitionParams()
#: The CI smoke: the plugin serves and partitions; few trials.
QUICK = PartitionParams(contention_trials=6, stock_trials=6, concurrent_trials=0,
                        price_requests=0)
WARMUP = 4


def quota_file(path: Path, salts: Salts) -> dict[str, Any]:
    """The operator's quota file: both tenants' keyed salts, equal split (``null``)."""
    doc = {"tenants": {salts.keyed[VICTIM]: None, salts.keyed[OTHER]: None}, "others": None}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return doc


def mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def ok(t: Timed) -> Timed:
    if t.status != 200:
        raise ServeError(f"a request that must succeed answered HTTP {t.status}")
    return t


def coins(seed: int, n: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(2) for _ in range(n)]


class Parties:
    """The two tenants' requests through the proxy; the operator's cache reset."""

    def __init__(self, client: httpx.Client, server: str, proxy: Any) -> None:
        self.client, self.server, self.proxy = client, server, proxy

    def send(self, tenant: str, tokens: Sequence[int],
             client: httpx.Client | None = None) -> Timed:
        return ok(timed_completion(client or self.client, self.proxy.url, SERVED_NAME, tokens,
                                   api_key=self.proxy.keys[tenant]))

    def reset(self) -> None:
        reset_cache(self.client, self.server)


def contention(p: Parties, params: PartitionParams, trials: int) -> dict[str, Any]:
    rng = random.Random(params.seed + 1)
    sent = coins(params.seed + 2, trials)
    ttft, cached = [], []
    for s in sent:
        p.reset()
        prime = fresh_tokens(rng, PRIME_TOKENS)
        victims = [fresh_tokens(rng, PRIME_TOKENS) for _ in range(VICTIM_PROMPTS)]
        p.send(OTHER, prime)
        if s:
            for v in victims:
                p.send(VICTIM, v)
        t = p.send(OTHER, prime)
        ttft.append(t.ttft_ms)
        cached.append(t.cached_tokens or 0)
    return {"sent": sent, "ttft_ms": ttft, "cached_tokens": cached}


def concurrent(p: Parties, params: PartitionParams) -> dict[str, Any]:
    """The victim's prompt sent alongside the attacker's probe (its own connection)."""
    rng = random.Random(params.seed + 3)
    sent = coins(params.seed + 4, params.concurrent_trials)
    ttft, cached = [], []
    with httpx.Client(timeout=600.0) as other:
        for s in sent:
            p.reset()
            prime = fresh_tokens(rng, PRIME_TOKENS)
            victim = fresh_tokens(rng, PRIME_TOKENS)
            p.send(OTHER, prime)
            worker = threading.Thread(target=p.send, args=(VICTIM, victim, other))
            if s:
                worker.start()
            t = p.send(OTHER, prime)
            if s:
                worker.join()
            ttft.append(t.ttft_ms)
            cached.append(t.cached_tokens or 0)
    return {"sent": sent, "ttft_ms": ttft, "cached_tokens": cached}


def block_tokens(block_id: int) -> list[int]:
    """A Mooncake block scaled to one served block: 32 token ids seeded by its id."""
    rng = random.Random(f"mooncake-block:{block_id}")
    return [rng.randrange(258, 32_000) for _ in range(BLOCK_SIZE)]


def price_slice(trace: Path, n: int) -> tuple[list[list[int]], list[int], str]:
    """The first ``n`` requests' block ids (at most ``MAX_BLOCKS - 1`` leading ones), their
    tenants (uniform rule, 2 tenants) and the trace's hash."""
    conv = conversations(read_trace(trace))
    tenants = tenants_of(conv, "uniform", 2)
    return ([ids[:MAX_BLOCKS - 1] for ids in conv.requests[:n]], tenants[:n], conv.sha256)


def price(p: Parties, blocks: list[list[int]], tenants: list[int]) -> dict[str, Any]:
    """The slice in trace order; one token after the full blocks so every block may hit."""
    p.reset()
    names = (VICTIM, OTHER)
    cached, prompt = [], []
    t0 = time.perf_counter()
    for ids, t in zip(blocks, tenants, strict=True):
        tokens = [tok for b in ids for tok in block_tokens(b)] + [257]
        answer = p.send(names[t], tokens)
        cached.append(answer.cached_tokens or 0)
        prompt.append(answer.prompt_tokens or 0)
    return {"seconds": round(time.perf_counter() - t0, 4), "cached_tokens": cached,
            "prompt_tokens": prompt}


def run(python: Path, trace: Path, params: PartitionParams = FULL, shape: str = "tiny",
        progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Both pools, one after the other; every process started here stopped before returning."""
    salts = Salts.for_seed(params.seed)
    blocks, tenants, trace_sha = (price_slice(trace, params.price_requests)
                                  if params.price_requests else ([], [], None))
    doc: dict[str, Any] = {
        "format": FORMAT, "params": params.as_dict(), "block_size": BLOCK_SIZE,
        "shape": {"prime_tokens": PRIME_TOKENS, "victim_prompts": VICTIM_PROMPTS,
                  "max_blocks": MAX_BLOCKS},
        "price_slice": {"trace_sha256": trace_sha, "requests": len(blocks),
                        "tenants": tenants, "split": "uniform", "tenant_count": 2},
        "host": {"loadavg_at_start": load_average()}, "pools": {},
    }
    with work_dir() as work, httpx.Client(timeout=600.0) as client:
        model = work / "model"
        doc["model"] = {"name": shape, "shape": asdict(SHAPES[shape]), "sha256": write_model_dir(
            model, SHAPES[shape]), "weights": "random (--load-format dummy)"}
        doc["engine"] = {"interpreter": environment(python), "environment": SERVER_ENV}
        for pool in POOLS:
            env = {QUOTAS_ENV: ""}  # stock: off even if the caller's environment has it
            if pool == "partitioned":
                doc["quota_file"] = quota_file(work / "quotas.json", salts)
                env[QUOTAS_ENV] = str(work / "quotas.json")
            progress(f"starting vLLM ({pool} pool)")
            with vllm_server(python, model, work, num_blocks=params.num_blocks,
                             max_model_len=MAX_BLOCKS * BLOCK_SIZE, env=env) as server, \
                    admission_proxy(sys.executable, server.url, (VICTIM, OTHER), salts.secret,
                                    mkdir(work / pool)) as proxy:
                p = Parties(client, server.url, proxy)
                rng = random.Random(params.seed + 9)
                for _ in range(WARMUP):
                    p.send(OTHER, fresh_tokens(rng, PRIME_TOKENS))
                out: dict[str, Any] = {"version": server_version(client, server.url),
                                       "flags": server.flags, "startup_s": server.startup_s,
                                       "plugin_on": bool(env[QUOTAS_ENV])}
                progress(f"{pool}: contention")
                out["contention"] = contention(p, params, params.stock_trials
                                               if pool == "stock" else params.contention_trials)
                if pool == "partitioned" and params.concurrent_trials:
                    progress(f"{pool}: concurrent")
                    out["concurrent"] = concurrent(p, params)
                if blocks:
                    progress(f"{pool}: price slice")
                    out["price"] = price(p, blocks, tenants)
                out["log_says_partitioned"] = "partitioned block pool on" in server.log_tail(
                    1 << 20)
                doc["pools"][pool] = out
    doc["host"]["loadavg_at_end"] = load_average()
    return doc
