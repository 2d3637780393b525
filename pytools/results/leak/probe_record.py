"""The prime-and-probe records of the engines' own cache code (``data/leak/probe-<engine>.json``)
turned into figures, without the engines.

:mod:`.probe_engines` runs the attack of :mod:`.probe` on vLLM's, SGLang's and LMCache's cache
code (where they are importable) and writes the raw record; :func:`recheck` recomputes every
figure from it with :func:`.probe.summarise` and says what does not match this code's
parameters (:data:`PARAMS`, the tenants' salts). This module imports no engine, so certify
re-checks the committed records without them (``tests/test_certify_imports.py``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pytools.admission.salt import keyed_salt

from .probe import DEFAULT, ProbeParams, summarise

FORMAT = "pytools.leak.probe-evidence/v1"
ENGINES = ("vllm", "sglang", "lmcache")
PARAMS = replace(DEFAULT, trials=1000)


def evidence_path(root: Path, engine: str) -> Path:
    """Where the committed record of ``engine`` lives."""
    return Path(root) / "data" / "leak" / f"probe-{engine}.json"


def tenant_salts(params: ProbeParams) -> list[str]:
    """Each tenant's keyed salt, under a throw-away secret derived from the public seed."""
    secret = f"pytools-leak-probe-{params.seed}".encode().ljust(32, b"\0")
    return [keyed_salt(secret, f"tenant-{t}") for t in range(params.tenants)]


def recheck(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Figures recomputed from a raw record, and what does not match this code's parameters."""
    problems = []
    if doc.get("format") != FORMAT:
        problems.append(f"format is {doc.get('format')!r}, not {FORMAT!r}")
    if doc.get("params") != PARAMS.as_dict():
        problems.append("parameters differ from pytools.results.leak.probe_record.PARAMS")
    if doc.get("quotas") != PARAMS.quotas() or doc.get("salts") != tenant_salts(PARAMS):
        problems.append("quotas or salts do not recompute")
    designs = {}
    for name in ("shared_lru", "partitioned_lru"):
        raw = doc.get("designs", {}).get(name)
        try:
            designs[name] = summarise(raw)
            if len(raw["sent"]) != PARAMS.trials:
                problems.append(f"{name}: {len(raw['sent'])} trials, not {PARAMS.trials}")
        except (TypeError, KeyError, ValueError) as exc:
            problems.append(f"{name}: malformed record ({exc})")
    return {"engine": doc.get("engine"), "designs": designs}, problems
