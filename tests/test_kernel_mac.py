"""Tests of the tagged variant's reference (``pytools.results.kernel.mac``, ``.mac_system``,
``.mac_workflows``): the toy MAC and the tag check, the tagged system, the variant's finite check
and workflow bench (the generated Lean modules byte for byte), and planted tagged kernels (one
that skips the tag check, one that ignores the named presenter, one that takes the tag issued to
nobody): the finite check and the forged-request workflows must refuse each, naming the case.
No Lean here: ``tests/test_kernel_mac_lean.py`` compiles the planted twins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_kernel import reachable

from pytools.results.kernel import mac
from pytools.results.kernel.mac import (
    MAC_DOMAIN,
    MAC_TABLE_LEAN,
    PRESENTER_BLIND_TAG,
    REFERENCE,
    TAG_BLIND,
    WILDCARD_TAG,
    TaggedKernel,
    build_mac_table,
    disagreements,
    generate_mac_table,
    tag_ok,
    tagged_cases,
    toy_mac,
)
from pytools.results.kernel.mac_system import run_mworkflow
from pytools.results.kernel.mac_workflows import (
    MAC_WORKFLOWS_JSON,
    MAC_WORKFLOWS_LEAN,
    generate_mac_workflows,
    play_benches,
    read_benches,
    verdicts_kept,
)
from pytools.results.kernel.model import (
    Cap,
    Domain,
    KernelRefError,
    KState,
    Outcome,
    Request,
    Ticket,
    initial_state,
    step,
)
from pytools.results.kernel.result import mac_evidence
from pytools.results.kernel.workflows import WORKFLOWS_JSON

ROOT = Path(__file__).resolve().parent.parent
PLANTED = {"tag_blind": TAG_BLIND, "presenter_blind_tag": PRESENTER_BLIND_TAG,
           "wildcard_tag": WILDCARD_TAG}


# --- the toy MAC and the tag check ---------------------------------------------------------


def test_toy_mac_packs_addressee_and_token_never_zero() -> None:
    # a leading 1, then 16-bit digits: addressee 0, kind 1 (capability), (0, 0, 0, 1, 0)
    assert toy_mac(0, Cap(0, 0, 0, 1, 0)) == 0x10000000100000000000000010000
    assert toy_mac(2, Ticket(1, 0, 3, 4)) == 0x1000200020001000000030004
    toks = [Cap(b, h, e, g, n) for b in range(3) for h in range(4) for e in range(3)
            for g in range(3) for n in range(3)] + [Ticket(b, e, g, n) for b in range(3)
                                                     for e in range(3) for g in range(3)
                                                     for n in range(3)]
    tags = [toy_mac(q, t) for q in range(4) for t in toks]
    assert len(set(tags)) == len(tags) and 0 not in tags
    with pytest.raises(KernelRefError, match="outside"):
        toy_mac(1 << 16, Cap(0, 0, 0, 0, 0))


def test_tag_check_binds_token_and_named_presenter() -> None:
    dom = MAC_DOMAIN
    st = step(dom, initial_state(dom), Request("alloc", 0, None, 0)).state
    cap = Cap(0, 0, 0, 1, 0)
    read = Request("read", 0, cap)
    assert REFERENCE.step(dom, st, read, toy_mac(0, cap)).refusal is None
    for wrong in (toy_mac(1, cap), 0, toy_mac(0, Cap(0, 0, 0, 1, 1)), toy_mac(0, cap) + 1):
        out = REFERENCE.step(dom, st, read, wrong)
        assert out == Outcome(st, (), "unknownPresenter")
    # requests presenting no token pass whatever their tag
    assert tag_ok(Request("alloc", 1, None, 0), 0) and tag_ok(Request("advance"), 7)


def test_variant_is_tag_check_then_ownership_kernel_everywhere() -> None:
    """Exhaustively on the finite check's domain: every reachable state, every tagged case."""
    cases = tagged_cases(MAC_DOMAIN)
    for st in reachable(MAC_DOMAIN):
        for req, g in cases:
            out = REFERENCE.step(MAC_DOMAIN, st, req, g)
            if tag_ok(req, g):
                assert out == step(MAC_DOMAIN, st, req)
            else:
                assert out == Outcome(st, (), "unknownPresenter")


def test_tagged_cases_right_and_wrong_tags() -> None:
    cases = tagged_cases(MAC_DOMAIN)
    t = build_mac_table()
    assert (t.domain, t.cases, t.right) == (MAC_DOMAIN, len(cases), 1_233) == \
        (Domain(2, 1, 1, 2, 3), 5_517, 1_233)
    # every token request: 2 holders' tags and 0; exactly one right when the presenter is a
    # holder, none otherwise
    for req, g in cases:
        if mac.presents_token(req) and req.token is not None:
            right = tag_ok(req, g)
            assert right == (req.who < 2 and g == toy_mac(req.who, req.token))
    assert len(t.dictionary) == 1 and set(t.groups) == {0}
    assert sum(1 for i in range(t.cases) if t.bits >> i & 1) == t.right


def test_committed_mac_modules_are_byte_identical_to_the_generators() -> None:
    assert generate_mac_table().encode("utf-8") == (ROOT / MAC_TABLE_LEAN).read_bytes()
    assert generate_mac_workflows(ROOT).encode("utf-8") == \
        (ROOT / MAC_WORKFLOWS_LEAN).read_bytes()


# --- the tagged system and the bench --------------------------------------------------------


def test_first_bench_keeps_its_verdicts_on_the_tagged_system() -> None:
    first, forged, runs = play_benches(ROOT)
    assert len(runs) == len(first.flows) + len(forged.flows) == 40
    assert all(r is not None and r.agrees_with_file for r in runs)
    assert verdicts_kept(first, runs) == [True] * len(first.flows)
    # where the first kernel refused a leaked or forged token on its fields, the variant
    # refuses it at the tag check
    leaked = next(r for r in runs if r and r.workflow.name == "leaked_cap_refused")
    assert [o.refusal for *_, o in leaked.events][-1] == "unknownPresenter"


def test_forged_workflows_refused_and_bearer_tag_accepted() -> None:
    _, forged, runs = play_benches(ROOT)
    by_name = {r.workflow.name: r for r in runs if r is not None}
    for w in forged.flows:
        refusals = [o.refusal for *_, o in by_name[w.name].events if o.refusal]
        assert refusals == ["unknownPresenter"] * w.expect_refusals, w.name
    assert by_name["shared_tag_is_bearer"].refusals == 0  # a tag is a bearer credential


def test_spoofed_and_rerouted_requests_carry_the_tags_described() -> None:
    dom = Domain(3, 2, 3, 3, 6)
    log: list = []
    acts = [["alloc", 0, 0], ["deliver", 0], ["deliver", 0], ["read", 0, 0],
            ["reroute", 0, 1], ["spoof", 2, 0, 0, 0, 0]]
    res = run_mworkflow(dom, acts, log)
    assert res is not None
    st = res[0]
    cap = Cap(0, 0, 0, 1, 0)
    assert [(m.body, m.tag) for m in st.net] == [
        (Request("read", 0, cap), 0), (Request("read", 1, cap._replace(holder=1)),
                                       toy_mac(0, cap)), (Request("read", 0, cap),
                                                          toy_mac(0, cap))]
    assert st.issued == ((0, cap),) and st.know[0] == ((cap, toy_mac(0, cap)),)
    # impossible actions make the workflow impossible
    assert run_mworkflow(dom, [["spoof", 2, 0, 0, 0, 0]]) is None
    assert run_mworkflow(dom, [["reroute", 0, 1]]) is None


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["workflows"][0]["actions"].append(["spoof", 1, 0]), "bad action"),
    (lambda d: d["workflows"][0].update(name="commit_basic"), "already in workflows.json"),
    (lambda d: d["domain"].update(holders=2), "not the first bench's"),
])
def test_bad_mac_workflow_file_names_the_file(tmp_path: Path, edit, message: str) -> None:
    for rel in (WORKFLOWS_JSON, MAC_WORKFLOWS_JSON):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    path = tmp_path / MAC_WORKFLOWS_JSON
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(KernelRefError, match=rf"mac_workflows\.json.*{message}"):
        read_benches(tmp_path)


# --- planted tagged kernels: the finite check and the forged workflows refuse them -----------


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_tag_kernel_fails_the_finite_check_naming_the_case(name: str) -> None:
    bad = PLANTED[name]
    table = build_mac_table()
    assert disagreements(table, REFERENCE) == []
    found = disagreements(table, bad)
    assert found and found[0].startswith("case ") and "with tag" in found[0], found
    assert generate_mac_table(bad).encode("utf-8") != (ROOT / MAC_TABLE_LEAN).read_bytes()


def test_planted_tag_kernels_break_the_forged_workflows() -> None:
    """Which forged-request workflows each planted kernel breaks (the bench holds them to
    catch it): it refuses fewer requests than the file states."""
    _, forged, _ = play_benches(ROOT)
    broken = {}
    for name, bad in PLANTED.items():
        _, _, runs = play_benches(ROOT, bad)
        broken[name] = {r.workflow.name for r in runs if r is not None
                        and not r.agrees_with_file}
    assert broken["tag_blind"] == {
        "spoof_read_foreign_tag", "spoof_read_unissued_tag", "spoof_begin_to_thief",
        "spoof_commit_by_sender", "reroute_abort_to_receiver"}
    assert broken["presenter_blind_tag"] == {"spoof_commit_by_sender",
                                             "reroute_abort_to_receiver"}
    assert broken["wildcard_tag"] == {"spoof_read_unissued_tag", "spoof_begin_to_thief"}
    assert all(b <= {w.name for w in forged.flows} for b in broken.values())


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_tag_kernel_fails_the_evidence(name: str) -> None:
    with pytest.raises(KernelRefError, match=r"workflow \w+: the tagged reference refuses"):
        mac_evidence(ROOT, PLANTED[name])


def test_planted_ownership_kernel_under_the_tag_check_fails_the_evidence() -> None:
    """A wrong ownership kernel behind a right tag check changes the variant's state table."""

    def stored_owner_ignored(dom: Domain, st: KState, req: Request) -> Outcome:
        out = step(dom, st, req)
        if req.kind == "read" and out.refusal == "notOwner":
            return Outcome(st, (), None)
        return out

    with pytest.raises(KernelRefError, match=r"MacTable\.lean"):
        mac_evidence(ROOT, TaggedKernel(step_fn=stored_owner_ignored),
                     step_fn=stored_owner_ignored)


def test_mac_evidence_figures() -> None:
    figures, rows = mac_evidence(ROOT)
    assert figures == {
        "mac_holders": 2, "mac_blocks": 1, "mac_max_epoch": 1, "mac_max_gen": 2,
        "mac_max_seq": 3, "mac_reachable_states": 36, "mac_requests_per_state": 1_845,
        "mac_tagged_cases": 5_517, "mac_tagged_cases_right": 1_233,
        "mac_cases_checked": 36 * 5_517, "mac_workflows": 40, "mac_workflows_agree": 40,
        "mac_forge_workflows": 8, "mac_verdicts_kept": 32}
    assert len(rows) == 40 and all(r["agree"] for r in rows)


def test_planted_kernel_changing_honest_verdicts_is_caught_by_verdicts_kept() -> None:
    """The verdict comparison of the first bench catches a tagged kernel that refuses honest
    tags (every token request refused at the tag check)."""
    refuses_tokens = TaggedKernel(tag_test=lambda req, _tag: not mac.presents_token(req))
    first, _, runs = play_benches(ROOT, refuses_tokens)
    kept = dict(zip((w.name for w in first.flows), verdicts_kept(first, runs), strict=False))
    assert not kept["commit_basic"]
    assert kept["alloc_busy_refused"]  # alloc presents no token: its verdicts are kept


def test_cli_mac_workflows_prints_the_bench() -> None:
    from click.testing import CliRunner

    from pytools.results.kernel.cli import main as kernel_cli

    res = CliRunner().invoke(kernel_cli, ["mac-workflows"])
    assert res.exit_code == 0, res.output
    assert "spoof_commit_by_sender" in res.output and "CHANGED" not in res.output
    assert res.output.count(" kept") == 32
