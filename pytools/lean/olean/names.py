"""Lean names as Lean has them: a list of components, each a string or a number.

Lean's ``Name`` (``src/Init/Prelude.lean``) is ``anonymous | str (pre : Name) (s : String) |
num (pre : Name) (i : Nat)``: ``A.«b.c»`` (two components, ``A`` and ``b.c``) and ``A.b.c``
(three) are two names, and so are ``x.1`` (a numeric component) and ``x.«1»`` (a string
component of the same digits). :class:`Name` keeps the components and is the key everywhere
in the reader and the audit.

A :class:`Name` is a ``str`` whose value is the name *printed as Lean prints it*
(:func:`name_text`, the one printing function every printer and message uses), so it is
compared, hashed and ordered by that text, and a name that needs no escaping equals the
dotted string a reader writes (``Name(("Nat", "add")) == "Nat.add"``). The text determines
the components (:meth:`Name.parse` inverts it), so two names are equal exactly when their
components are.

How a component prints, after Lean's ``Name.escapePart`` and ``Name.toStringWithSep``
(``src/Init/Meta/Defs.lean``, Lean 4.28):

* a number prints as its decimal digits;
* a string that is a valid identifier (:func:`is_id_first` then :func:`is_id_rest`
  characters) prints as it is, except a first component that is a keyword (``fun``, ``by``...:
  :data:`KEYWORDS`), which Lean escapes so that the text reads back as a name;
* any other string (empty, starting with a digit, holding a ``.``, a space, a character outside
  Lean's identifier rules) is wrapped in ``«»``.

One departure, for injectivity: Lean cannot escape a component holding ``»`` (it prints it
raw, and the text then reads back as another name). Here such a component, and one holding a
backslash, prints inside ``«»`` with ``\\`` before each ``\\`` and ``»``: ``«a\\»b»``. Neither
can be written in a source file; only a metaprogram makes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Component = str | int

#: Identifier-shaped tokens of Lean's term and command grammar: a name whose first component
#: is one of them prints escaped (``«fun»``), as Lean's printer does with its token table. Not
#: every token of every parser: tactic names are tokens only inside tactic blocks.
KEYWORDS = frozenset({
    "abbrev", "at", "attribute", "axiom", "by", "calc", "class", "def", "deriving", "do",
    "else", "end", "example", "export", "extends", "for", "forall", "from", "fun", "have",
    "if", "import", "in", "inductive", "infix", "infixl", "infixr", "instance", "let", "local",
    "macro", "macro_rules", "match", "meta", "module", "mutual", "namespace", "noncomputable",
    "nomatch", "nofun", "notation", "open", "opaque", "partial", "postfix", "prefix",
    "private", "protected", "public", "return", "scoped", "section", "set_option", "show",
    "sorry", "structure", "suffices", "syntax", "then", "theorem", "this", "universe",
    "unsafe", "variable", "where", "with", "Prop", "Sort", "Type",
})

#: An ASCII identifier: the common case, matched without looking at each character.
PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*")


def is_letter_like(c: str) -> bool:
    """Lean's ``isLetterLike``: Greek (but ``λ``, ``Π``, ``Σ``), Coptic, polytonic Greek, the
    letter-like symbols block (``ℕ``...) and the mathematical alphanumeric letters."""
    o = ord(c)
    return ((0x3B1 <= o <= 0x3C9 and o != 0x3BB) or (0x391 <= o <= 0x3A9 and o not in (0x3A0,
            0x3A3)) or 0x3CA <= o <= 0x3FB or 0x1F00 <= o <= 0x1FFE or 0x2100 <= o <= 0x214F
            or 0x1D49C <= o <= 0x1D59F)


def is_subscript_alnum(c: str) -> bool:
    """Lean's ``isSubScriptAlnum``: subscript digits, letters and ``ᵢ``-style subscripts."""
    o = ord(c)
    return 0x2080 <= o <= 0x2089 or 0x2090 <= o <= 0x209C or 0x1D62 <= o <= 0x1D6A


def is_id_first(c: str) -> bool:
    """Lean's ``isIdFirst``: an ASCII letter, ``_`` or a letter-like character."""
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "_" or is_letter_like(c)


def is_id_rest(c: str) -> bool:
    """Lean's ``isIdRest``: ``isIdFirst``, an ASCII digit, ``'``, ``!``, ``?`` or a subscript."""
    return (is_id_first(c) or ("0" <= c <= "9") or c in "'!?" or is_subscript_alnum(c))


def is_identifier(s: str) -> bool:
    """Whether a string component is a valid identifier, i.e. prints without ``«»``."""
    if PLAIN_IDENTIFIER.fullmatch(s):
        return True
    return bool(s) and is_id_first(s[0]) and all(is_id_rest(c) for c in s[1:])


def component_text(comp: Component, first: bool = False) -> str:
    """One component as Lean prints it (see the module docstring)."""
    if isinstance(comp, int):
        return str(comp)
    if is_identifier(comp) and not (first and comp in KEYWORDS):
        return comp
    if "»" in comp or "\\" in comp:
        comp = comp.replace("\\", "\\\\").replace("»", "\\»")
    return f"«{comp}»"


def name_text(parts: Iterable[Component]) -> str:
    """THE printing of a name: its components as Lean prints them, joined by ``.``. The
    anonymous name prints as ``""`` (Lean: ``[anonymous]``; it is never a constant's name)."""
    return ".".join(component_text(c, i == 0) for i, c in enumerate(parts))


def _check(parts: tuple) -> tuple[Component, ...]:
    for c in parts:
        if isinstance(c, bool) or not isinstance(c, str | int) or (isinstance(c, int)
                                                                    and c < 0):
            raise ValueError(f"a name component is a string or a natural number, not {c!r}")
    return parts


class Name(str):
    """A Lean name: ``parts`` (its components, ``str`` or ``int``), and as a ``str`` its
    printed text (:func:`name_text`). Hashable and ordered (by the text, which determines the
    components); pickled by its components."""

    parts: tuple[Component, ...]

    def __new__(cls, parts: Iterable[Component] = ()) -> Name:
        tup = _check(tuple(parts))
        self = super().__new__(cls, name_text(tup))
        self.parts = tup
        return self

    def __getnewargs__(self) -> tuple[tuple[Component, ...]]:  # type: ignore[override]
        return (self.parts,)

    def __repr__(self) -> str:
        return f"Name({self.parts!r})"

    def child(self, comp: Component) -> Name:
        """``self`` extended by one component (the reader builds names prefix by prefix)."""
        tup = _check((comp,))
        if not self.parts:
            return Name(tup)
        out = str.__new__(Name, f"{self}.{component_text(comp)}")
        out.parts = self.parts + tup
        return out

    @property
    def dotted(self) -> str:
        """The components joined by ``.`` *without* escaping: what a reader who ignores
        ``«»`` sees. Twins (``A.«b.c»`` and ``A.b.c``, ``x.1`` and ``x.«1»``) share it."""
        return ".".join(str(c) for c in self.parts)

    @classmethod
    def parse(cls, text: str) -> Name:
        """The name whose printed text is ``text`` (the inverse of :func:`name_text`); a
        ``Name`` is returned as it is. Raises ``ValueError`` on text no name prints as."""
        if isinstance(text, Name):
            return text
        parts: list[Component] = []
        i, n = 0, len(text)
        if n == 0:
            return cls(())
        while True:
            if i < n and text[i] == "«":
                j, buf = i + 1, []
                while j < n and text[j] != "»":
                    if text[j] == "\\" and j + 1 < n:
                        j += 1
                    buf.append(text[j])
                    j += 1
                if j >= n:
                    raise ValueError(f"unterminated «» in name {text!r}")
                parts.append("".join(buf))
                i = j + 1
            else:
                j = text.find(".", i)
                j = n if j < 0 else j
                comp = text[i:j]
                parts.append(int(comp) if comp.isascii() and comp.isdigit() else comp)
                i = j
            if i == n:
                break
            if text[i] != ".":
                raise ValueError(f"bad name text {text!r}")
            i += 1
        out = cls(parts)
        if str(out) != text:
            raise ValueError(f"{text!r} is not how a name prints (it prints {str(out)!r})")
        return out


def dotted(text: str) -> str:
    """:attr:`Name.dotted` of a name given by its text (a plain ``str`` or a :class:`Name`)."""
    if isinstance(text, Name):
        return text.dotted
    return text if "«" not in text else Name.parse(text).dotted


def name_bytes(name: str) -> bytes:
    """A canonical, self-delimiting byte encoding of a name's *components* for hashing:
    ``s<byte length>:<utf-8>`` per string component, ``n<decimal>;`` per number, so no two
    names (and no two sequences of names) share an encoding."""
    if isinstance(name, Name):
        parts: Iterable[Component] = name.parts
    elif not name:
        parts = ()
    elif "«" not in name:  # no escaped component: identifiers and numbers only
        parts = (int(c) if c.isascii() and c.isdigit() else c for c in name.split("."))
    else:
        parts = Name.parse(name).parts
    out = []
    for c in parts:
        if isinstance(c, int):
            out.append(b"n%d;" % c)
        else:
            raw = c.encode()
            out.append(b"s%d:" % len(raw) + raw)
    return b"".join(out)
