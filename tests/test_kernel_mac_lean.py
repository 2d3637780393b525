"""Planted tag-blind kernels must be refused by Lean's kernel (slow: compiles one module of
planted theorems beside the built library, about a minute idle).

The module, generated here from the Python reference, imports the variant's finite check
(``Proofs.Kernel.MacTable``) and bench (``Proofs.Kernel.MacWorkflows``) and states, each in its
own theorem, run by ``decide +kernel``:

* the Lean tag-blind kernel (its tag test passes every tag) against the reference's tag verdicts
  of one token group: must fail;
* Lean's tag check against the verdicts of each planted Python kernel (tag-blind, presenter-blind
  tag, tag 0 as a wildcard) on one token group: must fail;
* the trajectory of a forged-request workflow played by the planted Python tag-blind kernel,
  against Lean's ``mstep``: must fail;
* the reference's trajectory of that workflow against the Lean tag-blind step (``step`` without
  the tag check): must fail;
* controls: the reference's verdicts of the group against Lean's tag check, and the reference's
  trajectory against ``mstep``: must pass.
"""

from __future__ import annotations

import pytest
from planted import Planted, import_closure, project_copy, theorem_ranges

from pytools.lean.build import build
from pytools.paths import project_root
from pytools.results.kernel.codes import outcome_code, result_digit, state_code
from pytools.results.kernel.mac import (
    MAC_DOMAIN,
    PRESENTER_BLIND_TAG,
    TAG_BLIND,
    WILDCARD_TAG,
    TaggedKernel,
    build_mac_table,
)
from pytools.results.kernel.mac_workflows import MacRun, play_benches
from pytools.results.kernel.model import Domain, initial_state
from pytools.results.kernel.workflows_lean import lean_request

ROOT = project_root()
SOURCES = tuple(sorted({*import_closure("Proofs.Kernel.MacTable"),
                        *import_closure("Proofs.Kernel.MacWorkflows")}))
TARGET = "Proofs/Kernel/MacPlanted.lean"
#: The forged-request workflow the trajectory defects use.
WORKFLOW = "spoof_commit_by_sender"
DEFECTS = (
    "planted_lean_tag_blind_kernel",
    "planted_tag_blind_reference",
    "planted_presenter_blind_tag_reference",
    "planted_wildcard_tag_reference",
    "planted_tag_blind_trajectory",
    "planted_lean_tag_blind_step",
)
CONTROLS = ("planted_honest_group", "planted_honest_trajectory")
TG = "(fun r g => r.tagged toyMac g)"
GROUP = "(((tokQuads MacTable.cfg).drop 0).take 1)"


def _entry(kernel: TaggedKernel) -> str:
    table = build_mac_table(MAC_DOMAIN, kernel)
    return hex(table.dictionary[table.groups[0]])


def _events(dom: Domain, r: MacRun) -> str:
    return ", ".join(f"⟨{lean_request(req)}, {tag:#x}, {state_code(dom, before)}, "
                     f"{result_digit(o)}, {outcome_code(dom, o)}⟩"
                     for req, tag, before, o in r.events)


def _run(kernel: TaggedKernel | None = None) -> tuple[Domain, MacRun]:
    first, _, runs = play_benches(ROOT, kernel) if kernel else play_benches(ROOT)
    run = next(r for r in runs if r is not None and r.workflow.name == WORKFLOW)
    return first.domain, run


def planted_module() -> str:
    """The planted module's text (see the module docstring)."""
    dom, honest = _run()
    _, blind = _run(TAG_BLIND)
    init = state_code(dom, initial_state(dom))
    out = ["module", "", "public import Proofs.Kernel.MacTable",
           "public import Proofs.Kernel.MacWorkflows", "", "/-! # Planted tag-blind kernels "
           "(must fail, except the controls) -/", "", "@[expose] public section", "",
           "set_option Elab.async false", "", "namespace KVCache.Kernel.MacPlanted", "",
           "open KVCache.Kernel", ""]

    def thm(name: str, doc: str, stmt: str) -> None:
        out.extend([f"/-- {doc} -/", f"theorem {name} :", f"    {stmt} := by",
                    "  decide +kernel", ""])

    thm("planted_honest_group", "Control: Lean's tag check on the reference's first group.",
        f"checkTagGroups {TG} MacTable.cfg MacTable.tagDict {GROUP} [0] = true")
    thm("planted_lean_tag_blind_kernel",
        "Planted: a Lean kernel whose tag test passes every tag.",
        f"checkTagGroups (fun _ _ => true) MacTable.cfg MacTable.tagDict {GROUP} [0] = true")
    for name, kernel in (("tag_blind", TAG_BLIND), ("presenter_blind_tag", PRESENTER_BLIND_TAG),
                         ("wildcard_tag", WILDCARD_TAG)):
        thm(f"planted_{name}_reference", f"Planted: the {name} Python kernel's verdicts.",
            f"checkTagGroups {TG} MacTable.cfg [{_entry(kernel)}] {GROUP} [0] = true")
    thm("planted_honest_trajectory", f"Control: the reference's `{WORKFLOW}` against mstep.",
        f"mtrajectoryOk MacWorkflows.cfg (mstep MacWorkflows.cfg toyMac) {init} "
        f"[{_events(dom, honest)}] = true")
    thm("planted_tag_blind_trajectory",
        f"Planted: `{WORKFLOW}` played by the tag-blind Python kernel, against mstep.",
        f"mtrajectoryOk MacWorkflows.cfg (mstep MacWorkflows.cfg toyMac) {init} "
        f"[{_events(dom, blind)}] = true")
    thm("planted_lean_tag_blind_step",
        f"Planted: the reference's `{WORKFLOW}` against a Lean step without the tag check.",
        f"mtrajectoryOk MacWorkflows.cfg (fun k r _ => step MacWorkflows.cfg k r) {init} "
        f"[{_events(dom, honest)}] = true")
    out += ["end KVCache.Kernel.MacPlanted", "", "end", ""]
    return "\n".join(out)


def test_the_planted_module_states_the_planted_theorems() -> None:
    text = planted_module()
    assert set(theorem_ranges(text)) == {*DEFECTS, *CONTROLS}
    assert "sorry" not in text and "native_decide" not in text
    dom, honest = _run()
    _, blind = _run(TAG_BLIND)
    assert [o.refusal for *_, o in honest.events][-1] == "unknownPresenter"
    assert [o.refusal for *_, o in blind.events][-1] is None  # the spoofed commit accepted
    assert dom == Domain(3, 2, 3, 3, 6)


@pytest.fixture(scope="module")
def planted(tmp_path_factory, real_toolchain) -> Planted:
    root = project_copy(tmp_path_factory.mktemp("mac-planted") / "proj", SOURCES)
    text = planted_module()
    (root / TARGET).write_text(text, encoding="utf-8")
    return Planted(build(root, real_toolchain, jobs=1, roots=("Proofs",)), theorem_ranges(text))


@pytest.mark.lean
def test_the_planted_module_compiles_only_up_to_the_planted_errors(planted: Planted) -> None:
    assert not planted.result.ok
    assert planted.result.failed == ["Proofs.Kernel.MacPlanted"], planted.result.failed
    for name in CONTROLS:
        assert planted.errors_in(name) == [], name
    located = sum(len(planted.errors_in(name)) for name in planted.ranges)
    errors = [d for d in planted.result.diagnostics if d.severity == "error"]
    assert located == len(errors), [str(d) for d in errors]


@pytest.mark.lean
@pytest.mark.parametrize("theorem", DEFECTS)
def test_a_planted_tag_blind_kernel_is_refused_by_lean(planted: Planted, theorem: str) -> None:
    assert planted.errors_in(theorem), theorem
