"""Per-host LRU lists over flat tables, the numba kernels' shared list operations.

``hosts`` doubly-linked LRU lists share one set of tables indexed by *slot*: a host's block
``b`` is slot ``h * blocks + b`` (one host: the slot is the block). ``present[slot]``: the slot
is in its host's list; ``prev``/``nxt``: its neighbours (-1: none); ``head[h]``/``tail[h]``:
host ``h``'s most and least recently used slots (-1: empty list); ``size[h]``: its length.
:func:`lru_touch` is one LRU access; :func:`kv_aware_host` is the KV-aware router's choice over
such lists (the rule :data:`.routing.KV_AWARE_RULE` states). Callers: the flat per-host LRU
kernel of :mod:`.routing` and the prefix kernels of :mod:`.routing_prefix`.

Each is inlined into its callers at numba's IR level (``inline="always"``): left as calls
(one per block access) they made the whole-trace routing sweeps about 1.2x (flat) and 1.5x
(prefix) slower. numba caches a compiled kernel with what it inlined, keyed by the contents
of the kernel's own file only, so an edit here alone would leave the callers' cached kernels
running the old list code. Each caller therefore records this file's SHA-256
(``LRU_LISTS_SHA256``); tests/test_placement_routing.py fails until the records are updated,
and updating them changes the callers' files, hence their cache keys.
"""

from __future__ import annotations

import numpy as np
from numba import njit

HIT = -1  # lru_touch: the slot was in the list (moved to the front)
STORED = -2  # lru_touch: a miss, stored with room to spare
DROPPED = -3  # lru_touch: a miss at capacity 0, nothing stored


@njit(cache=True, nogil=True, inline="always")
def lru_tables(hosts, blocks):  # pragma: no cover
    """Empty lists for ``hosts`` hosts of ``blocks`` slots each: ``present, prev, nxt, head,
    tail, size`` (slots below 2**31: the callers check)."""
    n = hosts * blocks
    present = np.zeros(n, dtype=np.bool_)
    prev = np.empty(n, dtype=np.int32)
    nxt = np.empty(n, dtype=np.int32)
    head = np.full(hosts, -1, dtype=np.int32)
    tail = np.full(hosts, -1, dtype=np.int32)
    size = np.zeros(hosts, dtype=np.int64)
    return present, prev, nxt, head, tail, size


@njit(cache=True, nogil=True, inline="always")
def move_to_front(slot, h, prev, nxt, head, tail):  # pragma: no cover
    """Move ``slot``, in host ``h``'s list, to its front."""
    first = head[h]
    if first == slot:
        return
    p = prev[slot]
    n = nxt[slot]
    nxt[p] = n
    if n >= 0:
        prev[n] = p
    else:
        tail[h] = p
    prev[slot] = -1
    nxt[slot] = first
    prev[first] = slot
    head[h] = slot


@njit(cache=True, nogil=True, inline="always")
def evict_tail(h, present, prev, nxt, head, tail, size):  # pragma: no cover
    """Remove host ``h``'s least recently used slot (the list is not empty); returns it."""
    victim = tail[h]
    present[victim] = False
    p = prev[victim]
    tail[h] = p
    if p >= 0:
        nxt[p] = -1
    else:
        head[h] = -1
    size[h] -= 1
    return victim


@njit(cache=True, nogil=True, inline="always")
def push_front(slot, h, present, prev, nxt, head, tail, size):  # pragma: no cover
    """Put ``slot`` (not in the list) at the front of host ``h``'s list."""
    present[slot] = True
    prev[slot] = -1
    nxt[slot] = head[h]
    if head[h] >= 0:
        prev[head[h]] = slot
    else:
        tail[h] = slot
    head[h] = slot
    size[h] += 1


@njit(cache=True, nogil=True, inline="always")
def lru_touch(slot, h, cap, present, prev, nxt, head, tail, size):  # pragma: no cover
    """Host ``h``'s LRU list of ``cap`` slots touches ``slot``: moved to the front on a hit
    (``HIT``); on a miss stored at the front, the least recently used slot evicted first when
    full (that slot returned) or not (``STORED``); capacity 0 stores nothing (``DROPPED``)."""
    if present[slot]:
        move_to_front(slot, h, prev, nxt, head, tail)
        return HIT
    if cap == 0:
        return DROPPED
    victim = STORED
    if size[h] >= cap:
        victim = evict_tail(h, present, prev, nxt, head, tail, size)
    push_front(slot, h, present, prev, nxt, head, tail, size)
    return victim


@njit(cache=True, nogil=True, inline="always")
def leading_run(present, base, ids, lo, hi):  # pragma: no cover
    """How many of ``ids[lo:hi]``, from the first, are present at ``base + id`` before the
    first absent one."""
    run = 0
    for k in range(lo, hi):
        if present[base + ids[k]]:
            run += 1
        else:
            break
    return run


@njit(cache=True, nogil=True, inline="always")
def kv_aware_host(present, load, ids, lo, hi, r, hosts, blocks, slack_percent
                  ):  # pragma: no cover
    """The KV-aware router's host for request ``r`` (``ids[lo:hi]``): among hosts whose
    ``load`` (requests so far) is at most (1 + slack) x the mean, the one whose list holds the
    longest leading run of the request, ties to the least load, then the lowest index."""
    best = -1
    best_run = -1
    for h in range(hosts):
        # eligible: load <= (1 + slack) * mean, in integers
        if load[h] * hosts * 100 > (100 + slack_percent) * r:
            continue
        run = leading_run(present, h * blocks, ids, lo, hi)
        if run > best_run or (run == best_run and load[h] < load[best]):
            best = h
            best_run = run
    return best
