"""Planted defects, one test each, for the rules of :mod:`pytools.lean.audit.rules`.

Every test asserts the *specific* finding: (declaration, module, rule). The fixtures are small
``prelude`` modules (``tests/fixtures/lean/AuditFixture/{Bare,Impostor,Unsafe,Meta}.lean``,
compiled ``.olean`` parts committed beside the others, see the README there), audited
together as one library whose root is ``Impostor``. Issue 12's two attacks are in Impostor;
before the issue the audit reported "OK: no findings" on all four modules (measured with the
audit of commit ff2de28). The axiom rules' planted defects are in ``tests/test_audit.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures.audit_env import core_lib, index_cache

from pytools.lean.audit import policy, rules
from pytools.lean.audit.facts import ModuleFacts
from pytools.lean.audit.library_facts import LibraryFacts
from pytools.lean.audit.records import AuditReport, Finding
from pytools.lean.audit.walk import audit_modules
from pytools.lean.olean import ImportRecord

FIXTURES = Path(__file__).parent / "fixtures"
OLEAN = FIXTURES / "olean"
SOURCES = FIXTURES / "lean" / "AuditFixture"
NAMES = ("Bare", "Impostor", "Unsafe", "Meta")
MODULES = [f"AuditFixture.{n}" for n in NAMES]
BARE, IMPOSTOR, UNSAFE, META = MODULES


CORE = core_lib()
pytestmark = pytest.mark.skipif(CORE is None, reason="core library .olean files not found")


@pytest.fixture(scope="module")
def cache() -> Path:
    return index_cache()


@pytest.fixture(scope="module")
def report(cache: Path) -> AuditReport:
    sources = [(f"{n}.lean", SOURCES / f"{n}.lean") for n in NAMES]
    return audit_modules(MODULES, [OLEAN], core_dir=CORE, root=IMPOSTOR, sources=sources,
                         cache_dir=cache)


def found(report: AuditReport, rule: str) -> set[tuple[str, str]]:
    """(declaration, module) of every finding of ``rule``."""
    return {(f.declaration, f.module) for f in report.findings if f.rule == rule}


# --------------------------------------------------------------------------- issue 12


def test_attack_1_an_axiom_named_propext(report: AuditReport) -> None:
    """`axiom propext : False` at the root, proving `2 ^ 64 ≤ 5`: the name is allowed, the
    identity is not."""
    assert {("propext", IMPOSTOR), ("two_pow_64_le_five", IMPOSTOR)} <= found(
        report, "project-axiom")
    assert ("propext", IMPOSTOR) in found(report, "core-name")
    stmt = report.by_name()["two_pow_64_le_five"]
    assert stmt.statement == "2 ^ 64 ≤ 5" and stmt.axioms == ("propext",)
    assert dict(stmt.constants)["LE.le"] == "Init.Prelude"


def test_attack_2_nat_gcd_redefined(report: AuditReport) -> None:
    """`Nat.gcd` as a constant function: `0 = 1` with no axiom at all, by the kernel's GMP
    evaluation. The definition is a kernel builtin; the theorem is named through it."""
    assert report.by_name()["zero_eq_one"].axioms == ()
    assert ("Nat.gcd", IMPOSTOR) in found(report, "kernel-builtin")
    assert ("Nat.gcd", IMPOSTOR) in found(report, "core-name")
    (f,) = [f for f in report.findings
            if f.declaration == "zero_eq_one" and f.rule == "depends-on-finding"]
    assert f.module == IMPOSTOR and f.subject.startswith("Nat.gcd (")


# --------------------------------------------------------------------------- modules


def test_prelude_modules(report: AuditReport) -> None:
    assert found(report, "prelude-module") == {("", m) for m in MODULES}


def test_outside_root(report: AuditReport) -> None:
    assert found(report, "outside-root") == {("", BARE), ("", UNSAFE), ("", META)}


def test_meta_import(report: AuditReport) -> None:
    assert found(report, "meta-import") == {("", META)}


def test_duplicate_name_across_modules(report: AuditReport) -> None:
    """Both copies are audited and reported (the second copy is no longer dropped)."""
    assert found(report, "duplicate-name") == {("dup_name", IMPOSTOR), ("dup_name", UNSAFE)}
    assert [d.module for d in report.declarations if d.name == "dup_name"] == [IMPOSTOR,
                                                                               UNSAFE]


# --------------------------------------------------------------------------- names


def test_kernel_builtins(report: AuditReport) -> None:
    assert {("Nat.ble", BARE), ("Quot.lift", BARE), ("Lean.reduceBool", BARE), ("Nat", BARE),
            ("Bool.true", BARE), ("Nat.log2", IMPOSTOR)} <= found(report, "kernel-builtin")
    assert {d for d, _ in found(report, "kernel-builtin")} <= policy.KERNEL_BUILTINS


def test_theorem_renamed_to_shadow_core(report: AuditReport) -> None:
    assert ("Nat.add_comm", IMPOSTOR) in found(report, "core-name")
    assert ("clean_here", IMPOSTOR) not in {(f.declaration, f.module) for f in report.findings}


def test_stand_ins_for_core_types_are_core_names(report: AuditReport) -> None:
    assert {("IO", META), ("Lean.Elab.Term.TermElab", META)} <= found(report, "core-name")


# --------------------------------------------------------------------------- code


def test_unsafe(report: AuditReport) -> None:
    assert found(report, "unsafe") == {("uns", UNSAFE), ("badImpl", UNSAFE)}


def test_partial_def_used_in_a_proof(report: AuditReport) -> None:
    assert found(report, "partial") == {("loop", UNSAFE)}
    assert ("loop_eq", UNSAFE) in found(report, "depends-on-finding")


def test_implemented_by_swap_and_false_opaque(report: AuditReport) -> None:
    assert found(report, "implemented-by") == {("safeLooking", UNSAFE), ("secretNat", UNSAFE)}
    subjects = {f.declaration: f.subject for f in report.findings_of("implemented-by")}
    assert subjects == {"safeLooking": "uns", "secretNat": "badImpl"}


def test_extern(report: AuditReport) -> None:
    (f,) = report.findings_of("extern")
    assert (f.declaration, f.module, f.subject) == ("myAdd", UNSAFE, "lean_nat_add")


def test_export(report: AuditReport) -> None:
    assert found(report, "export") == {("exported", UNSAFE)}


def test_csimp(report: AuditReport) -> None:
    (f,) = report.findings_of("csimp")
    assert (f.declaration, f.module, f.subject) == ("f1_eq_f2", UNSAFE, "f1 ↦ f2")


def test_init_and_initialize(report: AuditReport) -> None:
    assert found(report, "init") == {("hook", META), ("initialized", META)}


def test_metaprograms(report: AuditReport) -> None:
    meta = {f.declaration: f.subject for f in report.findings_of("metaprogram")}
    assert meta["metaFn"] == "meta definition"
    assert "term elaborator for termMyelab" in meta["myElab"]
    assert "syntax (term parser)" in meta["termMyfalse"]
    assert "syntax (term parser)" in meta["«term⊥⊥»"]
    assert any("unexpander for False" in s for s in meta.values())
    assert all(m == META for _, m in found(report, "metaprogram"))


def test_macro_rewriting_statement_notation(report: AuditReport) -> None:
    """`theorem looks_false : myfalse` states `True` after a `macro_rules`: the audit prints
    what the term says, and reports both macros."""
    assert report.by_name()["looks_false"].statement == "True"
    macros = [f.declaration for f in report.findings_of("metaprogram")
              if "macro for termMyfalse" in f.subject]
    assert len(macros) == 2


def test_instances_of_core_classes_on_core_types(report: AuditReport) -> None:
    assert found(report, "core-instance") == {
        ("myLE", META), ("localAdd", META), ("decEqNat'", META), ("Sc.scopedLE", META),
        ("Nat.decEq", META)}
    # control: an instance for the library's own type
    assert ("instInhabitedColor", META) not in {(f.declaration, f.module)
                                               for f in report.findings}
    decls = report.by_name()
    # true under the local `Add Nat` and `myLE`; printed `1 + 1 = 3` and `5 ≤ 2` before
    # issue 24: the printer now shows an instance argument that is not core's
    assert decls["one_add_one"].statement == (
        "@HAdd.hAdd Nat Nat Nat (@instHAdd Nat localAdd) 1 1 = 3")
    assert decls["five_le_two"].statement == "@LE.le Nat myLE 5 2"
    assert {("one_add_one", META), ("five_le_two", META)} <= found(report,
                                                                  "depends-on-finding")
    assert {("one_add_one", META), ("five_le_two", META)} <= found(report,
                                                                  "statement-instance")


def test_kernel_option_in_source(report: AuditReport) -> None:
    (f,) = report.findings_of("kernel-option")
    assert f.module == "Meta.lean" and f.subject.startswith("debug.skipKernelTC (")
    line = int(f.subject.rsplit("line ", 1)[1])
    assert "debug.skipKernelTC" in (SOURCES / "Meta.lean").read_text().splitlines()[line - 1]


def _facts(**kw) -> LibraryFacts:
    base = dict(modules=(), declared_in={}, reached={}, core_names=frozenset())
    return LibraryFacts(**{**base, **kw})


@pytest.mark.parametrize("text", [
    "set_option debug.skipKernelTC true in\ntheorem t : True := trivial\n",
    "set_option «debug».«skipKernelTC» true\n",
    "def s := \"/-\"\nset_option debug.proofAsSorry true\n",  # a string hiding the rest
    "leanOptions := #[⟨`debug.byAsSorry, true⟩]\n",  # a lakefile
])
def test_kernel_option_spellings(text: str) -> None:
    (f,) = rules.rule_kernel_option(_facts(sources=(("X.lean", text),)))
    assert f.rule == "kernel-option" and f.module == "X.lean"


def test_kernel_option_control() -> None:
    assert list(rules.rule_kernel_option(_facts(sources=(
        ("X.lean", "set_option maxRecDepth 1000\n-- skipKernel is a word\n"),)))) == []


def test_unvetted_extension_is_reported(tmp_path: Path, cache: Path) -> None:
    """Planted: an extension name no rule knows (the bytes of a benign one, renamed in the
    compiled file)."""
    lib = tmp_path / "AuditFixture"
    lib.mkdir()
    for suffix in ("", ".server", ".private"):
        data = (OLEAN / "AuditFixture" / f"Unsafe.olean{suffix}").read_bytes()
        assert data.count(b"symbolFrequency") <= 1
        (lib / f"Unsafe.olean{suffix}").write_bytes(data.replace(b"symbolFrequency",
                                                                 b"symbolFrequencZ"))
    r = audit_modules([UNSAFE], [tmp_path], core_dir=CORE, cache_dir=cache)
    assert ("", UNSAFE, "symbolFrequencZ") in {(f.declaration, f.module, f.subject)
                                               for f in r.findings_of("unvetted-extension")}


def test_benign_and_trust_extension_lists_are_disjoint() -> None:
    assert not policy.BENIGN_EXTENSIONS & set(policy.TRUST_EXTENSIONS)


def test_forbidden_import_rule() -> None:
    mf = ModuleFacts("L.A", "a.olean", (ImportRecord("Init", False, True, False),
                                       ImportRecord("Lean.Elab.Command", False, True, False),
                                       ImportRecord("L.B", False, True, False)),
                     (), (), (), (), (), (), (), ())
    other = ModuleFacts("L.B", "b.olean", (), (), (), (), (), (), (), (), ())
    got = list(rules.rule_forbidden_import(_facts(modules=(mf, other))))
    assert got == [Finding("", "L.A", "Lean.Elab.Command", "forbidden-import")]


def test_every_rule_has_a_message_and_a_planted_defect() -> None:
    """Each rule names, in its docstring, the fixture declaration that proves it fires."""
    from pytools.lean.audit.records import RULE_MESSAGES

    for rule in rules.RULES:
        assert rules.rule_name(rule) in RULE_MESSAGES, rule
        assert "Planted:" in (rule.__doc__ or ""), rule


def test_findings_are_deterministic(report: AuditReport, cache: Path) -> None:
    sources = [(f"{n}.lean", SOURCES / f"{n}.lean") for n in NAMES]
    again = audit_modules(MODULES, [OLEAN], core_dir=CORE, root=IMPOSTOR, sources=sources,
                          cache_dir=cache)
    assert again.findings == report.findings == tuple(sorted_findings(report))


def sorted_findings(report: AuditReport) -> list[Finding]:
    return sorted(report.findings, key=lambda f: (f.module, f.declaration, f.rule, f.subject))


def test_a_lookalike_core_module_on_the_search_path_is_not_read(tmp_path: Path,
                                                                  cache: Path) -> None:
    """Core's modules are read from the core folder first, as Lean does: a forged
    `Init/Prelude.olean` earlier on the search path changes nothing."""
    fake = tmp_path / "Init"
    fake.mkdir()
    shutil.copyfile(OLEAN / "AuditFixture" / "Bare.olean", fake / "Prelude.olean")
    r = audit_modules([IMPOSTOR], [tmp_path, OLEAN], core_dir=CORE, cache_dir=cache)
    assert dict(r.by_name()["two_pow_64_le_five"].constants)["LE.le"] == "Init.Prelude"
    assert not r.findings_of("forbidden-import")


def test_without_the_core_library_no_axiom_is_allowed(cache: Path) -> None:
    """Identity, not names: without the verified core library, core's own `propext` cannot be
    told from a look-alike, so it is reported (Defects' `hidden_sorry` uses `omega`)."""
    d = "AuditFixture.Defects"
    with_core = audit_modules([d], [OLEAN], core_dir=CORE, cache_dir=cache)
    without = audit_modules([d], [OLEAN, CORE], cache_dir=cache)
    assert not with_core.findings_of("axiom-identity")
    assert any(f.subject == "propext" for f in without.findings_of("axiom-identity"))


def test_a_changed_pin_is_an_identity_finding(monkeypatch, cache: Path) -> None:
    """Planted: a pinned type hash that differs from core's `propext` (as a different type
    would): the axiom is refused."""
    pin = policy.ALLOWED_AXIOMS["propext"]
    monkeypatch.setitem(policy.ALLOWED_AXIOMS, "propext",
                        policy.AxiomPin(pin.module, "0" * 64))
    r = audit_modules(["AuditFixture.Defects"], [OLEAN], core_dir=CORE, cache_dir=cache)
    assert any(f.subject == "propext" for f in r.findings_of("axiom-identity"))


def test_contributing_lists_every_rule() -> None:
    """docs/CONTRIBUTING.md's forbidden list is the rules' list: no rule undocumented."""
    text = (Path(__file__).parent.parent / "docs" / "CONTRIBUTING.md").read_text()
    for rule in rules.RULES:
        assert f"`{rules.rule_name(rule)}`" in text, rules.rule_name(rule)


@pytest.mark.lean
def test_real_library_has_no_finding_and_readable_statements() -> None:
    """The library as built (CI builds it for `certify --check` before the Lean-backed tests):
    every rule passes, and no published statement shows a hygienic name or `Exists fun`."""
    from pytools.lean.build_audit import library_files
    from pytools.lean.modules import discover, topological_order
    from pytools.results.registry import published_theorems

    root = Path(__file__).parent.parent
    build = root / ".lake" / "build" / "lib" / "lean"
    if not (build / "Proofs.olean").is_file():
        pytest.skip("the library is not built (run `pytools build`)")
    library = discover(root)
    theorems = published_theorems()
    sources = [(rel, root / rel) for rel in library_files(root, library)]
    r = audit_modules(topological_order(library), [build], core_dir=CORE, root="Proofs",
                      sources=sources, meanings_for=theorems, cache_dir=index_cache())
    assert r.findings == (), [f.message() for f in r.findings]
    by_name = r.by_name()
    for name in theorems:
        text = by_name[name].statement
        assert "_@" not in text and "_hyg" not in text and "Exists fun" not in text, text
    assert len(r.meanings) == len(theorems)


# --------------------------------------------------------------------------- issue 24: meaning

MEANING = "AuditFixture.Meaning"


@pytest.fixture(scope="module")
def meaning(cache: Path) -> AuditReport:
    """``Meaning`` (imports ``Init``): every route found by which an instance of a core class
    at core types changes what a statement means while it prints the same."""
    return audit_modules([MEANING], [OLEAN], core_dir=CORE, root=MEANING, cache_dir=cache)


#: (route, the instance, the theorem that prints like a core statement and uses it)
ROUTES = [
    ("instance argument of a library type", "argLE", "two_pow_64_le_five"),
    ("reducible alias of Nat, numerals", "aliasOfNat", "five_eq_zero"),
    ("reducible alias of Nat", "aliasLT", "nine_lt_one"),
    ("library alias of a core class", "aliasMul", "three_mul_three"),
    ("parent projection of a library class", "Fancy.toAdd", "one_add_one"),
    ("definition whose type is a class", "castZero", "cast_five"),
    ("attribute [instance] on a library definition", "modSeven", "mod_eq_seven"),
    ("local instance", "subLocal", "one_sub_one"),
    ("scoped instance", "Sc.divScoped", "six_div_two"),
    ("core-valued default", "inhabitedFive", "default_eq_five"),
    ("field of a library structure", "Box.le", "box_le"),
]


@pytest.mark.parametrize(("route", "instance", "theorem"), ROUTES)
def test_instances_are_judged_by_their_conclusion(meaning: AuditReport, route: str,
                                                  instance: str, theorem: str) -> None:
    """Measured on this fixture with the rule of commit b76d3fd (which accepted an instance
    whose type mentions any library constant): ``argLE``, ``aliasOfNat``, ``aliasLT``,
    ``aliasMul``, ``Fancy.toAdd`` and ``Box.le`` were not findings, and neither were the
    theorems using them; the other routes were already found."""
    assert (f"Meaning.{instance}", MEANING) in found(meaning, "core-instance"), route
    subjects = {f.subject.split(" (")[0] for f in meaning.findings
                if f.declaration == f"Meaning.{theorem}" and f.rule == "depends-on-finding"}
    assert f"Meaning.{instance}" in subjects, route


def test_meaning_controls(meaning: AuditReport) -> None:
    """The library's own types and classes are fine: an order on ``Tag``, ``Inhabited
    Tag``, the derived ``DecidableEq``, the instance of the library class ``Fancy``; core's
    own instances and an instance taken as a hypothesis (``core_le``)."""
    flagged = {d for d, _ in found(meaning, "core-instance")}
    for ok in ("Meaning.instLETag", "Meaning.instInhabitedTag", "Meaning.instDecidableEqTag",
               "Meaning.instFancyNat"):
        assert ok not in flagged
    clean = {f.declaration for f in meaning.findings}
    assert "Meaning.tag_a_le_b" not in clean and "Meaning.core_le" not in clean
    # registered instances are judged strictly: Decidable and Prop-valued ones too
    assert {"Meaning.decLe", "Meaning.nonemptyNat"} <= flagged


#: (theorem, the class and what its instance argument comes from): rule statement-instance.
#: The first eleven use an instance that rule core-instance also reports; the rest have no
#: instance to report: a term written in, or reached through a library function.
STATEMENT_ROUTES = [
    ("two_pow_64_le_five", "LE from Meaning.argLE"),
    ("five_eq_zero", "OfNat from Meaning.aliasOfNat"),
    ("nine_lt_one", "LT from Meaning.aliasLT"),
    ("three_mul_three", "Mul from Meaning.aliasMul"),
    ("one_add_one", "Add from Meaning.Fancy.toAdd"),
    ("cast_five", "NatCast from Meaning.castZero"),
    ("mod_eq_seven", "Mod from Meaning.modSeven"),
    ("one_sub_one", "Sub from Meaning.subLocal"),
    ("six_div_two", "Div from Meaning.Sc.divScoped"),
    ("default_eq_five", "Inhabited from Meaning.inhabitedFive"),
    ("two_add_two", "HAdd from Meaning.hAddDirect"),
    ("box_le", "LE from Meaning.Box.le"),
    ("mk_le", "LE from Meaning.mkLE"),
    ("passed_le", "LE from Meaning.mkLE"),
    ("inline_le", "LE from LE.mk (not an instance)"),
    ("let_le", "LE from LE.mk (not an instance)"),
    ("let_le", "LE from a bound term that is not core's"),
    ("beta_le", "LE from LE.mk (not an instance)"),
    ("beta_le", "LE from a bound term that is not core's"),
    ("holds_five", "LE from LE.mk (not an instance)"),
    # higher order: the instance goes in through a function
    ("over_applied", "LE from LE.mk (not an instance)"),
    ("let_bound_fun", "LE from LE.mk (not an instance)"),
    ("hyp_fun", "LE from LE.mk (not an instance)"),
    ("passed_on", "LE from LE.mk (not an instance)"),
    ("method_passed", "LE from LE.mk (not an instance)"),
    ("hidden_rec", "LE from LE.mk (not an instance)"),
    ("hidden_hyp", "? from a bound function, whose parameters the audit cannot read"),
]


@pytest.mark.parametrize(("theorem", "subject"), STATEMENT_ROUTES)
def test_statements_are_judged_by_their_instances(meaning: AuditReport, theorem: str,
                                                  subject: str) -> None:
    """Each statement's instance argument of a core class at core types is not core's, and
    rule ``statement-instance`` names the class and where the argument comes from. Before
    this rule (commit b76d3fd plus issue 24 part 1) ``inline_le``, ``let_le``, ``beta_le``,
    ``holds_five`` and ``big_le_small`` had no finding at all."""
    subjects = {f.subject for f in meaning.findings
                if f.declaration == f"Meaning.{theorem}" and f.rule == "statement-instance"}
    assert f"{subject} (in its statement)" in subjects, subjects


def test_a_definition_body_is_judged_and_its_users_reported(meaning: AuditReport) -> None:
    """``big_le_small`` only names ``bigLeSmall``, whose body holds the written-in term;
    ``hiddenRec`` and ``hiddenHyp`` hide the parameter behind a recursor (``Fam``), and the
    written-in constructor is still recognised."""
    assert ("Meaning.bigLeSmall", MEANING) in found(meaning, "statement-instance")
    subjects = {f.subject for f in meaning.findings_of("statement-instance")
                if f.declaration in ("Meaning.hiddenRec", "Meaning.hiddenHyp")}
    assert "LE from LE.mk (not an instance) (in its definition)" in subjects
    assert ("LE from LE.mk (not an instance, given where the audit cannot read the "
            "parameter) (in its definition)") in subjects
    assert any(f.declaration == "Meaning.big_le_small" and f.rule == "depends-on-finding"
               and f.subject.startswith("Meaning.bigLeSmall (") for f in meaning.findings)


def test_statement_instance_controls(meaning: AuditReport) -> None:
    """Core's instances, a hypothesis, the library's own order, a coercion Lean unfolds
    (``coe_true`` is stored as ``7 = 7``: it says what it means), and the two exemptions
    (a written-in ``Decidable`` and two written-in ``Nonempty Nat`` terms)."""
    flagged = {d for d, _ in found(meaning, "statement-instance")}
    for ok in ("core_le", "tag_a_le_b", "coe_true", "decide_is_true", "of_nonempty_written",
               "tag_five_eq_zero", "int_two_add_two",
               "decide_instances_agree", "prop_instances_agree"):
        assert f"Meaning.{ok}" not in flagged, ok
    assert meaning.by_name()["Meaning.coe_true"].statement == "7 = 7"


def test_exemptions_are_what_keeps_their_controls_clean(
        meaning: AuditReport, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule does see the exempt arguments: with the exemptions switched off, the two
    controls are findings. Each exemption's argument is a theorem of the fixture, proved
    with only core's allowed axioms and no finding (``decide_instances_agree``: any two
    ``Decidable p`` give the same ``decide``; ``of_nonempty_written``: two different
    ``Nonempty Nat`` terms whose ``Classical.ofNonempty`` are equal by ``rfl``)."""
    by_name = meaning.by_name()
    for thm in [*policy.SUBSINGLETON_CLASSES.values(), "Meaning.of_nonempty_written",
                "Meaning.prop_instances_agree"]:
        d = by_name[thm]
        assert d.kind == "theorem" and set(d.axioms) <= set(policy.ALLOWED_AXIOMS), thm
        assert not [f for f in meaning.findings if f.declaration == thm], thm
    assert by_name["Meaning.decide_instances_agree"].statement == (
        "∀ (p : Prop) (i j : Decidable p), Decidable.decide p = Decidable.decide p")
    monkeypatch.setattr(rules, "_exempt", lambda use: False)
    r = audit_modules([MEANING], [OLEAN], core_dir=CORE, root=MEANING, cache_dir=cache)
    flagged = {f.subject: f.declaration for f in r.findings_of("statement-instance")}
    assert flagged.get("Decidable from Decidable.isTrue (not an instance) (in its "
                       "statement)") == "Meaning.decide_is_true"
    assert flagged.get("Nonempty from Nonempty.intro (not an instance) (in its "
                       "statement)") == "Meaning.of_nonempty_written"


def test_certificate_prints_instances_that_are_not_cores(meaning: AuditReport) -> None:
    """Issue 24 item 4: wherever a statement's instance argument is not core's, the printed
    statement (what certificates and ``reviewed/statements.json`` hold) shows it."""
    by_name = meaning.by_name()
    expect = {
        "two_pow_64_le_five": "@LE.le Nat Meaning.argLE (2 ^ 64) 5",
        "three_mul_three": "@HMul.hMul Nat Nat Nat (@instHMul Nat Meaning.aliasMul) 3 3 = 0",
        # hygienic binders print names Lean reads back (issue 41: `x✝` is no identifier)
        "inline_le": "@LE.le Nat (LE.mk (fun (x x_1 : Nat) => True)) 9 1",
        "let_le": "let i : LE Nat := LE.mk (fun (x x_1 : Nat) => True); @LE.le Nat i 8 1",
        "five_eq_zero": "@OfNat.ofNat Nat 5 (Meaning.aliasOfNat 5) = "
                        "@OfNat.ofNat Nat 0 (Meaning.aliasOfNat 0)",
        "core_le": "∀ (x : Nat) [i : LE Nat], x ≤ x → x ≤ x + 1 ∧ x ≤ x",
        # a numeral at a type other than Nat shows the type (the library's own numerals
        # for its own type are its to define, but must not print as Nat's `5 = 0`)
        "tag_five_eq_zero": "(5 : Meaning.Tag) = (0 : Meaning.Tag)",
        "int_two_add_two": "(2 : Int) + (2 : Int) = (4 : Int)",
    }
    for thm, text in expect.items():
        assert by_name[f"Meaning.{thm}"].statement == text, thm


def test_a_projection_of_an_opaque_is_not_read_as_a_constructor() -> None:
    """Built by hand (no Lean source reaches it directly): ``(op 0 0 (fun x : Nat => True)).1
    ⟨…⟩`` with ``opaque op : Nat → Nat → (Nat → Prop) → (LE Nat → Prop) × Nat``. Read as a
    constructor (the first reading did: its type concludes in a structure with fewer
    arguments than it has parameters), the projection picked ``fun x : Nat => True`` as the
    field and the written-in order went unjudged; an opaque's fields are unknown, so the
    statement is refused as unreadable."""
    from pytools.lean.audit.instance_args import InstanceArgs
    from pytools.lean.olean import Expr, Level

    zero = Level("zero", ())
    one = Level("succ", (zero,))

    def c(name: str) -> Expr:
        return Expr("const", (name, ()))

    def app(f: Expr, *args: Expr) -> Expr:
        for a in args:
            f = Expr("app", (f, a))
        return f

    def arrow(a: Expr, b: Expr) -> Expr:
        return Expr("forallE", ("x", a, b, "default"))

    nat, prop = c("Nat"), Expr("sort", (zero,))
    le_nat = app(c("LE"), nat)
    pair = app(c("Prod"), arrow(le_nat, prop), nat)
    types = {
        "op": arrow(nat, arrow(nat, arrow(arrow(nat, prop), pair))),
        "LE.mk": arrow(arrow(nat, arrow(nat, prop)), le_nat),
        "Nat": Expr("sort", (one,)), "LE": arrow(Expr("sort", (one,)), Expr("sort", (one,))),
        "Prod": arrow(Expr("sort", (one,)), arrow(Expr("sort", (one,)), Expr("sort", (one,)))),
        "True": prop,
    }
    kinds = {"op": "opaque", "LE.mk": "constructor"}

    def class_head(ty: Expr, module: str) -> str | None:
        while ty.kind == "forallE":
            ty = ty.args[2]
        while ty.kind == "app":
            ty = ty.args[0]
        return "LE" if ty.kind == "const" and ty.args[0] == "LE" else None

    reader = InstanceArgs(
        resolve=lambda name, module: ("Lib" if name == "op" else "Init", name),
        type_of=lambda key: types[key[1]], value_of=lambda key: None,
        kind_of=lambda key: kinds.get(key[1], "inductive"),
        is_library=lambda key: key[0] == "Lib", library_type=lambda key: key[0] == "Lib",
        class_head=class_head, is_prop_class=lambda name: False,
        core_instances=frozenset())
    lit = Expr("lit", ("nat", 0))
    field = Expr("lam", ("x", nat, c("True"), "default"))
    order = app(c("LE.mk"), Expr("lam", ("a", nat, Expr("lam", ("b", nat, c("True"),
                                                                    "default")), "default")))
    term = app(Expr("proj", ("Prod", 0, app(c("op"), lit, lit, field))), order)
    uses = reader.uses(term, "t", "M", "statement", set())
    assert [u.class_name for u in uses] == ["?"], uses
