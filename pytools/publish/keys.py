"""Ed25519 keys for signing a release, and the auditor's trusted keys.

* A **signing key** is a PKCS#8 PEM Ed25519 private key the publisher keeps outside the
  repository (``pytools keygen`` makes one, mode 0600). :func:`load_signing_key` refuses a key
  that others can read, or that git tracks in the repository it lies in: a signing key is
  never committed. An encrypted key is opened with ``$PYTOOLS_SIGN_KEY_PASSWORD``.
* A **trusted key** is an Ed25519 public key (SubjectPublicKeyInfo PEM) the *auditor* chose,
  obtained out of band; a trusted-keys file holds one or more such PEM blocks. Keys shipped
  inside a bundle are never trusted: verify only takes them from ``--key``/``--trusted-keys``.
* A **key id** is the SHA-256 (hex) of the raw 32-byte public key: a hint in the envelope,
  never a reason to trust.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pytools.files import atomic_write_bytes, check_can_write, make_dirs

#: Environment variable holding the password of an encrypted signing key.
PASSWORD_ENV = "PYTOOLS_SIGN_KEY_PASSWORD"

_PEM_BLOCK = re.compile(
    rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----", re.S
)


class KeyFileError(ValueError):
    """A key file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class TrustedKey:
    """An auditor's trusted Ed25519 public key."""

    keyid: str
    key: Ed25519PublicKey
    source: str  # where it came from (file name), for messages

    def verify(self, signature: bytes, message: bytes) -> bool:
        try:
            self.key.verify(signature, message)
        except InvalidSignature:
            return False
        return True


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def keyid(key: Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the raw 32-byte public key."""
    return hashlib.sha256(raw_public(key)).hexdigest()


def public_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo)


def _tracked_by_git(path: Path) -> bool:
    try:
        proc = subprocess.run(
            ["git", "-C", str(path.parent), "ls-files", "--error-unmatch", "--", path.name],
            capture_output=True, check=False, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def load_signing_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``path``; :class:`KeyFileError` if it is unusable or unsafe."""
    try:
        info = path.stat()
        data = path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"signing key {path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise KeyFileError(f"signing key {path}: not a regular file")
    if info.st_mode & 0o077:
        raise KeyFileError(
            f"signing key {path}: permissions {stat.S_IMODE(info.st_mode):04o} let others "
            f"read it; run chmod 600 {path}"
        )
    if _tracked_by_git(path.resolve()):
        raise KeyFileError(f"signing key {path}: tracked by git; a private key is never "
                           "committed (git rm --cached it and rotate the key)")
    password = os.environ.get(PASSWORD_ENV)
    try:
        key = serialization.load_pem_private_key(
            data, password=password.encode() if password else None
        )
    except TypeError:
        raise KeyFileError(f"signing key {path}: encrypted; set ${PASSWORD_ENV}") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"signing key {path}: not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"signing key {path}: not an Ed25519 key "
                           f"({type(key).__name__})")
    return key


def parse_public_keys(data: bytes, source: str) -> dict[str, TrustedKey]:
    """Every Ed25519 public key in PEM text, by key id; :class:`KeyFileError` names the
    block that is not one (a private key in a trusted-keys file is refused too)."""
    blocks = list(_PEM_BLOCK.finditer(data))
    if not blocks:
        raise KeyFileError(f"{source}: no PEM public key (-----BEGIN PUBLIC KEY-----)")
    keys: dict[str, TrustedKey] = {}
    for number, block in enumerate(blocks, 1):
        label = block.group(1).decode()
        if label != "PUBLIC KEY":
            raise KeyFileError(f"{source}: PEM block {number} is a {label}, not a PUBLIC KEY"
                               + (" (never hand a private key to verify)"
                                  if "PRIVATE" in label else ""))
        try:
            key = serialization.load_pem_public_key(block.group(0))
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise KeyFileError(f"{source}: PEM block {number}: unreadable ({exc})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyFileError(f"{source}: PEM block {number}: not an Ed25519 key "
                               f"({type(key).__name__})")
        kid = keyid(key)
        keys[kid] = TrustedKey(kid, key, source)
    return keys


def load_trusted_keys(paths: list[Path]) -> dict[str, TrustedKey]:
    """The auditor's trusted keys from ``--key``/``--trusted-keys`` files, by key id."""
    keys: dict[str, TrustedKey] = {}
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise KeyFileError(f"{path}: cannot read ({exc.strerror})") from None
        keys.update(parse_public_keys(data, str(path)))
    return keys


#: How a PEM public key file begins: the only file ``keygen`` may write over (an older key).
PUBLIC_PEM_HEAD = b"-----BEGIN PUBLIC KEY-----"


def generate(private_path: Path, public_path: Path) -> str:
    """Write a new Ed25519 key pair (private: 0600, never overwritten); return its key id."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    if private_path.exists() or private_path.is_symlink():
        raise KeyFileError(f"{private_path}: exists; refusing to overwrite a key")
    if public_path.is_file() and not public_path.read_bytes().startswith(PUBLIC_PEM_HEAD):
        raise KeyFileError(f"{public_path}: exists and is not a PEM public key; refusing to "
                           "overwrite it")
    if Path(os.path.abspath(private_path)) == Path(os.path.abspath(public_path)):
        raise KeyFileError(f"{private_path}: the private and the public key need two files")
    try:  # both checked before either is written: a failure leaves neither
        check_can_write(private_path)
        check_can_write(public_path)
        make_dirs(private_path.parent)
    except OSError as exc:
        raise KeyFileError(f"{exc.filename}: {exc.strerror or exc}; no key was written") from None
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyFileError(f"{private_path}: exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise KeyFileError(f"{private_path}: {exc.strerror or exc}; no key was written") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        os.chmod(private_path, 0o600)
        atomic_write_bytes(public_path, public_pem(key.public_key()), mode=0o644)
    except OSError as exc:
        private_path.unlink()  # ours: written just now, useless without its public half
        raise KeyFileError(f"{exc.filename or public_path}: {exc.strerror or exc}; "
                           "no key was written") from None
    return keyid(key.public_key())


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    """Strict base64, standard or URL-safe alphabet (DSSE: verifiers MUST accept either),
    padding optional; any other character is an error."""
    standard = text.replace("-", "+").replace("_", "/").rstrip("=")
    return base64.b64decode((standard + "=" * (-len(standard) % 4)).encode("ascii"),
                            validate=True)
