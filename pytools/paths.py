"""Where the project's files and the shared data live."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: The public Mooncake conversation trace, relative to the shared-data folder.
MOONCAKE_TRACE = Path("data/mooncake/conversation_trace.jsonl")


def project_root() -> Path:
    """The repository root: the folder holding ``lakefile.lean`` above this package."""
    here = Path(__file__).resolve().parent.parent
    if (here / "lakefile.lean").is_file():
        return here
    return Path.cwd()


def shared_dir(root: Path | None = None) -> Path:
    """The shared-data folder: ``$PYTOOLS_SHARED`` if set, else ``../shared`` beside the root."""
    env = os.environ.get("PYTOOLS_SHARED")
    if env:
        return Path(env).resolve()
    return ((root or project_root()) / ".." / "shared").resolve()


#: Input paths certificates record under this prefix name the shared-data folder beside the
#: repository (``$PYTOOLS_SHARED`` when set: :func:`shared_dir`).
SHARED_PREFIX = "../shared/"


def input_path(root: Path, rel: str) -> Path:
    """Where a certificate's input ``rel`` (relative to the repository root) is on this
    machine: under :func:`shared_dir` for a ``../shared/`` path, else under ``root``."""
    if rel.startswith(SHARED_PREFIX):
        return shared_dir(root) / rel[len(SHARED_PREFIX):]
    return root / rel


def mooncake_trace(root: Path | None = None) -> Path:
    """Path of the public Mooncake conversation trace (it may be absent)."""
    return shared_dir(root) / MOONCAKE_TRACE


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
