"""The module builder: import headers, ordering, errors, incremental rebuilds.

Fast tests drive the real builder through a fake native `lean` (tests/fake_lean.py);
the `lean`-marked tests compile small `prelude` fixture modules with the real toolchain.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytools.lean.build import BUILD_DIR, build, report, residual_output
from pytools.lean.modules import BuildError, discover, parse_imports, topological_order
from pytools.lean.toolchain import Toolchain

FAKE_LEAN = Path(__file__).with_name("fake_lean.py")


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def three_modules(root: Path) -> None:
    """C imports B and A, B imports A; D stands alone."""
    write(root, "Proofs/A.lean", "module\nprelude\npublic section\n-- a\nend\n")
    write(root, "Proofs/B.lean", "module\nprelude\npublic import Proofs.A\n-- b\n")
    write(root, "Proofs/C.lean",
          "module\nprelude\n/- header comment -/\npublic import Proofs.B\n"
          "import Proofs.A -- trailing\n-- c\n")
    write(root, "Proofs/D.lean", "module\nprelude\n-- d\n")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Toolchain, Path]:
    log = tmp_path / "compiled.log"
    monkeypatch.setenv("FAKE_LEAN_LOG", str(log))
    lib = tmp_path / "corelib"
    lib.mkdir()
    chain = Toolchain(kind="native", version="4.28.0", commit="0" * 40,
                      lean=(str(FAKE_LEAN),), lib_dir=lib, found_by="test")
    return chain, log


def compiled(log: Path) -> list[str]:
    names = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return names


def test_parse_imports_header_forms() -> None:
    text = """module
/- a /- nested -/ comment -/
prelude
public import Proofs.A
import all Proofs.B
public meta import Proofs.C  -- why
theorem t : True := trivial
import NotAHeaderImport
"""
    assert parse_imports(text) == ("Proofs.A", "Proofs.B", "Proofs.C")


def test_order_follows_imports(tmp_path: Path) -> None:
    three_modules(tmp_path)
    order = topological_order(discover(tmp_path))
    assert order.index("Proofs.A") < order.index("Proofs.B") < order.index("Proofs.C")


def test_cycle_is_an_error_naming_the_files(tmp_path: Path) -> None:
    write(tmp_path, "Proofs/A.lean", "module\nimport Proofs.B\n")
    write(tmp_path, "Proofs/B.lean", "module\nimport Proofs.A\n")
    with pytest.raises(BuildError) as err:
        topological_order(discover(tmp_path))
    assert "import cycle" in str(err.value)
    assert "Proofs/A.lean" in str(err.value) and "Proofs/B.lean" in str(err.value)


def test_missing_library_module_names_the_importer(tmp_path: Path) -> None:
    write(tmp_path, "Proofs/A.lean", "module\npublic import Proofs.Nowhere\n")
    with pytest.raises(BuildError) as err:
        topological_order(discover(tmp_path))
    assert "Proofs/A.lean" in str(err.value) and "Proofs/Nowhere.lean" in str(err.value)


def test_missing_core_module_names_the_importer(tmp_path: Path, fake) -> None:
    chain, _ = fake
    write(tmp_path, "Proofs/A.lean", "module\nimport Init.Nonexistent\n")
    with pytest.raises(BuildError, match=r"Proofs/A.lean: imports Init.Nonexistent"):
        build(tmp_path, chain, jobs=1)


def test_build_then_noop_then_leaf_change(tmp_path: Path, fake) -> None:
    chain, log = fake
    three_modules(tmp_path)
    first = build(tmp_path, chain, jobs=2)
    assert first.ok and sorted(first.compiled) == ["Proofs.A", "Proofs.B", "Proofs.C",
                                                   "Proofs.D"]
    order = compiled(log)
    assert order.index("A.lean") < order.index("B.lean") < order.index("C.lean")
    assert (tmp_path / BUILD_DIR / "Proofs/C.olean").is_file()

    noop = build(tmp_path, chain, jobs=2)
    assert noop.ok and noop.compiled == [] and len(noop.up_to_date) == 4
    assert compiled(log) == []

    write(tmp_path, "Proofs/A.lean", "module\nprelude\npublic section\n-- a changed\nend\n")
    leaf = build(tmp_path, chain, jobs=2)
    assert sorted(leaf.compiled) == ["Proofs.A", "Proofs.B", "Proofs.C"]
    assert leaf.up_to_date == ["Proofs.D"]


def test_change_of_top_module_recompiles_only_it(tmp_path: Path, fake) -> None:
    chain, log = fake
    three_modules(tmp_path)
    build(tmp_path, chain, jobs=1)
    compiled(log)
    write(tmp_path, "Proofs/C.lean", "module\nprelude\npublic import Proofs.B\n-- c2\n")
    again = build(tmp_path, chain, jobs=1)
    assert again.compiled == ["Proofs.C"]
    assert compiled(log) == ["C.lean"]


def test_longest_chain_starts_first(tmp_path: Path, fake) -> None:
    """One job, a lone module A and a chain Z1 <- Z2 <- Z3: import order would compile A
    first, leaving the chain to wait; the chain's head must start first."""
    chain, log = fake
    write(tmp_path, "Proofs/A.lean", "module\nprelude\n-- a\n")
    write(tmp_path, "Proofs/Z1.lean", "module\nprelude\n-- z1\n")
    write(tmp_path, "Proofs/Z2.lean", "module\nprelude\npublic import Proofs.Z1\n")
    write(tmp_path, "Proofs/Z3.lean", "module\nprelude\npublic import Proofs.Z2\n")
    result = build(tmp_path, chain, jobs=1)
    assert result.ok and result.order[0] == "Proofs.A"
    assert compiled(log)[:2] == ["Z1.lean", "Z2.lean"]


def test_fresh_build_starts_the_biggest_source_first(tmp_path: Path, fake) -> None:
    """No build record (a fresh clone): compile times are guessed from source sizes, so a lone
    module of 200 KB (a generated table) starts before a chain of two small ones."""
    chain, log = fake
    write(tmp_path, "Proofs/A.lean", "module\nprelude\n" + "-- table row\n" * 16_000)
    write(tmp_path, "Proofs/Z1.lean", "module\nprelude\n-- z1\n")
    write(tmp_path, "Proofs/Z2.lean", "module\nprelude\npublic import Proofs.Z1\n")
    result = build(tmp_path, chain, jobs=1)
    assert result.ok and compiled(log) == ["A.lean", "Z1.lean", "Z2.lean"]


def test_critical_paths_weigh_recorded_seconds() -> None:
    from pytools.lean.build import critical_paths

    order = ["A", "B", "C"]
    deps = {"A": [], "B": [], "C": ["B"]}
    assert critical_paths(order, deps, {}) == {"A": 1.0, "B": 2.0, "C": 1.0}
    guessed = critical_paths(order, deps, {}, {"A": 5.0, "B": 1.0, "C": 1.0})
    assert guessed == {"A": 5.0, "B": 2.0, "C": 1.0}
    slow_a = critical_paths(order, deps, {"A": 300.0, "B": 10.0, "C": 20.0})
    assert slow_a == {"A": 300.0, "B": 30.0, "C": 20.0}


def test_planted_edit_during_compile_is_rebuilt_next_time(tmp_path: Path, fake) -> None:
    """A source edited while its module compiles: the record must name the compiled bytes, so
    the next build sees the edit (it once recorded the edited file's hash: "up to date")."""
    from pytools.lean.build import compile_module

    chain, log = fake
    three_modules(tmp_path)

    def edit_while_compiling(tc, ws, module):
        outcome = compile_module(tc, ws, module)
        if module.path.name == "D.lean":
            write(tmp_path, "Proofs/D.lean", "module\nprelude\n-- d, edited mid-build\n")
        return outcome

    first = build(tmp_path, chain, jobs=1, compile_fn=edit_while_compiling)
    assert "Proofs.D" in first.compiled
    compiled(log)
    again = build(tmp_path, chain, jobs=1)
    assert again.compiled == ["Proofs.D"]
    assert compiled(log) == ["D.lean"]


def test_damaged_output_is_rebuilt(tmp_path: Path, fake) -> None:
    chain, _ = fake
    three_modules(tmp_path)
    build(tmp_path, chain, jobs=1)
    (tmp_path / BUILD_DIR / "Proofs/D.olean").write_bytes(b"tampered")
    again = build(tmp_path, chain, jobs=1)
    assert again.compiled == ["Proofs.D"]


def test_error_is_reported_with_file_line_col(tmp_path: Path, fake, capsys) -> None:
    chain, _ = fake
    three_modules(tmp_path)
    write(tmp_path, "Proofs/B.lean", "module\nprelude\npublic import Proofs.A\n  error_here\n")
    result = build(tmp_path, chain, jobs=1)
    assert not result.ok
    assert result.failed == ["Proofs.B"] and result.blocked == ["Proofs.C"]
    report(result)
    out = capsys.readouterr().out
    assert "Proofs/B.lean:4:4: error: planted error" in out
    assert "build FAILED" in out


def test_cli_build_fails_with_nonzero_exit(tmp_path: Path, fake, monkeypatch) -> None:
    from click.testing import CliRunner

    from pytools.cli import cli

    chain, _ = fake
    write(tmp_path, "lakefile.lean", "")
    write(tmp_path, "Proofs/A.lean", "module\nprelude\nerror_here\n")
    monkeypatch.setattr("pytools.lean.cli.project_root", lambda: tmp_path)
    monkeypatch.setattr("pytools.lean.cli.find_toolchain", lambda lean=None: chain)
    result = CliRunner().invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 1
    assert "Proofs/A.lean:3:4: error" in result.output


def test_residual_output_drops_debug_and_echoed_source() -> None:
    source = "theorem t : True := trivial\n"
    output = "[DEBUG:A] x\n  - /tmp/lib/Init.olean\ntheorem t : True := trivial\nuncaught boom\n"
    assert residual_output(output, source) == ["uncaught boom"]


# --- with the real toolchain (slow) -------------------------------------------------------------

PRELUDE_A = """module
prelude
public section
inductive Truth : Prop where
  | intro : Truth
end
"""
PRELUDE_B = """module
prelude
public import Fix.A
public section
theorem truth_b : Truth := Truth.intro
end
"""
PRELUDE_C = """module
prelude
public import Fix.B
public section
theorem truth_c : Truth := truth_b
end
"""


@pytest.mark.lean
def test_real_lean_three_modules_noop_and_error(tmp_path: Path, real_toolchain) -> None:
    root = tmp_path / "proj"
    for rel, text in [("Fix/A.lean", PRELUDE_A), ("Fix/B.lean", PRELUDE_B),
                      ("Fix/C.lean", PRELUDE_C)]:
        write(root, rel, text)
    first = build(root, real_toolchain, jobs=2, roots=("Fix",))
    report(first)
    assert first.ok, first.diagnostics
    assert first.compiled == ["Fix.A", "Fix.B", "Fix.C"]  # a chain: strictly in order
    assert (root / BUILD_DIR / "Fix/C.olean").is_file()

    noop = build(root, real_toolchain, jobs=2, roots=("Fix",))
    assert noop.compiled == [] and noop.up_to_date == ["Fix.A", "Fix.B", "Fix.C"]
    assert noop.wall_seconds < 0.1 * first.wall_seconds

    write(root, "Fix/C.lean", PRELUDE_C.replace("truth_b\n", "nonexistent_name\n"))
    broken = build(root, real_toolchain, jobs=2, roots=("Fix",))
    assert broken.compiled == [] and broken.failed == ["Fix.C"]
    errors = [d for d in broken.diagnostics if d.severity == "error"]
    assert errors and errors[0].file == "Fix/C.lean" and errors[0].line == 5
    assert "nonexistent_name" in errors[0].message
    assert os.path.isfile(root / BUILD_DIR / "Fix/B.olean")
