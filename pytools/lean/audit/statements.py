"""How a declaration's statement is hashed (the statement hash that certificates, reviews and
verify compare); the readable printer lives in :mod:`.printer` and is re-exported here."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pytools.lean.olean import Expr, Level, name_bytes

from .printer import INFIX, pp_expr

__all__ = ["INFIX", "pp_expr", "statement_sha256"]


def _level_digest(lv: Level, lparams: dict[str, int], memo: dict) -> bytes:
    hit = memo.get(id(lv))
    if hit is not None:
        return hit
    h = hashlib.sha256()
    h.update(lv.kind.encode() + b"\0")
    if lv.kind == "param":
        idx = lparams.get(lv.args[0])
        h.update(f"#{idx}".encode() if idx is not None else b"n:" + name_bytes(lv.args[0]))
    elif lv.kind == "mvar":
        h.update(name_bytes(lv.args[0]))
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
            h.update(name_bytes(x.args[0]) + b"\0")
            for lv in x.args[1]:
                h.update(_level_digest(lv, lparams, lmemo))
        elif k == "lit":
            h.update(x.args[0].encode() + b"\0" + str(x.args[1]).encode())
        elif k in ("fvar", "mvar"):
            h.update(name_bytes(x.args[0]))
        elif k in ("lam", "forallE"):
            h.update(x.args[3].encode() + b"\0")
        elif k == "letE":
            h.update(b"1" if x.args[4] else b"0")
        elif k == "proj":
            h.update(name_bytes(x.args[0]) + b"\0" + str(x.args[1]).encode())
        for s in subs:
            h.update(memo[id(s)])
        memo[id(x)] = h.digest()
    return memo[id(e)]


def statement_sha256(type_expr: Expr, level_params: Sequence[str] = ()) -> str:
    """SHA-256 (hex) of the canonical serialisation of a declaration's type.

    Canonical form (version tag ``lean-statement-v2``): a Merkle hash over the term: each node
    hashes its kind, its own data and its children's digests. Names are hashed by their
    components (:func:`~pytools.lean.olean.name_bytes`: ``A.«b.c»`` and ``A.b.c``, ``x.1`` and
    ``x.«1»`` hash apart; v1 hashed the dotted string, which merged them). Covered: constant
    names and their universe arguments, sorts and universe levels (level parameters by
    *position* in the declaration's level-parameter list), de Bruijn indices, binder *kinds*
    (explicit/implicit/strict/instance), binder types, let values and non-dep flags,
    literals, projections (structure name, index). Not covered: binder names and ``mdata``
    annotations, so renaming a bound variable or universe parameter leaves the hash unchanged
    while any change of meaning changes it. Independent of memory layout and run.
    """
    lparams = {n: i for i, n in enumerate(level_params)}
    root = _expr_digest(type_expr, lparams, {}, {})
    h = hashlib.sha256(b"lean-statement-v2\0")
    h.update(str(len(level_params)).encode() + b"\0")
    h.update(root)
    return h.hexdigest()

