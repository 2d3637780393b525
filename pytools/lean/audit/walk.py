"""The reference walk: every declaration of the library modules, the constants it reaches and
the axioms at the end of those references (mirroring Lean's ``CollectAxioms``), and the facts
the rules of :mod:`.rules` judge."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytools.lean.olean import ConstantInfo, Expr, Module, OleanError

from .auxiliary import classify_auxiliary
from .facts import ModuleFacts, module_facts
from .instance_args import InstanceArgs, InstanceUse, const_names
from .library import Library, default_cache_dir
from .library_facts import AxiomFacts, InstanceFacts, Key, LibraryFacts
from .meaning import Meanings
from .names import StatementAtoms, statement_atoms
from .records import AuditError, AuditReport, Declaration
from .rules import RULES, apply_rules, rule_name, rule_statement_text
from .shapes import Shapes
from .statements import pp_expr, statement_sha256
from .text import Target, shape_sha256

#: Extension that records the real kind of constants exported under another kind.
KINDS_EXT = "_private.Lean.AddDecl.0.Lean.privateConstKindsExt"
_KIND_BY_INDEX = ("definition", "theorem", "axiom", "opaque", "quot", "inductive",
                  "constructor", "recursor")


@dataclass
class _Node:
    key: Key
    deps: tuple[Key, ...]
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
    """Reads the library and its imports, resolving every constant reference the way Lean
    does for the module it occurs in: to the module's own declaration, else to the one its
    imports provide. Constants are keyed by (module, name), never by name alone."""

    def __init__(self, modules: Sequence[str], search_path: Sequence[Path],
                 cache_dir: Path | None, core_dir: Path | None = None):
        self.project = list(dict.fromkeys(modules))
        self.project_set = set(self.project)
        self.lib = Library(search_path, cache_dir, core_dir)
        self.views: dict[str, _ModView] = {}
        self.nodes: dict[Key, _Node] = {}
        self.declared_in: dict[str, list[str]] = {}  # name -> every library module declaring it
        self.shapes = Shapes(self.type_of)
        self._visible: dict[str, frozenset[str]] = {}
        self._library_memo: dict[Key, bool] = {}

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
                self.declared_in.setdefault(n, []).append(mod)
        roots = [i for mod in self.project for i in self.view(mod).module.imports()]
        self.lib.index_closure(roots, skip=self.project)

    def in_library(self, name: str) -> bool:
        return name in self.declared_in

    def visible(self, mod: str) -> frozenset[str]:
        """``mod`` and every module it imports, transitively."""
        hit = self._visible.get(mod)
        if hit is None:
            seen, todo = {mod}, [mod]
            while todo:
                cur = todo.pop()
                imports = (self.view(cur).module.imports() if cur in self.project_set
                           else self.lib.imports_of(cur))
                for dep in imports:
                    if dep not in seen:
                        seen.add(dep)
                        todo.append(dep)
            hit = self._visible[mod] = frozenset(seen)
        return hit

    def resolve_key(self, name: str, ctx: str | None = None) -> Key:
        """The declaration ``name`` denotes where module ``ctx`` mentions it (``None``: the
        library's first, then the imported library's)."""
        candidates = list(self.declared_in.get(name, ()))
        imported = self.lib.name_to_module.get(name)
        if ctx is not None and ctx not in self.project_set:
            candidates = []  # an imported module sees no library module
        if imported is not None:
            candidates.append(imported)
        if ctx in candidates:
            return (ctx, name)
        if ctx is not None and len(candidates) > 1:
            visible = self.visible(ctx)
            for c in candidates:
                if c in visible:
                    return (c, name)
        if candidates:
            return (candidates[0], name)
        raise AuditError(f"constant {name} is referenced but defined in no module of the "
                         "import closure (incomplete search path or corrupt .olean?)")

    def info(self, key: Key) -> ConstantInfo:
        v = self.view(key[0])
        ptr = v.consts.get(key[1])
        if ptr is None:
            raise AuditError(f"{v.module.path}: constant {key[1]} listed but not found")
        return v.module.constant(ptr)

    def resolve(self, name: str, ctx: str | None = None) -> tuple[str, ConstantInfo]:
        key = self.resolve_key(name, ctx)
        return key[0], self.info(key)

    def module_of(self, name: str, ctx: str | None = None) -> str | None:
        try:
            return self.resolve_key(name, ctx)[0]
        except AuditError:
            return None

    def type_of(self, name: str) -> Expr | None:
        try:
            mod, ci = self.resolve(name)
            return self.views[mod].module.expr(ci.type_ptr)
        except (AuditError, OleanError):
            return None

    def node(self, key: Key) -> _Node:
        nd = self.nodes.get(key)
        if nd is not None:
            return nd
        mod, name = key
        ci = self.info(key)
        v = self.views[mod]
        m = v.module
        seen: set[int] = set()
        refs = set(m.const_refs(ci.type_ptr, seen))
        own_axiom = False
        trusted = False
        if ci.kind == "axiom":
            real = v.real_kinds.get(name)
            if real is None or real == "axiom":
                own_axiom = True
                refs = set()  # an axiom is a leaf, as in CollectAxioms
            else:
                trusted = True  # body-absent theorem/definition: follow its type only
        elif ci.kind in ("definition", "theorem", "opaque"):
            if ci.value_ptr is not None:
                refs |= m.const_refs(ci.value_ptr, seen)
        elif ci.kind == "inductive":
            refs |= set(ci.ctors)
        deps = {self.resolve_key(r, mod) for r in refs}
        deps.discard(key)
        nd = _Node(key, tuple(sorted(deps)), own_axiom, trusted)
        self.nodes[key] = nd
        return nd

    def closure(self, roots: Sequence[Key]
                ) -> dict[Key, tuple[frozenset[Key], frozenset[Key], frozenset[Key]]]:
        """For every node reachable from ``roots``: (axioms, trusted constants, library
        constants) it reaches, itself excluded unless on a cycle through it, by Tarjan's SCC
        algorithm (iterative; the dependency graph has cycles)."""
        index: dict[Key, int] = {}
        low: dict[Key, int] = {}
        onstack: set[Key] = set()
        stack: list[Key] = []
        result: dict[Key, tuple[frozenset[Key], frozenset[Key], frozenset[Key]]] = {}
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
                    axioms: set[Key] = set()
                    trusted: set[Key] = set()
                    library: set[Key] = set()
                    cs = set(comp)
                    for w in comp:
                        nd = self.nodes[w]
                        if nd.own_axiom:
                            axioms.add(w)
                        if nd.trusted:
                            trusted.add(w)
                        for d in nd.deps:
                            if d[0] in self.project_set:
                                library.add(d)
                            if d not in cs:
                                a, t, lib = result[d]
                                axioms |= a
                                trusted |= t
                                library |= lib
                    val = (frozenset(axioms), frozenset(trusted), frozenset(library))
                    for w in comp:
                        result[w] = val
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
        return result

    # ----------------------------------------------------------------- facts for the rules
    def axiom_facts(self, key: Key) -> AxiomFacts:
        mod, name = key
        ci = self.info(key)
        ty = self.views[mod].module.expr(ci.type_ptr)
        in_project = mod in self.project_set
        return AxiomFacts(name, mod, in_core=(not in_project) and self.lib.is_core(mod),
                          in_project=in_project,
                          type_sha256=statement_sha256(ty, ci.level_params))

    def class_head(self, ty: Expr, ctx: str | None = None, depth: int = 3) -> str | None:
        """The class a type is an instance of: the head constant after the binders, through
        up to ``depth`` unfoldings of a definition (``DecidableEq α`` unfolds to
        ``Decidable (a = b)``)."""
        classes = self.lib.classes
        while depth >= 0:
            while ty.kind in ("forallE", "mdata"):
                ty = ty.args[2] if ty.kind == "forallE" else ty.args[0]
            head, nargs = ty, 0
            while head.kind == "app":
                head, nargs = head.args[0], nargs + 1
            if head.kind != "const":
                return None
            name = head.args[0]
            if name in classes:
                return name
            try:
                mod, ci = self.resolve(name, ctx)
            except AuditError:
                return None
            ctx = mod
            if ci.kind != "definition" or ci.value_ptr is None:
                return None
            body = self.views[mod].module.expr(ci.value_ptr)
            for _ in range(nargs):
                if body.kind != "lam":
                    break
                body = body.args[2]
            ty, depth = body, depth - 1
        return None

    def instance_facts(self, facts: Sequence[ModuleFacts]) -> list[InstanceFacts]:
        """Registered instances of the library, and its definitions whose type is a class."""
        out: dict[Key, InstanceFacts] = {}
        for mf in facts:
            for inst in mf.instances:
                key = self.resolve_key(inst.declaration, mf.name)
                mentions = self._mentions_library(key)
                cls = inst.class_name or self._class_of(key) or "?"
                out[(mf.name, inst.declaration)] = InstanceFacts(
                    inst.declaration, mf.name, cls, mentions, True,
                    self._keyed_core(inst.keys))
        for name, mods in self.declared_in.items():
            for mod in mods:
                if (mod, name) in out:
                    continue
                v = self.views[mod]
                ci = v.module.constant(v.consts[name])
                kind = v.real_kinds.get(name, ci.kind)
                if kind not in ("definition", "opaque"):
                    continue
                cls = self.class_head(v.module.expr(ci.type_ptr), mod)
                if cls is not None:
                    out[(mod, name)] = InstanceFacts(name, mod, cls,
                                                     self._mentions_library((mod, name)), False)
        return sorted(out.values(), key=lambda i: (i.module, i.declaration))

    def _keyed_core(self, keys: tuple[str, ...] | None) -> bool:
        """Whether a discrimination-tree key names only constants outside the library, a
        class among them (``id``, ``LE``, ``Nat``: filed under a core class at core types)."""
        if not keys:
            return False
        if any(k in self.declared_in for k in keys):
            return False
        return any(k in self.lib.classes for k in keys)

    def _class_of(self, key: Key) -> str | None:
        ci = self.info(key)
        return self.class_head(self.views[key[0]].module.expr(ci.type_ptr), key[0])

    def _mentions_library(self, key: Key) -> bool:
        """Whether the *conclusion* of instance ``key``'s type (every binder peeled off)
        mentions a library type or class once library definitions are unfolded. Binders
        do not count: ``[Inhabited Tag] → LE Nat`` concludes ``LE Nat`` (issue 24); nor do
        aliases: ``LE N`` with ``abbrev N := Nat`` is ``LE Nat``, which instance search
        finds for every ``LE Nat`` goal."""
        if key[0] not in self.project_set:
            return False  # a core declaration registered as an instance by the library
        ci = self.info(key)
        ty = self.views[key[0]].module.expr(ci.type_ptr)
        while ty.kind in ("forallE", "mdata"):
            ty = ty.args[2] if ty.kind == "forallE" else ty.args[0]
        return any(self.library_type(self.resolve_key(r, key[0]))
                   for r in const_names(ty))

    def library_type(self, key: Key) -> bool:
        """Whether constant ``key`` stands for something of the library once its library
        definitions are unfolded: a library inductive, structure, class, constructor,
        opaque or theorem does; a core constant does not; a library definition does when
        its body does (a recursive one counts as the library's)."""
        memo = self._library_memo
        if key in memo:
            return memo[key]
        if key[0] not in self.project_set:
            memo[key] = False
            return False
        memo[key] = True  # while unfolding: a cycle is the library's
        ci = self.info(key)
        kind = self.views[key[0]].real_kinds.get(key[1], ci.kind)
        if kind != "definition" or ci.value_ptr is None:
            return True
        body = self.views[key[0]].module.expr(ci.value_ptr)
        memo[key] = any(self.library_type(self.resolve_key(r, key[0]))
                        for r in const_names(body))
        return memo[key]

    def is_prop_class(self, name: str) -> bool:
        """Whether class ``name`` is valued in ``Prop`` (``Nonempty``: ``Sort u → Prop``)."""
        ty = self.type_of(name)
        while ty is not None and ty.kind in ("forallE", "mdata"):
            ty = ty.args[2] if ty.kind == "forallE" else ty.args[0]
        return ty is not None and ty.kind == "sort" and ty.args[0].kind == "zero"

    def instance_args(self) -> InstanceArgs:
        def type_of(key: Key) -> Expr:
            ci = self.info(key)
            return self.views[key[0]].module.expr(ci.type_ptr)

        def kind_of(key: Key) -> str:
            ci = self.info(key)
            return self.views[key[0]].real_kinds.get(key[1], ci.kind)

        def value_of(key: Key) -> Expr | None:
            ci = self.info(key)
            if kind_of(key) != "definition" or ci.value_ptr is None:
                return None
            return self.views[key[0]].module.expr(ci.value_ptr)

        return InstanceArgs(
            self.resolve_key, type_of, value_of, kind_of,
            lambda key: key[0] in self.project_set,
            self.library_type, self.class_head, self.is_prop_class,
            frozenset(self.lib.instances))

    def root_closure(self, root: str, facts: Sequence[ModuleFacts]) -> frozenset[str]:
        imports = {mf.name: [i.module for i in mf.imports] for mf in facts}
        seen, todo = {root}, [root]
        while todo:
            for dep in imports.get(todo.pop(), []):
                if dep in imports and dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return frozenset(seen)


def _kind_of(ci: ConstantInfo, instances: set[str], real_kinds: dict[str, str]) -> str:
    kind = ci.kind
    if kind == "axiom" and real_kinds.get(ci.name) not in (None, "axiom"):
        kind = real_kinds[ci.name]
    if kind == "definition" and ci.name in instances:
        return "instance"
    return kind


def _read_sources(sources: Sequence[tuple[str, Path]]) -> tuple[tuple[str, str], ...]:
    out = []
    for label, path in sources:
        try:
            out.append((label, Path(path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            raise AuditError(f"{path}: cannot read source {label}: {exc}") from exc
    return tuple(out)


def audit_modules(modules: Sequence[str], search_path: Sequence[Path | str], *,
                  cache_dir: Path | None | bool = True, core_dir: Path | str | None = None,
                  root: str | None = None, sources: Sequence[tuple[str, Path]] = (),
                  meanings_for: Sequence[str] = (),
                  statement_check: Callable[[Sequence[Target]], Mapping[str, str]] | None = None
                  ) -> AuditReport:
    """Enumerate and audit every declaration of ``modules`` in one batched pass.

    ``modules``: module names, e.g. ``["Proofs.Isolation.Floor", ...]``: the *library*
    every rule of :mod:`.rules` judges. ``search_path``: like ``LEAN_PATH``; each module is
    read from the first directory holding ``Module/Path.olean`` (with its
    ``.server``/``.private`` parts). ``core_dir``: the toolchain's verified core library: its
    modules are read from it first, and only an axiom read from it can be an allowed one
    (without it every allowed-looking axiom is reported). ``root``: the library's root module
    (``Proofs``): every module must be in its import closure. ``sources``: (label, file) pairs
    of source and build files for the ``kernel-option`` rule. ``meanings_for``: declarations
    whose statement closure to hash (:mod:`.meaning`; certify passes the published theorems).
    ``statement_check``: given every user-facing theorem (:class:`.text.Target`), says which
    printed statements Lean does not elaborate back to the theorem's type (name -> why;
    :func:`pytools.lean.statement_check.checker`); each is a ``statement-text`` finding.
    None: not checked (the report's rules then omit ``statement-text``).
    ``cache_dir``: where the library index cache lives (``True``: the default
    ``$XDG_CACHE_HOME/pytools-olean``; ``None``/``False``: no disk cache).
    Raises :class:`AuditError` (missing module/constant, library module without its
    ``.olean.private``) or :class:`pytools.lean.olean.OleanError` (corrupt file, named).
    """
    t0 = time.perf_counter()
    if cache_dir is True:
        cache_dir = default_cache_dir()
    elif cache_dir is False:
        cache_dir = None
    a = _Auditor(modules, [Path(p) for p in search_path], cache_dir,
                 Path(core_dir) if core_dir is not None else None)
    a.load_project()
    mfacts = [module_facts(mod, a.views[mod].module) for mod in a.project]
    for mf in mfacts:
        a.lib.classes.update(mf.classes)
    decl_order: list[tuple[str, ConstantInfo]] = []
    ranges_of: dict[str, dict[str, tuple[int, int]]] = {}
    for mod in a.project:
        v = a.views[mod]
        ranges_of[mod] = ranges = v.module.decl_ranges()
        # every module's own declarations (a name two modules declare is audited twice), in
        # source order where the declaration-ranges entry exists, then by name
        mine = sorted(v.consts, key=lambda n: (ranges.get(n, (1 << 30, 0)), n))
        decl_order += [(mod, v.module.constant(v.consts[n])) for n in mine]
    keys: list[Key] = [(mod, ci.name) for mod, ci in decl_order]
    closure = a.closure(keys)
    axiom_facts = {k: a.axiom_facts(k) for key in keys for k in closure[key][0]}

    decls: list[Declaration] = []
    trusted_all: set[str] = set()
    registered = {i.declaration for mf in mfacts for i in mf.instances}
    instance_args = a.instance_args()
    instance_uses: list[InstanceUse] = []
    targets: list[Target] = []
    atoms: list[StatementAtoms] = []
    for mod, ci in decl_order:
        v = a.views[mod]
        axioms, trusted, _ = closure[(mod, ci.name)]
        trusted_all |= {k[1] for k in trusted}
        ty = v.module.expr(ci.type_ptr)
        atoms.append(statement_atoms(ci.name, mod, ty))
        shown: set[int] = set()  # applications whose instance arguments are printed
        instance_uses += instance_args.uses(ty, ci.name, mod, "statement", shown)
        if v.real_kinds.get(ci.name, ci.kind) == "definition" and ci.value_ptr is not None:
            # a statement means what its definitions unfold to
            instance_uses += instance_args.uses(v.module.expr(ci.value_ptr), ci.name, mod,
                                                "definition", set())
        line, col = ranges_of[mod].get(ci.name, (None, None))
        mentioned = sorted(v.module.const_refs(ci.type_ptr))
        statement = pp_expr(ty, explicit=a.shapes.explicit_mask, shown=frozenset(shown),
                            must_show=a.shapes.app_shape)
        kind = _kind_of(ci, registered, v.real_kinds)
        if (kind == "theorem" and not classify_auxiliary(ci.name, ci.kind)
                and not ci.name.startswith("_private.")):
            targets.append(Target(ci.name, mod, statement, shape_sha256(ty), ci.level_params))
        decls.append(Declaration(
            name=ci.name, kind=kind, module=mod, line=line, column=col, statement=statement,
            statement_sha256=statement_sha256(ty, ci.level_params),
            axioms=tuple(sorted({k[1] for k in axioms})),
            auxiliary=classify_auxiliary(ci.name, ci.kind),
            trusted_deps=len(trusted),
            constants=tuple((c, a.module_of(c, mod) or "?") for c in mentioned)))

    text_failures = None
    if statement_check is not None:
        failed = statement_check(targets)
        text_failures = {(t.module, t.name): failed[t.name] for t in targets
                         if t.name in failed}
    facts = LibraryFacts(
        modules=tuple(mfacts),
        declared_in={n: tuple(ms) for n, ms in a.declared_in.items()},
        reached={key: frozenset(axiom_facts[k] for k in closure[key][0]) for key in keys},
        core_names=a.lib.core_names() if a.lib.core_dir is not None else None,
        root=root,
        root_closure=a.root_closure(root, mfacts) if root else frozenset(),
        instances=tuple(a.instance_facts(mfacts)),
        instance_uses=tuple(instance_uses),
        atoms=tuple(atoms),
        sources=_read_sources(sources),
        uses={key: frozenset(k[1] for k in closure[key][2]) for key in keys},
        statement_text=text_failures)
    rules = RULES if statement_check is not None else tuple(
        r for r in RULES if r is not rule_statement_text)
    findings = apply_rules(facts, rules)
    meanings = Meanings(a.resolve_key, a.info, a.views, a.project_set)
    closures = {n: meanings.closure(a.resolve_key(n)) for n in meanings_for}
    return AuditReport(
        declarations=tuple(decls), findings=tuple(findings),
        trusted_core=tuple(sorted(trusted_all)), modules=tuple(a.project),
        library_modules=len(a.lib.indexed), seconds=time.perf_counter() - t0,
        rules=tuple(rule_name(r) for r in rules), core=a.lib.core_dir is not None,
        meanings=tuple((n, sha, used) for n, (sha, used) in sorted(closures.items())),
        definitions=tuple(sorted(meanings.digests.items())))


def enumerate_declarations(modules: Sequence[str], search_path: Sequence[Path | str], *,
                           cache_dir: Path | None | bool = True) -> tuple[Declaration, ...]:
    """Every declaration of ``modules`` (see :func:`audit_modules`; same pass)."""
    return audit_modules(modules, search_path, cache_dir=cache_dir).declarations
