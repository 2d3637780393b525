"""The workflow bench: named request sequences run on the reference (and, through the generated
table, on the Lean kernel)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .model import (
    ACTION_KINDS,
    Domain,
    KernelRefError,
    KState,
    Request,
    StepFn,
    initial_state,
    step,
)

WORKFLOWS_JSON = Path("pytools/results/kernel/workflows.json")

# Workflows
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workflow:
    """A named sequence of requests, run from the initial state."""

    name: str
    family: str
    requests: tuple[Request, ...]


@dataclass(frozen=True)
class WorkflowRun:
    """A workflow's outcome: final state, its holding as text, number of refusals."""

    workflow: Workflow
    final: KState
    refusals: int

    @property
    def final_owner(self) -> str:
        hold = self.final.holding
        return "free" if hold.kind == "free" else f"{hold.kind}:{hold.who}"


FAMILIES = ("abort", "commit", "evict-realloc")


def load_workflows(path: Path) -> tuple[Domain, list[Workflow]]:
    """Read the workflow bench; any problem is a :class:`KernelRefError` naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise KernelRefError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KernelRefError(f"{path}: cannot read JSON: {exc}") from exc
    try:
        d = data["domain"]
        dom = Domain(int(d["holders"]), int(d["tickets"]), int(d["max_epoch"]),
                     int(d["max_gen"]))
        flows = []
        for i, w in enumerate(data["workflows"]):
            if w["family"] not in FAMILIES:
                raise KernelRefError(f"{path}: workflow {i}: unknown family {w['family']!r}")
            reqs = []
            for j, step_ in enumerate(w["steps"]):
                kind, *args = step_
                arity = {"begin": 5, "advance": 1}.get(kind, 3)
                if kind not in ACTION_KINDS or len(args) != arity or \
                        not all(isinstance(a, int) and a >= 0 for a in args):
                    raise KernelRefError(f"{path}: workflow {w['name']!r} step {j}: "
                                         f"bad request {step_!r}")
                reqs.append(Request(kind, tuple(args)))
            flows.append(Workflow(str(w["name"]), w["family"], tuple(reqs)))
    except (KeyError, TypeError, ValueError) as exc:
        raise KernelRefError(f"{path}: malformed workflow file: {exc!r}") from exc
    names = [w.name for w in flows]
    if len(set(names)) != len(names):
        raise KernelRefError(f"{path}: duplicate workflow names")
    return dom, flows


def run_workflow(dom: Domain, wf: Workflow, step_fn: StepFn | None = None) -> WorkflowRun:
    """Run a workflow from the initial state; refused requests leave the state as it was."""
    step_fn = step_fn or step
    st, refusals = initial_state(dom), 0
    for req in wf.requests:
        out = step_fn(dom, st, req)
        if out.refusal is not None:
            refusals += 1
        st = out.state
    return WorkflowRun(wf, st, refusals)
