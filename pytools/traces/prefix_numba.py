"""The prefix pass as a numba kernel: the fallback of :mod:`.prefix_kernel` (where no C
compiler is), and the reference its C kernel is tested equal to. Importing this module imports
numba (about half a second of a process).

Before a request touches anything, each block has its LRU stack depth (a Fenwick tree over
touch times, as in :mod:`.curve`); the depth of the request's leading run so far is the
capacity from which the block hits (see :mod:`.prefix`); then the request's blocks are touched
tail first.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def prefix_pass(ids, ends, weights, warm, last, pred, fen, hist, flat_hist):  # pragma: no cover
    """One pass over every request; returns ``(distinct, measured, prefix_ceiling,
    flat_ceiling, bad)``: ``bad`` is the index of the first request whose id follows a
    different predecessor than before (-1: none). ``hist[d]``/``flat_hist[d]``: measured
    weight of the blocks that hit from capacity d on, in the prefix / flat count."""
    n_fen = fen.shape[0] - 1
    live = 0
    t = 0
    measured = 0
    top = 0
    flat_top = 0
    start = 0
    for r in range(ends.shape[0]):
        end = ends[r]
        count = r >= warm
        prev = -1
        run = 0  # max depth of the leading run so far (0: no block yet)
        alive = True
        for j in range(start, end):
            x = ids[j]
            if pred[x] == -2:
                pred[x] = prev
            elif pred[x] != prev:
                return live, measured, top, flat_top, r
            prev = x
            if not count:
                continue
            w = weights[j]
            measured += w
            p = last[x]
            if p < 0:
                alive = False
                continue
            s = 0
            k = p + 1
            while k > 0:
                s += fen[k]
                k &= k - 1
            d = live - s + 1
            flat_hist[d] += w
            flat_top += w
            if alive:
                if d > run:
                    run = d
                hist[run] += w
                top += w
        for j in range(end - 1, start - 1, -1):  # touch tail first
            x = ids[j]
            p = last[x]
            if p < 0:
                live += 1
            else:
                k = p + 1
                while k <= n_fen:
                    fen[k] -= 1
                    k += k & -k
            last[x] = t
            k = t + 1
            while k <= n_fen:
                fen[k] += 1
                k += k & -k
            t += 1
        start = end
    return live, measured, top, flat_top, -1
