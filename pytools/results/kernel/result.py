"""The published result ``single-owner-kernel``: its theorems, its limits and its evidence,
computed from the committed finite-check table, workflow bench and workflow file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytools.paths import sha256_file
from pytools.results.generated import Generated, regenerate_command
from pytools.results.spec import Evidence, InputFile, ResultSpec

from .mac import (
    MAC_DOMAIN,
    MAC_TABLE_LEAN,
    REFERENCE,
    TaggedKernel,
    build_mac_table,
    generate_mac_table,
    render_mac_table,
)
from .mac_system import MAC_ACT_ARITY
from .mac_workflows import (
    MAC_NAMESPACE,
    MAC_WORKFLOWS_JSON,
    MAC_WORKFLOWS_LEAN,
    MacRun,
    generate_mac_workflows,
    play_benches,
    verdicts_kept,
)
from .mac_workflows import render as render_mac_bench
from .mac_workflows import render_theorem as render_mac_theorem
from .mac_workflows import theorem_name as mac_theorem_name
from .model import Domain, KernelRefError, StepFn
from .table import TABLE_DOMAIN, TABLE_LEAN, build_table, generate_table, render, summarize
from .workflows import (
    LEAN_NAMESPACE,
    WORKFLOWS_JSON,
    Bench,
    WorkflowRun,
    load_workflows,
    read_bench,
    theorem_names,
)
from .workflows_lean import WORKFLOWS_LEAN, generate_workflows, play_bench, render_theorem
from .workflows_lean import render as render_bench

#: Result id of the published result this module supplies evidence for.
RESULT_ID = "single-owner-kernel"

#: What the result does and does not claim.
RESULT_LIMITS: tuple[str, ...] = (
    "The model: a kernel that owns several blocks and issues capabilities (to read, evict or "
    "hand over a block) and transfer tickets carrying the block, epoch, generation and a nonce. "
    "Around it, a system of holders and a network that may delay, duplicate, reorder and drop "
    "messages; holders may leak tokens to each other and write tokens of their own.",
    "What the kernel assumes about holders: only that the presenter of a request is "
    "authenticated (the request names who sends it, and the network does not lie about it). It "
    "does not assume that holders present only tokens they were issued: every field of a token "
    "is a public counter, so a holder can write any token, and the kernel accepts a capability "
    "only from the block's stored owner (not the token's claim), a commit only from the pending "
    "transfer's receiver and an abort only from its sender or receiver. The safety theorems "
    "(only_holder_reads, only_holder_moves, forged_capability_refused, "
    "at_most_one_valid_capability, at_most_one_reader, commit_by_receiver, abort_by_party, "
    "bystander_settle_refused) hold for every request in every kernel state, whatever tokens "
    "anybody holds. The system model lets a holder send requests with tokens it wrote itself "
    "(SysStep.forge); the custody theorem (SysReach.custody) holds there too and says what "
    "holders are sent, not what keeps the kernel safe.",
    "Over whole runs (logged runs: every kernel decision in order; every system run has a "
    "log, sysRun_iff_logged): every accepted read, evict or begin of a block was presented by "
    "its custodian in the run's history, computed from the log alone: the allocator of the "
    "current generation followed through every committed transfer (accepted_use_by_custodian, "
    "accepted_read_by_chain_member; an aborted transfer leaves the chain unchanged, "
    "abort_keeps_chain). Assumption: the authenticated presenter (Req.sentBy).",
    "The tagged-token variant (Proofs/Kernel/Mac.lean) drops the authenticated presenter: anybody "
    "sends anything naming any presenter, and tokens carry a tag the kernel computes with a key "
    "only it holds, over the token and its addressee. The MAC is an abstract function; its "
    "unforgeability is the assumption, modelled as the adversary's power (Unforged: the right "
    "tag for a token and presenter only if the kernel issued that token to that presenter). "
    "Every accepted use names the custodian and presents a capability the kernel issued to it "
    "(mac_accepted_use_by_custodian); the tag is a bearer credential (a custodian may hand it "
    "on).",
    "The tagged variant's finite check and workflow bench run under a toy MAC (toyMac: the "
    "addressee and the token's fields packed into one number, injective on the domains "
    "checked), not a cryptographic one: they check the variant kernel's logic under a MAC (the "
    "tag checked against the named presenter, then the ownership kernel), not the MAC, whose "
    "unforgeability stays the assumption. The finite check (figures mac_*) covers a smaller "
    "domain than the first one, 2 holders, 1 block, epochs 0..1, generations 0..2 and 3 tokens "
    "per block, epoch and generation: its reachable states, every request of its alphabet "
    "presented with the token's tag for every holder (the right one and the other holder's) "
    "and with the tag 0 that nobody is issued (mac_reachable_agrees_reference; the tag check "
    "alone of the first domain's 66,571 tagged cases measured some 4 minutes of CPU, over the "
    "budget). The variant's bench plays the first bench's workflows on the tagged system "
    "with honest holders (same verdicts, decision for decision) and forged requests naming "
    "another presenter (a tag of another token, no tag, a replayed tag rerouted to another "
    "presenter), each checked against Lean's mstep decision by decision; the holders' "
    "knowledge and the network of the tagged system are the reference's, not Lean's (Lean's "
    "variant system MSys has no holders).",
    "Exactly once holds under fair delivery, stated as a finite-run assumption: if, after the "
    "kernel accepts a begin, the rest of the run delivers at least once the receiver's commit or "
    "the sender's abort with the transfer's ticket, then exactly one commit or abort of that "
    "ticket is accepted in the rest of the run, none before it and none after it "
    "(run_settles_exactly_once). Without that delivery only at most once holds "
    "(settled_ticket_refused_forever, no_settle_after_settle).",
    "Not modelled: liveness under partitions (the progress theorems say a legal request can "
    "succeed, not that the network delivers it), crashes and recovery, hardware custody of the "
    "bytes (the kernel tracks who may read a block, not where its bytes are or whether a "
    "holder keeps a copy), and authentication of the presenter itself in the first kernel (it "
    "takes the sender of a request as given; its tokens carry no secret; the tagged-token "
    "variant replaces this by MAC unforgeability).",
    "Progress has conditions, stated in the theorems: read, evict, commit (by the receiver) and "
    "abort (by the sender) of the current token always succeed; a begin needs room in the "
    "block's sequence counter (seq + 2 <= maxSeq), an alloc a generation below maxGen, an "
    "epoch change an epoch below maxEpoch, and at each bound the request is refused "
    "(begin_refused_at_bound, alloc_refused_at_bound). Generations never go down, so a block "
    "freed in its last generation is never reallocated (exhausted_never_reallocated, for every "
    "later state of the system); and since a block's sequence counter restarts only with a new "
    "epoch or generation, once all three are exhausted its owner can still read and evict it "
    "but it is never transferred again (stated in words: the theorem is the per-state bound).",
    "The general theorems hold for every configuration (any number of holders and blocks, any "
    "epoch, generation and sequence bounds).",
    "The finite check covers one domain: 3 holders, 1 block, epochs 0..3, generations 0..3 and "
    "5 tokens per block, epoch and generation (so two transfers per epoch and generation); "
    "every reachable state (the Lean theorem proves the listed states are exactly the "
    "reachable ones) and every request of the domain's alphabet (every token identity with "
    "the known ids plus one unknown id, every presenter of every capability and ticket). "
    "Several blocks are not in the finite check: the 2-block domain with the same bounds has "
    "22,657 reachable states and 566 M cases (with 3 tokens per epoch and generation 8,197 "
    "states); even a closure-only check of 3 holders, 2 blocks, epochs 0..1, generations "
    "0..2 (5,002 states, 255,102 candidates: listed states exactly the reachable ones, no "
    "alphabet) measured about 0.3 s of kernel time per state on the 2-core machine (some 25 "
    "minutes; one theorem over 250 states ran out of memory), beyond the CI budget. Several "
    "blocks are covered by the general theorems and the workflow bench.",
    "What a case compares: the request's verdict digit (accepted, or the refusal's code; a "
    "refusal provably changes nothing and sends nothing) for every request of the alphabet, "
    "and the whole outcome (next state and messages) for every candidate, the only requests a "
    "state can accept (accepted_mem_candidates). The kernel decides a group of 104 requests "
    "presenting one refused token with one token check, proved equal to running step on each "
    "(groupDigits_eq).",
    "The workflow bench runs on a domain of 3 holders and 2 blocks (figures workflow_*): each "
    "named workflow is played on Lean's whole system and on the Python reference, and every "
    "kernel decision is checked against Lean's step.",
)

#: The Lean theorems of the general model (namespace ``KVCache.Kernel``), by module.
_INVARIANTS = (
    "accepted_current", "stale_epoch_refused", "stale_gen_refused", "refusal_changes_nothing",
    "stale_epoch_changes_nothing", "stale_gen_changes_nothing", "escrow_unreadable",
    "commit_hands_to_receiver", "abort_restores_sender", "step_clockLe", "sysRun_clockLe",
    "passed_refused", "settled_ticket_refused_forever", "realloc_kills_older_forever",
    "KReach.wf", "SysReach.wf", "read_progress", "evict_progress", "begin_progress",
    "begin_refused_at_bound", "commit_progress", "abort_progress", "pending_settles",
    "owned_acts", "alloc_progress", "alloc_refused_at_bound", "only_holder_reads",
    "only_holder_moves", "forged_capability_refused", "at_most_one_valid_capability",
    "at_most_one_reader", "commit_by_receiver", "abort_by_party", "bystander_settle_refused",
)
_CUSTODY = (
    "SysReach.custody", "pending_can_commit", "pending_can_abort", "owner_can_act",
    "exhausted_never_reallocated",
)
_PROVENANCE = (
    "sysRun_iff_logged", "LRun.replays", "step_follows_history", "replay_follows_history",
    "phase_eq_history", "accepted_use_by_custodian", "accepted_use_by_custodian_now",
    "accepted_read_by_chain_member", "abort_keeps_chain", "commit_appends_receiver",
)
_MAC = (
    "wrong_tag_refused", "right_tag_step", "MLRun.replays", "MLRun.noForged",
    "mac_accepted_use_by_custodian",
)
_ONCE = (
    "escrow_stable", "no_settle_after_settle", "settles_once_from_escrow", "begin_accepted",
    "exactly_once_under_fair_delivery", "run_settles_exactly_once",
)
_CHECK = ("accepted_mem_candidates", "groupDigits_eq", "kreach_iff_listed", "reachable_agrees")
_MAC_CHECK = ("tagTableOk_sound", "mstep_of_tagTable", "replay_kreach", "MLRun.kreach")
#: The variant's generated finite check (namespace ``KVCache.Kernel.MacTable``).
_MAC_TABLE = ("table_passes", "tag_table_passes", "mac_reachable_agrees_reference")
#: The generated table's theorems (namespace ``KVCache.Kernel.Table``).
_TABLE = ("table_passes", "reachable_iff_listed", "reachable_agrees_reference")


def _bench_theorems() -> tuple[str, ...]:
    """The generated bench's theorems, named from the packaged workflow file the way the
    generator names them."""
    _, flows = load_workflows(Path(__file__).with_name(WORKFLOWS_JSON.name))
    return tuple(f"{LEAN_NAMESPACE}.{name}" for name in theorem_names(flows))


def _mac_bench_theorems() -> tuple[str, ...]:
    """The variant's generated bench's theorems, named from the packaged workflow files the
    way the generator names them."""
    here = Path(__file__)
    first = read_bench(here.with_name(WORKFLOWS_JSON.name))
    forged = read_bench(here.with_name(MAC_WORKFLOWS_JSON.name), MAC_ACT_ARITY)
    return tuple(f"{MAC_NAMESPACE}.{mac_theorem_name(w.name)}"
                 for w in (*first.flows, *forged.flows))


#: The Lean theorems the result rests on (fully qualified; for the certificate registry).
THEOREMS: tuple[str, ...] = (
    *(f"KVCache.Kernel.{name}"
      for name in (*_INVARIANTS, *_CUSTODY, *_PROVENANCE, *_MAC, *_ONCE, *_CHECK,
                   *_MAC_CHECK)),
    *(f"KVCache.Kernel.Table.{name}" for name in _TABLE),
    *_bench_theorems(),
    *(f"KVCache.Kernel.MacTable.{name}" for name in _MAC_TABLE),
    *_mac_bench_theorems(),
)


# ---------------------------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------------------------


#: The generated workflow bench and finite-check table, each checked by Lean's kernel (the
#: bench first: a bad workflow file stops the verb before the 5 s table is computed).
WORKFLOWS_FILE = Generated(WORKFLOWS_LEAN, regenerate_command(RESULT_ID), generate_workflows,
                           errors=(KernelRefError,))
TABLE_FILE = Generated(TABLE_LEAN, regenerate_command(RESULT_ID), lambda _root: generate_table(),
                       errors=(KernelRefError,))
#: The tagged variant's generated bench and finite check.
MAC_WORKFLOWS_FILE = Generated(MAC_WORKFLOWS_LEAN, regenerate_command(RESULT_ID),
                               generate_mac_workflows, errors=(KernelRefError,))
MAC_TABLE_FILE = Generated(MAC_TABLE_LEAN, regenerate_command(RESULT_ID),
                           lambda _root: generate_mac_table(), errors=(KernelRefError,))


def _rows(bench: Bench, runs: list[WorkflowRun | None], lean: str) -> list[dict[str, Any]]:
    rows = []
    for wf, r in zip(bench.flows, runs, strict=True):
        row: dict[str, Any] = {"name": wf.name, "family": wf.family, "steps": len(wf.actions)}
        if r is None:
            rows.append({**row, "refusals": None, "agree": False})
            continue
        stated = "\n" + "\n".join(render_theorem(bench.domain, r)) + "\n"
        rows.append({**row, "refusals": r.refusals,
                     "agree": r.agrees_with_file and stated in lean})
    return rows


def workflow_rows(root: Path, step_fn: StepFn | None = None) -> list[dict[str, Any]]:
    """Per workflow of the bench: its name, family, actions, the reference's refusal count and
    whether the run agrees with the workflow file (the refusals it states) and with the
    committed Lean bench (the workflow's theorem, text for text). A workflow the kernel makes
    impossible (an action finds no token or message) disagrees, with ``refusals`` None."""
    bench = read_bench(root / WORKFLOWS_JSON)
    path = root / WORKFLOWS_LEAN
    try:
        lean = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelRefError(f"{path}: cannot read the committed file ({exc}); run "
                             f"`{WORKFLOWS_FILE.command}`") from exc
    return _rows(bench, play_bench(bench, step_fn), lean)


def _mac_rows(runs: list[MacRun | None], kept: list[bool], lean: str,
              dom: Domain) -> list[dict[str, Any]]:
    rows = []
    for i, r in enumerate(runs):
        if r is None:
            rows.append({"name": None, "family": None, "refusals": None, "agree": False})
            continue
        stated = "\n" + "\n".join(render_mac_theorem(dom, r)) + "\n"
        row = {"name": r.workflow.name, "family": r.workflow.family,
               "steps": len(r.workflow.actions), "refusals": r.refusals,
               "agree": r.agrees_with_file and stated in lean}
        if i < len(kept):
            row["verdicts_kept"] = kept[i]
        rows.append(row)
    return rows


def mac_evidence(root: Path, kernel: TaggedKernel = REFERENCE,
                 step_fn: StepFn | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The tagged variant's figures and workflow rows, from the committed files: the generated
    ``MacTable.lean`` and ``MacWorkflows.lean`` must be byte-identical to what the reference (or
    the planted ``kernel`` / ``step_fn``) generates now, and every workflow must agree with its
    file, and every workflow of the first bench keep its verdicts."""
    first, forged, runs = play_benches(root, kernel)
    bench_text = render_mac_bench(first, forged, runs)
    tags = build_mac_table(MAC_DOMAIN, kernel)
    states = build_table(MAC_DOMAIN, step_fn)
    problems = [*MAC_WORKFLOWS_FILE.check(root, bench_text.encode("utf-8")),
                *MAC_TABLE_FILE.check(root, render_mac_table(tags, states).encode("utf-8"))]
    if problems:
        raise KernelRefError("; ".join(problems))
    kept = verdicts_kept(first, runs)
    rows = _mac_rows(runs, kept, bench_text, first.domain)
    s, dom = summarize(states), tags.domain
    figures = {
        "mac_holders": dom.holders,
        "mac_blocks": dom.blocks,
        "mac_max_epoch": dom.max_epoch,
        "mac_max_gen": dom.max_gen,
        "mac_max_seq": dom.max_seq,
        "mac_reachable_states": s.states,
        "mac_requests_per_state": s.alphabet,
        "mac_tagged_cases": tags.cases,
        "mac_tagged_cases_right": tags.right,
        "mac_cases_checked": s.states * tags.cases,
        "mac_workflows": len(rows),
        "mac_workflows_agree": sum(1 for r in rows if r["agree"]),
        "mac_forge_workflows": len(forged.flows),
        "mac_verdicts_kept": sum(kept),
    }
    return figures, rows


def evidence(root: Path, step_fn: StepFn | None = None,
             mac_kernel: TaggedKernel = REFERENCE) -> Evidence:
    """Figures of the result ``single-owner-kernel``, computed from the committed files.

    ``Proofs/Kernel/Table.lean`` and ``Proofs/Kernel/Workflows.lean`` are what Lean's kernel
    checked: each must be byte-identical to what the reference (or ``step_fn``, for planted
    tests) generates now, and every workflow must agree with its file and its theorem. The
    workflow file is read once and each workflow played once.
    """
    bench = read_bench(root / WORKFLOWS_JSON)
    runs = play_bench(bench, step_fn)
    bench_text = render_bench(bench, runs)
    table = build_table(TABLE_DOMAIN, step_fn)
    problems = [*WORKFLOWS_FILE.check(root, bench_text.encode("utf-8")),
                *TABLE_FILE.check(root, render(table).encode("utf-8"))]
    if problems:
        raise KernelRefError("; ".join(problems))
    # The committed bench is the text just generated: the rows compare against it.
    rows = _rows(bench, runs, bench_text)
    table_path, bench_path = root / TABLE_LEAN, root / WORKFLOWS_LEAN
    s = summarize(table)
    dom, wf_dom = s.domain, bench.domain
    figures: dict[str, Any] = {
        "holders": dom.holders,
        "blocks": dom.blocks,
        "max_epoch": dom.max_epoch,
        "max_gen": dom.max_gen,
        "max_seq": dom.max_seq,
        "reachable_states": s.states,
        "requests_per_state": s.alphabet,
        "cases_checked": s.cases,
        "candidate_cases": s.candidate_cases,
        "cases_accepted": s.accepted,
        "dictionary_entries": s.dictionary,
        "workflow_holders": wf_dom.holders,
        "workflow_blocks": wf_dom.blocks,
        "workflow_max_epoch": wf_dom.max_epoch,
        "workflow_max_gen": wf_dom.max_gen,
        "workflow_max_seq": wf_dom.max_seq,
        "workflows": len(rows),
        "workflows_agree": sum(1 for r in rows if r["agree"]),
    }
    mac_figures, mac_rows = mac_evidence(root, mac_kernel, step_fn)
    figures.update(mac_figures)
    if s.cases != s.states * s.alphabet:
        raise KernelRefError(f"{table_path}: {s.cases} cases for {s.states} states and "
                             f"{s.alphabet} requests")
    return Evidence(
        figures=figures,
        inputs=(
            InputFile(TABLE_LEAN.as_posix(), sha256_file(table_path)),
            InputFile(WORKFLOWS_LEAN.as_posix(), sha256_file(bench_path)),
            InputFile(WORKFLOWS_JSON.as_posix(), bench.sha256),
            InputFile(MAC_TABLE_LEAN.as_posix(), sha256_file(root / MAC_TABLE_LEAN)),
            InputFile(MAC_WORKFLOWS_LEAN.as_posix(), sha256_file(root / MAC_WORKFLOWS_LEAN)),
            InputFile(MAC_WORKFLOWS_JSON.as_posix(), sha256_file(root / MAC_WORKFLOWS_JSON)),
        ),
        extra={"workflows": rows, "mac_workflows": mac_rows},
    )


SPEC = ResultSpec(
    id=RESULT_ID,
    title="Single-owner state movement: one valid capability per block, unreadable escrow, "
    "exactly-once transfers, progress",
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
    generated=(WORKFLOWS_FILE, TABLE_FILE, MAC_WORKFLOWS_FILE, MAC_TABLE_FILE),
)
