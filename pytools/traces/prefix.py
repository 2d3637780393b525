"""Prefix (radix) cache semantics: exact radix-LRU prefix hits at every capacity, in one pass.

Engines (vLLM, SGLang, Mooncake) serve a request only the *leading run* of its cached blocks
and keep the cache closed under prefixes; a request's hits are the tokens of that run. Here a
request is a line's ``hash_ids`` (chained: each id names the whole prefix up to it, so no id
follows two different predecessors; a trace where one does is refused).

**The pass.** Before a request touches anything, each block j has an LRU stack depth ``d_j``
(1 + distinct blocks touched since its last touch; infinite if never touched): the Fenwick
tree quantity of :mod:`.curve`. In a flat LRU cache of capacity k block j is cached iff
``d_j <= k``, so the request's leading run at capacity k is the j with
``M_j = max(d_0..d_j) <= k``; block j's weight goes into a histogram at ``M_j``, and a
cumulative sum gives the hits at every capacity. Then the request's blocks are touched *tail
first* (as vLLM frees them: a leaf is older than its parent).

**What the curve means.** It is the prefix-hit curve of a flat LRU cache over tail-first
touches. Under chained ids and requests without repeated blocks (the pass refuses any other
trace: a request that repeats a block is not chained), that is, at every capacity, radix LRU
that stores a request's missing tail and then evicts the least recently used leaf (proved:
``KVCache.Ceiling.runHits_radixLru_eq_tailFirstLru``, ``Proofs/Ceiling/PrefixLruFlat.lean``).
The trace authors' ``kvcache-simulator`` runs an engine's variant (the least recently used
leaf off the request's cached path goes; a request's missing blocks inserted head first, each
touched): from a capacity of the longest request on it scores the same, checked token for token
at its budgets (``tests/test_ceiling_prefix_kvsim.py``, not proved) and against an independent
radix-tree simulation on random traces (``tests/test_traces_prefix.py``). Below the longest
request that variant may evict a block the request has just inserted (the only leaf off the
request's cached path) and then stop inserting, its parent gone (at capacity 1, a request of two
blocks leaves nothing cached), while the flat cache keeps the request's head blocks: the two
differ there (tested), and the curve there is still the proved model's. (On the shared trace
they agree at the simulator's budgets of 29-238 blocks too, measured, not proved.)

**The kernel.** One loop, O(log n) a reference: a small C function compiled at first use and
loaded with ``ctypes`` (numba's import and cache load cost a process more than the whole pass),
with the same loop under numba as the fallback, tested equal (:mod:`.prefix_kernel`).

**Weights.** ``blocks``: one a block. ``tokens``: a block of a request with ``n`` blocks and
``input_length`` L holds :data:`BLOCK_TOKENS` tokens, the last one ``L - 512 (n - 1)``, which
must lie in (0, 512] (else the line is refused, naming it): the rule of the simulator where
that holds (it also accepts other lines, giving a block past the input 1 token and capping the
last at 512), and it holds on every line of the shared trace.

**Warm-up.** Hits and measured weight count only on requests after the first
``floor(requests * F)`` of them (the simulator's rule); the cache is warm from the first.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np

from .prefix_kernel import prefix_pass
from .trace import (
    MAX_ID,
    Progress,
    ScanSummary,
    TraceError,
    Window,
    _bad_line,
    _HashingReader,
    _lines,
    _open_raw,
    check_unique_keys,
)

#: Tokens of a full block (Mooncake's block size).
BLOCK_TOKENS = 512

#: The weights a prefix curve can count.
WEIGHTS = ("tokens", "blocks")


class _PrefixRequest(msgspec.Struct):
    """The part of a request line the prefix curve needs."""

    hash_ids: list[Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)]]
    input_length: Annotated[int, msgspec.Meta(ge=0)] = -1


# ----------------------------------------------------------------------------- reading


@dataclass(frozen=True, eq=False)
class PrefixTrace:
    """A trace read for the prefix curve: every id in file order, each request's end offset
    in ``ids``, each block's weight, and the file's counts and SHA-256."""

    summary: ScanSummary
    ids: np.ndarray  # int64, every request's hash_ids in order
    ends: np.ndarray  # int64, request r is ids[ends[r-1]:ends[r]]
    weights: np.ndarray  # int64, one a reference
    weight: str
    first_line: int  # the file line of request 0


def block_weights(n: int, input_length: int) -> list[int] | None:
    """The tokens of each of a request's ``n`` blocks (every block :data:`BLOCK_TOKENS`, the
    last ``input_length - 512 (n - 1)``), or ``None`` when that is not in (0, 512]."""
    if n == 0:
        return []
    last = input_length - BLOCK_TOKENS * (n - 1)
    if not 0 < last <= BLOCK_TOKENS:
        return None
    return [BLOCK_TOKENS] * (n - 1) + [last]


def read_prefix_trace(path: Path, weight: str = "tokens", window: Window | None = None,
                      progress: Progress | None = None) -> PrefixTrace:
    """Read, validate and hash ``path`` (or ``window`` of it) for the prefix curve; with
    ``weight="tokens"`` every line needs an ``input_length`` that fits its blocks."""
    if weight not in WEIGHTS:
        raise ValueError(f"unknown weight {weight!r} (expected one of {', '.join(WEIGHTS)})")
    path = Path(path)
    decode = msgspec.json.Decoder(_PrefixRequest).decode
    raw = _open_raw(path)
    reader = _HashingReader(raw)
    ids: array[int] = array("q")
    ends: array[int] = array("q")
    weights: array[int] = array("q")
    first, last = (window.start, window.end) if window else (1, 0)
    lineno = 0
    tokens = weight == "tokens"
    try:
        for lineno, line in enumerate(_lines(path, reader), start=1):  # noqa: B007
            if lineno < first:
                continue
            try:
                req = decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise _bad_line(path, lineno, line, exc) from None
            check_unique_keys(path, lineno, line)
            n = len(req.hash_ids)
            ids.fromlist(req.hash_ids)
            ends.append(len(ids))
            if tokens:
                if req.input_length < 0:
                    raise TraceError(f"{path}:{lineno}: missing 'input_length' (needed by "
                                     "--weight tokens)")
                w = block_weights(n, req.input_length)
                if w is None:
                    raise TraceError(
                        f"{path}:{lineno}: input_length {req.input_length} does not fit "
                        f"{n} blocks of {BLOCK_TOKENS} tokens (the last block must hold "
                        f"1..{BLOCK_TOKENS} tokens)")
                weights.fromlist(w)
            if progress is not None and lineno % 4096 == 0:
                progress(reader.bytes_read)
            if lineno == last:
                break
        reader.drain()
    finally:
        raw.close()
    if progress is not None:
        progress(reader.bytes_read)
    if window is not None and lineno < window.end:
        raise TraceError(f"{path}: window {window.spec} ends past the last line ({lineno})")
    if len(ends) == 0:
        raise TraceError(f"{path}: no requests (empty trace)")
    id_arr = np.frombuffer(ids, dtype=np.int64).copy() if ids else np.zeros(0, np.int64)
    w_arr = (np.frombuffer(weights, dtype=np.int64).copy() if tokens and weights
             else np.ones(id_arr.shape[0], dtype=np.int64))
    summary = ScanSummary(path=path, sha256=reader.digest.hexdigest(), requests=len(ends),
                          references=int(id_arr.shape[0]), lines=lineno, window=window)
    return PrefixTrace(summary, id_arr, np.frombuffer(ends, dtype=np.int64).copy(), w_arr,
                       weight, first)


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True, eq=False)
class PrefixCurve:
    """Exact prefix (radix-LRU) hits at every capacity 1..distinct, weighted, measured on
    the requests after the warm-up; with the flat count of the same cache and both ceilings
    (infinite capacity)."""

    weight: str  # "tokens" or "blocks"
    requests: int
    warmup_requests: int
    references: int
    distinct: int
    measured: int  # weight of every block of the measured requests
    hits: np.ndarray  # int64, entry k - 1: prefix hits at capacity k
    flat_hits: np.ndarray  # int64, the same cache's blocks counted each on its own
    ceiling: int  # prefix hits at infinite capacity (every block of a seen prefix)
    flat_ceiling: int  # flat hits at infinite capacity (every block seen before)
    longest: int  # blocks of the longest request
    kernel: str  # which kernel ran the pass: "c" or "numba" (the same numbers)

    def at(self, capacity: int) -> int:
        """Prefix hits at ``capacity`` blocks (0 stores nothing; past ``distinct`` all fit)."""
        if capacity < 0:
            raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")
        k = min(capacity, self.distinct) - 1
        return int(self.hits[k]) if k >= 0 else 0


def warmup_requests(requests: int, fraction: float) -> int:
    """Requests of the warm-up: ``floor(requests * fraction)``, clamped to 0..requests."""
    if not 0.0 <= fraction <= 1.0 or math.isnan(fraction):
        raise ValueError(f"warm-up fraction must be in [0, 1], got {fraction!r}")
    return max(0, min(requests, math.floor(requests * fraction)))


def prefix_curve_of(trace: PrefixTrace, warmup_fraction: float = 0.0,
                    kernel: str | None = None) -> PrefixCurve:
    """The exact prefix-hit curve of a read trace (see the module's docstring), by the pass
    ``kernel`` names (``c``, ``numba``; default ``$PYTOOLS_PREFIX_KERNEL``, else ``auto``: C
    where it compiles, else numba; :mod:`.prefix_kernel`)."""
    ids = trace.ids
    n = int(ids.shape[0])
    requests = int(trace.ends.shape[0])
    warm = warmup_requests(requests, warmup_fraction)
    if n and int(ids.max()) > max(1 << 24, 8 * n):
        _, ids = np.unique(ids, return_inverse=True)  # sparse ids: remap densely
        ids = ids.astype(np.int64).reshape(-1)
    size = int(ids.max()) + 1 if n else 1
    last = np.full(size, -1, dtype=np.int64)
    pred = np.full(size, -2, dtype=np.int64)
    fen = np.zeros(n + 1, dtype=np.int32)
    hist = np.zeros(n + 2, dtype=np.int64)
    flat_hist = np.zeros(n + 2, dtype=np.int64)
    ran, kernel_pass = prefix_pass(kernel)
    distinct, measured, top, flat_top, bad = kernel_pass(
        ids, trace.ends, trace.weights, warm, last, pred, fen, hist, flat_hist)
    if bad >= 0:
        line = trace.first_line + int(bad)
        raise TraceError(f"{trace.summary.path}:{line}: a block id follows a different "
                         "predecessor than before: prefix semantics need chained ids (each "
                         "id naming its whole prefix)")
    distinct = int(np.count_nonzero(last >= 0))
    lengths = np.diff(trace.ends, prepend=0)
    hits = np.cumsum(hist[1 : distinct + 1])
    flat = np.cumsum(flat_hist[1 : distinct + 1])
    return PrefixCurve(weight=trace.weight, requests=requests, warmup_requests=warm,
                       references=n, distinct=distinct, measured=int(measured), hits=hits,
                       flat_hits=flat, ceiling=int(top), flat_ceiling=int(flat_top),
                       longest=int(lengths.max()) if requests else 0, kernel=ran)


def compute_prefix_curve(path: Path, weight: str = "tokens", warmup_fraction: float = 0.0,
                         window: Window | None = None, progress: Progress | None = None
                         ) -> tuple[ScanSummary, PrefixCurve]:
    """Read ``path`` (or ``window`` of it) and compute its prefix-hit curve."""
    trace = read_prefix_trace(path, weight, window, progress)
    if trace.summary.references == 0:
        raise TraceError(f"{path}: no block references (every request's hash_ids is empty)")
    return trace.summary, prefix_curve_of(trace, warmup_fraction)


def budget_blocks(budget_bytes: float, bytes_per_token: float,
                  block_tokens: int = BLOCK_TOKENS) -> int:
    """Blocks of a byte budget: ``floor(budget / (bytes_per_token * block_tokens))`` (the
    simulator's sizing, ``bytes_per_block = bytes_per_token * block_size``)."""
    if not bytes_per_token > 0 or not budget_bytes >= 0:
        raise ValueError("bytes per token must be positive and the budget non-negative")
    return max(0, math.floor(budget_bytes / (bytes_per_token * block_tokens)))
