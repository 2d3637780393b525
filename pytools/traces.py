"""The demand-fetch hit ceiling on the public Mooncake conversation trace.

A demand-fetch cache only brings a block in when it is requested and missed, so the first
request of every distinct block is a miss, whatever the policy and the capacity:
``hits + distinct <= references`` (Lean: ``KVCache.Ceiling.hits_add_distinct_le_length``).
This module computes, from the trace file (whose SHA-256 it records):

* the counts (requests, block references, distinct blocks) and the ceiling
  ``(references - distinct) / references`` as an exact fraction;
* simulated hit counts of LRU, FIFO and Belady (farthest next use, offline) at a capacity,
  with the same model as the Lean one: a hit leaves the cache unchanged, a miss inserts the
  block after evicting one if the cache is full (capacity >= 1);
* a sweep of hit rate against capacity (CSV, SVG and PNG, byte-deterministic);
* the generated Lean instance ``Proofs/Ceiling/Mooncake.lean`` (counts, ceiling fraction
  and a committed excerpt of the block stream, all checked by the Lean kernel);
* the evidence of the published result ``demand-fetch-ceiling``.

The trace is JSON Lines, one request an object with a ``hash_ids`` list of non-negative
integers (512-token prefix blocks); replaying every request's ``hash_ids`` in file order
gives the block-reference stream.
"""

from __future__ import annotations

import csv
import functools
import heapq
import io
import itertools
import json
import math
import sys
from collections import OrderedDict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import click

from pytools.canonical import atomic_write_bytes
from pytools.paths import MOONCAKE_TRACE, mooncake_trace, project_root, sha256_file
from pytools.results import Evidence, InputFile

#: Id of the published result whose evidence :func:`evidence` computes.
RESULT_ID = "demand-fetch-ceiling"

#: Title of the published result.
RESULT_TITLE = "No cache beats the traffic: the demand-fetch hit ceiling (Mooncake trace)"

#: Fully qualified Lean theorems the result rests on (Proofs/Ceiling/*.lean).
THEOREMS: tuple[str, ...] = (
    "KVCache.Ceiling.hits_add_distinct_le_length",
    "KVCache.Ceiling.hits_le_length_sub_distinct",
    "KVCache.Ceiling.hits_mul_le_of_ceiling_le",
    "KVCache.Ceiling.hits_eq_length_sub_distinct_of_distinct_le",
    "KVCache.Ceiling.evictions_eq_zero_of_distinct_le",
    "KVCache.Ceiling.hits_le_hits_of_distinct_le",
    "KVCache.Ceiling.belady_hits_eq_of_distinct_le",
    "KVCache.Ceiling.hits_eq_unbounded",
    "KVCache.Ceiling.Mooncake.ceiling_fraction",
    "KVCache.Ceiling.Mooncake.hit_rate_le_ceiling",
    "KVCache.Ceiling.Mooncake.excerpt_length",
    "KVCache.Ceiling.Mooncake.excerpt_distinct",
    "KVCache.Ceiling.Mooncake.excerpt_hits_le",
)

#: Limits under which the result holds, stated next to it.
RESULT_LIMITS: tuple[str, ...] = (
    "Per trace: the figures are those of one public trace (the Mooncake FAST'25 conversation "
    "trace, identified by its SHA-256), replayed as one block-reference stream in file order.",
    "Demand-fetch model: a block enters the cache only when it is requested and missed; "
    "prefetching, and admitting blocks computed elsewhere, are outside the model.",
    "The ceiling (references - distinct) / references bounds every policy, online or "
    "offline, at every capacity; it is reached exactly once the capacity is at least the "
    "number of distinct blocks. Belady's optimality below that capacity is not proved in "
    "Lean; the LRU and Belady figures below it are simulations.",
    "Blocks are the trace's remapped 512-token prefix-block hashes; equal ids are treated as "
    "reusable KV-cache blocks, with no model of tenants, eviction cost or block size.",
    "Lean checks the two counts' ceiling fraction and, on a committed excerpt of the stream, "
    "that its distinct-block count equals the one computed here; the full-trace counts "
    "themselves are computed in Python from the hashed file.",
)

#: Policies :func:`simulate` knows.
POLICIES: tuple[str, ...] = ("lru", "fifo", "belady")

#: Capacities (in blocks) of the sweep; the number of distinct blocks is added to them.
SWEEP_CAPACITIES: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072)

#: Capacities whose LRU/Belady hits the evidence states (plus the number of distinct blocks).
EVIDENCE_CAPACITIES: tuple[int, ...] = (1024, 16384, 65536)

#: Requests of the trace's head committed as the Lean excerpt (kernel-checked distinct count).
#: Measured with the registry (WebAssembly) Lean: 8 requests (172 references) compile with no
#: memory growth; a 500-reference excerpt drove the process past 7 GB and was killed.
EXCERPT_REQUESTS = 8

#: The trace's path as certificates record it (relative to the repository root).
TRACE_INPUT_PATH = "../shared/" + MOONCAKE_TRACE.as_posix()

#: Decimal places of the percentages printed and recorded (the exact value is the fraction).
PERCENT_PLACES = 4


class TraceError(ValueError):
    """A trace file that cannot be read; the message names the file and, if any, the line."""


# ----------------------------------------------------------------------------- loading


def iter_requests(path: Path) -> Iterator[list[int]]:
    """Yield each request's ``hash_ids``, validating every line of the JSONL file.

    Raises :class:`TraceError` naming the file and the line for an empty line, malformed
    JSON, a line that is not an object, a missing or non-list ``hash_ids``, or an id that
    is not a non-negative integer (booleans and floats are rejected).
    """
    path = Path(path)
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (closed in finally)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    try:
        lineno = 0
        try:
            for lineno, line in enumerate(handle, start=1):  # noqa: B007 (used in except)
                yield _parse_line(path, lineno, line)
        except UnicodeDecodeError as exc:
            raise TraceError(f"{path}:{lineno + 1}: not UTF-8 text ({exc.reason})") from None
    finally:
        handle.close()


def _parse_line(path: Path, lineno: int, line: str) -> list[int]:
    """The validated ``hash_ids`` of one line."""
    where = f"{path}:{lineno}"
    if not line.strip():
        raise TraceError(f"{where}: empty line (expected one JSON object a line)")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{where}: malformed JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if "hash_ids" not in obj:
        raise TraceError(f"{where}: missing key 'hash_ids'")
    ids = obj["hash_ids"]
    if not isinstance(ids, list):
        raise TraceError(f"{where}: 'hash_ids' must be a list, got {type(ids).__name__}")
    for pos, value in enumerate(ids):
        if type(value) is not int or value < 0:
            raise TraceError(
                f"{where}: hash_ids[{pos}] = {value!r} is not a non-negative integer"
            )
    return ids


@dataclass(frozen=True)
class Trace:
    """A trace's block-reference stream and the number of requests it came from."""

    path: Path
    requests: int
    stream: tuple[int, ...]


def load_trace(path: Path) -> Trace:
    """Read and validate a trace; its stream is every request's ``hash_ids`` in file order."""
    stream: list[int] = []
    requests = 0
    for ids in iter_requests(path):
        requests += 1
        stream.extend(ids)
    if requests == 0:
        raise TraceError(f"{path}: no requests (empty trace)")
    return Trace(path=Path(path), requests=requests, stream=tuple(stream))


# ----------------------------------------------------------------------------- ceiling


def count_distinct(stream: Sequence[int]) -> int:
    """Number of distinct blocks of a stream."""
    return len(set(stream))


@dataclass(frozen=True)
class CeilingCounts:
    """The counts of a trace and its demand-fetch hit ceiling."""

    requests: int
    references: int
    distinct: int
    sha256: str

    @property
    def max_hits(self) -> int:
        """The most hits any demand-fetch policy can score: references - distinct."""
        return self.references - self.distinct

    @property
    def ceiling(self) -> Fraction:
        """The hit-rate ceiling (references - distinct) / references, exactly."""
        if self.references == 0:
            raise TraceError("the trace has no block references: the ceiling is undefined")
        return Fraction(self.max_hits, self.references)

    @property
    def percent(self) -> str:
        """The ceiling in percent, rounded half-up to :data:`PERCENT_PLACES` places."""
        return percent_str(self.ceiling)


def percent_str(value: Fraction, places: int = PERCENT_PLACES) -> str:
    """``value`` as a percentage with ``places`` decimals, rounded half up, from the exact
    fraction (no floating point)."""
    scaled = value * 100 * 10**places
    units = math.floor(scaled + Fraction(1, 2))
    whole, frac = divmod(units, 10**places)
    return f"{whole}.{frac:0{places}d}" if places else str(whole)


def counts_of(trace: Trace, sha256: str) -> CeilingCounts:
    """The ceiling counts of a loaded trace."""
    return CeilingCounts(
        requests=trace.requests,
        references=len(trace.stream),
        distinct=count_distinct(trace.stream),
        sha256=sha256,
    )


def ceiling_counts(path: Path) -> CeilingCounts:
    """Requests, references, distinct blocks and SHA-256 of the trace at ``path``."""
    trace = load_trace(path)
    return counts_of(trace, sha256_file(Path(path)))


# ----------------------------------------------------------------------------- policies


def _check_capacity(capacity: int) -> None:
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"capacity must be a positive integer, got {capacity!r}")


def simulate_lru(stream: Sequence[int], capacity: int) -> int:
    """Hits of least-recently-used eviction with ``capacity`` blocks."""
    _check_capacity(capacity)
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    move = cache.move_to_end
    for block in stream:
        if block in cache:
            hits += 1
            move(block)
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
    return hits


def simulate_fifo(stream: Sequence[int], capacity: int) -> int:
    """Hits of first-in-first-out eviction with ``capacity`` blocks (hits do not reorder)."""
    _check_capacity(capacity)
    cache: set[int] = set()
    order: deque[int] = deque()
    hits = 0
    for block in stream:
        if block in cache:
            hits += 1
        else:
            if len(cache) >= capacity:
                cache.discard(order.popleft())
            cache.add(block)
            order.append(block)
    return hits


def next_uses(stream: Sequence[int]) -> list[int]:
    """``result[i]``: the next position after ``i`` requesting ``stream[i]``, else ``len``."""
    n = len(stream)
    result = [n] * n
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):
        block = stream[i]
        result[i] = last.get(block, n)
        last[block] = i
    return result


def simulate_belady(stream: Sequence[int], capacity: int) -> int:
    """Hits of Belady's offline policy (evict the block whose next use is farthest).

    O(n log n): next uses are precomputed once, and the cache keeps a max-heap of
    ``(next use, block)`` with lazy deletion (an entry is stale when the block left the
    cache or its next use moved on); the future is never rescanned.
    """
    _check_capacity(capacity)
    nxt = next_uses(stream)
    cache: dict[int, int] = {}  # block -> position of its next use
    heap: list[tuple[int, int]] = []  # (-next use, block), possibly stale
    push, pop = heapq.heappush, heapq.heappop
    hits = 0
    for i, block in enumerate(stream):
        use = nxt[i]
        if block in cache:
            hits += 1
        elif len(cache) >= capacity:
            while True:
                neg, victim = pop(heap)
                if cache.get(victim) == -neg:
                    del cache[victim]
                    break
        cache[block] = use
        push(heap, (-use, block))
    return hits


_SIMULATORS = {"lru": simulate_lru, "fifo": simulate_fifo, "belady": simulate_belady}


def simulate(stream: Sequence[int], capacity: int, policy: str) -> int:
    """Hits of ``policy`` (``lru``, ``fifo`` or ``belady``) on ``stream`` at ``capacity``."""
    try:
        run = _SIMULATORS[policy]
    except KeyError:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})") from None
    return run(stream, capacity)


# ----------------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class SweepRow:
    """Hits of LRU and Belady at one capacity."""

    capacity: int
    lru_hits: int
    belady_hits: int


def sweep_capacities(distinct: int) -> list[int]:
    """The sweep's capacities: :data:`SWEEP_CAPACITIES` below ``distinct``, then ``distinct``."""
    return sorted({c for c in SWEEP_CAPACITIES if c < distinct} | {max(distinct, 1)})


def sweep_rows(stream: Sequence[int], capacities: Sequence[int]) -> list[SweepRow]:
    """LRU and Belady hits at every capacity."""
    return [
        SweepRow(c, simulate_lru(stream, c), simulate_belady(stream, c)) for c in capacities
    ]


def sweep_csv(rows: Sequence[SweepRow], references: int, ceiling: Fraction) -> bytes:
    """The sweep table as CSV bytes (LF line ends), rates as exact-fraction percentages."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        ["capacity", "lru_hits", "belady_hits", "lru_percent", "belady_percent",
         "ceiling_percent"]
    )
    for row in rows:
        writer.writerow([
            row.capacity,
            row.lru_hits,
            row.belady_hits,
            percent_str(Fraction(row.lru_hits, references)),
            percent_str(Fraction(row.belady_hits, references)),
            percent_str(ceiling),
        ])
    return buf.getvalue().encode("utf-8")


def sweep_plot(rows: Sequence[SweepRow], counts: CeilingCounts, fmt: str) -> bytes:
    """The sweep plot (``svg`` or ``png``) as bytes, byte-deterministic for equal input.

    No wall-clock date or software version is written (``metadata``), and SVG ids are
    derived from a fixed ``svg.hashsalt``.
    """
    import matplotlib
    from matplotlib.figure import Figure

    refs = counts.references
    caps = [r.capacity for r in rows]
    rc = {"svg.hashsalt": "kvcache-ceiling", "svg.fonttype": "path", "path.simplify": True}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(7.0, 4.2), dpi=100)
        ax = fig.add_subplot()
        ax.plot(caps, [100 * r.belady_hits / refs for r in rows], marker="o",
                label="Belady (offline, farthest next use)")
        ax.plot(caps, [100 * r.lru_hits / refs for r in rows], marker="s", label="LRU")
        ax.axhline(100 * float(counts.ceiling), color="black", linestyle="--",
                   label=f"ceiling (refs - distinct) / refs = {counts.percent} %")
        ax.axvline(counts.distinct, color="grey", linestyle=":",
                   label=f"capacity = distinct blocks ({counts.distinct:,})")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache capacity (512-token blocks)")
        ax.set_ylabel("hit rate (% of block references)")
        ax.set_ylim(0, min(100.0, 130 * float(counts.ceiling) + 1))
        ax.set_title(f"Mooncake conversation trace: {refs:,} references, "
                     f"{counts.distinct:,} distinct blocks", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="center left", fontsize=8)
        fig.tight_layout()
        buf = io.BytesIO()
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        elif fmt == "png":
            fig.savefig(buf, format="png", metadata={"Software": None})
        else:
            raise ValueError(f"unknown plot format {fmt!r}")
    return buf.getvalue()


@functools.lru_cache(maxsize=2)
def _analysed(path: str, sha256: str) -> tuple[Trace, CeilingCounts, tuple[SweepRow, ...]]:
    """Parse and sweep a trace once per content hash: certify asks for the figures and the
    plot of the same trace, and the sweep is most of the cost."""
    trace = load_trace(Path(path))
    counts = counts_of(trace, sha256)
    return trace, counts, tuple(sweep_rows(trace.stream, sweep_capacities(counts.distinct)))


def write_sweep(path: Path, out_dir: Path) -> list[Path]:
    """Sweep LRU and Belady over capacities on the trace at ``path``; write
    ``sweep.csv``, ``sweep.svg`` and ``sweep.png`` into ``out_dir`` (each atomically)."""
    _, counts, rows = _analysed(str(path), sha256_file(Path(path)))
    out_dir = Path(out_dir)
    outputs = {
        out_dir / "sweep.csv": sweep_csv(rows, counts.references, counts.ceiling),
        out_dir / "sweep.svg": sweep_plot(rows, counts, "svg"),
        out_dir / "sweep.png": sweep_plot(rows, counts, "png"),
    }
    for target, data in outputs.items():
        atomic_write_bytes(target, data)
    return list(outputs)


# ----------------------------------------------------------------------------- Lean instance


def _lean_list(values: Sequence[int], indent: str = "  ", width: int = 100) -> str:
    """A Lean list literal of naturals, wrapped to ``width`` columns."""
    lines: list[str] = []
    line = indent + "["
    for k, value in enumerate(values):
        item = str(value) + ("," if k + 1 < len(values) else "]")
        if len(line) + 1 + len(item) > width and line.strip() != "[":
            lines.append(line)
            line = indent + " " + item
        else:
            line = line + ("" if line.endswith("[") else " ") + item
    if not values:
        line += "]"
    lines.append(line)
    return "\n".join(lines)


def lean_instance(trace: Trace, sha256: str, excerpt_requests: int = EXCERPT_REQUESTS) -> str:
    """The text of ``Proofs/Ceiling/Mooncake.lean`` for a loaded trace (deterministic)."""
    counts = counts_of(trace, sha256)
    ceiling = counts.ceiling
    name = trace.path.name
    excerpt: list[int] = []
    taken = 0
    for ids in itertools.islice(iter_requests(trace.path), excerpt_requests):
        excerpt.extend(ids)
        taken += 1
    ex_distinct = count_distinct(excerpt)
    return f"""module

public import Proofs.Ceiling.Cache

-- GENERATED FILE, do not edit. Regenerate with
--   python -m pytools.traces lean-instance TRACE --out Proofs/Ceiling/Mooncake.lean
-- Trace: {name}
-- SHA-256: {sha256}

/-!
# The demand-fetch ceiling on the Mooncake conversation trace

Generated by `pytools.traces` from the public Mooncake FAST'25 conversation trace
(`{name}`,
SHA-256 `{sha256}`),
replayed as one block-reference stream in file order.

* `traceReferences` and `traceDistinct` are the full trace's counts, computed in Python from
  the hashed file; `ceiling_fraction` checks in the kernel that the hit-rate ceiling
  `(traceReferences - traceDistinct) / traceReferences` is the reduced fraction
  `ceilingNum / ceilingDen`, and `hit_rate_le_ceiling` applies the general theorem
  `KVCache.Ceiling.hits_mul_le_of_ceiling_le` to every stream with these counts.
* `excerpt` is the block stream of the trace's first {taken} requests, committed here;
  `excerpt_length` and `excerpt_distinct` check in the kernel that the Lean `distinct`
  agrees with Python's count on this real data.
-/

@[expose] public section

namespace KVCache.Ceiling.Mooncake

/-- Requests (lines) of the trace. -/
def traceRequests : Nat := {counts.requests}

/-- Block references of the trace (the length of its block stream). -/
def traceReferences : Nat := {counts.references}

/-- Distinct blocks of the trace. -/
def traceDistinct : Nat := {counts.distinct}

/-- Numerator of the reduced hit-rate ceiling. -/
def ceilingNum : Nat := {ceiling.numerator}

/-- Denominator of the reduced hit-rate ceiling. -/
def ceilingDen : Nat := {ceiling.denominator}

/-- The trace's hit-rate ceiling `(traceReferences - traceDistinct) / traceReferences`
equals `ceilingNum / ceilingDen` (about {counts.percent} %), and that fraction is reduced. -/
theorem ceiling_fraction :
    (traceReferences - traceDistinct) * ceilingDen = ceilingNum * traceReferences ∧
      Nat.gcd ceilingNum ceilingDen = 1 := by
  decide +kernel

/-- On every stream with the trace's counts (the trace's block stream is one), every
demand-fetch policy at every capacity has hit rate `hits / traceReferences` at most
`ceilingNum / ceilingDen`. -/
theorem hit_rate_le_ceiling (k : Nat) (P : Policy Nat) (r : List Nat)
    (hlen : r.length = traceReferences) (hd : distinct r = traceDistinct) :
    hits k P r * ceilingDen ≤ ceilingNum * r.length := by
  apply hits_mul_le_of_ceiling_le
  rw [hlen, hd]
  exact Nat.le_of_eq ceiling_fraction.1

/-- The block stream of the trace's first {taken} requests. -/
def excerpt : List Nat :=
{_lean_list(excerpt)}

/-- The excerpt has {len(excerpt)} block references (checked by the kernel). -/
theorem excerpt_length : excerpt.length = {len(excerpt)} := by
  decide +kernel

/-- The excerpt has {ex_distinct} distinct blocks, as Python counts (checked by the kernel). -/
theorem excerpt_distinct : distinct excerpt = {ex_distinct} := by
  decide +kernel

/-- Every policy at every capacity has at most {len(excerpt) - ex_distinct} hits on the excerpt. -/
theorem excerpt_hits_le (k : Nat) (P : Policy Nat) :
    hits k P excerpt ≤ {len(excerpt) - ex_distinct} := by
  have h := hits_le_length_sub_distinct k P excerpt
  rw [excerpt_length, excerpt_distinct] at h
  omega

end KVCache.Ceiling.Mooncake

end
"""


def write_lean_instance(path: Path, out: Path) -> Path:
    """Generate the Lean instance for the trace at ``path`` and write it to ``out``."""
    trace = load_trace(path)
    text = lean_instance(trace, sha256_file(Path(path)))
    atomic_write_bytes(out, text.encode("utf-8"))
    return Path(out)


def check_lean_instance(path: Path, lean_file: Path) -> list[str]:
    """Problems of a committed Lean instance against the trace at ``path``: empty when
    regenerating it gives identical bytes, else one message naming the first differing line."""
    lean_file = Path(lean_file)
    if not lean_file.is_file():
        return [f"{lean_file}: missing (generate it with `python -m pytools.traces lean-instance`)"]
    expected = lean_instance(load_trace(path), sha256_file(Path(path))).encode("utf-8")
    actual = lean_file.read_bytes()
    if actual == expected:
        return []
    exp_lines, act_lines = expected.splitlines(), actual.splitlines()
    pairs = zip(act_lines, exp_lines, strict=False)
    lineno = next((n for n, (a, b) in enumerate(pairs, start=1) if a != b),
                  min(len(act_lines), len(exp_lines)) + 1)
    return [f"{lean_file}: differs from the file generated from {path} at line {lineno} "
            "(regenerate it with `python -m pytools.traces lean-instance`)"]


# ----------------------------------------------------------------------------- evidence


def evidence(root: Path) -> Evidence:
    """Figures of the result ``demand-fetch-ceiling``, computed from the shared trace."""
    path = mooncake_trace(root)
    if not path.is_file():
        raise TraceError(f"{path}: the Mooncake trace is absent (see data/mooncake/README.md)")
    sha = sha256_file(path)
    trace, counts, sweep = _analysed(str(path), sha)
    refs = counts.references
    stated = sorted({c for c in EVIDENCE_CAPACITIES if c < counts.distinct} | {counts.distinct})
    stated_rows = sweep_rows(trace.stream, stated)

    def row_dict(row: SweepRow) -> dict[str, object]:
        return {
            "capacity": row.capacity,
            "lru_hits": row.lru_hits,
            "belady_hits": row.belady_hits,
            "lru_percent": percent_str(Fraction(row.lru_hits, refs)),
            "belady_percent": percent_str(Fraction(row.belady_hits, refs)),
        }

    figures: dict[str, object] = {
        "requests": counts.requests,
        "references": refs,
        "distinct": counts.distinct,
        "max_hits": counts.max_hits,
        "ceiling_numerator": counts.ceiling.numerator,
        "ceiling_denominator": counts.ceiling.denominator,
        "ceiling_percent": counts.percent,
        "policy_hits": [row_dict(r) for r in stated_rows],
        "sweep": [row_dict(r) for r in sweep],
    }
    return Evidence(figures=figures, inputs=(InputFile(path=TRACE_INPUT_PATH, sha256=sha),))


# ----------------------------------------------------------------------------- CLI


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group()
def main() -> None:
    """Demand-fetch hit ceiling of a Mooncake JSONL trace."""


@main.command("ceiling")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def ceiling_cmd(file: Path) -> None:
    """Counts and the hit-rate ceiling (references - distinct) / references of FILE."""
    try:
        c = ceiling_counts(file)
        ceiling = c.ceiling
    except TraceError as exc:
        raise _fail(exc) from None
    click.echo(f"file: {file}")
    click.echo(f"sha256: {c.sha256}")
    click.echo(f"requests: {c.requests}")
    click.echo(f"references: {c.references}")
    click.echo(f"distinct: {c.distinct}")
    click.echo(f"max_hits: {c.max_hits}")
    click.echo(f"ceiling: {ceiling.numerator}/{ceiling.denominator} ({c.percent} %)")


@main.command("simulate")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--capacity", "-k", type=click.IntRange(min=1), required=True,
              help="Cache capacity in blocks.")
@click.option("--policy", type=click.Choice([*POLICIES, "all"]), default="all",
              show_default=True)
def simulate_cmd(file: Path, capacity: int, policy: str) -> None:
    """Hit counts and rates of a policy (or all) at a capacity on FILE."""
    try:
        trace = load_trace(file)
    except TraceError as exc:
        raise _fail(exc) from None
    refs = len(trace.stream)
    distinct = count_distinct(trace.stream)
    click.echo(f"references: {refs}  distinct: {distinct}  capacity: {capacity}")
    top = percent_str(Fraction(refs - distinct, refs))
    click.echo(f"ceiling: {refs - distinct} hits ({top} %)")
    for name in POLICIES if policy == "all" else (policy,):
        hits = simulate(trace.stream, capacity, name)
        click.echo(f"{name}: {hits} hits ({percent_str(Fraction(hits, refs))} %)")


@main.command("sweep")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="Folder for sweep.csv, sweep.svg, sweep.png.")
def sweep_cmd(file: Path, out_dir: Path) -> None:
    """Hit rate against capacity for LRU and Belady, with the ceiling (CSV + SVG + PNG)."""
    try:
        paths = write_sweep(file, out_dir)
    except TraceError as exc:
        raise _fail(exc) from None
    for p in paths:
        click.echo(f"wrote {p}  sha256 {sha256_file(p)}")


@main.command("lean-instance")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Output (default: Proofs/Ceiling/Mooncake.lean).")
def lean_instance_cmd(file: Path, out: Path | None) -> None:
    """Generate the Lean instance (counts, ceiling fraction, kernel-checked excerpt)."""
    target = out or project_root() / "Proofs" / "Ceiling" / "Mooncake.lean"
    try:
        write_lean_instance(file, target)
    except TraceError as exc:
        raise _fail(exc) from None
    click.echo(f"wrote {target}  sha256 {sha256_file(target)}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
