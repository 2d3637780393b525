"""The trust anchor of a verification: why the manifest itself is believed.

The manifest travels with the certificates, so by itself it only gives *integrity* (the files
match the manifest), not *authenticity* (the manifest is the publisher's): a forger who
rewrites a certificate and its manifest together passes an integrity check. The auditor
anchors the manifest in one of two ways, both chosen by the auditor and never taken from the
bundle:

* **pin**: ``--manifest-sha256 HEX``, obtained out of band (the README's generated section at
  a commit the auditor trusts, a release note, the publisher in person);
* **signature**: ``--key PUB`` / ``--trusted-keys FILE``: the DSSE envelope next to the
  manifest (:mod:`.attest`) must carry a valid Ed25519 signature by one of those keys over a
  statement that covers exactly this manifest and its files. Giving a key requires a
  signature; ``--require-signature`` without a key is red too (nothing to check it with).

With neither, verdicts say "integrity only, not authenticity".

Reasons are ``"<code>: <detail>"``; each anchor code, and what it does to a verdict, is in
the one table of :mod:`.codes` (scope ``anchor``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .attest import check_envelope, covers
from .canonical import sha256_bytes
from .codes import code_of, is_red
from .keys import TrustedKey
from .manifest import Manifest
from .validation import SchemaSet

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def normalise_pin(text: str) -> str:
    """A pinned SHA-256 as 64 lower-case hex digits; ``ValueError`` otherwise."""
    pin = text.strip()
    if not _HEX64.match(pin):
        raise ValueError(f"--manifest-sha256 {text!r}: not 64 hex digits")
    return pin.lower()


@dataclass(frozen=True)
class AnchorOptions:
    """What the auditor asked for."""

    pin: str | None = None
    keys: Mapping[str, TrustedKey] = field(default_factory=dict)
    require_signature: bool = False


@dataclass(frozen=True)
class Anchor:
    """The anchor's outcome for one manifest: reasons in order, and who signed."""

    reasons: tuple[str, ...]
    signer: str | None = None
    envelope: str | None = None  # where the envelope was looked for / found
    envelope_sha256: str | None = None  # SHA-256 of the envelope's bytes, when there is one

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(code_of(r) for r in self.reasons)

    @property
    def red(self) -> bool:
        return is_red(self.reasons)

    @property
    def summary(self) -> str:
        codes = set(self.codes)
        if self.red:
            return "anchor failed"
        held = []
        if "manifest-pinned" in codes:
            held.append("pinned")
        if "manifest-signed" in codes:
            held.append(f"signed by {self.signer}")
        return " and ".join(held) if held else "integrity only, not authenticity"


def check_anchor(
    manifest: Manifest,
    options: AnchorOptions,
    envelope: bytes | None,
    envelope_name: str,
    schemas: SchemaSet | None = None,
) -> Anchor:
    """Check the pin and the signature the auditor asked for (see the module doc).

    ``envelope``: the bytes of the envelope next to the manifest, or None when there is none;
    ``envelope_name``: where it was looked for, for messages.
    """
    reasons: list[str] = []
    if options.pin is not None:
        if manifest.sha256 == options.pin:
            reasons.append(f"manifest-pinned: the manifest's SHA-256 is the pinned {options.pin}")
        else:
            reasons.append(f"manifest-not-pinned: the manifest's SHA-256 is {manifest.sha256}, "
                           f"the pin says {options.pin}")
    signer = None
    if options.keys:
        if envelope is None:
            reasons.append(f"signature-missing: no signature envelope ({envelope_name}), "
                           "but a trusted key was given")
        else:
            checked = check_envelope(envelope, options.keys, schemas)
            if checked.problem is not None:
                reasons.append(checked.problem)
            else:
                assert checked.statement is not None
                problem = covers(checked.statement, manifest.sha256, manifest.listed_paths())
                if problem is not None:
                    reasons.append(problem)
                else:
                    signer = checked.signer
                    source = options.keys[signer].source if signer in options.keys else "?"
                    reasons.append(f"manifest-signed: a statement covering this manifest and "
                                   f"its files is signed by trusted key {signer} ({source})")
    elif options.require_signature:
        reasons.append(
            "signature-missing: a signature is required but there is no envelope "
            f"({envelope_name})" if envelope is None else
            "signature-unverified: a signature is required but no trusted key was given "
            "(--key or --trusted-keys)"
        )
    elif options.pin is None:
        if envelope is not None:
            reasons.append(f"signature-unchecked: {envelope_name} is there but no trusted key "
                           "was given: integrity only, not authenticity")
        else:
            reasons.append("integrity-only: the manifest is neither pinned (--manifest-sha256) "
                           "nor signed: integrity only, not authenticity")
    return Anchor(tuple(reasons), signer, envelope_name,
                  sha256_bytes(envelope) if envelope is not None else None)
