"""The layout of ``pytools/``: no import cycle, the pipeline's packages, modules of one job."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytools"

#: Modules allowed past the size limit, each with why it is one job.
LONG_MODULES: dict[str, str] = {}
MAX_LINES = 600


def module_name(path: Path, root: Path = PACKAGE) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path = PACKAGE) -> set[str]:
    """Every project module ``path`` imports, at any depth of the file (function-level imports
    count too: a cycle hidden inside a function is still a cycle)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = root.name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == top}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != top:
                continue
            found.add(mod)
            # `from pkg import sub` imports the submodule pkg.sub when it is one
            for alias in node.names:
                candidate = f"{mod}.{alias.name}"
                rel = Path(*candidate.split("."))
                if (root.parent / rel).with_suffix(".py").is_file() or \
                        (root.parent / rel / "__init__.py").is_file():
                    found.add(candidate)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the project modules it imports (a submodule import also runs its packages'
    ``__init__``, which is an edge to every enclosing package)."""
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for target in imports_of(path, root):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    edges.add(prefix)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first = last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_in_pytools() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_checker_catches_a_planted_cycle(tmp_path: Path) -> None:
    """Planted defect: a two-module cycle, one side hidden in a function-level import."""
    pkg = tmp_path / "pytools"
    (pkg / "results").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "results" / "__init__.py").write_text("")
    (pkg / "results" / "spec.py").write_text("from .registry import published\n")
    (pkg / "results" / "registry.py").write_text(
        "def published():\n    from pytools.results import spec\n    return spec\n")
    cycle = find_cycle(import_graph(pkg))
    assert cycle is not None and set(cycle) == {"pytools.results.spec",
                                                "pytools.results.registry"}


def test_results_spec_imports_nothing_of_the_project() -> None:
    """Every result imports the shared records; the records import no project module."""
    assert imports_of(PACKAGE / "results" / "spec.py") == set()


@pytest.mark.parametrize("stage", ["lean", "results", "publish"])
def test_pipeline_packages_exist(stage: str) -> None:
    assert (PACKAGE / stage / "__init__.py").is_file()


def test_results_have_a_room_each() -> None:
    """One room per result, next to the Lean folder it speaks for."""
    proofs = PACKAGE.parent / "Proofs"
    for lean_dir in sorted(p for p in proofs.iterdir() if p.is_dir()):
        room = PACKAGE / "results" / lean_dir.name.lower()
        assert room.is_dir() or room.with_suffix(".py").is_file(), f"no room for {lean_dir}"


def test_no_module_over_the_size_limit() -> None:
    long = {
        module_name(p): n for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert set(long) <= set(LONG_MODULES), f"modules over {MAX_LINES} lines: {long}"
