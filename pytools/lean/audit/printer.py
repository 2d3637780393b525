"""Print a kernel term as a reviewer reads it: Lean-like notation, no hygienic internal names.

Deterministic and independent of Lean's own pretty printer (which project code can change
with unexpanders and delaborators: rule ``metaprogram``). The printed text is for people; what
certificates and reviews compare is the term's hash (:func:`.statements.statement_sha256`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from pytools.lean.olean import Expr, Level, Name

#: Infix notations printed for fully applied core operators:
#: name -> (arity, symbol, precedence, associativity) with Lean's precedences.
INFIX: dict[str, tuple[int, str, int, str]] = {
    "HAdd.hAdd": (6, "+", 65, "left"), "HSub.hSub": (6, "-", 65, "left"),
    "HMul.hMul": (6, "*", 70, "left"), "HDiv.hDiv": (6, "/", 70, "left"),
    "HMod.hMod": (6, "%", 70, "left"), "HPow.hPow": (6, "^", 75, "right"),
    "HAppend.hAppend": (6, "++", 65, "left"),
    "Eq": (3, "=", 50, "none"), "Ne": (3, "≠", 50, "none"), "HEq": (4, "≍", 50, "none"),
    "LE.le": (4, "≤", 50, "none"), "LT.lt": (4, "<", 50, "none"),
    "GE.ge": (4, "≥", 50, "none"), "GT.gt": (4, ">", 50, "none"),
    "And": (2, "∧", 35, "right"), "Or": (2, "∨", 30, "right"), "Iff": (2, "↔", 20, "none"),
    "Prod": (2, "×", 35, "right"),
}
_MAX = 1024  # an application
_ATOM = 1025  # never needs parentheses
_ARROW = 25
_BRACKETS = {"default": "()", "implicit": "{}", "strictImplicit": "⦃⦄", "instImplicit": "[]"}


def _level_str(lv: Level) -> str:
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


def has_loose(e: Expr, depth: int, memo: dict | None = None) -> bool:
    """Whether bound variable ``depth`` (de Bruijn, relative to ``e``) occurs in ``e``."""
    memo = {} if memo is None else memo
    key = (id(e), depth)
    hit = memo.get(key)
    if hit is not None:
        return hit
    k = e.kind
    if k == "bvar":
        r = e.args[0] == depth
    elif k == "app":
        r = has_loose(e.args[0], depth, memo) or has_loose(e.args[1], depth, memo)
    elif k in ("lam", "forallE"):
        r = has_loose(e.args[1], depth, memo) or has_loose(e.args[2], depth + 1, memo)
    elif k == "letE":
        r = (has_loose(e.args[1], depth, memo) or has_loose(e.args[2], depth, memo)
             or has_loose(e.args[3], depth + 1, memo))
    elif k == "mdata":
        r = has_loose(e.args[0], depth, memo)
    elif k == "proj":
        r = has_loose(e.args[2], depth, memo)
    else:
        r = False
    memo[key] = r
    return r


#: Words Lean's parser reads as tokens, never as identifiers: a name component spelled like one
#: prints in ``«»`` (``«fun»``), as Lean prints it.
KEYWORDS: frozenset[str] = frozenset({
    "at", "by", "calc", "decreasing_by", "deriving", "do", "else", "end", "exact", "from",
    "fun", "have", "if", "import", "in", "instance", "let", "local", "match", "mut", "namespace",
    "nomatch", "nofun", "open", "partial", "private", "protected", "public", "rfl", "section",
    "show", "suffices", "then", "theorem", "termination_by", "universe", "unsafe", "variable",
    "where", "with", "axiom", "def", "example", "abbrev", "structure", "class", "inductive",
    "forall", "exists", "Type", "Sort", "Prop", "return", "for", "unless", "try", "catch",
    "finally", "break", "continue", "macro", "syntax", "notation", "set_option", "attribute",
    "mutual", "opaque", "noncomputable", "meta", "module", "prelude", "sorry", "λ", "Π", "Σ",
})


def _letter_like(c: str) -> bool:
    """Lean's ``isLetterLike``: Greek (but λ, Π, Σ), Coptic, letter-like symbols, script and
    double-struck letters, sub- and superscript letters."""
    o = ord(c)
    return ((0x3B1 <= o <= 0x3C9 and o != 0x3BB)
            or (0x391 <= o <= 0x3A9 and o not in (0x3A0, 0x3A3))
            or 0x3CA <= o <= 0x3FB or 0x1F00 <= o <= 0x1FFE or 0x2100 <= o <= 0x214F
            or 0x1D49C <= o <= 0x1D59F)


def _subscript(c: str) -> bool:
    o = ord(c)
    return 0x2080 <= o <= 0x2089 or 0x2090 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A


def _id_first(c: str) -> bool:
    return (c.isascii() and c.isalpha()) or c == "_" or _letter_like(c)


def _id_rest(c: str) -> bool:
    return (_id_first(c) or (c.isascii() and c.isdigit()) or c in "'!?" or _subscript(c))


def escape_component(comp: str) -> str:
    """One name component as Lean reads it back: bare when it is an identifier (Lean's
    ``isIdFirst``/``isIdRest``) and no keyword, else in ``«»`` (``«5»``, ``«fun»``)."""
    if comp and _id_first(comp[0]) and all(_id_rest(c) for c in comp[1:]) \
            and comp not in KEYWORDS:
        return comp
    return f"«{comp}»"


def escape_name(name: str) -> str:
    """A constant's name as Lean reads it back: a :class:`~pytools.lean.olean.Name` prints as
    its text (:func:`~pytools.lean.olean.name_text`, the one name printer); a plain dotted
    string (a hand-made term) has each component escaped (:func:`escape_component`)."""
    if isinstance(name, Name):
        return str(name)
    return ".".join(escape_component(c) for c in name.split("."))


def binder_name(raw: str) -> tuple[str, bool]:
    """(readable name, hygienic?) of a binder name. A name with macro scopes
    (``inst._@.Proofs.Ceiling.Cache.791917390._hygCtx._hyg.3``) is an inaccessible name made
    by a macro: Lean prints it ``inst✝``, which no parser reads back; this printer gives it
    its base name (``inst``), made fresh where it is printed. Any other name prints as
    :func:`~pytools.lean.olean.name_text` prints it (``«5»``, never ``5``)."""
    try:
        parts: tuple = Name.parse(raw).parts
    except ValueError:  # a dotted string that is not a name's text (a hand-made term)
        parts = tuple(raw.split("."))
    # A Name (a str whose text is already escaped), so that printing it again keeps it as is.
    if "_@" in parts:
        i = parts.index("_@")
        return (Name(parts[:i]) if i else Name(("x",))), True
    name = Name(parts)
    return (name if str(name) else Name(("x",))), False


@dataclass(frozen=True)
class AppShape:
    """What printing an application of a constant to some arguments needs to know (from the
    constant's type): each parameter's binder info; ``undetermined``: an implicit argument
    among those given is neither an ``outParam`` nor in the type of a given explicit
    argument, so only the expected type can determine it; ``settled``: for each given
    argument, whether its expected type is determined by the others (every implicit
    parameter its type mentions is an ``outParam`` or in another given explicit
    argument's type)."""

    infos: tuple[str, ...]
    undetermined: bool
    settled: tuple[bool, ...]


def _first_component(name: str) -> str:
    """The first component of a constant's name, as Lean reads it back."""
    if isinstance(name, Name) and name.parts:
        return escape_component(str(name.parts[0]))
    return escape_component(name.split(".")[0])


class _Printer:
    def __init__(self, explicit: Callable[[str], tuple[bool, ...] | None] | None,
                 max_len: int, shown: frozenset[int] = frozenset()):
        self.explicit = explicit
        self.shown = shown
        self.budget = max_len
        self.loose: dict = {}
        self.taken: frozenset[str] = frozenset()  # first components of the constants named
        self.must_show: Callable[[str, int], AppShape | None] | None = None

    def fresh(self, name: str, ctx: list[str]) -> str:
        """``name`` escaped (:func:`escape_name`), renamed ``name_1``, ``name_2``... when an
        enclosing binder prints so, or when it would shadow a constant the statement names
        (a binder ``Nat`` beside a global ``Nat``): the text must read back as the same
        term."""
        name = escape_name(name)
        if name not in ctx and name.split(".")[0] not in self.taken:
            return name
        base = name.rstrip("»") + "_" if name.endswith("»") else name + "_"
        i = 1
        while True:
            cand = f"{base}{i}»" if name.endswith("»") else f"{base}{i}"
            if cand not in ctx and cand not in self.taken:
                return cand
            i += 1

    def at(self, e: Expr, ctx: list[str], need: int, tail: bool = False,
           settled: bool = False) -> str:
        """``e`` printed where precedence ``need`` is required. ``tail``: nothing follows it
        up to the end of the enclosing parentheses, so a binder (``∀ x, p``), which extends
        as far right as it can, needs no parentheses there (``A → ∀ x, p``)."""
        wrap = self.peek(e) < need and not (tail and self.peek(e) == 0)
        text, level = self.fmt(e, ctx, tail=wrap or tail, settled=settled)
        if level < need and not (tail and level == 0):
            return f"({text})"
        return text

    def peek(self, e: Expr) -> int:
        """The precedence ``e`` will print at, without printing it."""
        while e.kind == "mdata":
            e = e.args[0]
        if e.kind in ("lam", "letE"):
            return 0
        if e.kind == "forallE":
            return _ARROW if (e.args[3] == "default" and not has_loose(e.args[2], 0, self.loose)) \
                else 0
        if e.kind != "app":
            return _ATOM
        if id(e) in self.shown:
            return _MAX
        fn, n = e, 0
        while fn.kind == "app":
            fn, n = fn.args[0], n + 1
        head = fn.args[0] if fn.kind == "const" else None
        if head in INFIX and n == INFIX[head][0]:
            return INFIX[head][2]
        if head == "Exists" and n == 2 and e.args[1].kind == "lam":
            return 0
        if head == "Membership.mem" and n == 5:
            return 50
        if head == "OfNat.ofNat" and n == 3 and e.args[0].args[1].kind == "lit":
            return _ATOM
        return _MAX

    def fmt(self, e: Expr, ctx: list[str], tail: bool = False, settled: bool = False
            ) -> tuple[str, int]:
        if self.budget <= 0:
            return "…", _ATOM
        text, level = self._fmt(e, ctx, tail, settled)
        self.budget -= len(text) // 8 + 1  # a rough cap on work for huge terms
        return text, level

    def _fmt(self, e: Expr, ctx: list[str], tail: bool = False, settled: bool = False
             ) -> tuple[str, int]:
        while e.kind == "mdata":
            e = e.args[0]
        k = e.kind
        if k == "bvar":
            i = e.args[0]
            return (ctx[-1 - i] if i < len(ctx) else f"#{i}"), _ATOM
        if k == "const":
            return escape_name(e.args[0]), _ATOM
        if k == "sort":
            s = _sort_str(e.args[0])
            return s, (_ATOM if " " not in s else _MAX)
        if k == "lit":
            if e.args[0] == "nat":
                return str(e.args[1]), _ATOM
            return json.dumps(e.args[1], ensure_ascii=False), _ATOM
        if k in ("fvar", "mvar"):
            return ("?" if k == "mvar" else "") + e.args[0], _ATOM
        if k == "proj":
            return f"{self.at(e.args[2], ctx, _ATOM)}.{e.args[1] + 1}", _ATOM
        if k == "app":
            return self.app(e, ctx, tail, settled)
        if k == "const" and self.must_show:
            shape = self.must_show(e.args[0], 0)
            if shape is not None and shape.undetermined and not settled:
                return "@" + escape_name(e.args[0]), _ATOM
        if k == "forallE":
            return self.binders(e, ctx, "forallE", tail)
        if k == "lam":
            return self.binders(e, ctx, "lam", tail)
        if k == "letE":
            name, ty, val, body, _ = e.args
            n = self.fresh(binder_name(name)[0], ctx)
            return (f"let {n} : {self.at(ty, ctx, 0)} := {self.at(val, ctx, 0)}; "
                    f"{self.at(body, ctx + [n], 0, tail=True)}"), 0
        return f"<{k}>", _ATOM

    def app(self, e: Expr, ctx: list[str], tail: bool, settled: bool = False
            ) -> tuple[str, int]:
        """An application. ``settled``: it stands where its expected type is determined
        (an argument whose type the enclosing application's other arguments fix)."""
        fn, args = e, []
        while fn.kind == "app":
            args.append(fn.args[1])
            fn = fn.args[0]
        args.reverse()
        head = fn.args[0] if fn.kind == "const" else None
        shape = self.must_show(head, len(args)) if (head and self.must_show) else None

        def ok(j: int) -> bool:
            return shape is None or (j < len(shape.settled) and shape.settled[j])
        if id(e) in self.shown:
            # an instance argument that is not core's: every argument, no notation
            parts = [("@" if head else "") + self.at(fn, ctx, _MAX)]
            return " ".join(parts + [self.at(a, ctx, _ATOM, settled=True) for a in args]), _MAX
        if head in INFIX and len(args) == INFIX[head][0]:
            _, sym, prec, assoc = INFIX[head]
            n = len(args)
            left = self.at(args[-2], ctx, prec + (0 if assoc == "left" else 1),
                           settled=ok(n - 2))
            right = self.at(args[-1], ctx, prec + (0 if assoc == "right" else 1), tail,
                            settled=ok(n - 1))
            return f"{left} {sym} {right}", prec
        if head == "Not" and len(args) == 1:
            return "¬" + self.at(args[0], ctx, _ATOM), _MAX
        if head == "OfNat.ofNat" and len(args) == 3 and args[1].kind == "lit":
            # a numeral shows its type unless it is Nat's: `(5 : Tag)` may mean anything
            ty = self.at(args[0], ctx, 0)
            n = self.fmt(args[1], ctx)[0]
            return (n if ty == "Nat" else f"({n} : {ty})"), _ATOM
        if head == "Membership.mem" and len(args) == 5:
            # Lean ≥ 4.12: `a ∈ s` is `Membership.mem s a` (the collection first)
            return (f"{self.at(args[4], ctx, 51, settled=ok(4))} ∈ "
                    f"{self.at(args[3], ctx, 51, settled=ok(3))}"), 50
        if head == "Exists" and len(args) == 2 and args[1].kind == "lam":
            return self.binders(args[1], ctx, "exists")
        if shape is not None and shape.undetermined and not settled:
            # an implicit argument nothing printed determines: every argument, as Lean needs
            # them to elaborate the same term; a local instance hypothesis as `_` (Lean finds
            # it; an anonymous `[DecidableEq α]` has no name to write)
            parts = ["@" + escape_name(head or "")]
            for i, a in enumerate(args):
                local_inst = (i < len(shape.infos) and shape.infos[i] == "instImplicit"
                              and a.kind == "bvar")
                parts.append("_" if local_inst else self.at(a, ctx, _ATOM, settled=True))
            return " ".join(parts), _MAX
        mask = self.explicit(head) if (self.explicit and head) else None
        kept = [(j, a) for j, a in enumerate(args) if not mask or j >= len(mask) or mask[j]]
        if not kept:
            return self.fmt(fn, ctx, settled=settled)
        parts = [self.at(fn, ctx, _MAX)] + [self.at(a, ctx, _ATOM, settled=ok(j))
                                            for j, a in kept]
        return " ".join(parts), _MAX

    def binders(self, e: Expr, ctx: list[str], kind: str, tail: bool = False
                ) -> tuple[str, int]:
        """A run of binders of one kind, grouped as Lean prints them:
        ``∀ {T n : Nat} (D : Design T n), body``, ``A → B``, ``fun (x : A) => b``,
        ``∃ (x : A) (y : B), p``."""
        if (kind == "forallE" and e.args[3] == "default"
                and not has_loose(e.args[2], 0, self.loose)):
            dom = self.at(e.args[1], ctx, _ARROW + 1)
            return f"{dom} → {self.at(e.args[2], ctx + ['_'], _ARROW, tail)}", _ARROW
        groups: list[tuple[str, list[str], str]] = []  # (binder info, names, type text)
        cur = e
        inner = list(ctx)
        while True:
            if kind == "exists":
                if cur.kind != "lam":
                    break
                name, ty, body, bi = cur.args
                bi = "default"
            else:
                if cur.kind != ("forallE" if kind == "forallE" else "lam"):
                    break
                name, ty, body, bi = cur.args
                if (kind == "forallE" and bi == "default"
                        and not has_loose(body, 0, self.loose) and groups):
                    break  # the rest is an arrow
            shown, hygienic = binder_name(name)
            n = self.fresh(shown, inner)
            tytext = self.at(ty, inner, 0)
            anonymous_inst = bi == "instImplicit" and hygienic
            same_type = (groups and groups[-1][0] == bi and groups[-1][2] == tytext
                         and not anonymous_inst and groups[-1][1][-1] != ""
                         and not has_loose(ty, 0, self.loose))
            if same_type:
                groups[-1][1].append(n)
            else:
                groups.append((bi, ["" if anonymous_inst else n], tytext))
            inner.append(n)
            cur = body
            if kind == "exists":
                if (cur.kind == "app" and cur.args[0].kind == "app"
                        and cur.args[0].args[0].kind == "const"
                        and cur.args[0].args[0].args[0] == "Exists"
                        and cur.args[1].kind == "lam"):
                    cur = cur.args[1]
                    continue
                break
        parts = []
        for bi, names, tytext in groups:
            lb, rb = _BRACKETS.get(bi, "()")
            inside = tytext if names == [""] else f"{' '.join(names)} : {tytext}"
            parts.append(f"{lb}{inside}{rb}")
        lead, sep = {"forallE": ("∀ ", ", "), "lam": ("fun ", " => "),
                     "exists": ("∃ ", ", ")}[kind]
        return lead + " ".join(parts) + sep + self.at(cur, inner, 0, tail=True), 0


def _constants(e: Expr) -> set[str]:
    """Every constant name in ``e`` (an iterative walk over shared subterms)."""
    out: set[str] = set()
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.kind == "const":
            out.add(x.args[0])
        elif x.kind in ("app", "lam", "forallE", "letE", "mdata", "proj"):
            stack.extend(a for a in x.args if isinstance(a, Expr))
    return out


def pp_expr(e: Expr, max_len: int = 20000,
            explicit: Callable[[str], tuple[bool, ...] | None] | None = None,
            shown: frozenset[int] = frozenset(),
            must_show: Callable[[str, int], AppShape | None] | None = None) -> str:
    """Print a term readably and deterministically, close to Lean's own notation.

    Binders keep their names (a clash with an enclosing name gets a number suffix); a
    hygienic name (macro scopes, ``inst._@.M._hyg.3``) prints as its base name (``inst``)
    and an instance binder with such a name as ``[DecidableEq α]``. Runs of binders are grouped
    (``∀ {T n : Nat} (D : Design T n), …``), ``A → B`` for non-dependent explicit ones,
    ``fun (x : A) => b``, ``∃ (x : A), p`` for ``Exists fun x => p``, ``let x : A := v; b``.
    Constants print with full names (universe arguments omitted); fully applied core
    operators print infix (:data:`INFIX`) with Lean's precedences, ``¬p``, ``a ∈ s``, and
    ``OfNat.ofNat T n i`` as ``n`` at ``Nat``, ``(n : T)`` at any other type. When
    ``explicit`` is given (constant name -> which leading parameters are explicit),
    implicit and instance arguments are omitted, like Lean's default printer, except in
    the applications ``shown`` names (by ``id``): those print ``@f`` with every argument
    and no notation, so that an instance argument that is not core's is seen
    (``@LE.le Nat M.argLE 2 5``, never ``2 ≤ 5``: rule
    ``statement-instance``). ``must_show`` (constant name, arguments given -> its binder
    infos when the application must print every argument, else None) marks applications
    whose implicit arguments nothing printed determines (``@Std.TreeMap.empty Nat Nat
    Ord.compare``): the text must elaborate back to the same term (rule ``statement-text``).
    Names print as Lean reads them (``«5»``, ``«fun»``); a binder that would shadow a
    constant the statement names or an enclosing binder is renamed (``Nat_1``, ``x_1``).
    Output past ``max_len`` is elided with ``…``.
    """
    printer = _Printer(explicit, max_len, shown)
    printer.must_show = must_show
    printer.taken = frozenset(_first_component(n) for n in _constants(e))
    try:
        text = printer.at(e, [], 0, tail=True)
    except RecursionError:
        return "… (term too deep to print)"
    return text if len(text) <= max_len else text[:max_len] + "…"
