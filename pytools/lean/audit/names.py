"""What a reader of a name or a printed statement can be misled by: look-alike names, characters
outside the allowed scripts, invisible characters. Used by the name rules of :mod:`.rules`.

* **Confusable skeleton** (Unicode UTS #39 "skeleton", approximated): NFKC normalisation
  (fullwidth forms, letter-like symbols such as ``ℕ``, mathematical alphanumerics: ``𝐍`` is
  ``N``), then every character mapped to one representative of its class in Unicode's
  ``confusables.txt`` (Cyrillic ``а`` and Greek ``α`` with Latin ``a``, ``1``/``I``/``l``,
  ``0``/``O``/``ο``...). The data is the maintained PyPI package ``confusable-homoglyphs``
  (3.3.1, pinned in ``pyproject.toml``; its ``confusables.json`` is built from Unicode's
  ``confusables.txt``). Its one-to-many mappings (``m`` with ``rn``) are not used: a class is
  formed from single-character mappings only.
* **Allowed characters** in the library's names (:func:`outside_allowed`): see
  :data:`.policy.NAME_CHARS`.
* **Invisible characters** (:func:`invisible`): format characters (``Cf``: bidi controls such
  as U+202E, zero-width joiners and spaces, the BOM), line and paragraph separators, controls
  that a JSON string does not escape, spaces other than U+0020, private-use, unassigned and
  surrogate code points, and the other default-ignorable code points of Unicode's
  ``DerivedCoreProperties.txt`` that are not ``Cf`` (variation selectors, the combining
  grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian free variation selectors).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from pytools.lean.olean import Expr, Name, dotted
from pytools.lean.olean.names import PLAIN_IDENTIFIER, is_identifier

from .policy import NAME_CHARS

_DEFAULT_IGNORABLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0]
    + list(range(0xFE00, 0xFE10)) + list(range(0xE0100, 0xE01F0)))


def invisible(c: str) -> bool:
    """Whether ``c`` prints as nothing, or as something else than itself (see the module
    docstring for the classes)."""
    cat = unicodedata.category(c)
    o = ord(c)
    if cat in ("Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
        return True
    if cat == "Zs":
        return c != " "
    if cat == "Cc":
        return o >= 0x7F  # below 0x20 a printed string literal shows \n, \t, \u0000...
    return o in _DEFAULT_IGNORABLE


def hidden_chars(text: str) -> list[str]:
    """The :func:`invisible` characters of ``text``, in order."""
    if text.isascii() and text.isprintable():
        return []  # printable ASCII: nothing hidden (the common case, without a lookup each)
    return [c for c in text if invisible(c)]


def describe(c: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    return f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}"


def outside_allowed(c: str) -> bool:
    """Whether a character of a library name is outside :data:`.policy.NAME_CHARS`."""
    o = ord(c)
    return not any(lo <= o <= hi for lo, hi in NAME_CHARS)


@cache
def _prototypes() -> dict[int, str]:
    """Character -> representative of its confusable class (``str.translate`` table)."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text(
        encoding="utf-8")
    data: dict[str, list[dict[str, str]]] = json.loads(raw)
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    def better(a: str, b: str) -> str:  # ASCII first, then the lower code point
        return min(a, b, key=lambda ch: (not ch.isascii(), ord(ch)))

    for src, homoglyphs in data.items():
        if len(src) != 1:
            continue
        for h in homoglyphs:
            tgt = h["c"].strip("\u200e\u200f")
            if len(tgt) != 1:
                continue
            a, b = find(src), find(tgt)
            if a != b:
                keep = better(a, b)
                parent[a if keep == b else b] = keep
    return {ord(c): find(c) for c in parent if find(c) != c}


def skeleton(text: str) -> str:
    """The confusable skeleton of a text: two texts a reader can mistake for each other share
    it (``Nаt.add`` with a Cyrillic ``а``, ``ℕat.add`` and ``Nat.add`` do)."""
    if text.isascii():  # NFKC leaves ASCII as it is; ASCII maps to ASCII: a byte table
        return text.encode().translate(_ascii_table()).decode()
    return unicodedata.normalize("NFKC", text).translate(_prototypes())


@cache
def _ascii_table() -> bytes:
    protos = _prototypes()
    return bytes(ord(protos.get(i, chr(i))) for i in range(128)) + bytes(range(128, 256))


@dataclass(frozen=True)
class CoreIndex:
    """The core library's names as a reader sees them: ``dotted``: dotted text (``«»``
    ignored) -> name, for every core name that differs from its dotted text or whose dotted
    text no core name has; ``skeletons``: skeleton -> one core name's dotted text."""

    dotted: dict[str, str]
    skeletons: dict[str, str]


@lru_cache(maxsize=2)
def core_index(core_names: frozenset[str]) -> CoreIndex:
    """The :class:`CoreIndex` of ``core_names`` (memoised: a pure function of its argument;
    ~300k names, about a second)."""
    names = list(core_names)
    texts = [dotted(c) for c in names]
    # the ASCII names (nearly all) in one pass of the byte table; no name holds a newline
    ascii_at = [i for i, t in enumerate(texts) if t.isascii()]
    joined = "\n".join(texts[i] for i in ascii_at).encode().translate(_ascii_table())
    sks = [""] * len(texts)
    for i, sk in zip(ascii_at, joined.decode().split("\n"), strict=True):
        sks[i] = sk
    for i, t in enumerate(texts):
        if not t.isascii():
            sks[i] = skeleton(t)
    looks: dict[str, str] = {}
    skeletons: dict[str, str] = {}
    for c, look, sk in zip(names, texts, sks, strict=True):
        if look != c and c < looks.get(look, "\U0010ffff"):
            looks[look] = c
        if look < skeletons.get(sk, "\U0010ffff"):  # the least: the same on every run
            skeletons[sk] = look
    return CoreIndex(looks, skeletons)


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class StatementAtoms:
    """What a library declaration's type shows a reader besides core constants: the names of
    its binders (with their hygienic suffix cut: ``inst._@.M._hyg.3`` is ``inst``) and its
    string literals."""

    declaration: str
    module: str
    binders: tuple[str, ...]
    literals: tuple[str, ...]


def statement_atoms(declaration: str, module: str, ty: Expr) -> StatementAtoms:
    """The binder names and string literals of ``ty`` (shared subterms visited once)."""
    binders: dict[str, None] = {}
    literals: dict[str, None] = {}
    seen: set[int] = set()
    stack = [ty]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        k = e.kind
        if k in ("lam", "forallE", "letE"):
            binders[str(_user_part(e.args[0]))] = None
        if k == "lit" and e.args[0] == "str":
            literals[e.args[1]] = None
        stack.extend(a for a in e.args if isinstance(a, Expr))
    binders.pop("", None)
    return StatementAtoms(declaration, module, tuple(binders), tuple(literals))


def _user_part(raw: str) -> Name:
    """A binder name without its macro scopes (what the printer shows before its ``✝``)."""
    try:
        parts = Name.parse(raw).parts
    except ValueError:  # a dotted string that is not a name's text (a hand-made term)
        parts = tuple(raw.split("."))
    return Name(parts[:parts.index("_@")] if "_@" in parts else parts)


def name_oddity(name: str) -> str | None:
    """What is odd about a name for rule ``name-chars``: a string component with a character
    outside :data:`.policy.NAME_CHARS`, or one that is not an identifier; None if nothing.
    Compiler-made parts are not judged: numeric components, macro scopes (from ``_@`` on),
    and a ``_private.<module>.<n>.`` prefix (Lean's own marker of a ``private`` name)."""
    parts = _user_part(name).parts
    if parts[:1] == ("_private",):
        nums = [i for i, c in enumerate(parts) if isinstance(c, int)]
        parts = parts[nums[0] + 1:] if nums else ()
    for comp in (c for c in parts if isinstance(c, str)):
        if PLAIN_IDENTIFIER.fullmatch(comp):
            continue  # ASCII letters, digits, _'!? starting with a letter or _: fine
        bad = [c for c in comp if outside_allowed(c)]
        if bad:
            return f"{describe(bad[0])} in the component \"{comp}\""
        if not is_identifier(comp):
            return f"the component \"{comp}\" is not an identifier"
    return None
