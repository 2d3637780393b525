"""The committed evidence of the leak reproduction: one JSON file per engine, and its re-check.

``pytools leak run --engine vllm|sglang`` runs the scenarios on the engine's own cache
code and writes ``data/leak/<engine>.json``: the engine's name, version and settings, the prompt
generator, its parameters and the SHA-256 of every token it made, the salts (and the reproduction's
throw-away secret), and the raw per-pair counts. Certify, where the engines are absent, reads the
file and re-checks what it can without them (:func:`recheck`): the parameters are the ones this
code uses, the prompts regenerate to the recorded hash, the keyed salts recompute with the
admission layer's salt function and pass vLLM's salt rules, and the pure-Python reference model
(:mod:`.reference`) gives exactly the engine's counts. The engine-marked tests re-run the engines
and compare with the file, byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytools.admission.salt import SALT_LABEL, SALT_PREFIX, keyed_salt, vllm_salt_problem
from pytools.files import atomic_write_text

from .prompts import BOUND, GENERATOR, HEADLINE, PromptParams, generate, prompts_sha256
from .reference import ReferenceEngine
from .scenarios import METRICS, OTHER, VICTIM, CacheEngine, Salts, run_pairs

FORMAT = "pytools.leak.evidence/v1"
EVIDENCE_DIR = Path("data/leak")
RUNS: dict[str, PromptParams] = {"headline": HEADLINE, "bound": BOUND}
#: The engines whose committed evidence the certificate rests on (primary first).
CERTIFIED_ENGINES = ("vllm", "sglang")
SALT_SCHEME = (f"{SALT_PREFIX} + hex HMAC-SHA256(secret, {SALT_LABEL.decode()!r} NUL tenant id)")
SECRET_NOTE = ("throw-away secret of the reproduction, derived from the headline seed so that "
               "certify can recompute the keyed salts; a deployment's secret is random and secret")


class EvidenceError(ValueError):
    """An evidence file that is malformed or disagrees with what can be recomputed."""


def evidence_path(root: Path, engine: str) -> Path:
    return Path(root) / EVIDENCE_DIR / f"{engine}.json"


def salts_record(salts: Salts, seed: int) -> dict[str, Any]:
    return {"scheme": SALT_SCHEME, "throwaway_secret_hex": salts.secret.hex(),
            "throwaway_secret_seed": seed, "throwaway_secret_note": SECRET_NOTE,
            "keyed": dict(salts.keyed), "guessable": dict(salts.guessable)}


def build_evidence(engine: CacheEngine) -> dict[str, Any]:
    """Run every scenario on ``engine`` for the headline prompts and the bound's pairs."""
    salts = Salts.for_seed(HEADLINE.seed)
    runs: dict[str, Any] = {}
    for name, params in RUNS.items():
        pairs = generate(params)
        run: dict[str, Any] = {"params": params.as_dict(), "prompts_sha256": prompts_sha256(pairs),
                               "counts": run_pairs(engine, pairs, salts)}
        if name == "headline":
            run["prompt_tokens"] = [len(p.victim) for p in pairs]
            run["shared_tokens"] = [p.shared for p in pairs]
        runs[name] = run
    return {
        "format": FORMAT,
        "engine": {"name": engine.name, "version": engine.version,
                   "settings": engine.describe()},
        "generator": GENERATOR,
        "tenants": {"victim": VICTIM, "other": OTHER},
        "salts": salts_record(salts, HEADLINE.seed),
        "runs": runs,
    }


def dumps(doc: Any, indent: int = 0) -> str:
    """Sorted-key JSON, indented, with lists of numbers on one line (reviewable diffs)."""
    pad = "  " * (indent + 1)
    if isinstance(doc, dict):
        if not doc:
            return "{}"
        items = [f"{pad}{json.dumps(k)}: {dumps(doc[k], indent + 1)}" for k in sorted(doc)]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(doc, list) and all(isinstance(x, (int, float, str, bool)) for x in doc):
        return json.dumps(doc, separators=(", ", ": "))
    if isinstance(doc, list):
        items = [pad + dumps(x, indent + 1) for x in doc]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(doc)


def write_evidence(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically (temp file + rename): never a half-written evidence file."""
    atomic_write_text(path, dumps(doc) + "\n")  # 0o644: a committed data file, not a private one


def load_evidence(path: Path, engine: str) -> dict[str, Any]:
    """Read and shape-check an evidence file; errors name the file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvidenceError(f"{path}: cannot read: {exc} (run `pytools leak run "
                            f"--engine {engine}` where the engines are installed)") from None
    except json.JSONDecodeError as exc:
        raise EvidenceError(f"{path}: not valid JSON: {exc}") from None
    problems = shape_problems(doc, engine)
    if problems:
        raise EvidenceError(f"{path}: " + "; ".join(problems))
    return doc


def shape_problems(doc: Any, engine: str) -> list[str]:
    """Every way ``doc`` is not an evidence file of ``engine``."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return [f"not an evidence file of format {FORMAT}"]
    problems = []
    eng = doc.get("engine")
    if not isinstance(eng, dict) or eng.get("name") != engine or \
            not isinstance(eng.get("version"), str) or not isinstance(eng.get("settings"), dict):
        problems.append(f"engine must name {engine!r} with a version and settings")
    runs = doc.get("runs")
    if not isinstance(runs, dict) or set(runs) != set(RUNS):
        return problems + [f"runs must be exactly {sorted(RUNS)}"]
    for name, params in RUNS.items():
        counts = runs[name].get("counts") if isinstance(runs[name], dict) else None
        if not isinstance(counts, dict) or set(counts) != set(METRICS):
            problems.append(f"runs.{name}.counts must have exactly the metrics {list(METRICS)}")
            continue
        for metric, values in counts.items():
            if not (isinstance(values, list) and len(values) == params.pairs and
                    all(type(v) is int and v >= 0 for v in values)):
                problems.append(f"runs.{name}.counts.{metric}: {params.pairs} counts >= 0 needed")
    return problems


def block_size_of(doc: dict[str, Any]) -> int:
    settings = doc["engine"]["settings"]
    size = settings.get("block_size", settings.get("page_size"))
    if type(size) is not int or size < 1:
        raise EvidenceError("the engine settings name no block_size or page_size")
    return size


def reference_counts(block_size: int) -> dict[str, dict[str, list[int]]]:
    """The reference model's counts for every run, per metric."""
    salts = Salts.for_seed(HEADLINE.seed)
    engine = ReferenceEngine(block_size=block_size)
    return {name: run_pairs(engine, generate(params), salts) for name, params in RUNS.items()}


def salt_problems(doc: dict[str, Any]) -> list[str]:
    """The recorded salts against their recomputation, and the keyed ones against vLLM's
    ``cache_salt`` rules; every difference, in words."""
    problems = []
    salts = Salts.for_seed(HEADLINE.seed)
    if doc.get("salts") != salts_record(salts, HEADLINE.seed):
        problems.append("salts (secret, keyed or guessable) do not recompute")
    for tenant, salt in sorted(salts.keyed.items()):
        secret_hex = doc.get("salts", {}).get("throwaway_secret_hex", "")
        try:
            recomputed = keyed_salt(bytes.fromhex(secret_hex), tenant)
        except ValueError:  # not hex, or too short
            recomputed = None
        if recomputed != salt:
            problems.append(f"keyed salt of {tenant} does not recompute")
        if (why := vllm_salt_problem(salt)) is not None:
            problems.append(f"keyed salt of {tenant} breaks vLLM's salt rules: {why}")
    return problems


def reference_disagreements(doc: dict[str, Any],
                            expected: dict[str, dict[str, list[int]]]) -> list[str]:
    """Every run whose counts differ from the reference model's (``expected``:
    :func:`reference_counts`), or that cannot be compared with it (other prompt params)."""
    problems = []
    for name, params in RUNS.items():
        run = doc["runs"][name]
        if run.get("params") != params.as_dict():
            problems.append(f"runs.{name}.params differ from this code's {params}: the "
                            "reference model cannot be compared")
            continue
        for metric in METRICS:
            got, want = run["counts"][metric], expected[name][metric]
            if got != want:
                bad = [i for i, (g, e) in enumerate(zip(got, want, strict=True)) if g != e]
                problems.append(f"runs.{name}.{metric}: the reference model disagrees at "
                                f"{len(bad)} pair(s), first #{bad[0]}: engine {got[bad[0]]}, "
                                f"reference {want[bad[0]]}")
    return problems


def recheck(doc: dict[str, Any],
            expected: dict[str, dict[str, list[int]]] | None = None) -> list[str]:
    """What certify recomputes without the engines; every disagreement, in words.

    ``expected``: the reference counts (:func:`reference_counts`) when already computed.
    """
    problems = []
    if doc.get("generator") != GENERATOR:
        problems.append(f"generator {doc.get('generator')!r} is not {GENERATOR!r}")
    if doc.get("tenants") != {"victim": VICTIM, "other": OTHER}:
        problems.append("tenants differ from the reproduction's")
    problems += salt_problems(doc)
    for name, params in RUNS.items():
        run = doc["runs"][name]
        if run.get("params") != params.as_dict():
            continue  # said by reference_disagreements
        pairs = generate(params)
        if run.get("prompts_sha256") != prompts_sha256(pairs):
            problems.append(f"runs.{name}: the prompts do not regenerate to the recorded hash")
        if name == "headline" and (run.get("prompt_tokens") != [len(p.victim) for p in pairs]
                                   or run.get("shared_tokens") != [p.shared for p in pairs]):
            problems.append("runs.headline: prompt or shared lengths do not regenerate")
    if expected is None:
        expected = reference_counts(block_size_of(doc))
    return problems + reference_disagreements(doc, expected)
