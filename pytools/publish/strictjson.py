"""Strict JSON for the verifier: UTF-8 only, no NaN/Infinity, no duplicate keys, bounded depth,
every string valid Unicode. The in-page verifier's parser (``verifier.js``) accepts and refuses
exactly the same texts."""

from __future__ import annotations

import json
from typing import Any

from .canonical import CanonicalError, canonical_bytes

#: Largest file the verifier reads (certificates are a few KiB).
MAX_BYTES = 4 * 1024 * 1024

#: Deepest nesting of arrays and objects the verifier accepts (the in-page verifier too).
MAX_DEPTH = 500


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_depth(obj: Any) -> int:
    """Deepest nesting of arrays and objects in a parsed JSON value (``[]`` is 1), iteratively."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(data: bytes) -> Any:
    """Parse strict JSON from UTF-8 bytes: no NaN/Infinity, no duplicate keys, no BOM.

    Raises ``ValueError`` with a message saying what and where.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        # the decoder's messages may end in "at" already ("Unterminated string starting at")
        where = f"line {exc.lineno} column {exc.colno}"
        raise ValueError(f"{exc.msg} {where}" if exc.msg.endswith(" at")
                         else f"{exc.msg} at {where}") from None
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    depth = json_depth(obj)
    if depth > MAX_DEPTH:
        raise ValueError(f"nested {depth} levels deep (limit {MAX_DEPTH})")
    try:
        canonical_bytes(obj)
    except CanonicalError as exc:
        raise ValueError(str(exc)) from None
    return obj
