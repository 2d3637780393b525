"""Issue 42, rows 8, 9 and 11: every trace reader refuses a line with a duplicate key (naming
FILE:LINE) instead of reading its last value, and refuses what is not a regular file (a pipe,
a FIFO with no writer) at once instead of misreading or hanging. Each test is a planted
defect that today's code let through."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytools.traces.prefix import read_prefix_trace
from pytools.traces.trace import (
    TraceError,
    ceiling_counts,
    load_trace,
    read_trace,
    scan_trace,
)

GOOD = b'{"timestamp": 0, "input_length": 700, "hash_ids": [0, 1]}\n'

READERS: dict[str, Callable[[Path], Any]] = {
    "scan_trace": scan_trace,
    "ceiling_counts": ceiling_counts,
    "load_trace (iter_requests)": load_trace,
    "read_trace": read_trace,
    "read_prefix_trace": read_prefix_trace,
}

DUPLICATES = {
    "hash_ids": (b'{"hash_ids":[1,2],"hash_ids":[3]}', "hash_ids"),
    "another key": (b'{"input_length": 700, "hash_ids": [4, 5], "input_length": 9}',
                    "input_length"),
    "nested": (b'{"input_length": 700, "hash_ids": [6, 7], "meta": {"a": 1, "a": 2}}', "a"),
    "spaced": (b'{"hash_ids" : [1, 2], "input_length": 700, "hash_ids" : [3]}', "hash_ids"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(DUPLICATES))
def test_row11_a_duplicate_key_is_refused_with_file_and_line(tmp_path: Path, reader: str,
                                                            case: str) -> None:
    """Row 11: ``{"hash_ids":[1,2],"hash_ids":[3]}`` on line 2, refused by every reader."""
    line, key = DUPLICATES[case]
    path = tmp_path / "t.jsonl"
    path.write_bytes(GOOD + line + b"\n" + GOOD)
    with pytest.raises(TraceError) as info:
        READERS[reader](path)
    assert str(info.value) == (f"{path}:2: duplicate key {key!r} (a key may appear only once "
                               "in an object)")


def test_row11_gzip_and_a_window_refuse_it_too(tmp_path: Path) -> None:
    """Row 11: the same in a gzip file and inside a window."""
    from pytools.traces.trace import Window

    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(GOOD + GOOD + DUPLICATES["hash_ids"][0] + b"\n"))
    with pytest.raises(TraceError, match=r"t\.jsonl\.gz:3: duplicate key 'hash_ids'"):
        scan_trace(path, window=Window(2, 3))


def test_row11_lines_with_strings_and_objects_still_read(tmp_path: Path) -> None:
    """The exact (slow) path accepts what has no duplicate: strings, nested objects, keys
    with escaped quotes."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"id": "a\\"b", "hash_ids": [0, 1], "meta": {"a": 1, "b": {"a": 2}}}\n'
                     + GOOD)
    assert scan_trace(path).references == 4
    assert load_trace(path).stream == (0, 1, 0, 1)


def test_row11_the_duckdb_shard_reader_refuses_it(tmp_path: Path) -> None:
    """Row 11, the folder reader: DuckDB refuses the duplicate and the error names the
    file and its line."""
    from pytools.results.ceiling.scale import duckdb_counts

    (tmp_path / "a.jsonl").write_bytes(GOOD + DUPLICATES["hash_ids"][0] + b"\n")
    with pytest.raises(TraceError) as info:
        duckdb_counts(tmp_path)
    assert "a.jsonl" in str(info.value) and "line 2" in str(info.value)
    assert "duplicate key" in str(info.value)


# ----------------------------------------------------------------------------- rows 8, 9

ROOT = Path(__file__).resolve().parent.parent
TRACE = GOOD * 3


def _pytools(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m pytools ARGS`` from this checkout, killed after 60 s (a hang fails)."""
    return subprocess.run([sys.executable, "-m", "pytools", *args], cwd=ROOT,
                          input=stdin if stdin is not None else b"", capture_output=True,
                          timeout=60, check=False)


@pytest.mark.parametrize("command", ["count", "curve", "sweep", "curve --semantics prefix"])
def test_row9_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path: Path,
                                                            command: str) -> None:
    """Row 9: ``ceiling count FIFO`` (no writer) hung for ever; now one line, exit 1."""
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    words = command.split()
    out = ["--out", str(tmp_path / "out")] if words[0] != "count" else []
    done = _pytools("ceiling", words[0], str(fifo), *out, *words[1:])
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert err.strip().splitlines() == [
        f"Error: {fifo}: needs a regular file, and this is a pipe or FIFO; save the trace to "
        "a file first (e.g. cat > trace.jsonl)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["curve", "sweep"])
def test_row8_a_pipe_says_it_needs_a_regular_file(tmp_path: Path, command: str) -> None:
    """Row 8: ``ceiling curve /dev/stdin`` (a pipe holding a valid trace) said "malformed
    JSON: Extra data" (it sampled the pipe, then read the rest); now it says what it needs."""
    done = _pytools("ceiling", command, "/dev/stdin", "--out", str(tmp_path / "out"),
                    stdin=TRACE)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "/dev/stdin: needs a regular file, and this is a pipe or FIFO" in err
    assert "malformed JSON" not in err and len(err.strip().splitlines()) == 1


def test_row8_a_process_substitution_pipe_is_refused_in_the_library(tmp_path: Path) -> None:
    """Row 8, ``<(cat trace)``: a /dev/fd/N pipe, through the library."""
    from pytools.traces.curve import compute_curve

    read, write = os.pipe()
    try:
        os.write(write, TRACE)
        os.close(write)
        with pytest.raises(TraceError, match="needs a regular file, and this is a pipe"):
            compute_curve(Path(f"/dev/fd/{read}"))
    finally:
        os.close(read)


def test_row8_stdin_redirected_from_a_file_still_works(tmp_path: Path) -> None:
    """``ceiling count /dev/stdin < trace.jsonl``: a regular file behind the link."""
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(TRACE)
    with open(trace, "rb") as handle:
        done = subprocess.run([sys.executable, "-m", "pytools", "ceiling", "count",
                               "/dev/stdin"], cwd=ROOT, stdin=handle, capture_output=True,
                              timeout=60, check=False, text=True)
    assert done.returncode == 0, done.stderr
    assert "references: 6" in done.stdout
