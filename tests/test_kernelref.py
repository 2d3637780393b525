"""Tests of the single-owner kernel's Python reference and of its Lean agreement table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools import kernelref as k

ROOT = Path(__file__).resolve().parent.parent
DOM = k.TABLE_DOMAIN  # the domain of the Lean-checked table
TARGET = k.Domain()  # 3 holders, 2 tickets, epochs and generations 0..3: reference-only checks


@pytest.fixture(scope="module")
def states() -> list[k.KState]:
    return k.domain_states(DOM)


@pytest.fixture(scope="module")
def generated() -> str:
    return k.generate(ROOT)


@pytest.fixture(scope="module")
def reference_rows() -> list[k.Row]:
    return k.table_rows(DOM)


@pytest.fixture(scope="module")
def alphabet() -> list[k.Request]:
    return k.requests(DOM)


@pytest.fixture(scope="module")
def committed() -> k.CommittedTable:
    return k.read_table(ROOT / k.TABLE_LEAN)


@pytest.fixture(scope="module")
def evidence() -> k.Evidence:
    return k.evidence(ROOT)


# --- the reference's own invariants, over the whole domain -----------------------------------


def test_domain_sizes(states, alphabet):
    eg = (DOM.max_epoch + 1) * (DOM.max_gen + 1)
    assert len(alphabet) == (DOM.tickets + 1) * (DOM.holders + 1) ** 2 * eg + \
        2 * (DOM.tickets + 1) * eg + 3 * (DOM.holders + 1) * eg + DOM.max_epoch + 1
    assert len(set(states)) == len(states)
    assert all(k.well_formed(DOM, s) for s in states)


@pytest.mark.parametrize("dom", [DOM, TARGET])
def test_reachable_inside_domain(dom):
    states = k.domain_states(dom)
    reach = k.reachable_states(dom)
    assert k.initial_state(dom) in reach
    assert reach <= set(states)
    assert len(reach) < len(states)  # e.g. owned states at generation 0 are unreachable


def test_invariants_every_case(states, alphabet):
    """Every case of the table's domain, in the reference."""
    dom = DOM
    domain = set(states)
    for st in states:
        readers = set()
        for req in alphabet:
            out = k.step(dom, st, req)
            if out.refusal is not None:
                assert out.state == st, "a refusal changed the state"
                continue
            assert out.state in domain, "the domain is not closed under accepted steps"
            assert out.state.gen >= st.gen and out.state.epoch >= st.epoch
            if req.kind == "read":
                assert st.holding == k.Holding("owned", req.args[0])
                assert (req.args[1], req.args[2]) == (st.epoch, st.gen)
                readers.add(req.args[0])
            if req.args[-2:] != (st.epoch, st.gen) and req.kind != "advance":
                pytest.fail("a stale capability was accepted")
            for t, rec in enumerate(st.book):
                if rec.status == "used":
                    assert out.state.book[t].status == "used", "a used ticket came back"
            if req.kind in ("commit", "abort"):
                rec = st.book[req.args[0]]
                want = rec.receiver if req.kind == "commit" else rec.sender
                assert out.state.holding == k.Holding("owned", want)
                again = k.step(dom, out.state, req)
                assert again.refusal == "ticketUsed"
            if req.kind not in ("evict", "realloc"):
                assert (st.holding.kind == "free") == (out.state.holding.kind == "free")
        assert len(readers) <= 1, "two live owners"
        if st.holding.kind == "escrow":
            assert not readers, "a read succeeded in escrow"


def test_stale_requests_refused_unchanged(states, alphabet):
    for st in states[::7]:
        for req in alphabet:
            out = k.step(DOM, st, req)
            if req.epoch != st.epoch:
                assert out == k.Outcome(st, "staleEpoch")
            elif req.gen is not None and req.gen != st.gen:
                assert out == k.Outcome(st, "staleGen")


# --- the committed Lean table ----------------------------------------------------------------


def test_table_regenerates_byte_identical(generated):
    committed = (ROOT / k.TABLE_LEAN).read_bytes()
    assert generated.encode("utf-8") == committed


def test_model_carries_self_test():
    text = (ROOT / k.MODEL_LEAN).read_text(encoding="utf-8")
    assert k.render_self_test() in text


def test_theorem_names_exist(committed):
    texts = {
        "KVCache.Kernel.Table.": (ROOT / k.TABLE_LEAN).read_text(encoding="utf-8"),
        "KVCache.Kernel.": (ROOT / k.MODEL_LEAN).read_text(encoding="utf-8")
        + (ROOT / "Proofs/Kernel/Invariants.lean").read_text(encoding="utf-8"),
    }
    assert len(k.THEOREMS) >= 12
    for name in k.THEOREMS:
        prefix = next(p for p in texts if name.startswith(p))
        short = name[len(prefix):]
        assert f"\ntheorem {short} " in texts[prefix], name
    assert sum(n.startswith("KVCache.Kernel.Table.table_agrees_") for n in k.THEOREMS) == \
        committed.chunks


def test_table_covers_domain(committed, states, alphabet):
    assert committed.domain == DOM
    assert [r.state for r in committed.rows] == [k.encode_state(DOM, s) for s in states]
    assert committed.chunks == -(-len(states) // k.ROWS_PER_CHUNK)
    for row in committed.rows:
        assert row.digits < 16 ** len(alphabet)


def _forgets_generation(dom: k.Domain, st: k.KState, req: k.Request) -> k.Outcome:
    """A planted bug: the generation check is skipped (stale-generation requests pass)."""
    if req.kind != "advance" and req.args[-1] != st.gen:
        req = k.Request(req.kind, req.args[:-1] + (st.gen,))
    return k.step(dom, st, req)


def _forgets_ticket_use(dom: k.Domain, st: k.KState, req: k.Request) -> k.Outcome:
    """A planted bug: settling a ticket does not mark it used."""
    out = k.step(dom, st, req)
    if req.kind in ("commit", "abort") and out.refusal is None:
        t = req.args[0]
        book = out.state.book[:t] + (st.book[t],) + out.state.book[t + 1:]
        return k.Outcome(k.KState(out.state.epoch, out.state.gen, out.state.holding, book), None)
    return out


@pytest.mark.parametrize("bug", [_forgets_generation, _forgets_ticket_use])
def test_planted_bug_caught_by_table(bug, committed):
    buggy = k.table_rows(DOM, bug)
    problems = k.compare_rows(list(committed.rows), buggy, DOM)
    assert problems, "the agreement check missed a planted bug"


def test_correct_reference_matches_table(committed, reference_rows):
    assert k.compare_rows(list(committed.rows), reference_rows, DOM) == []


def test_planted_bug_caught_by_workflows(committed):
    dom, flows = k.load_workflows(ROOT / k.WORKFLOWS_JSON)
    for bug in (_forgets_generation, _forgets_ticket_use):
        runs = [k.run_workflow(dom, wf, bug) for wf in flows]
        got = [(k.encode_state(dom, r.final), r.refusals) for r in runs]
        assert got != list(committed.workflow_finals)


def test_planted_bug_caught_by_evidence(monkeypatch):
    """A monkeypatched reference step that forgets the generation check: evidence refuses."""
    original = k.step

    def buggy(dom: k.Domain, st: k.KState, req: k.Request) -> k.Outcome:
        if req.kind != "advance" and req.args[-1] != st.gen:
            req = k.Request(req.kind, req.args[:-1] + (st.gen,))
        return original(dom, st, req)

    monkeypatch.setattr(k, "step", buggy)
    with pytest.raises(k.KernelRefError, match="differs"):
        k.evidence(ROOT)


# --- workflows and evidence ------------------------------------------------------------------


def test_workflows_agree(evidence):
    rows = evidence.extra["workflows"]
    assert len(rows) >= 12
    assert {r["family"] for r in rows} == set(k.FAMILIES)
    assert all(r["agree"] for r in rows)
    assert evidence.figures["workflows_agree"] == len(rows)


def test_evidence_figures(evidence, committed, alphabet):
    f = evidence.figures
    assert f["cases_checked"] == len(committed.rows) * len(alphabet)
    assert f["cases_accepted"] + f["cases_refused"] == f["cases_checked"]
    assert (f["holders"], f["tickets"], f["max_epoch"], f["max_gen"]) == (3, 2, 1, 2)
    assert (f["workflow_max_epoch"], f["workflow_max_gen"]) == (3, 3)
    paths = {i.path for i in evidence.inputs}
    assert paths == {k.TABLE_LEAN.as_posix(), k.WORKFLOWS_JSON.as_posix()}
    assert k.RESULT_LIMITS


def test_evidence_rejects_tampered_table(tmp_path):
    (tmp_path / "Proofs/Kernel").mkdir(parents=True)
    (tmp_path / "pytools/data").mkdir(parents=True)
    (tmp_path / k.WORKFLOWS_JSON).write_bytes((ROOT / k.WORKFLOWS_JSON).read_bytes())
    text = (ROOT / k.TABLE_LEAN).read_text(encoding="utf-8")
    tampered = text.replace(", 0x", ", 0x1", 1)
    (tmp_path / k.TABLE_LEAN).write_text(tampered, encoding="utf-8")
    with pytest.raises(k.KernelRefError, match="Table.lean"):
        k.evidence(tmp_path)


# --- bad input -------------------------------------------------------------------------------


def test_bad_workflow_file(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(k.KernelRefError, match="w.json"):
        k.load_workflows(bad)
    data = json.loads((ROOT / k.WORKFLOWS_JSON).read_text(encoding="utf-8"))
    data["workflows"][0]["steps"][0] = ["teleport", 1]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(k.KernelRefError, match="bad request"):
        k.load_workflows(bad)
    with pytest.raises(k.KernelRefError, match="not found"):
        k.load_workflows(tmp_path / "missing.json")


def test_cli_check_and_atomic_write(tmp_path, monkeypatch, generated):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(k, "generate", lambda root, step_fn=None: generated)
    runner = CliRunner()
    res = runner.invoke(k.cli, ["lean-table", "--check"])
    assert res.exit_code == 0, res.output
    stale = tmp_path / "Table.lean"
    stale.write_text("stale\n", encoding="utf-8")
    res = runner.invoke(k.cli, ["lean-table", "--check", "--out", str(stale)])
    assert res.exit_code != 0 and "out of date" in res.output
    res = runner.invoke(k.cli, ["lean-table", "--out", str(stale)])
    assert res.exit_code == 0
    assert stale.read_bytes() == (ROOT / k.TABLE_LEAN).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["Table.lean"]
