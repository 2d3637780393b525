"""A compiled fixture module of planted defects, shared by the Lean-backed planted tests: which
errors fall inside which theorem."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from pytools.lean.build import BUILD_DIR, BuildResult
from pytools.paths import project_root


def theorem_ranges(text: str) -> dict[str, tuple[int, int]]:
    """Each theorem's lines (1-based, inclusive): from ``theorem NAME`` to the line before the
    next blank line."""
    lines = text.splitlines()
    ranges = {}
    for i, line in enumerate(lines):
        m = re.match(r"theorem (\w+)", line)
        if m:
            end = i
            while end + 1 < len(lines) and lines[end + 1].strip():
                end += 1
            ranges[m.group(1)] = (i + 1, end + 1)
    return ranges


@dataclass(frozen=True)
class Planted:
    """The compiled fixture: its build result, the line range of each theorem and the ending of
    the fixture's file name."""

    result: BuildResult
    ranges: dict[str, tuple[int, int]]
    file_suffix: str = "Planted.lean"

    def errors_in(self, theorem: str) -> list[str]:
        """The error messages located inside the theorem's lines."""
        first, last = self.ranges[theorem]
        return [d.message for d in self.result.diagnostics
                if d.severity == "error" and d.file.endswith(self.file_suffix)
                and first <= d.line <= last]


def import_closure(module: str) -> tuple[str, ...]:
    """The source files of ``module`` and of every library module it imports, transitively
    (a planted copy of one module needs them all, and no more, to build)."""
    from pytools.lean.modules import discover, local_imports

    modules = discover(project_root())
    seen: dict[str, None] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen[name] = None
            todo += local_imports(modules[name], modules)
    return tuple(sorted(modules[name].path.as_posix() for name in seen))


def project_copy(root: Path, sources: tuple[str, ...]) -> Path:
    """A project at ``root`` holding copies of the repository's ``sources`` and, when the
    repository was built, its build folder (after ``certify --check`` only the fixture
    compiles)."""
    repo = project_root()
    for rel in sources:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / rel, root / rel)
    if (repo / BUILD_DIR).is_dir():
        shutil.copytree(repo / BUILD_DIR, root / BUILD_DIR)
    return root
