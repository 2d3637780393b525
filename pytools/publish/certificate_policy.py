"""The audit policy a certificate must meet, stated once for certify, verify and the signed
statement: no finding, no axiom outside the allowed three, the checks that must have run, and
a kernel re-check of every module (``leanchecker`` or the replay driver) that passed.

Verify re-checks a certificate's own policy fields against these constants (never against
what the certificate says is allowed): a certificate that admits a finding, widens its
allowed axioms, names a theorem with another axiom, or records a required check as not run is
red, whatever its hashes say.
"""

from __future__ import annotations

from typing import Any

from pytools.lean.axioms import ALLOWED_AXIOM_NAMES

#: The only axioms a published theorem may depend on (the audit recognises them by identity,
#: :data:`pytools.lean.audit.policy.ALLOWED_AXIOMS`; a certificate names them). Read from the
#: module of names both sides import, so the verifier loads nothing of the audit.
ALLOWED_AXIOMS: tuple[str, ...] = tuple(sorted(ALLOWED_AXIOM_NAMES))

#: Most findings a certificate may record.
MAX_FINDINGS = 0

#: Checks every certificate must record as passed, whatever Lean made it: the .olean audit
#: and the comparison with the reviewed statements (the native-only checks, ``print-axioms``
#: and ``leanchecker``, are recorded as run or not, with why; see
#: :mod:`pytools.lean.audit.certificate`).
REQUIRED_CHECKS: tuple[str, ...] = ("olean-audit", "reviewed-statements")

#: Kernel re-checks of every compiled module, one of which must have passed: a native Lean's
#: ``leanchecker``, or the replay driver the registry Lean runs (:mod:`pytools.lean.replay`).
KERNEL_CHECKS: tuple[str, ...] = ("kernel-replay", "leanchecker")


def policy(required_checks: tuple[str, ...] = REQUIRED_CHECKS) -> dict[str, Any]:
    """The policy as the signed statement's predicate states it."""
    return {
        "allowed_axioms": list(ALLOWED_AXIOMS),
        "max_findings": MAX_FINDINGS,
        "required_checks": list(required_checks),
        "kernel_check_one_of": list(KERNEL_CHECKS),
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
    if not any(status.get(name) == "passed" for name in KERNEL_CHECKS):
        problems.append("/audit/checks: no kernel re-check passed (one of "
                        f"{', '.join(KERNEL_CHECKS)} is required)")
    return problems
