"""What the rules look at, read once from each library module's ``.olean`` parts: its header,
its declarations' safety, and the entries it wrote to trust-relevant environment extensions.

Entry shapes are the ones measured on the fixtures (``tests/fixtures/lean/AuditFixture``):
``implemented_by``, ``extern`` and ``export`` store ``(declaration, target)``; ``init`` stores
``(declaration, initializer?)``; ``csimp``, macro, elaborator and unexpander attributes are
scoped entries around ``(from, to, lemma)`` or ``(key, declaration)``; ``meta`` stores the
declaration's name. An entry of another shape is still reported, by the names it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytools.lean.olean import ImportRecord, Module, OleanError
from pytools.lean.olean.region import TAG_ARRAY, TAG_MAX_CTOR, TAG_STRING

from .policy import TRUST_EXTENSIONS

INSTANCE_EXT = "Lean.Meta.instanceExtension"
GLOBAL_INSTANCE_EXT = "Lean.Meta.globalInstanceExtension"
CLASS_EXT = "Lean.classExtension"


@dataclass(frozen=True)
class ExtEntry:
    """One trust-relevant entry: the extension, the declaration it is about, a detail (the
    implementation, the external symbol, the syntax kind...)."""

    extension: str
    declaration: str
    detail: str = ""


@dataclass(frozen=True)
class InstanceEntry:
    """An instance registration (``instance``, ``attribute [instance]``, ``scoped
    instance``): the declaration, the class (first key of its discrimination-tree entry),
    the namespace of a scoped one, and ``keys``: the constants of the key Lean files it
    under (its discrimination-tree path, computed by Lean after its reducible unfolding,
    beta and zeta: ``LE``, ``Nat`` for an ``instance : (fun T => LE T) Nat``), None for a
    registration that carries no key."""

    declaration: str
    class_name: str | None
    scope: str | None = None
    keys: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ModuleFacts:
    """The trust-relevant facts of one library module."""

    name: str
    path: str
    imports: tuple[ImportRecord, ...]
    declarations: tuple[str, ...]
    unsafe: tuple[str, ...]
    partial: tuple[str, ...]
    opaques: tuple[str, ...]
    extensions: tuple[str, ...]
    entries: tuple[ExtEntry, ...]
    instances: tuple[InstanceEntry, ...]
    classes: tuple[str, ...]


def _names_in(m: Module, ptr: int, depth: int = 3) -> list[str]:
    """Names (and strings) found in an entry object, breadth-first, for unknown shapes."""
    out: list[str] = []
    todo = [(ptr, 0)]
    while todo:
        p, d = todo.pop(0)
        if p & 1:
            continue
        tag = m.tag(p)
        if tag == TAG_STRING:
            out.append(m.string(p))
            continue
        if tag in (1, 2):
            try:
                out.append(m.name(p))
                continue
            except OleanError:
                pass
        if d >= depth:
            continue
        if tag == TAG_ARRAY:
            todo.extend((q, d + 1) for q in m.array(p)[:8])
        elif tag <= TAG_MAX_CTOR:
            todo.extend((q, d + 1) for q in m.fields(p))
    return [n for n in out if n]


def _decode(m: Module, ext: str, e: int) -> ExtEntry:
    """Decode one entry of a trust-relevant extension (measured shapes first)."""
    if ext in ("Lean.Compiler.implementedByAttr", "Lean.exportAttr"):
        decl, target = m.fields(e, 2)[:2]
        return ExtEntry(ext, m.name(decl), m.name(target))
    if ext == "Lean.externAttr":
        decl = m.fields(e, 2)[0]
        symbols = [n for n in _names_in(m, m.fields(e, 2)[1]) if n != "all"]
        return ExtEntry(ext, m.name(decl), ", ".join(symbols))
    if ext in ("Lean.regularInitAttr", "Lean.builtinInitAttr"):
        decl, init = m.fields(e, 2)[:2]
        how = "an IO action run on load" if init & 1 else f"initialised by {m.name(init)} on load"
        return ExtEntry(ext, m.name(decl), how)
    if ext.endswith(("metaExt", "declMetaExt")):
        return ExtEntry(ext, m.name(e), "")
    if ext == "Lean.Compiler.CSimp.ext":
        _, payload = m.scoped_payload(e)
        src, dst, thm = m.fields(payload, 3)[:3]
        return ExtEntry(ext, m.name(thm), f"{m.name(src)} ↦ {m.name(dst)}")
    if ext == "Lean.Parser.parserExtension":
        # scoped entries around OLeanEntry: token (string) | kind (name)
        # | category (cat, decl, behavior)
        # | parser (cat, decl, prio): report the parser or category declaration; its tokens
        # and node kinds come with it
        _, payload = m.scoped_payload(e)
        tag = m.tag(payload)
        if tag in (2, 3):
            cat, decl = m.fields(payload, 2)[:2]
            return ExtEntry(ext, m.name(decl), m.name(cat))
        return ExtEntry(ext, "", "")
    if ext.endswith("Attribute") and m.tag(e) in (0, 1):
        _, payload = m.scoped_payload(e)
        if m.tag(payload) == 0 and len(m.fields(payload)) == 2:
            key, decl = m.fields(payload, 2)
            return ExtEntry(ext, m.name(decl), m.name(key))
    names = _names_in(m, e)
    return ExtEntry(ext, names[0] if names else "", ", ".join(names[1:4]))


#: ``Lean.Meta.DiscrTree.Key`` constructors with a name (``const n arity``, ``proj s i
#: arity``), by object tag: star 0, other 1, lit 2, fvar 3, const 4, arrow 5, proj 6 (the
#: nullary ones are boxed scalars; const measured on ``tests/fixtures/lean/AuditFixture/
#: Text.lean``: ``LE Nat`` is ``[const LE 1, const Nat 0]``).
KEY_CONST, KEY_PROJ = 4, 6


def _key_names(m: Module, keys: int) -> tuple[str, ...]:
    """The constants of a discrimination-tree path: each ``const`` and ``proj`` key's name.
    A key object of another shape is refused (an unknown layout must not pass unjudged)."""
    out = []
    for k in m.array(keys):
        if k & 1:
            continue  # star, other, arrow: no constant
        tag = m.tag(k)
        if tag in (KEY_CONST, KEY_PROJ):
            out.append(m.name(m.fields(k)[0]))
        elif tag not in (2, 3):  # lit, fvar
            raise OleanError(f"{m.path}: discrimination-tree key at {k:#x} has tag {tag}")
    return tuple(out)


def _instance(m: Module, e: int) -> InstanceEntry:
    """``instanceExtension`` entry: scoped wrapper around ``{keys, val, priority,
    globalName?, ...}``; the first key is ``Key.const <class> arity`` (measured)."""
    scope, payload = m.scoped_payload(e)
    keys, val = m.fields(payload, 2)[:2]
    cls = None
    ks = m.array(keys)
    if ks and m.tag(ks[0]) <= TAG_MAX_CTOR and m.fields(ks[0]):
        try:
            cls = m.name(m.fields(ks[0])[0])
        except OleanError:
            cls = None
    decl = m.name(m.fields(val, 1)[0]) if m.tag(val) == 4 else ""
    return InstanceEntry(decl, cls, scope, _key_names(m, keys))


def module_facts(name: str, m: Module) -> ModuleFacts:
    """Read the facts of one module, over all its parts (later parts repeat earlier entries:
    each distinct entry is kept once)."""
    declarations: dict[str, None] = {}
    unsafe: dict[str, None] = {}
    partial: dict[str, None] = {}
    opaques: dict[str, None] = {}
    extensions: dict[str, None] = {}
    entries: dict[ExtEntry, None] = {}
    instances: dict[InstanceEntry, None] = {}
    classes: dict[str, None] = {}
    for i in range(len(m.parts)):
        for c in m.constants(i):
            declarations[c.name] = None
            if c.is_unsafe:
                unsafe[c.name] = None
            if c.is_partial:
                partial[c.name] = None
            if c.kind == "opaque":
                opaques[c.name] = None
        for ext, ents in m.entries(i).items():
            if not ents:
                continue
            extensions[ext] = None
            if ext in TRUST_EXTENSIONS:
                for e in ents:
                    entries[_decode(m, ext, e)] = None
            elif ext == INSTANCE_EXT:
                for e in ents:
                    instances[_instance(m, e)] = None
            elif ext == GLOBAL_INSTANCE_EXT:
                for e in ents:
                    scope, payload = m.scoped_payload(e)
                    instances[InstanceEntry(m.name(payload), None, scope)] = None
            elif ext == CLASS_EXT:
                for e in ents:
                    classes[m.name(m.fields(e, 1)[0])] = None
    # an instance registered through both extensions appears twice: keep the one with a class
    by_decl: dict[tuple[str, str | None], InstanceEntry] = {}
    for inst in instances:
        key = (inst.declaration, inst.scope)
        if key not in by_decl or by_decl[key].keys is None:
            by_decl[key] = inst
    return ModuleFacts(
        name=name, path=str(m.path), imports=tuple(m.import_records()),
        declarations=tuple(declarations), unsafe=tuple(unsafe), partial=tuple(partial),
        opaques=tuple(opaques),
        extensions=tuple(sorted(extensions)), entries=tuple(entries),
        instances=tuple(by_decl.values()), classes=tuple(classes))


def class_names(m: Module) -> list[str]:
    """Classes a (library or core) module declares: its ``classExtension`` entries."""
    out = []
    for i in range(len(m.parts)):
        for e in m.entries(i).get(CLASS_EXT, ()):
            out.append(m.name(m.fields(e, 1)[0]))
    return out


def instance_names(m: Module) -> list[str]:
    """Declarations a (core) module registers as instances: its ``instanceExtension`` and
    ``globalInstanceExtension`` entries (rule ``statement-instance`` accepts an instance
    argument built from these)."""
    out: dict[str, None] = {}
    for i in range(len(m.parts)):
        ents = m.entries(i)
        for e in ents.get(INSTANCE_EXT, ()):
            decl = _instance(m, e).declaration
            if decl:
                out[decl] = None
        for e in ents.get(GLOBAL_INSTANCE_EXT, ()):
            out[m.name(m.scoped_payload(e)[1])] = None
    return list(out)
