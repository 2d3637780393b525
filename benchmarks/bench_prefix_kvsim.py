"""Benchmark: the whole prefix curve against one budget of the trace authors' simulator.

A script, not a test: ``pytools ceiling curve --semantics prefix --weight tokens
--warmup-fraction 0.5`` as a process (interpreter start, imports, parse, the radix-LRU prefix
hits at every capacity, ``prefix.csv`` of every capacity and both plots written) against
``kvcache-simulator run`` (0.1.3, ``.ci/kvsim``) as a process for one LRU budget (its C++
backend, compiled before the timed runs), on the same trace.

    python benchmarks/bench_prefix_kvsim.py [--trace PATH] [--gib 64] [--repeat 5]
                                            [--kvsim .venv-kvsim/bin/kvcache-simulator]

Default trace: the shared Mooncake trace (read where it is, never copied). One untimed run of
each first (numba's kernels and the simulator's C++ backend compile once per machine), then
``--repeat`` interleaved runs of both; printed: medians of wall and CPU time (user + system of
the process and its children), the ratio curve / one budget (goal: below 1), the load average
around the runs, and a cross-check that the curve's token hits at the budget's capacity equal
the simulator's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_curve_cli import timed  # noqa: E402

from pytools.paths import mooncake_trace, sha256_file  # noqa: E402

MODEL = "deepseek-v3"


def curve_hits_at(csv_path: Path, capacity: int) -> int:
    """``lru_hit_tokens`` of ``prefix.csv`` at ``capacity``."""
    with open(csv_path, encoding="ascii") as handle:
        for line in handle:
            if line[:1].isdigit():
                k, hits, *_ = line.split(",")
                if int(k) == capacity:
                    return int(hits)
    raise SystemExit(f"{csv_path}: no row for capacity {capacity}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--gib", type=float, default=64.0,
                        help="the simulator's one budget (GiB; 64: 1,909 blocks)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kvsim", type=Path, default=ROOT / ".venv-kvsim/bin/kvcache-simulator")
    args = parser.parse_args()
    trace = (args.trace or mooncake_trace(ROOT)).resolve()
    if not args.kvsim.is_file():
        raise SystemExit(f"{args.kvsim}: no kvcache-simulator (bash .ci/kvsim/install.sh)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory(prefix="bench-prefix-kvsim-") as tmpdir:
        tmp = Path(tmpdir)
        print(f"trace: {trace}")
        print(f"sha256: {sha256_file(trace)}")

        def kvsim_cmd(i: int) -> list[str]:
            return [str(args.kvsim), "run", "--trace", str(trace), "--model", MODEL,
                    "--block-size", "512", "--policies", "lru", "--budgets-gib",
                    f"{args.gib:g}", "--format", "json", "--no-progress",
                    "--output", str(tmp / f"kvsim{i}.json")]

        def curve_cmd(i: int) -> list[str]:
            return [sys.executable, "-m", "pytools", "ceiling", "curve", str(trace), "--out",
                    str(tmp / f"out{i}"), "--semantics", "prefix", "--weight", "tokens",
                    "--warmup-fraction", "0.5", "--quiet"]

        timed(kvsim_cmd(0), ROOT, env)  # compiles the C++ backend on a fresh machine
        timed(curve_cmd(0), ROOT, env)  # compiles numba's kernels on a fresh checkout
        result = json.loads((tmp / "kvsim0.json").read_text())
        (point,) = result["points"]
        blocks, lru = point["cacheBlocks"], point["results"]["lru"]
        ours = curve_hits_at(tmp / "out0" / "prefix.csv", blocks)
        if ours != lru["hitTokens"]:
            print(f"check FAILED at {blocks} blocks: curve {ours:,} tokens, simulator "
                  f"{lru['hitTokens']:,}")
            return 1
        print(f"check: {args.gib:g} GiB = {blocks:,} blocks ({MODEL}): {ours:,} of "
              f"{lru['totalTokens']:,} measured tokens in both")
        load0 = os.getloadavg()
        runs: dict[str, list[tuple[float, float]]] = {"kvsim": [], "curve": []}
        for i in range(1, args.repeat + 1):
            runs["kvsim"].append(timed(kvsim_cmd(i), ROOT, env)[:2])
            runs["curve"].append(timed(curve_cmd(i), ROOT, env)[:2])
            if not (tmp / f"out{i}" / "prefix.png").is_file():
                print(f"run {i}: the plot was not drawn")
                return 1
        load1 = os.getloadavg()
        med = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
               for name, r in runs.items()}
        for name, r in runs.items():
            print(f"{name}: wall " + " ".join(f"{w:.2f}" for w, _ in r) + "  cpu " +
                  " ".join(f"{c:.2f}" for _, c in r))
        wall = med["curve"][0] / med["kvsim"][0]
        cpu = med["curve"][1] / med["kvsim"][1]
        print(f"medians of {args.repeat}: whole prefix curve {med['curve'][0]:.2f} s wall, "
              f"{med['curve'][1]:.2f} s CPU; simulator, one LRU budget {med['kvsim'][0]:.2f} s "
              f"wall, {med['kvsim'][1]:.2f} s CPU")
        print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after, "
              f"on {os.cpu_count()} cores")
        print(f"ratio whole curve / one budget: wall {wall:.2f}x, CPU {cpu:.2f}x "
              f"(goal below 1x: {'met' if wall < 1 else 'MISSED'})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
