"""Executable reference of the partitioned block pool proved in ``Proofs/Leak/Partition.lean``.

One physical pool of ``C`` slots shared by ``T`` tenants, split by a quota vector ``q`` with
``sum(q) <= C``. This module is the Lean step, function for function, so that an engine's pool
(the vLLM plugin) can be driven against it with the same events and compared verdict by verdict
and cache content by cache content. Same state, same events, same observations; where Lean
leaves a choice to the definition, this reference makes the same one (the lowest free slot).

Lean definition -> Python:

==========================  =====================================================
``Blk``                     :class:`Blk` (``id``, ``hash``, ``refs``; ``refs == 0``: cached)
``Part``                    :class:`Part` (``blocks``, ``running``, ``next``)
``State``                   :class:`State` (``slots``: ``None`` or tenant; ``parts``)
``Event.submit``/``finish`` :class:`Submit` / :class:`Finish`
``Verdict``, ``Seen``       :data:`ADMITTED`, :data:`REFUSED`, :data:`FINISHED`, :class:`Seen`
``served``                  :func:`served`
``touch``, ``touchAll``     :func:`touch`, :func:`touch_all`
``alloc``                   :func:`alloc`
``submitPart``              :func:`submit_part`
``release``, ``releaseAll`` :func:`release`, :func:`release_all`
``finishPart``              :func:`finish_part`
``quotaSum``                :func:`quota_sum`
``init``                    :func:`init`
``used``, ``usedSum``       :func:`used`, :func:`used_sum`
``room``                    :func:`room`
``takeSlots``               :func:`take_slots`
``step``                    :func:`step`
``after``, ``views``        :func:`after`, :func:`views`
``mine``                    :func:`mine`
``Inv``                     :func:`invariant_problems` (empty list: the invariant holds)
``sharedStep``              :func:`shared_step`
``sharedViews``             :func:`shared_views`
==========================  =====================================================

Everything is immutable (frozen dataclasses, tuples): a step returns a new state. The design's
rules, as in the Lean module: a submitted request is served the longest leading run of its
hashes found among its tenant's own blocks (held or cached) and takes a reference on each; each
missing block takes a free slot while the tenant is under its quota, else evicts the tenant's own
least recently used unheld block (the first unheld block of its list), else the request is
refused and nothing changes. A finished request releases its blocks tail first; a block no
request holds any more moves to the end of its tenant's list (most recently used).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

ADMITTED = "admitted"
REFUSED = "refused"
FINISHED = "finished"


@dataclass(frozen=True)
class Blk:
    """A physical block of a tenant's partition (Lean ``Blk``)."""

    id: int  #: tenant-local block number (not a slot)
    hash: Hashable  #: content hash (vLLM's chained block hash under the tenant's salt)
    refs: int  #: running requests holding it; 0 means cached and evictable

    @property
    def unheld(self) -> bool:
        """Lean ``Blk.unheld``: cached and evictable."""
        return self.refs == 0


@dataclass(frozen=True)
class Part:
    """One partition (Lean ``Part``): blocks (unheld ones in freeing order, first = LRU), the
    running requests with the numbers of the blocks each holds, the next block number."""

    blocks: tuple[Blk, ...] = ()
    running: tuple[tuple[Any, tuple[int, ...]], ...] = ()
    next: int = 0


@dataclass(frozen=True)
class State:
    """The pool (Lean ``State``): each slot ``None`` (free) or the tenant it is charged to, and
    each tenant's partition (``parts[t]``, Lean ``part t``)."""

    slots: tuple[int | None, ...]
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Submit:
    """Lean ``Event.submit t r hs``: tenant ``tenant`` submits request ``request`` whose
    prompt's full blocks have the hashes ``hashes``."""

    tenant: int
    request: int
    hashes: tuple[Hashable, ...]


@dataclass(frozen=True)
class Finish:
    """Lean ``Event.finish t r``: tenant ``tenant``'s request ``request`` finishes."""

    tenant: int
    request: int


Event = Submit | Finish


@dataclass(frozen=True)
class Seen:
    """What a tenant observes of one of its events (Lean ``Seen``)."""

    verdict: str  #: ADMITTED, REFUSED or FINISHED
    hits: int  #: leading blocks served from cache


StepFn = Callable[[Sequence[int], State, Event], tuple[State, Seen]]

# --- one partition's operations -------------------------------------------------------------


def served(blocks: Sequence[Blk], hashes: Sequence[Hashable]) -> int:
    """Lean ``served``: how many leading hashes are found among ``blocks`` (held or cached)."""
    present = {b.hash for b in blocks}
    count = 0
    for h in hashes:
        if h not in present:
            break
        count += 1
    return count


def touch(h: Hashable, blocks: tuple[Blk, ...]) -> tuple[tuple[Blk, ...], int]:
    """Lean ``touch``: take a reference on the first block with hash ``h``; the blocks
    afterwards and its number (0 when there is none, as in Lean)."""
    for k, b in enumerate(blocks):
        if b.hash == h:
            return blocks[:k] + (replace(b, refs=b.refs + 1),) + blocks[k + 1:], b.id
    return blocks, 0


def touch_all(hashes: Sequence[Hashable],
              blocks: tuple[Blk, ...]) -> tuple[tuple[Blk, ...], tuple[int, ...]]:
    """Lean ``touchAll``: :func:`touch` each hash in order; the blocks and their numbers."""
    ids = []
    for h in hashes:
        blocks, i = touch(h, blocks)
        ids.append(i)
    return blocks, tuple(ids)


def alloc(room: int, i: int, blocks: tuple[Blk, ...],
          hashes: Sequence[Hashable]) -> tuple[tuple[Blk, ...], int] | None:
    """Lean ``alloc``: a new block numbered ``i``, ``i + 1``, ... for each hash: in a free slot
    while ``room`` allows, else in place of the first unheld block (evicted); ``None`` when
    neither is possible. Returns the blocks afterwards and the room left."""
    for h in hashes:
        new = Blk(i, h, 1)
        if room > 0:
            room -= 1
            blocks = blocks + (new,)
        else:
            victim = next((k for k, b in enumerate(blocks) if b.unheld), None)
            if victim is None:
                return None
            blocks = blocks[:victim] + blocks[victim + 1:] + (new,)
        i += 1
    return blocks, room


def submit_part(room: int, part: Part, request: Any,
                hashes: Sequence[Hashable]) -> tuple[Part, int] | None:
    """Lean ``submitPart``: ``None`` if refused, else the partition afterwards and the number
    of free slots taken."""
    k = served(part.blocks, hashes)
    touched, hit_ids = touch_all(hashes[:k], part.blocks)
    missing = len(hashes) - k
    placed = alloc(room, part.next, touched, hashes[k:])
    if placed is None:
        return None
    blocks, left = placed
    held = hit_ids + tuple(range(part.next, part.next + missing))
    return Part(blocks, ((request, held),) + part.running, part.next + missing), room - left


def release(i: int, blocks: tuple[Blk, ...]) -> tuple[Blk, ...]:
    """Lean ``release``: one reference less on block ``i``; a block no request holds any more
    moves to the end (most recently used)."""
    for k, b in enumerate(blocks):
        if b.id == i:
            if b.refs <= 1:
                return blocks[:k] + blocks[k + 1:] + (replace(b, refs=0),)
            return blocks[:k] + (replace(b, refs=b.refs - 1),) + blocks[k + 1:]
    return blocks


def release_all(ids: Sequence[int], blocks: tuple[Blk, ...]) -> tuple[Blk, ...]:
    """Lean ``releaseAll``: :func:`release` each number in order."""
    for i in ids:
        blocks = release(i, blocks)
    return blocks


def finish_part(part: Part, request: Any) -> Part:
    """Lean ``finishPart``: the request's blocks released tail first; it stops running. A
    request that is not running changes nothing."""
    for k, (r, ids) in enumerate(part.running):
        if r == request:
            return Part(release_all(tuple(reversed(ids)), part.blocks),
                        part.running[:k] + part.running[k + 1:], part.next)
    return part


# --- the partitioned pool ---------------------------------------------------------------------


def quota_sum(q: Sequence[int]) -> int:
    """Lean ``quotaSum``."""
    return sum(q)


def init(tenants: int, capacity: int) -> State:
    """Lean ``init T C``: ``capacity`` free slots, every partition empty."""
    return State((None,) * capacity, (Part(),) * tenants)


def used(s: State, u: int) -> int:
    """Lean ``used``: tenant ``u``'s blocks (held or cached)."""
    return len(s.parts[u].blocks)


def used_sum(s: State) -> int:
    """Lean ``usedSum``."""
    return sum(used(s, u) for u in range(len(s.parts)))


def room(q: Sequence[int], s: State, t: int) -> int:
    """Lean ``room``: free slots tenant ``t`` may take: up to its quota, no more than free."""
    return min(max(q[t] - used(s, t), 0), s.slots.count(None))


def take_slots(t: int, n: int, slots: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """Lean ``takeSlots``: charge the first (lowest) ``n`` free slots to tenant ``t``."""
    out = list(slots)
    for k, v in enumerate(out):
        if n == 0:
            break
        if v is None:
            out[k] = t
            n -= 1
    return tuple(out)


def _set_part(s: State, t: int, p: Part) -> tuple[Part, ...]:
    return s.parts[:t] + (p,) + s.parts[t + 1:]


def step(q: Sequence[int], s: State, e: Event) -> tuple[State, Seen]:
    """Lean ``step q s e``: the partitioned pool's state after ``e`` and what its tenant sees."""
    t = e.tenant
    if isinstance(e, Finish):
        return State(s.slots, _set_part(s, t, finish_part(s.parts[t], e.request))), \
            Seen(FINISHED, 0)
    result = submit_part(room(q, s, t), s.parts[t], e.request, e.hashes)
    if result is None:
        return s, Seen(REFUSED, 0)
    p, n = result
    return (State(take_slots(t, n, s.slots), _set_part(s, t, p)),
            Seen(ADMITTED, served(s.parts[t].blocks, e.hashes)))


def after(q: Sequence[int], s: State, events: Sequence[Event], step_fn: StepFn = step) -> State:
    """Lean ``after``: the state after ``events`` (oldest first); ``step_fn`` defaults to the
    design's :func:`step` (a test may pass a variant)."""
    for e in events:
        s, _ = step_fn(q, s, e)
    return s


def views(q: Sequence[int], t: int, s: State, events: Sequence[Event],
          step_fn: StepFn = step) -> list[Seen]:
    """Lean ``views``: tenant ``t``'s observations of its events in ``events`` from ``s``."""
    out = []
    for e in events:
        s, seen = step_fn(q, s, e)
        if e.tenant == t:
            out.append(seen)
    return out


def mine(t: int, events: Sequence[Event]) -> list[Event]:
    """Lean ``mine``: tenant ``t``'s events, in order."""
    return [e for e in events if e.tenant == t]


def invariant_problems(q: Sequence[int], capacity: int, s: State) -> list[str]:
    """Lean ``Inv``, checked: each violated field, in words (empty: the invariant holds)."""
    problems = []
    if len(s.slots) != capacity:
        problems.append(f"the pool has {len(s.slots)} slots, not {capacity}")
    if s.slots.count(None) + used_sum(s) != capacity:
        problems.append(f"free slots {s.slots.count(None)} + blocks {used_sum(s)} != {capacity}")
    for u in range(len(s.parts)):
        if s.slots.count(u) != used(s, u):
            problems.append(f"tenant {u}: {s.slots.count(u)} slots charged, {used(s, u)} blocks")
        if used(s, u) > q[u]:
            problems.append(f"tenant {u}: {used(s, u)} blocks over its quota {q[u]}")
    return problems


def cached_hashes(s: State, t: int) -> list[Hashable]:
    """Tenant ``t``'s cached (unheld) blocks' hashes, least recently used first: the order in
    which the design would evict them (what a differential test compares with an engine's
    free queue restricted to ``t``)."""
    return [b.hash for b in s.parts[t].blocks if b.unheld]


def held_hashes(s: State, t: int) -> list[Hashable]:
    """Tenant ``t``'s held blocks' hashes, in the partition's order."""
    return [b.hash for b in s.parts[t].blocks if not b.unheld]


# --- the shared pool --------------------------------------------------------------------------


def shared_step(capacity: int, p: Part, e: Event) -> tuple[Part, Seen]:
    """Lean ``sharedStep C p e``: one partition for all tenants, blocks keyed by (tenant, hash),
    requests by (tenant, request); a free slot while any is free, else the globally least
    recently used unheld block is evicted, else refused."""
    if isinstance(e, Finish):
        return finish_part(p, (e.tenant, e.request)), Seen(FINISHED, 0)
    keyed = tuple((e.tenant, h) for h in e.hashes)
    result = submit_part(max(capacity - len(p.blocks), 0), p, (e.tenant, e.request), keyed)
    if result is None:
        return p, Seen(REFUSED, 0)
    return result[0], Seen(ADMITTED, served(p.blocks, keyed))


def shared_views(capacity: int, t: int, events: Sequence[Event],
                 p: Part | None = None) -> list[Seen]:
    """Lean ``sharedViews C t p es`` (from the empty pool when ``p`` is None)."""
    p = Part() if p is None else p
    out = []
    for e in events:
        p, seen = shared_step(capacity, p, e)
        if e.tenant == t:
            out.append(seen)
    return out
