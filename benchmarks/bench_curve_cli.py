"""Benchmark of ``pytools ceiling curve`` end to end, as a user runs it.

A script, not a test: the command as a process (interpreter start, imports, parse, LRU and
OPT at every capacity, the CSV of every capacity and both plots written) against a minimal
OrderedDict LRU script as a process (stdlib ``json`` parse, one LRU at one capacity, nothing
written), on the same trace.

    python benchmarks/bench_curve_cli.py [--trace PATH] [--refs 2000000] [--repeat 5]
                                         [--root CHECKOUT]

Without ``--trace`` a Mooncake-shaped synthetic trace of ``--refs`` references (seed 7) is
written to a temporary folder (never into the project); ``--trace`` reads a file where it is
(the shared trace is never copied). ``--root`` times the command of another checkout (for a
before/after figure; default: this one). One untimed run of each first (it compiles numba's
kernels on a fresh checkout), then ``--repeat`` interleaved runs of both; printed: medians of
wall time and of CPU time (user + system, from ``getrusage`` of the children), their ratios
(aim: at most 2x), the load average around the runs (other work shares the machine), and a
cross-check that the curve's LRU hits at ``--capacity`` equal the script's.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytools.paths import sha256_file  # noqa: E402
from pytools.traces.synth import write_mooncake_like  # noqa: E402

AIM_RATIO = 2.0

#: The baseline, run as its own process: parse with json, one OrderedDict LRU, print hits.
OD_SCRIPT = textwrap.dedent("""
    import json, sys
    from collections import OrderedDict
    path, capacity = sys.argv[1], int(sys.argv[2])
    stream = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            stream.extend(json.loads(line)["hash_ids"])
    cache = OrderedDict()
    hits = 0
    for block in stream:
        if block in cache:
            hits += 1
            cache.move_to_end(block)
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
    print(hits)
""")


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``cmd``; its wall seconds, CPU seconds (user + system) and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def curve_hits_at(csv_path: Path, capacity: int) -> tuple[int, int]:
    """``(lru, opt)`` hits of ``curve.csv`` at ``capacity``."""
    with open(csv_path, encoding="ascii") as handle:
        for line in handle:
            if line[:1].isdigit():
                k, lru, opt = line.split(",")
                if int(k) == capacity:
                    return int(lru), int(opt)
    raise SystemExit(f"{csv_path}: no row for capacity {capacity}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--refs", type=int, default=2_000_000)
    parser.add_argument("--capacity", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="checkout whose `pytools ceiling curve` is timed")
    args = parser.parse_args()
    root = args.root.resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory(prefix="bench-curve-cli-") as tmpdir:
        tmp = Path(tmpdir)
        trace = (args.trace.resolve() if args.trace
                 else write_mooncake_like(tmp / "synthetic.jsonl", args.refs, seed=7))
        script = tmp / "od_lru.py"
        script.write_text(OD_SCRIPT, encoding="utf-8")
        print(f"trace: {trace}")
        print(f"sha256: {sha256_file(trace)}")
        print(f"command timed: pytools ceiling curve, as {sys.executable} -m pytools ceiling "
              f"curve (checkout {root})")
        od_cmd = [sys.executable, str(script), str(trace), str(args.capacity)]

        def curve_cmd(i: int) -> list[str]:
            return [sys.executable, "-m", "pytools", "ceiling", "curve", str(trace),
                    "--out", str(tmp / f"out{i}"), "--quiet"]

        # untimed first runs: numba compiles the kernels once per checkout
        _, _, od_out = timed(od_cmd, root, env)
        _, _, curve_out = timed(curve_cmd(0), root, env)
        print(curve_out.strip().splitlines()[-4])  # references, distinct, ceiling
        od_hits = int(od_out.strip())
        lru_hits, opt_hits = curve_hits_at(tmp / "out0" / "curve.csv", args.capacity)
        if lru_hits != od_hits:
            print(f"check FAILED: curve LRU hits at {args.capacity} = {lru_hits:,}, "
                  f"OrderedDict script {od_hits:,}")
            return 1
        print(f"check: LRU hits at {args.capacity} = {od_hits:,} in both; OPT {opt_hits:,}")
        load0 = os.getloadavg()
        runs: dict[str, list[tuple[float, float]]] = {"od": [], "curve": []}
        for i in range(1, args.repeat + 1):
            runs["od"].append(timed(od_cmd, root, env)[:2])
            runs["curve"].append(timed(curve_cmd(i), root, env)[:2])
            plots = [tmp / f"out{i}" / f"curve.{ext}" for ext in ("svg", "png")]
            if not all(p.is_file() and p.stat().st_size > 0 for p in plots):
                print(f"run {i}: the plots were not drawn")
                return 1
        load1 = os.getloadavg()
        med = {name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
               for name, r in runs.items()}
        wall_ratio = med["curve"][0] / med["od"][0]
        cpu_ratio = med["curve"][1] / med["od"][1]
        for name, r in runs.items():
            print(f"{name}: wall " + " ".join(f"{w:.2f}" for w, _ in r) + "  cpu " +
                  " ".join(f"{c:.2f}" for _, c in r))
        print(f"medians of {args.repeat}: curve {med['curve'][0]:.2f} s wall, "
              f"{med['curve'][1]:.2f} s CPU; OrderedDict script {med['od'][0]:.2f} s wall, "
              f"{med['od'][1]:.2f} s CPU")
        print(f"load average (1 min) {load0[0]:.2f} before, {load1[0]:.2f} after, "
              f"on {os.cpu_count()} cores")
        print(f"ratio curve / script as processes: wall {wall_ratio:.2f}x, CPU {cpu_ratio:.2f}x "
              f"(aim {AIM_RATIO}x: {'met' if wall_ratio <= AIM_RATIO else 'MISSED'})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
