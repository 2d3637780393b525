"""What the experiments that commit a record share (a room may not import another room): the
one way a solver's record is written, and the solver version it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_text


def write_record(path: Path, record: dict[str, Any]) -> None:
    """Write the record atomically (the old file or the whole new one, never half)."""
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")


def ortools_version() -> str:
    """The installed OR-Tools version (imported only when a record is made)."""
    import ortools

    return str(ortools.__version__)
