"""Where a certificate comes from: the git tree of the library's files, the commit they were
taken from, and the SHA-256 of every compiled ``.olean`` part the audit read.

The **library tree** is the git tree object that has exactly the entries
:data:`~pytools.lean.build_audit.LIBRARY_ENTRIES` of the repository root (the library's folder,
its root module, ``lakefile.lean`` and ``lean-toolchain``) with their contents, hashed the
way git hashes trees (SHA-1 object ids). It is computed here in Python from the files on
disk, so it needs no git and works on an unpacked tarball; on a git checkout an auditor gets
the same id with

    git ls-tree HEAD Proofs Proofs.lean lakefile.lean lean-toolchain | git mktree

Files git ignores are left out when git is there to say which; elsewhere every file under the
folder counts. The **commit** is the newest commit whose library tree is that tree (``None``
when the files on disk are not committed).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pytools.lean.build import BUILD_DIR
from pytools.lean.build_audit import LIBRARY_ENTRIES
from pytools.lean.olean import PART_SUFFIXES
from pytools.paths import sha256_file


class ProvenanceError(RuntimeError):
    """The library's files cannot be read or hashed; the message names the file."""


@dataclass(frozen=True)
class Source:
    """The certificate's ``source`` block."""

    library_tree: str
    tree_entries: tuple[str, ...]
    commit: str | None

    def as_json(self) -> dict[str, object]:
        return {
            "library_tree": self.library_tree,
            "tree_entries": list(self.tree_entries),
            "commit": self.commit,
        }


# --------------------------------------------------------------------------- git objects


def _object_id(kind: str, body: bytes) -> bytes:
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body, usedforsecurity=False).digest()


def blob_id(data: bytes) -> str:
    """The git object id of a file with these bytes (``git hash-object``)."""
    return _object_id("blob", data).hex()


def tree_id(entries: Iterable[tuple[str, str, str]]) -> str:
    """The git object id of a tree of ``(mode, name, hex id)`` entries (``git mktree``).

    Git orders entries by name, a sub-tree's name compared as if it ended in ``/``.
    """
    rows = sorted(entries, key=lambda e: e[1] + ("/" if e[0] == "40000" else ""))
    body = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in rows
    )
    return _object_id("tree", body).hex()


def _git(root: Path, *args: str) -> str | None:
    """Output of a git command in ``root``, or None when git or the repository is absent."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _is_git_root(root: Path) -> bool:
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == root.resolve()


def _listed_files(root: Path, entries: Sequence[str]) -> list[str] | None:
    """Files under ``entries`` that git tracks or would add (not ignored), or None."""
    if not _is_git_root(root):
        return None
    out = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
               *entries)
    if out is None:
        return None
    return sorted({p for p in out.split("\0") if p and (root / p).exists()})


def _walk(root: Path, entries: Sequence[str]) -> list[str]:
    found = []
    for entry in entries:
        path = root / entry
        if path.is_file() or path.is_symlink():
            found.append(entry)
        elif path.is_dir():
            for dirpath, _dirs, files in os.walk(path):
                for name in files:
                    found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(found)


def _mode(path: Path) -> str:
    if path.is_symlink():
        return "120000"
    return "100755" if path.stat().st_mode & 0o100 else "100644"


def _file_id(path: Path) -> str:
    try:
        if path.is_symlink():
            return blob_id(os.readlink(path).encode())
        return blob_id(path.read_bytes())
    except OSError as exc:
        raise ProvenanceError(f"{path}: cannot read ({exc.strerror})") from None


def library_tree(root: Path, entries: Sequence[str] = LIBRARY_ENTRIES) -> str:
    """The git tree id of ``entries`` of ``root`` as they are on disk (see the module doc)."""
    files = _listed_files(root, entries)
    if files is None:
        files = _walk(root, entries)
    if not files:
        raise ProvenanceError(f"{root}: none of {', '.join(entries)} is there")
    # nested dict: folder -> {name: (mode, id) | dict}
    tree: dict[str, object] = {}
    for rel in files:
        parts = PurePosixPath(rel).parts
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        path = root / rel
        node[parts[-1]] = (_mode(path), _file_id(path))  # type: ignore[index]

    def hashed(node: dict[str, object]) -> str:
        rows = []
        for name, value in node.items():
            if isinstance(value, dict):
                rows.append(("40000", name, hashed(value)))
            else:
                mode, oid = value  # type: ignore[misc]
                rows.append((mode, name, oid))
        return tree_id(rows)

    return hashed(tree)


def commit_tree(root: Path, commit: str,
                entries: Sequence[str] = LIBRARY_ENTRIES) -> str | None:
    """The library tree of ``commit`` in the git repository at ``root`` (None: unknown commit)."""
    out = _git(root, "ls-tree", "-z", commit, "--", *entries)
    if out is None:
        return None
    rows = []
    for line in out.split("\0"):
        if not line:
            continue
        meta, name = line.split("\t", 1)
        mode, _kind, oid = meta.split()
        rows.append((mode.lstrip("0"), name, oid))  # ls-tree pads "40000" to "040000"
    return tree_id(rows) if rows else None


def source_commit(root: Path, tree: str,
                  entries: Sequence[str] = LIBRARY_ENTRIES) -> str | None:
    """The newest commit whose library tree is ``tree``, or None (uncommitted, or no git)."""
    if not _is_git_root(root):
        return None
    out = _git(root, "log", "-1", "--format=%H", "--", *entries)
    commit = (out or "").strip() or None
    if commit is None or commit_tree(root, commit, entries) != tree:
        return None
    return commit


def source(root: Path, commit: str | None | bool = True) -> Source:
    """The ``source`` block of ``root`` now. ``commit``: True to look it up in git, else the
    commit to record (a commit recorded before: see :func:`check_recorded_commit`)."""
    tree = library_tree(root)
    chosen = source_commit(root, tree) if commit is True else (commit or None)
    return Source(tree, LIBRARY_ENTRIES, chosen)  # type: ignore[arg-type]


def check_recorded_commit(root: Path, recorded: Source) -> list[str]:
    """Problems with a recorded commit: git knows it and its library tree is another one.

    A commit git does not know (a shallow clone, a tarball) is not a problem: the tree id,
    recomputed from the files, is what binds the certificate to its sources.
    """
    if recorded.commit is None:
        return []
    tree = commit_tree(root, recorded.commit, recorded.tree_entries)
    if tree is not None and tree != recorded.library_tree:
        return [f"recorded commit {recorded.commit} has library tree {tree}, "
                f"not the recorded {recorded.library_tree}"]
    return []


# --------------------------------------------------------------------------- .olean parts


def olean_parts(root: Path, modules: Iterable[str]) -> tuple[list[dict[str, str]], list[str]]:
    """SHA-256 of every compiled part of ``modules`` in the build folder, and what is missing.

    Paths are relative to ``root`` (``.lake/build/lib/lean/Proofs/X.olean``, ``.server``,
    ``.private``), the parts :mod:`pytools.lean.olean` reads.
    """
    listed: list[dict[str, str]] = []
    missing: list[str] = []
    for module in sorted(set(modules)):
        base = BUILD_DIR / Path(*module.split("."))
        for suffix in PART_SUFFIXES:
            rel = base.with_name(base.name + ".olean" + suffix)
            path = root / rel
            if path.is_file():
                listed.append({"path": rel.as_posix(), "sha256": sha256_file(path)})
            elif suffix == "":
                missing.append(rel.as_posix())
    return listed, missing
