"""What certificates say about the audit: the audit block, each theorem's entry, which checks
ran on the machine that made the certificate, and the limits that follow.

``pytools.publish.certify`` calls these; they only format what :func:`audit_modules` and the
native checks found, so the certificate's wording lives next to the checks it describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .policy import ALLOWED_AXIOMS
from .records import AuditReport, Declaration

#: Every check a certificate can report, and what it establishes.
CHECKS: dict[str, str] = {
    "olean-audit": "pytools.lean.audit read every declaration of the library from its .olean "
                   "files and applied every rule (see `rules`)",
    "print-axioms": "a native Lean's `#print axioms` agreed with the .olean audit on every "
                    "published theorem",
    "leanchecker": "Lean's kernel replayed every declaration of every library module from its "
                   ".olean file (leanchecker) and accepted them",
    "kernel-replay": "Lean's kernel (the toolchain's own, under `lean --run`) re-checked every "
                     "declaration of every library module read back from its .olean files "
                     "(pytools/lean/KernelReplay.lean) and accepted them",
    "reviewed-statements": "every published theorem's statement and meaning closure equal "
                           "their entries in reviewed/statements.json",
}
#: Why a check did not run, by the kind of toolchain that made the certificate.
NOT_RUN: dict[str, str] = {
    "print-axioms": "needs a native Lean; the registry WebAssembly build refuses `#print "
                    "axioms` at the exported import level it runs at",
    "leanchecker": "needs a native Lean; the registry WebAssembly build ships no leanchecker "
                   "and cannot run one (measured, docs/toolchain.md)",
    "kernel-replay": "leanchecker replayed every module instead",
}


#: Keys of the audit block that depend on the machine that made the certificate (which checks
#: its Lean could run), not on the library: `certify --check` with another toolchain ignores
#: them, as it ignores `toolchain`.
MACHINE_KEYS = ("checks", "lean", "limits")


def with_checks(report: AuditReport, ran: Mapping[str, bool],
                why: Mapping[str, str] | None = None) -> AuditReport:
    """The report with the checks that ran recorded (``olean-audit`` always did); ``why``:
    the reason a check did not run, when it is not the usual one (:data:`NOT_RUN`)."""
    why = why or {}
    checks = [("olean-audit", True, "")]
    for name in ("print-axioms", "leanchecker", "kernel-replay", "reviewed-statements"):
        did = bool(ran.get(name))
        reason = "" if did else why.get(name) or NOT_RUN.get(name, "not run")
        checks.append((name, did, reason))
    return replace(report, checks=tuple(checks))


def limits(report: AuditReport) -> list[str]:
    """The limits that follow from what ran, as sentences."""
    out = [
        "The kernel that checked these proofs is the Lean named in `lean` (and `toolchain`): "
        "fixes to Lean's kernel released after that version are not reflected here.",
        f"{len(report.trusted_core)} core constants ship without proof bodies in the exported "
        "core library and are trusted (`trusted_core_constants`): axioms used only inside "
        "their proofs are not re-derived; every axiom reached through the library's own "
        "proofs is.",
        "Allowed axioms are recognised by identity (declaring core module and type hash, "
        "`allowed_axiom_identities`), read from the toolchain's core library (SHA-256 "
        "verified for the registry build, as installed for a native one).",
        "The `kernel-option` rule reads source text: an option set by meta code is not seen "
        "by it (meta code is itself rejected by the `metaprogram` and `meta-import` rules).",
    ]
    ran = {name for name, did, _ in report.checks if did}
    if "kernel-replay" in ran:
        out.append("The kernel replay re-checked the library's own modules, each against its "
                   "imports as the toolchain loads them: core's declarations (Init, Std) are "
                   "trusted as shipped with the toolchain, not replayed.")
    if not ran & {"leanchecker", "kernel-replay"}:
        out.append("No kernel replay ran on the machine that made this certificate: the "
                   "library's declarations were checked by Lean's kernel once, when compiled, "
                   "and the .olean audit reads what that compilation wrote.")
    return out


def audit_block(report: AuditReport, lean: Mapping[str, str]) -> dict[str, Any]:
    """The certificate's ``audit`` object. ``lean``: the toolchain identity (version,
    commit) of the Lean that compiled and checked the library."""
    decls = report.declarations
    auxiliary = sum(1 for d in decls if d.auxiliary)
    theorems = sum(1 for d in decls if d.kind == "theorem" and not d.auxiliary)
    checks = report.checks or with_checks(report, {}).checks  # none recorded: the audit alone
    return {
        "declarations": len(decls),
        "user_facing": len(decls) - auxiliary,
        "auxiliary": auxiliary,
        "user_facing_theorems": theorems,
        "findings": len(report.findings),
        "allowed_axioms": sorted(ALLOWED_AXIOMS),
        "allowed_axiom_identities": [
            {"name": n, "module": p.module, "type_sha256": p.type_sha256}
            for n, p in sorted(ALLOWED_AXIOMS.items())],
        "rules": list(report.rules),
        "checks": [{"name": n, "status": "passed" if did else "not-run",
                    "detail": CHECKS[n] if did else why}
                   for n, did, why in checks],
        "lean": {"version": lean.get("version", ""), "commit": lean.get("commit") or ""},
        "limits": limits(report),
        "trusted_core_theorems": len(report.trusted_core),
        "trusted_core_constants": list(report.trusted_core),
        "trusted_core_note": (
            "core theorems whose proof bodies are absent from the exported core library are "
            "trusted: their own axioms are not re-derived by this audit"
        ),
        "method": "pytools.lean.olean reads the compiled .olean files and walks every constant "
        "reference of each declaration transitively; pytools.lean.audit.rules judges what it "
        "read",
    }


def theorem_entry(decl: Declaration, report: AuditReport) -> dict[str, Any]:
    """A published theorem as certificates list it: name, module, printed statement, its
    hash, the hash of its meaning closure, the axioms it reaches, and every constant its
    statement mentions with the module that declares it."""
    entry: dict[str, Any] = {
        "name": decl.name,
        "module": decl.module,
        "statement": decl.statement,
        "statement_sha256": decl.statement_sha256,
        "axioms": sorted(decl.axioms),
        "constants": [{"name": n, "module": m} for n, m in decl.constants],
    }
    for name, sha, _ in report.meanings:
        if name == decl.name:
            entry["closure_sha256"] = sha
    return entry
