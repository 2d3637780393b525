"""Lean terms as decoded from an ``.olean`` file: universe levels, expressions, constants."""

from __future__ import annotations

from dataclasses import dataclass

from .names import Name


@dataclass(frozen=True, slots=True)
class Level:
    """A universe level. ``kind`` is one of zero, succ, max, imax, param, mvar."""

    kind: str
    args: tuple  # succ: (Level,), max/imax: (Level, Level), param/mvar: (str,)


@dataclass(frozen=True, slots=True)
class Expr:
    """A kernel expression.

    ``kind`` and ``args``:

    * ``bvar (idx:int)``; ``fvar (id:Name)``; ``mvar (id:Name)``; ``sort (Level)``
    * ``const (name:Name, levels:tuple[Level])``; ``app (fn:Expr, arg:Expr)``
    * ``lam``/``forallE`` ``(binder:Name, type:Expr, body:Expr, binder_info:str)``
    * ``letE (name:Name, type:Expr, value:Expr, body:Expr, non_dep:bool)``
    * ``lit ('nat', int)`` or ``lit ('str', str)``; ``mdata (Expr)`` (metadata dropped)
    * ``proj (struct_name:Name, idx:int, Expr)``

    Names are :class:`~pytools.lean.olean.names.Name` (components kept; as text, printed as
    Lean prints them).
    """

    kind: str
    args: tuple


BINDER_INFOS = ("default", "implicit", "strictImplicit", "instImplicit")
CONSTANT_KINDS = ("axiom", "definition", "theorem", "opaque", "quot", "inductive",
                  "constructor", "recursor")


@dataclass(frozen=True, slots=True)
class ConstantInfo:
    """A declaration as stored in the module data (``Lean.ConstantInfo``).

    ``kind`` is one of :data:`CONSTANT_KINDS`. ``type_ptr``/``value_ptr`` are addresses in the
    owning :class:`Module`; use :meth:`Module.expr` to decode them. ``value_ptr`` is None for
    kinds without a value (axiom, quot, inductive, constructor, recursor). ``ctors`` lists the
    constructor names of an inductive, ``induct`` names a constructor's inductive type.
    ``is_unsafe``: declared ``unsafe`` (``DefinitionSafety.unsafe`` of a definition, the
    ``isUnsafe`` flag of the other kinds). ``is_partial``: a definition whose safety is
    ``DefinitionSafety.partial`` (measured: ``partial def f`` compiles to a safe ``opaque f``
    plus this ``f._unsafe_rec`` implementation, see ``tests/test_olean.py``).
    """

    name: Name
    kind: str
    level_params: tuple[Name, ...]
    type_ptr: int
    value_ptr: int | None
    is_unsafe: bool
    ctors: tuple[Name, ...] = ()
    induct: Name | None = None
    all: tuple[Name, ...] = ()
    is_partial: bool = False


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One entry of a module header's import list (``Lean.Import``): the imported module and
    its flags. ``meta``: a ``meta import`` (its code runs at elaboration time: macros,
    elaborators); ``exported``: a ``public import``; ``import_all``: ``import all``."""

    module: Name
    import_all: bool
    exported: bool
    meta: bool


