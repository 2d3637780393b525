"""Issue 42 in the page's verifier: several files dropped together get ONE verdict, red when
any of them is red (as ``pytools verify`` exits 1), every file listed under it (row 4); a file
over the size limit is reported with its own size, not the limit's (row 12)."""

from __future__ import annotations

from typing import Any

import pytest
from test_browser import _open, _reset, _verdict, browser_context, built  # noqa: F401

pytestmark = pytest.mark.browser


def _listed(page: Any) -> list[dict[str, str]]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#verdicts-more li.more'))
        .map(li => ({cls: li.className, text: li.textContent}))""")


def test_row4_one_tampered_file_among_genuine_ones_makes_the_whole_drop_red(
        browser_context: Any, built: dict[str, Any], tmp_path: Any) -> None:  # noqa: F811
    paths = built["paths"]
    tampered = tmp_path / "tampered-floor.json"
    tampered.write_bytes(paths["floor"].read_bytes().replace(b"zero-leak", b"zero-lake"))
    page, _, errors = _open(browser_context, built["index"].as_uri())
    try:
        _reset(page)
        page.set_input_files("#file", [str(paths["manifest"]), str(paths["ceiling"]),
                                       str(paths["floor"]), str(tampered)])
        got = _verdict(page)
        assert got["state"] == "red", got
        assert "3 files: 2 green, 1 red; first red: tampered-floor.json" in got["text"]
        listed = _listed(page)
        assert [li["cls"] for li in listed] == ["more green", "more green", "more red"]
        assert [li["text"].split()[1] for li in listed] == [
            "demand-fetch-ceiling.json", "isolation-floor.json", "tampered-floor.json"]
        assert got["codes"] and got["codes"][-1] != "policy-ok"

        _reset(page)  # the same drop without the tampered file: green over both
        page.set_input_files("#file", [str(paths["manifest"]), str(paths["ceiling"]),
                                       str(paths["floor"])])
        got = _verdict(page)
        assert got["state"] == "green", got
        assert "2 files: 2 green, 0 red" in got["text"]
        assert [li["cls"] for li in _listed(page)] == ["more green", "more green"]

        _reset(page)  # one file alone: its own verdict and reasons, as before
        page.set_input_files("#file", str(tampered))
        got = _verdict(page)
        assert got["state"] == "red" and "tampered-floor.json" in got["text"]
        assert _listed(page) == []
        assert errors == []
    finally:
        page.close()


def test_row12_a_file_over_the_limit_is_reported_with_its_own_size(
        browser_context: Any, built: dict[str, Any]) -> None:  # noqa: F811
    page, _, errors = _open(browser_context, built["index"].as_uri())
    try:
        size = 5 * 1024 * 1024 + 7
        _reset(page)
        handle = page.evaluate_handle(
            """(n) => { const dt = new DataTransfer();
                dt.items.add(new File([new Uint8Array(n)], 'big.json'));
                return dt; }""", size)
        page.dispatch_event("#drop", "drop", {"dataTransfer": handle})
        got = _verdict(page)
        assert got["state"] == "red" and "too-large" in got["codes"], got
        assert f"too-large: {size} bytes (limit {4 * 1024 * 1024})" in got["text"]
        assert errors == []
    finally:
        page.close()
