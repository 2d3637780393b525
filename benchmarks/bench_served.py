"""What isolation costs on a served vLLM: one workload direct without salts, direct with the
keyed salts the admission proxy would bind, and through the proxy, side by side in interleaved
rounds on one server (``pytools.results.leak.served_run.throughput``).

    python benchmarks/bench_served.py [--rounds 5] [--requests 16] [--python PY]

Prints prompt tokens per second and TTFT p50/p99 per mode and the three ratios:
proxied / direct keyed salt (the proxy's own cost), keyed salt / unsalted (the lost
cross-tenant reuse of the shared system prompt), proxied / unsalted (both). The certificate's
figures are the committed record's (``pytools leak serve``), not this script's.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytools.results.leak.served_record import rates  # noqa: E402
from pytools.results.leak.served_run import FULL, run, served_python  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=FULL.throughput_rounds)
    parser.add_argument("--requests", type=int, default=FULL.throughput_requests,
                        help="requests per tenant and round")
    parser.add_argument("--python", default=None, help="the served engine's interpreter")
    args = parser.parse_args()
    params = replace(FULL, throughput_rounds=args.rounds, throughput_requests=args.requests)
    doc = run(served_python(ROOT, args.python), params, parts=("throughput",),
              progress=lambda s: print(s, file=sys.stderr))
    print(json.dumps({"settings": {"engine": doc["engine"], "params": params.as_dict()},
                      "throughput": rates(doc["throughput"])}, indent=2))


if __name__ == "__main__":
    main()
