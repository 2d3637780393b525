"""Printing what the proxy was given, safely: client input cut and escaped, upstream URLs
without their credentials. Standard library only (the CLI imports it before the web stack)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

#: A log line quotes at most this many characters of anything a client sent.
SHOWN_LOG = 120
#: The logger of the access lines (one per request; the CLI writes them to standard output).
ACCESS_LOG = "pytools.admission.access"


def split_upstream(url: str) -> tuple[str, tuple[str, str] | None]:
    """The upstream URL without its ``user:pass@`` part, and that part (percent-decoded) as
    Basic-auth credentials, or None when it has none."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url.rstrip("/"), None
    host = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return bare.rstrip("/"), (unquote(parts.username or ""), unquote(parts.password or ""))


def redacted(url: str) -> str:
    """``url`` fit to print: any ``user:pass@`` part replaced by ``***@``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, "***@" + host, parts.path, parts.query, parts.fragment))


def shown(text: str, limit: int = SHOWN_LOG) -> str:
    """Client input fit for a log line: at most ``limit`` characters, every control and
    non-ASCII character escaped (``ascii``), and how much was cut said."""
    cut = ascii(text[:limit])
    return cut if len(text) <= limit else f"{cut}...(+{len(text) - limit} chars)"
