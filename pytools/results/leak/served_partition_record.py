"""The stock-vs-partitioned served record (``data/leak/served-partition.json``) turned into
figures, from the raw record alone (:mod:`.served_partition` makes it; this module starts
nothing and imports no server code, so certify re-checks the committed record without them).

Figures: per pool the prime-and-probe attacker (its ``cached_tokens`` with and without the
victim, the TTFT attacker's AUC with Hanley–McNeil's interval and its held-out accuracy); on
the partitioned pool the concurrent-compute attacker; the price slice's hit rate and
throughput per pool and their ratios. Claims (certify fails when one does not hold): the
partitioned attacker's ``cached_tokens`` identical whether the victim sent or not on every
trial and equal to the reference's own-reuse prediction, its TTFT AUC interval containing 0.5
over at least 200 trials; on the stock pool the eviction seen in ``cached_tokens`` and the AUC
interval above 0.5. What the concurrent attacker reaches is reported, not claimed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytools.paths import sha256_file
from pytools.results.spec import InputFile

from . import partition as ref
from .served_record import BLOCK_SIZE, attacker, load_record

FORMAT = "pytools.results.leak.served-partition/v1"
POOLS = ("stock", "partitioned")
QUOTAS_ENV = "VLLM_PARTITION_QUOTAS"  # the plugin's switch (plugins/vllm_partition)
#: The attacker's prompt, in tokens (20 blocks); the victim sends this many fresh prompts of the
#: same length: 60 blocks, enough on a 63-block stock pool to evict most of the prime.
PRIME_TOKENS = 640
VICTIM_PROMPTS = 3
#: The longest request in blocks (``--max-model-len``): the 63 usable blocks of a 64-block pool
#: in three equal partitions (two tenants and the unlisted one), each holding one such request.
MAX_BLOCKS = 21
MIN_TRIALS = 200


def own_reuse_prediction(prime_tokens: int = PRIME_TOKENS) -> int:
    """What the reference predicts the attacker's probe is served from cache, in tokens: its
    partition's blocks after ``prime; finish; probe`` (a private pool: nothing the victim does
    enters), capped as vLLM caps every hit (the last prompt token is always recomputed)."""
    q = [MAX_BLOCKS]
    prime = tuple(range(prime_tokens // BLOCK_SIZE))
    s = ref.init(1, MAX_BLOCKS)
    for e in (ref.Submit(0, 0, prime), ref.Finish(0, 0)):
        s, _ = ref.step(q, s, e)
    _, seen = ref.step(q, s, ref.Submit(0, 1, prime))
    return min(seen.hits, (prime_tokens - 1) // BLOCK_SIZE) * BLOCK_SIZE


def price_figures(raw: dict[str, Any]) -> dict[str, Any]:
    prompt = sum(raw["prompt_tokens"])
    return {"requests": len(raw["prompt_tokens"]), "prompt_tokens": prompt,
            "hit_rate": round(sum(raw["cached_tokens"]) / prompt, 6),
            "prompt_tokens_per_s": round(prompt / raw["seconds"], 1)}


def summarise(doc: dict[str, Any]) -> dict[str, Any]:
    """Every figure, from the raw record."""
    pools = doc["pools"]
    out: dict[str, Any] = {
        "trials": {p: len(pools[p]["contention"]["sent"]) for p in POOLS},
        "stock": attacker(pools["stock"]["contention"], sent_is_faster=False),
        "partitioned": attacker(pools["partitioned"]["contention"], sent_is_faster=False),
        "own_reuse_predicted_tokens": own_reuse_prediction(doc["shape"]["prime_tokens"]),
        "quota_blocks": MAX_BLOCKS,
    }
    if "concurrent" in pools["partitioned"]:
        out["concurrent_partitioned"] = attacker(pools["partitioned"]["concurrent"],
                                                 sent_is_faster=False)
    if all("price" in pools[p] for p in POOLS):
        price = {p: price_figures(pools[p]["price"]) for p in POOLS}
        s, q = price["stock"], price["partitioned"]
        price["ratios"] = {
            "hit_rate_partitioned_over_stock": round(q["hit_rate"] / s["hit_rate"], 4)
            if s["hit_rate"] else None,
            "throughput_partitioned_over_stock": round(q["prompt_tokens_per_s"]
                                                       / s["prompt_tokens_per_s"], 4)}
        out["price"] = price
    return out


def recheck(doc: dict[str, Any]) -> list[str]:
    """The record's shape: every problem, in words (empty: summarise may run)."""
    problems = []
    if doc.get("format") != FORMAT:
        problems.append(f"format is {doc.get('format')!r}, not {FORMAT}")
        return problems
    pools = doc.get("pools", {})
    for p in POOLS:
        if p not in pools:
            problems.append(f"no {p} pool")
            continue
        c = pools[p]["contention"]
        if not len(c["sent"]) == len(c["ttft_ms"]) == len(c["cached_tokens"]):
            problems.append(f"{p}: contention lists of different lengths")
        if pools[p].get("plugin_on") != (p == "partitioned"):
            problems.append(f"{p}: plugin_on is {pools[p].get('plugin_on')}")
    if not problems and not pools["partitioned"].get("log_says_partitioned"):
        problems.append("partitioned: the server's log does not show the plugin on")
    return problems


def claims(f: dict[str, Any]) -> dict[str, bool]:
    """What must hold (certify fails otherwise)."""
    part, stock = f["partitioned"], f["stock"]
    want = f["own_reuse_predicted_tokens"]
    return {
        "partitioned_cached_tokens_identical_victim_or_not":
            part["cached_tokens_when_sent"] == part["cached_tokens_when_not_sent"] == [want],
        "partitioned_ttft_auc_interval_contains_half":
            part["auc_95"][0] <= 0.5 <= part["auc_95"][1] and part["trials"] >= MIN_TRIALS,
        "stock_eviction_seen_in_cached_tokens": bool(stock["cached_tokens_when_sent"])
        and max(stock["cached_tokens_when_sent"]) < min(stock["cached_tokens_when_not_sent"]),
        "stock_ttft_auc_above_half": stock["auc_95"][0] > 0.5,
    }


def evidence_path(root: Path) -> Path:
    return root / "data" / "leak" / "served-partition.json"


def certificate_figures(root: Path) -> tuple[dict[str, Any], list[str], InputFile]:
    """The figures from the committed record, every problem, and the record's hash."""
    path = evidence_path(root)
    doc = load_record(path)
    digest = InputFile(evidence_path(Path(".")).as_posix(), sha256_file(path))
    problems = [f"{path.name}: {p}" for p in recheck(doc)]
    if problems:
        return {}, problems, digest
    f = summarise(doc)
    checked = claims(f)
    problems += [f"{path.name}: claim {name} fails" for name, held in checked.items()
                 if not held]
    return {**f, "claims": checked}, problems, digest
