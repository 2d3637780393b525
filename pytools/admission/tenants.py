"""Tenants and the server secret: who may call the proxy, and the key of the keyed salt.

The tenants file holds SHA-256 hashes of the API keys, never the keys::

    {"version": 1, "tenants": [{"id": "acme", "key_sha256": "<64 hex>"}, ...]}

Keys are generated here (:func:`new_api_key`, 256 random bits), so a fast hash is enough: a
stolen tenants file does not reveal a key, and there is nothing to brute-force. A key is looked
up by its hash.

The secret comes from ``$PYTOOLS_ADMISSION_SECRET`` or a file, hex in both (surrounding
whitespace allowed); there is no default, and a secret that is not hex, shorter than 32 bytes or
one repeated byte is refused. Raw bytes are not taken from a file: a binary file is far more
often the wrong file (a key, an image) than a secret, and hex is what the README promises. A
secret file that its group or others may read is refused, as ``certify --sign-key`` refuses a
readable signing key: whoever reads the secret computes every tenant's salt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from pytools.files import atomic_write_text

from .display import shown
from .salt import MIN_SECRET_BYTES

SECRET_ENV = "PYTOOLS_ADMISSION_SECRET"
TENANTS_VERSION = 1
_TENANT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
KEY_PREFIX = "sk-tenant-"
#: The most a secret file is read (bytes): a hex secret is far shorter, and a bound keeps a
#: mistaken ``--secret-file /dev/urandom`` (or a huge file) from being read without end.
MAX_SECRET_FILE = 4096


class ConfigError(ValueError):
    """A tenants file or secret that the proxy must not start with."""


@dataclass(frozen=True)
class Tenants:
    """Tenant ids by the SHA-256 of their API key."""

    by_key_hash: dict[str, str]

    def authenticate(self, api_key: str) -> str | None:
        """The tenant id of ``api_key``, or None.

        The lookup is by the SHA-256 of the presented key: timing can at most reveal something
        about a hash the caller cannot steer, never about a stored key.
        """
        return self.by_key_hash.get(key_hash(api_key))


def key_hash(api_key: str) -> str:
    """Hex SHA-256 of an API key (UTF-8)."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def new_api_key() -> str:
    """A fresh API key: a fixed prefix and 256 random bits, URL-safe."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def load_tenants(path: Path) -> Tenants:
    """Read and check a tenants file; every problem names the file."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tenants file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the tenants file is not UTF-8 text ({exc.reason} at byte "
                          f"{exc.start})") from None
    if text.startswith("\ufeff"):
        raise ConfigError(f"{path}: the tenants file starts with a UTF-8 byte-order mark; "
                          "save it as UTF-8 without one")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != TENANTS_VERSION:
        raise ConfigError(f"{path}: expected an object with \"version\": {TENANTS_VERSION}")
    entries = doc.get("tenants")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: \"tenants\" must be a non-empty list")
    by_hash: dict[str, str] = {}
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"id", "key_sha256"}:
            raise ConfigError(f"{path}: tenants[{i}] must have exactly \"id\" and \"key_sha256\"")
        tenant, digest = entry["id"], entry["key_sha256"]
        if not isinstance(tenant, str) or not _TENANT_ID.match(tenant):
            raise ConfigError(f"{path}: tenants[{i}]: invalid id {tenant!r}")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise ConfigError(f"{path}: tenants[{i}]: key_sha256 must be 64 lowercase hex digits")
        if tenant in seen:
            raise ConfigError(f"{path}: tenant id {tenant!r} listed twice")
        if digest in by_hash:
            raise ConfigError(f"{path}: tenants {by_hash[digest]!r} and {tenant!r} share a key")
        seen.add(tenant)
        by_hash[digest] = tenant
    return Tenants(by_key_hash=by_hash)


def add_tenant(path: Path, tenant_id: str) -> str:
    """Add a tenant with a fresh key to the tenants file (created if absent); return the key.

    The key is returned once and never stored; the file is replaced atomically.
    """
    if not _TENANT_ID.match(tenant_id):
        raise ConfigError(f"invalid tenant id {shown(tenant_id, 80)} (letters, digits, . _ -; "
                          "max 64)")
    path = Path(path)
    entries: list[dict[str, str]] = []
    if path.exists() or path.is_symlink():
        load_tenants(path)  # refuse to extend a broken file
        entries = json.loads(path.read_bytes().decode("utf-8"))["tenants"]
        if any(e["id"] == tenant_id for e in entries):
            raise ConfigError(f"{path}: tenant {tenant_id!r} already exists")
    key = new_api_key()
    entries.append({"id": tenant_id, "key_sha256": key_hash(key)})
    data = json.dumps({"version": TENANTS_VERSION, "tenants": entries}, indent=2) + "\n"
    # 0o600 as before: only the proxy's user reads who its tenants are
    try:
        atomic_write_text(path, data, mode=0o600)
    except OSError as exc:
        where = exc.filename or path.parent
        raise ConfigError(f"{path}: cannot write the tenants file: {where}: "
                          f"{exc.strerror or exc}; nothing was written") from None
    return key


def parse_secret(text: bytes, origin: str) -> bytes:
    """A secret from hex text (surrounding whitespace stripped); ``origin`` names its source."""
    try:
        secret = bytes.fromhex(text.strip().decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise ConfigError(f"{origin}: the secret must be hex digits (e.g. `python -c 'import "
                          "secrets; print(secrets.token_hex(32))'`)") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise ConfigError(
            f"{origin}: the secret has {len(secret)} bytes; at least {MIN_SECRET_BYTES} "
            "are needed (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)"
        )
    if len(set(secret)) <= 1:
        raise ConfigError(f"{origin}: the secret is one repeated byte; use a random one")
    return secret


def read_secret_file(path: Path) -> bytes:
    """The bytes of a secret file, at most :data:`MAX_SECRET_FILE` of them."""
    try:
        with path.open("rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode  # the file opened, not a name re-read
            if stat.S_ISREG(mode) and mode & 0o077:
                raise ConfigError(
                    f"{path}: permissions {stat.S_IMODE(mode):04o} let group or others read the "
                    f"secret; run chmod 600 {path}"
                )
            data = handle.read(MAX_SECRET_FILE + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the secret: {exc.strerror or exc}") from None
    if len(data) > MAX_SECRET_FILE:
        raise ConfigError(f"{path}: the secret file is longer than {MAX_SECRET_FILE} bytes; it "
                          "should hold one hex secret")
    return data


def load_secret(secret_file: Path | None, environ: dict[str, str] | None = None) -> bytes:
    """The server secret, from ``secret_file`` or ``$PYTOOLS_ADMISSION_SECRET``; never a default."""
    env = os.environ if environ is None else environ
    if secret_file is not None:
        return parse_secret(read_secret_file(Path(secret_file)), str(secret_file))
    value = env.get(SECRET_ENV)
    if not value:
        raise ConfigError(
            f"no secret: set ${SECRET_ENV} (hex, at least {MIN_SECRET_BYTES} bytes) or pass "
            "--secret-file; the proxy never starts without one"
        )
    return parse_secret(value.encode("utf-8"), f"${SECRET_ENV}")
