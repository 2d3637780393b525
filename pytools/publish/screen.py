"""Text fit for a terminal: every character that could move the cursor, recolour, hide or
reorder what follows is shown as an escape instead of acting.

``verify`` prints strings it read from files and from paths (a file's name, a certificate's
``result``, a reason quoting a value); a name such as ``x\\e[2K\\rGREEN  fake.json`` would
otherwise rewrite its own RED line. Escaped here, as ``--json`` escapes them:

* C0 controls (U+0000..U+001F: ESC, CR, BS, ...) and DEL (U+007F);
* C1 controls (U+0080..U+009F: CSI U+009B acts as ``ESC [`` on some terminals);
* Unicode format characters (category ``Cf``: bidi overrides and isolates, zero-width
  spaces and joiners, the BOM) and the line and paragraph separators (``Zl``, ``Zp``);
* the backslash itself, so an escape shown cannot be mistaken for one a name spelled out.
"""

from __future__ import annotations

import unicodedata

_SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    if unicodedata.category(c) not in _CATEGORIES:
        return c
    code = ord(c)
    return f"\\x{code:02x}" if code <= 0xFF else (
        f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")


def printable(text: str) -> str:
    """``text`` with every control, format or separator character (and the backslash) shown
    as its escape; everything else, non-ASCII letters included, unchanged."""
    return "".join(_escape(c) for c in text)
