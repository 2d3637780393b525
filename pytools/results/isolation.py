"""The isolation floor (``Proofs/Isolation/``): a purely mathematical result, no data inputs."""

from __future__ import annotations

from .spec import ResultSpec, no_evidence

SPEC = ResultSpec(
    id="isolation-floor",
    title="The price of zero-leak sharing: the T·n isolation floor",
    theorems=tuple(
        f"KVCache.Isolation.{name}"
        for name in (
            "two_pow_le_of_exact",
            "mul_le_log2_of_exact",
            "leak_or_refused_of_lt",
            "exists_exact_design",
            "exists_exact_iff",
            "exact_iff_no_leak_no_refused",
            "pow_le_of_ownerExact",
            "exists_ownerExact_design",
            "mul_log2_le_log2_of_ownerExact",
            "ownerLeak_or_refused_of_lt",
            "pow_le_of_injective",
            "two_pow_le_of_injective",
            "le_of_injective_fin",
        )
    ),
    limits=(
        "A counting bound on the states of any exact design: it says nothing about time, "
        "only about how much isolation state a zero-leak, full-reuse manager must keep.",
        "Exactness is demanded for every rights matrix; a manager that only has to serve "
        "some matrices can use fewer states.",
    ),
    evidence=no_evidence,
)
