"""The served engine's record (``data/leak/served-vllm.json``) turned into the certificate's
figures, from the raw record alone.

:mod:`.served_run` (``pytools leak serve``) makes the record on a served vLLM behind the
admission proxy. This module reads it back (:func:`load_record`), re-checks the
``cached_tokens`` counts against the reference model (:mod:`.reference`, which is what the
engines' cache-class evidence is checked against) and computes every figure from the raw
observations (:func:`summarise`: nothing is typed in): the scenarios' counts, the TTFT-only
attacker's AUC and accuracy, the contention channel, the throughput. It starts nothing and
imports no server code, so certify re-checks the committed record without them
(``tests/test_certify_imports.py``).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytools.paths import sha256_file
from pytools.results.spec import InputFile

from .evidence import EvidenceError
from .probe import wilson
from .prompts import HEADLINE, PromptParams, generate, prompts_sha256
from .reference import ReferenceEngine
from .scenarios import METRICS, Salts, run_pairs

FORMAT = "pytools.results.leak.served/v1"

#: The served engine's block size in tokens, at which the record's counts are re-checked: the
#: smallest its CPU attention backend takes ("No common block size for 16 (CPU_ATTN:
#: [MultipleOf(32)])", measured; its default is 128, vLLM's GPU default 16). The server is
#: started with it (:data:`.served.SERVER_FLAGS`).
BLOCK_SIZE = 32

#: The throughput workload's modes: direct without salts, direct with the keyed salts the proxy
#: would bind, and through the proxy.
MODES = ("direct_unsalted", "direct_keyed_salt", "proxied")


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

def evidence_path(root: Path) -> Path:
    """Where the committed served-engine record lives."""
    return root / "data" / "leak" / "served-vllm.json"


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
