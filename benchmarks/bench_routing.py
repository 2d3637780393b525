"""Benchmark of the routing sweep (pytools.results.placement.routing) on the Mooncake trace (a
script): the whole host x capacity x routing sweep, one core, against its one-minute budget.

Times, in CPU seconds (``time.process_time``, robust to other processes on the machine) and
wall seconds, best of ``--repeat`` runs, numba's compiled kernels loaded first: parsing the
trace (the ceiling result's parser, once for every routing), then the parts of the sweep
(pooled curve, pooled Belady with bypass at each capacity, per-instance LRU under each
routing), then the whole sweep as the evidence runs it.

    python benchmarks/bench_routing.py [--trace PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best  # noqa: E402

from pytools.paths import mooncake_trace  # noqa: E402
from pytools.results.placement.routing import (  # noqa: E402
    HOSTS,
    ROUTINGS,
    requests_of,
    run_sweep,
    simulate_hosts,
    static_route,
    sweep_capacities,
    sweep_steps,
    trace_requests,
)
from pytools.traces.bypass import simulate_belady_bypass  # noqa: E402
from pytools.traces.curve import stack_hits  # noqa: E402

#: The issue's budget for the whole sweep (seconds, one core).
BUDGET_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=mooncake_trace())
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if not args.trace.is_file():
        print(f"trace absent: {args.trace}", file=sys.stderr)
        return 2
    simulate_hosts(requests_of([[0]]), "warm", np.zeros(1, dtype=np.int64), 1, 1)
    p_cpu, p_wall, reqs = best(lambda: trace_requests(args.trace), args.repeat)
    caps = sweep_capacities(reqs.distinct)
    stream = reqs.ids.tolist()

    def per_instance(routing: str) -> None:
        for h in HOSTS:
            route = None if routing == "kv-aware" else static_route(reqs, routing, h)
            for c in caps:
                simulate_hosts(reqs, routing, route, h, c // h)

    parts = {
        "pooled LRU + Belady curve": best(
            lambda: stack_hits([reqs.ids], expected_refs=reqs.references + 1), args.repeat),
        f"pooled bypass x {len(caps)}": best(
            lambda: [simulate_belady_bypass(stream, c) for c in caps], args.repeat),
        **{f"{r} x {len(caps) * len(HOSTS)}": best(lambda r=r: per_instance(r), args.repeat)
           for r in ROUTINGS},
    }
    s_cpu, s_wall, _ = best(lambda: run_sweep(trace_requests(args.trace)), args.repeat)
    print(f"trace: {args.trace} ({reqs.sha256[:16]}...)")
    print(f"requests {reqs.requests}  references {reqs.references}  distinct {reqs.distinct}")
    print(f"sweep: hosts {HOSTS} x capacities {caps} x {len(ROUTINGS)} routings "
          f"({sweep_steps(caps)} steps)")
    print(f"parse (once):                  cpu {p_cpu:.3f} s  wall {p_wall:.3f} s")
    for name, (c, w, _) in parts.items():
        print(f"  {name:<28}cpu {c:.3f} s  wall {w:.3f} s")
    print(f"whole sweep (parse included):  cpu {s_cpu:.3f} s  wall {s_wall:.3f} s   "
          f"budget {BUDGET_S:.0f} s: {'met' if s_cpu < BUDGET_S else 'MISSED'}")
    return 0 if s_cpu < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
