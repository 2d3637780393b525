"""The imported library as an index: constant name -> module, over a LEAN_PATH-like search
path, cached on disk by file stamps."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytools.files import atomic_write_text
from pytools.lean.olean import Module, Name

from .facts import class_names, instance_names
from .records import AuditError

#: 4: names are stored as their printed text (``A.«b.c»``), which determines the components
#: (3 stored the dotted string, which merged twins).
CACHE_VERSION = 4


def module_file(module: str, search_path: Sequence[Path]) -> Path | None:
    rel = Path(*map(str, Name.parse(module).parts)).with_suffix(".olean")
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

    The index of each imported module (its imports, constant names, the classes it declares
    and the declarations it registers as instances) is cached on disk in
    ``<cache_dir>/index-v4.json``, keyed by the ``.olean`` file's absolute path and checked
    against its (size, mtime_ns) and those of its
    ``.server``/``.private`` parts: an unchanged library (e.g. the core library of a toolchain)
    is not re-read by later audits, whatever the rest of the search path; a changed file is
    re-indexed.

    ``core_dir``: the toolchain's core library (verified by :mod:`pytools.lean.toolchain`). A
    module it holds is read from it first, as Lean itself does (the toolchain puts its library
    first on ``LEAN_PATH``), so a look-alike ``Init/Core.olean`` elsewhere on the search path
    is never read in its place; :meth:`is_core` says whether a module was read from it.
    """

    def __init__(self, search_path: Sequence[Path], cache_dir: Path | None = None,
                 core_dir: Path | None = None):
        self.core_dir = Path(core_dir).resolve() if core_dir is not None else None
        self.search_path = [Path(p) for p in search_path]
        if self.core_dir is not None:
            self.search_path = [self.core_dir] + [p for p in self.search_path
                                                  if p.resolve() != self.core_dir]
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
        self.classes: set[str] = set()
        self.instances: set[str] = set()  # declarations the imported modules register

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

    def is_core(self, module: str) -> bool:
        """Whether ``module`` was found in the core library folder."""
        if self.core_dir is None:
            return False
        path = self.path_of(module).resolve()
        return self.core_dir in path.parents

    def module(self, name: str) -> Module:
        m = self._mods.get(name)
        if m is None:
            m = Module(self.path_of(name))
            self._mods[name] = m
        return m

    def _index_entry(self, name: str, classes: bool = True) -> dict:
        """The cached index entry of a module: its imports, constant names and (when
        ``classes``, which decodes its extension entries: slower) the classes it declares and
        the declarations it registers as instances."""
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
        if (hit is not None and hit.get("stamp") == stamp and hit.get("module") == name
                and (not classes or "instances" in hit)):
            return hit
        m = self._mods.get(name) or Module(path)
        entry = {"module": name, "stamp": stamp, "imports": m.imports(),
                 "names": m.const_names()}
        if classes:
            entry["classes"] = class_names(m)
            entry["instances"] = instance_names(m)
        self._cache[key] = entry
        self._cache_dirty = True
        return entry

    def imports_of(self, module: str) -> list[str]:
        """The direct imports of an imported (non-library) module, from the index."""
        return list(self._index_entry(module, classes=False)["imports"])

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
            self.classes.update(entry["classes"])
            self.instances.update(entry["instances"])
            for c in entry["names"]:
                self.name_to_module.setdefault(c, name)
        self.save_cache()

    def core_names(self) -> frozenset[str]:
        """Every constant name of every module of the core library (``Init``, ``Std``,
        ``Lean``, ``Lake``: all ``.olean`` files under ``core_dir``), imported or not."""
        if self.core_dir is None:
            raise AuditError("no core library folder given")
        names: set[str] = set()
        for path in sorted(self.core_dir.rglob("*.olean")):
            rel = path.relative_to(self.core_dir).with_suffix("")
            names.update(self._index_entry(Name(rel.parts), classes=False)["names"])
        self.save_cache()
        return frozenset(names)

    def save_cache(self) -> None:
        if not (self._cache_dirty and self._cache_path):
            return
        try:
            # no fsync: a cache lost in a crash is rebuilt
            atomic_write_text(self._cache_path, json.dumps(self._cache), fsync=False)
            self._cache_dirty = False
        except OSError:
            pass  # the cache is an optimisation only

