"""What a statement means: its term plus every library definition it reaches (comparator-style).

A theorem's statement hash covers its type only. But ``Exact D → 2 ^ (T * n) ≤ s`` means what
``Exact`` means: redefine ``Exact`` as ``False`` and the statement, unchanged, says nothing.
So the reviewed statements (:mod:`.reviewed`) pin, beside each statement, the digest of every
library constant in its *meaning closure*: the constants the statement mentions, then, for
each library constant met, those its type mentions, those its body mentions when it is a
definition (the kernel unfolds those; a theorem's proof and an opaque's value never change
what a statement means), and the constructors of an inductive type. Core constants end the
walk: the core library is pinned by the toolchain's hash and its names cannot be redeclared
by the library (rule ``core-name``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from pytools.lean.olean import ConstantInfo, name_bytes

from .statements import statement_sha256

#: v2: names are hashed by their components (:func:`~pytools.lean.olean.name_bytes`), v1 by
#: their dotted text, which merged twins such as ``A.«b.c»`` and ``A.b.c``.
MEANING_VERSION = b"lean-meaning-v2\0"


Key = tuple[str, str]


class Meanings:
    """Digests of library constants and meaning closures of statements, memoised.

    ``resolve``: (name, module it occurs in) -> (module, name) of the declaration meant;
    ``info``: key -> its :class:`ConstantInfo`; ``views``: module -> a view with ``.module``
    (the decoded :class:`~pytools.lean.olean.Module`) and ``.real_kinds``; ``library``: the
    library's module names."""

    def __init__(self, resolve: Callable[[str, str], Key], info: Callable[[Key], ConstantInfo],
                 views: Mapping[str, Any], library: set[str]):
        self._resolve = resolve
        self._info = info
        self._views = views
        self._library = library
        self.digests: dict[str, str] = {}
        self._next: dict[Key, tuple[Key, ...]] = {}

    def _kind(self, key: Key, ci: ConstantInfo) -> str:
        real = self._views[key[0]].real_kinds.get(ci.name)
        return real if ci.kind == "axiom" and real not in (None, "axiom") else ci.kind

    def digest(self, key: Key) -> str:
        """SHA-256 of one library constant's meaning: kind, universe parameters, type, and
        the body of a definition (not of a theorem or an opaque); constructors are listed by
        name (each is a constant of the closure with its own digest)."""
        label = f"{key[1]}@{key[0]}"
        hit = self.digests.get(label)
        if hit is not None:
            return hit
        ci = self._info(key)
        m = self._views[key[0]].module
        kind = self._kind(key, ci)
        h = hashlib.sha256(MEANING_VERSION)
        h.update(f"{kind}\0{len(ci.level_params)}\0".encode())
        h.update(statement_sha256(m.expr(ci.type_ptr), ci.level_params).encode())
        refs = set(m.const_refs(ci.type_ptr))
        if kind == "definition" and ci.value_ptr is not None:
            h.update(b"\0value\0")
            h.update(statement_sha256(m.expr(ci.value_ptr), ci.level_params).encode())
            refs |= m.const_refs(ci.value_ptr)
        if ci.ctors:
            h.update(b"\0ctors\0" + b"\1".join(name_bytes(c) for c in ci.ctors))
            refs |= set(ci.ctors)
        self.digests[label] = h.hexdigest()
        self._next[key] = tuple(sorted({self._resolve(r, key[0]) for r in refs} - {key}))
        return self.digests[label]

    def closure(self, theorem: Key) -> tuple[str, tuple[str, ...]]:
        """(closure SHA-256, library constants in the closure, as ``name@module``) of
        ``theorem``'s statement.

        The hash covers the statement's own hash, then each library constant of the closure
        with its digest, then the names of the core constants the closure reaches, all
        sorted: any change of a definition a statement depends on changes it."""
        ci = self._info(theorem)
        m = self._views[theorem[0]].module
        ty = m.expr(ci.type_ptr)
        todo = sorted({self._resolve(r, theorem[0]) for r in m.const_refs(ci.type_ptr)})
        seen: set[Key] = set()
        core: set[str] = set()
        while todo:
            key = todo.pop()
            if key in seen or key == theorem:
                continue
            seen.add(key)
            if key[0] not in self._library:
                core.add(key[1])
                continue
            self.digest(key)
            todo.extend(self._next[key])
        used = sorted(f"{name}@{mod}" for mod, name in seen if mod in self._library)
        h = hashlib.sha256(MEANING_VERSION)
        h.update(statement_sha256(ty, ci.level_params).encode())
        for mod, name in sorted(k for k in seen if k[0] in self._library):
            label = f"{name}@{mod}"
            h.update(b"\0" + name_bytes(name) + b"@" + name_bytes(mod) + b"\0"
                     + self.digests[label].encode())
        h.update(b"\0core\0" + b"\1".join(name_bytes(c) for c in sorted(core)))
        return h.hexdigest(), tuple(used)
