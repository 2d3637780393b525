"""Reading a block-reference trace (Mooncake JSON Lines) and counting it: requests, references,
distinct blocks, and the demand-fetch ceiling as an exact fraction.

The trace is JSON Lines, one request an object with a ``hash_ids`` list of non-negative
integers (512-token prefix blocks); replaying every request's ``hash_ids`` in file order
gives the block-reference stream.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from pytools.paths import MOONCAKE_TRACE, sha256_file

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
