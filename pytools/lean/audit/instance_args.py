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


def _instantiate(e: Expr, prefix: list[Expr]) -> Expr:
    """``e`` (a parameter type, under the ``len(prefix)`` parameters before it) with those
    parameters replaced by the arguments given for them. Loose variables of the arguments
    are not lifted: the result is only read for its constants and its head."""
    memo: dict[tuple[int, int], Expr] = {}

    def go(x: Expr, depth: int) -> Expr:
        key = (id(x), depth)
        hit = memo.get(key)
        if hit is not None:
            return hit
        k = x.kind
        if k == "bvar":
            j = x.args[0] - depth
            r = prefix[len(prefix) - 1 - j] if 0 <= j < len(prefix) else x
        elif k == "app":
            r = Expr("app", (go(x.args[0], depth), go(x.args[1], depth)))
        elif k in ("lam", "forallE"):
            r = Expr(k, (x.args[0], go(x.args[1], depth), go(x.args[2], depth + 1), x.args[3]))
        elif k == "letE":
            r = Expr(k, (x.args[0], go(x.args[1], depth), go(x.args[2], depth),
                         go(x.args[3], depth + 1), x.args[4]))
        elif k == "mdata":
            r = go(x.args[0], depth)
        elif k == "proj":
            r = Expr(k, (x.args[0], x.args[1], go(x.args[2], depth)))
        else:
            r = x
        memo[key] = r
        return r

    return go(e, 0) if prefix else e


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
    ``type_of(key)``: its type; ``is_library(key)``: declared by the library;
    ``library_type(key)``: stands for something of the library once library definitions are
    unfolded; ``class_head(type, module)``: the class a type is an instance of, or None;
    ``is_prop_class(name)``: a class valued in ``Prop``; ``core_instances``: the
    declarations core's modules register as instances."""

    def __init__(self, resolve: Callable[[str, str], Key], type_of: Callable[[Key], Expr],
                 is_library: Callable[[Key], bool], library_type: Callable[[Key], bool],
                 class_head: Callable[[Expr, str], str | None],
                 is_prop_class: Callable[[str], bool], core_instances: frozenset[str]):
        self.resolve = resolve
        self.type_of = type_of
        self.is_library = is_library
        self.library_type = library_type
        self.class_head = class_head
        self.is_prop_class = is_prop_class
        self.core_instances = core_instances
        self._params: dict[Key, list[_Param]] = {}

    # ------------------------------------------------------------------ parameters
    def _class_params(self, key: Key) -> list[_Param]:
        """The parameters of constant ``key`` that can hold an instance: those whose type is
        a class, or a variable (``inferInstanceAs (α : Sort u) [i : α]``, ``List.cons (a :
        α)``: known only once the arguments are)."""
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
        self._params[key] = out
        return out

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
        """What makes instance argument ``arg`` not core's, or None if it is core's."""
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
        arguments include one, so that the printer shows them. A variable bound by a ``let``
        (or by a ``fun`` applied to an argument) that is not core's is not core's where it is
        used either: ``let i : LE Nat := ⟨…⟩; 8 ≤ 1`` shows ``@LE.le Nat i 8 1``."""
        found: dict[tuple[str, str], InstanceUse] = {}
        # (term, bound variables innermost last: True for one bound to a term not core's)
        todo: list[tuple[Expr, tuple[bool, ...]]] = [(e, ())]
        seen: set[tuple[int, tuple[bool, ...] | None]] = set()

        def judge(param_type: Expr, prefix: list[Expr], arg: Expr, node: Expr,
                  bound: tuple[bool, ...]) -> bool:
            """Record ``arg`` if it is an instance argument that is not core's."""
            cls = self._core_class(_instantiate(param_type, prefix), module)
            if cls is None:
                return False
            a = _strip(arg)
            bad = self.offender(a, module)
            if bad is None and a.kind == "bvar" and a.args[0] < len(bound) \
                    and bound[-1 - a.args[0]]:
                bad = "a bound term that is not core's"
            if bad is None:
                return False
            found.setdefault((cls, bad), InstanceUse(declaration, module, cls, bad, where,
                                                     self.is_prop_class(cls)))
            shown.add(id(node))
            return True

        while todo:
            cur, bound = todo.pop()
            mark = (id(cur), bound if any(bound) else None)
            if mark in seen:
                continue
            seen.add(mark)
            k = cur.kind
            if k == "app":
                head, args = _spine(cur)
                if head.kind == "const":
                    key = self.resolve(head.args[0], module)
                    for p in self._class_params(key):
                        if p.index < len(args):
                            judge(p.type, args[:p.index], args[p.index], cur, bound)
                elif head.kind == "lam":
                    lam, inner, i = head, bound, 0
                    while lam.kind == "lam" and i < len(args):
                        todo.append((lam.args[1], inner))
                        bad = judge(lam.args[1], args[:i], args[i], cur, bound)
                        lam, inner, i = _strip(lam.args[2]), inner + (bad,), i + 1
                    todo.append((lam, inner))
                else:
                    todo.append((head, bound))
                todo.extend((a, bound) for a in args)
            elif k == "letE":
                bad = judge(cur.args[1], [], cur.args[2], cur, bound)
                todo += [(cur.args[1], bound), (cur.args[2], bound),
                         (cur.args[3], bound + (bad,))]
            elif k in ("lam", "forallE"):
                todo += [(cur.args[1], bound), (cur.args[2], bound + (False,))]
            else:
                todo.extend((a, bound) for a in cur.args if isinstance(a, Expr))
        return list(found.values())
