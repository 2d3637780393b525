"""Tests of the demand-fetch ceiling result (pytools.results.ceiling): its commands' outputs,
the sweep, the evidence and the generated Lean instance (the trace library under it is tested
in tests/test_traces*.py)."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from test_traces import GOOD, scan_stream, write_trace

from pytools.paths import project_root
from pytools.results.ceiling import lean_instance as lean_inst
from pytools.results.ceiling.cli import main
from pytools.results.ceiling.lean_instance import (
    lean_instance,
    pack,
    packing_for,
    unpack,
)
from pytools.results.ceiling.result import (
    RESULT_ID,
    RESULT_LIMITS,
    THEOREMS,
    TRACE_FILE,
    WARM_THEOREM,
    WINDOW_FILE,
    evidence,
    trace_file,
    warm_start,
    window_file,
)
from pytools.results.ceiling.sweep import write_sweep
from pytools.traces.policies import simulate
from pytools.traces.trace import (
    TraceError,
    Window,
    ceiling_counts,
    load_trace,
    percent_str,
    read_trace,
)

ROOT = project_root()
LEAN_INSTANCE = ROOT / "Proofs" / "Ceiling" / "Mooncake.lean"


def test_bad_trace_leaves_no_output(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "bad.jsonl", [GOOD[0], "{oops"])
    out = tmp_path / "out"
    root = tmp_path / "root"
    runner = CliRunner()
    assert runner.invoke(main, ["sweep", str(p), "--out", str(out)]).exit_code != 0
    res = runner.invoke(main, ["lean-instance", str(p), "--root", str(root)])
    assert res.exit_code == 1 and f"{p}:2" in res.output
    assert not out.exists() and not root.exists()


# ----------------------------------------------------------------------------- outputs


def test_cli_ceiling_and_simulate(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", GOOD)
    runner = CliRunner()
    r = runner.invoke(main, ["count", str(p)])
    assert r.exit_code == 0, r.output
    assert "ceiling: 1/3 (33.3333 %)" in r.output
    r = runner.invoke(main, ["simulate", str(p), "--capacity", "2", "--policy", "all"])
    assert r.exit_code == 0, r.output
    assert "belady: 2 hits" in r.output and "lru:" in r.output and "fifo:" in r.output


def test_sweep_is_byte_deterministic(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", [json.dumps({"hash_ids": scan_stream(5, 30)})])
    first = write_sweep(p, tmp_path / "a")
    second = write_sweep(p, tmp_path / "b")
    assert [q.name for q in first] == ["sweep.csv", "sweep.svg", "sweep.png"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    lines = (tmp_path / "a" / "sweep.csv").read_text().splitlines()
    assert lines[0] == f"# source: {p}"
    assert lines[1] == "# sha256: " + hashlib.sha256(p.read_bytes()).hexdigest()
    rows = [line for line in lines if not line.startswith("#")]
    assert rows[0].startswith("capacity,lru_hits,belady_hits")
    last = rows[-1].split(",")
    d = 5 + 60
    assert last[0] == str(d)
    assert int(last[1]) == int(last[2]) == len(scan_stream(5, 30)) - d


def test_evidence_on_a_small_shared_trace(tmp_path: Path, monkeypatch) -> None:
    trace = _small_shared_trace(tmp_path, monkeypatch)
    ev = evidence(tmp_path)
    f = ev.figures
    assert (f["requests"], f["references"], f["distinct"]) == (2001, 4002, 2002)
    assert Fraction(f["ceiling_numerator"], f["ceiling_denominator"]) == Fraction(2000, 4002)
    window, whole = f["kernel_counts"]
    assert (window["requests"], window["references"], window["distinct"]) == (800, 1600, 801)
    assert (whole["requests"], whole["references"], whole["distinct"]) == (2001, 4002, 2002)
    assert window["theorem"] == "KVCache.Ceiling.Mooncake.window_length_distinct"
    assert str(window["computed_by"]).startswith("Lean kernel")
    # The whole trace is counted by the kernel too (as runs of consecutive blocks).
    assert whole["theorem"] == "KVCache.Ceiling.Mooncake.trace_length_distinct"
    assert str(whole["computed_by"]).startswith("Lean kernel")
    assert f["policy_hits"][-1] == f["sweep"][-1]
    assert f["sweep"][-1]["capacity"] == 2002 and f["sweep"][-1]["belady_hits"] == 2000
    # capacity 1: every reference misses (0 and b alternate); capacity 2 keeps block 0
    assert f["sweep"][0] == {"capacity": 1, "lru_hits": 0, "belady_hits": 0,
                             "lru_percent": "0.0000", "belady_percent": "0.0000"}
    # with bypass, capacity 1 keeps block 0 and declines every one-shot block
    bypass = f["bypass"]
    assert [r["capacity"] for r in bypass["rows"]] == [r["capacity"] for r in f["sweep"]]
    assert bypass["rows"][0]["belady_hits"] == 0
    assert bypass["rows"][0]["belady_bypass_hits"] == bypass["rows"][0]["gain_hits"] == 2000
    assert all(r["belady_bypass_hits"] == r["belady_hits"] == 2000 for r in bypass["rows"][1:])
    assert str(bypass["computed_by"]).startswith("Python")
    w = f["window"]
    assert "window" in w["label"] and "lines 1201-2000" in w["label"]
    assert (w["first_line"], w["last_line"]) == (1201, 2000)
    assert (w["requests"], w["references"], w["distinct"], w["max_hits"]) == (800, 1600, 801, 799)
    assert w["ceiling_percent"] == percent_str(Fraction(799, 1600))
    assert w["policy_hits"][0]["capacity"] == 801  # 1693 > distinct: only distinct is stated
    # after lines 1-1200, only block 0 of the window was seen: 800 new blocks, 800 hits at most
    warm = w["warm_start"]
    assert (warm["prefix_first_line"], warm["prefix_last_line"]) == (1, 1200)
    assert (warm["references"], warm["distinct"], warm["distinct_seen_before"],
            warm["distinct_new"], warm["max_hits"]) == (1600, 801, 1, 800, 800)
    assert warm["ceiling_percent"] == percent_str(Fraction(800, 1600)) == "50.0000"
    assert warm["cold_ceiling_percent"] == w["ceiling_percent"]
    assert warm["theorem"] == WARM_THEOREM == "KVCache.Ceiling.Mooncake.warm_window_hits_le"
    assert warm["general_theorem"] == "KVCache.Ceiling.hitsAfter_add_distinct_sdiff_le_length"
    assert str(warm["computed_by"]).startswith("Lean kernel")
    assert WARM_THEOREM in THEOREMS and warm["general_theorem"] in THEOREMS
    assert [(i.path, i.sha256) for i in ev.inputs] == [
        ("../shared/data/mooncake/conversation_trace.jsonl",
         hashlib.sha256(trace.read_bytes()).hexdigest()),
        ("data/ceiling/prefix_optima.json", "0" * 64),  # the stub of _small_shared_trace
    ]
    assert f["prefix_optima"] == {"stub": True} and "prefix_optima" in f["semantics"]["prefix"]
    assert RESULT_ID == "demand-fetch-ceiling"
    assert RESULT_LIMITS and all(s.endswith(".") for s in RESULT_LIMITS)


def _small_shared_trace(tmp_path: Path, monkeypatch) -> Path:
    """2,001 lines, so that the claim's window (lines 1201-2000) exists; each line is a fresh
    block b plus the hot block 0, so the counts are known in closed form. The kernel-count
    figures come from the generated Lean modules (the window's and the whole trace's), written
    under the temporary root. The prefix-optima record (CP-SAT on windows of the real trace,
    tested in test_ceiling_prefix_optima.py) is stubbed: no window of this trace has a
    capacity that binds."""
    from pytools.results.ceiling import result
    from pytools.results.ceiling.prefix_optima_record import PrefixOptimaEvidence

    monkeypatch.setattr(result, "prefix_optima_evidence", lambda root, trace: (
        PrefixOptimaEvidence({"stub": True}, "0" * 64, trace.sha256)))
    lines = [json.dumps({"hash_ids": [0, b]}) for b in range(1, 2002)]
    shared = tmp_path / "shared"
    trace = shared / "data" / "mooncake" / "conversation_trace.jsonl"
    trace.parent.mkdir(parents=True)
    write_trace(trace, lines)
    monkeypatch.setenv("PYTOOLS_SHARED", str(shared))
    assert WINDOW_FILE.write(tmp_path) and TRACE_FILE.write(tmp_path)
    return trace


def test_a_python_warm_count_off_by_one_is_caught(tmp_path: Path, monkeypatch) -> None:
    # Planted: Python's warm figure one block off. The committed module (whose theorems the
    # kernel checks) states the kernel's count, so the evidence refuses the figure.
    from pytools.results.ceiling import result

    _small_shared_trace(tmp_path, monkeypatch)
    good = result.warm_start

    def off_by_one(*args, **kwargs):
        warm = good(*args, **kwargs)
        return {**warm, "distinct_new": warm["distinct_new"] - 1,
                "max_hits": warm["max_hits"] + 1}

    monkeypatch.setattr(result, "warm_start", off_by_one)
    with pytest.raises(TraceError, match="warmNew is 800, Python counts warm_new = 799"):
        evidence(tmp_path)


def test_a_python_whole_trace_count_off_by_one_is_caught(tmp_path: Path, monkeypatch) -> None:
    from pytools.results.ceiling import result

    _small_shared_trace(tmp_path, monkeypatch)
    good = result.counts_of_requests

    def off_by_one(reqs):
        c = good(reqs)
        return lean_inst.StreamCounts(c.requests, c.references, c.distinct + 1)

    monkeypatch.setattr(result, "counts_of_requests", off_by_one)
    with pytest.raises(TraceError, match="traceDistinct is 2002, Python counts"):
        evidence(tmp_path)


def test_an_edited_warm_constant_is_caught(tmp_path: Path, monkeypatch) -> None:
    # The module states what the kernel computed; an edited constant no longer matches the
    # module the hashed trace gives (and the kernel would reject it).
    _small_shared_trace(tmp_path, monkeypatch)
    target = tmp_path / lean_inst.TRACE_MODULE
    text = target.read_text(encoding="utf-8")
    assert "def warmNew : Nat := 800\n" in text
    target.write_text(text.replace("def warmNew : Nat := 800\n", "def warmNew : Nat := 799\n"),
                      encoding="utf-8")
    with pytest.raises(TraceError, match="MooncakeTrace.lean: differs"):
        evidence(tmp_path)


@given(st.lists(st.integers(min_value=0, max_value=5000), max_size=400))
@settings(max_examples=50, deadline=None)
def test_runs_round_trip_and_pass(stream: list[int]) -> None:
    values = lean_inst.runs_of(stream)
    assert lean_inst.unpack_runs(values) == stream
    assert all(v & 0xFF > 0 for v in values)
    p = lean_inst.run_packing_for([stream])
    pages = lean_inst.pack_slots(values, p.width, p.per_line)
    assert all(n.bit_length() <= lean_inst.LINE_BITS for page in pages for n in page)
    # renumbered in first-occurrence order, the run pass counts like the block pass
    order: dict[int, int] = {}
    fo = [order.setdefault(x, len(order)) for x in stream]
    s = lean_inst.runs_pass(lean_inst.runs_of(fo))
    assert (s.ok, s.len, s.dist) == (True, len(fo), len(set(fo)))
    b = lean_inst.fo_pass(fo, 0)
    assert (b.ok, b.len, b.dist, b.next) == (s.ok, s.len, s.dist, s.next)
    # on any stream (in first-occurrence order or not) the run pass is the block pass
    assert lean_inst.runs_pass(values) == lean_inst.fo_pass(stream, 0)


def test_long_runs_are_split() -> None:
    values = lean_inst.runs_of(list(range(600)))
    assert [v & 0xFF for v in values] == [255, 255, 90]
    assert [v >> 8 for v in values] == [0, 255, 510]


def test_trace_module_contents(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", GOOD + ['{"timestamp": 3, "hash_ids": [0, 6]}'])
    text = lean_inst.trace_module(read_trace(p), window=(2, 3))
    assert text.startswith("module\n")
    assert f"-- SHA-256: {hashlib.sha256(p.read_bytes()).hexdigest()}\n" in text
    # lines 1: [0, 1, 2]; window lines 2-3: [0, 3, 0, 1, 4, 5]; after: [0, 6]
    assert "def warmReferences : Nat := 6\n" in text
    assert "def warmNew : Nat := 3\n" in text  # 3, 4, 5
    assert "def warmCeilingNum : Nat := 1\n" in text
    assert "def warmCeilingDen : Nat := 2\n" in text
    assert "def traceReferences : Nat := 11\n" in text
    assert "def traceDistinct : Nat := 7\n" in text
    assert "Counter.empty = ⟨3, 3, 3, 0, true⟩" in text
    assert "⟨3, 3, 3, 0, true⟩ = ⟨9, 6, 6, 0, true⟩" in text
    assert "⟨9, 6, 6, 0, true⟩ = ⟨11, 7, 7, 0, true⟩" in text
    assert lean_inst.stated_constants(text)["warmNew"] == 3
    for banned in ("sorry", "native_decide", "axiom ", "ofReduceBool"):
        assert banned not in text
    for line in text.splitlines():
        assert len(line) <= 100, line
    assert text == lean_inst.trace_module(read_trace(p), window=(2, 3))


def test_trace_module_refuses_ids_out_of_first_occurrence_order(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", ['{"hash_ids": [0, 2]}', '{"hash_ids": [1]}',
                                           '{"hash_ids": [3]}'])
    with pytest.raises(TraceError, match="first-occurrence order"):
        lean_inst.trace_module(read_trace(p), window=(2, 2))


def test_trace_file_is_regenerated_identically(trace_path: Path) -> None:
    assert trace_file(trace_path).check(ROOT) == []


def test_warm_start_bound_is_reached_by_a_cache_that_keeps_everything() -> None:
    reqs = [[1, 2], [3], [1, 3, 4], [4, 5]]
    trace = lean_inst.TraceRead("t.jsonl", "0" * 64, reqs)
    warm = warm_start(trace, Window(3, 4), Fraction(1, 5))
    assert (warm["references"], warm["distinct"], warm["distinct_new"], warm["max_hits"]) == (
        5, 4, 2, 3)
    assert warm["cold_ceiling_percent"] == "20.0000"
    # a cache large enough to keep every block, run over all lines: its hits on lines 3-4
    stream = [x for r in reqs for x in r]
    whole = simulate(stream, 100, "lru")
    first = simulate([x for r in reqs[:2] for x in r], 100, "lru")
    assert whole - first == warm["max_hits"]
    for policy in ("lru", "fifo"):  # online: the same hits on lines 1-2 in both runs
        for k in range(0, 6):  # so these are the hits on lines 3-4; none beats the bound
            assert simulate(stream, k, policy) - simulate(stream[:3], k, policy) <= 3
    with pytest.raises(TraceError, match="no lines before"):
        warm_start(trace, Window(1, 2), Fraction(0))


def test_evidence_names_an_absent_trace(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTOOLS_SHARED", str(tmp_path / "nowhere"))
    with pytest.raises(TraceError, match="absent"):
        evidence(tmp_path)


# ----------------------------------------------------------------------------- shared trace


def test_shared_trace_figures_against_an_independent_recount(trace_path: Path) -> None:
    requests = 0
    seen: set[int] = set()
    refs = 0
    with open(trace_path, "rb") as handle:
        for raw in handle:
            ids = json.loads(raw)["hash_ids"]
            requests += 1
            refs += len(ids)
            seen.update(ids)
    c = ceiling_counts(trace_path)
    assert (c.requests, c.references, c.distinct) == (requests, refs, len(seen))
    assert c.sha256 == hashlib.sha256(trace_path.read_bytes()).hexdigest()
    readme = (trace_path.parent / "README.md").read_text(encoding="utf-8")
    assert c.sha256 in readme
    assert c.ceiling * refs == refs - len(seen)
    # At capacity = distinct blocks, both policies reach the ceiling exactly.
    trace = load_trace(trace_path)
    for policy in ("lru", "belady"):
        assert simulate(trace.stream, c.distinct, policy) == refs - len(seen)


def test_lean_instance_is_regenerated_identically(trace_path: Path) -> None:
    assert WINDOW_FILE.check(ROOT) == []


def test_lean_instance_check_catches_a_planted_edit(tmp_path: Path, trace_path: Path) -> None:
    text = LEAN_INSTANCE.read_text(encoding="utf-8")
    planted = tmp_path / lean_inst.WINDOW_MODULE
    planted.parent.mkdir(parents=True)
    generated = window_file(trace_path)
    stream = [x for r in read_trace(trace_path).window(*lean_inst.CLAIM_LINES) for x in r]
    needle = f"def windowDistinct : Nat := {len(set(stream))}\n"
    assert needle in text
    wrong = f"def windowDistinct : Nat := {len(set(stream)) - 1}\n"
    planted.write_text(text.replace(needle, wrong), encoding="utf-8")
    problems = generated.check(tmp_path)
    assert problems and "differs" in problems[0] and "line" in problems[0]
    # One flipped bit of the packed data is caught as well.
    line = next(ln for ln in text.splitlines() if ln.startswith("    0x"))
    flipped = line[:-2] + ("0" if line[-2] != "0" else "1") + line[-1]
    planted.write_text(text.replace(line, flipped, 1), encoding="utf-8")
    assert generated.check(tmp_path)


def test_claim_window_counts(trace_path: Path) -> None:
    # The public claim: lines 1201-2000, 21,069 references, 16,930 distinct, 4,139/21,069.
    stream = [x for r in read_trace(trace_path).window(*lean_inst.CLAIM_LINES) for x in r]
    assert (len(stream), len(set(stream))) == (21069, 16930)
    assert percent_str(Fraction(len(stream) - len(set(stream)), len(stream))) == "19.6450"


@given(st.lists(st.integers(min_value=0, max_value=70000), max_size=300))
@settings(max_examples=50, deadline=None)
def test_pack_unpack_round_trip(stream: list[int]) -> None:
    p = packing_for(stream)
    pages = pack(stream, p)
    assert unpack(pages, p) == stream
    assert all(0 < len(page) <= lean_inst.PAGE_LINES for page in pages)
    assert all(n.bit_length() <= lean_inst.LINE_BITS for page in pages for n in page)


def test_lean_instance_contents(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", GOOD)
    text = lean_instance(read_trace(p), window=(2, 3))
    assert f"-- SHA-256: {hashlib.sha256(p.read_bytes()).hexdigest()}\n" in text
    assert text.startswith("module\n")
    assert "def windowReferences : Nat := 6\n" in text
    assert "def windowDistinct : Nat := 5\n" in text
    assert "def windowCeilingNum : Nat := 1\n" in text
    assert "def windowCeilingDen : Nat := 6\n" in text
    # hash_ids [0, 3] and [0, 1, 4, 5], as id + 1 in 3-bit slots: 0x1 | 4 << 3 | 1 << 6 | ...
    stream = [0, 3, 0, 1, 4, 5]
    packing = packing_for(stream)
    expected = sum((x + 1) << (packing.width * j) for j, x in enumerate(stream))
    assert f"  [[0x{expected:x}]]\n" in text
    assert "decide +kernel" in text
    for banned in ("sorry", "native_decide", "axiom "):
        assert banned not in text
    assert text == lean_instance(read_trace(p), window=(2, 3))
    for line in text.splitlines():
        assert len(line) <= 100, line


def test_named_theorems_are_declared_in_the_ceiling_sources() -> None:
    # A typo guard only: the certify step checks the names against the elaborated library.
    sources = "\n".join(
        (ROOT / "Proofs" / "Ceiling" / name).read_text(encoding="utf-8")
        for name in ("Cache.lean", "Policies.lean", "Bypass.lean", "Count.lean", "Mooncake.lean",
                     "MooncakeTrace.lean", "Prefix.lean", "PrefixMooncake.lean", "PrefixLru.lean",
                     "PrefixLruStack.lean", "PrefixLruFlat.lean", "PrefixLruDistances.lean")
    )
    for full in THEOREMS:
        assert full.startswith("KVCache.Ceiling.")
        assert f"theorem {full.rsplit('.', 1)[1]} " in sources or \
            f"theorem {full.rsplit('.', 1)[1]}\n" in sources, full
        if ".Mooncake." in full:
            assert "namespace KVCache.Ceiling.Mooncake" in sources
