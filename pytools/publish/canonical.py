"""Canonical JSON and hashing shared by certify and verify.

The canonical form of a JSON value is ``json.dumps(obj, sort_keys=True, indent=2,
ensure_ascii=False)`` followed by one newline, encoded as UTF-8. Same value, same bytes.
NaN and infinities are rejected (they are not JSON), and so are keys that are not strings,
values JSON cannot hold and strings with lone surrogates (not encodable as UTF-8).

A certificate's ``body_sha256`` is the SHA-256 of the canonical bytes of the certificate
with the ``body_sha256`` key removed; :func:`with_body_hash` adds it and
:func:`check_body_hash` checks it.

Schemas and validation: :mod:`.validation`; the atomic write: :mod:`pytools.files`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any

from pytools.files import atomic_write_bytes

#: The key of a certificate that holds the hash of the rest of it.
BODY_HASH_KEY = "body_sha256"


class CanonicalError(ValueError):
    """A value that has no canonical JSON form (NaN, infinity, non-string key, ...)."""


def _check_value(obj: Any, where: str = "$") -> None:
    """Raise :class:`CanonicalError` for anything without a canonical JSON form."""
    if obj is None or isinstance(obj, bool | int | str):
        if isinstance(obj, str):
            try:
                obj.encode("utf-8")
            except UnicodeEncodeError as exc:
                reason = exc.reason
                raise CanonicalError(f"{where}: string is not valid Unicode ({reason})") from None
        return
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise CanonicalError(f"{where}: {obj!r} is not a JSON number (NaN/infinity)")
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not isinstance(key, str):
                raise CanonicalError(f"{where}: object key {key!r} is not a string")
            _check_value(key, f"{where}.<key>")
            _check_value(value, f"{where}.{key}")
        return
    if isinstance(obj, list | tuple):
        for index, value in enumerate(obj):
            _check_value(value, f"{where}[{index}]")
        return
    raise CanonicalError(f"{where}: {type(obj).__name__} is not a JSON value")


def canonical_bytes(obj: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON value (sorted keys, indent 2, trailing newline).

    Raises :class:`CanonicalError` for NaN, infinities, non-string keys, lone surrogates and
    values that are not JSON (sets, bytes, objects ...).
    """
    _check_value(obj)
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    """Lower-case hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def body_hash(cert: dict[str, Any]) -> str:
    """SHA-256 of the canonical bytes of ``cert`` without its ``body_sha256`` key."""
    body = {key: value for key, value in cert.items() if key != BODY_HASH_KEY}
    return sha256_bytes(canonical_bytes(body))


def with_body_hash(cert: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``cert`` with ``body_sha256`` set (any old value is replaced)."""
    out = {key: value for key, value in cert.items() if key != BODY_HASH_KEY}
    out[BODY_HASH_KEY] = body_hash(out)
    return out


def check_body_hash(cert: dict[str, Any]) -> bool:
    """True when ``cert['body_sha256']`` is present and equals :func:`body_hash` of ``cert``."""
    stated = cert.get(BODY_HASH_KEY)
    if not isinstance(stated, str):
        return False
    try:
        return stated == body_hash(cert)
    except CanonicalError:
        return False


def write_canonical(path: str | os.PathLike[str], obj: Any) -> str:
    """Atomically write the canonical bytes of ``obj`` to ``path``; return their SHA-256."""
    data = canonical_bytes(obj)
    atomic_write_bytes(path, data)
    return sha256_bytes(data)


__all__ = [
    "BODY_HASH_KEY", "CanonicalError", "body_hash", "canonical_bytes",
    "check_body_hash", "sha256_bytes", "with_body_hash", "write_canonical",
]
