"""The command line of ``pytools ceiling`` on good and bad input: windows, ``.jsonl.gz``,
provenance in every output, the progress bar, and bad input ending in one clear line, a
non-zero exit and nothing half-written."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pytools.results.ceiling import plot as plot_module
from pytools.results.ceiling.cli import main
from pytools.traces.progress import progress_bar
from pytools.traces.trace import Window, ceiling_counts

LINES = [
    '{"timestamp": 0, "hash_ids": [0, 1, 2]}',
    '{"timestamp": 1, "hash_ids": [0, 3]}',
    '{"timestamp": 2, "hash_ids": [0, 1, 4, 5]}',
    '{"timestamp": 3, "hash_ids": [1, 3]}',
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def fails_cleanly(result: Result, *needles: str) -> None:
    """Exit status 1, one `Error:` line (the last) naming the problem, no traceback."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert lines[-1].startswith("Error: "), result.output
    assert sum(line.startswith("Error") for line in lines) == 1, result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


def no_leftovers(folder: Path) -> None:
    """No temporary folder or file left beside the outputs."""
    assert not [p for p in folder.iterdir() if p.name.startswith(".")], list(folder.iterdir())


# ----------------------------------------------------------------------------- windows


def test_window_counts_and_header(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    c = ceiling_counts(p, Window(2, 3))
    assert (c.requests, c.references, c.distinct) == (2, 6, 5)
    r = run("count", p, "--window", "2:3")
    assert r.exit_code == 0, r.output
    assert f"file: {p}\nsha256: {hashlib.sha256(p.read_bytes()).hexdigest()}\n" in r.output
    assert "window: lines 2-3" in r.output and "references: 6\n" in r.output
    assert "ceiling: 1/6 (16.6667 %)" in r.output


@pytest.mark.parametrize(("spec", "needle"), [
    ("3:2", "need 1 <= START <= END"), ("0:2", "need 1 <= START"), ("2", "expected START:END"),
    ("a:b", "expected START:END")])
def test_bad_window_syntax(tmp_path: Path, spec: str, needle: str) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    r = run("count", p, "--window", spec)
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("command", ["count", "simulate", "curve"])
def test_window_past_the_end(tmp_path: Path, command: str) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    extra = {"simulate": ["-k", "2"], "curve": ["--out", tmp_path / "out"]}.get(command, [])
    fails_cleanly(run(command, p, "--window", "3:9", *extra),
                  f"{p}: window 3:9 ends past the last line (4)")
    assert not (tmp_path / "out").exists()


def test_bad_line_inside_the_window_is_named_outside_is_not_read(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", [*LINES, "{oops"])
    assert run("count", p, "--window", "1:4").exit_code == 0
    fails_cleanly(run("count", p, "--window", "2:5"), f"{p}:5: malformed JSON")


def test_claims_window_on_the_shared_trace(trace_path: Path) -> None:
    r = run("count", trace_path, "--window", "1201:2000")
    assert r.exit_code == 0, r.output
    for line in ("requests: 800", "references: 21069", "distinct: 16930", "max_hits: 4139",
                 "ceiling: 4139/21069 (19.6450 %)"):
        assert line + "\n" in r.output


# ----------------------------------------------------------------------------- gzip


def test_jsonl_gz_is_read_directly(tmp_path: Path) -> None:
    plain = write(tmp_path / "t.jsonl", LINES)
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    a, b = ceiling_counts(plain), ceiling_counts(gz)
    assert (a.requests, a.references, a.distinct) == (b.requests, b.references, b.distinct)
    assert b.sha256 == hashlib.sha256(gz.read_bytes()).hexdigest()  # the file as stored
    r = run("simulate", gz, "-k", "2", "--window", "2:4")
    assert r.exit_code == 0 and "lru:" in r.output


def test_corrupt_and_truncated_gz(tmp_path: Path) -> None:
    data = gzip.compress(("\n".join(LINES * 50) + "\n").encode(), mtime=0)
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(data[:10] + bytes(b ^ 0xFF for b in data[10:40]) + data[40:])
    fails_cleanly(run("count", bad), f"{bad}: not a valid gzip file")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    fails_cleanly(run("count", cut), f"{cut}: not a valid gzip file")


# ----------------------------------------------------------------------------- bad input


def test_sweep_on_a_missing_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    fails_cleanly(run("sweep", tmp_path / "absent.jsonl", "--out", out),
                  "absent.jsonl: cannot read trace")
    assert not out.exists()


@pytest.mark.parametrize("command", ["count", "simulate", "sweep", "curve"])
def test_hash_ids_all_empty(tmp_path: Path, command: str) -> None:
    p = write(tmp_path / "empty-ids.jsonl", ['{"hash_ids": []}'] * 3)
    extra = {"simulate": ["-k", "4"], "sweep": ["--out", tmp_path / "out"],
             "curve": ["--out", tmp_path / "out"]}.get(command, [])
    fails_cleanly(run(command, p, *extra), f"{p}", "no block references")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["sweep", "curve"])
def test_out_under_a_regular_file(tmp_path: Path, command: str) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    fails_cleanly(run(command, p, "--out", blocker / "sub"), f"{blocker} is a regular file")
    r = run(command, p, "--out", blocker)  # click's own check: a usage error, exit 2
    assert r.exit_code == 2 and "is a file" in r.output and "Traceback" not in r.output
    assert blocker.read_text() == "x"
    no_leftovers(tmp_path)


@pytest.mark.parametrize("worker", ["1", "0"], ids=["plot-worker", "in-process"])
@pytest.mark.parametrize("command", ["sweep", "curve"])
@pytest.mark.parametrize("existing", [False, True])
def test_a_failed_third_output_leaves_nothing(tmp_path: Path, monkeypatch, command: str,
                                              existing: bool, worker: str) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    out = tmp_path / "out"
    if existing:
        out.mkdir()
        (out / f"{command}.csv").write_text("old\n")
    real = plot_module.save_plot

    def png_fails(*args, **kwargs):  # type: ignore[no-untyped-def]
        if args[2] == "png":
            raise RuntimeError("renderer exploded")
        return real(*args, **kwargs)

    monkeypatch.setenv("PYTOOLS_PLOT_WORKER", worker)
    monkeypatch.setattr(plot_module, "save_plot", png_fails)  # before the worker forks
    fails_cleanly(run(command, p, "--out", out), f"{out / (command + '.png')}: could not be "
                  "written", "renderer exploded", "nothing was written")
    if existing:
        assert sorted(q.name for q in out.iterdir()) == [f"{command}.csv"]
        assert (out / f"{command}.csv").read_text() == "old\n"
    else:
        assert not out.exists()
    no_leftovers(tmp_path)


def test_bad_line_names_file_and_line_in_every_command(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", [LINES[0], '{"hash_ids": [1, -3]}'])
    for args in (["count"], ["simulate", "-k", "1"], ["curve", "--out", tmp_path / "o"],
                 ["sweep", "--out", tmp_path / "o"]):
        fails_cleanly(run(args[0], p, *args[1:]), f"{p}:2: hash_ids[1] = -3 is not a "
                      "non-negative integer")
    assert not (tmp_path / "o").exists()


def test_folder_given_as_file(tmp_path: Path) -> None:
    r = run("count", tmp_path)
    assert r.exit_code == 2 and "Traceback" not in r.output  # click: "is a directory"


# ----------------------------------------------------------------------------- outputs


def test_curve_outputs_name_their_source(tmp_path: Path) -> None:
    p = write(tmp_path / "my-trace.jsonl", LINES)
    sha = hashlib.sha256(p.read_bytes()).hexdigest()
    r = run("curve", p, "--out", tmp_path / "a", "--window", "1:3")
    assert r.exit_code == 0, r.output
    assert f"sha256: {sha}" in r.output
    csv_lines = (tmp_path / "a" / "curve.csv").read_text().splitlines()
    assert csv_lines[:4] == [f"# source: {p}", f"# sha256: {sha}",
                             "# window: lines 1-3 (1-based, inclusive)",
                             "capacity,lru_hits,opt_hits"]
    rows = [tuple(map(int, line.split(","))) for line in csv_lines[4:]]
    assert [r[0] for r in rows] == list(range(1, 7))  # one row per capacity 1..distinct
    assert rows[-1][1:] == (3, 3)
    svg = (tmp_path / "a" / "curve.svg").read_text()
    assert sha in svg and "my-trace.jsonl" in svg and "Mooncake" not in svg
    png = (tmp_path / "a" / "curve.png").read_bytes()
    assert sha.encode() in png and b"my-trace.jsonl" in png
    for line in r.output.splitlines():
        if line.startswith("wrote "):
            path, digest = line[6:].split("  sha256 ")
            assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    # byte-deterministic
    assert run("curve", p, "--out", tmp_path / "b", "--window", "1:3").exit_code == 0
    for name in ("curve.csv", "curve.svg", "curve.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_simulate_prints_source_and_agrees_with_curve(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", LINES)
    r = run("simulate", p, "-k", "3")
    assert r.exit_code == 0, r.output
    assert f"sha256: {hashlib.sha256(p.read_bytes()).hexdigest()}" in r.output
    from pytools.traces.curve import compute_curve

    lru, opt = compute_curve(p)[1].at(3)
    assert (lru, opt) == (3, 5)
    assert f"lru: {lru} hits" in r.output and f"belady: {opt} hits" in r.output


# ----------------------------------------------------------------------------- progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_after_the_delay(tmp_path: Path) -> None:
    p = write(tmp_path / "t.jsonl", LINES * 100)
    size = os.path.getsize(p)
    now = [0.0]
    tty = FakeTTY()
    with progress_bar(p, quiet=False, stream=tty, delay=2.0, clock=lambda: now[0]) as update:
        assert update is not None
        update(size // 4)
        assert tty.getvalue() == ""  # nothing before the delay
        now[0] = 3.0
        update(size // 2)
        update(size)
    assert "reading t.jsonl" in tty.getvalue() and "100%" in tty.getvalue()
    with progress_bar(p, quiet=True, stream=FakeTTY()) as update:
        assert update is None
    with progress_bar(p, quiet=False, stream=io.StringIO()) as update:
        assert update is None  # not a terminal
