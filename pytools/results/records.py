"""What the experiments that commit a record share (a room may not import another room): the
one way a solver's record is written and read back, and the solver version it names."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_text


def write_record(path: Path, record: dict[str, Any]) -> None:
    """Write the record atomically (the old file or the whole new one, never half)."""
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")


def read_record(path: Path, kind: str, record_format: str,
                error: type[Exception]) -> tuple[dict[str, Any], str]:
    """The ``kind`` record at ``path`` (a JSON object whose ``format`` is ``record_format``) and
    the SHA-256 of the bytes parsed; raises ``error`` naming the file if it is absent, not
    JSON, or not a record of that format."""
    try:
        data = Path(path).read_bytes()
        record = json.loads(data.decode("utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read the {kind} record: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{path}: not a JSON {kind} record ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != record_format:
        raise error(f"{path}: not a {kind} record (format {record_format!r})")
    return record, hashlib.sha256(data).hexdigest()


def ortools_version() -> str:
    """The installed OR-Tools version (imported only when a record is made)."""
    import ortools

    return str(ortools.__version__)
