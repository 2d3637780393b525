"""The reference walk: every declaration of the project modules, the constants it reaches and
the axioms at the end of those references (mirroring Lean's ``CollectAxioms``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytools.lean.olean import ConstantInfo, Module, OleanError

from .library import Library, default_cache_dir
from .records import AuditError, AuditReport, Declaration, Finding
from .rules import categorize, classify_auxiliary
from .statements import pp_expr, statement_sha256

#: Extension that records the real kind of constants exported under another kind.
KINDS_EXT = "_private.Lean.AddDecl.0.Lean.privateConstKindsExt"
INSTANCE_EXT = "Lean.Meta.globalInstanceExtension"
_KIND_BY_INDEX = ("definition", "theorem", "axiom", "opaque", "quot", "inductive",
                  "constructor", "recursor")


@dataclass
class _Node:
    name: str
    module: str
    deps: tuple[str, ...]
    own_axiom: bool
    trusted: bool


@dataclass
class _ModView:
    """One module's constant table at its most complete part, plus its kinds extension."""

    module: Module
    name: str
    consts: dict[str, int] = field(default_factory=dict)  # name -> ConstantInfo pointer
    real_kinds: dict[str, str] = field(default_factory=dict)
    full: bool = False

    @classmethod
    def of(cls, name: str, module: Module) -> _ModView:
        md = module.module_data()
        ptrs = module.array(md[2])
        names = module.array(md[1])
        if len(ptrs) != len(names):
            raise OleanError(f"{module.path}: constNames and constants differ in length")
        view = cls(module, name)
        for n, p in zip(names, ptrs, strict=True):
            view.consts[module.name(n)] = p
        for i in range(len(module.parts)):
            for e in module.entries(i).get(KINDS_EXT, ()):
                nptr, kptr = module.fields(e, 2)[:2]
                k = module.tag(kptr)
                view.real_kinds[module.name(nptr)] = (_KIND_BY_INDEX[k] if k < 8 else str(k))
        # a non-`module` file is written at the private level in its single .olean
        view.full = (not module.is_module()) or module.parts[-1].path.name.endswith(".private")
        return view


class _Auditor:
    def __init__(self, modules: Sequence[str], search_path: Sequence[Path],
                 cache_dir: Path | None):
        self.project = list(dict.fromkeys(modules))
        self.lib = Library(search_path, cache_dir)
        self.views: dict[str, _ModView] = {}
        self.nodes: dict[str, _Node] = {}
        self.project_consts: dict[str, str] = {}  # name -> project module
        self.masks: dict[str, tuple[bool, ...] | None] = {}

    def view(self, module: str) -> _ModView:
        v = self.views.get(module)
        if v is None:
            v = _ModView.of(module, self.lib.module(module))
            self.views[module] = v
        return v

    def load_project(self) -> None:
        for mod in self.project:
            v = self.view(mod)
            if not v.full:
                raise AuditError(
                    f"{v.module.path}: module {mod} has no .olean.private part; its proof "
                    "bodies are needed to audit it (rebuild it with Lean's -o, which writes "
                    "all three parts)")
            for n in v.consts:
                self.project_consts.setdefault(n, mod)
        roots = [i for mod in self.project for i in self.view(mod).module.imports()]
        self.lib.index_closure(roots, skip=self.project)

    def resolve(self, name: str) -> tuple[str, ConstantInfo]:
        mod = self.project_consts.get(name) or self.lib.name_to_module.get(name)
        if mod is None:
            raise AuditError(f"constant {name} is referenced but defined in no module of the "
                             "import closure (incomplete search path or corrupt .olean?)")
        v = self.view(mod)
        ptr = v.consts.get(name)
        if ptr is None:
            raise AuditError(f"{v.module.path}: constant {name} listed but not found")
        return mod, v.module.constant(ptr)

    def explicit_mask(self, name: str) -> tuple[bool, ...] | None:
        """Which leading parameters of constant ``name`` are explicit (for printing)."""
        if name in self.masks:
            return self.masks[name]
        mask: tuple[bool, ...] | None = None
        try:
            mod, ci = self.resolve(name)
            t = self.views[mod].module.expr(ci.type_ptr)
            flags = []
            while t.kind in ("forallE", "mdata"):
                if t.kind == "mdata":
                    t = t.args[0]
                    continue
                flags.append(t.args[3] == "default")
                t = t.args[2]
            mask = tuple(flags)
        except (AuditError, OleanError):
            mask = None
        self.masks[name] = mask
        return mask

    def node(self, name: str) -> _Node:
        nd = self.nodes.get(name)
        if nd is not None:
            return nd
        mod, ci = self.resolve(name)
        v = self.views[mod]
        m = v.module
        seen: set[int] = set()
        deps = set(m.const_refs(ci.type_ptr, seen))
        own_axiom = False
        trusted = False
        if ci.kind == "axiom":
            real = v.real_kinds.get(name)
            if real is None or real == "axiom":
                own_axiom = True
                deps = set()  # an axiom is a leaf, as in CollectAxioms
            else:
                trusted = True  # body-absent theorem/definition: follow its type only
        elif ci.kind in ("definition", "theorem", "opaque"):
            if ci.value_ptr is not None:
                deps |= m.const_refs(ci.value_ptr, seen)
        elif ci.kind == "inductive":
            deps |= set(ci.ctors)
        deps.discard(name)
        nd = _Node(name, mod, tuple(sorted(deps)), own_axiom, trusted)
        self.nodes[name] = nd
        return nd

    def closure(self, roots: Sequence[str]) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        """For every node reachable from ``roots``: (axioms, trusted constants) reached,
        by Tarjan's SCC algorithm (iterative; the dependency graph has cycles)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        onstack: set[str] = set()
        stack: list[str] = []
        result: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        counter = 0
        for root in roots:
            if root in index:
                continue
            work = [(root, 0)]
            while work:
                v, i = work.pop()
                if i == 0:
                    index[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    onstack.add(v)
                deps = self.node(v).deps
                recursed = False
                while i < len(deps):
                    w = deps[i]
                    i += 1
                    if w not in index:
                        work.append((v, i))
                        work.append((w, 0))
                        recursed = True
                        break
                    if w in onstack:
                        low[v] = min(low[v], index[w])
                if recursed:
                    continue
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        onstack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    axioms: set[str] = set()
                    trusted: set[str] = set()
                    cs = set(comp)
                    for w in comp:
                        nd = self.nodes[w]
                        if nd.own_axiom:
                            axioms.add(w)
                        if nd.trusted:
                            trusted.add(w)
                        for d in nd.deps:
                            if d not in cs:
                                a, t = result[d]
                                axioms |= a
                                trusted |= t
                    val = (frozenset(axioms), frozenset(trusted))
                    for w in comp:
                        result[w] = val
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
        return result


def _kind_of(ci: ConstantInfo, instances: set[str], real_kinds: dict[str, str]) -> str:
    kind = ci.kind
    if kind == "axiom" and real_kinds.get(ci.name) not in (None, "axiom"):
        kind = real_kinds[ci.name]
    if kind == "definition" and ci.name in instances:
        return "instance"
    return kind


def _instances(module: Module) -> set[str]:
    """Names registered with the ``instance`` attribute in this module: the first field of each
    ``globalInstanceExtension`` entry (measured on the fixture)."""
    out: set[str] = set()
    for i in range(len(module.parts)):
        for e in module.entries(i).get(INSTANCE_EXT, ()):
            out.add(module.name(module.fields(e, 1)[0]))
    return out


def audit_modules(modules: Sequence[str], search_path: Sequence[Path | str], *,
                  cache_dir: Path | None | bool = True) -> AuditReport:
    """Enumerate and audit every declaration of ``modules`` in one batched pass.

    ``modules``: module names, e.g. ``["Proofs.Isolation.Floor", ...]``; they are the
    *project*: an axiom declared in one of them is a ``project-axiom``. ``search_path``: like
    ``LEAN_PATH``, e.g. ``[<build>/lib/lean, <core lib>]``; each module is read from the first
    directory holding ``Module/Path.olean`` (with its ``.server``/``.private`` parts).
    ``cache_dir``: where the library index cache lives (``True``: the default
    ``$XDG_CACHE_HOME/pytools-olean``; ``None``/``False``: no disk cache).
    Raises :class:`AuditError` (missing module/constant, project module without its
    ``.olean.private``) or :class:`pytools.lean.olean.OleanError` (corrupt file, named).
    """
    t0 = time.perf_counter()
    if cache_dir is True:
        cache_dir = default_cache_dir()
    elif cache_dir is False:
        cache_dir = None
    a = _Auditor(modules, [Path(p) for p in search_path], cache_dir)
    a.load_project()
    decl_order: list[tuple[str, ConstantInfo]] = []
    ranges_of: dict[str, dict[str, tuple[int, int]]] = {}
    for mod in a.project:
        v = a.views[mod]
        ranges_of[mod] = ranges = v.module.decl_ranges()
        mine = [n for n in v.consts if a.project_consts.get(n) == mod]
        # source order where the declaration-ranges entry exists, then by name
        mine.sort(key=lambda n: (ranges.get(n, (1 << 30, 0)), n))
        decl_order += [(mod, v.module.constant(v.consts[n])) for n in mine]
    closure = a.closure([ci.name for _, ci in decl_order])
    project_axioms = {n for n, nd in a.nodes.items() if nd.own_axiom and n in a.project_consts}

    decls: list[Declaration] = []
    findings: list[Finding] = []
    trusted_all: set[str] = set()
    for mod in a.project:
        v = a.views[mod]
        m = v.module
        ranges = ranges_of[mod]
        insts = _instances(m)
        for mname, ci in decl_order:
            if mname != mod:
                continue
            axioms, trusted = closure[ci.name]
            trusted_all |= trusted
            ty = m.expr(ci.type_ptr)
            line, col = ranges.get(ci.name, (None, None))
            decls.append(Declaration(
                name=ci.name, kind=_kind_of(ci, insts, v.real_kinds), module=mod,
                line=line, column=col, statement=pp_expr(ty, explicit=a.explicit_mask),
                statement_sha256=statement_sha256(ty, ci.level_params),
                axioms=tuple(sorted(axioms)),
                auxiliary=classify_auxiliary(ci.name, ci.kind),
                trusted_deps=len(trusted)))
            for ax in sorted(axioms):
                cat = categorize(ax, project_axioms)
                if cat is not None:
                    findings.append(Finding(ci.name, mod, ax, cat))
    findings.sort(key=lambda f: (f.module, f.declaration, f.axiom))
    return AuditReport(
        declarations=tuple(decls), findings=tuple(findings),
        trusted_core=tuple(sorted(trusted_all)), modules=tuple(a.project),
        library_modules=len(a.lib.indexed), seconds=time.perf_counter() - t0)


def enumerate_declarations(modules: Sequence[str], search_path: Sequence[Path | str], *,
                           cache_dir: Path | None | bool = True) -> tuple[Declaration, ...]:
    """Every declaration of ``modules`` (see :func:`audit_modules`; same pass)."""
    return audit_modules(modules, search_path, cache_dir=cache_dir).declarations

