"""Tests of the single-owner kernel's Python reference and of its Lean agreement table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.results.kernel import table as kernel_table
from pytools.results.kernel import workflows as kernel_workflows
from pytools.results.kernel.cli import main as kernel_cli
from pytools.results.kernel.model import (
    Domain,
    Holding,
    KernelRefError,
    KState,
    Outcome,
    Request,
    domain_states,
    encode_state,
    initial_state,
    reachable_states,
    requests,
    step,
    well_formed,
)
from pytools.results.kernel.result import RESULT_LIMITS, THEOREMS
from pytools.results.kernel.result import evidence as kernel_evidence
from pytools.results.kernel.table import (
    MODEL_LEAN,
    ROWS_PER_CHUNK,
    TABLE_DOMAIN,
    TABLE_LEAN,
    CommittedTable,
    Row,
    compare_rows,
    generate,
    read_table,
    render_self_test,
    table_rows,
)
from pytools.results.kernel.workflows import FAMILIES, WORKFLOWS_JSON, load_workflows, run_workflow
from pytools.results.spec import Evidence

ROOT = Path(__file__).resolve().parent.parent
DOM = TABLE_DOMAIN  # the domain of the Lean-checked table
TARGET = Domain()  # 3 holders, 2 tickets, epochs and generations 0..3: reference-only checks


@pytest.fixture(scope="module")
def states() -> list[KState]:
    return domain_states(DOM)


@pytest.fixture(scope="module")
def generated() -> str:
    return generate(ROOT)


@pytest.fixture(scope="module")
def reference_rows() -> list[Row]:
    return table_rows(DOM)


@pytest.fixture(scope="module")
def alphabet() -> list[Request]:
    return requests(DOM)


@pytest.fixture(scope="module")
def committed() -> CommittedTable:
    return read_table(ROOT / TABLE_LEAN)


@pytest.fixture(scope="module")
def evidence() -> Evidence:
    return kernel_evidence(ROOT)


# --- the reference's own invariants, over the whole domain -----------------------------------


def test_domain_sizes(states, alphabet):
    eg = (DOM.max_epoch + 1) * (DOM.max_gen + 1)
    assert len(alphabet) == (DOM.tickets + 1) * (DOM.holders + 1) ** 2 * eg + \
        2 * (DOM.tickets + 1) * eg + 3 * (DOM.holders + 1) * eg + DOM.max_epoch + 1
    assert len(set(states)) == len(states)
    assert all(well_formed(DOM, s) for s in states)


@pytest.mark.parametrize("dom", [DOM, TARGET])
def test_reachable_inside_domain(dom):
    states = domain_states(dom)
    reach = reachable_states(dom)
    assert initial_state(dom) in reach
    assert reach <= set(states)
    assert len(reach) < len(states)  # e.g. owned states at generation 0 are unreachable


def test_invariants_every_case(states, alphabet):
    """Every case of the table's domain, in the reference."""
    dom = DOM
    domain = set(states)
    for st in states:
        readers = set()
        for req in alphabet:
            out = step(dom, st, req)
            if out.refusal is not None:
                assert out.state == st, "a refusal changed the state"
                continue
            assert out.state in domain, "the domain is not closed under accepted steps"
            assert out.state.gen >= st.gen and out.state.epoch >= st.epoch
            if req.kind == "read":
                assert st.holding == Holding("owned", req.args[0])
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
                assert out.state.holding == Holding("owned", want)
                again = step(dom, out.state, req)
                assert again.refusal == "ticketUsed"
            if req.kind not in ("evict", "realloc"):
                assert (st.holding.kind == "free") == (out.state.holding.kind == "free")
        assert len(readers) <= 1, "two live owners"
        if st.holding.kind == "escrow":
            assert not readers, "a read succeeded in escrow"


def test_stale_requests_refused_unchanged(states, alphabet):
    for st in states[::7]:
        for req in alphabet:
            out = step(DOM, st, req)
            if req.epoch != st.epoch:
                assert out == Outcome(st, "staleEpoch")
            elif req.gen is not None and req.gen != st.gen:
                assert out == Outcome(st, "staleGen")


# --- the committed Lean table ----------------------------------------------------------------


def test_table_regenerates_byte_identical(generated):
    committed = (ROOT / TABLE_LEAN).read_bytes()
    assert generated.encode("utf-8") == committed


def test_model_carries_self_test():
    text = (ROOT / MODEL_LEAN).read_text(encoding="utf-8")
    assert render_self_test() in text


def test_theorem_names_exist(committed):
    texts = {
        "KVCache.Kernel.Table.": (ROOT / TABLE_LEAN).read_text(encoding="utf-8"),
        "KVCache.Kernel.": (ROOT / MODEL_LEAN).read_text(encoding="utf-8")
        + (ROOT / "Proofs/Kernel/Invariants.lean").read_text(encoding="utf-8"),
    }
    assert len(THEOREMS) >= 12
    for name in THEOREMS:
        prefix = next(p for p in texts if name.startswith(p))
        short = name[len(prefix):]
        assert f"\ntheorem {short} " in texts[prefix], name
    assert sum(n.startswith("KVCache.Kernel.Table.table_agrees_") for n in THEOREMS) == \
        committed.chunks


def test_table_covers_domain(committed, states, alphabet):
    assert committed.domain == DOM
    assert [r.state for r in committed.rows] == [encode_state(DOM, s) for s in states]
    assert committed.chunks == -(-len(states) // ROWS_PER_CHUNK)
    for row in committed.rows:
        assert row.digits < 16 ** len(alphabet)


def _forgets_generation(dom: Domain, st: KState, req: Request) -> Outcome:
    """A planted bug: the generation check is skipped (stale-generation requests pass)."""
    if req.kind != "advance" and req.args[-1] != st.gen:
        req = Request(req.kind, req.args[:-1] + (st.gen,))
    return step(dom, st, req)


def _forgets_ticket_use(dom: Domain, st: KState, req: Request) -> Outcome:
    """A planted bug: settling a ticket does not mark it used."""
    out = step(dom, st, req)
    if req.kind in ("commit", "abort") and out.refusal is None:
        t = req.args[0]
        book = out.state.book[:t] + (st.book[t],) + out.state.book[t + 1:]
        return Outcome(KState(out.state.epoch, out.state.gen, out.state.holding, book), None)
    return out


@pytest.mark.parametrize("bug", [_forgets_generation, _forgets_ticket_use])
def test_planted_bug_caught_by_table(bug, committed):
    buggy = table_rows(DOM, bug)
    problems = compare_rows(list(committed.rows), buggy, DOM)
    assert problems, "the agreement check missed a planted bug"


def test_correct_reference_matches_table(committed, reference_rows):
    assert compare_rows(list(committed.rows), reference_rows, DOM) == []


def test_planted_bug_caught_by_workflows(committed):
    dom, flows = load_workflows(ROOT / WORKFLOWS_JSON)
    for bug in (_forgets_generation, _forgets_ticket_use):
        runs = [run_workflow(dom, wf, bug) for wf in flows]
        got = [(encode_state(dom, r.final), r.refusals) for r in runs]
        assert got != list(committed.workflow_finals)


def test_planted_bug_caught_by_evidence(monkeypatch):
    """A monkeypatched reference step that forgets the generation check: evidence refuses."""
    original = step

    def buggy(dom: Domain, st: KState, req: Request) -> Outcome:
        if req.kind != "advance" and req.args[-1] != st.gen:
            req = Request(req.kind, req.args[:-1] + (st.gen,))
        return original(dom, st, req)

    monkeypatch.setattr(kernel_table, "step", buggy)
    monkeypatch.setattr(kernel_workflows, "step", buggy)
    with pytest.raises(KernelRefError, match="differs"):
        kernel_evidence(ROOT)


# --- workflows and evidence ------------------------------------------------------------------


def test_workflows_agree(evidence):
    rows = evidence.extra["workflows"]
    assert len(rows) >= 12
    assert {r["family"] for r in rows} == set(FAMILIES)
    assert all(r["agree"] for r in rows)
    assert evidence.figures["workflows_agree"] == len(rows)


def test_evidence_figures(evidence, committed, alphabet):
    f = evidence.figures
    assert f["cases_checked"] == len(committed.rows) * len(alphabet)
    assert f["cases_accepted"] + f["cases_refused"] == f["cases_checked"]
    assert (f["holders"], f["tickets"], f["max_epoch"], f["max_gen"]) == (3, 2, 1, 2)
    assert (f["workflow_max_epoch"], f["workflow_max_gen"]) == (3, 3)
    paths = {i.path for i in evidence.inputs}
    assert paths == {TABLE_LEAN.as_posix(), WORKFLOWS_JSON.as_posix()}
    assert RESULT_LIMITS


def test_evidence_rejects_tampered_table(tmp_path):
    (tmp_path / "Proofs/Kernel").mkdir(parents=True)
    (tmp_path / WORKFLOWS_JSON).parent.mkdir(parents=True)
    (tmp_path / WORKFLOWS_JSON).write_bytes((ROOT / WORKFLOWS_JSON).read_bytes())
    text = (ROOT / TABLE_LEAN).read_text(encoding="utf-8")
    tampered = text.replace(", 0x", ", 0x1", 1)
    (tmp_path / TABLE_LEAN).write_text(tampered, encoding="utf-8")
    with pytest.raises(KernelRefError, match="Table.lean"):
        kernel_evidence(tmp_path)


# --- bad input -------------------------------------------------------------------------------


def test_bad_workflow_file(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(KernelRefError, match="w.json"):
        load_workflows(bad)
    data = json.loads((ROOT / WORKFLOWS_JSON).read_text(encoding="utf-8"))
    data["workflows"][0]["steps"][0] = ["teleport", 1]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KernelRefError, match="bad request"):
        load_workflows(bad)
    with pytest.raises(KernelRefError, match="not found"):
        load_workflows(tmp_path / "missing.json")


def test_cli_check_and_atomic_write(tmp_path, monkeypatch, generated):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr("pytools.results.kernel.cli.generate", lambda root, step_fn=None: generated)
    runner = CliRunner()
    res = runner.invoke(kernel_cli, ["lean-table", "--check"])
    assert res.exit_code == 0, res.output
    stale = tmp_path / "Table.lean"
    stale.write_text("stale\n", encoding="utf-8")
    res = runner.invoke(kernel_cli, ["lean-table", "--check", "--out", str(stale)])
    assert res.exit_code != 0 and "out of date" in res.output
    res = runner.invoke(kernel_cli, ["lean-table", "--out", str(stale)])
    assert res.exit_code == 0
    assert stale.read_bytes() == (ROOT / TABLE_LEAN).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["Table.lean"]
