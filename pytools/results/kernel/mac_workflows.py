"""The tagged variant's workflow bench: every workflow of ``workflows.json`` and of
``mac_workflows.json`` (forged requests without an authenticated presenter) played on the
tagged system (:mod:`.mac_system`), and ``Proofs/Kernel/MacWorkflows.lean``, one
``decide +kernel`` theorem per workflow.

Each theorem says: every request the variant kernel decided in the workflow, with its tag, in
delivery order from the initial state, gets from Lean's ``mstep`` (under the toy MAC) the
reference's answer digit, outcome code (next state and sent messages) and next state
(``mtrajectoryOk`` of ``Proofs/Kernel/MacCheck.lean``). The file records the SHA-256 of both
workflow files.

The workflows of ``workflows.json`` are played with honest holders presenting the tags they were
issued; :func:`verdicts_kept` says whether each gets, decision for decision, the verdict
(accepted or refused) it gets from the first kernel on the untagged system.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytools.results.generated import render_template

from .codes import outcome_code, result_digit, state_code
from .mac import REFERENCE, TaggedKernel
from .mac_system import MAC_ACT_ARITY, MEvent, run_mworkflow
from .model import Domain, KernelRefError, initial_state
from .table import TEMPLATES
from .workflows import WORKFLOWS_JSON, Bench, Workflow, check_played, play, read_bench
from .workflows_lean import _wrap_doc, lean_request

#: The forged-request workflows of the variant, relative to the repository root.
MAC_WORKFLOWS_JSON = Path("pytools/results/kernel/mac_workflows.json")
#: The generated Lean module, relative to the repository root.
MAC_WORKFLOWS_LEAN = Path("Proofs/Kernel/MacWorkflows.lean")
#: The Lean namespace of the generated bench.
MAC_NAMESPACE = "KVCache.Kernel.MacWorkflows"


@dataclass(frozen=True)
class MacRun:
    """A workflow played on the tagged system: the kernel refusals and every decision."""

    workflow: Workflow
    refusals: int
    events: tuple[MEvent, ...]

    @property
    def agrees_with_file(self) -> bool:
        """The refusal count is the one the workflow file states."""
        return self.refusals == self.workflow.expect_refusals


def theorem_name(workflow_name: str) -> str:
    """The Lean theorem (in :data:`MAC_NAMESPACE`) of a workflow."""
    return f"workflow_{workflow_name}"


def read_benches(root: Path) -> tuple[Bench, Bench]:
    """The first bench and the variant's forged-request bench (same domain, distinct names);
    a bad file is a :class:`KernelRefError` naming it."""
    first = read_bench(root / WORKFLOWS_JSON)
    forged = read_bench(root / MAC_WORKFLOWS_JSON, MAC_ACT_ARITY)
    if forged.domain != first.domain:
        raise KernelRefError(f"{forged.path}: domain {forged.domain} is not the first bench's "
                             f"{first.domain}")
    clash = sorted({w.name for w in first.flows} & {w.name for w in forged.flows})
    if clash:
        raise KernelRefError(f"{forged.path}: workflow names already in {first.path.name}: "
                             f"{', '.join(clash)}")
    return first, forged


def theorem_names(root: Path) -> tuple[str, ...]:
    """Every theorem of the generated bench, in order (unqualified)."""
    first, forged = read_benches(root)
    return tuple(theorem_name(w.name) for w in (*first.flows, *forged.flows))


def play_mac(dom: Domain, wf: Workflow, kernel: TaggedKernel = REFERENCE) -> MacRun | None:
    """Play one workflow on the tagged system (None: an impossible action)."""
    log: list[MEvent] = []
    res = run_mworkflow(dom, [list(a) for a in wf.actions], log, kernel)
    return None if res is None else MacRun(wf, res[1], tuple(log))


def play_benches(root: Path, kernel: TaggedKernel = REFERENCE
                 ) -> tuple[Bench, Bench, list[MacRun | None]]:
    """Both benches played on the tagged system, first bench first."""
    first, forged = read_benches(root)
    return first, forged, [play_mac(first.domain, w, kernel)
                           for w in (*first.flows, *forged.flows)]


def verdicts_kept(bench: Bench, runs: Sequence[MacRun | None]) -> list[bool]:
    """Per workflow of the first bench: played on the tagged system with honest holders, the
    variant decides the same requests with the same verdicts (accepted or refused, in order) as
    the first kernel on the untagged system."""
    out = []
    for w, r in zip(bench.flows, runs, strict=False):
        first = play(bench.domain, w)
        out.append(first is not None and r is not None and len(first.events) == len(r.events)
                   and all(a[0] == b[0] and (a[2].refusal is None) == (b[3].refusal is None)
                           for a, b in zip(first.events, r.events, strict=True)))
    return out


def render_theorem(dom: Domain, r: MacRun) -> list[str]:
    """The lines of one workflow's theorem (its doc comment included)."""
    w, init_code = r.workflow, state_code(dom, initial_state(dom))
    doc = (f"`{w.name}` ({w.family}) on the tagged system: {w.description} "
           f"({len(w.actions)} actions, {len(r.events)} kernel events, {r.refusals} refused).")
    out = [*_wrap_doc(doc), f"theorem {theorem_name(w.name)} :",
           f"    mtrajectoryOk cfg (mstep cfg toyMac) {init_code} ["]
    for i, (req, tag, before, o) in enumerate(r.events):
        end = "," if i < len(r.events) - 1 else "] = true := by"
        out.append(f"      ⟨{lean_request(req)}, {tag:#x},")
        out.append(f"        {state_code(dom, before)}, {result_digit(o)}, "
                   f"{outcome_code(dom, o)}⟩{end}")
    if not r.events:
        out[-1] += "] = true := by"
    out.append("  decide +kernel")
    return out


def render(first: Bench, forged: Bench, runs: Sequence[MacRun | None]) -> str:
    """The Lean module text of both benches played by :func:`play_benches`; a workflow with an
    impossible action, or whose refusal count is not the one its file states, is a
    :class:`KernelRefError` (nothing is generated from a bench the reference disagrees with)."""
    dom = first.domain
    check_played((*first.flows, *forged.flows), runs, "tagged reference")
    return render_template(
        TEMPLATES, "MacWorkflows.lean.j2", first=first, forged=forged, dom=dom,
        namespace=MAC_NAMESPACE,
        theorems=["\n".join(render_theorem(dom, r)) for r in runs if r is not None])


def generate_mac_workflows(root: Path, kernel: TaggedKernel = REFERENCE) -> str:
    """The Lean bench of the variant from the committed workflow files under ``root``."""
    return render(*play_benches(root, kernel))
