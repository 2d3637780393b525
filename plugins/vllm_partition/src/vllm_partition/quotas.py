"""The operator's quota file: which tenants there are and how many physical blocks each owns.

The file (JSON, path in ``$VLLM_PARTITION_QUOTAS``)::

    {"tenants": {"<cache_salt of tenant a>": 20, "<cache_salt of tenant b>": null},
     "others": null}

* ``tenants``: one entry per tenant, keyed by the ``cache_salt`` its requests carry (behind the
  project's admission proxy: the keyed salt the proxy binds to that tenant, which the operator
  computes from the proxy's secret). ``T`` is the number of entries plus one (``others``).
* ``others``: the partition of every request whose salt is not listed, or that has none (a
  request sent around the proxy). Unlisted requests share that one partition with each other,
  never with a listed tenant.
* A quota is a positive number of blocks, or ``null``: an equal share of what the numbered
  quotas leave of the pool (``C`` = the engine's blocks less vLLM's null block).

Checked when the engine starts (:func:`resolve`): unknown keys, a quota that is not a positive
integer, quotas summing past ``C``, a quota smaller than one longest request (``max_model_len``
tokens) all stop the engine with one line naming the file and the problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV = "VLLM_PARTITION_QUOTAS"
OTHERS = "*others*"  # the partition name of unlisted requests (no salt is this string)
KEYS = {"tenants", "others"}


class QuotaError(ValueError):
    """The quota file is unreadable or inconsistent with the engine."""


@dataclass(frozen=True)
class QuotaSpec:
    """The file as written: each listed salt's quota (``None``: equal share), and ``others``'."""

    origin: str
    tenants: tuple[tuple[str, int | None], ...]
    others: int | None

    def names(self) -> list[str]:
        return [salt for salt, _ in self.tenants] + [OTHERS]


@dataclass(frozen=True)
class Plan:
    """The resolved partition: every partition's quota in blocks, out of ``capacity``."""

    quotas: Mapping[str, int]
    capacity: int

    def tenant_of(self, cache_salt: str | None) -> str:
        """The partition a request with this ``cache_salt`` allocates in."""
        if cache_salt is not None and cache_salt in self.quotas and cache_salt != OTHERS:
            return cache_salt
        return OTHERS


def _quota(value: object, where: str, origin: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise QuotaError(f"{origin}: {where} must be a positive number of blocks or null, "
                         f"not {value!r}")
    return value


def parse(text: str, origin: str) -> QuotaSpec:
    """The quota file's text, checked for shape (not yet against the engine)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise QuotaError(f"{origin}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise QuotaError(f"{origin}: the top level must be an object")
    unknown = sorted(set(doc) - KEYS)
    if unknown:
        raise QuotaError(f"{origin}: unknown key(s) {', '.join(unknown)} (allowed: tenants, "
                         "others)")
    tenants = doc.get("tenants")
    if not isinstance(tenants, dict) or not tenants:
        raise QuotaError(f"{origin}: 'tenants' must be a non-empty object salt -> quota")
    rows = []
    for salt, value in tenants.items():
        if not salt or salt == OTHERS:
            raise QuotaError(f"{origin}: {salt!r} cannot be a tenant's salt")
        rows.append((salt, _quota(value, f"tenant {salt[:12]}...'s quota", origin)))
    return QuotaSpec(origin, tuple(rows), _quota(doc.get("others"), "'others'", origin))


def load(path: Path) -> QuotaSpec:
    """Read and :func:`parse` the file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise QuotaError(f"{path}: cannot read the quota file ({e})") from None
    return parse(text, str(path))


def resolve(spec: QuotaSpec, capacity: int, min_blocks: int = 1) -> Plan:
    """The quotas for a pool of ``capacity`` usable blocks: ``null`` ones split equally what the
    numbered ones leave; each at least ``min_blocks`` (one longest request)."""
    given = dict(spec.tenants)
    given[OTHERS] = spec.others
    fixed = sum(q for q in given.values() if q is not None)
    open_ = [name for name, q in given.items() if q is None]
    if fixed > capacity:
        raise QuotaError(f"{spec.origin}: quotas sum to {fixed} blocks, more than the pool's "
                         f"{capacity}")
    share = (capacity - fixed) // len(open_) if open_ else 0
    quotas = {name: (share if q is None else q) for name, q in given.items()}
    small = [name for name, q in quotas.items() if q < max(min_blocks, 1)]
    if small:
        who = ", ".join("others" if n == OTHERS else f"{n[:12]}..." for n in small)
        raise QuotaError(f"{spec.origin}: quota of {who} is {min(quotas[n] for n in small)} "
                         f"blocks, below the {max(min_blocks, 1)} one longest request needs "
                         f"(pool {capacity} blocks, {len(quotas)} partitions)")
    return Plan(quotas=quotas, capacity=capacity)
