"""What the admission layer does to one request body, as a pure function (no I/O).

:func:`admit` is the whole policy: the body must be a JSON object of at most the size limit,
must not carry a ``cache_salt`` of its own, and leaves with the tenant's keyed salt set. The
proxy (:mod:`.app`) calls it for every request, and the leak reproduction calls it to build
the keyed-salt scenario's requests, so the closure it measures is this code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .salt import keyed_salt, vllm_salt_problem

#: The routes forwarded: vLLM's OpenAI-compatible endpoints that take ``cache_salt``.
SALTED_ROUTES = ("/v1/completions", "/v1/chat/completions")
#: Default body limit (bytes): 1 MiB holds a prompt of well over 100k token ids.
DEFAULT_MAX_BODY = 1 << 20


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


def admit(
    body: bytes, tenant_id: str, secret: bytes, max_body: int = DEFAULT_MAX_BODY
) -> Admitted | Refused:
    """Admit one request body of an authenticated tenant, or say why not.

    413 for a body over ``max_body`` bytes; 400 for a body that is not UTF-8 JSON, not a JSON
    object, or that carries a ``cache_salt`` (even ``null``: the salt is the server's to set).
    """
    if len(body) > max_body:
        return Refused(413, f"request body of {len(body)} bytes exceeds the limit of {max_body}")
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Refused(400, f"request body is not valid JSON: {exc}")
    if not isinstance(doc, dict):
        return Refused(400, "request body must be a JSON object")
    if "cache_salt" in doc:
        return Refused(
            400,
            "cache_salt is set by the server for the authenticated tenant; "
            "a request must not carry its own",
        )
    salt = keyed_salt(secret, tenant_id)
    problem = vllm_salt_problem(salt)
    if problem is not None:  # pragma: no cover - the scheme guarantees it; kept as a tripwire
        return Refused(500, f"internal error: keyed salt rejected by vLLM's rules: {problem}")
    doc["cache_salt"] = salt
    stream = doc.get("stream") is True
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Admitted(body=data, salt=salt, stream=stream)
