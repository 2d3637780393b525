"""Where ``pytools site`` puts a site, and what it may replace.

The rule (also in ``pytools site --help`` and README):

- ``--out`` absent (or an empty folder): the site is built in a temporary folder beside it and
  renamed into place;
- a regular file (or anything else that is not a folder) at ``--out`` or above it: refused;
- a folder inside one of the project's generated or tracked trees (:data:`GENERATED_TREES`,
  e.g. ``certificates/``, whose writer replaces what it lists): refused;
- a folder that is not writable (or whose owner-write bit is off, which stops root too),
  or whose nearest existing parent is not: refused, left as it is;
- a link to a folder: the folder it names takes the site (the link is kept, pointing to it);
- a non-empty folder without the marker :data:`MARKER`: refused, left as it is (it is not a
  site of this tool);
- a previous site (a folder with the marker): refused without ``--force``; with ``--force``
  it is replaced wholesale (new site in a sibling temp folder, then two renames), but only if
  every file in it is one the tool wrote, with the bytes it wrote (the marker lists each
  file's SHA-256): a file added or edited since is named and nothing is replaced. The old
  site's files are then removed one by one from the marker's list, never by ``rmtree``;
  a marker entry that is absolute, has an empty, ``.`` or ``..`` part, or leaves the folder
  through a link is refused (nothing outside the site folder is ever removed).

Every refusal is a :class:`SiteOutputError` naming the path and the problem, raised before
anything is written; a failure while writing removes the temporary folder and leaves
``--out`` as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytools.files import atomic_write_bytes, inside, require_writable

from .release import SiteError

#: The file written into every site this tool builds: which files it wrote, and their hashes.
MARKER = ".pytools-site.json"
MARKER_TOOL = "pytools site"

#: The project's folders that its tools write or that hold its code and environment: a site
#: is never put inside one (``certify`` rewrites ``certificates/``, the build ``.lake/``,
#: ``regenerate`` ``Proofs/`` and ``data/``, ``review-statements`` ``reviewed/``), nor at the
#: project root itself.
GENERATED_TREES = ("certificates", ".lake", ".git", "Proofs", "data", "reviewed", "pytools",
                   ".venv", "node_modules")


class SiteOutputError(SiteError):
    """``--out`` cannot take the site; the message names the path and the problem."""


@dataclass(frozen=True)
class Placement:
    """What is at ``out`` now: ``"absent"``, ``"empty"`` or ``"site"`` (a previous site, whose
    files the marker lists)."""

    out: Path
    kind: str
    previous: tuple[str, ...] = ()


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _marker_files(out: Path) -> dict[str, str] | None:
    """The files a previous site's marker lists (relative path -> SHA-256), or None; raises
    if it lists a path that is not safely inside ``out`` (an edited marker)."""
    marker = out / MARKER
    if not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("tool") != MARKER_TOOL:
        return None
    files = data.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        return None
    for rel in sorted(files):
        if not inside(out, rel):
            raise SiteOutputError(
                f"{marker}: lists {rel!r}, which is not a file inside the site folder (an "
                "absolute path, a '..' or a link out of it); nothing was written or deleted")
    return files


def _foreign(out: Path, listed: Mapping[str, str]) -> str | None:
    """The first entry of ``out`` the tool did not write (or that changed since), or None."""
    for folder, dirs, names in os.walk(out, onerror=_raise):
        base = Path(folder)
        for name in sorted(dirs):
            if (base / name).is_symlink():
                return str((base / name).relative_to(out))
        for name in sorted(names):
            path = base / name
            rel = path.relative_to(out).as_posix()
            if rel == MARKER:
                continue
            if path.is_symlink() or not path.is_file() or listed.get(rel) != _sha256(path):
                return rel
    return None


def _raise(exc: OSError) -> None:
    raise exc


def check_generated(out: Path, root: Path) -> None:
    """Raise if ``out`` is the project ``root`` or inside one of its
    :data:`GENERATED_TREES` (links followed)."""
    real = Path(os.path.realpath(out))
    base = Path(os.path.realpath(root))
    if real == base:
        raise SiteOutputError(f"{out}: is the project root; choose a folder of its own "
                              "(default: site/); nothing was written")
    for tree in GENERATED_TREES:
        if real == base / tree or real.is_relative_to(base / tree):
            raise SiteOutputError(
                f"{out}: is inside the project's {tree}/, which its tools write or its code is in; "
                "choose a folder of its own (default: site/); nothing was written")


def _check_parent_writable(out: Path) -> None:
    """Raise unless the nearest existing folder above ``out`` (where the site is built and
    renamed into place) may be written, its owner-write bit honoured even for root."""
    for ancestor in out.parents:
        if ancestor.exists():
            try:
                require_writable(ancestor)
            except PermissionError:
                mode = stat.S_IMODE(ancestor.stat().st_mode)
                raise SiteOutputError(f"{out}: cannot write beside it: {ancestor} is "
                                      f"read-only (mode {mode:o}); nothing was written"
                                      ) from None
            return


def check_out(out: Path, force: bool, root: Path | None = None) -> Placement:
    """Say whether ``out`` may take a site (see the module's rule); raise if not. With the
    project ``root``, a folder inside one of its generated trees is refused too."""
    out = Path(os.path.abspath(out))
    if out.is_symlink() and out.is_dir():  # written through the link: the link is kept
        out = Path(os.path.realpath(out))
    if root is not None:
        check_generated(out, root)
    for ancestor in (out, *out.parents):
        if ancestor.exists() or ancestor.is_symlink():
            if not ancestor.is_dir():
                what = "is a regular file" if ancestor.is_file() else "is not a folder"
                raise SiteOutputError(f"{out}: cannot put the site there: {ancestor} {what}; "
                                      "nothing was written")
            break
    _check_parent_writable(out)
    if not out.exists():
        return Placement(out, "absent")
    try:
        mode = out.stat().st_mode
        entries = list(out.iterdir())
    except OSError as exc:
        raise SiteOutputError(f"{out}: cannot read the folder: {_why(exc)}") from None
    if not os.access(out, os.W_OK) or not mode & stat.S_IWUSR:
        raise SiteOutputError(f"{out}: the folder is read-only "
                              f"(mode {stat.S_IMODE(mode):o}); nothing was written")
    if not entries:
        return Placement(out, "empty")
    listed = _marker_files(out)
    if listed is None:
        raise SiteOutputError(
            f"{out}: the folder is not empty and is not a site built by pytools site "
            f"(no {MARKER}); nothing was written or deleted: choose a new or empty folder")
    if not force:
        raise SiteOutputError(
            f"{out}: holds an earlier site; pass --force to replace it (nothing was written)")
    try:
        stranger = _foreign(out, listed)
    except OSError as exc:
        raise SiteOutputError(f"{out}: cannot read the earlier site: {_why(exc)}") from None
    if stranger is not None:
        raise SiteOutputError(
            f"{out / stranger}: was not written by pytools site (added or edited since the "
            f"earlier site was built); nothing was replaced: move it away first")
    return Placement(out, "site", tuple(sorted(listed)))


def _remove_old_site(old: Path, previous: tuple[str, ...]) -> None:
    """Remove the files an earlier site's marker lists, then its empty folders; anything
    else (a file that appeared since the check) is left where it is."""
    for rel in (*previous, MARKER):
        if not inside(old, rel):  # checked before, checked again: never outside ``old``
            continue
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            (old / rel).unlink()
    for folder, _dirs, _names in sorted(os.walk(old), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def place_site(out: Path, files: Mapping[str, bytes], force: bool = False,
               root: Path | None = None) -> Path:
    """Write ``files`` (relative path -> bytes) and the marker as the site at ``out``, by the
    module's rule (``root``: the project, whose generated trees are refused); return
    ``out``'s absolute path."""
    plan = check_out(out, force, root)
    out = plan.out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as exc:
        raise SiteOutputError(f"{out}: cannot write beside it in {out.parent}: "
                              f"{_why(exc)}; nothing was written") from None
    old: Path | None = None
    try:
        try:
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700: a web server as another user: 404
            digests = {}
            for rel, data in files.items():
                atomic_write_bytes(tmp / rel, data)
                digests[rel] = hashlib.sha256(data).hexdigest()
            marker = {"tool": MARKER_TOOL, "files": dict(sorted(digests.items()))}
            atomic_write_bytes(tmp / MARKER,
                               (json.dumps(marker, indent=1) + "\n").encode("utf-8"))
            if plan.kind != "absent":
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
                old.rmdir()
                out.rename(old)
            tmp.rename(out)
        except OSError as exc:
            if old is not None and not out.exists():
                with contextlib.suppress(OSError):
                    old.rename(out)
                old = None
            raise SiteOutputError(f"{exc.filename or out}: could not write the site: "
                                  f"{_why(exc)}; {out} is as it was") from None
    except BaseException:
        _remove_tmp(tmp, files)
        raise
    if old is not None:
        _remove_old_site(old, plan.previous)
    return out


def _remove_tmp(tmp: Path, files: Mapping[str, bytes]) -> None:
    """Remove the temporary folder this call made (only what it wrote into it)."""
    if tmp.exists():
        _remove_old_site(tmp, tuple(files))
