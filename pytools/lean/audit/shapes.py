"""What printing needs to know of a constant's parameters (from its type): which are explicit,
and how an application of it to some arguments must print so that Lean elaborates the text
back to the same term (:class:`.printer.AppShape`)."""

from __future__ import annotations

from collections.abc import Callable

from pytools.lean.olean import Expr

from .printer import AppShape, has_loose


def _is_out_param(ty: Expr) -> bool:
    """Whether a parameter's type is ``outParam T`` or ``semiOutParam T`` (instance search
    determines it)."""
    while ty.kind == "mdata":
        ty = ty.args[0]
    return (ty.kind == "app" and ty.args[0].kind == "const"
            and ty.args[0].args[0] in ("outParam", "semiOutParam"))


class Shapes:
    """Parameter shapes of constants, memoised. ``type_of``: a constant's type, None when
    unknown."""

    def __init__(self, type_of: Callable[[str], Expr | None]):
        self.type_of = type_of
        self.masks: dict[str, tuple[bool, ...] | None] = {}
        self.must: dict[tuple[str, int], AppShape | None] = {}
        self.params: dict[str, tuple[tuple[str, Expr], ...]] = {}

    def explicit_mask(self, name: str) -> tuple[bool, ...] | None:
        """Which leading parameters of constant ``name`` are explicit (for printing)."""
        if name in self.masks:
            return self.masks[name]
        mask: tuple[bool, ...] | None = None
        t = self.type_of(name)
        if t is not None:
            flags = []
            while t.kind in ("forallE", "mdata"):
                if t.kind == "mdata":
                    t = t.args[0]
                    continue
                flags.append(t.args[3] == "default")
                t = t.args[2]
            mask = tuple(flags)
        self.masks[name] = mask
        return mask

    def app_shape(self, name: str, nargs: int) -> AppShape | None:
        """How an application of constant ``name`` to ``nargs`` arguments prints
        (:class:`.printer.AppShape`; None for an unknown constant). An implicit parameter
        among those given is determined when it is an ``outParam`` (the instance determines
        it) or occurs in the type of another given explicit argument; one that is not must
        come from the expected type, or the application prints every argument (``@f``):
        ``Std.TreeMap.empty``'s comparator, ``Function.Injective rowOf`` (``rowOf`` takes
        no explicit argument and ``Injective`` fixes nothing). Where Lean still guesses
        otherwise, the statement-text check says so."""
        key = (name, nargs)
        if key in self.must:
            return self.must[key]
        params = self.params.get(name)
        if params is None:
            t = self.type_of(name)
            if t is None:
                self.must[key] = None
                return None
            found: list[tuple[str, Expr]] = []  # (binder info, type at its own depth)
            while t.kind in ("forallE", "mdata"):
                if t.kind == "mdata":
                    t = t.args[0]
                    continue
                found.append((t.args[3], t.args[1]))
                t = t.args[2]
            params = self.params[name] = tuple(found)
        given = params[:nargs]

        def fixed(i: int, besides: int) -> bool:
            """Implicit parameter ``i`` is determined without argument ``besides``."""
            bi, ty = given[i]
            return (bi not in ("implicit", "strictImplicit") or _is_out_param(ty)
                    or any(pbi == "default" and j != besides and has_loose(pty, j - i - 1)
                           for j, (pbi, pty) in enumerate(given) if j > i))

        undetermined = not all(fixed(i, -1) for i in range(len(given)))
        settled = tuple(
            all(fixed(i, j) for i in range(j) if has_loose(ty, j - i - 1))
            for j, (_, ty) in enumerate(given))
        shape = AppShape(tuple(b for b, _ in params), undetermined, settled)
        self.must[key] = shape
        return shape
