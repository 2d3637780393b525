"""The audit's pinned trust policy: the data every rule checks against, in one place.

Nothing here is computed: each value is a measured or cited fact, pinned so that a change is a
reviewed diff of this file. :mod:`.rules` holds the checks that use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytools.lean.axioms import ALLOWED_AXIOM_NAMES


@dataclass(frozen=True)
class AxiomPin:
    """Identity of an allowed axiom: the core module that declares it and the
    :func:`pytools.lean.audit.statements.statement_sha256` of its type."""

    module: str
    type_sha256: str


#: The only axioms a declaration may depend on, recognised by identity, never by name: the
#: declaring module (which must be read from the toolchain's verified core library) and the
#: hash of the axiom's type. Measured on the core library of Lean 4.28.0-pre (registry build,
#: commit 38f3c0c4), statement hash v2 (names by components);
#: `tests/test_audit.py::test_allowed_axiom_pins_match_core` re-measures them whenever the core
#: library is at hand.
ALLOWED_AXIOMS: dict[str, AxiomPin] = {
    "propext": AxiomPin(
        "Init.Core", "ec43789f2de159e40207cada0b073374781d6306636bd0ba7224c3e22a71bb67"),
    "Classical.choice": AxiomPin(
        "Init.Prelude", "5a4a560c0f23b204bfd146ccaf84c147b9809c292964cc027e61f4cbe62337a1"),
    "Quot.sound": AxiomPin(
        "Init.Core", "00c1d1c2249b18fa53984b0d4b6b73f47f4de716e141629661d84fa073f136b2"),
}
if sorted(ALLOWED_AXIOMS) != sorted(ALLOWED_AXIOM_NAMES):  # pragma: no cover - a wiring mistake
    raise ImportError("pytools.lean.audit.policy: the pinned axioms differ from "
                      "pytools.lean.axioms.ALLOWED_AXIOM_NAMES, the names verify checks")

#: Characters allowed in the library's names (and its statements' binder names), as
#: inclusive code point ranges: ASCII letters, digits, ``_``, ``'``, ``!``, ``?`` (Lean's ASCII
#: identifier characters); the Greek letters Lean takes as identifier letters (U+0391-03A9,
#: U+03B1-03C9: ``α``, ``β``, ``ε``... as Lean and Mathlib name variables); Lean's subscripts
#: (``h₁``, ``xᵢ``: U+2080-209C, U+1D62-1D6A). Not allowed: every other script (Cyrillic,
#: Armenian... are look-alikes of Latin), Coptic and polytonic Greek, the letter-like symbols
#: (``ℕ`` reads ``N``) and the mathematical alphanumerics (``𝐚`` reads ``a``), which Lean
#: accepts in identifiers but the library does not use (measured on the landed library,
#: 2026-12-06, 2732 declarations: declaration names ASCII only; binder names ASCII and
#: ``α β γ κ σ τ φ``, ``₁``-``₄``).
NAME_CHARS: tuple[tuple[int, int], ...] = (
    (0x21, 0x21), (0x27, 0x27), (0x30, 0x39), (0x3F, 0x3F), (0x41, 0x5A), (0x5F, 0x5F),
    (0x61, 0x7A), (0x391, 0x3A9), (0x3B1, 0x3C9), (0x2080, 0x209C), (0x1D62, 0x1D6A),
)

#: ``sorry`` elaborates to this axiom.
SORRY_AXIOMS = frozenset({"sorryAx"})
#: Axioms that trust compiled code (``native_decide``, ``Lean.ofReduceBool``).
NATIVE_AXIOMS = frozenset({"Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})

#: Names the Lean kernel computes with natively, or checks by name, whatever their declaration
#: says. A project declaration of one of these names changes what the kernel accepts (the
#: kernel evaluates `Nat.gcd 0 1` with GMP even when the environment's `Nat.gcd` is a
#: constant function: issue 12's second attack). Sources read (the v4.28.0 tag itself could
#: not be fetched here; the lean4 repository snapshot is over the size limit):
#: * `src/kernel/type_checker.cpp`, `initialize_type_checker` (`new_persistent_expr_const`):
#:   `Nat.zero`, `Nat.succ`, `Nat.add`, `sub`, `mul`, `pow`, `gcd`, `div`, `mod`, `beq`, `ble`,
#:   `land`, `lor`, `xor`, `shiftLeft`, `shiftRight` (`reduce_nat`), `Bool.true` (results of
#:   `beq`/`ble`), `String.mk`, `Lean.reduceBool`, `Lean.reduceNat` (`native_decide`),
#:   `eagerReduce`;
#: * `src/kernel/inductive.cpp`, `initialize_inductive`: `Nat.zero`, `Nat.succ`,
#:   `String.ofList`, `Char`, `List.cons`, `List.nil`, `Char.ofNat` (literal expansion);
#: * `src/kernel/quot.cpp`: `Quot`, `Quot.mk`, `Quot.lift`, `Quot.ind`, and the shape of `Eq`
#:   / `Eq.refl` it checks before adding them;
#: * the literal types `Nat` and `String`, and `Bool`/`Bool.false`;
#: * Lean FRO's comparator, `primitiveTargets` ("git grep new_persistent_expr_const
#:   src/kernel/"), which adds `optParam`, `autoParam`, `outParam`, `semiOutParam`, `List`.
#: `Nat.log2` is reserved as well: issue 12 lists it among the accelerated operations and a
#: conservative list costs nothing (no project declaration should use any of these names).
KERNEL_BUILTINS = frozenset({
    "Nat", "Nat.zero", "Nat.succ", "Nat.add", "Nat.sub", "Nat.mul", "Nat.div", "Nat.mod",
    "Nat.gcd", "Nat.beq", "Nat.ble", "Nat.land", "Nat.lor", "Nat.xor", "Nat.shiftLeft",
    "Nat.shiftRight", "Nat.pow", "Nat.log2",
    "Bool", "Bool.true", "Bool.false",
    "String", "String.mk", "String.ofList", "Char", "Char.ofNat", "List", "List.nil",
    "List.cons",
    "Quot", "Quot.mk", "Quot.lift", "Quot.ind", "Eq", "Eq.refl",
    "Lean.reduceBool", "Lean.reduceNat", "eagerReduce",
    "optParam", "autoParam", "outParam", "semiOutParam",
})

#: Module name roots a library module may import besides its own library (CONTRIBUTING: `Init`
#: and `Std` only). `Lean` would bring the elaborator's API (`addDecl`, `run_cmd`, `elab`):
#: the way a declaration reaches the environment without the kernel.
ALLOWED_IMPORT_ROOTS = ("Init", "Std")

#: Environment extensions whose entries in a library module are trust-relevant code, by the
#: rule that reports them. Measured by compiling `tests/fixtures/lean/AuditFixture/*.lean`
#: (see `tests/fixtures/olean/README.md`): each name is the extension the attribute or command
#: writes its entries to in the `.olean`.
TRUST_EXTENSIONS: dict[str, str] = {
    "Lean.Compiler.implementedByAttr": "implemented-by",
    "Lean.externAttr": "extern",
    "Lean.exportAttr": "export",
    "Lean.Compiler.CSimp.ext": "csimp",
    "Lean.regularInitAttr": "init",
    "Lean.builtinInitAttr": "init",
    "_private.Lean.Compiler.MetaAttr.0.Lean.metaExt": "metaprogram",
    "_private.Lean.Compiler.MetaAttr.0.Lean.declMetaExt": "metaprogram",
    "Lean.Elab.macroAttribute": "metaprogram",
    "Lean.Elab.Term.termElabAttribute": "metaprogram",
    "Lean.Elab.Command.commandElabAttribute": "metaprogram",
    "Lean.Elab.Tactic.tacticElabAttribute": "metaprogram",
    "Lean.Elab.incrementalAttr": "metaprogram",
    "Lean.Parser.parserExtension": "metaprogram",
    "Lean.PrettyPrinter.Delaborator.appUnexpanderAttribute": "metaprogram",
    "Lean.PrettyPrinter.Delaborator.delabAttribute": "metaprogram",
    "Lean.PrettyPrinter.mkCombinatorFormatterAttribute": "metaprogram",
    "Lean.PrettyPrinter.mkCombinatorParenthesizerAttribute": "metaprogram",
    "Lean.attributeExtension": "metaprogram",
    "Lean.Meta.unificationHintExtension": "metaprogram",
}

#: Extensions whose entries carry no trust: proof automation sets, compiler hints, docs,
#: source positions, bookkeeping. Instances are checked by the `core-instance` rule. Any
#: extension in neither list is reported (`unvetted-extension`) until someone reviews it and
#: adds it to one of the two lists: a new Lean feature cannot slip in unseen. Measured: every
#: extension with entries in the library's modules, in `Init`/`Std`/`Lean` (core) and in the
#: fixtures.
BENIGN_EXTENSIONS = frozenset({
    # declarations' bookkeeping
    "_private.Lean.AddDecl.0.Lean.privateConstKindsExt", "Lean.auxRecExt",
    "_private.Lean.AuxRecursor.0.Lean.sparseCasesOnExt", "Lean.noConfusionExt",
    "Lean.protectedExt", "Lean.namespacesExt", "Lean.aliasExtension", "recExt",
    "Lean.projectionFnInfoExt", "_private.Lean.Structure.0.Lean.structureExt",
    "Lean.classExtension", "Lean.Meta.Match.Extension.extension",
    "_private.Lean.Meta.Constructions.SparseCasesOn.0.Lean.Meta.sparseCasesOnInfoExt",
    "Lean.Elab.Structural.eqnInfoExt", "Lean.Elab.WF.eqnInfoExt",
    "Lean.Elab.PartialFixpoint.eqnInfoExt", "Lean.Meta.funIndInfoExt", "Lean.noncomputableExt",
    "_private.Lean.Compiler.ModPkgExt.0.Lean.modPkgExt", "Lean.extraModUses",
    "Lean.indirectModUseExt", "Lean.Elab.ComputedFields.computedFieldAttr",
    # instances (checked by the core-instance rule)
    "Lean.Meta.instanceExtension", "Lean.Meta.globalInstanceExtension",
    "Lean.Meta.defaultInstanceExtension",
    # source positions and documentation
    "Lean.declRangeExt", "Lean.docStringExt",
    "_private.Lean.DocString.Extension.0.Lean.moduleDocExt", "Lean.errorExplanationExt",
    # compiled code of computable definitions and compiler hints (the kernel never runs them;
    # the rules above catch the attributes that swap implementations)
    "Lean.IR.declMapExt", "Lean.Compiler.LCNF.baseExt", "Lean.Compiler.LCNF.monoExt",
    "Lean.Compiler.LCNF.UnreachableBranches.functionSummariesExt",
    "Lean.Compiler.LCNF.specExtension", "Lean.Compiler.LCNF.Specialize.specCacheExt",
    "Lean.Compiler.inlineAttrs", "Lean.Compiler.specializeAttr",
    "Lean.Compiler.nospecializeAttr", "Lean.neverExtractAttr", "Lean.IR.UnboxResult.unboxAttr",
    "Lean.IR.ToIR.taggedReturnAttr", "specMap",
    # elaboration aids: simp/grind/ext sets, reducibility, eliminators, casts, linters
    "reducibilityCore", "Lean.defeqAttr", "Lean.Meta.simpExtension", "Lean.Meta.Grind.grindExt",
    "Lean.Meta.Grind.normExt", "Lean.Meta.congrKindsExt", "Lean.Meta.congrExtension",
    "Lean.Meta.completionBlackListExt", "Lean.Linter.deprecatedAttr",
    "Lean.Elab.Term.elabAsElim", "Lean.Meta.customEliminatorExt", "Lean.Meta.Ext.extExtension",
    "Lean.Meta.Rfl.reflExt", "Lean.Meta.Symm.symmExt", "Lean.matchPatternAttr",
    "Lean.Meta.coeExt", "Lean.Meta.coeDeclAttr", "Lean.Meta.NormCast.normCastExt.up",
    "Lean.Meta.NormCast.normCastExt.down", "Lean.Meta.NormCast.normCastExt.squash",
    "Lean.Meta.NormCast.pushCastExt", "Lean.Meta.Monotonicity.monotoneExt",
    "Lean.Elab.WF.wfPreprocessSimpExtension", "Lean.ppNoDotAttr",
    "Lean.ppUsingAnonymousConstructorAttr", "Lean.identifierSuggestForAttr.existingToIncorrect",
    "Lean.identifierSuggestForAttr.incorrectToExisting",
    "Lean.LibrarySuggestions.librarySuggestionsAttr",
    "Lean.LibrarySuggestions.librarySuggestionsExt",
    # premise-selection statistics written for every module
    "symbolFrequency", "sineQueNon",
})

#: Core classes whose instance arguments rule `statement-instance` does not judge, each with
#: why no instance can change what a statement means and the fixture theorem that shows it
#: (`tests/fixtures/lean/AuditFixture/Meaning.lean`). `Decidable p` is a subsingleton: any two
#: instances give the same `decide` (so the same `ite`, `dite`), and `DecidableEq`,
#: `DecidablePred`, `DecidableRel` unfold to it. Classes valued in `Prop` (`Nonempty`,
#: `LawfulBEq`...) need no entry: any two proofs of a proposition are equal by definition
#: (proof irrelevance, `Meaning.prop_instances_agree`, and `Meaning.of_nonempty_written`: two
#: written-in `Nonempty Nat` terms give the same `Classical.ofNonempty`).
SUBSINGLETON_CLASSES: dict[str, str] = {"Decidable": "Meaning.decide_instances_agree"}

#: Options that switch kernel checking off or replace proofs (`set_option NAME true`, or
#: `-DNAME=true` through the lakefile). They leave no trace in the `.olean` (measured: a
#: theorem under `set_option debug.skipKernelTC true in` compiles to the same kind of entry as
#: any other), so this is the one rule that reads source text. The `sorry`-replacing ones are
#: also caught through `sorryAx`; listing them documents the intent.
KERNEL_OPTIONS: dict[str, str] = {
    "debug.skipKernelTC": "adds declarations without kernel type checking",
    "debug.byAsSorry": "replaces every `by` block with `sorry`",
    "debug.proofAsSorry": "replaces every proof with `sorry`",
}
