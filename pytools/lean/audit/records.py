"""The audit's records: declarations, findings, the report."""

from __future__ import annotations

from dataclasses import dataclass


class AuditError(Exception):
    """The audit could not run (missing module, unreadable .olean, ...)."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Declaration:
    """One declaration of an audited module.

    ``kind``: theorem, definition, instance (a definition registered as an instance),
    inductive, constructor, recursor, axiom, opaque or quot. ``module``: the module name.
    ``line`` (1-based) / ``column`` (0-based, as Lean stores it): where the declaration's name
    starts in its source, from the declaration-ranges extension; None when absent.
    ``statement``: the type printed by :func:`pp_expr`.
    ``statement_sha256``: see :func:`statement_sha256`. ``axioms``: sorted names of every axiom
    reached transitively. ``auxiliary``: compiler-generated (see :func:`classify_auxiliary`).
    ``trusted_deps``: how many body-absent library constants the walk reached (0 means the
    axiom set is exact). ``constants``: every constant the statement mentions, with the
    module that declares it, sorted by name (so a reader sees that ``LE.le`` is core's).
    """

    name: str
    kind: str
    module: str
    line: int | None
    column: int | None
    statement: str
    statement_sha256: str
    axioms: tuple[str, ...]
    auxiliary: bool
    trusted_deps: int = 0
    constants: tuple[tuple[str, str], ...] = ()


#: What each rule's finding says after ``<module>: <declaration>``; ``{subject}`` is the
#: finding's subject (an axiom, an attribute target, an option...).
RULE_MESSAGES: dict[str, str] = {
    "sorry": "uses `sorry` (unproved): axiom {subject}",
    "native-code": "is decided by running compiled code (native_decide): axiom {subject}",
    "project-axiom": "depends on an axiom declared in the project: axiom {subject}",
    "foreign-axiom": "depends on an axiom outside the allowed set: axiom {subject}",
    "axiom-identity": "depends on an axiom named like an allowed one that is not core's: "
                      "{subject}",
    "prelude-module": "is a `prelude` module (it does not import all of Init): {subject}",
    "outside-root": "is not imported (transitively) by the library root {subject}",
    "forbidden-import": "imports {subject}, which is neither Init, Std nor the library",
    "meta-import": "has a `meta import` of {subject} (code run at elaboration time)",
    "duplicate-name": "is declared by more than one library module: {subject}",
    "core-name": "has the name of a declaration of the core library ({subject})",
    "kernel-builtin": "has the name of a constant the kernel computes with or checks by name "
                      "({subject})",
    "name-twin": "prints like another constant once «» is ignored: {subject}",
    "name-confusable": "has a name a reader can mistake for another: {subject}",
    "name-chars": "has a name outside the allowed characters: {subject}",
    "invisible-char": "shows a reader an invisible or bidi-control character: {subject}",
    "unsafe": "is `unsafe` ({subject})",
    "partial": "is a `partial` definition: its implementation {subject} is never checked",
    "implemented-by": "is compiled as another declaration: @[implemented_by {subject}]",
    "extern": "is implemented by foreign code: @[extern] {subject}",
    "export": "is exported to foreign code: @[export {subject}]",
    "csimp": "replaces compiled code by a lemma: @[csimp] {subject}",
    "init": "runs code when the module is loaded: {subject}",
    "metaprogram": "is a metaprogram run at elaboration time: {subject}",
    "core-instance": "is an instance of a core class on core types: {subject}",
    "statement-instance": "holds an instance argument of a core class at core types that is "
                          "not core's: {subject}",
    "statement-text": "its printed statement does not elaborate to what was proved: "
                      "{subject}",
    "unvetted-extension": "writes entries to an environment extension no rule has vetted: "
                          "{subject}",
    "kernel-option": "sets an option that switches kernel checking off: {subject}",
    "depends-on-finding": "depends on a declaration with a finding: {subject}",
}


@dataclass(frozen=True)
class Finding:
    """A rule's objection to one declaration (or one module, or one source file).

    ``declaration``: the offending declaration, ``""`` for a whole module or file;
    ``module``: the module (or source file) it is in; ``subject``: what the rule found (an
    axiom, an implementation, an option...); ``rule``: the rule's name, a key of
    :data:`RULE_MESSAGES` (see :mod:`pytools.lean.audit.rules`).
    """

    declaration: str
    module: str
    subject: str
    rule: str

    def message(self) -> str:
        what = RULE_MESSAGES.get(self.rule, self.rule + ": {subject}").format(
            subject=self.subject)
        who = self.declaration or "module"
        return f"{self.module}: {who} {what}"


@dataclass(frozen=True)
class AuditReport:
    """The result of one batched audit.

    ``declarations`` in module order then declaration order; ``findings`` sorted;
    ``trusted_core``: sorted names of library constants whose bodies are absent (theorems
    weakened to axioms, unexposed definitions) that some declaration reaches: their axioms are
    not re-derived; ``modules``: the audited modules; ``library_modules``: how many imported
    modules were read; ``seconds``: wall time of the audit; ``rules``: the rules that ran;
    ``core``: whether allowed axioms were checked against a core library (their identity);
    ``checks``: (check, ran, why not) as recorded by certify
    (:func:`pytools.lean.audit.certificate.with_checks`);
    ``meanings``: (theorem, closure SHA-256, library constants of its closure) for the
    theorems asked for (see :mod:`pytools.lean.audit.meaning`); ``definitions``: (library
    constant, digest) for every constant of those closures.
    """

    declarations: tuple[Declaration, ...]
    findings: tuple[Finding, ...]
    trusted_core: tuple[str, ...]
    modules: tuple[str, ...] = ()
    library_modules: int = 0
    seconds: float = 0.0
    rules: tuple[str, ...] = ()
    core: bool = False
    meanings: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    definitions: tuple[tuple[str, str], ...] = ()
    checks: tuple[tuple[str, bool, str], ...] = ()

    def ok(self) -> bool:
        return not self.findings

    @property
    def user_facing(self) -> tuple[Declaration, ...]:
        return tuple(d for d in self.declarations if not d.auxiliary)

    @property
    def auxiliary(self) -> tuple[Declaration, ...]:
        return tuple(d for d in self.declarations if d.auxiliary)

    def counts(self) -> dict[str, int]:
        """Counts for the certificate: total, user-facing, auxiliary, theorems (user-facing),
        findings, trusted core constants."""
        return {
            "declarations": len(self.declarations),
            "user_facing": len(self.user_facing),
            "auxiliary": len(self.auxiliary),
            "theorems": sum(1 for d in self.user_facing if d.kind == "theorem"),
            "findings": len(self.findings),
            "trusted_core": len(self.trusted_core),
        }

    def by_name(self) -> dict[str, Declaration]:
        return {d.name: d for d in self.declarations}

    def findings_of(self, rule: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.rule == rule)
