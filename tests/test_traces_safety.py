"""Issue 42, rows 8, 9 and 11: every trace reader refuses a line with a duplicate key (naming
FILE:LINE) instead of reading its last value, and refuses what is not a regular file (a pipe,
a FIFO with no writer) at once instead of misreading or hanging. Each test is a planted
defect that today's code let through."""

from __future__ import annotations

import gzip
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
