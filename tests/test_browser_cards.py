"""Issue 42, the page's cards: each result's card states its finding in one sentence with its
figures, generated from the certificate by the headline README uses (never typed), at 1280 and
390 px; the figures' tables are folded behind a summary, their names shown as labels; the
page of the committed release still fits fifteen screens at 1280 px."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_browser import (  # noqa: F401
    MAX_SCREENS,
    ROOT,
    SCREEN,
    WIDTHS,
    _open,
    _overflows,
    browser_context,
    built,
    committed,
)

from pytools.publish.headlines import headline
from pytools.publish.site.page import build_site, human_label

pytestmark = pytest.mark.browser


def _cards(page: Any) -> dict[str, dict[str, Any]]:
    return {c["href"][1:]: c for c in page.eval_on_selector_all(
        "nav.cards a.card", """els => els.map(a => {
            const f = a.querySelector('.card-finding');
            const r = a.getBoundingClientRect();
            return {href: a.getAttribute('href'), finding: f ? f.textContent : null,
                    visible: f ? f.checkVisibility() : false, width: r.width,
                    height: r.height};
        })""")}


def _said(cert: dict[str, Any]) -> str:
    text = headline(cert)
    assert text is not None
    return (text[:1].upper() + text[1:] + ".").replace("`", "")


def test_each_card_states_its_certificates_finding(
        browser_context: Any, committed: Path) -> None:  # noqa: F811
    page, _, errors = _open(browser_context, committed.as_uri())
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": SCREEN})
            page.wait_for_timeout(150)
            cards = _cards(page)
            for path in sorted((ROOT / "certificates").glob("*.json")):
                cert = json.loads(path.read_text(encoding="utf-8"))
                if "result" not in cert:
                    continue
                card = cards[cert["result"]]
                assert card["finding"] == _said(cert), (width, cert["result"])
                assert card["visible"] and card["width"] <= width
                section = page.locator(f"#{cert['result']} p.finding").inner_text()
                assert section == _said(cert)
            assert _overflows(page) == []
        assert errors == []
    finally:
        page.close()


def test_a_finding_follows_the_certificate_not_the_template(
        browser_context: Any, built: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    """Planted: the certificate's ceiling figure changes (re-hashed, re-listed: a release
    whose ceiling is another number); the card says the new number."""
    from bundles import make_release

    trace = b"a\nb\nc\nd\na\n"  # 1 hit of 5: 20 %
    paths = make_release(tmp_path / "release", trace_bytes=trace)
    index = build_site(paths["manifest"].parent.parent, tmp_path / "site")
    page, _, _ = _open(browser_context, index.as_uri())
    try:
        finding = _cards(page)["demand-fetch-ceiling"]["finding"]
        assert "20.0000 % of the whole trace (1 of 5 references)" in finding
    finally:
        page.close()


def test_figures_are_folded_with_labels_and_the_page_fits(
        browser_context: Any, committed: Path) -> None:  # noqa: F811
    page, _, _ = _open(browser_context, committed.as_uri())
    try:
        page.set_viewport_size({"width": 1280, "height": SCREEN})
        page.wait_for_timeout(150)
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= MAX_SCREENS * SCREEN, height / SCREEN
        folds = page.eval_on_selector_all(
            "section.result details.figures-fold",
            "els => els.map(d => [d.closest('section').id, d.open, "
            "d.querySelector('summary').textContent])")
        assert folds and all(not is_open for _, is_open, _ in folds)
        assert all("Figures and their evidence (" in summary for _, _, summary in folds)
        page.evaluate("document.querySelectorAll('details.figures-fold')"
                      ".forEach(d => { d.open = true; })")
        labels = page.eval_on_selector_all(
            "tr[data-figure] .fig-label",
            "els => els.map(e => [e.closest('tr').dataset.figure, e.textContent])")
        assert labels and all(text == human_label(name) for name, text in labels)
        assert all("_" not in text for _, text in labels)
    finally:
        page.close()


def test_human_label() -> None:
    assert human_label("per_instance_hit_rate") == "Per instance hit rate"
    assert human_label("lru_percent") == "LRU percent"
    assert human_label("kv-aware_spread") == "Kv-aware spread"
