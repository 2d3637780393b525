"""The audit policy a certificate must meet, stated once for certify, verify and the signed
statement: no finding, no axiom outside the allowed three, and the checks that must have run.

Verify re-checks a certificate's own policy fields against these constants (never against
what the certificate says is allowed): a certificate that admits a finding, widens its
allowed axioms, names a theorem with another axiom, or records a required check as not run is
red, whatever its hashes say.
"""

from __future__ import annotations

from typing import Any

#: The only axioms a published theorem may depend on.
ALLOWED_AXIOMS: tuple[str, ...] = ("Classical.choice", "Quot.sound", "propext")

#: Most findings a certificate may record.
MAX_FINDINGS = 0

#: Audit checks, in the order a certificate lists them.
CHECK_OLEAN_READER = "olean-reader"
CHECK_NATIVE_AXIOMS = "native-print-axioms"
CHECK_LEANCHECKER = "leanchecker"

#: Checks every certificate must record as passed.
REQUIRED_CHECKS: tuple[str, ...] = (CHECK_OLEAN_READER,)


def checks_ran(toolchain_kind: str) -> list[dict[str, str]]:
    """The audit checks one certify run performs with this kind of Lean, each passed or not
    run with the reason (certify writes nothing when a check that ran failed)."""
    native = toolchain_kind == "native"
    return [
        {
            "name": CHECK_OLEAN_READER,
            "status": "passed",
            "detail": "pytools.lean.olean read every compiled module and walked each "
            "declaration's constant references to its axioms",
        },
        {
            "name": CHECK_NATIVE_AXIOMS,
            "status": "passed" if native else "not-run",
            "detail": "#print axioms of a native Lean agreed with the .olean reader on every "
            "published theorem" if native else "no native Lean: the registry WebAssembly "
            "build refuses #print axioms",
        },
        {
            "name": CHECK_LEANCHECKER,
            "status": "not-run",
            "detail": "the kernel replay of every module (leanchecker) is not part of this "
            "pipeline yet",
        },
    ]


def policy(required_checks: tuple[str, ...] = REQUIRED_CHECKS) -> dict[str, Any]:
    """The policy as the signed statement's predicate states it."""
    return {
        "allowed_axioms": list(ALLOWED_AXIOMS),
        "max_findings": MAX_FINDINGS,
        "required_checks": list(required_checks),
    }


def policy_problems(cert: dict[str, Any]) -> list[str]:
    """Every way a certificate's own audit fields break the policy (empty: it meets it).

    Reads defensively: the schema check reports missing or mistyped fields, this reports
    values.
    """
    problems: list[str] = []
    audit = cert.get("audit")
    if not isinstance(audit, dict):
        return ["/audit: no audit block"]
    findings = audit.get("findings")
    if not isinstance(findings, int) or isinstance(findings, bool) or findings > MAX_FINDINGS:
        problems.append(f"/audit/findings: the certificate records findings, the policy "
                        f"allows {MAX_FINDINGS}")
    allowed = audit.get("allowed_axioms")
    if not isinstance(allowed, list) or sorted(map(str, allowed)) != sorted(ALLOWED_AXIOMS):
        problems.append("/audit/allowed_axioms: differs from the policy's "
                        f"{', '.join(ALLOWED_AXIOMS)}")
    theorems = cert.get("theorems")
    for index, theorem in enumerate(theorems if isinstance(theorems, list) else []):
        axioms = theorem.get("axioms") if isinstance(theorem, dict) else None
        if not isinstance(axioms, list):
            continue
        extra = sorted(a for a in axioms if isinstance(a, str) and a not in ALLOWED_AXIOMS)
        if extra:
            problems.append(f"/theorems/{index}/axioms: {theorem.get('name')} depends on "
                            f"{', '.join(extra)}, outside the allowed axioms")
    checks = audit.get("checks")
    status = {
        c.get("name"): c.get("status") for c in (checks if isinstance(checks, list) else [])
        if isinstance(c, dict)
    }
    for name in REQUIRED_CHECKS:
        if status.get(name) != "passed":
            problems.append(f"/audit/checks: required check {name} "
                            f"{'did not pass' if name in status else 'is not recorded'}")
    return problems
