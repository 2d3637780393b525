"""Writing a command's outputs all or nothing: every file is written into a temporary folder
beside the output folder, and moved into place only when all of them were written. A failure
(a full disk, a plot that cannot be rendered, an output folder under a regular file) is an
:class:`OutputError` naming the file, and leaves nothing behind."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pytools.files import require_writable

#: Writes one output into the open (binary) file it is given.
Writer = Callable[[BinaryIO], None]


class OutputError(OSError):
    """An output that could not be written; the message names it and why."""


@dataclass(frozen=True)
class Written:
    """One file written, and the SHA-256 of its bytes."""

    path: Path
    sha256: str


class _HashingFile:
    """A binary file that hashes what is written to it."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self._handle.write(data)


def check_folder(out_dir: Path) -> None:
    """Create ``out_dir``'s parent, failing clearly if a regular file stands in the way
    (commands call it before a long computation, to fail early)."""
    for ancestor in (out_dir, *out_dir.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise OutputError(f"{out_dir}: cannot use as the output folder: "
                                  f"{ancestor} is a regular file")
            break
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot create the output folder: "
                          f"{exc.strerror or exc}") from None
    for folder in (out_dir, out_dir.parent):
        try:
            require_writable(folder)
        except PermissionError:
            raise OutputError(f"{out_dir}: cannot write the outputs: {folder} is read-only; "
                              "nothing was written") from None


def write_outputs(out_dir: Path, outputs: Mapping[str, Writer]) -> list[Written]:
    """Write every output (file name -> writer) into ``out_dir``, all or nothing."""
    out_dir = Path(out_dir)
    check_folder(out_dir)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp",
                                    dir=out_dir.parent))
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot write beside it: {exc.strerror or exc}") from None
    try:
        digests: dict[str, str] = {}
        for name, writer in outputs.items():
            try:
                with open(tmp / name, "wb") as handle:
                    hashing = _HashingFile(handle)
                    writer(hashing)  # type: ignore[arg-type]
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(tmp / name, 0o644)
            except Exception as exc:  # noqa: BLE001 (any failure: report it, write nothing)
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise OutputError(f"{out_dir / name}: could not be written "
                                  f"({type(exc).__name__}: {why}); nothing was written") from None
            digests[name] = hashing.digest.hexdigest()
        if not out_dir.exists():
            os.chmod(tmp, 0o755)
            os.replace(tmp, out_dir)
        else:
            for name in outputs:
                try:
                    os.replace(tmp / name, out_dir / name)
                except OSError as exc:
                    raise OutputError(f"{out_dir / name}: could not be written: "
                                      f"{exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(tmp)
    return [Written(out_dir / name, digests[name]) for name in outputs]
