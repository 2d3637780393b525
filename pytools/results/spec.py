"""The records every published result shares: its spec, its evidence and the inputs that
evidence was computed from. This module imports nothing of the project: every result
imports it, and the registry imports the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


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


class GeneratedFile(Protocol):
    """A committed file a generator writes (:class:`pytools.results.generated.Generated`;
    named here by its shape, so that this module imports nothing of the project)."""

    @property
    def path(self) -> Path: ...

    @property
    def command(self) -> str: ...

    def check(self, root: Path) -> list[str]: ...

    def write(self, root: Path) -> bool: ...


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
    #: The committed files generated from the result's inputs, in the order they are
    #: regenerated (a later one may read an earlier one); ``pytools regenerate`` writes them.
    generated: tuple[GeneratedFile, ...] = ()
    #: For an input path, the only figures computed from it (the page badges just those when
    #: the file is absent where it is built); an input not named here is read by every figure.
    input_figures: dict[str, tuple[str, ...]] = field(default_factory=dict)


def no_evidence(root: Path) -> Evidence:
    """A purely mathematical result: no data inputs, no figures."""
    return Evidence(figures={})



def svg_and_csv(paths: list[Path]) -> list[Path]:
    """Certificates publish a plot as SVG (text, reviewable) and a table as CSV."""
    return [p for p in paths if p.suffix in (".svg", ".csv")]
