"""What the admission layer does to one request body, as a pure function (no I/O).

:func:`admit` is the whole policy: the body must be a JSON object of at most the size limit,
strict JSON that every parser reads the same way, must not carry a ``cache_salt`` of its own
(nor a key that reads as one), and leaves with the tenant's keyed salt set. The proxy
(:mod:`.app`) calls it for every request, and the leak reproduction calls it to build the
keyed-salt scenario's requests, so the closure it measures is this code.

Strict, because the upstream parses the forwarded body again: whatever this module accepts must
mean the same there. So it refuses what JSON parsers disagree on or what is not JSON at all
(RFC 8259): duplicate keys (Python keeps the last, others the first), ``NaN``/``Infinity``
and numbers too large for a double (Python writes them back as ``Infinity``), lone UTF-16
surrogates (not Unicode text; they cannot be encoded as UTF-8), and nesting deeper than
:data:`MAX_DEPTH` (a parser's recursion limit, not the document, would decide otherwise).
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass
from typing import Any

from .salt import keyed_salt, vllm_salt_problem

#: The routes forwarded: vLLM's OpenAI-compatible endpoints that take ``cache_salt``.
SALTED_ROUTES = ("/v1/completions", "/v1/chat/completions")
#: Default body limit (bytes): 1 MiB holds a prompt of well over 100k token ids.
DEFAULT_MAX_BODY = 1 << 20
#: The key the server sets, and what any key that reads as it reduces to (:func:`salt_like`).
SALT_KEY = "cache_salt"
_SALT_SKELETON = "cachesalt"
#: Deepest nesting of arrays and objects accepted (the body itself is level 1). A chat request
#: with a tool whose parameters nest 25 schemas deep stays well inside; Python's own limit
#: (about 1000, less the stack in use) would make the answer depend on where it is parsed.
MAX_DEPTH = 64


@dataclass(frozen=True)
class Admitted:
    """The body to forward (canonical JSON, the keyed salt set) and that salt."""

    body: bytes
    salt: str
    stream: bool


@dataclass(frozen=True)
class Refused:
    """A request refused before anything reaches the upstream: HTTP status and reason."""

    status: int
    message: str


class BodyError(ValueError):
    """A body that is not strict JSON; the message says why (it goes back to the client)."""


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a JSON object, refused if a key occurs twice (at any level)."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise BodyError(f"duplicate key {key!r} in a JSON object (parsers disagree on which "
                            "one counts)")
        doc[key] = value
    return doc


def _no_constant(name: str) -> Any:
    """``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""
    raise BodyError(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    """``parse_float``: a number that a double holds; ``1e400`` would be forwarded as Infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise BodyError(f"the number {text[:40]} is too large for a double")
    return value


def parse_json(text: str) -> Any:
    """Parse strict JSON (module docstring), or raise :class:`BodyError` saying why not."""
    try:
        return json.loads(text, object_pairs_hook=_object_without_duplicates,
                          parse_constant=_no_constant, parse_float=_finite_float)
    except BodyError:
        raise
    except json.JSONDecodeError as exc:
        raise BodyError(str(exc)) from None
    except RecursionError:
        raise BodyError(f"arrays and objects nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        # int()'s digit limit (sys.get_int_max_str_digits, 4300 by default)
        raise BodyError("a JSON integer with more digits than this server parses") from None


def too_deep(doc: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects in ``doc`` nest deeper than ``limit`` (iterative, no
    recursion). ``set(map(type, ...))`` runs in C, so a long list of token ids costs little."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if type(node) is not dict and type(node) is not list:
            continue
        if depth > limit:
            return True
        values = node.values() if type(node) is dict else node
        kinds = set(map(type, values))
        if dict in kinds or list in kinds:
            stack.extend((v, depth + 1) for v in values)
    return False


def salt_like(key: str) -> bool:
    """Whether ``key`` reads as ``cache_salt``: the same letters once case, compatibility
    forms (fullwidth, ligatures, long s) and everything but letters and digits (``_``, ``-``,
    spaces, zero-width and control characters) are set aside. ``Cache_Salt``, ``cacheSalt``,
    ``cache-salt``, ``"cache_salt "``, ``cache_salt`` + U+200B and fullwidth ``ｃａｃｈｅ_ｓａｌｔ``
    all do. vLLM reads only the exact key; refusing the rest keeps a claim out of any layer
    that folds case or maps camelCase (a gateway, another engine). Letters of other scripts
    that merely look Latin (Cyrillic ``а``) are different letters and not caught."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    return "".join(ch for ch in folded if ch.isalnum()) == _SALT_SKELETON


def salt_claim(doc: dict[str, Any]) -> str | None:
    """The first top-level key of ``doc`` that claims a salt, or None.

    Top level only: vLLM reads ``cache_salt`` from the request object itself, never from a
    nested object, and nested keys are the tenant's data (a tool schema may well have a
    property called ``cache_salt``); refusing those would refuse honest requests.
    """
    return next((key for key in doc if salt_like(key)), None)


def serialise(doc: dict[str, Any]) -> bytes:
    """Canonical UTF-8 JSON; a lone surrogate (parsed from ``"\\ud800"``) is refused here,
    where encoding finds it, rather than forwarded as an escape another parser may reject."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start:exc.end]
        raise BodyError(f"a string holds a lone UTF-16 surrogate ({bad!r}), which is not "
                        "Unicode text") from None


def admit(
    body: bytes, tenant_id: str, secret: bytes, max_body: int = DEFAULT_MAX_BODY
) -> Admitted | Refused:
    """Admit one request body of an authenticated tenant, or say why not.

    413 for a body over ``max_body`` bytes; 400 for a body that is not strict UTF-8 JSON
    (module docstring), not a JSON object, or that carries a ``cache_salt`` (even ``null``:
    the salt is the server's to set) or a key that reads as one (:func:`salt_like`).
    """
    if len(body) > max_body:
        return Refused(413, f"request body of {len(body)} bytes exceeds the limit of {max_body}")
    try:
        doc = parse_json(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return Refused(400, f"request body is not valid JSON: not UTF-8 ({exc.reason} at byte "
                       f"{exc.start})")
    except BodyError as exc:
        return Refused(400, f"request body is not valid JSON: {exc}")
    if not isinstance(doc, dict):
        return Refused(400, "request body must be a JSON object")
    if too_deep(doc):
        return Refused(400, f"request body is not valid JSON: arrays and objects nested deeper "
                       f"than {MAX_DEPTH} levels")
    claim = salt_claim(doc)
    if claim is not None:
        named = "" if claim == SALT_KEY else f" (the key {claim!r} reads as cache_salt)"
        return Refused(
            400,
            f"cache_salt is set by the server for the authenticated tenant; "
            f"a request must not carry its own{named}",
        )
    salt = keyed_salt(secret, tenant_id)
    problem = vllm_salt_problem(salt)
    if problem is not None:  # pragma: no cover - the scheme guarantees it; kept as a tripwire
        return Refused(500, f"internal error: keyed salt rejected by vLLM's rules: {problem}")
    doc[SALT_KEY] = salt
    try:
        data = serialise(doc)
    except BodyError as exc:
        return Refused(400, f"request body is not valid JSON: {exc}")
    return Admitted(body=data, salt=salt, stream=doc.get("stream") is True)
