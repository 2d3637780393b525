"""The prefix pass's two kernels (``pytools/traces/prefix_kernel.py``): the C kernel, compiled
at first use, and the numba fallback give the same histograms and counts (random chained
traces with warm-up and token weights, traces that are not chained, sparse ids, the shared
trace); a planted change to the C source is caught by the same comparison; the compiled
library is cached, named by its source, refused from a folder others may write; without a
compiler ``auto`` falls back to numba and ``c`` is an error (one line in the CLI)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import missing
from test_traces_prefix import chained_trace, make_trace, random_weights

from pytools.traces import prefix_kernel
from pytools.traces.prefix import PrefixTrace, prefix_curve_of, read_prefix_trace
from pytools.traces.prefix_kernel import (
    C_SOURCE,
    ENV_CACHE,
    ENV_KERNEL,
    KernelUnavailable,
    PrefixPass,
    compile_library,
    load_c,
    load_numba,
)


@pytest.fixture(scope="module")
def c_pass(tmp_path_factory: pytest.TempPathFactory) -> PrefixPass:
    """The C kernel compiled into a fresh folder (no compiler: skipped here, failed in CI)."""
    try:
        return load_c(C_SOURCE, tmp_path_factory.mktemp("kernels"))
    except KernelUnavailable as exc:
        missing(f"the C kernel cannot be built: {exc}")
        raise


def raw_pass(kernel: PrefixPass, trace: PrefixTrace, warm: int) -> tuple:
    """Everything a kernel returns or writes, on fresh arrays (as ``prefix_curve_of`` makes
    them)."""
    n = int(trace.ids.shape[0])
    size = int(trace.ids.max()) + 1 if n else 1
    last = np.full(size, -1, dtype=np.int64)
    pred = np.full(size, -2, dtype=np.int64)
    fen = np.zeros(n + 1, dtype=np.int32)
    hist = np.zeros(n + 2, dtype=np.int64)
    flat = np.zeros(n + 2, dtype=np.int64)
    out = kernel(trace.ids, trace.ends, trace.weights, warm, last, pred, fen, hist, flat)
    return tuple(int(v) for v in out), last, pred, fen, hist, flat


def differences(a: PrefixPass, b: PrefixPass, trace: PrefixTrace, warm: int) -> list[str]:
    """What differs between two kernels' results on ``trace`` (empty: nothing)."""
    ra, rb = raw_pass(a, trace, warm), raw_pass(b, trace, warm)
    names = ("returned", "last", "pred", "fen", "hist", "flat_hist")
    return [name for name, x, y in zip(names, ra, rb, strict=True)
            if not (x == y if name == "returned" else np.array_equal(x, y))]


def random_traces() -> list[tuple[PrefixTrace, int]]:
    out = []
    for seed in range(30):
        reqs = chained_trace(seed, requests=60, longest=1 + seed % 9)
        out.append((make_trace(reqs, random_weights(reqs, seed)), (seed * 7) % 40))
    return out


def test_c_and_numba_agree_on_random_chained_traces(c_pass: PrefixPass) -> None:
    numba_pass = load_numba()
    for i, (trace, warm) in enumerate(random_traces()):
        assert differences(c_pass, numba_pass, trace, warm) == [], i


def test_c_and_numba_refuse_the_same_request(c_pass: PrefixPass) -> None:
    rng = random.Random(3)
    for seed in range(20):
        reqs = chained_trace(seed, requests=30)
        r = rng.randrange(1, len(reqs))
        reqs[r] = [10_000 + r, reqs[0][0]]  # request 0's first id after a new predecessor
        trace = make_trace(reqs, [[1] * len(q) for q in reqs])
        got = [raw_pass(k, trace, 0)[0][4] for k in (c_pass, load_numba())]
        assert got == [r, r], (seed, got)


def test_prefix_curve_is_the_same_by_either_kernel(c_pass: PrefixPass) -> None:
    reqs = chained_trace(11, requests=80)
    sparse = [[x * 1_000_003 + (1 << 40) for x in q] for q in reqs]  # remapped densely
    for requests in (reqs, sparse):
        trace = make_trace(requests, random_weights(requests, 11))
        a, b = prefix_curve_of(trace, 0.5, "c"), prefix_curve_of(trace, 0.5, "numba")
        assert (a.kernel, b.kernel) == ("c", "numba")
        assert np.array_equal(a.hits, b.hits) and np.array_equal(a.flat_hits, b.flat_hits)
        assert (a.distinct, a.measured, a.ceiling, a.flat_ceiling, a.longest) == \
            (b.distinct, b.measured, b.ceiling, b.flat_ceiling, b.longest)


def test_c_and_numba_agree_on_the_shared_trace(c_pass: PrefixPass, trace_path: Path) -> None:
    trace = read_prefix_trace(trace_path, "tokens")
    warm = trace.ends.shape[0] // 2
    assert differences(c_pass, load_numba(), trace, warm) == []


@pytest.mark.parametrize("plant", [
    ("int count = r >= warm;", "int count = r > warm;"),  # warm-up one request too long
    # the Fenwick query one time short (each plant keeps every write inside its array)
    ("for (int64_t k = p + 1; k > 0;", "for (int64_t k = p; k > 0;"),
    ("for (int64_t j = end - 1; j >= start; j--) {",  # touched head first
     "for (int64_t j = start; j < end; j++) {"),
    ("flat_hist[d] += w;", "flat_hist[d > 1 ? d - 1 : d] += w;"),  # flat count one off
])
def test_a_planted_c_kernel_is_caught(tmp_path: Path, plant: tuple[str, str]) -> None:
    old, new = plant
    assert C_SOURCE.count(old) == 1
    try:
        planted = load_c(C_SOURCE.replace(old, new), tmp_path)
    except KernelUnavailable as exc:
        missing(f"the C kernel cannot be built: {exc}")
    numba_pass = load_numba()
    assert any(differences(planted, numba_pass, trace, warm)
               for trace, warm in random_traces())


def test_the_library_is_cached_and_named_by_its_source(tmp_path: Path) -> None:
    try:
        lib = compile_library(C_SOURCE, tmp_path)
    except KernelUnavailable as exc:
        missing(f"the C kernel cannot be built: {exc}")
    stamp = lib.stat().st_mtime_ns
    assert compile_library(C_SOURCE, tmp_path) == lib and lib.stat().st_mtime_ns == stamp
    other = compile_library(C_SOURCE + "\n/* changed */\n", tmp_path)
    assert other != lib and sorted(p.name for p in tmp_path.iterdir()) == \
        sorted([lib.name, other.name])  # no temporary file left behind


def test_a_folder_others_may_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(KernelUnavailable, match="writable by others"):
        compile_library(C_SOURCE, shared)
    assert list(shared.iterdir()) == []


def test_without_a_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "kernels"))
    with pytest.raises(KernelUnavailable, match="cannot run the C compiler"):
        prefix_kernel.prefix_pass("c")
    assert prefix_kernel.prefix_pass("auto")[0] == "numba"
    monkeypatch.setenv(ENV_KERNEL, "fortran")
    with pytest.raises(KernelUnavailable, match="expected auto, c or numba"):
        prefix_kernel.prefix_pass()
    broken = tmp_path / "cc"
    broken.write_text("#!/bin/sh\necho 'cc: error: planted' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("CC", str(broken))
    with pytest.raises(KernelUnavailable, match="failed: cc: error: planted"):
        prefix_kernel.prefix_pass("c")
    assert not list((tmp_path / "kernels").glob("*.so"))


def test_the_cli_says_in_one_line_when_c_is_asked_and_cannot_be(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"input_length": 600, "hash_ids": [1, 2]}\n')
    env = {**os.environ, "CC": str(tmp_path / "no-such-cc"), ENV_KERNEL: "c",
           ENV_CACHE: str(tmp_path / "kernels")}
    done = subprocess.run([sys.executable, "-m", "pytools", "ceiling", "curve", str(trace),
                           "--out", str(tmp_path / "out"), "--semantics", "prefix"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("Error: cannot run the C compiler")
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
