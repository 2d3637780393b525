"""The layout of ``pytools/``: no import cycle, no import up the layers, the pipeline's
packages, modules of one job."""

from __future__ import annotations

import ast
import json
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


#: The layers of ``pytools``: each package and the project packages it may import. Lowest
#: first: ``files``/``paths`` < ``lean``, ``traces`` < ``results`` < ``publish``; ``traces``
#: (the trace library every result reads traces with) imports only the lowest layer;
#: ``admission`` stands beside ``results`` and below it (``results.leak`` measures the proxy's
#: own salt and policy), importing only the lowest layer.
LAYERS: dict[str, frozenset[str]] = {
    "files": frozenset(),
    "paths": frozenset(),
    "lean": frozenset({"files", "paths"}),
    "traces": frozenset({"files", "paths"}),
    "admission": frozenset({"files", "paths"}),
    "results": frozenset({"files", "paths", "lean", "traces", "admission"}),
    "publish": frozenset({"files", "paths", "lean", "traces", "admission", "results"}),
}

#: The top: the command line's table and the ``python -m`` entry points may import any layer.
TOP_MODULES = frozenset({"__main__", "cli", "certify"})

#: Back-arrows that exist today in files other parts of issue 23 rewrite, as
#: (file, imported package) -> why. Each entry is checked to still be needed: delete it when
#: the file no longer imports upward.
#: (file, layer) imports allowed against the layers, each with why; none today. The test fails
#: when an entry is no longer needed, so the list cannot go stale.
LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> str:
    """The layer (first package under ``pytools``) a module sits in; ``""`` for ``pytools``."""
    return module.split(".")[1] if "." in module else ""


def layer_arrows(root: Path = PACKAGE) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Imports that point up or sideways across the layers, as (file, first imported module of
    that layer, the importing layer), and the modules in no layer. Function-level imports count."""
    arrows: list[tuple[str, str, str]] = []
    unplaced: list[str] = []
    for path in sorted(root.rglob("*.py")):
        parts = module_name(path, root).split(".")[1:]
        if not parts or parts[0] in TOP_MODULES:
            continue  # the package's own __init__, and the top
        layer = parts[0]
        if layer not in LAYERS:
            unplaced.append(path.relative_to(root.parent).as_posix())
            continue
        crossed: set[str] = set()  # one arrow per imported layer and file
        for target in sorted(imports_of(path, root)):
            other = layer_of(target)
            if other != layer and other not in LAYERS[layer] and other not in crossed:
                crossed.add(other)
                arrows.append((path.relative_to(root.parent).as_posix(), target, layer))
    return arrows, unplaced


def layer_problems(root: Path = PACKAGE,
                   exceptions: dict[tuple[str, str], str] = LAYER_EXCEPTIONS) -> list[str]:
    """Every import against the layers not excepted, every module in no layer, and every
    exception no longer needed."""
    arrows, unplaced = layer_arrows(root)
    problems = [f"{file}: in no layer (add it to LAYERS or TOP_MODULES)" for file in unplaced]
    problems += [f"{file} imports {target} ({layer} may import only "
                 f"{', '.join(sorted(LAYERS[layer])) or 'nothing of the project'})"
                 for file, target, layer in arrows
                 if (file, layer_of(target)) not in exceptions]
    found = {(file, layer_of(target)) for file, target, _ in arrows}
    problems += [f"{file}: no longer imports {layer}, delete its LAYER_EXCEPTIONS entry"
                 for file, layer in sorted(set(exceptions) - found)]
    return problems


def test_no_import_points_up_the_layers() -> None:
    problems = layer_problems()
    assert problems == [], "imports against the layers:\n" + "\n".join(problems)


def _tiny_tree(root: Path, files: dict[str, str]) -> Path:
    """A ``pytools`` package under ``root`` with one empty module per layer plus ``files``."""
    pkg = root / "pytools"
    for layer in LAYERS:
        (pkg / layer).mkdir(parents=True)
        (pkg / layer / "__init__.py").write_text("")
        (pkg / layer / "mod.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("from pytools.publish import mod\nfrom pytools.lean import mod\n")
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    return pkg


def test_layer_rule_passes_a_tree_that_keeps_the_layers(tmp_path: Path) -> None:
    pkg = _tiny_tree(tmp_path, {
        "publish/mod.py": "from pytools.results import mod\nfrom pytools.files import mod\n",
        "results/mod.py": "from ..lean import mod\nfrom pytools.admission.mod import x\n",
        "lean/mod.py": "import pytools.paths\n",
    })
    assert layer_problems(pkg, {}) == []


#: Every arrow the layers forbid, as (importing layer, imported layer).
FORBIDDEN = [(layer, other) for layer in LAYERS for other in LAYERS
             if other != layer and other not in LAYERS[layer]]


@pytest.mark.parametrize("layer, other", FORBIDDEN, ids=[f"{a}->{b}" for a, b in FORBIDDEN])
@pytest.mark.parametrize("form", [
    "def planted():\n    from pytools.{other}.mod import x\n",  # hidden in a function
    "from ..{other} import mod\n",  # relative
])
def test_layer_rule_catches_a_planted_back_arrow(tmp_path: Path, layer: str, other: str,
                                                 form: str) -> None:
    """Planted defect: one forbidden import in an otherwise clean tree (among them the issue's
    case, ``results`` importing ``publish``)."""
    planted = {f"{layer}/mod.py": form.format(other=other)}
    problems = layer_problems(_tiny_tree(tmp_path, planted), {})
    assert len(problems) == 1
    assert problems[0].startswith(f"pytools/{layer}/mod.py imports pytools.{other}"), problems


def test_layer_rule_reports_a_module_in_no_layer(tmp_path: Path) -> None:
    """Planted defect: a new top-level module nobody placed is reported, not let through."""
    pkg = _tiny_tree(tmp_path, {})
    (pkg / "helpers.py").write_text("from pytools.publish import mod\n")
    assert layer_problems(pkg, {}) == [
        "pytools/helpers.py: in no layer (add it to LAYERS or TOP_MODULES)"]


def test_layer_rule_reports_an_exception_no_longer_needed(tmp_path: Path) -> None:
    """Planted defect: an excepted back-arrow that was fixed is reported, so the entry goes."""
    pkg = _tiny_tree(tmp_path, {"results/mod.py": "from pytools.publish import mod\n"})
    excepted = {("pytools/results/mod.py", "publish"): "planted",
                ("pytools/lean/mod.py", "results"): "planted"}
    assert layer_problems(pkg, excepted) == [
        "pytools/lean/mod.py: no longer imports results, delete its LAYER_EXCEPTIONS entry"]


def room_problems(root: Path = PACKAGE, rooms: frozenset[str] | None = None) -> list[str]:
    """Every import from one result's room into another's (function-level ones too): code two
    results share (trace reading, curves, simulators) lives in a lower layer
    (``pytools.traces``), never in one result's room. The rooms are ``results``' subpackages
    and modules named in ``rooms`` (default: one per ``Proofs/`` folder, as
    :func:`test_results_have_a_room_each` requires)."""
    results = root / "results"
    if rooms is None:
        rooms = frozenset(p.name.lower() for p in (root.parent / "Proofs").iterdir()
                          if p.is_dir())
    rooms = rooms | {p.parent.name for p in results.glob("*/__init__.py")}
    problems = []
    for path in sorted(results.rglob("*.py")):
        parts = module_name(path, root).split(".")
        if len(parts) < 3 or parts[2] not in rooms:
            continue  # results' shared modules (spec, registry, ...) may import every room
        crossed: set[str] = set()  # one problem per file and room imported
        for target in sorted(imports_of(path, root)):
            other = target.split(".")
            if other[:2] == [root.name, "results"] and len(other) > 2 and \
                    other[2] in rooms and other[2] != parts[2] and other[2] not in crossed:
                crossed.add(other[2])
                problems.append(f"{path.relative_to(root.parent).as_posix()} imports {target} "
                                f"(room {parts[2]} imports room {other[2]})")
    return problems


def test_no_result_room_imports_another() -> None:
    problems = room_problems()
    assert problems == [], "imports across result rooms:\n" + "\n".join(problems)


@pytest.mark.parametrize("form", [
    "from pytools.results.ceiling.trace import read_trace\n",
    "def planted():\n    from ..ceiling import trace\n",  # relative, hidden in a function
    "import pytools.results.ceiling.curve\n",
])
def test_room_rule_catches_a_planted_cross_room_import(tmp_path: Path, form: str) -> None:
    """Planted defect: the placement room takes trace code from the ceiling's room (the
    layout before ``pytools.traces``), in three spellings; the shared registry may."""
    pkg = _tiny_tree(tmp_path, {})
    for room in ("ceiling", "placement"):
        (pkg / "results" / room).mkdir()
        (pkg / "results" / room / "__init__.py").write_text("")
    (pkg / "results" / "ceiling" / "trace.py").write_text("")
    (pkg / "results" / "ceiling" / "curve.py").write_text("")
    (pkg / "results" / "registry.py").write_text("from .ceiling import trace\n")
    (pkg / "results" / "placement" / "routing.py").write_text("from pytools.traces import x\n")
    rooms = frozenset({"isolation"})
    assert room_problems(pkg, rooms) == []
    (pkg / "results" / "placement" / "routing.py").write_text(form)
    problems = room_problems(pkg, rooms)
    assert len(problems) == 1
    assert problems[0].startswith("pytools/results/placement/routing.py imports "
                                  "pytools.results.ceiling"), problems
    assert problems[0].endswith("(room placement imports room ceiling)")


def test_traces_imports_nothing_of_results_or_publish() -> None:
    """The trace library sits below the results: nothing in it imports a result, the publisher
    or the Lean layer (the layer rule says so; this names the case)."""
    found = {module_name(p): sorted(t for t in imports_of(p)
                                    if layer_of(t) in {"results", "publish", "lean"})
             for p in (PACKAGE / "traces").rglob("*.py")}
    assert {m: t for m, t in found.items() if t} == {}
    assert LAYERS["traces"] == frozenset({"files", "paths"})


def test_results_spec_imports_nothing_of_the_project() -> None:
    """Every result imports the shared records; the records import no project module."""
    assert imports_of(PACKAGE / "results" / "spec.py") == set()


@pytest.mark.parametrize("stage", ["lean", "results", "publish"])
def test_pipeline_packages_exist(stage: str) -> None:
    assert (PACKAGE / stage / "__init__.py").is_file()


#: Lean folders of shared lemmas (no result of their own): ``Proofs/Common/``.
SHARED_LEAN_DIRS = frozenset({"Common"})


def test_results_have_a_room_each() -> None:
    """One room per result, next to the Lean folder it speaks for; a folder of shared lemmas
    has no room and publishes no theorem."""
    proofs = PACKAGE.parent / "Proofs"
    reviewed = json.loads((PACKAGE.parent / "reviewed" / "statements.json").read_text())
    published = {t["module"] for t in reviewed["theorems"]}
    for lean_dir in sorted(p for p in proofs.iterdir() if p.is_dir()):
        room = PACKAGE / "results" / lean_dir.name.lower()
        if lean_dir.name in SHARED_LEAN_DIRS:
            assert not (room.is_dir() or room.with_suffix(".py").is_file()), f"{room} exists"
            prefix = f"Proofs.{lean_dir.name}."
            assert not {m for m in published if m.startswith(prefix)}, f"{lean_dir} publishes"
            continue
        assert room.is_dir() or room.with_suffix(".py").is_file(), f"no room for {lean_dir}"


def test_no_module_over_the_size_limit() -> None:
    long = {
        module_name(p): n for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert set(long) <= set(LONG_MODULES), f"modules over {MAX_LINES} lines: {long}"
