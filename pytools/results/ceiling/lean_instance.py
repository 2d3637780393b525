"""The generated Lean modules of the Mooncake trace, whose counts the Lean kernel computes.

* ``Proofs/Ceiling/Mooncake.lean``: the window of the public claim (lines
  :data:`CLAIM_LINES` of the trace file), its block stream packed into small ``Nat``
  literals, and theorems whose counts (references, distinct blocks, hence the ceiling) the
  kernel computes with ``decide +kernel`` through ``KVCache.Ceiling.Packed.count``, a
  function proved to compute ``(length, distinct)`` (``Proofs/Ceiling/Count.lean``).
* ``Proofs/Ceiling/MooncakeTrace.lean`` (:func:`trace_module`): the whole trace in three
  parts (the lines before the window, the window, the lines after it), written as runs of
  consecutive blocks (the trace numbers its blocks in first-occurrence order): the kernel runs
  ``KVCache.Ceiling.Packed.runsRun`` (proved equal to the block-by-block pass) over each part
  and so counts the window's distinct blocks absent from the lines before it (the warm
  window's bound) and the whole trace's references and distinct blocks. Counted block by
  block, the whole trace took 839 s and 11 GB to compile (measured); as 33,391 runs it takes
  about a minute of CPU.

The packed format (``KVCache.Ceiling.Packed.unpack w m``): a stream is a list of pages, a
page a list of lines, a line a number holding ``m`` slots of ``w`` bits, lowest first; slot
value ``0`` is empty and ``v + 1`` holds block ``v``. :func:`pack` writes it,
:func:`unpack` reads it back. The run format (``unpackRuns b w m``): the same pages, a slot
value ``a << b | n`` holding the ``n`` blocks from ``a`` on (:func:`runs_of`,
:func:`unpack_runs`). The modules are generated files of the result
(:data:`.result.WINDOW_FILE`, :data:`.result.TRACE_FILE`): the evidence regenerates them from
the hashed trace and compares bytes, so the Lean data is tied to the trace's SHA-256. Their
texts are the templates ``templates/Mooncake.lean.j2`` and ``templates/MooncakeTrace.lean.j2``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pytools.results.generated import render_template
from pytools.traces.trace import CLAIM_WINDOW, TraceError, TraceRead, percent_str

#: Lines (1-based, inclusive) of the trace file behind the public "19.645 %" claim.
CLAIM_LINES: tuple[int, int] = (CLAIM_WINDOW.start, CLAIM_WINDOW.end)

#: Bits of one generated line: 88 hexadecimal digits, so a line stays within 100 columns.
LINE_BITS = 352

#: Lines per page (every `List` literal of the generated module stays this short).
PAGE_LINES = 128

#: The generated module, relative to the repository root.
WINDOW_MODULE = Path("Proofs/Ceiling/Mooncake.lean")

#: The folder of the module's template.
TEMPLATES = Path(__file__).with_name("templates")


# ----------------------------------------------------------------------------- packing


@dataclass(frozen=True)
class Packing:
    """Parameters of a packed stream: slot width, slots a line, and the counting pass's
    ``base`` (blocks below it go to a bitmap; from it on they must come in first-occurrence
    order, see ``Proofs/Ceiling/Count.lean``)."""

    width: int
    per_line: int
    base: int


def fo_base(stream: Sequence[int]) -> int:
    """The least ``base`` for which the blocks ``>= base`` of ``stream`` first occur in the
    order ``base, base + 1, ...`` (``max + 1`` when no smaller one does): the counting pass
    then keeps only the blocks below it in a bitmap."""
    first: list[int] = []
    seen: set[int] = set()
    for x in stream:
        if x not in seen:
            seen.add(x)
            first.append(x)
    top = max(stream, default=-1) + 1
    base = top
    # Walk the first occurrences from the last: `base` can go down to `b` while the ids
    # `b..top-1` are all present and first occur in increasing order.
    order = {x: i for i, x in enumerate(first)}
    b = top - 1
    while b >= 0 and b in order and (b + 1 == top or order[b] < order[b + 1]):
        base = b
        b -= 1
    return base


def packing_for(stream: Sequence[int]) -> Packing:
    """The packing of ``stream``: the narrowest slot that holds every ``id + 1``."""
    width = max(1, (max(stream, default=0) + 1).bit_length())
    if width > LINE_BITS:
        raise TraceError(f"block id {max(stream)} too large to pack ({width} bits)")
    return Packing(width, LINE_BITS // width, fo_base(stream))


@dataclass(frozen=True)
class PassState:
    """The Lean ``Counter`` of ``Proofs/Ceiling/Count.lean``."""

    len: int
    dist: int
    next: int
    old: int
    ok: bool


def fo_pass(stream: Sequence[int], base: int, state: PassState | None = None) -> PassState:
    """The Lean counting pass (``Counter.visit``) over ``stream``, in Python."""
    s = state or PassState(0, 0, base, 0, True)
    ln, dist, nxt, old, ok = s.len, s.dist, s.next, s.old, s.ok
    for x in stream:
        ln += 1
        if x < base:
            if not (old >> x) & 1:
                dist += 1
                old |= 1 << x
        elif x < nxt:
            pass
        elif x == nxt:
            dist += 1
            nxt += 1
        else:
            ok = False
    return PassState(ln, dist, nxt, old, ok)


def pack(stream: Sequence[int], packing: Packing) -> list[list[int]]:
    """Pages of lines of ``stream`` (each line ``sum((id + 1) << (w * j))``)."""
    w, m = packing.width, packing.per_line
    lines = []
    for k in range(0, len(stream), m):
        n = 0
        for j, x in enumerate(stream[k:k + m]):
            if x < 0 or (x + 1) >> w:
                raise TraceError(f"block id {x} does not fit a {w}-bit slot")
            n |= (x + 1) << (w * j)
        lines.append(n)
    return [lines[i:i + PAGE_LINES] for i in range(0, len(lines), PAGE_LINES)]


def unpack(pages: Sequence[Sequence[int]], packing: Packing) -> list[int]:
    """The stream the pages denote (the Lean ``unpack``, in Python)."""
    w, m = packing.width, packing.per_line
    mask = (1 << w) - 1
    out = []
    for page in pages:
        for n in page:
            for j in range(m):
                v = (n >> (w * j)) & mask
                if v:
                    out.append(v - 1)
    return out


def _lean_pages(pages: Sequence[Sequence[int]]) -> str:
    """A `List (List Nat)` literal, one hexadecimal line literal per source line."""
    out = []
    for pi, page in enumerate(pages):
        for li, n in enumerate(page):
            lead = ("  [[" if pi == 0 else "   [") if li == 0 else "    "
            end = "," if li + 1 < len(page) else ("]]" if pi + 1 == len(pages) else "],")
            out.append(f"{lead}0x{n:x}{end}")
    return "\n".join(out) if out else "  []"


# ----------------------------------------------------------------------------- streams


@dataclass(frozen=True)
class StreamCounts:
    """A stream's counts and its demand-fetch ceiling."""

    requests: int
    references: int
    distinct: int

    @property
    def ceiling(self) -> Fraction:
        return Fraction(self.references - self.distinct, self.references)


def counts_of_requests(reqs: Sequence[Sequence[int]]) -> StreamCounts:
    stream = [x for r in reqs for x in r]
    if not stream:
        raise TraceError("the stream has no block references")
    return StreamCounts(len(reqs), len(stream), len(set(stream)))


# ----------------------------------------------------------------------------- modules


def window_module(reqs: Sequence[Sequence[int]], name: str, sha256: str,
                  first: int, last: int) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for the requests of lines
    ``first..last`` (deterministic)."""
    stream = [x for r in reqs for x in r]
    counts = counts_of_requests(reqs)
    packing = packing_for(stream)
    return render_template(
        TEMPLATES, "Mooncake.lean.j2", name=name, sha256=sha256, first=first, last=last,
        counts=counts, packing=packing, pages=_lean_pages(pack(stream, packing)),
        ceiling=counts.ceiling, ceil_percent=percent_str(counts.ceiling))


def lean_instance(trace: TraceRead, window: tuple[int, int] | None = None) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for a trace read by
    :func:`pytools.traces.trace.read_trace` and the lines ``window`` (default
    :data:`CLAIM_LINES`)."""
    first, last = window or CLAIM_LINES
    return window_module(trace.window(first, last), trace.name, trace.sha256, first, last)


#: A ``def NAME : Nat := VALUE`` line of a generated module: the constants its theorems state.
_STATED = re.compile(r"^def (\w+) : Nat := (\d+)$", re.M)


def stated_constants(text: str) -> dict[str, int]:
    """The ``Nat`` constants a generated module states (``def NAME : Nat := VALUE``)."""
    return {m.group(1): int(m.group(2)) for m in _STATED.finditer(text)}


# ----------------------------------------------------------------------------- runs

#: Bits of a run's length in a slot of the run-packed trace (longer runs are split).
RUN_BITS = 8

#: Pages of the lines after the window counted by one kernel theorem (bounds its memory).
CHUNK_PAGES = 4

#: The generated module of the whole trace (the warm window and the whole-trace ceiling).
TRACE_MODULE = Path("Proofs/Ceiling/MooncakeTrace.lean")


@dataclass(frozen=True)
class RunPacking:
    """Parameters of a run-packed stream: run-length bits, slot width, slots a line."""

    run_bits: int
    width: int
    per_line: int


def runs_of(stream: Sequence[int], run_bits: int = RUN_BITS) -> list[int]:
    """Slot values of ``stream`` cut into runs of consecutive blocks: ``a << run_bits | n``
    holds the ``n`` blocks ``a, a + 1, ..., a + n - 1`` (``0 < n < 2 ** run_bits``)."""
    top = (1 << run_bits) - 1
    out: list[list[int]] = []
    for x in stream:
        if x < 0:
            raise TraceError(f"block id {x} is negative")
        if out and out[-1][0] + out[-1][1] == x and out[-1][1] < top:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return [(a << run_bits) | n for a, n in out]


def run_packing_for(streams: Sequence[Sequence[int]]) -> RunPacking:
    """The run packing of ``streams``: the narrowest slot that holds every run."""
    top = max((x for st in streams for x in st), default=0)
    width = top.bit_length() + RUN_BITS
    if width > LINE_BITS:
        raise TraceError(f"block id {top} too large to pack")
    return RunPacking(RUN_BITS, width, LINE_BITS // width)


def unpack_runs(values: Sequence[int], run_bits: int = RUN_BITS) -> list[int]:
    """The blocks of run slot values (the Lean ``runsBlocks``, in Python)."""
    mask = (1 << run_bits) - 1
    return [x for v in values for x in range(v >> run_bits, (v >> run_bits) + (v & mask))]


def runs_pass(values: Sequence[int], state: PassState | None = None,
              run_bits: int = RUN_BITS) -> PassState:
    """The Lean run pass (``Counter.visitRun``, ``base = 0``) over run slot values."""
    s = state or PassState(0, 0, 0, 0, True)
    ln, dist, nxt, ok = s.len, s.dist, s.next, s.ok
    mask = (1 << run_bits) - 1
    for v in values:
        a, n = v >> run_bits, v & mask
        ln += n
        if a <= nxt:
            new = max(0, a + n - nxt)
            dist += new
            nxt += new
        else:
            ok = False
    return PassState(ln, dist, nxt, s.old, ok)


def pack_slots(values: Sequence[int], width: int, per_line: int) -> list[list[int]]:
    """Pages of lines of slot ``values`` (each line ``sum(v << (width * j))``)."""
    lines = []
    for k in range(0, len(values), per_line):
        n = 0
        for j, v in enumerate(values[k:k + per_line]):
            if v < 0 or v >> width:
                raise TraceError(f"slot value {v} does not fit {width} bits")
            n |= v << (width * j)
        lines.append(n)
    return [lines[i:i + PAGE_LINES] for i in range(0, len(lines), PAGE_LINES)]


@dataclass(frozen=True)
class TraceSegment:
    """A part of the trace as the module writes it: its pages' Lean name and literal, the
    run pass's state before and after it."""

    name: str
    pages: str
    start: PassState
    end: PassState


def _state(s: PassState) -> str:
    return f"⟨{s.len}, {s.dist}, {s.next}, {s.old}, {'true' if s.ok else 'false'}⟩"


@dataclass(frozen=True)
class WarmCounts:
    """The window after the lines before it: the window's references, its distinct blocks
    absent from those lines, and the bound on hits and its fraction."""

    references: int
    new: int

    @property
    def max_hits(self) -> int:
        return self.references - self.new

    @property
    def ceiling(self) -> Fraction:
        return Fraction(self.max_hits, self.references)


def warm_counts(before: Sequence[int], window: Sequence[int]) -> WarmCounts:
    """Counts of ``window`` after ``before`` (set difference, independent of the pass)."""
    return WarmCounts(len(window), len(set(window) - set(before)))


def trace_module(trace: TraceRead, window: tuple[int, int] | None = None) -> str:
    """The text of ``Proofs/Ceiling/MooncakeTrace.lean``: the whole trace as three run-packed
    parts (the lines before the window, the window, the lines after it) whose counts the
    kernel computes with the run pass (deterministic)."""
    first, last = window or CLAIM_LINES
    if first < 2:
        raise TraceError(f"window {first}..{last} has no lines before it")
    parts = [trace.window(1, first - 1), trace.window(first, last)]
    after = trace.requests[last:]
    streams = [[x for r in reqs for x in r] for reqs in (*parts, after)]
    if not streams[1]:
        raise TraceError(f"{trace.name}: window {first}..{last} has no block references")
    packing = run_packing_for(streams)
    before_pages = pack_slots(runs_of(streams[0]), packing.width, packing.per_line)
    window_pages = pack_slots(runs_of(streams[1]), packing.width, packing.per_line)
    after_pages = pack_slots(runs_of(streams[2]), packing.width, packing.per_line)
    chunks = [after_pages[i:i + CHUNK_PAGES] for i in range(0, len(after_pages), CHUNK_PAGES)]
    segments = []
    state = PassState(0, 0, 0, 0, True)
    named = [("beforePages", before_pages), ("windowRunPages", window_pages)]
    named += [(f"afterPages{i + 1}", c) for i, c in enumerate(chunks)]
    for name, pages in named:
        end = runs_pass([v for page in pages for n in page
                         for v in _slots(n, packing.width, packing.per_line)], state)
        segments.append(TraceSegment(name, _lean_pages(pages), state, end))
        state = end
    if not state.ok:
        raise TraceError(f"{trace.name}: block ids are not in first-occurrence order")
    whole = counts_of_requests(trace.requests)
    if (state.len, state.dist) != (whole.references, whole.distinct):
        raise TraceError(f"{trace.name}: the run pass gives {state.len}, {state.dist}, "
                         f"the trace {whole.references}, {whole.distinct}")
    warm = warm_counts(streams[0], streams[1])
    return render_template(
        TEMPLATES, "MooncakeTrace.lean.j2", name=trace.name, sha256=trace.sha256,
        first=first, last=last, packing=packing, segments=segments, state=_state,
        before=segments[0], window=segments[1], after=segments[2:],
        before_refs=len(streams[0]), warm=warm, warm_percent=percent_str(warm.ceiling),
        whole=whole, whole_ceiling=whole.ceiling, whole_percent=percent_str(whole.ceiling))


def _slots(n: int, width: int, per_line: int) -> list[int]:
    mask = (1 << width) - 1
    return [(n >> (width * j)) & mask for j in range(per_line)]
