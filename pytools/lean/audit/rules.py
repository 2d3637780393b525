"""The audit's rules: one function each, over the facts read from the compiled library.

This module and :mod:`.policy` (the pinned data) are the trusted part of the checker: every
other module of the package only reads ``.olean`` files into :class:`LibraryFacts`. Each rule's
docstring says what it catches and why; its planted defect (the fixture declaration that
proves it fires) is named in ``Planted:``, and ``tests/test_audit_rules.py`` asserts exactly
that finding (declaration, module, rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from pytools.lean.olean import Name, dotted

from .auxiliary import classify_auxiliary
from .instance_args import InstanceUse
from .library_facts import AxiomFacts, LibraryFacts
from .names import (
    core_index,
    describe,
    hidden_chars,
    name_oddity,
    skeleton,
)
from .policy import (
    ALLOWED_AXIOMS,
    ALLOWED_IMPORT_ROOTS,
    BENIGN_EXTENSIONS,
    KERNEL_BUILTINS,
    KERNEL_OPTIONS,
    NATIVE_AXIOMS,
    SORRY_AXIOMS,
    SUBSINGLETON_CLASSES,
    TRUST_EXTENSIONS,
)
from .records import Finding

Rule = Callable[[LibraryFacts], Iterable[Finding]]


def _reaching(facts: LibraryFacts, wanted: Callable[[AxiomFacts], bool],
              rule: str) -> list[Finding]:
    """One finding per (declaration, axiom) with ``wanted(axiom)``."""
    return [Finding(name, mod, ax.name, rule)
            for (mod, name), axioms in facts.reached.items()
            for ax in sorted(axioms, key=lambda a: (a.name, a.module)) if wanted(ax)]


def _allowed(ax: AxiomFacts) -> bool:
    """An axiom is allowed only as core's own: the declaring module and the type hash pinned
    in :data:`ALLOWED_AXIOMS`, read from the verified core library, not from the library."""
    pin = ALLOWED_AXIOMS.get(ax.name)
    return (pin is not None and ax.in_core and not ax.in_project
            and ax.module == pin.module and ax.type_sha256 == pin.type_sha256)


# --------------------------------------------------------------------------- axioms


def rule_sorry(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a declaration that depends on ``sorryAx``: an unproved goal anywhere in its
    proof or the proofs it uses (a `sorry` inside a `have` counts). Why: the theorem is not
    proved. Planted: ``AuditFixture.hidden_sorry`` (Defects), ``use_sorry`` (PreludeUse)."""
    return _reaching(facts, lambda a: a.name in SORRY_AXIOMS, "sorry")


def rule_native_code(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a dependency on ``Lean.ofReduceBool``/``ofReduceNat``/``trustCompiler``: a
    fact decided by running compiled code (``native_decide``), which the kernel does not
    check. Planted: ``AuditFixture.by_native_decide`` (Defects)."""
    return _reaching(facts, lambda a: a.name in NATIVE_AXIOMS, "native-code")


def rule_project_axiom(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an ``axiom`` declared by the library itself, and every declaration using it,
    however far (issue 12's first attack declares ``axiom propext : False`` in a library
    module). Why: an axiom is an unproved assumption. Planted: ``AuditFixture.planted_axiom``
    and ``axiom_far`` (Defects), ``propext`` and ``two_pow_64_le_five`` (Impostor)."""
    return _reaching(facts, lambda a: (a.in_project and a.name not in SORRY_AXIOMS
                                       and a.name not in NATIVE_AXIOMS), "project-axiom")


def rule_axiom_identity(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an axiom *named* like an allowed one (``propext``, ``Classical.choice``,
    ``Quot.sound``) that is not core's: declared by another module, read from outside the
    verified core library, or with another type than the pinned one. Why: the allowed list
    is a list of identities, not of names. Planted: ``use_propext`` (PreludeUse reaches the
    ``propext`` that PreludeBase declares)."""
    return _reaching(facts, lambda a: (a.name in ALLOWED_AXIOMS and not _allowed(a)
                                       and not a.in_project), "axiom-identity")


def rule_foreign_axiom(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches any other axiom outside the allowed set, declared outside the library (a
    dependency's). Planted: ``use_vendor`` (PreludeUse reaches PreludeBase's ``vendorAx``)."""
    return _reaching(facts, lambda a: (a.name not in ALLOWED_AXIOMS
                                       and a.name not in SORRY_AXIOMS
                                       and a.name not in NATIVE_AXIOMS and not a.in_project),
                     "foreign-axiom")


# --------------------------------------------------------------------------- modules


def rule_prelude_module(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a library module that does not import ``Init`` (a ``prelude`` file: its header
    lists no ``Init``, measured: ``imports == []`` or only parts of ``Init``). Why: only a
    prelude module can declare names that ``Init`` owns, such as ``Nat.gcd`` or ``propext``,
    which is how both attacks of issue 12 work. Planted: every ``AuditFixture`` prelude
    module (Impostor, Unsafe, Meta)."""
    return [Finding("", m.name, "imports " + (", ".join(dict.fromkeys(i.module for i in m.imports))
                                              or "nothing"), "prelude-module")
            for m in facts.modules if "Init" not in {i.module for i in m.imports}]


def rule_outside_root(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an audited module that the library root does not import, directly or not.
    Why: the published library is what the root imports; a module outside it is not loaded
    with the rest (its names were never checked against the others' by Lean), yet a
    certificate could name its theorems. Planted: auditing Unsafe with root Impostor."""
    if facts.root is None:
        return []
    return [Finding("", m.name, facts.root, "outside-root")
            for m in facts.modules if m.name not in facts.root_closure]


def rule_forbidden_import(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an import of a module that is neither in ``Init``/``Std`` nor in the library.
    Why: the library is ``Init``/``Std`` only (CONTRIBUTING); ``Lean`` brings the elaborator's
    API, with which meta code adds declarations the kernel never saw, and a third-party module
    is unaudited. Planted: PreludeUse audited alone imports PreludeBase."""
    library = {m.name for m in facts.modules}
    return [Finding("", m.name, i.module, "forbidden-import")
            for m in facts.modules for i in m.imports
            if i.module not in library
            and Name.parse(i.module).parts[:1] not in {(r,) for r in ALLOWED_IMPORT_ROOTS}]


def rule_meta_import(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a ``meta import`` in a library module's header. Why: it is needed exactly when
    the module runs code at elaboration time (macros, elaborators; measured: a ``macro`` is
    refused without it), i.e. when declarations may be shaped by code the kernel never sees.
    Planted: Meta's ``public meta import Init.Notation``."""
    return [Finding("", m.name, i.module, "meta-import")
            for m in facts.modules for i in m.imports if i.meta]


# --------------------------------------------------------------------------- names


def rule_duplicate_name(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a name declared by two library modules. Why: Lean refuses to load both into one
    environment, so the library as published does not load; an audit reading one copy would
    certify the other unseen. Planted: ``dup_name`` in both Impostor and Unsafe."""
    return [Finding(name, mod, ", ".join(mods), "duplicate-name")
            for name, mods in facts.declared_in.items() if len(mods) > 1 for mod in mods]


def rule_core_name(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a library declaration whose name a module of the core library (``Init``,
    ``Std``, ``Lean``, ``Lake``) also declares. Why: a reader (and a certificate) takes
    ``Nat.add_comm`` or ``propext`` to mean core's; the copy may state anything. Planted:
    ``Nat.add_comm`` (a theorem renamed to shadow core), ``propext``, ``Nat.gcd`` (Impostor)."""
    if facts.core_names is None:
        return []
    return [Finding(name, mod, "core", "core-name")
            for name, mods in facts.declared_in.items() if name in facts.core_names
            for mod in mods]


def rule_kernel_builtin(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a library declaration named like a constant the kernel evaluates natively or
    checks by name (:data:`KERNEL_BUILTINS`: ``Nat.gcd``, ``Nat.ble``, ``Quot.lift``...).
    Why: the kernel computes ``Nat.gcd 0 1 = 1`` with GMP whatever the environment's
    ``Nat.gcd`` says, so a redefinition proves ``0 = 1`` with no axiom (issue 12's second
    attack). Planted: ``Nat.gcd`` (Impostor), ``Nat.ble`` and ``Quot.lift`` (Bare)."""
    return [Finding(name, mod, "kernel builtin", "kernel-builtin")
            for name, mods in facts.declared_in.items() if name in KERNEL_BUILTINS
            for mod in mods]


def rule_name_twin(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches two different names that print alike once ``«»`` is ignored: ``A.«b.c»`` (two
    components) and ``A.b.c`` (three), a numeric component and a string one of the same
    digits (``x.1``, ``x.«1»``), within the library or beside a core name. Why: they are two
    constants (the walk keys constants by their components and sees both), but a reader of the
    text, or a tool that joins components with dots, takes one for the other: a published
    theorem restated over a twin whose body is ``False`` reads the same. Planted:
    ``Names.A.b.c``/``Names.A.«b.c»`` (an axiom of ``False``), ``Names.Sound.ok``/
    ``Names.«Sound.ok»`` (a definition of ``False``) (Names)."""
    by_dotted: dict[str, set[str]] = {}
    for name in facts.declared_in:
        by_dotted.setdefault(dotted(name), set()).add(name)
    core_names = facts.core_names or frozenset()
    core_by_dotted = core_index(core_names).dotted if core_names else {}
    out = []
    for look, names in by_dotted.items():
        core = core_by_dotted.get(look) or (look if look in core_names else None)
        for name in names:
            others = sorted(names - {name}) + ([f"{core} (core)"] if core not in (None, name)
                                               else [])
            if others:
                out += [Finding(name, mod, ", ".join(others), "name-twin")
                        for mod in facts.declared_in[name]]
    return out


def rule_name_confusable(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a library name a reader can mistake for a name of the core library or another
    of the library's: same confusable skeleton (:func:`.names.skeleton`: Unicode's
    confusables after NFKC, so other scripts, letter-like symbols, fullwidth and
    mathematical forms, ``1``/``l``/``I`` and ``0``/``O``), different text. Why: a reader (and
    a certificate) takes ``ℕat.add_comm`` or ``Nаt.add_comm`` (Cyrillic ``а``) to mean core's
    ``Nat.add_comm``; the copy may state anything. Planted: ``«Nаt».add_comm``,
    ``ℕat.zero_le``, ``Names.Sound.οk`` (Greek omicron, beside ``Names.Sound.ok``) (Names)."""
    lib: dict[str, set[str]] = {}
    for name in facts.declared_in:
        lib.setdefault(skeleton(dotted(name)), set()).add(dotted(name))
    core = core_index(facts.core_names).skeletons if facts.core_names else {}
    out = []
    for name, mods in facts.declared_in.items():
        look = dotted(name)
        sk = skeleton(look)
        others = sorted(lib[sk] - {look})
        if core.get(sk, look) != look:
            others.append(f"{core[sk]} (core)")
        if others:
            out += [Finding(name, mod, "looks like " + ", ".join(others), "name-confusable")
                    for mod in mods]
    return out


def rule_name_chars(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a library name, or a binder name in a library declaration's type, with a
    string component that is not an identifier (it prints in ``«»``: ``«5»``, ``«b.c»``) or a
    character outside :data:`.policy.NAME_CHARS` (ASCII letters, digits, ``_'!?``, Greek,
    subscripts). Why: such a name is written to look like something else (``«5» = 0`` reads
    ``5 = 0`` in a printer that does not escape) or needs a script a reader does not expect;
    the library needs neither. Compiler-made parts are exempt: numeric components, a
    ``_private`` prefix's module, and macro scopes (``x._@.M._hyg.3``). Planted:
    ``«5»``, ``Names.A.«b.c»``, ``«Nаt».add_comm`` (Names)."""
    out = []
    for name, mods in facts.declared_in.items():
        why = name_oddity(name)
        if why:
            out += [Finding(name, mod, why, "name-chars") for mod in mods]
    for atoms in facts.atoms:
        for b in atoms.binders:
            why = name_oddity(b)
            if why:
                out.append(Finding(atoms.declaration, atoms.module, f"binder {b}: {why}",
                                   "name-chars"))
    return out


def rule_invisible_char(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an invisible, bidirectional-control or other format character
    (:func:`.names.invisible`) in a library declaration's name, in a binder name or in a
    string literal of its type. Why: the printed statement then shows something else than
    what is stated (U+202E reverses the text that follows, U+200B hides a difference between
    two literals). Planted: ``bidi_literal`` (Names)."""
    out = []
    for name, mods in facts.declared_in.items():
        hidden = hidden_chars(name)
        if hidden:
            out += [Finding(name, mod, f"{describe(hidden[0])} in its name", "invisible-char")
                    for mod in mods]
    for atoms in facts.atoms:
        for where, texts in (("binder", atoms.binders), ("string literal", atoms.literals)):
            for t in texts:
                hidden = hidden_chars(t)
                if hidden:
                    out.append(Finding(atoms.declaration, atoms.module,
                                       f"{describe(hidden[0])} in a {where}", "invisible-char"))
    return out


# --------------------------------------------------------------------------- trust-relevant code


def rule_unsafe(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an ``unsafe`` declaration (its safety flag in the ``.olean``). Why: unsafe code
    escapes the kernel (``unsafeCast``, ``ptrEq``); it can reach a proof only through
    ``implemented_by``/compiled evaluation, but has no place in a proof library. Planted:
    ``uns`` and ``badImpl`` (Unsafe)."""
    return [Finding(d, m.name, "unsafe declaration", "unsafe")
            for m in facts.modules for d in m.unsafe]


def rule_partial(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a ``partial def``: measured as an *opaque* ``f`` plus its implementation
    ``f._unsafe_rec`` of safety ``partial``. (A terminating recursive definition also gets a
    ``partial`` ``_unsafe_rec`` for the compiler, but ``f`` itself is then a definition whose
    kernel-checked body is the recursion: not reported.) Why: a partial function's equation
    is never checked (the kernel sees an opaque constant), and its compiled code may loop.
    Planted: ``loop`` (Unsafe), used by the theorem ``loop_eq``."""
    out = []
    for m in facts.modules:
        opaque = set(m.opaques)
        declared = set(m.declarations)
        for impl in m.partial:
            user = impl.removesuffix("._unsafe_rec")
            if user == impl or user in opaque or user not in declared:
                out.append(Finding(user, m.name, impl, "partial"))
    return out


def _entries(facts: LibraryFacts, rule: str) -> list[Finding]:
    return [Finding(e.declaration, m.name, e.detail or e.extension, rule)
            for m in facts.modules for e in m.entries
            if TRUST_EXTENSIONS.get(e.extension) == rule]


def rule_implemented_by(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches ``@[implemented_by impl]``: compiled code swaps the declaration for ``impl``.
    Why: ``native_decide`` and ``#eval`` then run ``impl``, not what the kernel checked (an
    ``opaque`` whose implementation returns anything). Planted: ``safeLooking`` and
    ``secretNat`` (Unsafe)."""
    return _entries(facts, "implemented-by")


def rule_extern(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches ``@[extern "sym"]``: the declaration's code is foreign (C) code. Why: as for
    ``implemented_by``, what runs is not what the kernel checked. Planted: ``myAdd``
    (Unsafe)."""
    return _entries(facts, "extern")


def rule_export(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches ``@[export sym]``: the declaration is exported to foreign code under a C
    symbol, which foreign code may also define. Planted: ``exported`` (Unsafe)."""
    return _entries(facts, "export")


def rule_csimp(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches ``@[csimp] theorem f_eq : @f = @g``: the compiler replaces ``f`` by ``g``
    everywhere. Why: combined with an ``implemented_by``/``unsafe`` ``g`` it changes what
    compiled code (``native_decide``) computes. Planted: ``f1_eq_f2`` (Unsafe)."""
    return _entries(facts, "csimp")


def rule_init(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches ``initialize``, ``@[init]`` and ``builtin_initialize``: code run when the module
    is loaded (environment extensions are registered this way). Why: it runs inside the
    elaborator of every importer, with full IO. Planted: ``hook`` and ``initialized``
    (Meta)."""
    return _entries(facts, "init")


#: How a metaprogram finding names the mechanism, by extension ({detail}: the entry's key).
_META_LABELS = {
    "_private.Lean.Compiler.MetaAttr.0.Lean.metaExt": "meta definition",
    "_private.Lean.Compiler.MetaAttr.0.Lean.declMetaExt": "meta definition",
    "Lean.Elab.macroAttribute": "macro for {detail}",
    "Lean.Elab.Term.termElabAttribute": "term elaborator for {detail}",
    "Lean.Elab.Command.commandElabAttribute": "command elaborator for {detail}",
    "Lean.Elab.Tactic.tacticElabAttribute": "tactic for {detail}",
    "Lean.Parser.parserExtension": "syntax ({detail} parser)",
    "Lean.PrettyPrinter.Delaborator.appUnexpanderAttribute": "unexpander for {detail}",
    "Lean.PrettyPrinter.Delaborator.delabAttribute": "delaborator for {detail}",
}


def rule_metaprogram(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches meta code in the library: ``meta`` definitions, ``macro``/``macro_rules``,
    ``syntax``/``notation`` (parser entries), elaborators (``elab``, ``term_elab``,
    ``command_elab``, ``tactic``), unexpanders/delaborators (which change how statements
    print), new attributes and unification hints; one finding per declaration, naming every
    mechanism (a compiler's ``._closed_N`` constant counts as its definition). Why: meta code
    runs at elaboration time and decides what a source line means (a macro can rewrite the
    statement a reader sees), and with ``Lean``'s API it can add declarations without the
    kernel. Planted: ``metaFn``, the ``myfalse`` macro and its rewriting ``macro_rules``,
    ``myElab`` (a ``term_elab``), the ``⊥⊥`` notation and its unexpander (Meta)."""
    found: dict[tuple[str, str], set[str]] = {}
    for m in facts.modules:
        for e in m.entries:
            if TRUST_EXTENSIONS.get(e.extension) != "metaprogram" or not e.declaration:
                continue
            decl = Name(p for p in Name.parse(e.declaration).parts
                        if not str(p).startswith("_closed_"))
            label = _META_LABELS.get(e.extension, e.extension + " {detail}")
            found.setdefault((decl, m.name), set()).add(label.format(detail=e.detail).strip())
    return [Finding(d, mod, ", ".join(sorted(labels)), "metaprogram")
            for (d, mod), labels in found.items()]


def rule_core_instance(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches an instance of a core class whose *conclusion* (its type with every binder
    peeled off, library definitions unfolded) mentions no type or class of the library:
    ``instance : LE Nat``, ``[Inhabited Tag] → LE Nat``, ``LE N`` with ``abbrev N := Nat``,
    ``MyMul Nat`` with ``abbrev MyMul := Mul``, the parent projection of a library class
    extending ``Add``, a structure field of type ``LE Nat``, a ``local instance : Add
    Nat``, ``attribute [instance]`` on a core declaration. Why: it changes what a
    statement's notation means while the statement prints the same (``1 + 1 = 3`` holds
    under a local ``Add Nat``). Instances for the library's own types (``deriving
    DecidableEq``) are fine. Limits: an instance *term* written into a statement
    (``@LE.le Nat ⟨fun _ _ => True⟩``, or bound by ``let``) is not an instance and is not
    judged here (issue 24 item 2, open). Planted: ``myLE``, ``localAdd``, ``decEqNat'``,
    ``Nat.decEq`` registered again (Meta); every route of ``Meaning``
    (``tests/test_audit_rules.py::ROUTES``).

    The authority is Lean's own index: an instance whose discrimination-tree key (the path
    Lean computed after its reducible unfolding, beta and zeta, read from the
    ``instanceExtension`` entry) names only core constants, a core class among them, is a
    finding however its type was written: behind ``id``, an ``abbrev`` of the class, a
    ``fun`` or a ``let``, through ``inferInstanceAs`` at a reducible alias. The conclusion
    judged above is defence in depth (it also sees unregistered definitions of class type).
    Planted: ``behindId``, ``behindAbbrev``, ``behindFun``, ``behindLet``,
    ``viaInferInstanceAs`` (Text, ``tests/test_audit_text.py``)."""
    return [Finding(i.declaration, i.module, i.class_name, "core-instance")
            for i in facts.instances if not i.mentions_library or i.keyed_core]


def rule_unvetted_extension(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches entries in an environment extension that is neither trust-relevant (a rule
    above) nor listed as benign in :data:`BENIGN_EXTENSIONS`. Why: new Lean versions add
    attributes; an unknown one must be reviewed before it is trusted (closed world).
    Planted: a module with a renamed extension (``test_unvetted_extension_is_reported``)."""
    known = BENIGN_EXTENSIONS | set(TRUST_EXTENSIONS)
    return [Finding("", m.name, ext, "unvetted-extension")
            for m in facts.modules for ext in m.extensions if ext not in known]


# --------------------------------------------------------------------------- source text

#: An option name not inside another name: preceded by no name character, or by the command
#: line's ``-D`` (``moreLeanArgs := #["-Ddebug.skipKernelTC=true"]``) or Lean's ``weak.``
#: prefix (``-Dweak.debug.skipKernelTC=true``, set only where the option exists).
_OPTION_RE = {name: re.compile(r"(?:(?<=-D)|(?<=weak\.)|(?<![\w.]))"
                               + r"\s*\.\s*".join(map(re.escape, name.split(".")))
                               + r"(?![\w'])") for name in KERNEL_OPTIONS}


def rule_kernel_option(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches, in the library's sources and build files (``lakefile.lean``), an option that
    switches kernel checking off or replaces proofs (:data:`KERNEL_OPTIONS`:
    ``debug.skipKernelTC``...), with ``«»`` quoting removed, comments included (a string
    holding ``/-`` would hide the rest of a file from a comment stripper; a mention in a
    comment is a false alarm worth the safety). Why: such an option leaves no trace in the
    ``.olean`` (measured), so this is the one rule that reads source text. Limits: an option
    name built by meta code is not seen here; the ``metaprogram`` and ``meta-import`` rules
    reject such code. Planted:
    ``tests/fixtures/lean/AuditFixture/Meta.lean`` (``set_option debug.skipKernelTC``)."""
    out = []
    for label, text in facts.sources:
        clean = text.replace("«", "").replace("»", "")
        for name, pattern in _OPTION_RE.items():
            for match in pattern.finditer(clean):
                line = clean.count("\n", 0, match.start()) + 1
                out.append(Finding("", label, f"{name} ({KERNEL_OPTIONS[name]}) at line {line}",
                                   "kernel-option"))
    return out


def rule_statement_instance(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a statement (or a definition a statement unfolds to) whose instance argument
    of a core class at core types is not core's: a library instance, however it was declared
    or reached; an instance *term* written in (``@LE.le Nat ⟨fun _ _ => True⟩ 9 1``, bound by
    ``let``, passed to a ``fun``, taken from a library structure, ``LE.mk``); a core
    instance with a library constant inside. Why: ``9 ≤ 1`` then holds while it prints as
    core's ``≤`` (the printer shows such arguments: ``@LE.le Nat …``). This closes the class
    that ``core-instance`` closes door by door: what is judged is the term the statement
    holds, not how an instance was declared. Hypotheses are fine (``∀ [i : LE Nat], …``
    says "for every order"). An argument that goes in through a function (a ``fun`` or
    hypothesis applied to it, ``@id (LE Nat → Prop) f i``) is judged at the parameter the
    function's type shows once beta, ``let``, projections of constructors and definitions
    are reduced; in a statement, a parameter that shows only by reducing a recursor is
    refused as unreadable (class ``?``); in a definition's value (compiled recursion and
    ``noConfusion`` are written so) only a core class's constructor is recognised there:
    an instance passed there by a variable or a projection is this rule's limit.
    Exempt, with the argument in :data:`SUBSINGLETON_CLASSES`:
    ``Decidable`` (any two instances agree) and classes valued in ``Prop`` (proof
    irrelevance). Not judged: instances of classes at the library's own types (its own
    definitions, which a reviewer reads), and a library *definition* with a misleading name
    (``reviewed/statements.json`` pins what each published statement unfolds to). Planted:
    every theorem of ``tests/test_audit_rules.py::STATEMENT_ROUTES`` (Meaning); controls
    ``core_le``, ``decide_is_true``, ``of_nonempty_written``."""
    return [Finding(u.declaration, u.module, f"{u.class_name} from {u.offender} "
                    f"(in its {u.where})", "statement-instance")
            for u in facts.instance_uses if not _exempt(u)]


def rule_statement_text(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a user-facing theorem whose printed statement (the text its certificate and
    ``reviewed/statements.json`` show) Lean does not elaborate back to the theorem's type, as
    a term: it fails to parse or elaborate, or it elaborates to another statement. Lean is the
    authority on what a text means (:mod:`.text`): a constant named ``«5»`` printed ``5``, a
    binder named like a keyword or shadowing a global, an implicit argument or an instance
    the text hides. Planted: ``numeral_name``, ``keyword_binder``, ``binder_shadows_global``,
    ``backwards_empty``, ``weird_five_le_two`` (Text, printed as a printer that is not Lean's
    prints them, ``tests/test_audit_text.py``)."""
    return [Finding(name, mod, why, "statement-text")
            for (mod, name), why in (facts.statement_text or {}).items()]


def _exempt(use: InstanceUse) -> bool:
    """A class no instance of which can change a statement: a subsingleton listed with its
    argument in :data:`SUBSINGLETON_CLASSES`, or a class valued in ``Prop``."""
    return use.class_name in SUBSINGLETON_CLASSES or use.prop_class


#: Rules whose findings are about one declaration's own content: what depends on such a
#: declaration is reported too (``depends-on-finding``).
DECLARATION_RULES: tuple[Rule, ...] = (
    rule_duplicate_name, rule_core_name, rule_kernel_builtin, rule_name_twin,
    rule_name_confusable, rule_name_chars, rule_unsafe, rule_partial,
    rule_implemented_by, rule_extern, rule_export, rule_csimp, rule_init, rule_metaprogram,
    rule_core_instance, rule_statement_instance, rule_statement_text,
)


def rule_depends_on_finding(facts: LibraryFacts) -> Iterable[Finding]:
    """Catches a declaration that depends, through its statement, definition or proof, on a
    library declaration another rule reports (a redefined ``Nat.gcd``, a core instance, a
    ``partial`` function...). Why: the finding is about what *this* declaration proves, so a
    published theorem resting on one is named itself (axioms are already reported this way).
    Planted: ``zero_eq_one`` (Impostor, through ``Nat.gcd``), ``five_le_two`` (Meta,
    through ``myLE``), ``loop_eq`` (Unsafe, through ``loop``)."""
    flagged: dict[str, set[str]] = {}
    for rule in DECLARATION_RULES:
        for f in rule(facts):
            if f.declaration:
                flagged.setdefault(f.declaration, set()).add(f.rule)
    out = []
    for (mod, decl), used in facts.uses.items():
        if classify_auxiliary(decl):
            continue  # compiler-generated companions (`rec`, `match_1`...) add only noise
        for dep in sorted(used & flagged.keys()):
            if dep != decl:
                out.append(Finding(decl, mod, f"{dep} ({', '.join(sorted(flagged[dep]))})",
                                   "depends-on-finding"))
    return out


#: Every rule, in the order findings are reported.
RULES: tuple[Rule, ...] = (
    rule_sorry, rule_native_code, rule_project_axiom, rule_axiom_identity, rule_foreign_axiom,
    rule_prelude_module, rule_outside_root, rule_forbidden_import, rule_meta_import,
    rule_duplicate_name, rule_core_name, rule_kernel_builtin, rule_name_twin,
    rule_name_confusable, rule_name_chars, rule_invisible_char,
    rule_unsafe, rule_partial, rule_implemented_by, rule_extern, rule_export, rule_csimp,
    rule_init, rule_metaprogram, rule_core_instance, rule_statement_instance,
    rule_statement_text, rule_unvetted_extension,
    rule_kernel_option, rule_depends_on_finding,
)


def rule_name(rule: Rule) -> str:
    return rule.__name__.removeprefix("rule_").replace("_", "-")


def apply_rules(facts: LibraryFacts, rules: Iterable[Rule] = RULES) -> list[Finding]:
    """Every finding of every rule, deduplicated and sorted (module, declaration, rule)."""
    found = {f for rule in rules for f in rule(facts)}
    return sorted(found, key=lambda f: (f.module, f.declaration, f.rule, f.subject))
