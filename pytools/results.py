"""The registry of published results.

Each published result names the Lean theorems it rests on, the limits under which it
holds, and a function that computes its figures from input files (whose hashes the
certificate records). :mod:`pytools.certify` turns each entry into one certificate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class InputFile:
    """A data file a result's figures were computed from."""

    path: str  # relative to the repository root (shared data: "../shared/...")
    sha256: str


@dataclass(frozen=True)
class Evidence:
    """Figures computed from input files, never typed in by hand."""

    figures: dict[str, Any]
    inputs: tuple[InputFile, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # result-specific keys, e.g. workflows


@dataclass(frozen=True)
class ResultSpec:
    """One published result: its id, its theorems and how to compute its evidence."""

    id: str
    title: str
    theorems: tuple[str, ...]
    limits: tuple[str, ...]
    evidence: Callable[[Path], Evidence] | None = None
    #: Writes companion files (plots, tables) into the given folder; returns their paths.
    artifacts: Callable[[Path, Path], list[Path]] | None = None


def no_evidence(root: Path) -> Evidence:
    """A purely mathematical result: no data inputs, no figures."""
    return Evidence(figures={})


ISOLATION_FLOOR = ResultSpec(
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


def _svg_and_csv(paths: list[Path]) -> list[Path]:
    """Certificates publish the plot as SVG (text, reviewable) and the table as CSV."""
    return [p for p in paths if p.suffix in (".svg", ".csv")]


def published_results() -> tuple[ResultSpec, ...]:
    """Every result that gets a certificate, in the order the certificates are listed."""
    # Imported here: the evidence modules import this one for its records.
    from . import kernelref, placement, traces
    from .paths import mooncake_trace

    ceiling = ResultSpec(
        id=traces.RESULT_ID,
        title=traces.RESULT_TITLE,
        theorems=traces.THEOREMS,
        limits=traces.RESULT_LIMITS,
        evidence=traces.evidence,
        artifacts=lambda root, out: _svg_and_csv(traces.write_sweep(mooncake_trace(root), out)),
    )
    kernel = ResultSpec(
        id=kernelref.RESULT_ID,
        title="Single-owner state movement: one live owner, unreadable escrow, stale "
        "transfers refused",
        theorems=kernelref.THEOREMS,
        limits=kernelref.RESULT_LIMITS,
        evidence=kernelref.evidence,
    )
    pooled = ResultSpec(
        id=placement.RESULT_ID,
        title=placement.RESULT_TITLE,
        theorems=placement.THEOREMS,
        limits=placement.RESULT_LIMITS,
        evidence=placement.evidence,
        artifacts=lambda root, out: _svg_and_csv(placement.write_sweep(out)),
    )
    return (ISOLATION_FLOOR, ceiling, kernel, pooled)
