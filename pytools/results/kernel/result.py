"""The published result ``single-owner-kernel``: its theorems, its limits and its evidence,
computed from the committed table and workflow bench."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytools.paths import sha256_file
from pytools.results.spec import Evidence, InputFile, ResultSpec

from .model import KernelRefError, domain_states, encode_state, reachable_states, requests
from .table import ROWS_PER_CHUNK, TABLE_DOMAIN, TABLE_LEAN, generate, read_table
from .workflows import WORKFLOWS_JSON, load_workflows, run_workflow

#: Result id of the published result this module supplies evidence for.
RESULT_ID = "single-owner-kernel"

#: What the result does and does not claim.
RESULT_LIMITS: tuple[str, ...] = (
    "A model of the ownership protocol of one cached block (its kernel's step function), "
    "not of a distributed system: no claim about message delivery, network partitions, "
    "crashes or clocks.",
    "No claim about hardware custody: the kernel tracks who may read the block, not where "
    "its bytes physically are or whether a holder keeps an illicit copy.",
    "The general theorems hold for every number of holders and tickets and all epoch and "
    "generation bounds; the exhaustive agreement check with the Python reference covers one "
    "finite domain only (its bounds are in the figures), where epoch and generation are "
    "bounded by refusing to advance past the bound.",
    "The exhaustive check covers every well-formed state of that domain (a superset of the "
    "reachable states) and every request of the domain's request alphabet, which includes "
    "one unknown holder id and one unknown ticket id.",
)

# ---------------------------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------------------------


def evidence(root: Path) -> Evidence:
    """Figures of the result ``single-owner-kernel``, computed from the committed files.

    The committed table is the one Lean's kernel checked; it must be byte-identical to what
    the reference generates now, and every workflow's recorded outcome must equal the
    reference's run.
    """
    table_path = root / TABLE_LEAN
    wf_path = root / WORKFLOWS_JSON
    committed = read_table(table_path)
    text = table_path.read_text(encoding="utf-8")
    regenerated = generate(root)
    if regenerated != text:
        raise KernelRefError(f"{table_path}: differs from the table the reference generates "
                             "(run `python -m pytools kernel lean-table`)")
    wf_dom, flows = load_workflows(wf_path)
    dom = committed.domain
    if wf_dom != committed.workflow_domain:
        raise KernelRefError(f"{wf_path}: workflow domain differs from {table_path}")
    if len(flows) != len(committed.workflow_finals):
        raise KernelRefError(f"{table_path}: {len(committed.workflow_finals)} workflows, "
                             f"{wf_path} has {len(flows)}")
    n_req = len(requests(dom))
    extra_rows = []
    for wf, (final_code, refusals) in zip(flows, committed.workflow_finals, strict=True):
        run = run_workflow(wf_dom, wf)
        agree = encode_state(wf_dom, run.final) == final_code and run.refusals == refusals
        extra_rows.append({
            "name": wf.name,
            "family": wf.family,
            "steps": len(wf.requests),
            "final_owner": run.final_owner,
            "refusals": run.refusals,
            "agree": agree,
        })
    accepted = sum(len(r.successors) for r in committed.rows)
    figures: dict[str, Any] = {
        "holders": dom.holders,
        "tickets": dom.tickets,
        "max_epoch": dom.max_epoch,
        "max_gen": dom.max_gen,
        "states_checked": len(committed.rows),
        "requests_per_state": n_req,
        "cases_checked": len(committed.rows) * n_req,
        "cases_accepted": accepted,
        "cases_refused": len(committed.rows) * n_req - accepted,
        "reachable_states": len(reachable_states(dom)),
        "lean_chunks": committed.chunks,
        "workflow_holders": wf_dom.holders,
        "workflow_tickets": wf_dom.tickets,
        "workflow_max_epoch": wf_dom.max_epoch,
        "workflow_max_gen": wf_dom.max_gen,
        "workflows": len(flows),
        "workflows_agree": sum(1 for r in extra_rows if r["agree"]),
    }
    return Evidence(
        figures=figures,
        inputs=(
            InputFile(TABLE_LEAN.as_posix(), sha256_file(table_path)),
            InputFile(WORKFLOWS_JSON.as_posix(), sha256_file(wf_path)),
        ),
        extra={"workflows": extra_rows},
    )


#: The Lean theorems the result rests on (fully qualified; for the certificate registry).
THEOREMS: tuple[str, ...] = tuple(
    f"KVCache.Kernel.{name}" for name in (
        "reachable_at_most_one_live_owner",
        "at_most_one_live_owner",
        "reachable_invariant",
        "inv_step",
        "no_read_in_escrow",
        "escrow_has_no_live_owner",
        "only_owner_reads",
        "commit_hands_to_receiver",
        "commit_replay_refused",
        "abort_returns_to_sender",
        "ticket_single_use",
        "used_ticket_refused",
        "used_ticket_stays_used_run",
        "stale_epoch_refused",
        "stale_epoch_state_unchanged",
        "stale_gen_refused",
        "stale_gen_state_unchanged",
        "wrong_gen_refused",
        "realloc_kills_older_capabilities",
        "realloc_kills_older_tickets",
        "refusal_leaves_state_unchanged",
        "custody_conserved",
        "owner_origin",
        "begin_revokes_sender",
        "gen_monotone_run",
        "reachable_within_bounds",
        "runFrom_reach",
        "tiny_domain_agrees",
    )
) + tuple(
    f"KVCache.Kernel.Table.table_agrees_{k}"
    for k in range(-(-len(domain_states(TABLE_DOMAIN)) // ROWS_PER_CHUNK))
) + (
    "KVCache.Kernel.Table.workflows_agree",
)


SPEC = ResultSpec(
    id=RESULT_ID,
    title="Single-owner state movement: one live owner, unreadable escrow, stale transfers "
    "refused",
    theorems=THEOREMS,
    limits=RESULT_LIMITS,
    evidence=evidence,
)
