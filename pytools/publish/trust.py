"""What a green certificate rests on: its ``trust`` field, and the text that shows it.

A green verdict says the certificate is the one published, and that its own audit fields meet
the policy. It does not make the tools that produced those fields right. The ``trust`` field
lists them, each pinned by what can be read or hashed, never typed in:

* the Lean kernel that checked the proofs: the toolchain's version and commit, as
  :mod:`pytools.lean.toolchain` read them (the ``Init.olean`` header, or ``lean --version``);
* the soundness issues known in that kernel and fixed after it (:data:`KERNEL_ISSUES`), each
  with which of its preconditions the audit's rules exclude and which they do not;
* the ``.olean`` reader, the audit's rules and the kernel-replay driver, each by the SHA-256
  of its code as it ran (:func:`code_digest`);
* the browser verifier (the page's script) by the SHA-256 of its template;
* the signature: a certificate is never signed itself; a release's manifest may be, and only
  a key obtained out of band makes that mean anything.

:func:`trust_lines` renders the field as text: ``pytools verify`` prints it, and README's
generated trust block (:func:`readme_block`) is those lines, so README says what the
certificates say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The package folder whose code is hashed (the code that ran): ``pytools/``.
PACKAGE = Path(__file__).resolve().parents[1]
#: Keys of the trust field that depend on the toolchain that made the certificate; a check
#: with another toolchain ignores them (as it ignores ``toolchain``).
MACHINE_KEYS = ("kernel", "kernel_issues")
TRUST_START = "<!-- pytools.certify:trust -->"
TRUST_END = "<!-- /pytools.certify:trust -->"

#: The code each pinned component is, as package-relative globs.
READER_CODE = ("lean/olean/*.py",)
RULES_CODE = ("lean/audit/*.py",)
REPLAY_CODE = ("lean/KernelReplay.lean", "lean/replay.py")
VERIFIER_CODE = ("publish/site/templates/verifier.js",)


@dataclass(frozen=True)
class KernelIssue:
    """A soundness issue of Lean's kernel (a proof of ``False`` it accepted), fixed after the
    versions in :data:`ISSUES_ASSESSED_FOR`."""

    id: str  # owner/repo#number of the report (or the fix, where no issue was filed)
    title: str
    fixed_by: tuple[str, ...]  # the pull requests that fixed it
    merged: str  # when the fix was merged (YYYY-MM-DD)
    needs: str  # what a declaration must contain to exploit it
    excluded_by: tuple[str, ...]  # audit rules (pytools.lean.audit.rules) refusing that route
    not_excluded: str  # what no rule excludes


#: The Lean versions (prefixes) :data:`KERNEL_ISSUES` was assessed for: the fixes below were
#: merged after v4.28.0 was released, so v4.28.0 and its -pre build lack them.
ISSUES_ASSESSED_FOR = ("4.28.",)

#: Kernel soundness issues fixed in 2026 after v4.28.0 (read in leanprover/lean4; the
#: lean-kernel-arena suite holds their reproducers).
KERNEL_ISSUES: tuple[KernelIssue, ...] = (
    KernelIssue(
        id="leanprover/lean4#14576",
        title="the kernel accepted a projection whose structure name does not match the value "
              "projected (an unchecked nested-inductive parameter), giving an axiom-free "
              "proof of False",
        fixed_by=("leanprover/lean4#14577", "leanprover/lean4#14616", "leanprover/lean4#14621",
                  "leanprover/lean4#14631", "leanprover/lean4#14632"),
        merged="2026-07-28",
        needs="a declaration holding a raw projection term with the wrong structure name; the "
              "report builds it with a command elaborator under `import Lean` and adds it "
              "with `addDecl` (the elaborator never writes such a term from surface syntax)",
        excluded_by=("forbidden-import", "meta-import", "metaprogram", "unvetted-extension"),
        not_excluded="a hand-made .olean holding such a term: the .olean audit does not "
                     "type-check terms, and the kernel replay re-checks with this same kernel",
    ),
    KernelIssue(
        id="leanprover/lean4#14613",
        title="`is_prop` compared sorts syntactically: a type in `Sort (imax 1 0)` was not "
              "taken for a proposition, so data could be projected out of a proof, giving "
              "False with no axiom",
        fixed_by=("leanprover/lean4#14613",),
        merged="2026-07-31",
        needs="a sort that is `Prop` only after universe normalisation; per the fix, such a "
              "declaration cannot be written in surface syntax, only with metaprogramming "
              "(the elaborator normalises levels eagerly)",
        excluded_by=("forbidden-import", "meta-import", "metaprogram", "unvetted-extension"),
        not_excluded="a hand-made .olean holding such a declaration (as above)",
    ),
    KernelIssue(
        id="leanprover/lean4#14807",
        title="`is_prop` returned false on a stuck (non-sort) inferred type instead of "
              "rejecting it, so the proof-irrelevance guard of projections was skipped, "
              "giving False",
        fixed_by=("leanprover/lean4#14807", "leanprover/lean4#14847"),
        merged="2026-08-18",
        needs="a type whose sort reduces to `Prop` for a variable but stays stuck for a "
              "closed witness; one reproducer (leanprover/lean4#14847) reaches the data "
              "through a recursor and `propext` instead of a projection",
        excluded_by=(),
        not_excluded="no rule of the audit excludes it: it needs no metaprogram that is "
                     "known here, no forbidden import and no axiom but the allowed "
                     "`propext`; whether the elaborator can produce it from surface syntax "
                     "was not established here. Only a kernel with the fix excludes it",
    ),
)


def code_digest(patterns: Sequence[str], package: Path = PACKAGE) -> dict[str, Any]:
    """The files matching ``patterns`` under ``package`` (sorted, ``/``-separated, relative
    to the repository root) and one SHA-256 over their paths and contents."""
    files = sorted({p for pattern in patterns for p in package.glob(pattern) if p.is_file()})
    digest = hashlib.sha256()
    paths = []
    for path in files:
        rel = f"{package.name}/{path.relative_to(package).as_posix()}"
        paths.append(rel)
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return {"files": paths, "sha256": digest.hexdigest()}


def kernel_issues(version: str) -> dict[str, Any]:
    """The known issues of the kernel of Lean ``version`` that were fixed later."""
    assessed = version.startswith(ISSUES_ASSESSED_FOR)
    issues = [{"id": i.id, "title": i.title, "fixed_by": list(i.fixed_by), "merged": i.merged,
               "needs": i.needs, "excluded_by_rules": list(i.excluded_by),
               "not_excluded": i.not_excluded} for i in KERNEL_ISSUES] if assessed else []
    return {
        "assessed": assessed,
        "assessed_for": [f"{p}*" for p in ISSUES_ASSESSED_FOR],
        "issues": issues,
    }


def trust_block(toolchain: Mapping[str, str], rules: Sequence[str],
                package: Path = PACKAGE) -> dict[str, Any]:
    """The certificate's ``trust`` field. ``toolchain``: the identity of the Lean that compiled
    and checked the library (kind, version, commit); ``rules``: the audit's rule names."""
    version = str(toolchain.get("version", ""))
    read_from = ("the Init.olean header of its core library" if toolchain.get("kind") == "wasm"
                 else "`lean --version`")
    return {
        "kernel": {
            "kind": str(toolchain.get("kind", "")),
            "version": version,
            "commit": toolchain.get("commit") or "",
            "read_from": read_from,
        },
        "kernel_issues": kernel_issues(version),
        "olean_reader": code_digest(READER_CODE, package),
        "audit_rules": {**code_digest(RULES_CODE, package), "rules": list(rules)},
        "kernel_replay": code_digest(REPLAY_CODE, package),
        "browser_verifier": code_digest(VERIFIER_CODE, package),
        "signing": {
            "certificate": "not signed: bound to the release by its SHA-256 in "
                           "certificates/MANIFEST.json",
            "release": "certificates/MANIFEST.intoto.jsonl, when present, signs the manifest "
                       "(Ed25519, DSSE); it proves authorship only with a key obtained out of "
                       "band (`pytools verify --key`); without it, or without a pin of the "
                       "manifest's SHA-256, a green verdict proves integrity only",
        },
    }


def trust_lines(trust: Mapping[str, Any]) -> list[str]:
    """The trust field as Markdown-friendly text lines (README's block, ``pytools verify``)."""
    kernel = trust["kernel"]
    issues = trust["kernel_issues"]
    lines = [
        f"- Lean kernel: {kernel['kind']} Lean {kernel['version']}, commit "
        f"`{kernel['commit'] or 'unknown'}` (read from {kernel['read_from']}).",
    ]
    if not issues["assessed"]:
        lines.append(f"- Known kernel soundness issues: not assessed for this version (the list "
                     f"covers {', '.join(issues['assessed_for'])}).")
    elif not issues["issues"]:
        lines.append("- Known kernel soundness issues fixed later: none known.")
    else:
        lines.append("- Known kernel soundness issues of this version, fixed later:")
        for issue in issues["issues"]:
            rules = ", ".join(f"`{r}`" for r in issue["excluded_by_rules"]) or "none"
            lines.append(f"  - {issue['id']} (fixed by {', '.join(issue['fixed_by'])}, "
                         f"merged {issue['merged']}): {issue['title']}. Needs {issue['needs']}. "
                         f"Rules excluding it: {rules}. Not excluded: {issue['not_excluded']}.")
    for key, label in (("olean_reader", "`.olean` reader"), ("audit_rules", "audit rules"),
                       ("kernel_replay", "kernel replay driver"),
                       ("browser_verifier", "browser verifier")):
        part = trust[key]
        extra = f" ({len(part['rules'])} rules)" if key == "audit_rules" else ""
        lines.append(f"- {label}{extra}: SHA-256 `{part['sha256']}` of "
                     f"{', '.join(part['files'])}.")
    lines.append(f"- Signing: {trust['signing']['certificate']}; "
                 f"{trust['signing']['release']}.")
    return lines


def readme_block(trust: Mapping[str, Any]) -> str:
    """README's generated trust block (between :data:`TRUST_START` and :data:`TRUST_END`)."""
    return "\n".join([
        TRUST_START,
        "<!-- generated by `pytools certify` from the certificates' `trust` field; "
        "do not edit by hand -->",
        "What a green certificate rests on:",
        "",
        *trust_lines(trust),
        TRUST_END,
    ])


def with_trust(text: str, block: str) -> str | None:
    """``text`` with the generated trust block replaced, or None if it has no markers."""
    start, end = text.find(TRUST_START), text.find(TRUST_END)
    if start < 0 or end < start:
        return None
    return text[:start] + block + text[end + len(TRUST_END):]


def readme_trust(text: str) -> str | None:
    """The trust block as it stands in ``text`` (markers included), or None."""
    start, end = text.find(TRUST_START), text.find(TRUST_END)
    if start < 0 or end < start:
        return None
    return text[start:end + len(TRUST_END)]
