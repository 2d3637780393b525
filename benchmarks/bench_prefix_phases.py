"""Benchmark: where the time of ``ceiling curve --semantics prefix`` goes, phase by phase.

A script, not a test. ``benchmarks/bench_prefix_kvsim.py`` times the whole curve against one
budget of the trace authors' simulator as whole processes; this one says why the curve takes
what it takes: each phase of the command, in a fresh interpreter (imports counted once, as in
the command), timed in CPU seconds (``time.process_time``: less sensitive than wall time to
other work on the machine) and wall seconds. Phases of the command as it runs by default
(``prefix.csv`` alone, the C kernel): numpy, click, the module (with ``ctypes``), reading
(parse, validate, hash), the pass (first call: loads the compiled C kernel from its cache),
the pass again (the computation alone), the CSV of every capacity. Then what the command
does not pay by default, for comparison: numba's import and its kernel's first call (the
fallback where no C compiler is), matplotlib's import and drawing the plot in both formats
(``--plot``: in a forked worker, beside the main path), and the simulator's own import.

    python benchmarks/bench_prefix_phases.py [--trace PATH] [--repeat 3]
                                             [--kvsim .venv-kvsim/bin/python]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The phases, run in one fresh interpreter; prints a JSON object {phase: [cpu, wall]}.
PHASES = r"""
import io, json, sys, time
t0 = time.process_time(); w0 = time.perf_counter(); out = {}
def lap(name):
    global t0, w0
    t, w = time.process_time(), time.perf_counter()
    out[name] = [t - t0, w - w0]; t0, w0 = t, w
import numpy; lap("import numpy")
import click; lap("import click")
from pytools.traces import prefix; lap("import pytools.traces.prefix")
from pathlib import Path
tr = prefix.read_prefix_trace(Path(sys.argv[1]), "tokens"); lap("read, validate, hash")
c = prefix.prefix_curve_of(tr, 0.5, "c"); lap("pass, C (loads the cached library)")
c = prefix.prefix_curve_of(tr, 0.5, "c"); lap("pass again, C (computation)")
from pytools.results.ceiling.plot import Source
from pytools.results.ceiling.prefix_out import prefix_plot_data, write_prefix_csv
src = Source(sys.argv[1], tr.summary.sha256); lap("import the outputs")
write_prefix_csv(io.BytesIO(), c, src, None); lap("CSV of every capacity")
import numba; lap("not by default: import numba")
prefix.prefix_curve_of(tr, 0.5, "numba"); lap("not by default: pass, numba (cache load)")
import matplotlib; from matplotlib.figure import Figure; lap("--plot: import matplotlib")
from pytools.results.ceiling.plot import render_plots
dict(render_plots(prefix_plot_data(c, src))); lap("--plot: draw the plot (svg, png)")
print(json.dumps(out))
"""

KVSIM_IMPORT = r"""
import json, time
t0 = time.process_time(); w0 = time.perf_counter()
import kvcache_sim.cli
print(json.dumps({"simulator: import kvcache_sim.cli":
                  [time.process_time() - t0, time.perf_counter() - w0]}))
"""


def run(python: str, code: str, *args: str) -> dict[str, list[float]]:
    """Run ``code`` in a fresh ``python``; its JSON line."""
    out = subprocess.run([python, "-c", code, *args], cwd=ROOT, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kvsim", type=Path, default=ROOT / ".venv-kvsim/bin/python")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pytools.paths import mooncake_trace

    trace = str((args.trace or mooncake_trace(ROOT)).resolve())
    run(sys.executable, PHASES, trace)  # untimed: compiles the kernels on a fresh machine
    runs = [run(sys.executable, PHASES, trace) for _ in range(args.repeat)]
    if args.kvsim.is_file():
        runs = [{**r, **run(str(args.kvsim), KVSIM_IMPORT)} for r in runs]
    import os

    print(f"trace: {trace}; medians of {args.repeat} runs; load average (1 min) "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for phase in runs[0]:
        cpu = statistics.median(r[phase][0] for r in runs)
        wall = statistics.median(r[phase][1] for r in runs)
        print(f"{phase:44s} cpu {cpu:6.3f} s  wall {wall:6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
