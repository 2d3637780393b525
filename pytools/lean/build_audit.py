"""The library as a whole: which files it is made of, and building then auditing it.

Defined once here for every stage that needs them: certify hashes :func:`library_files` into
each certificate's ``sources`` and audits what :func:`build_and_audit` gives it;
provenance hashes the git tree of :data:`LIBRARY_ENTRIES`; ``pytools review-statements``
(:mod:`pytools.lean.statement_review`) compares what :func:`build_and_audit` gives it with the
reviewed statements. Nothing here prints: the commands do.
"""

from __future__ import annotations

import io
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .audit.records import AuditReport
from .audit.walk import audit_modules
from .build import BUILD_DIR, BuildResult, build, lake_build, report
from .modules import LIBRARY_ROOTS, Module, discover, topological_order
from .statement_check import CheckRun, checker
from .toolchain import Toolchain

#: Files beside the modules that decide how the library is built: the lake configuration
#: (it can set Lean options, so the ``kernel-option`` rule reads it) and the Lean version.
BUILD_FILES: tuple[str, ...] = ("lakefile.lean", "lean-toolchain")

#: The repository-root entries that hold the library: each root's folder and root module,
#: and the build files. Provenance hashes their git tree; certificates record this list.
LIBRARY_ENTRIES: tuple[str, ...] = tuple(
    sorted({*LIBRARY_ROOTS, *(f"{r}.lean" for r in LIBRARY_ROOTS), *BUILD_FILES})
)


def library_files(root: Path, modules: Mapping[str, Module] | None = None) -> list[str]:
    """Every file of the library under ``root``: each module's source and each build file
    that is there, as sorted ``/``-separated paths relative to ``root``. ``modules``: the
    library as :func:`~.modules.discover` found it (default: discovered now)."""
    found = discover(root) if modules is None else modules
    paths = {m.path.as_posix() for m in found.values()}
    paths |= {name for name in BUILD_FILES if (root / name).is_file()}
    return sorted(paths)


@dataclass(frozen=True)
class AuditedLibrary:
    """What :func:`build_and_audit` did: the build, and the audit when the build succeeded."""

    built: BuildResult
    modules: tuple[str, ...] = ()  # library modules, each after what it imports
    report: AuditReport | None = None  # None: the build failed, nothing was audited
    timings: dict[str, float] = field(default_factory=dict)  # "build", "audit": seconds

    @property
    def ok(self) -> bool:
        """The library built (the audit's findings are in :attr:`report`)."""
        return self.built.ok and self.report is not None


def build_and_audit(root: Path, toolchain: Toolchain, *, jobs: int | None = None,
                    meanings_for: Sequence[str] = (),
                    check_statements: bool = True) -> AuditedLibrary:
    """Build the library (``lake build`` where the toolchain has lake, else the pytools
    builder with ``jobs``), then audit every module from its ``.olean`` files with every rule:
    the library's root module for the import-closure rule, its files for the
    ``kernel-option`` rule, and the meaning closures of ``meanings_for`` (the published
    theorems). ``check_statements``: elaborate every user-facing theorem's printed statement
    back with the same Lean (:mod:`.statement_check`, rule ``statement-text``; its seconds are
    the timing ``statement-check``). Raises what the build and the audit raise
    (``BuildError``, ``AuditError``, ``OleanError``), each naming its file."""
    start = time.monotonic()
    built = lake_build(root, toolchain) if toolchain.lake else build(root, toolchain, jobs=jobs)
    timings = {"build": time.monotonic() - start}
    if not built.ok:
        return AuditedLibrary(built, timings=timings)
    start = time.monotonic()
    library = discover(root)
    modules = topological_order(library)
    runs: list[CheckRun] = []
    audited = audit_modules(
        modules, [root / BUILD_DIR], core_dir=toolchain.lib_dir, root=LIBRARY_ROOTS[0],
        sources=[(rel, root / rel) for rel in library_files(root, library)],
        meanings_for=meanings_for,
        statement_check=(checker(root, toolchain, LIBRARY_ROOTS[0], runs)
                         if check_statements else None))
    timings["audit"] = time.monotonic() - start
    if runs:
        timings["statement-check"] = sum(runs[0].compile_seconds) + runs[0].read_seconds
        timings["audit"] -= timings["statement-check"]
    return AuditedLibrary(built, tuple(modules), audited, timings)


def build_summary(built: BuildResult) -> str:
    """The build's diagnostics and its one-line summary, as :func:`~.build.report` words
    them, for a command to print."""
    text = io.StringIO()
    report(built, text)
    return text.getvalue().rstrip("\n")
