"""The library's modules: discovery under the library roots, import headers, import order.

Reads the ``import`` header of every module (comments stripped, never elaborated), and
orders the modules so each comes after everything it imports; a cycle or a missing
module is an error naming the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

LIBRARY_ROOTS = ("Proofs",)


class BuildError(RuntimeError):
    """The library cannot be built; the message names the files involved."""


@dataclass(frozen=True)
class Module:
    """One Lean source file of the library."""

    name: str  # e.g. "Proofs.Isolation.Floor"
    path: Path  # relative to the project root, e.g. Proofs/Isolation/Floor.lean
    imports: tuple[str, ...]


_TOKEN = re.compile(r"\s+|--[^\n]*|/-|[^\s]+")


def strip_comments(text: str) -> str:
    """Remove line comments and (nested) block comments, keeping line structure."""
    out: list[str] = []
    i, depth, n = 0, 0, len(text)
    while i < n:
        if text.startswith("/-", i):
            depth += 1
            i += 2
        elif depth and text.startswith("-/", i):
            depth -= 1
            i += 2
        elif depth:
            out.append("\n" if text[i] == "\n" else " ")
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_HEADER_MODIFIERS = {"public", "meta", "private"}


def parse_imports(text: str) -> tuple[str, ...]:
    """The modules a Lean file imports, read from its header.

    The header is ``module``? ``prelude``? then ``[public] [meta] import [all] Name`` lines;
    it ends at the first other token.
    """
    words = strip_comments(text).split()
    imports: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("module", "prelude"):
            i += 1
            continue
        j = i
        while j < len(words) and words[j] in _HEADER_MODIFIERS:
            j += 1
        if j < len(words) and words[j] == "import":
            j += 1
            if j < len(words) and words[j] == "all":
                j += 1
            if j >= len(words):
                raise BuildError("`import` without a module name")
            imports.append(words[j])
            i = j + 1
            continue
        break
    return tuple(imports)


def module_name(rel: Path) -> str:
    return ".".join(rel.with_suffix("").parts)


def discover(root: Path, roots: Iterable[str] = LIBRARY_ROOTS) -> dict[str, Module]:
    """Every module of the library: ``<Root>.lean`` and ``<Root>/**/*.lean``."""
    modules: dict[str, Module] = {}
    for lib in roots:
        files = [root / f"{lib}.lean"] if (root / f"{lib}.lean").is_file() else []
        files += sorted((root / lib).rglob("*.lean")) if (root / lib).is_dir() else []
        for file in files:
            rel = file.relative_to(root)
            try:
                imports = parse_imports(file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, BuildError) as exc:
                raise BuildError(f"{rel}: cannot read its imports: {exc}") from exc
            modules[module_name(rel)] = Module(module_name(rel), rel, imports)
    if not modules:
        raise BuildError(f"{root}: no Lean modules under {', '.join(roots)}")
    return modules


def local_imports(
    module: Module, modules: dict[str, Module], roots: Iterable[str] = LIBRARY_ROOTS
) -> tuple[str, ...]:
    """The imports of ``module`` that belong to the library (the rest come from core)."""
    roots = tuple(roots)
    found = []
    for name in module.imports:
        if name in modules:
            found.append(name)
        elif name.split(".")[0] in roots:
            raise BuildError(
                f"{module.path}: imports {name}, but there is no "
                f"{Path(*name.split('.')).with_suffix('.lean')}"
            )
    return tuple(found)


def check_core_imports(modules: dict[str, Module], lib_dir: Path) -> None:
    """Every non-library import must exist in the toolchain's core library."""
    for module in modules.values():
        for name in module.imports:
            if name in modules:
                continue
            olean = lib_dir.joinpath(*name.split(".")).with_suffix(".olean")
            if not olean.is_file():
                raise BuildError(f"{module.path}: imports {name}, which is not a known module")


def topological_order(
    modules: dict[str, Module], roots: Iterable[str] = LIBRARY_ROOTS
) -> list[str]:
    """Modules in an order where each comes after everything it imports.

    Ties are broken by name so the order is deterministic. A cycle is an error naming
    the files on it.
    """
    deps = {name: local_imports(m, modules, roots) for name, m in modules.items()}
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    order: list[str] = []

    def visit(name: str, stack: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = stack[stack.index(name):] + [name]
            files = " -> ".join(str(modules[n].path) for n in cycle)
            raise BuildError(f"import cycle: {files}")
        state[name] = 1
        stack.append(name)
        for dep in sorted(deps[name]):
            visit(dep, stack)
        stack.pop()
        state[name] = 2
        order.append(name)

    for name in sorted(modules):
        visit(name, [])
    return order

