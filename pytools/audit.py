"""Enumerate and audit every declaration of compiled Lean modules, from their ``.olean`` files.

This is the independent checker CI relies on: it never asks Lean (``#print axioms`` is refused
by the registry WebAssembly build) and never greps sources. It reads the compacted regions with
:mod:`pytools.olean` and walks constant references.

Public API (stable; the certify step calls it):

* :func:`audit_modules` ``(modules, search_path, *, cache_dir=True) -> AuditReport`` — one
  batched pass: enumerate every declaration of ``modules`` and compute, for each, the axioms it
  depends on transitively (through the project modules and into the imported library).
* :func:`enumerate_declarations` — the same, returning only the declarations.
* :class:`Declaration`, :class:`Finding`, :class:`AuditReport` — frozen records.
* :func:`native_axioms` / :func:`compare_with_native` — where a native Lean exists, ask it
  (``#print axioms``) and list disagreements with this reader.
* :func:`classify_auxiliary` — the user-facing / auxiliary rule.
* :func:`statement_sha256`, :func:`pp_expr` — the canonical statement hash and printer.
* CLI: ``python -m pytools.audit MODULE... [--search-path P]...`` prints a table and exits
  non-zero (1) on any finding, 2 on unreadable input.

Axiom rules. Allowed: exactly :data:`ALLOWED_AXIOMS`. Every other axiom reached gives a
:class:`Finding` per declaration, with a category:

* ``sorry`` — ``sorryAx`` (an unproved goal);
* ``native-code`` — ``Lean.ofReduceBool``, ``Lean.ofReduceNat``, ``Lean.trustCompiler``
  (decided by running compiled code, i.e. ``native_decide``);
* ``project-axiom`` — an ``axiom`` declared in one of the audited modules;
* ``foreign-axiom`` — any other axiom (declared in an imported library).

The walk mirrors Lean's ``CollectAxioms``: a definition, theorem or opaque contributes the
constants of its type and value, an inductive its type and constructors, a constructor,
recursor or quotient constant its type, an axiom itself.

Trusted core constants. Under the module system the *exported* ``.olean`` level (the only level
the registry build ships for ``Init``/``Std``) weakens a theorem to an ``axiom`` and drops
non-exposed definition bodies. Such a constant is recognised explicitly, never mistaken for an
axiom: the module's ``privateConstKindsExt`` entry records its real kind (theorem, definition,
opaque); a constant stored as an axiom *without* such an entry is a real axiom (in core:
``propext``, ``Quot.sound``, ``Lean.ofReduceBool``, ``Lean.ofReduceNat``,
``Lean.trustCompiler``; ``Classical.choice``, ``sorryAx`` elsewhere). For a body-absent constant
the walk follows its type but cannot follow its proof: it is listed in
:attr:`AuditReport.trusted_core` ("trusted core theorems, bodies absent, axioms not
re-derived"). Consequence, to be stated in certificates: axioms used only *inside* such a
proof are not reported (e.g. a theorem proved with ``Classical.em`` shows no
``Classical.choice``), so the axiom set of a declaration reaching trusted constants
(``Declaration.trusted_deps > 0``) is a lower bound made of the project's own proofs plus
every axiom reachable through bodies that are present. A project module must have its
``.olean.private`` (full bodies); otherwise the audit refuses to run.

Pointer width: the reader handles the 32-bit layout (registry WebAssembly Lean, tested) and the
64-bit layout of native Lean (implemented, tested only on synthetic regions: no native Lean
here).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click

from pytools.olean import ConstantInfo, Expr, Level, Module, OleanError

#: The only axioms a declaration may depend on.
ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
SORRY_AXIOMS = frozenset({"sorryAx"})
NATIVE_AXIOMS = frozenset({"Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})
#: Extension that records the real kind of constants exported under another kind.
KINDS_EXT = "_private.Lean.AddDecl.0.Lean.privateConstKindsExt"
INSTANCE_EXT = "Lean.Meta.globalInstanceExtension"
_KIND_BY_INDEX = ("definition", "theorem", "axiom", "opaque", "quot", "inductive",
                  "constructor", "recursor")
CACHE_VERSION = 1


class AuditError(Exception):
    """The audit could not run (missing module, unreadable .olean, ...)."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Declaration:
    """One declaration of an audited module.

    ``kind``: theorem, definition, instance (a definition registered as an instance),
    inductive, constructor, recursor, axiom, opaque or quot. ``module``: the module name.
    ``line`` (1-based) / ``column`` (0-based, as Lean stores it): where the declaration's name
    starts in its source, from the declaration-ranges extension; None when absent.
    ``statement``: the type printed by :func:`pp_expr`.
    ``statement_sha256``: see :func:`statement_sha256`. ``axioms``: sorted names of every axiom
    reached transitively. ``auxiliary``: compiler-generated (see :func:`classify_auxiliary`).
    ``trusted_deps``: how many body-absent library constants the walk reached (0 means the
    axiom set is exact).
    """

    name: str
    kind: str
    module: str
    line: int | None
    column: int | None
    statement: str
    statement_sha256: str
    axioms: tuple[str, ...]
    auxiliary: bool
    trusted_deps: int = 0


@dataclass(frozen=True)
class Finding:
    """A forbidden axiom reached by a declaration. ``category``: sorry, native-code,
    project-axiom or foreign-axiom."""

    declaration: str
    module: str
    axiom: str
    category: str

    def message(self) -> str:
        what = {
            "sorry": "uses `sorry` (unproved)",
            "native-code": "is decided by running compiled code (native_decide)",
            "project-axiom": "depends on an axiom declared in the project",
            "foreign-axiom": "depends on an axiom outside the allowed set",
        }.get(self.category, self.category)
        return f"{self.module}: {self.declaration} {what}: axiom {self.axiom}"


@dataclass(frozen=True)
class AuditReport:
    """The result of one batched audit.

    ``declarations`` in module order then declaration order; ``findings`` sorted;
    ``trusted_core``: sorted names of library constants whose bodies are absent (theorems
    weakened to axioms, unexposed definitions) that some declaration reaches: their axioms are
    not re-derived; ``modules``: the audited modules; ``library_modules``: how many imported
    modules were read; ``seconds``: wall time of the audit.
    """

    declarations: tuple[Declaration, ...]
    findings: tuple[Finding, ...]
    trusted_core: tuple[str, ...]
    modules: tuple[str, ...] = ()
    library_modules: int = 0
    seconds: float = 0.0

    def ok(self) -> bool:
        return not self.findings

    @property
    def user_facing(self) -> tuple[Declaration, ...]:
        return tuple(d for d in self.declarations if not d.auxiliary)

    @property
    def auxiliary(self) -> tuple[Declaration, ...]:
        return tuple(d for d in self.declarations if d.auxiliary)

    def counts(self) -> dict[str, int]:
        """Counts for the certificate: total, user-facing, auxiliary, theorems (user-facing),
        findings, trusted core constants."""
        return {
            "declarations": len(self.declarations),
            "user_facing": len(self.user_facing),
            "auxiliary": len(self.auxiliary),
            "theorems": sum(1 for d in self.user_facing if d.kind == "theorem"),
            "findings": len(self.findings),
            "trusted_core": len(self.trusted_core),
        }

    def by_name(self) -> dict[str, Declaration]:
        return {d.name: d for d in self.declarations}


def categorize(axiom: str, project_axioms: Iterable[str]) -> str | None:
    """Category of a forbidden axiom, None if allowed."""
    if axiom in ALLOWED_AXIOMS:
        return None
    if axiom in SORRY_AXIOMS:
        return "sorry"
    if axiom in NATIVE_AXIOMS:
        return "native-code"
    if axiom in set(project_axioms):
        return "project-axiom"
    return "foreign-axiom"


# --------------------------------------------------------------------------- auxiliary rule

_AUX_SUFFIXES = frozenset({
    "rec", "recOn", "casesOn", "noConfusion", "noConfusionType", "below", "brecOn",
    "binductionOn", "ibelow", "ctorIdx", "toCtorIdx", "ctorElim", "ctorElimType", "injEq",
    "inj", "sizeOf_spec", "eq_def", "eq_unfold", "induct", "mutual_induct", "fun_cases",
    "congr_simp", "elim", "inj_iff",
})
_AUX_COMPONENT = re.compile(
    r"^(_.*|match_\d+|proof_\d+|eq_\d+|fun_cases_\d+|.*_cstage\d*|.*_spec_\d+|.*_redArg)$")


def classify_auxiliary(name: str, kind: str = "") -> bool:
    """True if ``name`` is a compiler-generated auxiliary declaration.

    Rule (on the name, after removing a ``_private.<Module>.<n>.`` prefix, which only marks a
    user's ``private`` declaration): auxiliary iff some component starts with ``_`` (e.g.
    ``_sunfold``, ``_unsafe_rec``, ``_proof_1``, ``_auxLemma``, ``_cstage2``, ``_closed``),
    or is ``match_N``, ``proof_N``, ``eq_N``, ``fun_cases_N``, or the *last* component is an
    automatically derived companion of an inductive or definition: ``rec``, ``recOn``,
    ``casesOn``, ``noConfusion``, ``noConfusionType``, ``below``, ``brecOn``,
    ``binductionOn``, ``ibelow``, ``ctorIdx``/``toCtorIdx``, ``injEq``, ``inj``, ``inj_iff``,
    ``sizeOf_spec``, ``eq_def``, ``eq_unfold``, ``induct``, ``mutual_induct``, ``fun_cases``,
    ``congr_simp``, ``elim``, ``ctorElim``, ``ctorElimType``. Everything else (theorems,
    definitions, structures, their constructors and projections, instances) is user-facing.
    """
    parts = name.split(".")
    if parts and parts[0] == "_private":
        # _private.<Module components>.<number>.<user name>
        for i in range(1, len(parts)):
            if parts[i].isdigit():
                parts = parts[i + 1:]
                break
    if not parts:
        return True
    if any(_AUX_COMPONENT.match(p) for p in parts):
        return True
    return parts[-1] in _AUX_SUFFIXES and len(parts) > 1


# --------------------------------------------------------------------------- printing/hash


def _level_str(lv: Level) -> str:
    # succ^n of base
    n = 0
    while lv.kind == "succ":
        n += 1
        lv = lv.args[0]
    if lv.kind == "zero":
        return str(n)
    if lv.kind in ("param", "mvar"):
        base = lv.args[0] if lv.kind == "param" else "?" + lv.args[0]
    else:
        base = f"{lv.kind} ({_level_str(lv.args[0])}) ({_level_str(lv.args[1])})"
        if n:
            base = f"({base})"
    return f"{base} + {n}" if n else base


def _sort_str(lv: Level) -> str:
    if lv.kind == "zero":
        return "Prop"
    if lv.kind == "succ" and lv.args[0].kind == "zero":
        return "Type"
    if lv.kind == "succ":
        inner = _level_str(lv.args[0])
        return f"Type {inner}" if " " not in inner else f"Type ({inner})"
    s = _level_str(lv)
    return f"Sort {s}" if " " not in s else f"Sort ({s})"


def _has_loose(e: Expr, depth: int, memo: dict) -> bool:
    key = (id(e), depth)
    hit = memo.get(key)
    if hit is not None:
        return hit
    k = e.kind
    if k == "bvar":
        r = e.args[0] == depth
    elif k == "app":
        r = _has_loose(e.args[0], depth, memo) or _has_loose(e.args[1], depth, memo)
    elif k in ("lam", "forallE"):
        r = _has_loose(e.args[1], depth, memo) or _has_loose(e.args[2], depth + 1, memo)
    elif k == "letE":
        r = (_has_loose(e.args[1], depth, memo) or _has_loose(e.args[2], depth, memo)
             or _has_loose(e.args[3], depth + 1, memo))
    elif k == "mdata":
        r = _has_loose(e.args[0], depth, memo)
    elif k == "proj":
        r = _has_loose(e.args[2], depth, memo)
    else:
        r = False
    memo[key] = r
    return r


_BRACKETS = {"default": "()", "implicit": "{}", "strictImplicit": "⦃⦄", "instImplicit": "[]"}


#: Infix notations printed for fully applied core operators: name -> (arity, symbol).
INFIX = {
    "HAdd.hAdd": (6, "+"), "HSub.hSub": (6, "-"), "HMul.hMul": (6, "*"),
    "HDiv.hDiv": (6, "/"), "HMod.hMod": (6, "%"), "HPow.hPow": (6, "^"),
    "HAppend.hAppend": (6, "++"), "Eq": (3, "="), "Ne": (3, "≠"), "HEq": (4, "≍"),
    "LE.le": (4, "≤"), "LT.lt": (4, "<"), "GE.ge": (4, "≥"), "GT.gt": (4, ">"),
    "And": (2, "∧"), "Or": (2, "∨"), "Iff": (2, "↔"),
}


def pp_expr(e: Expr, max_len: int = 20000,
            explicit: Callable[[str], tuple[bool, ...] | None] | None = None) -> str:
    """Print a term readably and deterministically.

    Binders keep their names (a clash with an enclosing name gets a ``✝N`` suffix), bound
    variables print as those names, constants as full names (universe arguments omitted),
    applications as ``f a b`` with parentheses where needed, ``∀ (x : A), B`` / ``A → B``
    (non-dependent), ``fun (x : A) => b``, ``let x : A := v; b``, ``Prop``/``Type u``/
    ``Sort u``, literals as Lean writes them, projections as ``s.i``. Fully applied core
    operators print infix (:data:`INFIX`, always parenthesised when nested), ``Not a`` as
    ``¬a`` and ``OfNat.ofNat T n i`` as ``n``. When ``explicit`` is given (constant name ->
    which leading parameters are explicit), implicit and instance arguments of a constant
    are omitted, like Lean's default printer. Output longer than ``max_len`` is cut with
    ``…``.
    """
    loose_memo: dict = {}
    out: list[str] = []
    budget = [max_len]

    def emit(s: str) -> None:
        out.append(s)
        budget[0] -= len(s)

    def fresh(name: str, ctx: list[str]) -> str:
        base = name if name else "x"
        if base not in ctx:
            return base
        i = 1
        while f"{base}✝{i}" in ctx:
            i += 1
        return f"{base}✝{i}"

    def go(e: Expr, ctx: list[str], prec: int) -> None:
        # prec: 0 top, 1 argument of arrow / binder body context, 2 application argument
        if budget[0] <= 0:
            return
        k = e.kind
        while k == "mdata":
            e = e.args[0]
            k = e.kind
        if k == "bvar":
            i = e.args[0]
            emit(ctx[-1 - i] if i < len(ctx) else f"#{i}")
        elif k == "const":
            emit(e.args[0])
        elif k == "sort":
            s = _sort_str(e.args[0])
            emit(f"({s})" if prec >= 2 and " " in s else s)
        elif k == "lit":
            emit(str(e.args[1]) if e.args[0] == "nat" else json.dumps(e.args[1],
                                                                     ensure_ascii=False))
        elif k in ("fvar", "mvar"):
            emit(("?" if k == "mvar" else "") + e.args[0])
        elif k == "app":
            fn, args = e, []
            while fn.kind == "app":
                args.append(fn.args[1])
                fn = fn.args[0]
            args.reverse()
            head = fn.args[0] if fn.kind == "const" else None
            if head in INFIX and len(args) == INFIX[head][0]:
                if prec >= 1:
                    emit("(")
                go(args[-2], ctx, 1)
                emit(f" {INFIX[head][1]} ")
                go(args[-1], ctx, 1)
                if prec >= 1:
                    emit(")")
                return
            if head == "Not" and len(args) == 1:
                emit("¬")
                go(args[0], ctx, 2)
                return
            if head == "OfNat.ofNat" and len(args) == 3 and args[1].kind == "lit":
                go(args[1], ctx, 2)
                return
            mask = explicit(head) if (explicit and head) else None
            if mask:
                args = [a for i, a in enumerate(args) if i >= len(mask) or mask[i]]
            if not args:
                go(fn, ctx, prec)
                return
            if prec >= 2:
                emit("(")
            go(fn, ctx, 2)
            for a in args:
                emit(" ")
                go(a, ctx, 2)
            if prec >= 2:
                emit(")")
        elif k in ("forallE", "lam"):
            if prec >= 1:
                emit("(")
            name, ty, body, bi = e.args
            if k == "forallE" and bi == "default" and not _has_loose(body, 0, loose_memo):
                go(ty, ctx, 1)
                emit(" → ")
                go(body, ctx + ["_"], 0)
            else:
                n = fresh(name, ctx)
                lb, rb = _BRACKETS.get(bi, "()")
                emit(("∀ " if k == "forallE" else "fun ") + f"{lb}{n} : ")
                go(ty, ctx, 0)
                emit(rb + (", " if k == "forallE" else " => "))
                go(body, ctx + [n], 0)
            if prec >= 1:
                emit(")")
        elif k == "letE":
            if prec >= 1:
                emit("(")
            name, ty, val, body, _ = e.args
            n = fresh(name, ctx)
            emit(f"let {n} : ")
            go(ty, ctx, 0)
            emit(" := ")
            go(val, ctx, 0)
            emit("; ")
            go(body, ctx + [n], 0)
            if prec >= 1:
                emit(")")
        elif k == "proj":
            go(e.args[2], ctx, 2)
            emit(f".{e.args[1] + 1}")
        else:  # pragma: no cover - all kinds handled
            emit(f"<{k}>")

    go(e, [], 0)
    text = "".join(out)
    if len(text) > max_len:
        text = text[:max_len] + "…"
    return text


def _level_digest(lv: Level, lparams: dict[str, int], memo: dict) -> bytes:
    hit = memo.get(id(lv))
    if hit is not None:
        return hit
    h = hashlib.sha256()
    h.update(lv.kind.encode() + b"\0")
    if lv.kind == "param":
        idx = lparams.get(lv.args[0])
        h.update(f"#{idx}".encode() if idx is not None else b"n:" + lv.args[0].encode())
    elif lv.kind == "mvar":
        h.update(lv.args[0].encode())
    else:
        for a in lv.args:
            h.update(_level_digest(a, lparams, memo))
    d = h.digest()
    memo[id(lv)] = d
    return d


def _expr_digest(e: Expr, lparams: dict[str, int], memo: dict, lmemo: dict) -> bytes:
    stack = [e]
    while stack:
        x = stack[-1]
        if id(x) in memo:
            stack.pop()
            continue
        k = x.kind
        if k == "mdata":
            subs = [x.args[0]]
        elif k == "app":
            subs = [x.args[0], x.args[1]]
        elif k in ("lam", "forallE"):
            subs = [x.args[1], x.args[2]]
        elif k == "letE":
            subs = [x.args[1], x.args[2], x.args[3]]
        elif k == "proj":
            subs = [x.args[2]]
        else:
            subs = []
        pending = [s for s in subs if id(s) not in memo]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if k == "mdata":  # metadata is not part of the statement
            memo[id(x)] = memo[id(subs[0])]
            continue
        h = hashlib.sha256()
        h.update(k.encode() + b"\0")
        if k == "bvar":
            h.update(str(x.args[0]).encode())
        elif k == "sort":
            h.update(_level_digest(x.args[0], lparams, lmemo))
        elif k == "const":
            h.update(x.args[0].encode() + b"\0")
            for lv in x.args[1]:
                h.update(_level_digest(lv, lparams, lmemo))
        elif k == "lit":
            h.update(x.args[0].encode() + b"\0" + str(x.args[1]).encode())
        elif k in ("fvar", "mvar"):
            h.update(x.args[0].encode())
        elif k in ("lam", "forallE"):
            h.update(x.args[3].encode() + b"\0")
        elif k == "letE":
            h.update(b"1" if x.args[4] else b"0")
        elif k == "proj":
            h.update(x.args[0].encode() + b"\0" + str(x.args[1]).encode())
        for s in subs:
            h.update(memo[id(s)])
        memo[id(x)] = h.digest()
    return memo[id(e)]


def statement_sha256(type_expr: Expr, level_params: Sequence[str] = ()) -> str:
    """SHA-256 (hex) of the canonical serialisation of a declaration's type.

    Canonical form (version tag ``lean-statement-v1``): a Merkle hash over the term: each node
    hashes its kind, its own data and its children's digests. Covered: constant names and
    their universe arguments, sorts and universe levels (level parameters by *position* in the
    declaration's level-parameter list), de Bruijn indices, binder *kinds*
    (explicit/implicit/strict/instance), binder types, let values and non-dep flags,
    literals, projections (structure name, index). Not covered: binder names and ``mdata``
    annotations, so renaming a bound variable or universe parameter leaves the hash unchanged
    while any change of meaning changes it. Independent of memory layout and run.
    """
    lparams = {n: i for i, n in enumerate(level_params)}
    root = _expr_digest(type_expr, lparams, {}, {})
    h = hashlib.sha256(b"lean-statement-v1\0")
    h.update(str(len(level_params)).encode() + b"\0")
    h.update(root)
    return h.hexdigest()


# --------------------------------------------------------------------------- library index


def module_file(module: str, search_path: Sequence[Path]) -> Path | None:
    rel = Path(*module.split(".")).with_suffix(".olean")
    for d in search_path:
        p = Path(d) / rel
        if p.is_file():
            return p
    return None


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytools-olean"


class Library:
    """Lazy name -> (module, constant) resolution over a LEAN_PATH-like search path.

    The index of each imported module (its imports and constant names) is cached on disk in
    ``<cache_dir>/index-v1.json``, keyed by the ``.olean`` file's absolute path and checked
    against its (size, mtime_ns) and those of its ``.server``/``.private`` parts: an
    unchanged library (e.g. the core library of a toolchain) is not re-read by later audits,
    whatever the rest of the search path; a changed file is re-indexed.
    """

    def __init__(self, search_path: Sequence[Path], cache_dir: Path | None = None):
        self.search_path = [Path(p) for p in search_path]
        self.cache_dir = cache_dir
        self._mods: dict[str, Module] = {}
        self._paths: dict[str, Path] = {}
        self._cache: dict[str, dict] = {}
        self._cache_dirty = False
        self._cache_path: Path | None = None
        if cache_dir is not None:
            self._cache_path = Path(cache_dir) / f"index-v{CACHE_VERSION}.json"
            try:
                self._cache = json.loads(self._cache_path.read_text())
            except (OSError, ValueError):
                self._cache = {}
        self.name_to_module: dict[str, str] = {}
        self.indexed: list[str] = []

    def path_of(self, module: str) -> Path:
        p = self._paths.get(module)
        if p is None:
            p = module_file(module, self.search_path)
            if p is not None:
                self._paths[module] = p
        if p is None:
            raise AuditError(f"module {module}: no {module.replace('.', '/')}.olean on the "
                             f"search path {[str(d) for d in self.search_path]}")
        return p

    def module(self, name: str) -> Module:
        m = self._mods.get(name)
        if m is None:
            m = Module(self.path_of(name))
            self._mods[name] = m
        return m

    def _index_entry(self, name: str) -> dict:
        path = self.path_of(name)
        st = path.stat()
        stamp = [str(path), st.st_size, st.st_mtime_ns]
        for suf in (".server", ".private"):
            q = path.with_name(path.name + suf)
            if q.is_file():
                sq = q.stat()
                stamp += [suf, sq.st_size, sq.st_mtime_ns]
        key = str(path.resolve())
        hit = self._cache.get(key)
        if hit is not None and hit.get("stamp") == stamp and hit.get("module") == name:
            return hit
        m = self.module(name)
        entry = {"module": name, "stamp": stamp, "imports": m.imports(),
                 "names": m.const_names()}
        self._cache[key] = entry
        self._cache_dirty = True
        return entry

    def index_closure(self, roots: Iterable[str], skip: Iterable[str] = ()) -> None:
        """Index every module reachable by imports from ``roots`` (except ``skip``)."""
        skip = set(skip)
        seen: set[str] = set(self.indexed)
        stack = [r for r in roots]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            entry = self._index_entry(name)
            stack.extend(i for i in entry["imports"] if i not in seen)
            if name in skip:
                continue
            self.indexed.append(name)
            for c in entry["names"]:
                self.name_to_module.setdefault(c, name)
        self.save_cache()

    def save_cache(self) -> None:
        if not (self._cache_dirty and self._cache_path):
            return
        try:
            self._cache_path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._cache_path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as fh:
                json.dump(self._cache, fh)
            os.replace(tmp, self._cache_path)
            self._cache_dirty = False
        except OSError:
            pass  # the cache is an optimisation only


# --------------------------------------------------------------------------- the audit


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
    ``.olean.private``) or :class:`pytools.olean.OleanError` (corrupt file, named).
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


# --------------------------------------------------------------------------- native cross-check

_PRINT_AXIOMS_RE = re.compile(
    r"'(?P<name>[^']+)' (?:depends on axioms: \[(?P<axs>[^\]]*)\]|"
    r"does not depend on any axioms)", re.S)


def parse_print_axioms(output: str) -> dict[str, tuple[str, ...]]:
    """Parse the messages of ``#print axioms`` (plain or ``--json`` output)."""
    texts = []
    for line in output.splitlines():
        s = line.strip()
        if s.startswith("{"):
            try:
                texts.append(str(json.loads(s).get("data", "")))
                continue
            except ValueError:
                pass
        texts.append(line)
    text = "\n".join(texts)
    out: dict[str, tuple[str, ...]] = {}
    for m in _PRINT_AXIOMS_RE.finditer(text):
        axs = m.group("axs")
        names = [] if axs is None else [a.strip() for a in axs.replace("\n", " ").split(",")]
        out[m.group("name")] = tuple(sorted(a for a in names if a))
    return out


def native_axioms(lean_cmd: Sequence[str], modules: Sequence[str], theorems: Sequence[str], *,
                  cwd: Path | None = None, env: dict[str, str] | None = None,
                  timeout: float = 1800) -> dict[str, tuple[str, ...]]:
    """Ask a native Lean: ``#print axioms`` for each theorem, in one file importing
    ``modules`` (a plain, non-``module`` file, so the command is allowed). ``lean_cmd`` is the
    command prefix, e.g. ``["lake", "env", "lean"]`` or ``["lean"]``; the file path is
    appended. Returns theorem -> sorted axiom names. Raises :class:`AuditError` if Lean fails
    or a theorem is missing from its answer."""
    lines = [f"import {m}" for m in modules] + [""]
    lines += [f"#print axioms {_quote_name(t)}" for t in theorems]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "AuditNative.lean"
        src.write_text("\n".join(lines) + "\n")
        try:
            proc = subprocess.run([*lean_cmd, str(src)], capture_output=True, text=True,
                                  cwd=cwd, env=env, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AuditError(f"native Lean {' '.join(lean_cmd)} failed: {exc}") from exc
    out = parse_print_axioms(proc.stdout + "\n" + proc.stderr)
    missing = [t for t in theorems if t not in out]
    if proc.returncode != 0 or missing:
        raise AuditError(f"native Lean exited {proc.returncode}; no answer for {missing[:5]}; "
                         f"output: {(proc.stdout + proc.stderr)[-800:]}")
    return out


def _quote_name(name: str) -> str:
    parts = name.split(".")
    ok = re.compile(r"^[A-Za-z_][A-Za-z0-9_'!?]*$")
    return ".".join(p if ok.match(p) else f"«{p}»" for p in parts)


def compare_with_native(report: AuditReport,
                        native: dict[str, tuple[str, ...]]) -> list[str]:
    """Disagreements between this reader and native ``#print axioms``, one line each.

    A disagreement: a theorem native Lean answered for that the report lacks; an axiom this
    reader found that Lean did not; an axiom Lean found that this reader did not, unless it is
    an allowed axiom *and* the declaration reaches body-absent library constants
    (``trusted_deps > 0``), whose proofs this reader cannot see."""
    decls = report.by_name()
    out: list[str] = []
    for name in sorted(native):
        d = decls.get(name)
        if d is None:
            out.append(f"{name}: answered by native Lean but not in the audit report")
            continue
        ours, theirs = set(d.axioms), set(native[name])
        for ax in sorted(ours - theirs):
            out.append(f"{name}: reader found {ax}, native Lean did not")
        for ax in sorted(theirs - ours):
            if ax in ALLOWED_AXIOMS and d.trusted_deps > 0:
                continue
            out.append(f"{name}: native Lean found {ax}, reader did not")
    return out


# --------------------------------------------------------------------------- CLI


def format_table(report: AuditReport, show_aux: bool = False) -> str:
    rows = [("declaration", "kind", "module", "line", "axioms")]
    for d in report.declarations:
        if d.auxiliary and not show_aux:
            continue
        rows.append((d.name, d.kind, d.module, "" if d.line is None else str(d.line),
                     ", ".join(d.axioms) or "-"))
    widths = [min(60, max(len(r[i]) for r in rows)) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    c = report.counts()
    lines.append(
        f"{c['declarations']} declarations ({c['user_facing']} user-facing, "
        f"{c['auxiliary']} auxiliary), {c['theorems']} theorems; {c['trusted_core']} trusted "
        f"core constants (bodies absent, axioms not re-derived); {report.library_modules} "
        f"library modules read; {report.seconds:.2f} s")
    for f in report.findings:
        lines.append("FINDING " + f.message())
    lines.append("OK: no findings" if report.ok() else f"FAIL: {len(report.findings)} findings")
    return "\n".join(lines)


@click.command()
@click.argument("modules", nargs=-1, required=True)
@click.option("--search-path", "search_path", multiple=True, type=click.Path(path_type=Path),
              help="Directory of .olean files, like one LEAN_PATH entry (repeatable). "
                   "Default: $LEAN_PATH.")
@click.option("--all", "show_aux", is_flag=True, help="Also list auxiliary declarations.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Do not use the on-disk library index cache.")
def main(modules: tuple[str, ...], search_path: tuple[Path, ...], show_aux: bool,
         as_json: bool, no_cache: bool) -> None:
    """Audit the axioms of every declaration of MODULES from their .olean files."""
    paths = list(search_path) or [Path(p) for p in os.environ.get("LEAN_PATH", "").split(":")
                                  if p]
    try:
        report = audit_modules(list(modules), paths, cache_dir=not no_cache)
    except (AuditError, OleanError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        from dataclasses import asdict
        click.echo(json.dumps({
            "declarations": [asdict(d) for d in report.declarations],
            "findings": [asdict(f) for f in report.findings],
            "trusted_core": list(report.trusted_core), "counts": report.counts(),
        }, indent=1, sort_keys=True))
    else:
        click.echo(format_table(report, show_aux))
    sys.exit(0 if report.ok() else 1)


if __name__ == "__main__":
    main()
