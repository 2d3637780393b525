"""Issue 42, rows 1, 2, 6 and 7: ``pytools site --out`` never removes or writes anything
outside the site folder, never writes into a generated tree, never follows a link to an
earlier site, and honours a read-only parent even as root. Each test is a planted defect that
today's code let through."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from bundles import make_release
from click.testing import CliRunner

from pytools.publish.cli import site as site_main
from pytools.publish.site.page import build_site
from pytools.publish.site.placement import MARKER

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _site(root: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(site_main, ["--root", str(root), "--out", str(out), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.fixture
def release(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    make_release(root)
    return root


@pytest.mark.parametrize("entry", ["../victim.txt", "ABSOLUTE", "sub/../../victim.txt",
                                   "./../victim.txt"])
def test_row1_an_edited_marker_never_deletes_outside_the_site(
        release: Path, tmp_path: Path, entry: str) -> None:
    """Row 1: a marker edited to list ``../victim.txt`` or an absolute path is refused with
    --force, and both files outside the site stay."""
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    far = tmp_path / "elsewhere" / "far.txt"
    far.parent.mkdir()
    far.write_text("also mine\n", encoding="utf-8")
    rel = str(far) if entry == "ABSOLUTE" else entry
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    marker["files"][rel] = "0" * 64
    (out / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    before = _tree(out)
    code, output = _site(release, out, "--force")
    assert code == 1
    assert f"{out / MARKER}: lists {rel!r}, which is not a file inside the site" in output
    assert victim.read_text(encoding="utf-8") == "mine\n"
    assert far.read_text(encoding="utf-8") == "also mine\n"
    assert _tree(out) == before


def test_row1_a_marker_entry_through_a_link_out_is_refused(release: Path,
                                                          tmp_path: Path) -> None:
    """Row 1: an entry under a folder link that leaves the site (``out/l -> ..``)."""
    out = tmp_path / "site"
    build_site(release, out, now=NOW)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    marker["files"]["l/victim.txt"] = "0" * 64
    (out / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    (out / "l").symlink_to(tmp_path, target_is_directory=True)
    code, output = _site(release, out, "--force")
    assert code == 1 and "'l/victim.txt', which is not a file inside the site" in output
    assert victim.read_text(encoding="utf-8") == "mine\n"


def test_row1_removal_skips_an_unsafe_entry_even_unchecked(tmp_path: Path) -> None:
    """Row 1, the second lock: the remover itself skips an entry outside its folder."""
    from pytools.publish.site.placement import _remove_old_site

    old = tmp_path / "old"
    old.mkdir()
    (old / "a.txt").write_text("site\n", encoding="utf-8")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    _remove_old_site(old, ("a.txt", "../victim.txt", str(victim)))
    assert victim.read_text(encoding="utf-8") == "mine\n"
    assert not old.exists()


@pytest.mark.parametrize("inner", ["certificates/figures/x", "certificates", ".lake/site",
                                   "Proofs/site", "."])
def test_row2_site_refuses_a_folder_inside_a_generated_tree(release: Path,
                                                            inner: str) -> None:
    """Row 2: ``site --out certificates/figures/x`` (and the other generated trees, and the
    project root) is refused before anything is written."""
    before = _tree(release)
    out = release / inner
    code, output = _site(release, out)
    assert code == 1
    assert f"{out}: is " in output and "nothing was written" in output
    assert _tree(release) == before


def test_row2_site_refuses_a_generated_tree_reached_through_a_link(release: Path,
                                                                  tmp_path: Path) -> None:
    """Row 2: a link to ``certificates/`` is the same folder."""
    link = tmp_path / "link"
    link.symlink_to(release / "certificates", target_is_directory=True)
    code, output = _site(release, link / "x")
    assert code == 1 and "inside the project's certificates/" in output
    assert not (release / "certificates" / "x").exists()


def _manifest(files: dict[str, bytes]) -> bytes:
    import hashlib

    return json.dumps({"schema_version": "2", "theorems": [], "files": [
        {"path": p, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
        for p, d in sorted(files.items())]}).encode()


def test_row2_certify_removes_only_figure_files_it_listed(tmp_path: Path) -> None:
    """Row 2: certify's writer removes a figure file the previous manifest listed and no run
    makes any more, and nothing else: a user's notes (never listed) and a listed file edited
    since stay, the latter named in the notes."""
    from pytools.publish import bundle

    root = tmp_path
    figs = root / "certificates" / "figures"
    first = {"certificates/figures/r/a.csv": b"a\n", "certificates/figures/r/gone.csv": b"g\n",
             "certificates/figures/r/edited.csv": b"e\n"}
    derived = bundle.Derived(files={**first, str(bundle.MANIFEST): _manifest(first)})
    bundle.write_all(root, derived)
    (figs / "r" / "notes.md").write_text("mine\n", encoding="utf-8")
    (figs / "x").mkdir()
    (figs / "x" / "index.html").write_text("a site\n", encoding="utf-8")
    (figs / "r" / "edited.csv").write_bytes(b"edited by hand\n")
    second = {"certificates/figures/r/a.csv": b"a2\n"}
    derived = bundle.Derived(files={**second, str(bundle.MANIFEST): _manifest(second)})
    bundle.write_all(root, derived)
    assert not (figs / "r" / "gone.csv").exists()
    assert (figs / "r" / "a.csv").read_bytes() == b"a2\n"
    assert (figs / "r" / "notes.md").read_text(encoding="utf-8") == "mine\n"
    assert (figs / "x" / "index.html").read_text(encoding="utf-8") == "a site\n"
    assert (figs / "r" / "edited.csv").read_bytes() == b"edited by hand\n"
    assert any("left certificates/figures/r/edited.csv" in n for n in derived.notes)


def test_row2_certify_ignores_a_listed_path_outside_the_figures(tmp_path: Path) -> None:
    """Row 2: a previous manifest listing ``../victim`` under figures/ removes nothing."""
    from pytools.publish import bundle

    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"v\n")
    root = tmp_path / "project"
    listed = {"certificates/figures/../../../victim.txt": b"v\n"}
    (root / "certificates").mkdir(parents=True)
    (root / bundle.MANIFEST).write_bytes(_manifest(listed))
    bundle.write_all(root, bundle.Derived(files={str(bundle.MANIFEST): _manifest({})}))
    assert victim.read_bytes() == b"v\n"


def test_row6_force_through_a_link_writes_the_folder_it_names(release: Path,
                                                             tmp_path: Path) -> None:
    """Row 6: ``site --out LINK --force``, LINK a link to an earlier site, emptied the target,
    replaced the link by a folder and left ``.LINK.old.*``; now the site is written through
    the link, which is kept, and nothing is left behind."""
    real = tmp_path / "real"
    build_site(release, real, now=dt.datetime(2026, 11, 30, tzinfo=dt.UTC))
    old = _tree(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    code, output = _site(release, link, "--force")
    assert code == 0, output
    assert link.is_symlink() and link.resolve() == real.resolve()
    new = _tree(real)
    assert set(new) == set(old) and new["index.html"] != old["index.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "project", "real"]


def test_row6_a_link_to_a_foreign_folder_is_still_refused(release: Path,
                                                         tmp_path: Path) -> None:
    """Through a link, the same rule: a folder that is not a site is left as it is."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "notes.md").write_text("mine\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    code, output = _site(release, link, "--force")
    assert code == 1 and "is not a site built by pytools site" in output
    assert _tree(real) == {"notes.md": b"mine\n"} and link.is_symlink()


@pytest.mark.parametrize("depth", ["site", "a/b/site"])
def test_row7_a_read_only_parent_is_refused_even_for_root(release: Path, tmp_path: Path,
                                                          depth: str) -> None:
    """Row 7: ``--out`` a new folder inside a mode-555 parent was written as root; the
    owner-write bit is honoured for root too, as the docs say."""
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    out = parent / depth
    try:
        code, output = _site(release, out)
        assert code == 1
        assert f"{out}: cannot write beside it: {parent} is read-only (mode 555)" in output
        assert list(parent.iterdir()) == []
    finally:
        parent.chmod(0o755)


def test_row7_replacing_a_site_in_a_read_only_parent_is_refused(release: Path,
                                                               tmp_path: Path) -> None:
    """Row 7: the site is built beside --out and renamed: a read-only parent stops that."""
    parent = tmp_path / "ro"
    out = parent / "site"
    build_site(release, out, now=NOW)
    before = _tree(parent)
    parent.chmod(0o555)
    try:
        code, output = _site(release, out, "--force")
        assert code == 1 and f"{parent} is read-only (mode 555)" in output
        assert _tree(parent) == before
        assert sorted(p.name for p in parent.iterdir()) == ["site"]
    finally:
        parent.chmod(0o755)
