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
    axiom set is exact).
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


@dataclass(frozen=True)
class Finding:
    """A forbidden axiom reached by a declaration. ``category``: sorry, native-code,
    project-axiom or foreign-axiom."""

    declaration: str
    module: str
    axiom: str
    category: str

    def message(self) -> str:
        what = {
            "sorry": "uses `sorry` (unproved)",
            "native-code": "is decided by running compiled code (native_decide)",
            "project-axiom": "depends on an axiom declared in the project",
            "foreign-axiom": "depends on an axiom outside the allowed set",
        }.get(self.category, self.category)
        return f"{self.module}: {self.declaration} {what}: axiom {self.axiom}"


@dataclass(frozen=True)
class AuditReport:
    """The result of one batched audit.

    ``declarations`` in module order then declaration order; ``findings`` sorted;
    ``trusted_core``: sorted names of library constants whose bodies are absent (theorems
    weakened to axioms, unexposed definitions) that some declaration reaches: their axioms are
    not re-derived; ``modules``: the audited modules; ``library_modules``: how many imported
    modules were read; ``seconds``: wall time of the audit.
    """

    declarations: tuple[Declaration, ...]
    findings: tuple[Finding, ...]
    trusted_core: tuple[str, ...]
    modules: tuple[str, ...] = ()
    library_modules: int = 0
    seconds: float = 0.0

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

