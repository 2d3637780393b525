"""Benchmark: the whole prefix curve against one budget of the trace authors' simulator.

A script, not a test: ``pytools ceiling curve --semantics prefix --weight tokens
--warmup-fraction 0.5`` as a process (interpreter start, imports, parse, the radix-LRU prefix
hits at every capacity, ``prefix.csv`` of every capacity written) against ``kvcache-simulator
run`` (0.1.3, ``.ci/kvsim``) as a process for one LRU budget (its C++ backend, compiled before
the timed runs), on the same trace; and, for information, the same command with ``--plot``
(``prefix.svg`` and ``prefix.png`` drawn too, matplotlib imported in a forked worker).

    python benchmarks/bench_prefix_kvsim.py [--trace PATH] [--gib 64] [--repeat 5]
                                            [--kvsim .venv-kvsim/bin/kvcache-simulator]

Default trace: the shared Mooncake trace (read where it is, never copied). One untimed run of
each first (the prefix pass's C kernel, numba's kernels where it falls back to them, and the
simulator's C++ backend compile once per machine), then ``--repeat`` interleaved rounds of the
three; printed: which kernel the curve's pass uses, every run's wall and CPU time (user +
system of the process and its children), their medians, the ratios curve / one budget (goal:
below 1), the load average around the runs, and a cross-check that the curve's token hits at
the budget's capacity equal the simulator's.
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

#: Prints the kernel the curve's pass uses here (``c``, or ``numba`` where C cannot be built).
KERNEL_PROBE = "from pytools.traces.prefix_kernel import prefix_pass; print(prefix_pass()[0])"

LABELS = {"kvsim": "simulator, one LRU budget", "curve": "whole prefix curve (prefix.csv)",
          "plot": "whole prefix curve with --plot"}


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

        def curve_cmd(i: int, *extra: str) -> list[str]:
            return [sys.executable, "-m", "pytools", "ceiling", "curve", str(trace), "--out",
                    str(tmp / f"out{i}"), "--semantics", "prefix", "--weight", "tokens",
                    "--warmup-fraction", "0.5", "--quiet", *extra]

        timed(kvsim_cmd(0), ROOT, env)  # compiles the C++ backend on a fresh machine
        timed(curve_cmd(0), ROOT, env)  # compiles the C kernel on a fresh machine
        timed(curve_cmd(-1, "--plot"), ROOT, env)  # and the plot worker's first run
        kernel = timed([sys.executable, "-c", KERNEL_PROBE], ROOT, env)[2].strip()
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
        print(f"the prefix pass's kernel: {kernel}")
        load0 = os.getloadavg()
        runs: dict[str, list[tuple[float, float]]] = {"kvsim": [], "curve": [], "plot": []}
        for i in range(1, args.repeat + 1):
            runs["kvsim"].append(timed(kvsim_cmd(i), ROOT, env)[:2])
            runs["curve"].append(timed(curve_cmd(i), ROOT, env)[:2])
            runs["plot"].append(timed(curve_cmd(args.repeat + i, "--plot"), ROOT, env)[:2])
            if sorted(p.name for p in (tmp / f"out{i}").iterdir()) != ["prefix.csv"]:
                print(f"run {i}: the table alone was expected")
                return 1
            if not (tmp / f"out{args.repeat + i}" / "prefix.png").is_file():
                print(f"run {i}: the plot was not drawn")
                return 1
        load1 = os.getloadavg()
        med = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
               for name, r in runs.items()}
        for name, r in runs.items():
            print(f"{LABELS[name]}: wall " + " ".join(f"{w:.2f}" for w, _ in r) + "  cpu " +
                  " ".join(f"{c:.2f}" for _, c in r))
        print(f"medians of {args.repeat} (wall, CPU): " + "; ".join(
            f"{LABELS[name]} {w:.2f} s, {c:.2f} s" for name, (w, c) in med.items()))
        print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after, "
              f"on {os.cpu_count()} cores")
        for name in ("curve", "plot"):
            wall = med[name][0] / med["kvsim"][0]
            cpu = med[name][1] / med["kvsim"][1]
            goal = f" (goal below 1x: {'met' if wall < 1 else 'MISSED'})" if name == "curve" \
                else ""
            print(f"ratio {LABELS[name]} / one budget: wall {wall:.2f}x, CPU {cpu:.2f}x{goal}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
