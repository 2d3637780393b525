"""``pytools ceiling curve --semantics prefix``: the CSV of every capacity (equal to the library's
curve), the plot (with ``--plot``; the table alone otherwise, importing neither matplotlib nor
numba), the budgets printed, the options that need prefix semantics, and bad input ending in
one clear line with nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import missing

from pytools.results.ceiling.cli import main
from pytools.traces.prefix import compute_prefix_curve

REQUESTS = [(700, [0, 1]), (1100, [0, 1, 2]), (300, [0]), (1500, [0, 1, 3]), (900, [0, 1])]


def write(path: Path, requests: list[tuple[int, list[int]]]) -> Path:
    path.write_text("".join(json.dumps({"input_length": n, "hash_ids": ids}) + "\n"
                            for n, ids in requests), encoding="utf-8")
    return path


def run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(autouse=True)
def _in_process_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTOOLS_PLOT_WORKER", "0")


def rows(csv: Path) -> tuple[list[str], list[list[int]]]:
    lines = [line for line in csv.read_text().splitlines() if not line.startswith("#")]
    return lines[0].split(","), [[int(float(v)) for v in line.split(",")] for line in lines[1:]]


def test_prefix_csv_is_the_curve(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    out = tmp_path / "out"
    result = run("curve", trace, "--out", out, "--semantics", "prefix", "--warmup-fraction",
                 "0.4", "--budget", "2", "--budget", "1", "--plot")
    assert result.exit_code == 0, result.output
    _, curve = compute_prefix_curve(trace, "tokens", 0.4)
    head, body = rows(out / "prefix.csv")
    assert head == ["capacity", "lru_hit_tokens", "measured_tokens", "flat_lru_hit_tokens"]
    assert [r[0] for r in body] == list(range(1, curve.distinct + 1))
    assert [r[1] for r in body] == curve.hits.tolist()
    assert {r[2] for r in body} == {curve.measured}
    assert curve.warmup_requests == 2 and curve.measured == 300 + 1500 + 900
    assert f"capacity 2 blocks: {curve.at(2)} tokens" in result.output
    assert "(below the longest request: flat LRU)" in result.output  # 1 < 3 blocks
    assert (out / "prefix.svg").read_bytes().startswith(b"<?xml")
    assert (out / "prefix.png").read_bytes()[:4] == b"\x89PNG"
    assert "# sha256: " in (out / "prefix.csv").read_text()


def test_blocks_and_bytes(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    out = tmp_path / "out"
    result = run("curve", trace, "--out", out, "--semantics", "prefix", "--weight", "blocks",
                 "--bytes-per-token", "2", "--budget", "0.000003GiB")
    assert result.exit_code == 0, result.output
    head, body = rows(out / "prefix.csv")
    assert head == ["capacity", "lru_hit_blocks", "measured_blocks", "flat_lru_hit_blocks",
                    "capacity_bytes"]
    assert [r[4] for r in body] == [c * 512 * 2 for c in range(1, len(body) + 1)]
    assert {r[2] for r in body} == {11}
    assert "capacity 3 blocks (3e-06 GiB)" in result.output  # floor(3221.2 / 1024)


@pytest.mark.parametrize("option", [["--weight", "blocks"], ["--warmup-fraction", "0.5"],
                                    ["--bytes-per-token", "2"], ["--budget", "3"]])
def test_prefix_options_need_prefix_semantics(tmp_path: Path, option: list[str]) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    result = run("curve", trace, "--out", tmp_path / "out", *option)
    assert result.exit_code == 2 and "need --semantics prefix" in result.output
    assert not (tmp_path / "out").exists()


def test_bad_input_is_one_line_and_nothing_written(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.jsonl", [*REQUESTS, (5000, [0, 1])])
    out = tmp_path / "out"
    result = run("curve", trace, "--out", out, "--semantics", "prefix")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1].startswith(f"Error: {trace}:6: input_length 5000")
    assert "Traceback" not in result.output and not out.exists()
    gib = run("curve", trace, "--out", out, "--semantics", "prefix", "--budget", "1GiB")
    assert gib.exit_code == 2 and "needs --bytes-per-token" in gib.output
    neg = run("curve", trace, "--out", out, "--semantics", "prefix", "--budget", "x")
    assert neg.exit_code == 2 and "expected blocks" in neg.output


def test_help_says_flat_is_the_default() -> None:
    result = run("curve", "--help")
    assert "flat (the default)" in result.output and "--semantics [flat|prefix]" in result.output


def test_the_table_alone_unless_a_plot_is_asked(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    alone, drawn = tmp_path / "alone", tmp_path / "drawn"
    args = ("curve", trace, "--semantics", "prefix", "--bytes-per-token", "2")
    assert run(*args, "--out", alone).exit_code == 0
    assert run(*args, "--out", drawn, "--plot").exit_code == 0
    assert sorted(p.name for p in alone.iterdir()) == ["prefix.csv"]
    assert sorted(p.name for p in drawn.iterdir()) == ["prefix.csv", "prefix.png", "prefix.svg"]
    assert (alone / "prefix.csv").read_bytes() == (drawn / "prefix.csv").read_bytes()


def test_flat_no_plot_writes_the_same_table(tmp_path: Path) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    alone, drawn = tmp_path / "alone", tmp_path / "drawn"
    assert run("curve", trace, "--out", alone, "--no-plot").exit_code == 0
    assert run("curve", trace, "--out", drawn).exit_code == 0
    assert sorted(p.name for p in alone.iterdir()) == ["curve.csv"]
    assert sorted(p.name for p in drawn.iterdir()) == ["curve.csv", "curve.png", "curve.svg"]
    assert (alone / "curve.csv").read_bytes() == (drawn / "curve.csv").read_bytes()


#: Runs the command in a fresh interpreter and prints which heavy modules it imported.
MODULES_PROBE = """
import sys
from pytools.results.ceiling.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print(" ".join(m for m in ("matplotlib", "numba") if m in sys.modules))
"""


@pytest.mark.parametrize(("extra", "kernel", "imported"), [
    ((), "c", ""),  # the fast path: neither
    (("--plot",), "c", "matplotlib"),  # planted: the probe sees what a plot imports
    ((), "numba", "numba"),  # planted: and what the fallback kernel imports
])
def test_the_table_alone_imports_neither_matplotlib_nor_numba(
        tmp_path: Path, extra: tuple[str, ...], kernel: str, imported: str) -> None:
    trace = write(tmp_path / "t.jsonl", REQUESTS)
    env = {**os.environ, "PYTOOLS_PREFIX_KERNEL": kernel, "PYTOOLS_PLOT_WORKER": "0"}
    done = subprocess.run([sys.executable, "-c", MODULES_PROBE, "curve", str(trace), "--out",
                           str(tmp_path / "out"), "--semantics", "prefix", *extra],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    if done.returncode != 0 and "C compiler" in done.stderr:
        missing(f"the C kernel cannot be built: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == imported
