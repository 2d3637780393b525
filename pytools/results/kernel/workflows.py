"""The workflow bench: named action sequences (``workflows.json``) played by the reference's
system (:mod:`.system`: the kernel, the network, every holder's tokens).

The file gives the bench's domain and, per workflow, its name, family, description, actions
and the number of kernel refusals it expects. :mod:`.workflows_lean` states every workflow as
a Lean theorem; :func:`theorem_names` names those theorems (the generator and the published
result's theorem list both use it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .model import Domain, KernelRefError, StepFn
from .system import ACT_ARITY, Event, SysState, run_workflow

#: The bench, relative to the repository root.
WORKFLOWS_JSON = Path("pytools/results/kernel/workflows.json")

#: The families a workflow may belong to.
FAMILIES: tuple[str, ...] = (
    "commit", "abort", "evict-and-reallocate", "duplicate", "reorder", "drop", "stale", "forge",
)

#: The Lean namespace of the generated bench and its theorem on the initial state's code.
LEAN_NAMESPACE = "KVCache.Kernel.Workflows"
INIT_THEOREM = "init_code"

Action = tuple[str | int, ...]


@dataclass(frozen=True)
class Workflow:
    """One named workflow of the bench, with the file it was read from (for messages)."""

    name: str
    family: str
    description: str
    actions: tuple[Action, ...]
    expect_refusals: int
    source: str = ""


@dataclass(frozen=True)
class WorkflowRun:
    """A workflow played from the initial system: the final system state, the number of
    kernel refusals, and every kernel decision in delivery order."""

    workflow: Workflow
    final: SysState
    refusals: int
    events: tuple[Event, ...]

    @property
    def agrees_with_file(self) -> bool:
        """The refusal count is the one the workflow file states."""
        return self.refusals == self.workflow.expect_refusals


def theorem_name(workflow_name: str) -> str:
    """The Lean theorem (in :data:`LEAN_NAMESPACE`) of a workflow."""
    return f"workflow_{workflow_name}"


def theorem_names(flows: list[Workflow]) -> tuple[str, ...]:
    """Every theorem of the generated bench, in file order (unqualified)."""
    return (INIT_THEOREM, *(theorem_name(w.name) for w in flows))


def _nat(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _workflow(path: Path, i: int, w: Any, arity: dict[str, int]) -> Workflow:
    if not isinstance(w, dict):
        raise KernelRefError(f"{path}: workflow {i}: not an object")
    name = w.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise KernelRefError(f"{path}: workflow {i}: the name must be an identifier, "
                             f"got {name!r}")
    missing = {"family", "description", "actions", "expect_refusals"} - set(w)
    unknown = set(w) - {"name", "family", "description", "actions", "expect_refusals"}
    if missing or unknown:
        raise KernelRefError(f"{path}: workflow {name}: missing keys {sorted(missing)}, "
                             f"unknown keys {sorted(unknown)}")
    if w["family"] not in FAMILIES:
        raise KernelRefError(f"{path}: workflow {name}: unknown family {w['family']!r} "
                             f"(one of {', '.join(FAMILIES)})")
    if not isinstance(w["description"], str) or not w["description"].strip():
        raise KernelRefError(f"{path}: workflow {name}: the description must be text")
    if not _nat(w["expect_refusals"]):
        raise KernelRefError(f"{path}: workflow {name}: expect_refusals must be a natural "
                             "number")
    if not isinstance(w["actions"], list):
        raise KernelRefError(f"{path}: workflow {name}: actions must be a list")
    acts = []
    for j, act in enumerate(w["actions"]):
        if (not isinstance(act, list) or not act or not isinstance(act[0], str)
                or arity.get(act[0]) != len(act) - 1 or not all(map(_nat, act[1:]))):
            raise KernelRefError(f"{path}: workflow {name}: action {j}: bad action {act!r}")
        acts.append(tuple(act))
    return Workflow(name, w["family"], w["description"], tuple(acts), w["expect_refusals"],
                    str(path))


@dataclass(frozen=True)
class Bench:
    """A workflow file read once: its domain, its workflows and the SHA-256 of its bytes."""

    path: Path
    domain: Domain
    flows: tuple[Workflow, ...]
    sha256: str


def read_bench(path: Path, arity: dict[str, int] | None = None) -> Bench:
    """Read, hash and check a workflow file (actions of :data:`.system.ACT_ARITY`, or of
    ``arity``); a bad file is a :class:`KernelRefError` naming it."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError as exc:
        raise KernelRefError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KernelRefError(f"{path}: cannot read JSON: {exc}") from exc
    dom, flows = _parse(path, data, arity or ACT_ARITY)
    return Bench(path, dom, tuple(flows), hashlib.sha256(raw).hexdigest())


def load_workflows(path: Path) -> tuple[Domain, list[Workflow]]:
    """The domain and workflows of a workflow file (see :func:`read_bench`)."""
    bench = read_bench(path)
    return bench.domain, list(bench.flows)


def _parse(path: Path, data: Any, arity: dict[str, int]) -> tuple[Domain, list[Workflow]]:
    if not isinstance(data, dict) or set(data) != {"domain", "workflows"}:
        raise KernelRefError(f"{path}: not a workflow file (want exactly the keys 'domain' "
                             "and 'workflows')")
    d = data["domain"]
    fields = ("holders", "blocks", "max_epoch", "max_gen", "max_seq")
    if not isinstance(d, dict) or set(d) != set(fields) or not all(_nat(d[k]) for k in fields):
        raise KernelRefError(f"{path}: the domain must give {', '.join(fields)} as natural "
                             "numbers")
    dom = Domain(**{k: d[k] for k in fields})
    if not isinstance(data["workflows"], list) or not data["workflows"]:
        raise KernelRefError(f"{path}: 'workflows' must be a non-empty list")
    flows = [_workflow(path, i, w, arity) for i, w in enumerate(data["workflows"])]
    names = [w.name for w in flows]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise KernelRefError(f"{path}: duplicate workflow names: {', '.join(dups)}")
    return dom, flows


def play(dom: Domain, wf: Workflow, step_fn: StepFn | None = None) -> WorkflowRun | None:
    """Play one workflow (with the reference's kernel, or ``step_fn``); None when an action
    is impossible (no such token or message, or the wrong kind)."""
    log: list[Event] = []
    res = run_workflow(dom, [list(a) for a in wf.actions], log, step_fn)
    return None if res is None else WorkflowRun(wf, res[0], res[1], tuple(log))


def impossible(wf: Workflow) -> KernelRefError:
    """The error of a workflow with an impossible action, naming the file and the workflow."""
    return KernelRefError(f"{wf.source or 'workflows'}: workflow {wf.name}: an action is "
                          "impossible (no such token or message, or the wrong kind)")


class Played(Protocol):
    """A played workflow's refusals against its file (:class:`WorkflowRun`, the tagged
    variant's run)."""

    @property
    def refusals(self) -> int: ...

    @property
    def agrees_with_file(self) -> bool: ...


def check_played(flows: Sequence[Workflow], runs: Sequence[Played | None], reference: str,
                 source: str = "") -> None:
    """Refuse, naming the file (``source`` where a workflow has none) and the workflow, the
    first workflow with an impossible action (:func:`impossible`) or whose refusal count under
    ``reference`` (the reference's name, in the message) is not the one its file states."""
    for w, r in zip(flows, runs, strict=True):
        if r is None:
            raise impossible(w)
        if not r.agrees_with_file:
            raise KernelRefError(f"{w.source or source}: workflow {w.name}: the {reference} "
                                 f"refuses {r.refusals} requests, the file expects "
                                 f"{w.expect_refusals}")


def run(dom: Domain, wf: Workflow, step_fn: StepFn | None = None) -> WorkflowRun:
    """:func:`play`, with an impossible action a :class:`KernelRefError` (:func:`impossible`)."""
    played = play(dom, wf, step_fn)
    if played is None:
        raise impossible(wf)
    return played
