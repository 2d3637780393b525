"""Names as Lean has them (issue 41, item 1): the structured name, its printing, and the planted
defects of the name rules (``name-twin``, ``name-confusable``, ``name-chars``,
``invisible-char``).

The Lean fixture is ``tests/fixtures/lean/AuditFixture/Names.lean`` (compiled ``.olean`` parts
committed beside the others). Measured on the audit of ``main`` before this change (commit
ca39c7d), which keyed names by their dotted string: the twin axiom ``Names.A.«b.c»`` vanished
from the walk (its twin ``Names.A.b.c`` survived, no ``project-axiom`` finding), the two
statements ``restated``/``restated_twin`` printed and hashed alike, with one meaning closure,
and no rule looked at look-alike names or invisible characters.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from fixtures.audit_env import core_lib, index_cache
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.lean.audit import rules
from pytools.lean.audit.library_facts import LibraryFacts
from pytools.lean.audit.names import StatementAtoms, invisible, skeleton
from pytools.lean.audit.printer import binder_name
from pytools.lean.audit.records import AuditReport
from pytools.lean.audit.statements import statement_sha256
from pytools.lean.audit.walk import audit_modules
from pytools.lean.olean import Expr, Module, Name, name_bytes

OLEAN = Path(__file__).parent / "fixtures" / "olean"
MODULE = "AuditFixture.Names"
CORE = core_lib()
RLO = "\u202e"

# --------------------------------------------------------------------------- the name type


@pytest.mark.parametrize(("parts", "text"), [
    (("A", "b", "c"), "A.b.c"),
    (("A", "b.c"), "A.«b.c»"),
    (("x", 1), "x.1"),
    (("x", "1"), "x.«1»"),
    (("5",), "«5»"),
    (("fun",), "«fun»"),            # a keyword as the first component
    (("A", "fun"), "A.fun"),         # ...but not after a namespace, as Lean prints it
    (("",), "«»"),
    (("a b",), "«a b»"),
    (("Nаt", "add"), "«Nаt».add"),   # Cyrillic а: not a Lean identifier character
    (("ℕat", "zero_le"), "ℕat.zero_le"),  # letter-like: an identifier character
    (("h₁", "α'"), "h₁.α'"),
    (("_private", "M", 0, "f"), "_private.M.0.f"),
    (("a»b",), "«a\\»b»"),          # Lean cannot escape `»`: backslash, to stay injective
    (("a\\",), "«a\\\\»"),
])
def test_names_print_as_lean_prints_them_and_read_back(parts: tuple, text: str) -> None:
    n = Name(parts)
    assert str(n) == text and n.parts == parts
    assert Name.parse(text).parts == parts
    assert pickle.loads(pickle.dumps(n)).parts == parts


def test_twins_are_two_names() -> None:
    """Same dotted look, different components: different names, keys, hashes."""
    for a, b in ((("A", "b", "c"), ("A", "b.c")), (("x", 1), ("x", "1")),
                 (("a.b",), ("a", "b"))):
        na, nb = Name(a), Name(b)
        assert na.dotted == nb.dotted
        assert na != nb and len({na, nb}) == 2 and name_bytes(na) != name_bytes(nb)
        ea, eb = (Expr("const", (n, ())) for n in (na, nb))
        assert statement_sha256(ea) != statement_sha256(eb)
    assert Name(("Nat", "add")) == "Nat.add" and {"Nat.add": 1}[Name(("Nat", "add"))] == 1


_COMPONENTS = st.one_of(st.integers(min_value=0, max_value=10**30),
                        st.text(alphabet="ab1_.«»\\ 'ℕаα₁?!", max_size=4),
                        st.sampled_from(["fun", "by", "Type", "x", "_@", "_private"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_COMPONENTS, max_size=4), st.lists(_COMPONENTS, max_size=4))
def test_printing_is_injective_and_reads_back(a: list, b: list) -> None:
    """Any components: the text reads back to them, and two names share a text (and a hash
    encoding) only if their components are equal."""
    na, nb = Name(a), Name(b)
    assert Name.parse(str(na)).parts == tuple(a)
    assert (str(na) == str(nb)) == (tuple(a) == tuple(b))
    assert (name_bytes(na) == name_bytes(nb)) == (tuple(a) == tuple(b))


@pytest.mark.parametrize("bad", ["a..b", "«a", "05", "x.05", "a.«b»", "«fun».«x»x"])
def test_text_no_name_prints_as_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        Name.parse(bad)


def test_binder_names_print_escaped_and_hygienic_ones_by_their_base_name() -> None:
    # A hygienic name prints as its base name (made fresh where printed), not Lean's
    # ``inst✝``: the statement-text check needs text that Lean reads back.
    assert binder_name(Name(("5",))) == ("«5»", False)
    assert binder_name(Name(("inst", "_@", "M", 3, "_hyg", 7))) == ("inst", True)


# --------------------------------------------------------------------------- characters


def test_skeleton_and_invisible_characters() -> None:
    assert skeleton("Nаt.add") == skeleton("Nat.add") == skeleton("ℕat.add")  # Cyrillic, ℕ
    assert skeleton("Ｎat") == skeleton("Nat") and skeleton("οk") == skeleton("ok")
    assert skeleton("Nat.add") != skeleton("Nat.sub")
    for c in (RLO, "\u200b", "\u2066", "\ufeff", "\u00a0", "\u034f", "\ufe0f", "\u0085"):
        assert invisible(c), hex(ord(c))
    for c in "aZ0 _'→αℕ∀≤\n":
        assert not invisible(c), c


# --------------------------------------------------------------------------- rules on facts


def _facts(**kw) -> LibraryFacts:
    base = dict(modules=(), declared_in={}, reached={}, core_names=frozenset())
    return LibraryFacts(**{**base, **kw})


def _names(**declared: str) -> dict:
    return {Name.parse(text): (mod,) for text, mod in declared.items()}


def test_rule_name_twin_numeric_and_string_components() -> None:
    """Planted (facts): ``x.1`` (a number) beside ``x.«1»`` (a string), and a library
    ``«Nat.add»`` beside core's ``Nat.add``; a lone name is clean."""
    declared = {Name(("x", 1)): ("M",), Name(("x", "1")): ("M",),
                Name(("Nat.add",)): ("M",), Name(("y",)): ("M",)}
    found = {(f.declaration, f.subject) for f in rules.rule_name_twin(
        _facts(declared_in=declared, core_names=frozenset({"Nat.add"})))}
    assert found == {("x.1", "x.«1»"), ("x.«1»", "x.1"), ("«Nat.add»", "Nat.add (core)")}


def test_rule_invisible_char_in_names_binders_and_literals() -> None:
    """Planted (facts): a zero-width space in a name, a bidi isolate in a binder, a BOM in a
    literal; the ordinary text beside them is clean."""
    atoms = (StatementAtoms("t", "M", ("x", "y\u2066"), ("ok", "a\ufeffb")),)
    found = {(f.declaration, f.subject.split(" in ")[1]) for f in rules.rule_invisible_char(
        _facts(declared_in={Name(("f\u200b",)): ("M",), Name(("g",)): ("M",)},
               atoms=atoms))}
    assert found == {("«f\u200b»", "its name"), ("t", "a binder"), ("t", "a string literal")}


def test_rule_name_chars_binders_and_private_names() -> None:
    """Planted (facts): a binder named with a Cyrillic letter; clean: Greek, subscripts, a
    hygienic binder, a ``private`` name's module prefix."""
    atoms = (StatementAtoms("t", "M", ("α", "h₁", "«xа»", "inst.«_@».M._hyg.3"), ()),)
    declared = {Name(("_private", "M", 0, "f")): ("M",)}
    found = {(f.declaration, f.subject) for f in rules.rule_name_chars(
        _facts(declared_in=declared, atoms=atoms))}
    assert found == {("t", 'binder «xа»: U+0430 CYRILLIC SMALL LETTER A in the component "xа"')}


# --------------------------------------------------------------------------- the planted module

needs_core = pytest.mark.skipif(CORE is None, reason="core library .olean files not found")


@pytest.fixture(scope="module")
def report() -> AuditReport:
    if CORE is None:
        pytest.skip("core library .olean files not found")
    return audit_modules([MODULE], [OLEAN], core_dir=CORE, cache_dir=index_cache(),
                         meanings_for=["Names.restated", "Names.restated_twin"])


def _found(report: AuditReport, rule: str) -> set[str]:
    return {f.declaration for f in report.findings_of(rule)}


def test_reader_keeps_both_twins_of_one_module() -> None:
    m = Module(OLEAN / "AuditFixture" / "Names.olean")
    parts = {n.parts for n in m.const_names()}
    assert {("Names", "A", "b", "c"), ("Names", "A", "b.c"), ("Names", "Sound", "ok"),
            ("Names", "Sound.ok")} <= parts


@needs_core
def test_twin_axiom_of_false_is_seen(report: AuditReport) -> None:
    """An `axiom A.«b.c» : False` beside a benign `def A.b.c`: both are declarations, the
    axiom is a project axiom (and so is what uses it), and both are twins."""
    names = report.by_name()
    assert names["Names.A.b.c"].kind == "definition"
    assert names["Names.A.«b.c»"].kind == "axiom"
    assert names["Names.uses_twin_axiom"].axioms == ("Names.A.«b.c»",)
    assert {"Names.A.«b.c»", "Names.uses_twin_axiom"} <= _found(report, "project-axiom")
    assert {"Names.A.b.c", "Names.A.«b.c»", "Names.Sound.ok",
            "Names.«Sound.ok»"} == _found(report, "name-twin")


@needs_core
def test_statement_restated_over_a_twin_reads_and_hashes_apart(report: AuditReport) -> None:
    """`restated` (over `Sound.ok := True`) and `restated_twin` (over `«Sound.ok» := False`)
    differ in printed text, statement hash and meaning closure; the twin's user is named."""
    a, b = report.by_name()["Names.restated"], report.by_name()["Names.restated_twin"]
    assert a.statement == "Names.Sound.ok ∨ 1 = 1"
    assert b.statement == "Names.«Sound.ok» ∨ 1 = 1"
    assert a.statement_sha256 != b.statement_sha256
    closures = {n: (sha, used) for n, sha, used in report.meanings}
    assert closures["Names.restated"][1] == ("Names.Sound.ok@AuditFixture.Names",)
    assert closures["Names.restated_twin"][1] == ("Names.«Sound.ok»@AuditFixture.Names",)
    assert closures["Names.restated"][0] != closures["Names.restated_twin"][0]
    deps = {f.declaration: f.subject for f in report.findings_of("depends-on-finding")}
    assert deps["Names.restated_twin"].startswith("Names.«Sound.ok» (")


@needs_core
def test_look_alikes_of_core_and_library_names(report: AuditReport) -> None:
    subjects = {f.declaration: f.subject for f in report.findings_of("name-confusable")}
    assert subjects["«Nаt».add_comm"] == "looks like Nat.add_comm (core)"
    assert subjects["ℕat.zero_le"] == "looks like Nat.zero_le (core)"
    assert subjects["Names.Sound.οk"] == "looks like Names.Sound.ok"
    assert set(subjects) == {"«Nаt».add_comm", "ℕat.zero_le", "Names.Sound.οk",
                             "Names.Sound.ok", "Names.«Sound.ok»"}


@needs_core
def test_a_constant_named_5_prints_escaped_and_is_reported(report: AuditReport) -> None:
    assert report.by_name()["five_eq_zero"].statement == "«5» = 0"
    assert _found(report, "name-chars") == {"«5»", "Names.A.«b.c»", "Names.«Sound.ok»",
                                            "«Nаt».add_comm", "ℕat.zero_le"}


@needs_core
def test_bidi_character_in_a_string_literal(report: AuditReport) -> None:
    (f,) = report.findings_of("invisible-char")
    assert (f.declaration, f.module) == ("bidi_literal", MODULE)
    assert f.subject == "U+202E RIGHT-TO-LEFT OVERRIDE in a string literal"
