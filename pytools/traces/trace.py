"""Reading a block-reference trace (Mooncake JSON Lines) and counting it: requests, references,
distinct blocks, and the demand-fetch ceiling as an exact fraction.

The trace is JSON Lines, one request an object with a ``hash_ids`` list of non-negative
integers (512-token prefix blocks); replaying every request's ``hash_ids`` in file order
gives the block-reference stream. A gzip-compressed file (``.jsonl.gz``, recognised by its
magic bytes) is read directly. A :class:`Window` selects lines ``START..END`` (1-based,
inclusive); the stream is then the references of those lines only.

One reader serves every command: :func:`scan_trace` parses each line with msgspec (strict
types, in C), hands the ids to a sink in numpy chunks, and hashes the file's bytes *as it
reads them* (so the SHA-256 recorded is the one of the bytes counted, even for a window,
whose remaining lines are hashed but not parsed). A line msgspec rejects is parsed again
with the standard library to name the problem: ``FILE:LINE: what is wrong``. A line with a
key twice (``{"hash_ids": [1], "hash_ids": [2]}``) is refused, as the admission proxy refuses
one, rather than read as its last value: see :func:`check_unique_keys`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import os
import stat
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np

from pytools.paths import MOONCAKE_TRACE

#: The trace's path as certificates record it (relative to the repository root).
TRACE_INPUT_PATH = "../shared/" + MOONCAKE_TRACE.as_posix()

#: Decimal places of the percentages printed and recorded (the exact value is the fraction).
PERCENT_PLACES = 4

#: Largest block id accepted (ids are stored as signed 64-bit integers).
MAX_ID = 2**63 - 1

#: References handed to a sink at a time by :func:`scan_trace`.
CHUNK_REFS = 1 << 16

_GZIP_MAGIC = b"\x1f\x8b"


class TraceError(ValueError):
    """A trace file that cannot be read; the message names the file and, if any, the line."""


# ----------------------------------------------------------------------------- windows


@dataclass(frozen=True)
class Window:
    """Lines ``start..end`` of a trace file, 1-based and inclusive."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not (1 <= self.start <= self.end):
            raise TraceError(f"bad window {self.start}:{self.end}: need 1 <= START <= END")

    @classmethod
    def parse(cls, text: str) -> Window:
        """``"START:END"`` (1-based inclusive line numbers)."""
        start, sep, end = text.partition(":")
        if not sep or not start.strip().isdigit() or not end.strip().isdigit():
            raise TraceError(f"bad window {text!r}: expected START:END, e.g. 1201:2000")
        return cls(int(start), int(end))

    @property
    def spec(self) -> str:
        """``START:END``, as given on the command line."""
        return f"{self.start}:{self.end}"

    @property
    def label(self) -> str:
        """``lines START-END`` (how plots, tables and certificates name the window)."""
        return f"lines {self.start}-{self.end}"


#: The window of the shared Mooncake trace that the public "19.645 %" claim is about: the
#: demand-fetch ceiling result states it, the pooled placement result replays it.
CLAIM_WINDOW = Window(1201, 2000)


# ----------------------------------------------------------------------------- reading


class _Request(msgspec.Struct):
    """The part of a request line the ceiling needs (other keys are ignored)."""

    hash_ids: list[Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)]]


#: A line's top-level keys, its values left unparsed (for :func:`check_unique_keys`).
_decode_keys = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def check_unique_keys(path: Path, lineno: int, line: bytes) -> None:
    """Raise :class:`TraceError` (``FILE:LINE``) if the JSON object ``line`` (already decoded
    once, so valid) has a key twice, in it or in an object nested in it.

    Fast path: a line whose double quotes are exactly two per distinct top-level key (every
    line of a Mooncake trace) has each key once, since a repeated key would add two quotes
    more; any other line is parsed again with the standard library, which names the key."""
    if line.count(b'"') == 2 * len(_decode_keys(line)):
        return
    try:
        json.loads(line.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        raise TraceError(f"{path}:{lineno}: duplicate key {exc.args[0]!r} (a key may appear "
                         "only once in an object)") from None
    except ValueError:  # not this check's to report (the typed decoder accepted the line)
        return


class _HashingReader(io.RawIOBase):
    """A raw reader that hashes every byte it hands out (SHA-256) and counts them."""

    def __init__(self, raw: io.RawIOBase) -> None:
        super().__init__()
        self._raw = raw
        self.digest = hashlib.sha256()
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = self._raw.readinto(buffer)
        if n:
            self.digest.update(memoryview(buffer)[:n])
            self.bytes_read += n
        return n or 0

    def drain(self) -> None:
        """Read (and hash) the rest of the file."""
        buf = bytearray(1 << 20)
        while self.readinto(buf):
            pass


@dataclass(frozen=True)
class ScanSummary:
    """What a scan of a trace file found, with the SHA-256 of all of the file's bytes."""

    path: Path
    sha256: str
    requests: int
    references: int
    lines: int  # lines read (to the window's end, or the whole file)
    window: Window | None = None


#: A sink receives the block ids of consecutive references, in order, as int64 arrays.
Sink = Callable[[np.ndarray], None]
#: A progress callback receives the number of bytes of the file read so far.
Progress = Callable[[int], None]


def require_regular_file(path: Path) -> None:
    """Raise :class:`TraceError` unless ``path`` is a regular file (links followed), before
    opening it: a FIFO with no writer would block the open for ever, and a pipe (``/dev/stdin``,
    ``<(cat trace)``) cannot be sampled or read twice as the readers may. A missing file is
    left for the open to report."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise TraceError(f"{path}: is a folder, not a trace file")
    if not stat.S_ISREG(mode):
        kind = ("a pipe or FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
        raise TraceError(f"{path}: needs a regular file, and this is {kind}; save the trace "
                         "to a file first (e.g. cat > trace.jsonl)")


def _open_raw(path: Path) -> io.RawIOBase:
    require_regular_file(path)
    try:
        return open(path, "rb", buffering=0)  # noqa: SIM115 (closed by the caller)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror or exc}") from None


def _bad_line(path: Path, lineno: int, line: bytes, exc: Exception) -> TraceError:
    """The precise error for a line msgspec rejected (the stdlib parser names it)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        return TraceError(f"{path}:{lineno}: not UTF-8 text ({err.reason})")
    try:
        _parse_line(path, lineno, text)
    except TraceError as err:
        return err
    return TraceError(f"{path}:{lineno}: {exc}")


def _lines(path: Path, reader: _HashingReader) -> Iterator[bytes]:
    """The file's lines (decompressed if it is gzip), read through the hashing reader."""
    buffered = io.BufferedReader(reader, buffer_size=1 << 20)
    if buffered.peek(2)[:2] != _GZIP_MAGIC:
        yield from buffered
        return
    try:
        yield from gzip.GzipFile(fileobj=buffered, mode="rb")
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TraceError(f"{path}: not a valid gzip file ({exc})") from None


def scan_trace(
    path: Path,
    sink: Sink | None = None,
    window: Window | None = None,
    progress: Progress | None = None,
    per_request: Callable[[int, list[int]], None] | None = None,
) -> ScanSummary:
    """Read and validate every line of ``path`` (or of ``window``), hand the references to
    ``sink`` in chunks of :data:`CHUNK_REFS`, and return the counts and the file's SHA-256.

    ``per_request(lineno, ids)``, if given, also receives each request. Raises
    :class:`TraceError` naming the file and the line for an empty line, malformed JSON, a
    line that is not an object, a missing or non-list ``hash_ids``, an id that is not a
    non-negative integer (booleans and floats are rejected), a window past the end of the
    file, or a file with no request.
    """
    path = Path(path)
    decode = msgspec.json.Decoder(_Request).decode
    raw = _open_raw(path)
    reader = _HashingReader(raw)
    buf: array[int] = array("q")
    extend = buf.fromlist  # hash_ids is a list (of validated int64s): the list's fast path
    requests = references = 0
    first, last = (window.start, window.end) if window else (1, 0)
    lineno = 0
    next_report = 1 << 22
    try:
        for lineno, line in enumerate(_lines(path, reader), start=1):  # noqa: B007
            if lineno < first:
                continue
            try:
                ids = decode(line).hash_ids
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise _bad_line(path, lineno, line, exc) from None
            check_unique_keys(path, lineno, line)
            requests += 1
            extend(ids)
            if per_request is not None:
                per_request(lineno, ids)
            if len(buf) >= CHUNK_REFS:
                references += len(buf)
                if sink is not None:
                    sink(np.frombuffer(buf, dtype=np.int64).copy())
                del buf[:]
                if progress is not None and reader.bytes_read >= next_report:
                    progress(reader.bytes_read)
                    next_report = reader.bytes_read + (1 << 22)
            if lineno == last:
                break
        if buf:
            references += len(buf)
            if sink is not None:
                sink(np.frombuffer(buf, dtype=np.int64).copy())
        reader.drain()
    finally:
        raw.close()
    if progress is not None:
        progress(reader.bytes_read)
    if window is not None and lineno < window.end:
        raise TraceError(f"{path}: window {window.spec} ends past the last line ({lineno})")
    if requests == 0:
        raise TraceError(f"{path}: no requests (empty trace)")
    return ScanSummary(path=path, sha256=reader.digest.hexdigest(), requests=requests,
                       references=references, lines=lineno, window=window)


def iter_requests(path: Path, window: Window | None = None) -> Iterator[list[int]]:
    """Yield each request's ``hash_ids``, validating every line of the JSONL file (or of the
    window); errors as :func:`scan_trace`."""
    path = Path(path)
    decode = msgspec.json.Decoder(_Request).decode
    raw = _open_raw(path)
    first, last = (window.start, window.end) if window else (1, 0)
    lineno = 0
    try:
        for lineno, line in enumerate(_lines(path, _HashingReader(raw)), start=1):  # noqa: B007
            if lineno < first:
                continue
            try:
                ids = decode(line).hash_ids
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise _bad_line(path, lineno, line, exc) from None
            check_unique_keys(path, lineno, line)
            yield ids
            if lineno == last:
                break
    finally:
        raw.close()
    if window is not None and lineno < window.end:
        raise TraceError(f"{path}: window {window.spec} ends past the last line ({lineno})")


def _parse_line(path: Path, lineno: int, line: str) -> list[int]:
    """The validated ``hash_ids`` of one line (the standard library's reading: slow, and
    precise about what is wrong)."""
    where = f"{path}:{lineno}"
    if not line.strip():
        raise TraceError(f"{where}: empty line (expected one JSON object a line)")
    if line.startswith("\ufeff"):
        raise TraceError(f"{where}: starts with a UTF-8 byte-order mark (BOM); a trace is "
                         "UTF-8 without one (remove the first 3 bytes)")
    try:
        obj = json.loads(line, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        said = (f"{exc.msg} column {exc.colno}" if exc.msg.endswith(" at")
                else f"{exc.msg} (column {exc.colno})")
        raise TraceError(f"{where}: malformed JSON: {said}") from None
    except _DuplicateKey as exc:
        raise TraceError(f"{where}: duplicate key {exc.args[0]!r} (a key may appear only once "
                         "in an object)") from None
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
        if value > MAX_ID:
            raise TraceError(f"{where}: hash_ids[{pos}] = {value} is above 2^63 - 1")
    return ids


@dataclass(frozen=True)
class Trace:
    """A trace's block-reference stream and the number of requests it came from."""

    path: Path
    requests: int
    stream: tuple[int, ...]
    window: Window | None = None


def load_trace(path: Path, window: Window | None = None) -> Trace:
    """Read and validate a trace; its stream is every request's ``hash_ids`` in file order
    (a tuple of Python ints: for small traces and reference checks; large ones go through
    :func:`scan_trace` and :func:`read_stream`)."""
    stream: list[int] = []
    requests = 0
    for ids in iter_requests(path, window):
        requests += 1
        stream.extend(ids)
    if requests == 0:
        raise TraceError(f"{path}: no requests (empty trace)")
    return Trace(path=Path(path), requests=requests, stream=tuple(stream), window=window)


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


@dataclass(frozen=True, eq=False)
class Stream:
    """A trace's block-reference stream as a numpy array (int32 when every id fits)."""

    summary: ScanSummary
    ids: np.ndarray


def read_stream(path: Path, window: Window | None = None,
                progress: Progress | None = None) -> Stream:
    """The reference stream of ``path`` (or of ``window``) as one numpy array."""
    chunks: list[np.ndarray] = []

    def keep(chunk: np.ndarray) -> None:
        small = chunk.size == 0 or int(chunk.max()) < 2**31
        chunks.append(chunk.astype(np.int32) if small else chunk)

    summary = scan_trace(path, keep, window, progress)
    dtype = np.int32 if all(c.dtype == np.int32 for c in chunks) else np.int64
    ids = np.concatenate(chunks).astype(dtype, copy=False) if chunks else np.zeros(0, dtype)
    return Stream(summary=summary, ids=ids)


def require_references(summary: ScanSummary) -> None:
    """Raise a clear error for a trace (or window) with no block reference at all."""
    if summary.references == 0:
        where = f"{summary.path} ({summary.window.label})" if summary.window else summary.path
        raise TraceError(f"{where}: no block references (every request's hash_ids is empty): "
                         "hit rates and the ceiling are undefined")


# ----------------------------------------------------------------------------- ceiling


def count_distinct(stream: Sequence[int] | np.ndarray) -> int:
    """Number of distinct blocks of a stream."""
    if isinstance(stream, np.ndarray):
        if stream.size == 0:
            return 0
        top = int(stream.max())
        if top < max(1 << 24, 8 * stream.size):
            seen = np.zeros(top + 1, dtype=np.bool_)
            seen[stream] = True
            return int(np.count_nonzero(seen))
        return int(np.unique(stream).size)
    return len(set(stream))


@dataclass(frozen=True)
class CeilingCounts:
    """The counts of a trace (or of a window of it) and its demand-fetch hit ceiling."""

    requests: int
    references: int
    distinct: int
    sha256: str
    window: Window | None = None

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
        window=trace.window,
    )


def ceiling_counts(path: Path, window: Window | None = None,
                   progress: Progress | None = None) -> CeilingCounts:
    """Requests, references, distinct blocks and SHA-256 of the trace at ``path`` (or of
    ``window`` of it; the SHA-256 is always the whole file's)."""
    stream = read_stream(path, window, progress)
    s = stream.summary
    return CeilingCounts(requests=s.requests, references=s.references,
                         distinct=count_distinct(stream.ids), sha256=s.sha256, window=window)
