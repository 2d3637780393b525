"""README is one page for the people who use it, and its links lead somewhere: at most 150
lines, the generated blocks certify fills (the pin, the results, the trust list) in place, and
every relative link of README and docs/ names a file that exists and, with ``#anchor``, a
heading there."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 150
BLOCKS = ("pin", "summary", "trust")

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of the Markdown file ``path`` that lead nowhere."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{path.relative_to(root)}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{path.relative_to(root)}: {target}: no such heading")
    return broken


def test_readme_fits_one_page_with_its_generated_blocks() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    for name in BLOCKS:
        start, end = f"<!-- pytools.certify:{name} -->", f"<!-- /pytools.certify:{name} -->"
        assert text.count(start) == text.count(end) == 1, name
        assert text.index(start) < text.index(end), name
    assert text.index("pytools.certify:pin") < text.index("## The results")


def test_readme_states_the_python_pyproject_requires() -> None:
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    version = requires.removeprefix(">=")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Python {version}+" in text and "<!-- not-figures: " + version in text


def test_every_relative_link_leads_somewhere() -> None:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert [b for f in files for b in broken_links(f)] == []


def test_planted_broken_links_are_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Top\n\n## The results\n")
    (tmp_path / "docs" / "verify.md").write_text("# Verifying\n")
    doc = tmp_path / "docs" / "page.md"
    doc.write_text("# Here\n[a](results/none.md) [b](verify.md#nowhere) [c](#here) "
                   "[d](../README.md#the-results) [e](https://example.org/x) [f](verify.md)\n")
    assert broken_links(doc, tmp_path) == [
        "docs/page.md: results/none.md: no such file",
        "docs/page.md: verify.md#nowhere: no such heading"]


def test_slug_is_githubs() -> None:
    assert slug("What green means, and what you trust") == "what-green-means-and-what-you-trust"
    assert slug("The ceiling on your own trace") == "the-ceiling-on-your-own-trace"
    assert slug("Measured (`benchmarks/bench_curve.py`)") == "measured-benchmarksbench_curvepy"
