"""The keyed cache salt: HMAC-SHA256 of a server secret and the authenticated tenant id.

This module is the one place the salt is computed: the proxy (:mod:`.app`) binds it to every
forwarded request, and the leak reproduction (:mod:`pytools.results.leak`) imports it, so the
closure it measures is the deployed code. It imports nothing but the standard library.

vLLM's OpenAI-compatible server accepts a ``cache_salt`` of 1 to 128 characters without
``@``, ``/``, ``\\`` or NUL (``validate_cache_salt`` in ``vllm/entrypoints/generate/base/
protocol.py``, vLLM 0.33.0). The keyed salt is ``k1-`` followed by 64 lowercase hex digits:
67 characters from ``[0-9a-fk-]``, which satisfies those rules (:func:`vllm_salt_problem`
re-states them; the engine-marked tests check the same salts with vLLM's own validator).
"""

from __future__ import annotations

import hashlib
import hmac

#: Version tag of the salt scheme: part of every salt, so a scheme change never collides.
SALT_PREFIX = "k1-"
#: Domain separation: the HMAC input is this label, a NUL, then the tenant id (UTF-8).
SALT_LABEL = b"pytools.admission/cache-salt/v1"
#: The shortest secret accepted (bytes): 256 bits, the HMAC-SHA256 key size.
MIN_SECRET_BYTES = 32

#: vLLM's cache-salt rules (0.33.0): length and forbidden characters.
VLLM_SALT_MAX_LENGTH = 128
VLLM_SALT_FORBIDDEN = frozenset({"@", "/", "\\", "\x00"})


class SaltError(ValueError):
    """A secret or tenant id that cannot make a salt."""


def keyed_salt(secret: bytes, tenant_id: str) -> str:
    """The cache salt of ``tenant_id`` under ``secret``: ``k1-`` + hex HMAC-SHA256.

    Distinct tenants get distinct salts (HMAC-SHA256 collisions aside), and without the secret
    no one can compute a tenant's salt from its id.
    """
    if len(secret) < MIN_SECRET_BYTES:
        raise SaltError(f"the secret has {len(secret)} bytes; at least {MIN_SECRET_BYTES} needed")
    if not tenant_id or "\x00" in tenant_id:
        raise SaltError(f"invalid tenant id {tenant_id!r}")
    mac = hmac.new(secret, SALT_LABEL + b"\x00" + tenant_id.encode("utf-8"), hashlib.sha256)
    return SALT_PREFIX + mac.hexdigest()


def vllm_salt_problem(salt: object) -> str | None:
    """Why vLLM 0.33.0 would refuse ``salt`` as a ``cache_salt``, or None if it accepts it."""
    if not isinstance(salt, str) or not salt:
        return "cache_salt must be a non-empty string"
    if len(salt) > VLLM_SALT_MAX_LENGTH:
        return f"cache_salt has {len(salt)} characters, more than {VLLM_SALT_MAX_LENGTH}"
    bad = sorted(VLLM_SALT_FORBIDDEN & set(salt))
    if bad:
        return f"cache_salt contains forbidden characters {bad!r}"
    return None
