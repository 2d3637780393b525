"""The Python reference of the partitioned pool (pytools/results/leak/partition.py): it keeps the
invariant and is noninterferent on random histories, as Proofs/Leak/Partition.lean proves of the
Lean step; a planted defect (eviction across partitions) fails both checks that it claims to
pass; the shared pool interferes on the Lean witnesses, with the same observations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pytools.results.leak import partition as P
from pytools.results.leak.partition import (
    ADMITTED,
    FINISHED,
    REFUSED,
    Event,
    Finish,
    Seen,
    State,
    Submit,
)
from pytools.results.leak.partition_cases import CASES_LEAN, render

TENANTS = 3


@st.composite
def pools(draw: st.DrawFn) -> tuple[int, tuple[int, ...]]:
    """A capacity and a quota vector with sum(q) <= C (some slots may stay unassigned)."""
    q = tuple(draw(st.integers(0, 3)) for _ in range(TENANTS))
    spare = draw(st.integers(0, 2))
    return sum(q) + spare, q


def events(tenants: Sequence[int]) -> st.SearchStrategy[Event]:
    """Submits (hashes from a small alphabet, so hits, sharing and duplicates happen) and
    finishes (of running requests or not), from the given tenants."""
    tenant = st.sampled_from(list(tenants))
    request = st.integers(0, 3)
    submit = st.builds(Submit, tenant, request,
                       st.lists(st.integers(0, 4), max_size=4).map(tuple))
    finish = st.builds(Finish, tenant, request)
    return st.one_of(submit, submit, finish)


histories = st.lists(events(range(TENANTS)), max_size=20)
FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def check_invariant(step_fn: P.StepFn, capacity: int, q: tuple[int, ...],
                    history: list[Event]) -> None:
    """Every state reached from the empty pool keeps the Lean ``Inv``."""
    s = P.init(TENANTS, capacity)
    for e in history:
        s, _ = step_fn(q, s, e)
        assert P.invariant_problems(q, capacity, s) == [], (e, s)


def check_noninterference(step_fn: P.StepFn, capacity: int, q: tuple[int, ...], t: int,
                          history: list[Event], other: list[Event]) -> None:
    """Tenant ``t`` observes the same over ``history`` as over its own events alone, and as
    over its own events interleaved with ``other`` (other tenants' events) instead."""
    own = P.mine(t, history)
    alone = P.views(q, t, P.init(TENANTS, capacity), own, step_fn)
    assert P.views(q, t, P.init(TENANTS, capacity), history, step_fn) == alone
    rest = [e for e in other if e.tenant != t]
    mixed: list[Event] = [] if own else rest
    for k, e in enumerate(own):
        mixed.extend(rest[k::len(own)][:2])
        mixed.append(e)
    assert P.mine(t, mixed) == own
    assert P.views(q, t, P.init(TENANTS, capacity), mixed, step_fn) == alone


@FAST
@given(pools(), histories)
def test_reference_keeps_the_invariant(pool: tuple[int, tuple[int, ...]],
                                       history: list[Event]) -> None:
    capacity, q = pool
    check_invariant(P.step, capacity, q, history)


@FAST
@given(pools(), st.integers(0, TENANTS - 1), histories, histories)
def test_reference_is_noninterferent(pool: tuple[int, tuple[int, ...]], t: int,
                                     history: list[Event], other: list[Event]) -> None:
    capacity, q = pool
    check_noninterference(P.step, capacity, q, t, history, other)


def leaky_step(q: Sequence[int], s: State, e: Event) -> tuple[State, Seen]:
    """Planted defect: eviction allowed across partitions. A submit the design refuses takes
    another tenant's least recently used unheld block instead (the slot is charged to the
    requester) and is retried."""
    s2, seen = P.step(q, s, e)
    if seen.verdict != REFUSED or not isinstance(e, Submit):
        return s2, seen
    for u, part in enumerate(s.parts):
        victim = next((b for b in part.blocks if u != e.tenant and b.unheld), None)
        if victim is None:
            continue
        blocks = tuple(b for b in part.blocks if b is not victim)
        slot = s.slots.index(u)
        parts = s.parts[:u] + (replace(part, blocks=blocks),) + s.parts[u + 1:]
        slots = s.slots[:slot] + (None,) + s.slots[slot + 1:]
        stolen = State(slots, parts)
        bigger = [n + (1 if k == e.tenant else 0) for k, n in enumerate(q)]
        s3, seen3 = P.step(bigger, stolen, e)
        if seen3.verdict == ADMITTED:
            return s3, seen3
    return s2, seen


def test_planted_defect_cross_partition_eviction_fails_noninterference() -> None:
    @settings(FAST, phases=(Phase.generate,))  # the first failure is enough: no shrinking
    @given(pools(), st.integers(0, TENANTS - 1), histories, histories)
    def run(pool: tuple[int, tuple[int, ...]], t: int, history: list[Event],
            other: list[Event]) -> None:
        capacity, q = pool
        check_noninterference(leaky_step, capacity, q, t, history, other)

    with pytest.raises(AssertionError):
        run()


def test_planted_defect_is_seen_on_a_fixed_history() -> None:
    """The defect, by hand: tenant 0 caches block 5 in its one slot; tenant 1 (quota 1, already
    holding a running block) steals it; tenant 0's probe is then refused, where alone it hits."""
    q, capacity = (1, 1), 2
    history: list[Event] = [Submit(0, 0, (5,)), Finish(0, 0), Submit(1, 0, (1,)),
                            Submit(1, 1, (2,)), Submit(0, 1, (5,))]
    s = P.init(2, capacity)
    probe = P.views(q, 0, s, history)
    assert probe == [Seen(ADMITTED, 0), Seen(FINISHED, 0), Seen(ADMITTED, 1)]
    assert P.views(q, 0, s, history, leaky_step)[-1] == Seen(REFUSED, 0)
    assert P.views(q, 0, s, P.mine(0, history), leaky_step)[-1] == Seen(ADMITTED, 1)


def test_planted_defect_over_quota_fails_the_invariant() -> None:
    """A step that ignores the quota (room = every free slot) breaks the invariant."""
    def greedy(q: Sequence[int], s: State, e: Event) -> tuple[State, Seen]:
        return P.step([len(s.slots)] * len(q), s, e)

    with pytest.raises(AssertionError):
        check_invariant(greedy, 3, (1, 1, 1), [Submit(0, 0, (1, 2, 3))])


def test_shared_pool_interferes_on_the_lean_witnesses() -> None:
    """The observations that Proofs/Leak/Partition.lean's kernel-checked witnesses state."""
    refusal: list[Event] = [Submit(0, 0, (1, 2)), Submit(1, 0, (3,))]
    assert P.mine(1, refusal) == P.mine(1, [Submit(1, 0, (3,))])
    assert P.shared_views(2, 1, refusal) == [Seen(REFUSED, 0)]
    assert P.shared_views(2, 1, [Submit(1, 0, (3,))]) == [Seen(ADMITTED, 0)]
    hits: list[Event] = [Submit(1, 0, (5,)), Finish(1, 0), Submit(0, 0, (1, 2)), Finish(0, 0),
                         Submit(1, 1, (5,))]
    assert P.shared_views(2, 1, hits) == [Seen(ADMITTED, 0), Seen(FINISHED, 0), Seen(ADMITTED, 0)]
    assert P.shared_views(2, 1, P.mine(1, hits)) == [
        Seen(ADMITTED, 0), Seen(FINISHED, 0), Seen(ADMITTED, 1)]
    assert P.views((1, 1), 1, P.init(2, 2), refusal) == [Seen(ADMITTED, 0)]


def test_reference_follows_the_engine_order() -> None:
    """Hits are the leading run only; a finished request's tail block is evicted first; a hit
    on a cached block holds it (not evictable while running)."""
    q, s = (3,), P.init(1, 3)
    s, seen = P.step(q, s, Submit(0, 0, (1, 2, 3)))
    assert seen == Seen(ADMITTED, 0) and s.slots == (0, 0, 0)
    s, _ = P.step(q, s, Finish(0, 0))
    assert P.cached_hashes(s, 0) == [3, 2, 1]
    s, seen = P.step(q, s, Submit(0, 1, (1, 9)))
    assert seen == Seen(ADMITTED, 1)
    assert P.cached_hashes(s, 0) == [2] and sorted(P.held_hashes(s, 0)) == [1, 9]
    s, seen = P.step(q, s, Submit(0, 2, (4, 5)))
    assert seen == Seen(REFUSED, 0) and P.cached_hashes(s, 0) == [2]
    s, seen = P.step(q, s, Submit(0, 2, (2, 1)))
    assert seen == Seen(ADMITTED, 2) and P.cached_hashes(s, 0) == []


def _mru_alloc(room: int, i: int, blocks: tuple[P.Blk, ...],
               hashes: Sequence[int]) -> tuple[tuple[P.Blk, ...], int] | None:
    """Planted defect: eviction of the most recently freed unheld block instead of the LRU."""
    for h in hashes:
        new = P.Blk(i, h, 1)
        if room > 0:
            room, blocks = room - 1, blocks + (new,)
        else:
            unheld = [k for k, b in enumerate(blocks) if b.unheld]
            if not unheld:
                return None
            blocks = blocks[:unheld[-1]] + blocks[unheld[-1] + 1:] + (new,)
        i += 1
    return blocks, room


def _head_first_release(ids: Sequence[int], blocks: tuple[P.Blk, ...]) -> tuple[P.Blk, ...]:
    """Planted defect: a finished request's blocks released head first (not tail first)."""
    for i in reversed(list(ids)):
        blocks = P.release(i, blocks)
    return blocks


def test_committed_lean_cases_are_what_the_reference_computes(repo_root: Path) -> None:
    """Proofs/Leak/PartitionCases.lean (each case checked by the kernel against Lean's step) is
    exactly what the reference writes: the two agree on every case."""
    assert (repo_root / CASES_LEAN).read_text(encoding="utf-8") == render()


@pytest.mark.parametrize("name, defect", [("alloc", _mru_alloc),
                                          ("release_all", _head_first_release)])
def test_planted_defect_a_changed_reference_disagrees_with_the_lean_cases(
        repo_root: Path, monkeypatch: pytest.MonkeyPatch, name: str, defect: object) -> None:
    monkeypatch.setattr(P, name, defect)
    assert (repo_root / CASES_LEAN).read_text(encoding="utf-8") != render()
