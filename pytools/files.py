"""Writing files safely: the one atomic write every writer of the project uses.

A reader sees either the old file or the whole new one, never half of it; a failure leaves
the old file (or nothing) and no temporary file behind. The lowest layer: it imports nothing
of the project, so ``lean``, ``results``, ``publish`` and ``admission`` can all use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path


def unsafe_relpath(rel: str) -> bool:
    """Whether a listed relative path (``/``-separated) could name something outside its
    folder: empty, absolute, a backslash or NUL in it, or an empty, ``.`` or ``..`` part."""
    return (not rel or rel.startswith("/") or "\\" in rel or "\0" in rel
            or any(part in ("", ".", "..") for part in rel.split("/")))


def inside(folder: Path, rel: str) -> bool:
    """Whether ``folder / rel`` lies in ``folder`` once every link on the way to it is
    followed (and ``rel`` is safe, see :func:`unsafe_relpath`)."""
    if unsafe_relpath(rel):
        return False
    base = Path(os.path.realpath(folder))
    parent = Path(os.path.realpath((Path(folder) / rel).parent))
    return parent == base or parent.is_relative_to(base)


def make_dirs(folder: Path, mode: int = 0o755) -> None:
    """Create ``folder`` and its missing parents, each with ``mode`` whatever the umask (a web
    server running as another user must be able to read what is published)."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            break
        if candidate.exists():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory (a file stands there)",
                                     str(candidate))
        missing.append(candidate)
    for created in reversed(missing):
        created.mkdir(exist_ok=True)
        os.chmod(created, mode)


def require_writable(folder: Path) -> None:
    """Raise ``PermissionError`` (naming ``folder``) if ``folder`` exists and may not be written
    into: by access(2), or because its owner-write bit is off, which is honoured for root too
    (access(2) lets root write anywhere; a folder made read-only is meant to stay as it is)."""
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode) and (not mode & stat.S_IWUSR or not os.access(folder, os.W_OK)):
        raise PermissionError(errno.EACCES, "Permission denied (the folder is read-only)",
                              str(folder))


def check_can_write(path: Path) -> None:
    """Raise an ``OSError`` naming the culprit unless ``path`` could be written now: it is not
    a folder, and the nearest existing folder above it is a folder and writable (see
    :func:`require_writable`). Creates nothing: for commands that check before they compute."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "Is a directory, not a file", str(path))
    for ancestor in path.parents:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory (a file stands there)",
                                         str(ancestor))
            require_writable(ancestor)
            return


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, mode: int = 0o644, fsync: bool = True
) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and ``os.replace``.

    The parent folder is created if needed (see :func:`make_dirs`); the file gets ``mode``
    (whatever the umask); with ``fsync`` the bytes reach the disk before the rename, so a
    crash leaves the old file or the new one. The temp file is removed if anything fails.
    """
    target = Path(path)
    make_dirs(target.parent)
    require_writable(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(
    path: str | os.PathLike[str], text: str, mode: int = 0o644, fsync: bool = True
) -> None:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8 (newlines written as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, fsync=fsync)


def atomic_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Copy ``src`` to ``dst`` atomically (no fsync: build outputs that can be remade)."""
    atomic_write_bytes(dst, Path(src).read_bytes(), fsync=False)
