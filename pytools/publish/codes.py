"""Verify's reason codes: the one table of what each code says and what it does to a verdict.

Every reason a verification gives is ``"<code>: <detail>"``. The table below is the only
place a code is declared: the command-line verifier (:mod:`.verify`), the anchor checks
(:mod:`.anchor`) and the page's verifier (``site/templates/verifier.js``, which receives the
table embedded by the site builder, :func:`pytools.publish.site.page.verifier_script`) all
read it. A code is

* ``red``: the verdict is red;
* ``green``: a check that held; left out of a red verdict (a red verdict carries no "ok");
* ``note``: a fact or a hint, kept on any verdict.

Anchor codes (``scope == "anchor"``) are about the manifest's anchor, shared by every file's
verdict, and printed once above them. Order: the order reasons are reported in.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

VERDICTS = ("red", "green", "note")
SCOPES = ("anchor", "file")


@dataclass(frozen=True)
class ReasonCode:
    """One reason code: its name, what it does to a verdict, whom it is about, and what it
    means (one sentence, for a reader of a verdict)."""

    code: str
    verdict: str  # one of VERDICTS
    scope: str  # one of SCOPES
    meaning: str


def _anchor(code: str, verdict: str, meaning: str) -> ReasonCode:
    return ReasonCode(code, verdict, "anchor", meaning)


def _file(code: str, verdict: str, meaning: str) -> ReasonCode:
    return ReasonCode(code, verdict, "file", meaning)


#: Every reason code, in the order reasons are reported (anchor codes first).
TABLE: tuple[ReasonCode, ...] = (
    _anchor("manifest-pinned", "green",
            "The manifest's SHA-256 is the one the auditor pinned."),
    _anchor("manifest-not-pinned", "red",
            "The manifest's SHA-256 is not the one the auditor pinned."),
    _anchor("signature-missing", "red",
            "A signature is required (or a trusted key was given) but there is no envelope."),
    _anchor("signature-invalid", "red",
            "The signature envelope, its payload or its statement cannot be read or is "
            "malformed."),
    _anchor("signature-untrusted", "red",
            "The envelope is signed, but by no key the auditor trusts."),
    _anchor("signature-bad", "red",
            "A trusted key's signature does not verify over the envelope's payload."),
    _anchor("manifest-not-signed", "red",
            "The signed statement does not cover this manifest and its files."),
    _anchor("signature-unverified", "red",
            "A signature is required but no trusted key was given to check it with."),
    _anchor("manifest-signed", "green",
            "A statement covering this manifest and its files is signed by a trusted key."),
    _anchor("signature-unchecked", "note",
            "An envelope is there but no trusted key was given: integrity only, not "
            "authenticity."),
    _anchor("integrity-only", "note",
            "The manifest is neither pinned nor signed: integrity only, not authenticity."),
    _file("too-large", "red", "The file is larger than the verifier reads."),
    _file("is-manifest", "note", "The file is the manifest used for the verification."),
    _file("is-signature", "note",
          "The file is the manifest's signature envelope (it signs the manifest, so it is not "
          "listed in it)."),
    _file("listed", "note", "The file's SHA-256 is listed in the manifest."),
    _file("unknown-hash", "red",
          "The file's SHA-256 is not in the manifest: tampered with, or not published here."),
    _file("malformed-json", "red", "The file is neither listed nor valid JSON."),
    _file("not-json", "note", "A published file that is not JSON; it names no theorems."),
    _file("not-canonical", "note",
          "Valid JSON, but not in canonical form, so its SHA-256 cannot match a published "
          "file's."),
    _file("not-an-object", "red", "An unlisted file whose top level is not a JSON object."),
    _file("not-a-certificate", "red",
          "An unlisted JSON object that is neither a certificate nor a manifest."),
    _file("unsupported-schema-version", "red",
          "The file's schema_version is not one this verifier knows."),
    _file("schema-violation", "red",
          "The file does not satisfy its JSON Schema (the certificate's, its result's "
          "figures', or the manifest's)."),
    _file("body-hash-mismatch", "red",
          "The certificate's body_sha256 is not the hash of its body."),
    _file("unknown-theorem", "red",
          "A theorem the file names is not a published, audited theorem."),
    _file("theorem-wrong-result", "red",
          "A theorem the certificate names is published, but for another result."),
    _file("statement-hash-mismatch", "red",
          "A theorem's statement term hash differs from the manifest's."),
    _file("statement-text-mismatch", "red",
          "The statement text a theorem shows hashes differently from the manifest's."),
    _file("theorems-ok", "green",
          "Every theorem the file names is published, for its result, with the same "
          "statement (term and text)."),
    _file("policy-violation", "red",
          "The certificate's own audit fields break the policy (a finding, an axiom outside "
          "the allowed ones, a required check not passed)."),
    _file("policy-ok", "green",
          "The certificate's audit fields meet the policy."),
)

#: Every code, in the order reasons are reported.
REASON_CODES: tuple[str, ...] = tuple(c.code for c in TABLE)
#: Codes that make a verdict red.
RED_CODES = frozenset(c.code for c in TABLE if c.verdict == "red")
#: Codes that say a check held: on a red verdict they are left out.
OK_CODES = frozenset(c.code for c in TABLE if c.verdict == "green")
#: Informational facts and hints, kept on any verdict.
NOTE_CODES = frozenset(c.code for c in TABLE if c.verdict == "note")
#: Codes about the manifest's anchor (printed once, above the files' verdicts).
ANCHOR_CODES = frozenset(c.code for c in TABLE if c.scope == "anchor")


def code_of(reason: str) -> str:
    """The code of a ``"<code>: <detail>"`` reason."""
    return reason.split(":", 1)[0]


def is_red(reasons: list[str] | tuple[str, ...]) -> bool:
    """True if any reason has a red code."""
    return any(code_of(reason) in RED_CODES for reason in reasons)


def table_for_page() -> list[dict[str, Any]]:
    """The table as the page's verifier receives it (embedded JSON, one object per code)."""
    return [asdict(c) for c in TABLE]
