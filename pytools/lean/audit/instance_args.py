"""Where a term's instance arguments come from: the facts rule ``statement-instance`` judges.

An instance argument is any argument whose parameter type is a class (whatever its binder
says): ``@LE.le Nat i a b`` has one, ``i``. Where the class is core's and its arguments are
core types (library definitions unfolded: ``LE N`` with ``abbrev N := Nat`` is ``LE Nat``),
the argument decides what a core-looking statement means, so it is read here: a bound
variable (a hypothesis: the statement says "for every such instance"; a ``let`` value is read
where it is bound, a ``fun`` applied to an argument reads that argument at the application)
and an application of an instance that core registers (with a library constant nowhere
inside) are core's; anything else is recorded with the constant or term shape responsible
(a library constant, a core constant that is no instance such as ``LE.mk``, a ``fun``, a
projection...). Classes of the library's own types are not read: their instances are the
library's to define, and a statement about them prints the library's names.

This module only reads; :func:`.rules.rule_statement_instance` decides (and holds the
exemptions, with their arguments).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytools.lean.olean import Expr

#: Core definitions that only pass an instance on (``inferInstanceAs α`` is its instance
#: argument); their own instance argument is read like any other.
INSTANCE_PASSERS = frozenset({"inferInstance", "inferInstanceAs"})

Key = tuple[str, str]


@dataclass(frozen=True)
class InstanceUse:
    """An instance argument of a core class at core types that is not core's, in the type
    (``where="statement"``) or the value (``"definition"``) of a library declaration."""

    declaration: str
    module: str
    class_name: str
    offender: str
    where: str
    prop_class: bool


@dataclass(frozen=True)
class _Param:
    index: int
    type: Expr


def _strip(e: Expr) -> Expr:
    while e.kind == "mdata":
        e = e.args[0]
    return e


def _spine(e: Expr) -> tuple[Expr, list[Expr]]:
    args: list[Expr] = []
    while e.kind == "app":
        args.append(e.args[1])
        e = _strip(e.args[0])
    args.reverse()
    return e, args


def _rewrite(e: Expr, at_bvar: Callable[[int, int], Expr]) -> Expr:
    """``e`` with each bound variable ``#j`` found under ``depth`` binders of ``e`` replaced
    by ``at_bvar(j, depth)`` (shared subterms rewritten once per depth)."""
    memo: dict[tuple[int, int], Expr] = {}

    def go(x: Expr, depth: int) -> Expr:
        key = (id(x), depth)
        hit = memo.get(key)
        if hit is None:
            if x.kind == "bvar":
                hit = at_bvar(x.args[0], depth)
            elif x.kind in ("app", "lam", "forallE", "letE", "mdata", "proj"):
                hit = _map(x, go, depth)
            else:
                hit = x
            memo[key] = hit
        return hit

    return go(e, 0)


def _instantiate(e: Expr, prefix: list[Expr]) -> Expr:
    """``e`` (a parameter type, under the ``len(prefix)`` parameters before it) with those
    parameters replaced by the arguments given for them. Loose variables of the arguments
    are not lifted: the result is only read for its constants and its head."""
    if not prefix:
        return e

    def at(j: int, depth: int) -> Expr:
        i = j - depth
        return prefix[len(prefix) - 1 - i] if 0 <= i < len(prefix) else Expr("bvar", (j,))

    return _rewrite(e, at)


def _lift(e: Expr, by: int) -> Expr:
    """``e`` with its loose bound variables shifted by ``by`` (it moves under binders)."""
    if by == 0:
        return e
    return _rewrite(e, lambda j, depth: Expr("bvar", (j + by if j >= depth else j,)))


def _subst(body: Expr, vals: list[Expr]) -> Expr:
    """``body`` (under ``len(vals)`` binders, the first binder outermost) with its bound
    variables replaced by ``vals``: beta and zeta reduction, lifting as it goes."""
    n = len(vals)

    def at(j: int, depth: int) -> Expr:
        if j < depth:
            return Expr("bvar", (j,))
        if j < depth + n:
            return _lift(vals[n - 1 - (j - depth)], depth)
        return Expr("bvar", (j - n,))

    return _rewrite(body, at)


def _map(x: Expr, go: Callable[[Expr, int], Expr], depth: int) -> Expr:
    """``x`` with ``go`` applied to its immediate subterms (one binder deeper under one)."""
    k, a = x.kind, x.args
    if k == "app":
        return Expr(k, (go(a[0], depth), go(a[1], depth)))
    if k in ("lam", "forallE"):
        return Expr(k, (a[0], go(a[1], depth), go(a[2], depth + 1), a[3]))
    if k == "letE":
        return Expr(k, (a[0], go(a[1], depth), go(a[2], depth), go(a[3], depth + 1), a[4]))
    if k == "mdata":
        return go(a[0], depth)
    return Expr(k, (a[0], a[1], go(a[2], depth)))  # proj


def _mk_app(fn: Expr, args: list[Expr]) -> Expr:
    for a in args:
        fn = Expr("app", (fn, a))
    return fn


def const_names(e: Expr) -> set[str]:
    """Names of the constants in term ``e`` (shared subterms visited once)."""
    out: set[str] = set()
    seen: set[int] = set()
    todo = [e]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.kind == "const":
            out.add(cur.args[0])
        todo.extend(a for a in cur.args if isinstance(a, Expr))
    return out


class InstanceArgs:
    """Reads the instance arguments of library terms (see the module docstring).

    ``resolve(name, module)``: the declaration a name denotes where ``module`` mentions it;
    ``type_of(key)``: its type; ``value_of(key)``: a definition's value (else None);
    ``kind_of(key)``: its kind (``constructor``, ``definition``...);
    ``is_library(key)``: declared by the library; ``library_type(key)``: stands for
    something of the library once library definitions are unfolded; ``class_head(type,
    module)``: the class a type is an instance of, or None; ``is_prop_class(name)``: a class
    valued in ``Prop``; ``core_instances``: the declarations core's modules register as
    instances."""

    #: Unfoldings and reductions tried on one term before it counts as unreadable.
    FUEL = 64

    def __init__(self, resolve: Callable[[str, str], Key], type_of: Callable[[Key], Expr],
                 value_of: Callable[[Key], Expr | None], kind_of: Callable[[Key], str],
                 is_library: Callable[[Key], bool], library_type: Callable[[Key], bool],
                 class_head: Callable[[Expr, str], str | None],
                 is_prop_class: Callable[[str], bool], core_instances: frozenset[str]):
        self.resolve = resolve
        self.type_of = type_of
        self.value_of = value_of
        self.kind_of = kind_of
        self.is_library = is_library
        self.library_type = library_type
        self.class_head = class_head
        self.is_prop_class = is_prop_class
        self.core_instances = core_instances
        self._params: dict[Key, tuple[list[_Param], int, Expr]] = {}

    # ------------------------------------------------------------------ parameters
    def _class_params(self, key: Key) -> tuple[list[_Param], int, Expr]:
        """The parameters of constant ``key`` that can hold an instance (those whose type is
        a class, or a variable: ``inferInstanceAs (α : Sort u) [i : α]``, ``List.cons (a :
        α)``, known only once the arguments are), how many parameters its type shows, and
        the type after them."""
        hit = self._params.get(key)
        if hit is not None:
            return hit
        out: list[_Param] = []
        ty = _strip(self.type_of(key))
        i = 0
        while ty.kind == "forallE":
            btype = _strip(ty.args[1])
            head = _spine(btype)[0]
            if head.kind == "bvar" or self.class_head(btype, key[0]) is not None:
                out.append(_Param(i, ty.args[1]))
            ty = _strip(ty.args[2])
            i += 1
        hit = self._params[key] = (out, i, ty)
        return hit

    def _unfold(self, e: Expr, module: str) -> Expr | None:
        """One step towards a head that shows more: beta, zeta, a projection of a
        constructor, or a definition's value at the head; None when none applies."""
        e = _strip(e)
        if e.kind == "letE":
            return _subst(e.args[3], [e.args[2]])
        head, args = _spine(e)
        if head.kind == "lam" and args:
            vals: list[Expr] = []
            while head.kind == "lam" and len(vals) < len(args):
                vals.append(args[len(vals)])
                head = _strip(head.args[2])
            return _mk_app(_subst(head, vals), args[len(vals):])
        if head.kind == "proj":
            struct = _strip(head.args[2])
            for _ in range(self.FUEL):
                ctor, cargs = _spine(struct)
                if ctor.kind == "const":
                    nparams = self._ctor_params(self.resolve(ctor.args[0], module))
                    if nparams is not None and nparams + head.args[1] < len(cargs):
                        return _mk_app(cargs[nparams + head.args[1]], args)
                nxt = self._unfold(struct, module)
                if nxt is None:
                    return None
                struct = _strip(nxt)
            return None
        if head.kind == "const":
            value = self.value_of(self.resolve(head.args[0], module))
            if value is not None:
                return _mk_app(value, args)
        return None

    def _ctor_params(self, key: Key) -> int | None:
        """How many parameters constructor ``key`` takes before its fields (the arguments
        of the type it builds), or None if ``key`` is no constructor."""
        if self.kind_of(key) != "constructor":
            return None  # an axiom or opaque of a structure type is no constructor
        _, arity, result = self._class_params(key)
        head, args = _spine(result)
        if head.kind != "const":
            return None
        return len(args) if len(args) <= arity else None

    def _class_constructor(self, e: Expr, module: str) -> str | None:
        """The core class (at core types) whose constructor ``e`` applies (``LE.mk f``)."""
        head, args = _spine(e)
        if head.kind != "const":
            return None
        key = self.resolve(head.args[0], module)
        if self._ctor_params(key) is None:
            return None
        params, arity, result = self._class_params(key)
        if len(args) < arity:
            return None
        return self._core_class(_subst(result, args[:arity]), module)

    def _positions(self, fn_type: Expr, args: list[Expr], start: int, module: str
                   ) -> tuple[list[tuple[int, Expr, list[Expr]]], bool]:
        """For each argument from ``start`` on: (index, its parameter's type, the arguments
        that type may mention), reading ``fn_type`` (the type after the arguments before
        ``start``, substituted) further where arguments make an arrow appear (``@id (LE Nat
        → Prop) f i``: the third) or a definition unfolds to one. Also whether every
        argument's parameter was found."""
        out: list[tuple[int, Expr, list[Expr]]] = []
        ty, prefix = _strip(fn_type), []
        i, fuel = start, self.FUEL
        while i < len(args):
            if ty.kind != "forallE":
                if prefix:
                    ty, prefix = _strip(_subst(ty, prefix)), []
                    continue
                nxt = self._unfold(ty, module) if fuel > 0 else None
                if nxt is None:
                    return out, False
                ty, fuel = _strip(nxt), fuel - 1
                continue
            out.append((i, ty.args[1], list(prefix)))
            prefix.append(args[i])
            ty = _strip(ty.args[2])
            i += 1
        return out, True

    def _core_class(self, ty: Expr, module: str) -> str | None:
        """The class of ``ty`` if it is core's at core types (library definitions unfolded),
        else None."""
        cls = self.class_head(ty, module)
        if cls is None:
            return None
        for name in const_names(ty) | {cls}:
            if self.library_type(self.resolve(name, module)):
                return None
        return cls

    # ------------------------------------------------------------------ judging
    def offender(self, arg: Expr, module: str) -> str | None:
        """What makes instance argument ``arg`` not core's, or None if it is core's (a
        variable: how it was bound is judged where it is bound)."""
        arg = _strip(arg)
        if arg.kind == "bvar":
            return None
        head, args = _spine(arg)
        if head.kind == "const":
            name = head.args[0]
            if self.is_library(self.resolve(name, module)):
                return name
            if name not in self.core_instances and name not in INSTANCE_PASSERS:
                return f"{name} (not an instance)"
        elif head.kind != "bvar":
            return f"a term written in ({head.kind})"
        for a in args:
            for c in sorted(const_names(a)):
                if self.is_library(self.resolve(c, module)):
                    return c
        return None

    def uses(self, e: Expr, declaration: str, module: str, where: str,
             shown: set[int]) -> list[InstanceUse]:
        """Every instance argument of a core class at core types in ``e`` that is not core's
        (each (class, offender) once). ``shown`` gains the id of every application whose
        arguments include one, so that the printer shows them.

        Where an instance goes in by a variable, the binding is judged: a ``let`` value, the
        argument a ``fun`` is applied to (``let i : LE Nat := ⟨…⟩; 8 ≤ 1`` shows ``@LE.le Nat
        i 8 1``), the parameter a hypothesis or ``let``-bound function is applied at. Where
        the term hides the parameter an argument goes to (a ``fun`` returning a function, a
        projection, more arguments than a constant's type shows: ``@id (LE Nat → Prop) f i``)
        it is reduced (beta, zeta, projections of constructors, definitions unfolded at the
        head) until the parameter shows, and what stays hidden is recorded as unreadable
        (class ``?``), never passed."""
        found: dict[tuple[str, str], InstanceUse] = {}
        # bound variables, innermost last: (bound to a term that is not core's, its type)
        Bound = tuple[tuple[bool, Expr | None], ...]
        todo: list[tuple[Expr, Bound, int]] = [(e, (), self.FUEL)]
        # a term is read once per binding context (one tuple object per context, kept alive
        # so that its id is not reused)
        contexts: list[Bound] = [()]
        seen: set[tuple[int, int]] = set()

        def record(cls: str, bad: str, node: Expr) -> None:
            found.setdefault((cls, bad), InstanceUse(declaration, module, cls, bad, where,
                                                     cls != "?" and self.is_prop_class(cls)))
            shown.add(id(node))

        def judge(param_type: Expr, prefix: list[Expr], arg: Expr, node: Expr,
                  bound: Bound) -> bool:
            """Record ``arg`` if it is an instance argument that is not core's."""
            cls = self._core_class(_instantiate(param_type, prefix), module)
            if cls is None:
                return False
            a = _strip(arg)
            bad = self.offender(a, module)
            if bad is None and a.kind == "bvar" and a.args[0] < len(bound) \
                    and bound[-1 - a.args[0]][0]:
                bad = "a bound term that is not core's"
            if bad is None:
                return False
            record(cls, bad, node)
            return True

        def judge_at(fn_type: Expr, args: list[Expr], start: int, node: Expr, bound: Bound,
                     fuel: int, what: str) -> None:
            positions, complete = self._positions(fn_type, args, start, module)
            for i, ptype, prefix in positions:
                judge(ptype, prefix, args[i], node, bound)
            if not complete:
                reduce_or_record(node, bound, fuel, what)

        def reduce_or_record(node: Expr, bound: Bound, fuel: int, what: str) -> None:
            nxt = self._unfold(node, module) if fuel > 0 else None
            if nxt is not None:
                todo.append((nxt, bound, fuel - 1))
            elif where == "statement":
                record("?", f"{what}, whose parameters the audit cannot read", node)
            else:
                # compiled recursion and `noConfusion` hide parameters behind recursors,
                # which this reading does not reduce: there, only a core class's
                # constructor given as an argument is recognised as an instance
                for a in _spine(node)[1]:
                    cls = self._class_constructor(_strip(a), module)
                    if cls is not None:
                        record(cls, f"{_spine(_strip(a))[0].args[0]} (not an instance, "
                               f"given where the audit cannot read the parameter)", node)

        while todo:
            cur, bound, fuel = todo.pop()
            mark = (id(cur), id(bound))
            if mark in seen:
                continue
            seen.add(mark)
            k = cur.kind
            if k == "app":
                head, args = _spine(cur)
                if head.kind == "const":
                    key = self.resolve(head.args[0], module)
                    params, arity, rest = self._class_params(key)
                    for p in params:
                        if p.index < len(args):
                            judge(p.type, args[:p.index], args[p.index], cur, bound)
                    if len(args) > arity:
                        judge_at(_subst(rest, args[:arity]), args, arity, cur, bound, fuel,
                                 f"{head.args[0]} with more arguments than its type shows")
                elif head.kind == "lam":
                    lam, inner, i = head, bound, 0
                    while lam.kind == "lam" and i < len(args):
                        todo.append((lam.args[1], inner, fuel))
                        bad = judge(lam.args[1], args[:i], args[i], cur, bound)
                        inner = inner + ((bad, lam.args[1]),)
                        contexts.append(inner)
                        lam, i = _strip(lam.args[2]), i + 1
                    todo.append((lam, inner, fuel))
                    if i < len(args):
                        reduce_or_record(cur, bound, fuel, "a fun with more arguments than "
                                         "it takes")
                elif head.kind == "bvar" and head.args[0] < len(bound) \
                        and bound[-1 - head.args[0]][1] is not None:
                    btype = _lift(bound[-1 - head.args[0]][1], head.args[0] + 1)
                    judge_at(btype, args, 0, cur, bound, 0, "a bound function")
                    todo.append((head, bound, fuel))
                else:
                    reduce_or_record(cur, bound, fuel, f"an application of a {head.kind}")
                    todo.append((head, bound, fuel))
                todo.extend((a, bound, fuel) for a in args)
            elif k == "letE":
                bad = judge(cur.args[1], [], cur.args[2], cur, bound)
                contexts.append(bound + ((bad, cur.args[1]),))
                todo += [(cur.args[1], bound, fuel), (cur.args[2], bound, fuel),
                         (cur.args[3], contexts[-1], fuel)]
            elif k in ("lam", "forallE"):
                contexts.append(bound + ((False, cur.args[1]),))
                todo += [(cur.args[1], bound, fuel), (cur.args[2], contexts[-1], fuel)]
            else:
                todo.extend((a, bound, fuel) for a in cur.args if isinstance(a, Expr))
        return list(found.values())
