"""``pytools review-statements [--accept]``: show, or deliberately accept, what the published
theorems now say (``reviewed/statements.json``, see :mod:`pytools.lean.audit.reviewed`).

The library is built and audited the one way certify does it (:func:`.build_audit.build_and_audit`:
every rule, the ``kernel-option`` rule on the library's files included), so a finding certify
would report is reported here too. Without ``accept`` every difference between the library
and the reviewed file is listed (certify reports the same differences). With ``accept`` the
file is rewritten from the library as built, so the change shows up as a diff to read and
commit; a library with an audit finding is not accepted (nothing is written).

The published theorems are the caller's to name: this layer does not know the results (the
command in :mod:`pytools.cli` takes them from :mod:`pytools.results.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .audit import reviewed
from .build_audit import build_and_audit, build_summary
from .toolchain import Toolchain


@dataclass(frozen=True)
class Review:
    """The outcome: the audit's findings, the differences from the reviewed file, and
    whether the file was (re)written."""

    built: bool
    findings: tuple[str, ...] = ()
    differences: tuple[str, ...] = ()
    written: bool = False

    @property
    def ok(self) -> bool:
        return self.built and not self.findings and not self.differences


def review_statements(root: Path, toolchain: Toolchain, theorems: Sequence[str], *,
                      accept: bool = False,
                      say: Callable[[str], None] = lambda line: None) -> Review:
    """Build and audit the library, then compare its published ``theorems`` with the
    reviewed file (or, with ``accept`` and no finding, rewrite the file). ``say`` receives
    the build's summary. Raises what :func:`.build_audit.build_and_audit` raises."""
    audited = build_and_audit(root, toolchain, meanings_for=theorems)
    say(build_summary(audited.built))
    if audited.report is None:
        return Review(built=False)
    findings = tuple(f.message() for f in audited.report.findings)
    if accept and not findings:
        reviewed.accept(root, audited.report, theorems)
        return Review(True, written=True)
    if accept:
        return Review(True, findings)
    return Review(True, findings, tuple(reviewed.check(root, audited.report, theorems)))
