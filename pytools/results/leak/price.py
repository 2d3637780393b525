"""The price of isolation on real traffic: the Mooncake conversation trace split among derived
tenants, served at equal total memory by four designs of ``Proofs/Leak/Eviction.lean``:

* ``unsalted``: one shared LRU pool keyed by block hash alone (``KVCache.Leak.lru`` with every
  request under one salt): a block any tenant computed serves every tenant;
* ``salted``: the same pool keyed by (tenant, block) (``lru`` with one salt per tenant): no
  cross-tenant reuse, and eviction still crosses tenants;
* ``proportional``: partitioned, LRU inside each tenant's quota (``KVCache.Leak.quotaLru``),
  quotas proportional to each tenant's block references;
* ``equal``: the same with equal quotas.

The trace has no tenant ids. Every request of it starts with one block (the system prompt's,
checked on the file, not assumed), and a conversation is the requests that share their second
block (the first non-system one); conversations are assigned to tenants by a seeded rule
(:func:`uniform_tenant`, :func:`zipf_tenant`). A request's hits are the model's observation
``seen``: the leading blocks of its prompt found in the pool under its tenant's salt (as a
prefix cache serves them); the hit rate is hits over block references.

Method: request-granularity LRU (the request's blocks become the most recent, in prompt
order, then the first ``k`` entries are kept) is a stack algorithm: the pool at capacity ``k``
is the first ``k`` entries of one recency order that does not depend on ``k`` (a filter of a
prefix of a list is a prefix of the filter of the list). So one pass over a stream gives every
capacity: a block is in the pool at capacity ``k`` iff fewer than ``k`` entries were used more
recently (its depth), and the request's leading ``j`` blocks are served iff the largest depth
among them is below ``k``. A partitioned design is one private pool per tenant (the Lean
``quota_own_reuse``: each tenant observes a private LRU of its quota), so it is one pass per
tenant's own stream, read at its quota. ``tests/test_leak_price.py`` checks the pass against
the direct simulation of the Lean definitions (:mod:`.probe`'s ``SharedLru``,
``PartitionedLru``).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from pytools.traces.trace import TraceError, TraceRead, percent_str, read_trace

#: The designs, in the order of the table's columns.
DESIGNS: tuple[str, ...] = ("unsalted", "salted", "proportional", "equal")
#: Tenant counts of the table.
TENANT_COUNTS: tuple[int, ...] = (2, 4, 16, 64)
#: Capacities in blocks: 2**6 .. 2**18 (the trace has 182,790 distinct blocks).
CAPACITIES: tuple[int, ...] = tuple(2**e for e in range(6, 19))
#: The seed of both tenant rules.
SEED = 25
#: The exponent of the Zipf split: tenant ``i`` (0-based) has weight ``(i + 1) ** -s``.
ZIPF_EXPONENT = 1.0
#: The two tenant rules, by name.
SPLITS: tuple[str, ...] = ("uniform", "zipf")

RULES = {
    "conversation": "the requests whose hash_ids share their second entry (hash_ids[1], the "
                    "first block after the system block hash_ids[0] that every request of the "
                    "trace starts with)",
    "uniform": f"a conversation c goes to tenant H('{SEED}:uniform:c') mod T, H the first 8 "
               "bytes of SHA-256 read big-endian",
    "zipf": f"a conversation c goes to the first tenant i with u < F(i), u = "
            f"H('{SEED}:zipf:c') / 2**64 and F the cumulative share of weights (i + 1)^-"
            f"{ZIPF_EXPONENT:g}, i = 0..T-1",
    "proportional_quotas": "quota of tenant t = floor(C * refs_t / refs) plus one for the "
                           "C - sum(floor) tenants of largest remainder (ties: lower tenant "
                           "index); refs_t = tenant t's block references",
    "equal_quotas": "quota of tenant t = C // T, plus one for tenants t < C mod T",
}


class PriceError(ValueError):
    """A trace the tenant rule cannot be applied to; the message names the file and line."""


# ----------------------------------------------------------------------------- tenants


@dataclass(frozen=True)
class Conversations:
    """A trace's requests, its system block and each request's conversation (0.. in order of
    first appearance)."""

    name: str
    sha256: str
    requests: list[list[int]]
    system_block: int
    conversation: list[int]
    keys: list[int]  # the hash_ids[1] of each conversation, by conversation index

    @property
    def count(self) -> int:
        return len(self.keys)


def conversations(trace: TraceRead, source: str | None = None) -> Conversations:
    """Derive the conversations; :class:`PriceError` naming ``source`` (default: the trace's
    name) and the line for a request that does not start with the shared block, has no block
    after it, or repeats a block."""
    name = source or trace.name
    if not trace.requests:
        raise PriceError(f"{name}: no requests")
    if not trace.requests[0]:
        raise PriceError(f"{name}:1: the first request has no hash_ids, so there is no shared "
                         "system block for the tenant rule (every request starts with it)")
    system = trace.requests[0][0]
    index: dict[int, int] = {}
    conv: list[int] = []
    for line, ids in enumerate(trace.requests, start=1):
        if len(ids) < 2 or ids[0] != system:
            raise PriceError(f"{name}:{line}: the tenant rule needs every request to start "
                             f"with the shared system block {system} and one block after it; "
                             f"this one has hash_ids {ids[:3]}{'...' if len(ids) > 3 else ''}")
        if len(set(ids)) != len(ids):
            raise PriceError(f"{name}:{line}: a request repeats a block id")
        conv.append(index.setdefault(ids[1], len(index)))
    return Conversations(trace.name, trace.sha256, trace.requests, int(system), conv,
                         list(index))


def _h(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def uniform_tenant(key: int, tenants: int, seed: int = SEED) -> int:
    """The uniform rule's tenant of the conversation whose second block is ``key``."""
    return _h(f"{seed}:uniform:{key}") % tenants


def zipf_cdf(tenants: int, exponent: float = ZIPF_EXPONENT) -> list[float]:
    weights = [(i + 1) ** -exponent for i in range(tenants)]
    total = sum(weights)
    acc, out = 0.0, []
    for w in weights:
        acc += w
        out.append(acc / total)
    out[-1] = 1.0
    return out


def zipf_tenant(key: int, cdf: Sequence[float], seed: int = SEED) -> int:
    """The Zipf rule's tenant of the conversation whose second block is ``key``."""
    return min(bisect_right(cdf, _h(f"{seed}:zipf:{key}") / 2**64), len(cdf) - 1)


def tenants_of(conv: Conversations, split: str, tenants: int) -> list[int]:
    """Each request's tenant under the rule ``split`` with ``tenants`` tenants."""
    if split == "uniform":
        per_conv = [uniform_tenant(k, tenants) for k in conv.keys]
    elif split == "zipf":
        cdf = zipf_cdf(tenants)
        per_conv = [zipf_tenant(k, cdf) for k in conv.keys]
    else:
        raise ValueError(f"unknown split {split!r}: one of {', '.join(SPLITS)}")
    return [per_conv[c] for c in conv.conversation]


def proportional_quotas(capacity: int, traffic: Sequence[int]) -> list[int]:
    """Quotas summing to ``capacity``, proportional to ``traffic`` (largest remainder)."""
    total = sum(traffic)
    if total <= 0:
        raise ValueError("no traffic to share the capacity by")
    base = [capacity * w // total for w in traffic]
    order = sorted(range(len(traffic)), key=lambda t: (-(capacity * traffic[t] % total), t))
    for t in order[: capacity - sum(base)]:
        base[t] += 1
    return base


def equal_quotas(capacity: int, tenants: int) -> list[int]:
    """Quotas summing to ``capacity``: ``capacity // tenants``, one more for the first ones."""
    return [capacity // tenants + (1 if t < capacity % tenants else 0) for t in range(tenants)]


# ----------------------------------------------------------------------------- stack pass


#: The depth of a block not in the pool: deeper than every capacity.
ABSENT = 2**62


@njit(cache=True, nogil=True)
def _prefix_depths(keys: np.ndarray, starts: np.ndarray,  # pragma: no cover
                   nkeys: int) -> np.ndarray:
    """For each reference, the largest depth among its request's blocks up to it (depth: how
    many entries were used more recently, before the request; absent: :data:`ABSENT`)."""
    total = keys.shape[0]
    tree = np.zeros(total + 1, np.int64)  # Fenwick tree over use times 1..total
    last = np.zeros(nkeys, np.int64)  # use time of each key's entry, 0: absent
    out = np.empty(total, np.int64)
    live = 0
    clock = 0
    for i in range(starts.shape[0] - 1):
        a = starts[i]
        b = starts[i + 1]
        deepest = -1
        for j in range(a, b):
            ts = last[keys[j]]
            depth = ABSENT
            if ts != 0:
                s = 0
                x = ts
                while x > 0:
                    s += tree[x]
                    x -= x & -x
                depth = live - s
            if depth > deepest:
                deepest = depth
            out[j] = deepest
        for j in range(b - 1, a - 1, -1):  # the prompt's first block ends most recent
            k = keys[j]
            ts = last[k]
            if ts != 0:
                x = ts
                while x <= total:
                    tree[x] -= 1
                    x += x & -x
                live -= 1
            clock += 1
            last[k] = clock
            x = clock
            while x <= total:
                tree[x] += 1
                x += x & -x
            live += 1
    return out


@dataclass(frozen=True)
class Depths:
    """One stream's prefix depths, sorted, for all references and for the first (system)
    block of each request."""

    all: np.ndarray
    system: np.ndarray

    def hits(self, capacity: int) -> tuple[int, int]:
        """Hits at ``capacity`` (all references, system-block references)."""
        return (int(np.searchsorted(self.all, capacity, side="left")),
                int(np.searchsorted(self.system, capacity, side="left")))


def stream_depths(requests: Sequence[Sequence[int]], salts: Sequence[int] | None = None
                  ) -> Depths:
    """The pass over ``requests`` (each under its salt; ``None``: one salt)."""
    lengths = np.fromiter((len(r) for r in requests), np.int64, len(requests))
    starts = np.zeros(len(requests) + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    flat = np.fromiter((x for r in requests for x in r), np.int64, int(starts[-1]))
    if salts is not None:
        flat = np.repeat(np.asarray(salts, np.int64), lengths) * (int(flat.max()) + 1) + flat
    _, dense = np.unique(flat, return_inverse=True)
    out = _prefix_depths(dense.astype(np.int64), starts, int(dense.max()) + 1)
    return Depths(np.sort(out), np.sort(out[starts[:-1]]))


def serve(requests: Sequence[Sequence[int]], tenants: Sequence[int], design: str,
          capacities: Sequence[int], count: int) -> list[tuple[int, int]]:
    """(hits, system-block hits) of ``design`` at each capacity, ``count`` tenants."""
    if design == "unsalted":
        d = stream_depths(requests)
        return [d.hits(c) for c in capacities]
    if design == "salted":
        d = stream_depths(requests, tenants)
        return [d.hits(c) for c in capacities]
    own: list[list[Sequence[int]]] = [[] for _ in range(count)]
    for r, t in zip(requests, tenants, strict=True):
        own[t].append(r)
    parts = [stream_depths(rs) if rs else None for rs in own]
    traffic = [sum(len(r) for r in rs) for rs in own]
    out = []
    for c in capacities:
        quotas = proportional_quotas(c, traffic) if design == "proportional" \
            else equal_quotas(c, count)
        per = [p.hits(q) if p is not None else (0, 0) for p, q in zip(parts, quotas, strict=True)]
        out.append((sum(h for h, _ in per), sum(s for _, s in per)))
    return out


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class PriceRow:
    """One split, tenant count and capacity: each design's hits (and system-block hits)."""

    split: str
    tenants: int
    capacity: int
    hits: dict[str, int]
    system_hits: dict[str, int]


@dataclass(frozen=True)
class Price:
    """The price-of-isolation table of one trace."""

    conv: Conversations
    references: int
    distinct: int
    rows: list[PriceRow]
    active: dict[tuple[str, int], int]  # tenants with at least one request
    top_share: dict[tuple[str, int], Fraction]  # the largest tenant's share of references


def price(conv: Conversations, tenant_counts: Sequence[int] = TENANT_COUNTS,
          capacities: Sequence[int] = CAPACITIES, splits: Sequence[str] = SPLITS) -> Price:
    """Every design at every split, tenant count and capacity."""
    reqs = conv.requests
    refs = sum(len(r) for r in reqs)
    unsalted = serve(reqs, [0] * len(reqs), "unsalted", capacities, 1)
    rows: list[PriceRow] = []
    active: dict[tuple[str, int], int] = {}
    top: dict[tuple[str, int], Fraction] = {}
    for split in splits:
        for n in tenant_counts:
            tenants = tenants_of(conv, split, n)
            traffic = [0] * n
            for r, t in zip(reqs, tenants, strict=True):
                traffic[t] += len(r)
            active[split, n] = sum(1 for w in traffic if w)
            top[split, n] = Fraction(max(traffic), refs)
            served = {"unsalted": unsalted, **{d: serve(reqs, tenants, d, capacities, n)
                                               for d in DESIGNS[1:]}}
            for i, c in enumerate(capacities):
                rows.append(PriceRow(split, n, c, {d: served[d][i][0] for d in DESIGNS},
                                     {d: served[d][i][1] for d in DESIGNS}))
    distinct = len({x for r in reqs for x in r})
    return Price(conv, refs, distinct, rows, active, top)


def price_of_trace(path: Path) -> Price:
    """:func:`price` of the trace file at ``path`` (errors name the file and line)."""
    try:
        return price(conversations(read_trace(Path(path)), str(path)))
    except PriceError:
        raise
    except TraceError as exc:
        raise PriceError(str(exc)) from None


def _pct(num: int, den: int) -> str:
    return percent_str(Fraction(num, den))


def row_figures(row: PriceRow, refs: int) -> dict[str, Any]:
    """One row of the certificate's table: hit percent per design, the salted pool's loss
    against the unsalted one (hits) and how much of it is on the system block."""
    loss = row.hits["unsalted"] - row.hits["salted"]
    system_loss = row.system_hits["unsalted"] - row.system_hits["salted"]
    return {
        "split": row.split, "tenants": row.tenants, "capacity": row.capacity,
        **{f"{d}_percent": _pct(row.hits[d], refs) for d in DESIGNS},
        "salted_loss_hits": loss,
        "system_block_loss_hits": system_loss,
        "system_block_share_of_loss_percent": _pct(system_loss, loss) if loss > 0 else None,
    }


def figures(p: Price, input_path: str) -> dict[str, Any]:
    """The certificate's ``price_of_isolation`` figures."""
    refs = p.references
    return {
        "trace": {"input": input_path, "sha256": p.conv.sha256,
                  "requests": len(p.conv.requests), "references": refs, "distinct": p.distinct,
                  "system_block": p.conv.system_block,
                  "requests_starting_with_system_block": len(p.conv.requests),
                  "conversations": p.conv.count},
        "rules": dict(RULES),
        "seed": SEED, "zipf_exponent": ZIPF_EXPONENT,
        "hit": "a request's hits are the leading blocks of its prompt found in the pool under its "
               "tenant's salt before it is served (the Lean seen); hit percent = hits / block "
               "references; the pool starts empty",
        "capacity_unit": "blocks of the trace (512 tokens each); every design has the same "
                         "total capacity C",
        "tenants": [{"split": s, "tenants": n, "active_tenants": p.active[s, n],
                     "largest_tenant_share_percent": percent_str(p.top_share[s, n])}
                    for s in SPLITS for n in TENANT_COUNTS if (s, n) in p.active],
        "table": [row_figures(r, refs) for r in p.rows],
        "largest_capacity_loss": largest_capacity_loss(p),
    }


def largest_capacity_loss(p: Price) -> list[dict[str, Any]]:
    """At the largest capacity (beyond every stream's distinct blocks): the salted pool's loss
    per split and tenant count, and the T - 1 extra cold misses of the system block's copies
    (one per active tenant, where the unsalted pool holds one)."""
    top = max(r.capacity for r in p.rows)
    out = []
    for r in p.rows:
        if r.capacity == top:
            out.append({"split": r.split, "tenants": r.tenants, "capacity": top,
                        "salted_loss_hits": r.hits["unsalted"] - r.hits["salted"],
                        "system_block_copies_minus_one": p.active[r.split, r.tenants] - 1})
    return out


def price_claims(f: dict[str, Any]) -> dict[str, bool]:
    """What the figures must show (certify refuses a false one): the salted pool never scores
    more than the unsalted one (in this model a salted entry was last used no later than its
    block, so it is never shallower), and beyond every stream's distinct count it loses
    exactly one cold miss per extra copy of the system block."""
    return {
        "salted_never_above_unsalted": all(r["salted_loss_hits"] >= 0 for r in f["table"]),
        "large_capacity_loss_is_the_system_copies": all(
            r["salted_loss_hits"] == r["system_block_copies_minus_one"]
            for r in f["largest_capacity_loss"]),
    }
