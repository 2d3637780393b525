"""Benchmark of ``pytools.traces.curve`` (a script, not a test): speed and memory of the exact
all-capacity LRU + OPT curve against a minimal OrderedDict LRU script and libCacheSim, in the
same run, on the same trace.

    python benchmarks/bench_curve.py [--trace PATH] [--refs 2000000] [--repeat 5]

Without ``--trace`` a Mooncake-shaped synthetic trace of ``--refs`` references (seed 7) is
written to a temporary folder (never into the project). Timings are wall-clock medians of
``--repeat`` alternating runs (other processes share the machine: the ratios within one run
are what counts). Printed:

* end to end: ``compute_curve(FILE)`` (parse with msgspec + LRU and OPT at every capacity) /
  a minimal script that parses the file with ``json`` and runs one OrderedDict LRU at one
  capacity (budget 3x, aim 2x);
* compute only: the curve engine on the stream in memory / the OrderedDict LRU on the same
  stream as a Python list;
* cold process: the same end-to-end run in a fresh interpreter, numba import and the loading
  of its compiled cache included;
* peak memory per reference of ``compute_curve`` in a fresh process: the peak of traced
  allocations (tracemalloc sees numpy's buffers) and the growth of peak RSS over the process
  after imports and compilation (budget 16 bytes a reference);
* libCacheSim (optional, ``pip install libcachesim``): one LRU and one Belady run at one
  capacity through its C reader of an oracleGeneral copy of the stream, the ratio of the
  whole curve to each, and the cross-check of both hit counts against the curve's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from pytools.paths import sha256_file  # noqa: E402
from pytools.traces.curve import CurveEngine, compute_curve  # noqa: E402
from pytools.traces.synth import write_mooncake_like  # noqa: E402
from pytools.traces.trace import read_stream  # noqa: E402

BUDGET_RATIO = 3.0
AIM_RATIO = 2.0
BUDGET_BYTES_PER_REF = 16.0


def od_script(path: Path, capacity: int) -> int:
    """The baseline: a minimal script, stdlib json + OrderedDict LRU at one capacity."""
    stream: list[int] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            stream.extend(json.loads(line)["hash_ids"])
    return od_lru(stream, capacity)


def od_lru(stream: list[int], capacity: int) -> int:
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for block in stream:
        if block in cache:
            hits += 1
            cache.move_to_end(block)
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
    return hits


def engine_only(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    engine = CurveEngine(int(ids.shape[0]) + 1)
    for start in range(0, ids.shape[0], 1 << 16):
        engine.feed(ids[start : start + (1 << 16)])
    return engine.finish()


def medians(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median wall seconds of each function, runs interleaved (so load drifts hit all)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


_CHILD = textwrap.dedent("""
    import json, sys, time, tracemalloc
    sys.path.insert(0, {root!r})
    t0 = time.perf_counter()
    import numpy as np
    from pytools.traces.curve import compute_curve, stack_hits
    stack_hits([np.array([1, 2, 1], dtype=np.int64)])  # load the compiled kernels
    t_ready = time.perf_counter() - t0

    def status(key):
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        return -1

    with open("/proc/self/clear_refs", "w") as handle:  # resets the peak RSS (VmHWM)
        handle.write("5")
    base = status("VmRSS")
    if {trace_alloc!r}:
        tracemalloc.start()
    t1 = time.perf_counter()
    summary, curve = compute_curve({path!r})
    t_run = time.perf_counter() - t1
    _, peak = tracemalloc.get_traced_memory() if {trace_alloc!r} else (0, 0)
    tracemalloc.stop()
    hwm = status("VmHWM")
    print(json.dumps({{"refs": summary.references, "traced_peak": peak,
                      "rss_growth": hwm - base, "rss_peak": hwm, "ready_s": t_ready,
                      "run_s": t_run}}))
""")


def child_measure(path: Path, trace_alloc: bool) -> dict[str, float]:
    """``compute_curve`` in a fresh interpreter: its timings, and its peak memory (RSS always;
    traced allocations with ``trace_alloc``, which slows the run, so it is timed apart)."""
    code = _CHILD.format(root=str(ROOT), path=str(path), trace_alloc=trace_alloc)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_s"] = time.perf_counter() - t0
    return res


def libcachesim_runs(ids: np.ndarray, capacity: int, repeat: int,
                     tmp: Path) -> dict[str, float] | None:
    try:
        import libcachesim as lcs
    except ImportError:
        return None
    n = int(ids.shape[0])
    nxt = np.full(n, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):  # next access times (libCacheSim's Belady needs them)
        b = int(ids[i])
        nxt[i] = last.get(b, -1)
        last[b] = i
    rec = np.zeros(n, dtype=[("ts", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nv", "<i8")])
    rec["ts"] = np.arange(n)
    rec["id"] = ids
    rec["sz"] = 1
    rec["nv"] = nxt
    trace = tmp / "trace.oracleGeneral"
    rec.tofile(trace)
    reader = lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE)
    out: dict[str, float] = {"version": lcs.__version__}  # type: ignore[dict-item]
    for name, cls in (("lru", lcs.LRU), ("belady", lcs.Belady)):
        ts = []
        for _ in range(repeat):
            cache = cls(cache_size=capacity)
            t0 = time.perf_counter()
            miss_ratio, _ = cache.process_trace(reader)
            ts.append(time.perf_counter() - t0)
        out[f"{name}_s"] = statistics.median(ts)
        out[f"{name}_hits"] = round((1 - miss_ratio) * n)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--refs", type=int, default=2_000_000)
    parser.add_argument("--capacity", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-curve-") as tmpdir:
        tmp = Path(tmpdir)
        path = args.trace or write_mooncake_like(tmp / "synthetic.jsonl", args.refs, seed=7)
        print(f"trace: {path}")
        print(f"sha256: {sha256_file(path)}")
        stream = read_stream(path)
        ids = stream.ids.astype(np.int64)
        lst = ids.tolist()
        lru, opt = engine_only(ids)  # warm the compiled kernels
        n, d = int(ids.shape[0]), int(lru.shape[0])
        print(f"references: {n:,}  distinct: {d:,}  requests: {stream.summary.requests:,}")
        k = min(args.capacity, d)
        base_hits = od_lru(lst, k)
        assert base_hits == int(lru[k - 1]), (base_hits, int(lru[k - 1]))
        print(f"check: OrderedDict LRU hits at {k} = curve's = {base_hits:,}; OPT at {k}: "
              f"{int(opt[k - 1]):,}")

        t = medians({
            "od_script": lambda: od_script(path, k),
            "curve_e2e": lambda: compute_curve(path),
            "od_lru": lambda: od_lru(lst, k),
            "curve_compute": lambda: engine_only(ids),
        }, args.repeat)
        e2e = t["curve_e2e"] / t["od_script"]
        comp = t["curve_compute"] / t["od_lru"]
        print(f"medians of {args.repeat} (wall s): " +
              "  ".join(f"{name} {v:.3f}" for name, v in t.items()))
        print(f"end to end: curve (all {d:,} capacities, LRU + OPT) / OrderedDict script "
              f"(one capacity) = {e2e:.2f}x  (budget {BUDGET_RATIO}x, aim {AIM_RATIO}x)")
        print(f"compute only: curve engine / OrderedDict LRU on a list = {comp:.2f}x")

        c = child_measure(path, trace_alloc=False)
        cold = c["process_s"] / t["od_script"]
        print(f"cold process: {c['process_s']:.2f} s (interpreter, imports and compiled-cache "
              f"load {c['ready_s']:.2f} s, run {c['run_s']:.2f} s) = {cold:.2f}x the script "
              "run in-process")
        m = child_measure(path, trace_alloc=True)
        per_ref_traced = m["traced_peak"] / m["refs"]
        per_ref_rss = max(m["rss_growth"], c["rss_growth"]) / m["refs"]
        print(f"peak memory: traced {per_ref_traced:.2f} B/ref, RSS growth "
              f"{per_ref_rss:.2f} B/ref (budget {BUDGET_BYTES_PER_REF:.0f}); "
              f"process peak RSS {m['rss_peak'] / 2**20:.0f} MiB")

        lc = libcachesim_runs(ids, k, max(1, args.repeat // 2), tmp)
        if lc is None:
            print("libCacheSim: not installed (pip install libcachesim) - skipped")
        else:
            ok = lc["lru_hits"] == int(lru[k - 1]) and lc["belady_hits"] == int(opt[k - 1])
            print(f"libCacheSim {lc['version']}: LRU {lc['lru_s']:.3f} s, Belady "
                  f"{lc['belady_s']:.3f} s at capacity {k}; hits LRU {lc['lru_hits']:,} "
                  f"Belady {lc['belady_hits']:,} ({'equal to' if ok else 'DIFFERENT FROM'} "
                  "the curve's)")
            print(f"curve compute (every capacity) / libCacheSim one LRU run = "
                  f"{t['curve_compute'] / lc['lru_s']:.2f}x; / one Belady run = "
                  f"{t['curve_compute'] / lc['belady_s']:.2f}x; libCacheSim would need "
                  f"{d:,} runs of each for the whole curve")
            if not ok:
                return 1
        met = e2e <= BUDGET_RATIO and per_ref_traced <= BUDGET_BYTES_PER_REF \
            and per_ref_rss <= BUDGET_BYTES_PER_REF
        print("budgets: " + ("met" if met else "MISSED"))
        return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
