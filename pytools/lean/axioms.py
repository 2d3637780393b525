"""The names of the only axioms a published theorem may depend on, stated once.

Both sides read them from here: the audit (:mod:`pytools.lean.audit.policy` pins each name's
identity, its declaring core module and type hash, and recognises an axiom only by that
identity) and the offline verifier (:mod:`pytools.publish.certificate_policy` re-checks a
certificate's ``allowed_axioms`` and every theorem's axioms against these names). This module
imports nothing, so the verifier does not load the audit to know them.
"""

from __future__ import annotations

#: Core's ``propext``, ``Classical.choice`` and ``Quot.sound``, sorted.
ALLOWED_AXIOM_NAMES: tuple[str, ...] = ("Classical.choice", "Quot.sound", "propext")
