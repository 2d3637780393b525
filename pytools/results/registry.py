"""The registry of published results: one room per result, in the order certificates list them.

Each published result names the Lean theorems it rests on, the limits under which it holds,
and a function that computes its figures from input files (whose hashes the certificate
records). :mod:`pytools.publish.certify` turns each entry into one certificate.
"""

from __future__ import annotations

from collections.abc import Iterable

from .ceiling.result import SPEC as CEILING
from .isolation import SPEC as ISOLATION
from .kernel.result import SPEC as KERNEL
from .leak.result import SPEC as LEAK
from .placement.result import SPEC as PLACEMENT
from .spec import ResultSpec


def published_results() -> tuple[ResultSpec, ...]:
    """Every result that gets a certificate, in the order the certificates are listed."""
    return (ISOLATION, CEILING, KERNEL, PLACEMENT, LEAK)


def published_theorems(results: Iterable[ResultSpec] | None = None) -> list[str]:
    """Every theorem some published result rests on (default: every result of
    :func:`published_results`), sorted, each once."""
    chosen = published_results() if results is None else results
    return sorted({name for spec in chosen for name in spec.theorems})
