"""Planted defects of the workflow bench and of the finite-check table must be rejected by the
Lean kernel (slow: the kernel modules compile unless already built, then ~4-5 min for the twin).

The committed bench ``Proofs/Kernel/Workflows.lean`` is compiled (and audited) by
``certify --check``. Here its planted twin, ``tests/fixtures/lean/kernel/WorkflowsPlanted.lean``
(same definitions, see ``test_kernel.py::test_planted_twin_matches_the_bench``), compiled once
and shared by every test below, states six wrong workflow theorems, each in its own theorem: a
wrong final system state, a wrong refusal count, a wrong verdict digit, a wrong outcome code,
a broken chain of kernel states, and a replayed commit claimed accepted. The kernel must reject
each of them (an error inside that theorem) and accept the honest control (a bench theorem
verbatim): so the bench's agreement is really computed by Lean, not assumed.

The same module (its import widened to ``Proofs.Kernel.Table``) then states the table
checker's planted defects, generated here from the reference's table, each on a one-row range
of codes: a wrong answer digit, wrong digits after the groups, a wrong candidate outcome, a
wrong row code, a wrong witness, a reachable state left out (its parent's closure fails), an
unreachable state listed, the row of a kernel that ignores the stored owner (issue 27: a forged
capability reads); and the honest row as control. The bench's twin also claims a forged read
accepted (``planted_forged_read_accepted``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from planted import Planted, import_closure, project_copy, theorem_ranges

from pytools.lean.build import build
from pytools.paths import project_root
from pytools.results.kernel.codes import state_code, state_of_code, state_space
from pytools.results.kernel.model import Domain, KState, Outcome, Request, step
from pytools.results.kernel.table import Table, TableRow, build_table

ROOT = project_root()
FIXTURE = ROOT / "tests" / "fixtures" / "lean" / "kernel" / "WorkflowsPlanted.lean"
#: The planted module imports the table: it needs the table's import closure (the kernel's
#: modules and the shared lemmas of ``Proofs/Common``).
SOURCES = import_closure("Proofs.Kernel.Table")
TARGET = "Proofs/Kernel/WorkflowsPlanted.lean"
MODULE = "Proofs.Kernel.WorkflowsPlanted"
DEFECTS = (
    "planted_wrong_final_state",
    "planted_wrong_refusal_count",
    "planted_wrong_digit",
    "planted_wrong_out",
    "planted_broken_chain",
    "planted_replay_accepted",
    "planted_forged_read_accepted",
)
CONTROLS = ("init_code", "planted_honest_control")
TABLE_DEFECTS = (
    "planted_table_wrong_digit",
    "planted_table_wrong_others",
    "planted_table_wrong_outcome",
    "planted_table_wrong_code",
    "planted_table_wrong_witness",
    "planted_table_missing_state",
    "planted_table_unreachable_listed",
    "planted_table_owner_blind",
)
TABLE_CONTROLS = ("planted_table_honest_row",)


def stored_owner_ignored(dom: Domain, st: KState, req: Request) -> Outcome:
    """Planted: the kernel of issue 27, which accepts a read whatever the block's stored owner
    when the capability's holder field names the presenter."""
    out = step(dom, st, req)
    if req.kind == "read" and out.refusal == "notOwner":
        return Outcome(st, (), None)
    return out


def _lean_row(r: TableRow) -> str:
    outs = ", ".join(hex(o) for o in r.outs)
    return f"⟨{r.code}, {hex(r.groups)}, {hex(r.others)}, [{outs}], {r.parent}, {r.via}⟩"


def planted_table_section(table: Table) -> str:
    """The table checker's planted defects and its control (see the module docstring)."""
    rows = {r.code: r for r in table.rows}
    # A row whose parent is not the initial state, with accepted and refused candidates, so
    # that each defect below has something to change.
    row = next(r for r in table.rows
               if r.parent in rows and rows[r.parent].parent and sum(map(bool, r.outs)) >= 2
               and 0 in r.outs)
    parent = rows[row.parent]
    g0 = row.groups % 32
    k = next(i for i, o in enumerate(row.outs) if o)
    unreachable = next(c for c in range(row.code + 1, state_space(table.domain))
                       if c not in rows
                       and state_code(table.domain, state_of_code(table.domain, c)) == c)
    out = ["", "namespace KVCache.Kernel.TablePlanted", "",
           "open KVCache.Kernel KVCache.Kernel.Table", "",
           f"/-- `listed` with the reachable code {row.code} left out. -/",
           f"def listedMissing : Nat := listed - 2 ^ {row.code}", "",
           f"/-- `listed` with the unreachable code {unreachable} added. -/",
           f"def listedExtra : Nat := listed + 2 ^ {unreachable}"]
    cases = (
        ("planted_table_honest_row", "Control: a reference row verbatim.", row, "listed"),
        ("planted_table_wrong_digit", "Planted: one group's digits changed.",
         replace(row, groups=row.groups - g0 + (g0 + 1) % len(table.dictionary)), "listed"),
        ("planted_table_wrong_others", "Planted: the digits after the groups changed.",
         replace(row, others=row.others + 1), "listed"),
        ("planted_table_wrong_outcome", "Planted: an accepted candidate's outcome changed.",
         replace(row, outs=tuple(o + (i == k) for i, o in enumerate(row.outs))), "listed"),
        ("planted_table_wrong_code", "Planted: the row names another code.",
         replace(row, code=row.code + 1), "listed"),
        ("planted_table_wrong_witness",
         "Planted: the witness names a refused candidate of the parent.",
         replace(row, via=parent.outs.index(0)), "listed"),
        ("planted_table_missing_state",
         "Planted: a reachable state left out; its parent's row must fail (closure).",
         parent, "listedMissing"),
        ("planted_table_unreachable_listed",
         "Planted: an unreachable state listed (with this row's answers and witness).",
         replace(row, code=unreachable), "listedExtra"),
    )
    for name, doc, r, listed in cases:
        code = unreachable if listed == "listedExtra" else (
            row.code if r.code == row.code + 1 else r.code)
        out += ["", f"/-- {doc} -/", f"theorem {name} :",
                f"    checkCodes cfg {listed} dict 1 {code} [{_lean_row(r)}] = true := by",
                "  decide +kernel"]
    # The owner-blind kernel's own table (same reachable states, its own dictionary): its row
    # for an owned state must fail Lean's check, whose step refuses the forged reads.
    blind = build_table(table.domain, stored_owner_ignored)
    assert [b.code for b in blind.rows] == [r.code for r in table.rows]
    brow = next(b for b, r in zip(blind.rows, table.rows, strict=True) if b != r)
    out += ["", "/-- The dictionary of the owner-blind kernel's table. -/",
            "def dictOwnerBlind : List Nat := [" + ", ".join(hex(d) for d in blind.dictionary)
            + "]", "",
            "/-- Planted: a row of a kernel that ignores the stored owner (forged reads "
            "accepted). -/",
            "theorem planted_table_owner_blind :",
            f"    checkCodes cfg listed dictOwnerBlind 1 {brow.code} [{_lean_row(brow)}] = true"
            " := by",
            "  decide +kernel"]
    out += ["", "end KVCache.Kernel.TablePlanted", ""]
    return "\n".join(out)


@pytest.fixture(scope="module")
def planted(tmp_path_factory, real_toolchain) -> Planted:
    root = project_copy(tmp_path_factory.mktemp("kernel-planted") / "proj", SOURCES)
    # The twin imports only the model; widened to the table so that one module (one Lean
    # process) also carries the table checker's planted defects.
    text = FIXTURE.read_text(encoding="utf-8").replace(
        "public import Proofs.Kernel.Model", "public import Proofs.Kernel.Table", 1)
    text = text.rstrip("\n") + "\n" + planted_table_section(build_table())
    (root / TARGET).write_text(text, encoding="utf-8")
    ranges = theorem_ranges(text)
    return Planted(build(root, real_toolchain, jobs=1, roots=("Proofs",)), ranges)


def test_the_fixture_states_the_planted_theorems() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    ranges = theorem_ranges(text)
    assert set(ranges) == {*DEFECTS, *CONTROLS}
    table_ranges = theorem_ranges(planted_table_section(build_table()))
    assert set(table_ranges) == {*TABLE_DEFECTS, *TABLE_CONTROLS}
    assert "sorry" not in text and "native_decide" not in text
    lines = text.splitlines()
    for name in DEFECTS + ("planted_honest_control",):
        first, last = ranges[name]
        assert lines[last - 1] == "  decide +kernel", name
        assert first < last


@pytest.mark.lean
def test_the_twin_compiles_only_up_to_the_planted_errors(planted: Planted) -> None:
    assert not planted.result.ok
    assert planted.result.failed == [MODULE], planted.result.failed
    for name in CONTROLS + TABLE_CONTROLS:
        assert planted.errors_in(name) == [], name
    located = sum(len(planted.errors_in(name)) for name in planted.ranges)
    errors = [d for d in planted.result.diagnostics if d.severity == "error"]
    assert located == len(errors), [str(d) for d in errors]


@pytest.mark.lean
@pytest.mark.parametrize("theorem", DEFECTS + TABLE_DEFECTS)
def test_a_planted_defect_is_rejected_by_the_kernel(planted: Planted, theorem: str) -> None:
    assert planted.errors_in(theorem), theorem
