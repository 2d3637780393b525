"""The generated Lean module of the Mooncake window, whose counts the Lean kernel computes.

* ``Proofs/Ceiling/Mooncake.lean``: the window of the public claim (lines
  :data:`CLAIM_WINDOW` of the trace file), its block stream packed into small ``Nat``
  literals, and theorems whose counts (references, distinct blocks, hence the ceiling) the
  kernel computes with ``decide +kernel`` through ``KVCache.Ceiling.Packed.count``, a
  function proved to compute ``(length, distinct)`` (``Proofs/Ceiling/Count.lean``).

The whole trace (288,500 references) is not put in the kernel: counted the same way in
segments it took 839 s of wall time and 11 GB of memory to compile (measured), past the CI
budget; its counts are Python's, and the certificate says so (:func:`kernel_counts`).

The packed format (``KVCache.Ceiling.Packed.unpack w m``): a stream is a list of pages, a
page a list of lines, a line a number holding ``m`` slots of ``w`` bits, lowest first; slot
value ``0`` is empty and ``v + 1`` holds block ``v``. :func:`pack` writes it,
:func:`unpack` reads it back. The module is a generated file of the result
(:data:`.result.WINDOW_FILE`): the evidence regenerates it from the hashed trace and compares
bytes, so the Lean data is tied to the trace's SHA-256. Its text is the template
``templates/Mooncake.lean.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pytools.results.generated import render_template

from .trace import TraceError, percent_str, scan_trace

#: Lines (1-based, inclusive) of the trace file behind the public "19.645 %" claim.
CLAIM_WINDOW: tuple[int, int] = (1201, 2000)

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
class TraceRead:
    """A trace file read once: its name, the SHA-256 of its bytes and every request's
    ``hash_ids`` in file order."""

    name: str
    sha256: str
    requests: list[list[int]]

    def window(self, first: int, last: int) -> list[list[int]]:
        """The requests of lines ``first..last`` (1-based, inclusive)."""
        if not 1 <= first <= last:
            raise TraceError(f"bad window {first}..{last}: need 1 <= first <= last")
        if last > len(self.requests):
            raise TraceError(f"{self.name}: window {first}..{last} needs {last} lines, "
                             f"the file has {len(self.requests)}")
        return self.requests[first - 1:last]


def read_trace(path: Path) -> TraceRead:
    """Read, validate and hash the trace at ``path`` in one pass."""
    requests: list[list[int]] = []
    summary = scan_trace(Path(path), per_request=lambda _lineno, ids: requests.append(ids))
    return TraceRead(Path(path).name, summary.sha256, requests)


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
                  first: int, last: int, whole: StreamCounts) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for the requests of lines
    ``first..last``, with ``whole`` the whole trace's counts (deterministic)."""
    stream = [x for r in reqs for x in r]
    counts = counts_of_requests(reqs)
    packing = packing_for(stream)
    return render_template(
        TEMPLATES, "Mooncake.lean.j2", name=name, sha256=sha256, first=first, last=last,
        counts=counts, packing=packing, pages=_lean_pages(pack(stream, packing)),
        ceiling=counts.ceiling, ceil_percent=percent_str(counts.ceiling),
        whole_counts=whole, whole_ceiling=whole.ceiling,
        whole_percent=percent_str(whole.ceiling))


def lean_instance(trace: TraceRead, window: tuple[int, int] | None = None) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for a trace read by :func:`read_trace`
    and the lines ``window`` (default :data:`CLAIM_WINDOW`)."""
    first, last = window or CLAIM_WINDOW
    return window_module(trace.window(first, last), trace.name, trace.sha256, first, last,
                         counts_of_requests(trace.requests))
