"""How a declaration's statement is shown and hashed: a readable printer and a Merkle hash of
the term (the statement hash that certificates and verify compare)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

from pytools.lean.olean import Expr, Level


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

