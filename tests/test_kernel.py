"""Tests of the single-owner kernel's Python reference (``pytools.results.kernel``): the step
function on hand cases and exhaustively on small domains, the codes, the alphabet and
candidates, the system and the workflow bench, the generated Lean modules (byte for byte), the
command line, the published result, and planted defects (a wrong kernel must be caught).
No Lean here: ``tests/test_kernel_lean.py`` compiles the bench's planted twin."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytools.results.cli import regenerate
from pytools.results.kernel import system
from pytools.results.kernel import workflows_lean as wl
from pytools.results.kernel.cli import main as kernel_cli
from pytools.results.kernel.codes import (
    ACCEPTED,
    alphabet,
    candidates,
    outcome_code,
    result_digit,
    state_code,
    state_of_code,
    state_space,
)
from pytools.results.kernel.model import (
    Cap,
    Domain,
    KernelRefError,
    KState,
    Outcome,
    Request,
    Slot,
    Ticket,
    initial_state,
    step,
)
from pytools.results.kernel.result import RESULT_ID, RESULT_LIMITS, THEOREMS, workflow_rows
from pytools.results.kernel.result import evidence as kernel_evidence
from pytools.results.kernel.workflows import (
    FAMILIES,
    LEAN_NAMESPACE,
    WORKFLOWS_JSON,
    load_workflows,
    run,
    theorem_names,
)

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / wl.WORKFLOWS_LEAN
TABLE = ROOT / "Proofs" / "Kernel" / "Table.lean"
PLANTED = ROOT / "tests" / "fixtures" / "lean" / "kernel" / "WorkflowsPlanted.lean"
SCHEMA = ROOT / "pytools" / "publish" / "schemas" / "figures" / f"{RESULT_ID}.schema.json"
#: The finite check's domain (the lead's ``table.TABLE_DOMAIN``, restated: a test of it).
TABLE_DOM = Domain(holders=3, blocks=1, max_epoch=3, max_gen=3, max_seq=5)
#: A small domain every property is checked on exhaustively (every state, whole alphabet).
SMALL = Domain(holders=2, blocks=2, max_epoch=1, max_gen=1, max_seq=3)
#: A domain for hand cases.
HAND = Domain(holders=3, blocks=2, max_epoch=2, max_gen=2, max_seq=6)

StepFn = Callable[[Domain, KState, Request], Outcome]


def reachable(dom: Domain, step_fn: StepFn = step) -> set[KState]:
    """The reachable states, searched through every state's candidates (enough by
    :func:`test_refusal_changes_nothing_and_accepted_requests_are_candidates` here and
    ``accepted_mem_candidates`` in Lean)."""
    init = initial_state(dom)
    seen, todo = {init}, [init]
    while todo:
        st = todo.pop()
        for req in candidates(dom, st):
            out = step_fn(dom, st, req)
            if out.refusal is None and out.state not in seen:
                seen.add(out.state)
                todo.append(out.state)
    return seen


@pytest.fixture(scope="module")
def small_states() -> set[KState]:
    return reachable(SMALL)


@pytest.fixture(scope="module")
def table_states() -> set[KState]:
    return reachable(TABLE_DOM)


def run_reqs(dom: Domain, reqs: list[Request], st: KState | None = None) -> list[Outcome]:
    """Decide requests in order (a refusal leaves the state); every outcome."""
    st = st if st is not None else initial_state(dom)
    outs = []
    for req in reqs:
        out = step(dom, st, req)
        outs.append(out)
        st = out.state
    return outs


def cap_sent(out: Outcome) -> Cap:
    (msg,) = out.sends
    assert msg.kind == "grant" and isinstance(msg.body, Cap)
    return msg.body


def ticket_sent(out: Outcome) -> Ticket:
    tickets = {m.body for m in out.sends if m.kind == "ticket"}
    (t,) = tickets
    assert isinstance(t, Ticket)
    return t


# --- the step function, hand cases ------------------------------------------------------------


def test_alloc_issues_a_current_capability_that_reads() -> None:
    (a,) = run_reqs(HAND, [Request("alloc", 0, arg=1)])
    assert a.refusal is None
    assert cap_sent(a) == Cap(1, 0, 0, 1, 0)
    assert a.state.slots[1] == Slot(1, 1, ("owned", 0))
    out = step(HAND, a.state, Request("read", 0, cap_sent(a)))
    assert (out.refusal, out.state, out.sends) == (None, a.state, ())


def test_stale_epoch_refused_and_nothing_changes() -> None:
    a, adv = run_reqs(HAND, [Request("alloc", 0, arg=0), Request("advance")])
    assert adv.refusal is None and adv.state.epoch == 1
    old = cap_sent(a)
    for kind in ("read", "evict"):
        out = step(HAND, adv.state, Request(kind, 0, old))
        assert (out.refusal, out.state, out.sends) == ("staleEpoch", adv.state, ())
    assert step(HAND, adv.state, Request("begin", 0, old, 1)).refusal == "staleEpoch"
    # the advance re-issued the owner a capability of the new epoch
    new = cap_sent(adv)
    assert new == Cap(0, 0, 1, 1, 0)
    assert step(HAND, adv.state, Request("read", 0, new)).refusal is None


def test_stale_generation_refused_realloc_kills_older_tokens() -> None:
    a, b, c = run_reqs(HAND, [Request("alloc", 0, arg=0), Request("alloc", 0, arg=0),
                              Request("alloc", 1, arg=0)])
    # only the first alloc succeeds; the block is busy afterwards
    assert a.refusal is None and {b.refusal, c.refusal} == {"notFree"}
    cap0 = cap_sent(a)
    st = a.state
    begin = step(HAND, st, Request("begin", 0, cap0, 1))
    tk = ticket_sent(begin)
    abort = step(HAND, begin.state, Request("abort", 0, tk))
    cap0b = cap_sent(abort)
    evict = step(HAND, abort.state, Request("evict", 0, cap0b))
    realloc = step(HAND, evict.state, Request("alloc", 2, arg=0))
    assert realloc.refusal is None and realloc.state.slots[0].gen == 2
    for old in (cap0, cap0b):
        assert step(HAND, realloc.state, Request("read", 0, old)).refusal == "staleGen"
    for kind in ("commit", "abort"):
        out = step(HAND, realloc.state, Request(kind, 1, tk))
        assert (out.refusal, out.state) == ("staleGen", realloc.state)


def test_escrow_is_unreadable() -> None:
    a, = run_reqs(HAND, [Request("alloc", 0, arg=0)])
    begin = step(HAND, a.state, Request("begin", 0, cap_sent(a), 2))
    assert begin.refusal is None and begin.state.slots[0].phase == ("escrow", 0, 2)
    assert {m.to for m in begin.sends} == {0, 2}
    sender_cap = cap_sent(a)
    for who in range(HAND.holders):
        forged = Cap(0, who, 0, 1, begin.state.slots[0].seq - 1)  # even a current-looking one
        for cap in (sender_cap, forged):
            assert step(HAND, begin.state, Request("read", who, cap)).refusal == "inEscrow"


def test_commit_exactly_once_under_replay() -> None:
    a, = run_reqs(HAND, [Request("alloc", 0, arg=0)])
    begin = step(HAND, a.state, Request("begin", 0, cap_sent(a), 1))
    tk = ticket_sent(begin)
    commit = step(HAND, begin.state, Request("commit", 1, tk))
    assert commit.refusal is None and commit.state.slots[0].phase == ("owned", 1)
    new = cap_sent(commit)
    assert new.holder == 1 and new.nonce == tk.nonce + 1
    for kind in ("commit", "abort"):  # the replay, and a late abort: settled, nothing changes
        out = step(HAND, commit.state, Request(kind, 1, tk))
        assert (out.refusal, out.state, out.sends) == ("notPending", commit.state, ())
    # the sender's old capability is revoked, the receiver's reads
    assert step(HAND, commit.state, Request("read", 0, cap_sent(a))).refusal == "revoked"
    assert step(HAND, commit.state, Request("read", 1, new)).refusal is None
    # a leaked capability does not read for someone else
    assert step(HAND, commit.state, Request("read", 2, new)).refusal == "wrongHolder"


def test_forged_capability_refused_the_stored_owner_decides() -> None:
    """Every field of a capability is public: a holder that writes the current capability with
    its own id is refused (the stored owner is another), the owner's own one too (it names
    another holder); only the owner reads."""
    a, = run_reqs(HAND, [Request("alloc", 0, arg=0)])
    slot = a.state.slots[0]
    for who in range(HAND.holders):
        for named in range(HAND.holders):
            forged = Cap(0, named, a.state.epoch, slot.gen, slot.seq - 1)
            out = step(HAND, a.state, Request("read", who, forged))
            want = None if who == named == 0 else (
                "wrongHolder" if named != who else "notOwner")
            assert (out.refusal, out.state, out.sends) == (
                want, a.state, ()), (who, named)


def test_leaked_ticket_decides_nothing_for_a_bystander() -> None:
    """Commit only from the receiver; abort from the sender or the receiver; never from a
    bystander or an unknown presenter, whatever ticket it holds."""
    a, = run_reqs(HAND, [Request("alloc", 0, arg=0)])
    begin = step(HAND, a.state, Request("begin", 0, cap_sent(a), 1))
    tk = ticket_sent(begin)
    want = {("commit", 0): "notParty", ("commit", 1): None, ("commit", 2): "notParty",
            ("commit", 3): "unknownPresenter", ("abort", 0): None, ("abort", 1): None,
            ("abort", 2): "notParty", ("abort", 3): "unknownPresenter"}
    for (kind, who), refusal in want.items():
        out = step(HAND, begin.state, Request(kind, who, tk))
        assert out.refusal == refusal, (kind, who)
        if refusal:
            assert (out.state, out.sends) == (begin.state, ())


def test_abort_restores_sender_and_bounds_refuse() -> None:
    dom = Domain(2, 1, 0, 1, 3)
    a, = run_reqs(dom, [Request("alloc", 0, arg=0)])
    begin = step(dom, a.state, Request("begin", 0, cap_sent(a), 1))
    abort = step(dom, begin.state, Request("abort", 0, ticket_sent(begin)))
    assert abort.refusal is None and cap_sent(abort).holder == 0
    assert abort.state.slots[0] == Slot(1, 3, ("owned", 0))
    # seq 3 of 3: no room for another transfer; no epoch to advance to
    assert step(dom, abort.state, Request("begin", 0, cap_sent(abort), 1)).refusal == "bound"
    assert step(dom, abort.state, Request("advance")).refusal == "bound"
    assert step(dom, begin.state, Request("advance")).refusal == "inEscrow"
    ev = step(dom, abort.state, Request("evict", 0, cap_sent(abort)))
    assert step(dom, ev.state, Request("alloc", 1, arg=0)).refusal == "bound"


def test_unknown_ids_refused() -> None:
    a, = run_reqs(HAND, [Request("alloc", 0, arg=0)])
    cap = cap_sent(a)
    assert step(HAND, a.state, Request("read", 3, cap)).refusal == "unknownPresenter"
    assert step(HAND, a.state, Request("read", 0, cap._replace(blk=2))).refusal == "unknownBlock"
    assert step(HAND, a.state, Request("begin", 0, cap, 3)).refusal == "unknownHolder"
    assert step(HAND, a.state, Request("begin", 0, cap, 0)).refusal == "selfTransfer"
    assert step(HAND, a.state, Request("resend", arg=2)).refusal == "unknownBlock"
    assert step(HAND, a.state, Request("alloc", 3, arg=1)).refusal == "unknownPresenter"
    with pytest.raises(KernelRefError, match="unknown request kind"):
        step(HAND, a.state, Request("steal", 0, cap))
    with pytest.raises(KernelRefError, match="needs a ticket"):
        step(HAND, a.state, Request("commit", 0, cap))


def test_resend_repeats_the_current_token_only() -> None:
    a, = run_reqs(HAND, [Request("alloc", 1, arg=0)])
    out = step(HAND, a.state, Request("resend", arg=0))
    assert (out.refusal, out.state, cap_sent(out)) == (None, a.state, cap_sent(a))
    begin = step(HAND, a.state, Request("begin", 1, cap_sent(a), 0))
    again = step(HAND, begin.state, Request("resend", arg=0))
    assert set(again.sends) == set(begin.sends)
    assert step(HAND, initial_state(HAND), Request("resend", arg=1)).refusal == "notOwned"


# --- the step function, exhaustively on a small domain ----------------------------------------


def test_refusal_changes_nothing_and_accepted_requests_are_candidates(small_states) -> None:
    """Every reachable state of the small domain, every request of its alphabet: a refusal
    changes nothing and sends nothing; an accepted request is one of the state's candidates
    (``accepted_mem_candidates``) and presents only current tokens (``accepted_current``)."""
    alpha = alphabet(SMALL)
    for st in small_states:
        cands = set(candidates(SMALL, st))
        for req in alpha:
            out = step(SMALL, st, req)
            if out.refusal is not None:
                assert (out.state, out.sends) == (st, ()), (st, req)
                continue
            assert req in cands, (st, req)
            tok = req.token
            if tok is not None:
                slot = st.slots[tok.blk]
                assert (tok.epoch, tok.gen, tok.nonce + 1) == (st.epoch, slot.gen, slot.seq)


def test_small_domain_size(small_states) -> None:
    assert len(small_states) == 181


def test_progress_in_every_reachable_state(small_states) -> None:
    """Owners can read and evict with their current capability; a pending transfer can be
    committed and aborted; a free block below the generation bound can be allocated."""
    for st in small_states:
        for b, slot in enumerate(st.slots):
            kind = slot.phase[0]
            if kind == "owned":
                h = int(slot.phase[1])
                cap = Cap(b, h, st.epoch, slot.gen, slot.seq - 1)
                assert step(SMALL, st, Request("read", h, cap)).refusal is None
                assert step(SMALL, st, Request("evict", h, cap)).refusal is None
                assert cap_sent(step(SMALL, st, Request("resend", arg=b))) == cap
            elif kind == "escrow":
                tk = Ticket(b, st.epoch, slot.gen, slot.seq - 1)
                sender, receiver = int(slot.phase[1]), int(slot.phase[2])
                assert step(SMALL, st, Request("commit", receiver, tk)).refusal is None
                for who in (sender, receiver):
                    assert step(SMALL, st, Request("abort", who, tk)).refusal is None
            elif slot.gen < SMALL.max_gen:
                assert step(SMALL, st, Request("alloc", 1, arg=b)).refusal is None


def test_clocks_only_move_forward(small_states) -> None:
    for st in small_states:
        for req in candidates(SMALL, st):
            nxt = step(SMALL, st, req).state
            assert nxt.epoch >= st.epoch
            for s, n in zip(st.slots, nxt.slots, strict=True):
                assert n.gen >= s.gen
                if nxt.epoch == st.epoch and n.gen == s.gen:
                    assert n.seq >= s.seq


# --- codes, alphabet, candidates ----------------------------------------------------------------


def test_table_domain_sizes(table_states) -> None:
    assert len(table_states) == 301
    assert len(alphabet(TABLE_DOM)) == 16_651
    assert len(set(alphabet(TABLE_DOM))) == 16_651
    assert sum(len(candidates(TABLE_DOM, s)) for s in table_states) == 301 * 26


def test_state_codes_round_trip(table_states, small_states) -> None:
    for dom, states in ((TABLE_DOM, table_states), (SMALL, small_states)):
        codes = {state_code(dom, s) for s in states}
        assert len(codes) == len(states)
        assert all(0 <= c < state_space(dom) for c in codes)
        for s in states:
            assert state_of_code(dom, state_code(dom, s)) == s
    bench_dom, _ = load_workflows(ROOT / WORKFLOWS_JSON)
    assert state_code(bench_dom, initial_state(bench_dom)) == 168  # `init_code` of the bench


def test_outcome_codes_name_the_next_state(table_states) -> None:
    for st in sorted(table_states, key=lambda s: state_code(TABLE_DOM, s))[:60]:
        for req in candidates(TABLE_DOM, st):
            out = step(TABLE_DOM, st, req)
            code = outcome_code(TABLE_DOM, out)
            assert state_of_code(TABLE_DOM, code >> 64) == out.state
            assert (code & ((1 << 64) - 1) == 0) == (out.sends == ())
            assert (result_digit(out) == ACCEPTED) == (out.refusal is None)


# --- the system and the workflow bench ---------------------------------------------------------


def test_flatten_layout() -> None:
    dom = Domain(2, 1, 1, 1, 3)
    st, refused = system.run_workflow(dom, [["alloc", 0, 0], ["deliver", 0], ["deliver", 0]])
    # epoch; block 0: gen 1, seq 1, owned by 0; no message; holder 0 knows one capability
    assert system.flatten(st) == [0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0]
    assert refused == 0


def test_impossible_actions_make_the_workflow_impossible() -> None:
    dom = Domain(2, 1, 1, 1, 3)
    assert system.run_workflow(dom, [["read", 0, 0]]) is None  # knows no token
    assert system.run_workflow(dom, [["deliver", 0]]) is None  # nothing in flight
    assert system.run_workflow(dom, [["alloc", 2, 0]]) is None  # no such holder
    with pytest.raises(KernelRefError, match="bad action"):
        system.run_workflow(dom, [["deliver"]])


def test_bench_size_and_families() -> None:
    dom, flows = load_workflows(ROOT / WORKFLOWS_JSON)
    assert dom == Domain(3, 2, 3, 3, 6)
    assert len(flows) == 32
    assert {w.family for w in flows} == set(FAMILIES)


def test_every_workflow_agrees() -> None:
    rows = workflow_rows(ROOT)
    assert len(rows) == 32
    assert all(r["agree"] for r in rows), [r["name"] for r in rows if not r["agree"]]
    assert sum(r["refusals"] for r in rows) == 24
    assert [set(r) for r in rows] == [{"name", "family", "steps", "refusals", "agree"}] * 32


def test_kernel_trajectory_is_a_chain_and_counts_the_refusals() -> None:
    dom, flows = load_workflows(ROOT / WORKFLOWS_JSON)
    for w in flows:
        r = run(dom, w)
        assert sum(out.refusal is not None for _, _, out in r.events) == r.refusals, w.name
        assert r.events[0][1] == initial_state(dom), w.name
        for (_, _, prev), (_, before, _) in zip(r.events, r.events[1:], strict=False):
            assert prev.state == before, w.name


def test_exactly_once_and_leaks_in_the_bench() -> None:
    dom, flows = load_workflows(ROOT / WORKFLOWS_JSON)
    by_name = {w.name: run(dom, w) for w in flows}
    replays = [out.refusal for req, _, out in by_name["dup_commit"].events
               if req.kind == "commit"]
    assert replays == [None, "notPending"]
    leaked = [out.refusal for _, _, out in by_name["leaked_cap_refused"].events]
    assert "wrongHolder" in leaked
    forged = [(req.who, out.refusal) for req, _, out in by_name["forged_cap_refused"].events
              if req.kind == "read"]
    assert forged == [(1, "notOwner"), (0, None)]
    bystander = [(req.kind, req.who, out.refusal) for req, _, out in
                 by_name["leaked_ticket_bystander_refused"].events
                 if req.kind in ("commit", "abort")]
    assert bystander == [("commit", 2, "notParty"), ("abort", 2, "notParty"),
                         ("commit", 1, None)]


# --- the generated Lean bench --------------------------------------------------------------------


def test_committed_bench_is_byte_identical_to_the_generator() -> None:
    assert wl.generate_workflows(ROOT).encode("utf-8") == BENCH.read_bytes()


def test_theorem_names_are_the_benchs_theorems() -> None:
    _, flows = load_workflows(ROOT / WORKFLOWS_JSON)
    in_file = re.findall(r"^theorem (\w+)", BENCH.read_text(encoding="utf-8"), re.M)
    assert list(theorem_names(flows)) == in_file
    assert [t for t in THEOREMS if t.startswith(LEAN_NAMESPACE + ".")] == \
        [f"{LEAN_NAMESPACE}.{n}" for n in in_file]


def test_bench_lines_within_100_columns() -> None:
    for n, line in enumerate(BENCH.read_text(encoding="utf-8").splitlines(), 1):
        assert len(line) <= 100, f"{BENCH}:{n}"


def _theorem_bodies(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^theorem (\w+) :\n(.*?)\n  decide \+kernel$", text, re.M | re.S)}


def test_planted_twin_matches_the_bench() -> None:
    """The planted twin (compiled by ``test_kernel_lean.py``) shares the bench's definitions;
    its control is a bench theorem verbatim and each planted theorem differs from all of them."""
    planted = PLANTED.read_text(encoding="utf-8")
    bench = BENCH.read_text(encoding="utf-8")
    cut_p = planted.index("\n/-- Planted: ")
    cut_b = bench.index("\n/-- `")
    title = "# Single-owner state movement: the workflow bench (generated)"
    assert planted[:cut_p].rstrip() == bench[:cut_b].replace(
        title, "# Planted defects for the workflow bench (must fail, except the control)"
    ).rstrip()
    bodies, ours = _theorem_bodies(planted), _theorem_bodies(bench)
    assert set(bodies) == {f"planted_{n}" for n in (
        "wrong_final_state", "wrong_refusal_count", "wrong_digit", "wrong_out",
        "broken_chain", "replay_accepted", "forged_read_accepted", "honest_control")}
    assert bodies.pop("planted_honest_control") == ours["workflow_commit_basic"]
    for name, body in bodies.items():
        assert body not in ours.values(), name


# --- bad input ------------------------------------------------------------------------------------


def _bench_data() -> dict:
    return json.loads((ROOT / WORKFLOWS_JSON).read_text(encoding="utf-8"))


@pytest.mark.parametrize("edit", [
    lambda d: d["workflows"][0]["actions"].append(["deliver"]),
    lambda d: d["workflows"][0]["actions"].append(["teleport", 0]),
    lambda d: d["workflows"][0]["actions"].append(["deliver", -1]),
    lambda d: d["workflows"][0].update(family="magic"),
    lambda d: d["workflows"][0].update(name="not an identifier"),
    lambda d: d["workflows"][1].update(name=d["workflows"][0]["name"]),
    lambda d: d["workflows"][0].pop("expect_refusals"),
    lambda d: d["domain"].pop("max_seq"),
    lambda d: d["domain"].update(holders="3"),
    lambda d: d.update(workflows=[]),
])
def test_bad_workflow_file_names_the_file(tmp_path: Path, edit) -> None:
    data = _bench_data()
    edit(data)
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KernelRefError, match=re.escape(str(bad))):
        load_workflows(bad)


def test_unreadable_workflow_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(KernelRefError, match=re.escape(str(bad))):
        load_workflows(bad)
    with pytest.raises(KernelRefError, match="file not found"):
        load_workflows(tmp_path / "missing.json")


@pytest.mark.parametrize("edit", [
    lambda d: d["workflows"][0].update(expect_refusals=d["workflows"][0]["expect_refusals"] + 1),
    lambda d: d["workflows"][0]["actions"].insert(0, ["deliver", 5]),  # an impossible action
])
def test_disagreeing_workflow_file_writes_nothing(tmp_path: Path, edit) -> None:
    data = _bench_data()
    edit(data)
    bad = tmp_path / WORKFLOWS_JSON
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KernelRefError, match=re.escape(str(bad)) + ".*commit_basic"):
        wl.generate_workflows(tmp_path)
    res = CliRunner().invoke(regenerate, ["--root", str(tmp_path), RESULT_ID])
    assert res.exit_code != 0 and "commit_basic" in res.output
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [bad]


# --- command line ---------------------------------------------------------------------------------


def test_cli_workflows_prints_the_bench() -> None:
    res = CliRunner().invoke(kernel_cli, ["workflows"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert len(lines) == 2 + 32
    assert all(line.endswith(" yes") for line in lines[2:])


def test_cli_is_wired_into_pytools() -> None:
    from pytools.cli import cli

    res = CliRunner().invoke(cli, ["kernel", "--help"])
    assert res.exit_code == 0
    for cmd in ("workflows", "summary"):
        assert cmd in res.output


# --- the published result -----------------------------------------------------------------------


def test_theorems_exist_in_the_lean_sources() -> None:
    """Every published theorem is declared in ``Proofs/Kernel/*.lean`` under its namespace
    (the table's three in the generated ``Table.lean``)."""
    declared = set()
    for path in sorted((ROOT / "Proofs" / "Kernel").glob("*.lean")):
        text = path.read_text(encoding="utf-8")
        (ns,) = set(re.findall(r"^namespace (\S+)$", text, re.M))
        declared |= {f"{ns}.{n}" for n in re.findall(r"^theorem (\S+)", text, re.M)}
    table = {t for t in THEOREMS if t.startswith("KVCache.Kernel.Table.")}
    assert table == {f"KVCache.Kernel.Table.{n}" for n in (
        "table_passes", "reachable_iff_listed", "reachable_agrees_reference")}
    assert set(THEOREMS) <= declared, sorted(set(THEOREMS) - declared)
    # 43 general, 10 provenance, 5 tagged-token, 6 exactly-once; 3 table; 33 bench;
    # the tagged variant's 4 checker theorems, 3 of its table and 40 of its bench.
    assert len(set(THEOREMS)) == len(THEOREMS) == 43 + 10 + 5 + 6 + 3 + 33 + 4 + 3 + 40


def test_limits_say_what_is_not_modelled() -> None:
    text = " ".join(RESULT_LIMITS)
    for phrase in ("duplicate", "reorder", "drop", "leak", "liveness", "crashes",
                   "hardware custody", "authentication of the presenter", "stored owner",
                   "never transferred", "3 holders, 1 block", "every reachable",
                   "one unknown id", "3 holders and 2 blocks"):
        assert phrase in text, phrase


def test_figures_schema_lists_the_figures() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"]) == {
        "holders", "blocks", "max_epoch", "max_gen", "max_seq", "reachable_states",
        "requests_per_state", "cases_checked", "candidate_cases", "cases_accepted",
        "dictionary_entries", "workflow_holders", "workflow_blocks", "workflow_max_epoch",
        "workflow_max_gen", "workflow_max_seq", "workflows", "workflows_agree",
        "mac_holders", "mac_blocks", "mac_max_epoch", "mac_max_gen", "mac_max_seq",
        "mac_reachable_states", "mac_requests_per_state", "mac_tagged_cases",
        "mac_tagged_cases_right", "mac_cases_checked", "mac_workflows", "mac_workflows_agree",
        "mac_forge_workflows", "mac_verdicts_kept"}
    assert all(p["type"] == "integer" for p in schema["properties"].values())


# --- planted defects: a wrong kernel must be caught ------------------------------------------


def stale_epoch_read_accepted(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: a read presenting a capability of an older epoch is accepted."""
    out = step(dom, st, req)
    if req.kind == "read" and out.refusal == "staleEpoch":
        return Outcome(st, (), None)
    return out


def commit_without_seq_bump(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: a commit hands the block over but does not bump its sequence counter."""
    out = step(dom, st, req)
    if req.kind == "commit" and out.refusal is None:
        b = req.token.blk
        slot = out.state.slots[b]
        slots = list(out.state.slots)
        slots[b] = slot._replace(seq=slot.seq - 1)
        return Outcome(KState(out.state.epoch, tuple(slots)), out.sends, None)
    return out


def replayed_commit_accepted(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: a replayed (settled) commit is accepted and changes nothing."""
    out = step(dom, st, req)
    if req.kind == "commit" and out.refusal == "notPending":
        return Outcome(st, (), None)
    return out


def stored_owner_ignored(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: the kernel of issue 27: a read is accepted whatever the block's stored owner,
    when the capability's holder field names the presenter (a forged capability reads)."""
    out = step(dom, st, req)
    if req.kind == "read" and out.refusal == "notOwner":
        return Outcome(st, (), None)
    return out


def bearer_ticket(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: tickets are bearer tokens again (commit and abort from anyone)."""
    out = step(dom, st, req)
    if req.kind in ("commit", "abort") and out.refusal == "notParty":
        slot = st.slots[req.token.blk]
        party = slot.phase[2] if req.kind == "commit" else slot.phase[1]
        return step(dom, st, req._replace(who=party))
    return out


PLANTED_KERNELS = [stale_epoch_read_accepted, commit_without_seq_bump, replayed_commit_accepted,
                   stored_owner_ignored, bearer_ticket]


@pytest.mark.parametrize("bad", PLANTED_KERNELS)
def test_planted_kernel_fails_the_workflow_comparison(bad: StepFn) -> None:
    rows = workflow_rows(ROOT, bad)
    assert not all(r["agree"] for r in rows)


@pytest.mark.parametrize("bad", PLANTED_KERNELS)
def test_planted_kernel_fails_the_evidence(bad: StepFn) -> None:
    # a bad kernel changes the stated refusals (workflows.json) or, where the count happens
    # to agree, the kernel trajectory the committed bench states (Workflows.lean)
    with pytest.raises(KernelRefError, match=r"workflows|Workflows\.lean"):
        kernel_evidence(ROOT, step_fn=bad)


def test_planted_kernel_changes_the_stated_workflows() -> None:
    """Which workflows each planted kernel breaks (they exist in the bench to catch it)."""
    broken = {bad.__name__: {r["name"] for r in workflow_rows(ROOT, bad) if not r["agree"]}
              for bad in PLANTED_KERNELS}
    assert "advance_stale_cap" in broken["stale_epoch_read_accepted"]
    assert "commit_basic" in broken["commit_without_seq_bump"]
    assert {"dup_commit", "replay_commit_after_new_transfer"} <= broken[
        "replayed_commit_accepted"]
    assert "forged_cap_refused" in broken["stored_owner_ignored"]
    assert "leaked_ticket_bystander_refused" in broken["bearer_ticket"]


def test_planted_kernel_breaks_the_reachable_set() -> None:
    assert reachable(TABLE_DOM, commit_without_seq_bump) != reachable(TABLE_DOM)


@pytest.mark.parametrize("bad", [stored_owner_ignored, bearer_ticket])
def test_planted_presenter_blind_kernel_changes_the_table(bad: StepFn) -> None:
    """Every row's presenter matters: a kernel that ignores the stored owner, or one that
    takes tickets from anyone, gives another table (so the committed one, checked by Lean,
    rejects it)."""
    from pytools.results.kernel.table import generate_table

    assert generate_table(step_fn=bad).encode("utf-8") != TABLE.read_bytes()


# --- the finite-check table (``table.py``, ``Proofs/Kernel/Table.lean``) ----------------------


def test_table_summary_of_the_domain() -> None:
    from pytools.results.kernel.table import TABLE_DOMAIN, table_summary

    assert TABLE_DOMAIN == TABLE_DOM
    s = table_summary()
    assert (s.states, s.alphabet, s.cases) == (301, 16_651, 301 * 16_651)
    assert s.candidate_cases == 301 * 26
    assert 0 < s.accepted <= s.candidate_cases


def test_committed_table_is_byte_identical_to_the_generator() -> None:
    from pytools.results.kernel.table import generate_table

    assert generate_table().encode("utf-8") == TABLE.read_bytes()


def test_planted_kernel_changes_the_table() -> None:
    from pytools.results.kernel.table import generate_table

    try:
        text = generate_table(step_fn=stale_epoch_read_accepted)
    except KernelRefError:
        return
    assert text.encode("utf-8") != TABLE.read_bytes()


def test_evidence_figures() -> None:
    ev = kernel_evidence(ROOT)
    f = ev.figures
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert set(f) == set(schema["properties"])
    assert (f["holders"], f["blocks"], f["max_epoch"], f["max_gen"], f["max_seq"]) == \
        (3, 1, 3, 3, 5)
    assert (f["reachable_states"], f["requests_per_state"]) == (301, 16_651)
    assert f["cases_checked"] == 301 * 16_651
    assert f["candidate_cases"] == 301 * 26
    assert (f["workflow_holders"], f["workflow_blocks"], f["workflow_max_epoch"],
            f["workflow_max_gen"], f["workflow_max_seq"]) == (3, 2, 3, 3, 6)
    assert f["workflows"] == f["workflows_agree"] == 32
    assert [i.path for i in ev.inputs] == ["Proofs/Kernel/Table.lean",
                                           "Proofs/Kernel/Workflows.lean",
                                           "pytools/results/kernel/workflows.json",
                                           "Proofs/Kernel/MacTable.lean",
                                           "Proofs/Kernel/MacWorkflows.lean",
                                           "pytools/results/kernel/mac_workflows.json"]
    assert len(ev.extra["workflows"]) == 32


def test_evidence_refuses_a_stale_committed_bench(tmp_path: Path) -> None:
    import shutil

    for rel in ("Proofs/Kernel/Table.lean", "Proofs/Kernel/Workflows.lean",
                WORKFLOWS_JSON.as_posix()):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    lean = tmp_path / "Proofs/Kernel/Workflows.lean"
    lean.write_text(lean.read_text(encoding="utf-8").replace("decide +kernel", "decide", 1),
                    encoding="utf-8")
    with pytest.raises(KernelRefError, match=r"Workflows\.lean.*regenerate single-owner-kernel"):
        kernel_evidence(tmp_path)
    lean.write_bytes(BENCH.read_bytes())
    table = tmp_path / "Proofs/Kernel/Table.lean"
    table.write_bytes(table.read_bytes() + b"\n")
    with pytest.raises(KernelRefError, match=r"Table\.lean.*regenerate single-owner-kernel"):
        kernel_evidence(tmp_path)


_DOC_THEOREM = re.compile(r"/--(.*?)-/\s*theorem (\S+)(.*?):=", re.S)


def _exactly_once_overclaims(text: str) -> list[str]:
    """Theorems whose docstring says "exactly once" while their statement has no fairness
    hypothesis (``hfair``, or a delivered settling request ``∃ d ∈ ...``): exactly once is
    proved only under fair delivery; without it only at most once is."""
    return [name for doc, name, stmt in _DOC_THEOREM.findall(text)
            if "exactly once" in " ".join(doc.split()).lower()
            and "hfair" not in stmt and "∃ d ∈" not in stmt]


def test_exactly_once_is_claimed_only_under_fair_delivery() -> None:
    """No kernel theorem's docstring says "exactly once" unless its statement assumes fair
    delivery; the planted defect (the old docstring of ``settled_ticket_refused_forever``,
    an at-most-once theorem called exactly once) is caught."""
    texts = {p.name: p.read_text(encoding="utf-8")
             for p in sorted((ROOT / "Proofs" / "Kernel").glob("*.lean"))}
    assert {n: _exactly_once_overclaims(t) for n, t in texts.items()} == {n: [] for n in texts}
    assert "exactly_once_under_fair_delivery" in texts["Once.lean"]
    planted = texts["Invariants.lean"].replace("/-- **At most once.** Once the kernel accepts",
                                               "/-- **Exactly once.** Once the kernel accepts")
    assert planted != texts["Invariants.lean"]
    assert _exactly_once_overclaims(planted) == ["settled_ticket_refused_forever"]
