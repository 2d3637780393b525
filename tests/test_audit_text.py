"""Planted defects for issue 41 item 2: printed statements elaborated back by Lean
(``statement-text``) and instances judged by the key Lean files them under (``core-instance``).

The fixture is ``tests/fixtures/lean/AuditFixture/Text.lean`` (compiled parts committed beside
the others). Before the issue the printer showed ``numeral_name`` as ``Text.5 = 0``,
``keyword_binder`` as ``∀ (fun : Nat), fun = fun``, ``binder_shadows_global`` as ``∀ (Nat :
Type) (n : Nat), Nat → n = n`` and both tree-map theorems as ``Std.TreeMap.isEmpty
Std.TreeMap.empty = Bool.true`` (measured with the printer of commit ca39c7d); nothing elaborated
a printed statement back. ``behindBeta`` and ``behindLetTag`` were no ``core-instance`` finding
(their declared types mention the library type ``Tag``, which Lean's index reduces away).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures.audit_env import core_lib, index_cache

from pytools.lean.audit import rules
from pytools.lean.audit.facts import module_facts
from pytools.lean.audit.library_facts import InstanceFacts, LibraryFacts
from pytools.lean.audit.printer import escape_component, escape_name
from pytools.lean.audit.records import AuditReport
from pytools.lean.audit.text import Target, render
from pytools.lean.audit.walk import audit_modules
from pytools.lean.olean import Expr, Level, Module

OLEAN = Path(__file__).parent / "fixtures" / "olean"
TEXT = "AuditFixture.Text"
CORE = core_lib()
pytestmark = pytest.mark.skipif(CORE is None, reason="core library .olean files not found")


def _audit(statement_check=None) -> tuple[AuditReport, list[Target]]:
    seen: list[Target] = []

    def check(targets):
        seen.extend(targets)
        return statement_check(targets) if statement_check else {}

    report = audit_modules([TEXT], [OLEAN], core_dir=CORE, root=TEXT, cache_dir=index_cache(),
                           statement_check=check)
    return report, seen


@pytest.fixture(scope="module")
def audited() -> tuple[AuditReport, list[Target]]:
    return _audit()


# --------------------------------------------------------------------------- the printer


def test_names_print_as_lean_reads_them() -> None:
    assert escape_component("5") == "«5»"
    assert escape_component("fun") == "«fun»"
    assert escape_component("a b") == "«a b»"
    assert escape_component("α'") == "α'"
    assert escape_component("x₁") == "x₁"
    assert escape_name("Text.5") == "Text.«5»"
    assert escape_name("Nat.add_comm") == "Nat.add_comm"


#: theorem -> its printed statement (what the check module restates)
PRINTED = {
    "Text.numeral_name": "Text.«5» = 0",
    "Text.keyword_binder": "∀ («fun» : Nat), «fun» = «fun»",
    "Text.binder_shadows_global": "∀ (Nat_1 : Type) (n : Nat), Nat_1 → n = n",
    "Text.backwards_empty": "Std.TreeMap.isEmpty (@Std.TreeMap.empty Nat Nat "
                            "(fun (a b : Nat) => Ord.compare b a)) = Bool.true",
    "Text.default_empty": "Std.TreeMap.isEmpty (@Std.TreeMap.empty Nat Nat Ord.compare) "
                          "= Bool.true",
    "Text.weird_five_le_two": "@LE.le Nat Text.weirdLE 5 2",
    "Text.honest_id": "∀ (a : Nat), id a = a",
}


@pytest.mark.parametrize("theorem", sorted(PRINTED))
def test_printed_statements(audited, theorem: str) -> None:
    """Names escaped, a binder shadowing a global renamed, an implicit comparator nothing
    else determines printed (``@Std.TreeMap.empty Nat Nat …``), hygienic names readable."""
    assert audited[0].by_name()[theorem].statement == PRINTED[theorem]


def test_every_user_facing_theorem_is_a_target(audited) -> None:
    report, targets = audited
    theorems = {d.name for d in report.user_facing if d.kind == "theorem"}
    assert {t.name for t in targets} == theorems
    assert "statement-text" in report.rules


def test_check_module_text(audited) -> None:
    """The generated module restates each theorem by its printed text and proves it by the
    theorem itself; each check theorem's lines are known (errors map back by line)."""
    targets = audited[1]
    module = render("AuditFixture.Text", targets)
    lines = module.text.splitlines()
    assert lines[0] == "module" and "public import AuditFixture.Text" in lines
    for i, t in enumerate(targets):
        first, last = module.lines[i]
        assert lines[first - 1] == f"theorem t_{i} :"
        assert lines[first] == f"    {t.text} :="
        assert lines[last - 1] == f"  @{escape_name(t.name)}"
        assert module.target_at(first + 1) == i


def test_a_failure_is_a_finding_and_its_users_are_reported() -> None:
    """A statement-text failure the check reports is the theorem's finding (planted: the
    check says ``numeral_name`` fails)."""
    report, _ = _audit(lambda targets: {"Text.numeral_name": "planted"})
    found = {(f.declaration, f.rule) for f in report.findings}
    assert ("Text.numeral_name", "statement-text") in found
    assert not any(f.rule == "statement-text" and f.declaration != "Text.numeral_name"
                   for f in report.findings)


def test_without_the_check_the_rule_is_not_claimed() -> None:
    report = audit_modules([TEXT], [OLEAN], core_dir=CORE, root=TEXT, cache_dir=index_cache())
    assert "statement-text" not in report.rules


# --------------------------------------------------------------------------- instance keys

#: instance -> the constants of the key Lean filed it under (read from the .olean)
KEYS = {
    "Text.behindId": ("id", "LE", "Nat"),
    "Text.behindAbbrev": ("LE", "Nat"),
    "Text.behindFun": ("LT", "Nat"),
    "Text.behindLet": ("Mul", "Nat"),
    "Text.viaInferInstanceAs": ("Add", "Nat"),
    "Text.behindBeta": ("LE", "Nat"),
    "Text.behindLetTag": ("LT", "Nat"),
    "Text.weirdLE": ("LE", "Text.N"),
    "Text.honestLE": ("LE", "Text.Tag"),
    "Text.honestId": ("id", "Inhabited", "Text.Tag"),
    "Text.honestInfer": ("LE", "Text.Tag"),
}
ROUTES = ("Text.behindId", "Text.behindAbbrev", "Text.behindFun", "Text.behindLet",
          "Text.viaInferInstanceAs", "Text.behindBeta", "Text.behindLetTag")
CONTROLS = ("Text.honestLE", "Text.honestId", "Text.honestInfer")


def test_instance_keys_are_read() -> None:
    facts = module_facts(TEXT, Module(OLEAN / "AuditFixture" / "Text.olean"))
    keys = {i.declaration: i.keys for i in facts.instances}
    for name, expected in KEYS.items():
        assert keys[name] == expected, name


def test_instances_are_judged_by_their_keys(audited) -> None:
    report = audited[0]
    flagged = {f.declaration for f in report.findings if f.rule == "core-instance"}
    for name in ROUTES:
        assert name in flagged, name
    for name in CONTROLS:
        assert name not in flagged, name
    users = {f.declaration for f in report.findings if f.rule == "depends-on-finding"
             and f.subject.startswith("Text.behindBeta")}
    assert "Text.beta_five_le_two" in users


def test_the_key_alone_makes_the_finding() -> None:
    """An instance whose declared type mentions the library (so the conclusion rule passes
    it) but whose key is core's is a finding; keyed under the library, it is not."""
    def facts(keyed: bool) -> LibraryFacts:
        inst = InstanceFacts("X.inst", "X", "LE", mentions_library=True, registered=True,
                             keyed_core=keyed)
        return LibraryFacts(modules=(), declared_in={}, reached={}, core_names=None,
                            instances=(inst,))
    assert [f.rule for f in rules.rule_core_instance(facts(True))] == ["core-instance"]
    assert list(rules.rule_core_instance(facts(False))) == []


# --------------------------------------------------------------------------- Lean elaborates

#: (theorem, a text a printer that is not Lean's gave, what Lean says of it)
PLANTED = [
    ("Text.numeral_name", "Text.5 = 0", "does not elaborate"),
    ("Text.keyword_binder", "∀ (fun : Nat), fun = fun", "does not elaborate"),
    ("Text.binder_shadows_global", "∀ (Nat : Type) (n : Nat), Nat → n = n",
     "does not elaborate"),
    ("Text.backwards_empty", "Std.TreeMap.isEmpty Std.TreeMap.empty = Bool.true",
     "does not elaborate"),
    # accepted by `@backwards_empty` up to unfolding (both maps are empty), another term
    ("Text.backwards_empty", "Std.TreeMap.isEmpty (@Std.TreeMap.empty Nat Nat Ord.compare) "
     "= Bool.true", "elaborates to another statement"),
    ("Text.weird_five_le_two", "5 ≤ 2", ""),
    # accepted by `@honest_id` up to unfolding `id`, yet another term: the comparison sees it
    ("Text.honest_id", "∀ (a : Nat), a = a", "elaborates to another statement"),
]


@pytest.mark.lean
def test_printed_statements_elaborate_back(tmp_path: Path) -> None:
    """One check module over the fixture: every statement as printed now elaborates back to
    its theorem's type (``beta_five_le_two`` prints its instance, ``@LE.le Nat
    Text.behindBeta 5 2``: ``core-instance`` reports that instance); each planted text is a
    failure, two of them accepted by ``@theorem`` up to unfolding and caught only by the
    comparison of terms."""
    from pytools.lean.statement_check import check_statements
    from pytools.lean.toolchain import find_toolchain

    toolchain = find_toolchain()
    lib = tmp_path / "lib"
    shutil.copytree(OLEAN, lib)
    _, targets = _audit()
    by_name = {t.name: t for t in targets}
    planted = [Target(name, t.module, text, t.shape, t.level_params, label=f"planted {i}")
               for i, (name, text, _) in enumerate(PLANTED) for t in [by_name[name]]]
    run = check_statements(tmp_path / "check", lib, toolchain, TEXT, targets + planted)
    print(f"statement check: {run.checked} texts, compiles {run.compile_seconds} s, "
          f"read back {run.read_seconds} s")
    for key, why in sorted(run.failures.items()):
        print(f"  {key}: {why}")
    for i, (name, _, why) in enumerate(PLANTED):
        assert f"planted {i}" in run.failures, (name, run.failures)
        assert run.failures[f"planted {i}"].startswith(why), (name, run.failures)
    honest = {k: v for k, v in run.failures.items() if not k.startswith("planted")}
    assert honest == {}, honest


# --------------------------------------------------------------------------- the comparison


def _targets() -> list[Target]:
    return [Target(f"X.t{i}", "X", f"P{i}", f"shape{i}") for i in range(3)]


def test_errors_map_to_the_theorem_whose_lines_hold_them() -> None:
    """Lean's error inside a check theorem's lines is that theorem's failure; none else."""
    from pytools.lean.audit.text import compare

    targets = _targets()
    module = render("X", targets)
    first, _ = module.lines[1]
    found = compare(targets, module, [(first + 1, "Type mismatch\nmore"), (1, "elsewhere")],
                    None)
    assert found == {"X.t1": "does not elaborate: Type mismatch"}


def test_terms_are_compared_not_accepted_up_to_unfolding() -> None:
    """A check theorem Lean accepted but whose type is another term, or that is missing from
    the compiled module, is a failure (planted: wrong and missing types)."""
    from pytools.lean.audit.text import compare, shape_sha256

    same = Expr("const", ("True", ()))
    other = Expr("const", ("False", ()))
    targets = [Target(f"X.t{i}", "X", "True", shape_sha256(same)) for i in range(3)]
    module = render("X", targets)
    found = compare(targets, module, [], {module.names[0]: same, module.names[1]: other})
    assert found == {"X.t1": "elaborates to another statement than the theorem's",
                     "X.t2": "not elaborated (its check theorem is missing)"}


def test_universe_parameters_compare_by_first_occurrence() -> None:
    from pytools.lean.audit.text import shape_sha256

    def sorts(a: str, b: str) -> Expr:
        return Expr("forallE", ("x", Expr("sort", (Level("param", (a,)),)),
                                Expr("sort", (Level("param", (b,)),)), "default"))
    assert shape_sha256(sorts("u", "v")) == shape_sha256(sorts("u_1", "u_2"))
    assert shape_sha256(sorts("u", "v")) != shape_sha256(sorts("u", "u"))


def test_a_lean_crash_is_an_error_naming_the_check_module(tmp_path: Path) -> None:
    """Lean exits non-zero with no located error and no module: an AuditError naming the
    check module, never an empty (green) result."""
    import subprocess

    from pytools.lean.audit.records import AuditError
    from pytools.lean.statement_check import check_statements
    from pytools.lean.toolchain import Toolchain

    class Crashing(Toolchain):
        def run_lean(self, args, lean_path, cwd, timeout=None):  # noqa: ANN001, ANN201
            return subprocess.CompletedProcess(args, 134, "", "Segmentation fault\n")

    chain = Crashing("native", "4.28.0", "0" * 40, ("lean",), tmp_path, "test")
    with pytest.raises(AuditError, match="StatementCheck.lean"):
        check_statements(tmp_path / "check", tmp_path, chain, "X", _targets())
