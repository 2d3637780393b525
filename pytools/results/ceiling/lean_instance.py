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
:func:`unpack` reads it back, and :func:`check_lean_instance` regenerates each module from
the hashed trace and compares bytes, so the Lean data is tied to the trace's SHA-256.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pytools.paths import sha256_file
from pytools.publish.canonical import atomic_write_bytes

from .trace import TraceError, iter_requests, percent_str

#: Lines (1-based, inclusive) of the trace file behind the public "19.645 %" claim.
CLAIM_WINDOW: tuple[int, int] = (1201, 2000)

#: Bits of one generated line: 88 hexadecimal digits, so a line stays within 100 columns.
LINE_BITS = 352

#: Lines per page (every `List` literal of the generated module stays this short).
PAGE_LINES = 128

#: The generated module, relative to the repository root.
WINDOW_MODULE = Path("Proofs/Ceiling/Mooncake.lean")


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


def window_requests(path: Path, first: int, last: int) -> list[list[int]]:
    """The ``hash_ids`` of lines ``first..last`` (1-based, inclusive) of a trace file."""
    if not 1 <= first <= last:
        raise TraceError(f"bad window {first}..{last}: need 1 <= first <= last")
    reqs = list(itertools.islice(iter_requests(path), first - 1, last))
    if len(reqs) != last - first + 1:
        raise TraceError(f"{path}: window {first}..{last} needs {last} lines, "
                         f"the file has {first - 1 + len(reqs)}")
    return reqs


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


_HEADER = """module

public import Proofs.Ceiling.Count

-- GENERATED FILE, do not edit. Regenerate with
--   python -m pytools.traces lean-instance TRACE
-- Trace: {name}
-- SHA-256: {sha256}
"""


def window_module(reqs: Sequence[Sequence[int]], name: str, sha256: str,
                  first: int, last: int, whole: StreamCounts) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for the requests of lines
    ``first..last``, with ``whole`` the whole trace's counts (deterministic)."""
    stream = [x for r in reqs for x in r]
    c = counts_of_requests(reqs)
    p = packing_for(stream)
    pages = pack(stream, p)
    ceil = c.ceiling
    wc = whole.ceiling
    return _HEADER.format(name=name, sha256=sha256) + f"""
/-!
# The demand-fetch ceiling on the Mooncake window, counted by the kernel

The public claim "a {percent_str(ceil)} % hit-rate ceiling on the Mooncake trace" is about lines
{first}–{last} of the Mooncake FAST'25 conversation trace (`{name}`,
SHA-256 `{sha256}`):
{c.requests} requests, replayed as one block-reference stream in file order.

* `window` is that stream, written here packed (`KVCache.Ceiling.Packed.unpack`, slots of
  {p.width} bits holding `id + 1`, {p.per_line} a line); `pytools` regenerates this file from
  the hashed trace and compares it byte for byte.
* `window_length_distinct`: the kernel counts the stream, with `decide +kernel` on
  `KVCache.Ceiling.Packed.count`, a function proved to compute `(length, distinct)`
  (`KVCache.Ceiling.Packed.count_spec`): {c.references} references, {c.distinct} distinct
  blocks.
* `window_hits_le`, `window_hit_rate_le_ceiling`: so every demand-fetch policy, at every
  capacity, from an empty cache, has at most {c.references - c.distinct} hits on the
  window: a hit rate of at most `windowCeilingNum / windowCeilingDen` =
  {ceil.numerator}/{ceil.denominator} (about {percent_str(ceil)} %).
* The whole trace is *not* counted by the kernel: `traceReferences` and `traceDistinct` are
  Python's counts of the hashed file; `ceiling_fraction` checks in the kernel that its ceiling
  is the reduced fraction `ceilingNum / ceilingDen` (about {percent_str(wc)} %), and
  `hit_rate_le_ceiling` bounds every policy on every stream with these counts.
-/

@[expose] public section

namespace KVCache.Ceiling.Mooncake

open KVCache.Ceiling.Packed

/-- First line (1-based) of the trace file in the window. -/
def windowFirstLine : Nat := {first}

/-- Last line (1-based, included) of the trace file in the window. -/
def windowLastLine : Nat := {last}

/-- Requests (lines) in the window. -/
def windowRequests : Nat := {c.requests}

/-- The window's block stream, packed: pages of lines of {p.per_line} slots of {p.width} bits. -/
def windowPages : List (List Nat) :=
{_lean_pages(pages)}

-- noncomputable: calls `unpack`.
/-- The window's block-reference stream (every request's blocks, in file order). -/
noncomputable def window : List Nat := unpack {p.width} {p.per_line} windowPages

/-- Block references of the window. -/
def windowReferences : Nat := {c.references}

/-- Distinct blocks of the window. -/
def windowDistinct : Nat := {c.distinct}

/-- Numerator of the window's reduced hit-rate ceiling. -/
def windowCeilingNum : Nat := {ceil.numerator}

/-- Denominator of the window's reduced hit-rate ceiling. -/
def windowCeilingDen : Nat := {ceil.denominator}

/-- **The kernel counts the window**: {c.references} references and {c.distinct} distinct blocks
(computed by `decide +kernel` on `count`, which `count_spec` proves correct). -/
theorem window_length_distinct :
    window.length = windowReferences ∧ distinct window = windowDistinct := by
  have h : (count {p.width} {p.per_line} {p.base} windowPages).ok = true ∧
      (count {p.width} {p.per_line} {p.base} windowPages).len = windowReferences ∧
      (count {p.width} {p.per_line} {p.base} windowPages).dist = windowDistinct := by
    decide +kernel
  exact length_distinct_of_count h

/-- The window's hit-rate ceiling `(windowReferences - windowDistinct) / windowReferences` is
the reduced fraction `windowCeilingNum / windowCeilingDen` (about {percent_str(ceil)} %). -/
theorem window_ceiling_fraction :
    (windowReferences - windowDistinct) * windowCeilingDen =
        windowCeilingNum * windowReferences ∧
      Nat.gcd windowCeilingNum windowCeilingDen = 1 := by
  decide +kernel

/-- Every demand-fetch policy at every capacity, from an empty cache, has at most
`windowReferences - windowDistinct` hits on the window. -/
theorem window_hits_le (k : Nat) (P : Policy Nat) :
    hits k P window ≤ windowReferences - windowDistinct := by
  have h := hits_le_length_sub_distinct k P window
  rw [window_length_distinct.1, window_length_distinct.2] at h
  exact h

/-- **The window's ceiling.** Every demand-fetch policy at every capacity, from an empty
cache, has hit rate `hits / window.length` at most `windowCeilingNum / windowCeilingDen`. -/
theorem window_hit_rate_le_ceiling (k : Nat) (P : Policy Nat) :
    hits k P window * windowCeilingDen ≤ windowCeilingNum * window.length := by
  apply hits_mul_le_of_ceiling_le
  rw [window_length_distinct.1, window_length_distinct.2]
  exact Nat.le_of_eq window_ceiling_fraction.1

/-- Requests (lines) of the whole trace (counted by Python). -/
def traceRequests : Nat := {whole.requests}

/-- Block references of the whole trace (counted by Python, not by the kernel). -/
def traceReferences : Nat := {whole.references}

/-- Distinct blocks of the whole trace (counted by Python, not by the kernel). -/
def traceDistinct : Nat := {whole.distinct}

/-- Numerator of the whole trace's reduced hit-rate ceiling. -/
def ceilingNum : Nat := {wc.numerator}

/-- Denominator of the whole trace's reduced hit-rate ceiling. -/
def ceilingDen : Nat := {wc.denominator}

/-- The whole trace's hit-rate ceiling `(traceReferences - traceDistinct) / traceReferences`
equals `ceilingNum / ceilingDen` (about {percent_str(wc)} %), and that fraction is reduced. -/
theorem ceiling_fraction :
    (traceReferences - traceDistinct) * ceilingDen = ceilingNum * traceReferences ∧
      Nat.gcd ceilingNum ceilingDen = 1 := by
  decide +kernel

/-- On every stream with the whole trace's counts (the trace's block stream is one), every
demand-fetch policy at every capacity, from an empty cache, has hit rate
`hits / traceReferences` at most `ceilingNum / ceilingDen`. -/
theorem hit_rate_le_ceiling (k : Nat) (P : Policy Nat) (r : List Nat)
    (hlen : r.length = traceReferences) (hd : distinct r = traceDistinct) :
    hits k P r * ceilingDen ≤ ceilingNum * r.length := by
  apply hits_mul_le_of_ceiling_le
  rw [hlen, hd]
  exact Nat.le_of_eq ceiling_fraction.1

end KVCache.Ceiling.Mooncake

end
"""


def lean_instance(path: Path, sha256: str, window: tuple[int, int] | None = None) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for the trace at ``path`` and the lines
    ``window`` (default :data:`CLAIM_WINDOW`)."""
    first, last = window or CLAIM_WINDOW
    reqs = window_requests(path, first, last)
    whole = counts_of_requests(list(iter_requests(path)))
    return window_module(reqs, Path(path).name, sha256, first, last, whole)


def write_lean_instance(path: Path, out: Path) -> Path:
    """Generate the window module for the trace at ``path`` at ``out`` (atomically)."""
    text = lean_instance(Path(path), sha256_file(Path(path)))
    atomic_write_bytes(Path(out), text.encode("utf-8"))
    return Path(out)


def check_lean_instance(path: Path, lean_file: Path) -> list[str]:
    """Problems of the committed window module ``lean_file`` against the trace at ``path``:
    empty when regenerating it gives identical bytes, else one message naming the first
    differing line."""
    lean_file = Path(lean_file)
    if not lean_file.is_file():
        return [f"{lean_file}: missing (generate it with "
                "`python -m pytools.traces lean-instance`)"]
    expected = lean_instance(Path(path), sha256_file(Path(path))).encode("utf-8")
    actual = lean_file.read_bytes()
    if actual == expected:
        return []
    exp_lines, act_lines = expected.splitlines(), actual.splitlines()
    pairs = zip(act_lines, exp_lines, strict=False)
    lineno = next((n for n, (a, b) in enumerate(pairs, start=1) if a != b),
                  min(len(act_lines), len(exp_lines)) + 1)
    return [f"{lean_file}: differs from the file generated from {path} at line {lineno} "
            "(regenerate it with `python -m pytools.traces lean-instance`)"]


# ----------------------------------------------------------------------------- figures


def _count_row(stream: str, c: StreamCounts, computed_by: str, theorem: str | None
               ) -> dict[str, object]:
    return {
        "stream": stream,
        "requests": c.requests,
        "references": c.references,
        "distinct": c.distinct,
        "ceiling_numerator": c.ceiling.numerator,
        "ceiling_denominator": c.ceiling.denominator,
        "ceiling_percent": percent_str(c.ceiling),
        "computed_by": computed_by,
        "theorem": theorem,
    }


def kernel_counts(root: Path, path: Path) -> list[dict[str, object]]:
    """Who computed which counts: the claim's window, counted by the Lean kernel, after
    checking that the committed module is exactly the one the trace at ``path`` gives (else
    :class:`TraceError`: the Lean theorem would not speak for these figures); and the whole
    trace, counted by Python only (see the module docstring for why)."""
    problems = check_lean_instance(path, Path(root) / WINDOW_MODULE)
    if problems:
        raise TraceError("; ".join(problems))
    first, last = CLAIM_WINDOW
    window = counts_of_requests(window_requests(path, first, last))
    whole = counts_of_requests(list(iter_requests(path)))
    return [
        _count_row(f"lines {first}-{last} of the trace", window,
                   "Lean kernel: decide +kernel on KVCache.Ceiling.Packed.count "
                   "(Proofs/Ceiling/Mooncake.lean)",
                   "KVCache.Ceiling.Mooncake.window_length_distinct"),
        _count_row("the whole trace", whole, "Python (pytools), from the hashed trace file; "
                   "not computed by the Lean kernel", None),
    ]
