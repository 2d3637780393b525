"""The publishing side of the pipeline: certify → verify.

:mod:`.canonical` writes canonical, schema-valid, hashed JSON (schemas in ``schemas/``);
:mod:`.certify` emits one certificate per published result and the manifest;
:mod:`.verify` checks a certificate offline (loading nothing of the audit or the results);
:mod:`.site` builds the static page with its in-browser verifier; :mod:`.cli` holds the
stage's commands (``review-statements``, ``certify``, ``verify``, ``keygen``, ``site``).
"""
