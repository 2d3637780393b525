"""Benchmark of the trace library (pytools.traces) on the Mooncake trace (a script).

One capacity at a time, by the per-capacity simulators; `bench_curve.py` measures the curve.

Times, on one core: parsing the file alone (baseline), then ceiling counts + LRU + Belady at
one capacity, and prints the ratio to parsing. Reports CPU time (``time.process_time``,
robust to other processes on the machine) and wall time; best of ``--repeat`` runs.

    python benchmarks/bench_traces.py [--trace PATH] [--capacity K] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best  # noqa: E402

from pytools.paths import mooncake_trace, sha256_file  # noqa: E402
from pytools.traces import policies  # noqa: E402
from pytools.traces import trace as tracefile  # noqa: E402

#: The budget the issue sets for ceiling + LRU + Belady at one capacity (seconds, one core).
BUDGET_S = 2.0


def parse_only(path: Path) -> int:
    """Just read and json-decode every line (no validation): the baseline."""
    n = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            n += len(json.loads(line)["hash_ids"])
    return n


def full(path: Path, capacity: int) -> tuple[tracefile.CeilingCounts, int, int]:
    """Ceiling counts (with validation and SHA-256), then LRU and Belady at ``capacity``."""
    trace = tracefile.load_trace(path)
    counts = tracefile.counts_of(trace, sha256_file(path))
    lru = policies.simulate(trace.stream, capacity, "lru")
    belady = policies.simulate(trace.stream, capacity, "belady")
    return counts, lru, belady


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=mooncake_trace())
    parser.add_argument("--capacity", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.trace.is_file():
        print(f"trace absent: {args.trace}", file=sys.stderr)
        return 2
    path: Path = args.trace

    p_cpu, p_wall, refs = best(lambda: parse_only(path), args.repeat)
    f_cpu, f_wall, (counts, lru, belady) = best(lambda: full(path, args.capacity), args.repeat)
    trace = tracefile.load_trace(path)
    parts = {
        "load+validate": best(lambda: tracefile.load_trace(path), args.repeat),
        "sha256": best(lambda: sha256_file(path), args.repeat),
        "distinct": best(lambda: tracefile.count_distinct(trace.stream), args.repeat),
        "lru": best(lambda: policies.simulate(trace.stream, args.capacity, "lru"), args.repeat),
        "belady": best(lambda: policies.simulate(trace.stream, args.capacity, "belady"),
                       args.repeat),
    }

    print(f"trace: {path} ({counts.sha256[:16]}...)")
    print(f"references: {refs}  distinct: {counts.distinct}  capacity: {args.capacity}")
    print(f"ceiling: {counts.max_hits} hits ({counts.percent} %)  lru: {lru}  belady: {belady}")
    print(f"parse only:                    cpu {p_cpu:.3f} s  wall {p_wall:.3f} s")
    for name, (c, w, _) in parts.items():
        print(f"  {name:<28}cpu {c:.3f} s  wall {w:.3f} s")
    print(f"ceiling + LRU + Belady (all):  cpu {f_cpu:.3f} s  wall {f_wall:.3f} s")
    print(f"ratio to parsing (cpu): {f_cpu / p_cpu:.2f}x   budget {BUDGET_S:.1f} s: "
          f"{'met' if f_cpu < BUDGET_S else 'MISSED'}")
    return 0 if f_cpu < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
