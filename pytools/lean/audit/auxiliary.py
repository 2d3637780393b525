"""Which declarations are compiler-generated auxiliaries (counted apart from the user-facing
ones in certificates; not a trust rule: every declaration is audited either way)."""

from __future__ import annotations

import re

from pytools.lean.olean import Name

_AUX_SUFFIXES = frozenset({
    "rec", "recOn", "casesOn", "noConfusion", "noConfusionType", "below", "brecOn",
    "binductionOn", "ibelow", "ctorIdx", "toCtorIdx", "ctorElim", "ctorElimType", "injEq",
    "inj", "sizeOf_spec", "eq_def", "eq_unfold", "induct", "mutual_induct", "fun_cases",
    "congr_simp", "elim", "inj_iff",
})
_AUX_COMPONENT = re.compile(
    r"^(_.*|match_\d+|proof_\d+|eq_\d+|fun_cases_\d+|.*_cstage\d*|.*_spec_\d+|.*_redArg)$")


def classify_auxiliary(name: str, kind: str = "") -> bool:
    """True if ``name`` is a compiler-generated auxiliary declaration.

    Rule (on the name's components, after removing a ``_private.<Module>.<n>.`` prefix, which
    only marks a user's ``private`` declaration): auxiliary iff some component starts with
    ``_`` (e.g. ``_sunfold``, ``_unsafe_rec``, ``_proof_1``, ``_auxLemma``, ``_cstage2``,
    ``_closed``), or is ``match_N``, ``proof_N``, ``eq_N``, ``fun_cases_N``, or the *last*
    component is an automatically derived companion of an inductive or definition: ``rec``,
    ``recOn``, ``casesOn``, ``noConfusion``, ``noConfusionType``, ``below``, ``brecOn``,
    ``binductionOn``, ``ibelow``, ``ctorIdx``/``toCtorIdx``, ``injEq``, ``inj``, ``inj_iff``,
    ``sizeOf_spec``, ``eq_def``, ``eq_unfold``, ``induct``, ``mutual_induct``, ``fun_cases``,
    ``congr_simp``, ``elim``, ``ctorElim``, ``ctorElimType``. Everything else (theorems,
    definitions, structures, their constructors and projections, instances) is user-facing.
    """
    parts = Name.parse(name).parts
    if parts and parts[0] == "_private":
        # _private.<Module components>.<number>.<user name> (a numeric component)
        for i in range(1, len(parts)):
            if isinstance(parts[i], int):
                parts = parts[i + 1:]
                break
    if not parts:
        return True
    if any(_AUX_COMPONENT.match(str(p)) for p in parts):
        return True
    return parts[-1] in _AUX_SUFFIXES and len(parts) > 1


