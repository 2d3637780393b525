"""Exact LRU and OPT (Belady/MIN) hits at every capacity 1..distinct(r), in one pass.

Both policies are stack algorithms (Mattson, Gecsei, Slutz and Traiger, 1970): for every
reference there is a smallest capacity from which it hits, its *stack distance*, and the
hits at capacity k are the references whose distance is at most k. One pass computes every
distance; a cumulative histogram gives the whole curve.

**LRU.** The distance of a reference to block x whose previous reference was at time p is
1 + the number of distinct blocks referenced since p. A Fenwick tree over time holds a 1 at
the last-reference time of every block seen, so the distance is ``live - prefix(p) + 1``:
O(log n) a reference.

**OPT.** With capacity k a demand-fetch cache holds, between two references p < i to the
same block, that block *and* k - 1 others; so the hits of the best policy at capacity k are
the largest set of reuse intervals (p, i) such that no time point lies strictly inside more
than k - 1 of them. Taking the intervals by increasing right end i and keeping each one that
still fits is optimal (that greedy is Belady's rule), and with m = k - 1 "tracks" it is the
best-fit assignment of intervals to tracks. For every m at once the track end-times form one
sequence ``b[1], b[2], ...`` (level m holds the extra track of capacity m + 1; the multiset
of the first m entries is the state at capacity m + 1), and a reuse interval (p, i):

* hits from capacity ``j + 1`` on, where ``j`` is the first level with ``b[j] <= p`` (a
  track free before p); with no such level a new level is opened;
* then ``b[j] := i - 1``, and the old ``b[j]`` moves down to the next level whose value is
  in ``(b[j], p]``, whose value moves on in turn (a chain of eligible prefix maxima); the
  last one leaves.

So, like LRU, the distance of a reference depends only on the past. Found levels are
searched in value order: the next link of the chain is the *lowest level among values in
(carry, p]*, a range minimum, so the state is an array of track end-times in increasing
order (appended at the end, deleted by tombstone, compacted when full) under a min segment
tree of their levels: O((1 + chain length) log L) a reference, L levels. A reference
repeated at once (p = i - 1) hits at every capacity.

The kernels are compiled with numba (``cache=True``: once per machine); the state is
streamed through in chunks, so memory is O(distinct blocks + levels), not O(references):
the reference stream itself is never stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from .trace import (
    Progress,
    ScanSummary,
    Window,
    read_stream,
    require_references,
    require_regular_file,
    scan_trace,
)

#: "Nothing" in the OPT block minima (an empty block).
_NONE = np.int32(2**31 - 1)


# ----------------------------------------------------------------------------- kernels

#: The OPT level array is summarised per block of 2**_SHIFT levels (a lower bound of the
#: minimum and an upper bound of the maximum end-time), and per superblock of 2**_SSHIFT
#: levels (a lower bound of the minimum): the search for the first free track and the chain
#: skip whole blocks that cannot hold what they look for. Bounds may be stale (looser than
#: exact) without being wrong; a block the chain walks through is summarised exactly again.
_SHIFT = 5
_SSHIFT = 10


@njit(cache=True, nogil=True)
def _find_live(parent: np.ndarray, pos: int) -> int:  # pragma: no cover
    """The last live position <= ``pos`` of the OPT value array (-1: none); union-find with
    path compression over deleted positions, which point left."""
    root = pos
    while root >= 0 and parent[root] != root:
        root = parent[root]
    while pos >= 0 and parent[pos] != pos:
        nxt = parent[pos]
        parent[pos] = root
        pos = nxt
    return root


@njit(cache=True, nogil=True)
def _refresh(b, bmin, bmax, smin, levels, level):  # pragma: no cover
    """Summarise the block of ``level`` and its superblock exactly again."""
    blk = level >> 5
    lo = blk << 5
    hi = min(lo + 32, levels)
    mn = 2**31 - 1
    mx = -1
    for q in range(lo, hi):
        v = b[q]
        if v < mn:
            mn = v
        if v > mx:
            mx = v
    bmin[blk] = mn
    bmax[blk] = mx
    sup = level >> 10
    lo = sup << 5
    hi = min(lo + 32, (levels + 31) >> 5)
    mn = 2**31 - 1
    for q in range(lo, hi):
        if bmin[q] < mn:
            mn = bmin[q]
    smin[sup] = mn


@njit(cache=True, nogil=True)
def _first_at_most(b, bmin, smin, levels, p):  # pragma: no cover
    """The first level whose track end-time is <= ``p`` (``levels`` if none)."""
    nblk = (levels + 31) >> 5
    nsup = (nblk + 31) >> 5
    for sup in range(nsup):
        if smin[sup] <= p:
            for blk in range(sup << 5, min((sup << 5) + 32, nblk)):
                if bmin[blk] <= p:
                    for q in range(blk << 5, min((blk << 5) + 32, levels)):
                        if b[q] <= p:
                            return q
    return levels


@njit(cache=True, nogil=True)
def _chain(b, bmin, bmax, smin, levels, j, carry, stop, p):  # pragma: no cover
    """Move the carried end-time down the levels after ``j``: at each level whose end-time is
    in ``(carry, p]`` the two swap; it ends when the carry is ``stop``, the largest end-time
    <= p (which then leaves the structure)."""
    m = j + 1
    while carry != stop and m < levels:
        blk = m >> 5
        if (m & 31) == 0:
            if bmax[blk] <= carry or bmin[blk] > p:
                # nothing in (carry, p] in this block: skip it and every next one alike
                nblk = (levels + 31) >> 5
                bx = bmax[blk + 1 : nblk]  # views indexed from 0 (no negative indices)
                bn = bmin[blk + 1 : nblk]
                i = 0
                while i < bx.shape[0] and (bx[i] <= carry or bn[i] > p):
                    i += 1
                m = (blk + 1 + i) << 5
                continue
            end = min(m + 32, levels)
            # a view of the block: indices from 0 up, so no negative-index handling
            blkv = b[m:end]
            width = end - m
            if width == 32 and blkv[0] > carry and blkv[31] <= p:
                # every end-time of the block in (carry, p] and rising (the common case on
                # Mooncake-shaped traces: two blocks in three): each one is handed on in
                # turn, so the block shifts down one level, the carry entering first
                falls = 0
                for q in range(31):
                    falls += blkv[q] >= blkv[q + 1]
                if falls == 0:
                    out = blkv[31]
                    for q in range(31, 0, -1):
                        blkv[q] = blkv[q - 1]
                    blkv[0] = carry
                    bmin[blk] = carry
                    bmax[blk] = blkv[31]
                    if carry < smin[m >> 10]:
                        smin[m >> 10] = carry
                    carry = out
                    m = end
                    continue
            mn = 2**31 - 1
            mx = -1
            for q in range(width):  # the same swaps, without branches (w: v if <= p)
                v = blkv[q]
                w = v if v <= p else -1
                blkv[q] = carry if w > carry else v
                carry = w if w > carry else carry
            for q in range(width):
                v = blkv[q]
                mn = v if v < mn else mn
                mx = v if v > mx else mx
            bmin[blk] = mn
            bmax[blk] = mx
            if mn < smin[m >> 10]:
                smin[m >> 10] = mn
            m = end
        else:
            v = b[m]
            if v > carry and v <= p:
                b[m] = carry
                if carry < bmin[blk]:
                    bmin[blk] = carry
                    if carry < smin[m >> 10]:
                        smin[m >> 10] = carry
                carry = v
            m += 1


@njit(cache=True, nogil=True)
def _feed(ids, t0, last, fen, live, lru_hist, b, bmin, bmax, smin, levels, ov, parent, olen,
          opt_hist):  # pragma: no cover
    """Advance both policies over ``ids`` (times ``t0..``); returns ``(live, levels, olen)``.

    LRU: ``last[x]``, time of the last reference to block x (-1: none); ``fen``, Fenwick
    tree (1-based) over times with a 1 at each block's last reference; ``lru_hist[d]``,
    references of LRU distance d. OPT: ``b[level]``, the track end-time of each level, with
    block bounds ``bmin``, ``bmax`` and superblock bound ``smin``; ``ov[0:olen]``, the same
    end-times in increasing order (deleted ones skipped through ``parent``), to find the
    largest end-time <= p, where the chain stops; ``opt_hist[k]``, references hitting from
    capacity k on.
    """
    n_fen = fen.shape[0] - 1
    t = t0
    for idx in range(ids.shape[0]):
        x = ids[idx]
        p = last[x]
        last[x] = t
        if p < 0:
            live += 1
        else:
            # ---- LRU: distinct blocks referenced since p, plus one
            s = 0
            k = p + 1
            while k > 0:
                s += fen[k]
                k &= k - 1
            lru_hist[live - s + 1] += 1
            k = p + 1
            while k <= n_fen:
                fen[k] -= 1
                k += k & -k
            # ---- OPT
            if p == t - 1:
                opt_hist[1] += 1
            else:
                lo = 0
                hi = olen
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if ov[mid] <= p:
                        lo = mid + 1
                    else:
                        hi = mid
                top = _find_live(parent, lo - 1)
                if top < 0:
                    # no track is free before p: open a level
                    j = levels
                    levels += 1
                    b[j] = t - 1
                    _refresh(b, bmin, bmax, smin, levels, j)
                else:
                    stop = ov[top]
                    parent[top] = top - 1
                    j = _first_at_most(b, bmin, smin, levels, p)
                    carry = b[j]
                    b[j] = t - 1
                    _chain(b, bmin, bmax, smin, levels, j, carry, stop, p)
                    _refresh(b, bmin, bmax, smin, levels, j)
                ov[olen] = t - 1
                parent[olen] = olen
                olen += 1
                opt_hist[j + 2] += 1
        k = t + 1
        while k <= n_fen:
            fen[k] += 1
            k += k & -k
        t += 1
    return live, levels, olen


@njit(cache=True, nogil=True)
def _fenwick_build(fen: np.ndarray) -> None:  # pragma: no cover
    """Turn an array of 0/1 marks (1-based) into a Fenwick tree, in place, O(n)."""
    n = fen.shape[0] - 1
    for i in range(1, n + 1):
        j = i + (i & -i)
        if j <= n:
            fen[j] += fen[i]


# ----------------------------------------------------------------------------- engine


class SparseIds(ValueError):
    """Block ids too large to index an array by (the caller remaps them densely first)."""


def _grown(arr: np.ndarray, need: int, fill: int) -> np.ndarray:
    """``arr`` with at least ``need`` entries: grown in place (``realloc``, which moves large
    blocks by remapping pages, not by holding two copies) to ``need`` plus an eighth, the new
    entries set to ``fill``. The small slack keeps the state, which is what the memory budget
    of the curve is made of, close to its size and still amortises the regrowths. Only the
    engine holds these arrays (``refcheck=False`` relies on that)."""
    old = arr.shape[0]
    if old >= need:
        return arr
    arr.resize(need + need // 8, refcheck=False)
    arr[old:] = fill
    return arr


class CurveEngine:
    """Streaming LRU and OPT stack distances: :meth:`feed` chunks of block ids in order, then
    :meth:`finish` gives the hits at every capacity. Memory grows with the number of distinct
    blocks and of OPT levels, and with the time-indexed Fenwick tree (4 bytes a reference);
    the references themselves are not kept.

    ``expected_refs`` sizes the Fenwick tree up front (it grows by half again when a stream
    runs past it); ``opt_slots`` is the first size of the OPT value array (compacted or grown
    when full; small values exercise that path in tests).
    """

    def __init__(self, expected_refs: int = 1 << 16, opt_slots: int = 1 << 12) -> None:
        self.time = 0
        self.live = 0
        self.last = np.full(1 << 12, -1, dtype=np.int32)
        self.fen = np.zeros(max(expected_refs, 1) + 1, dtype=np.int32)
        self.lru_hist = np.zeros(1 << 12, dtype=np.int32)
        self.opt_hist = np.zeros(1 << 12, dtype=np.int32)
        self.levels = 0
        self.b = np.zeros(1 << 12, dtype=np.int32)
        self.bmin = np.full(1 << 7, _NONE, dtype=np.int32)
        self.bmax = np.full(1 << 7, -1, dtype=np.int32)
        self.smin = np.full(1 << 2, _NONE, dtype=np.int32)
        self.olen = 0
        self.ov = np.zeros(max(opt_slots, 1), dtype=np.int32)
        self.parent = np.zeros(max(opt_slots, 1), dtype=np.int32)

    def feed(self, ids: np.ndarray) -> None:
        """Advance over the next references (non-negative ids, dense enough to index)."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)  # one compiled signature
        n = int(ids.shape[0])
        if n == 0:
            return
        if self.time + n >= 2**31 - 2:
            raise ValueError("more than 2^31 - 2 references: beyond this engine's int32 state")
        top = int(ids.max())
        if top > max(2**24, 8 * (self.time + n)):
            raise SparseIds(top)
        if top >= self.last.shape[0]:
            self.last = _grown(self.last, top + 1, -1)
        self.lru_hist = _grown(self.lru_hist, self.live + n + 2, 0)
        self.opt_hist = _grown(self.opt_hist, self.levels + n + 2, 0)
        need = self.levels + n + 1
        self.b = _grown(self.b, need, 0)
        self.bmin = _grown(self.bmin, (need >> _SHIFT) + 1, int(_NONE))
        self.bmax = _grown(self.bmax, (need >> _SHIFT) + 1, -1)
        self.smin = _grown(self.smin, (need >> _SSHIFT) + 1, int(_NONE))
        if self.time + n + 1 > self.fen.shape[0]:
            self._grow_fenwick(self.time + n + 1)
        if self.olen + n > self.ov.shape[0]:
            self._compact_opt(n)
        self.live, self.levels, self.olen = _feed(
            ids, self.time, self.last, self.fen, self.live, self.lru_hist, self.b, self.bmin,
            self.bmax, self.smin, self.levels, self.ov, self.parent, self.olen, self.opt_hist)
        self.time += n

    def _grow_fenwick(self, need: int) -> None:
        size = need + need // 8
        self.fen = None  # type: ignore[assignment]  (free the old tree before the new one)
        fen = np.zeros(size + 1, dtype=np.int32)
        seen = self.last[self.last >= 0]
        seen += 1
        fen[seen] = 1
        del seen
        _fenwick_build(fen)
        self.fen = fen

    def _compact_opt(self, n: int) -> None:
        """The live OPT end-times are exactly ``b[0:levels]``: sort them into a fresh array."""
        live = np.sort(self.b[: self.levels])
        size = max(2 * (self.levels + n), self.ov.shape[0])
        self.ov = np.zeros(size, dtype=np.int32)
        self.ov[: self.levels] = live
        self.parent = np.arange(size, dtype=np.int32)
        self.olen = self.levels

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lru, opt)``: hits at capacities 1..distinct (entry k - 1 for capacity k), int32
        (hits never exceed the 2^31 - 2 references the engine takes). Ends the engine: its
        state is released first, and the LRU histogram becomes the cumulative counts in
        place."""
        d = self.live
        self.fen = self.last = self.b = self.ov = self.parent = None  # type: ignore[assignment]
        lru = self.lru_hist[1 : d + 1]
        np.cumsum(lru, out=lru)
        # OPT distances never exceed levels + 1 (<= distinct): past that, every reuse hits
        top = min(self.levels + 1, d)
        opt = np.empty(d, dtype=np.int32)
        np.cumsum(self.opt_hist[1 : top + 1], out=opt[:top])
        opt[top:] = opt[top - 1] if top else 0
        self.opt_hist = None  # type: ignore[assignment]
        return lru, opt


def stack_hits(chunks: Iterable[np.ndarray], opt_slots: int = 1 << 12,
               expected_refs: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """LRU and OPT hits at every capacity 1..distinct of the concatenated ``chunks``."""
    engine = CurveEngine(expected_refs, opt_slots)
    for chunk in chunks:
        engine.feed(chunk)
    return engine.finish()


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True, eq=False)
class Curve:
    """Exact LRU and OPT hits of a stream at every capacity 1..distinct."""

    references: int
    distinct: int
    lru_hits: np.ndarray  # entry k - 1: hits at capacity k
    opt_hits: np.ndarray

    def at(self, capacity: int) -> tuple[int, int]:
        """``(lru hits, opt hits)`` at ``capacity`` (every block fits past ``distinct``; a
        cache of capacity 0 stores nothing and hits never)."""
        if capacity < 0:
            raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")
        k = min(capacity, self.distinct) - 1
        if k < 0:
            return 0, 0
        return int(self.lru_hits[k]), int(self.opt_hits[k])


def _expected_refs(path: Path) -> int:
    """A first size for the Fenwick tree: the file's size over the bytes a reference takes in
    four samples of its lines (start, a quarter, half, three quarters), plus a twentieth; a
    wrong guess only costs a regrowth or unused slots. Gzip files: 2 bytes a reference."""
    refs = used = 0
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            if handle.read(2) == b"\x1f\x8b":
                return max(1 << 16, size // 2)
            for quarter in range(4):
                handle.seek(size * quarter // 4)
                lines = handle.read(1 << 16).split(b"\n")[1:-1]
                for line in lines:
                    at = line.find(b"hash_ids")
                    if at >= 0:
                        refs += line.count(b",", at) + 1
                        used += len(line) + 1
    except OSError:
        return 1 << 16
    if refs == 0 or used == 0:
        return max(1 << 16, size // 8)
    return max(1 << 16, int(size * refs / used * 1.05))


def compute_curve(path: Path, window: Window | None = None,
                  progress: Progress | None = None) -> tuple[ScanSummary, Curve]:
    """Exact LRU and OPT hits at every capacity of the trace at ``path`` (or of ``window``),
    streaming the file once; ids too sparse to index an array by are remapped densely first
    (reading the whole stream into memory: 8 bytes a reference more)."""
    path = Path(path)
    require_regular_file(path)  # before sampling it: a pipe cannot be sampled, nor re-read
    engine = CurveEngine(_expected_refs(path) if window is None else 1 << 16)
    try:
        summary = scan_trace(path, engine.feed, window, progress)
    except SparseIds:
        stream = read_stream(path, window, progress)
        summary = stream.summary
        _, dense = np.unique(stream.ids, return_inverse=True)
        del stream
        engine = CurveEngine(summary.references + 1)
        for start in range(0, dense.shape[0], 1 << 16):
            engine.feed(dense[start : start + (1 << 16)])
        del dense
    require_references(summary)
    lru, opt = engine.finish()
    curve = Curve(references=summary.references, distinct=int(lru.shape[0]),
                  lru_hits=lru, opt_hits=opt)
    return summary, curve
