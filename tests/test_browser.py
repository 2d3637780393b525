"""The static page in headless Chromium: the in-page verifier agrees with the CLI on every
sample (anchors included: pin, Ed25519 signature through WebCrypto, forged pairs, a wrong
key), an auditor's own pin and key typed into the page decide the verdict, the page fits a
390 px phone and a 1280 px laptop without sideways scrolling, plots are drawn, no internal
names are shown, and the page makes no network request.

Needs Debian ``chromium`` and the PyPI ``playwright`` package (``.ci/install-browser.sh``);
Playwright drives the system Chromium through ``executable_path`` (no browser download).
Skips with the reason when either is missing. Screenshots go to ``artifacts/`` (gitignored).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bundles import forge_pair, make_release, weaken_floor, write_public_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.publish.keys import load_trusted_keys
from pytools.publish.site.page import build_site
from pytools.publish.site.release import build_samples, load_release
from pytools.publish.verify import load_manifest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VERDICT_DONE = ('#verdict[data-state="green"], #verdict[data-state="red"], '
                '#verdict[data-state="error"]')


def _chromium() -> str:
    for candidate in (
        os.environ.get("PYTOOLS_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.skip("no Chromium found (run .ci/install-browser.sh or set PYTOOLS_CHROMIUM)")


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (.ci/install-browser.sh)"
    )
    executable = _chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("release")
    key = Ed25519PrivateKey.generate()
    paths = make_release(root, key=key)
    publisher = load_trusted_keys([paths["public_key"]])
    index = build_site(root, root / "site", publisher_keys=publisher)
    forged = tmp_path_factory.mktemp("forged")
    shutil.copytree(root / "certificates", forged / "certificates")
    forge_pair(forged, weaken_floor)
    wrong = write_public_key(forged / "wrong.pem", Ed25519PrivateKey.generate())
    return {"root": root, "paths": paths, "index": index, "publisher": publisher,
            "forged": forged, "wrong": wrong}


@pytest.fixture(scope="module")
def http_url(built: dict[str, Any]) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(built["index"].parent))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def _open(context: Any, url: str, init_script: str | None = None
          ) -> tuple[Any, list[str], list[str]]:
    page = context.new_page()
    if init_script:
        page.add_init_script(init_script)
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    # Selectors, not wait_for_function: the page's CSP forbids evaluating strings.
    page.wait_for_selector('#selfcheck:not([data-state="pending"])', state="attached",
                           timeout=30000)
    return page, requests, errors


def _verdict(page: Any) -> dict[str, Any]:
    page.wait_for_selector(VERDICT_DONE, state="attached", timeout=30000)
    state = page.get_attribute("#verdict", "data-state")
    codes = (page.get_attribute("#verdict", "data-codes") or "").split()
    return {"state": state, "codes": codes, "text": page.inner_text("#verdict")}


def _reset(page: Any) -> None:
    page.evaluate("document.getElementById('verdict').dataset.state = 'idle'")


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_page_verifies_every_sample_as_the_cli_does(
    browser_context: Any, built: dict[str, Any], http_url: str, scheme: str
) -> None:
    url = built["index"].as_uri() if scheme == "file" else http_url
    page, requests, errors = _open(browser_context, url)
    try:
        assert page.get_attribute("#selfcheck", "data-state") == "agree", page.inner_text(
            "#selfcheck")
        assert page.get_attribute("#ed25519", "data-state") == "yes"
        data = json.loads(page.text_content("#pcv-data"))
        samples = {s["id"]: s for s in data["samples"]}
        release = load_release(built["root"])
        assert set(samples) == {s.id for s in build_samples(release, built["publisher"])}
        for sample_id, sample in samples.items():
            _reset(page)
            page.click(f"button[data-sample={sample_id}]")
            got = _verdict(page)
            want = sample["expected"]  # the CLI's verdict, computed when the page was built
            assert got["state"] == ("green" if want["green"] else "red"), (sample_id, got)
            assert got["codes"] == want["codes"], (sample_id, got, want["reasons"])
        for red in ("forged-pinned", "forged-signed", "wrong-key", "tampered"):
            assert not samples[red]["expected"]["green"], red
        own = {url, url.rsplit("/", 1)[0] + "/"}
        assert [r for r in requests if r not in own] == [], requests
        assert errors == []
    finally:
        page.close()


def test_page_fits_a_phone_and_a_laptop(browser_context: Any, built: dict[str, Any]) -> None:
    """No horizontal page scroll at 1280 and 390 px; wide tables scroll in their own box.
    Screenshots are kept in artifacts/ (look at them)."""
    page, _, errors = _open(browser_context, built["index"].as_uri())
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(150)
            _reset(page)
            page.click("button[data-sample=forged-pinned]")
            _verdict(page)
            overflow = page.evaluate(
                "[document.documentElement.scrollWidth, window.innerWidth]")
            assert overflow[0] <= overflow[1], (width, overflow)
            page.screenshot(path=str(ARTIFACTS / f"site-{width}.png"), full_page=True)
            for section in ("verify", "demand-fetch-ceiling"):
                page.locator(f"#{section}").screenshot(
                    path=str(ARTIFACTS / f"site-{width}-{section}.png"))
        # planted defect: an element wider than the phone; the same measure must catch it
        page.evaluate("""() => { const d = document.createElement('div');
            d.style.width = '900px'; d.style.height = '1px';
            document.querySelector('main').appendChild(d); }""")
        overflow = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert overflow[0] > overflow[1], overflow
        assert errors == []
    finally:
        page.close()


def test_the_committed_release_fits_a_phone_and_a_laptop(
    browser_context: Any, tmp_path: Path
) -> None:
    """The page of the real certificates (the placement sweep is a 9-column table, the
    ceiling's statements carry internal names): no sideways page scroll, plots drawn."""
    if not (ROOT / "certificates" / "MANIFEST.json").is_file():
        pytest.skip("no committed certificates")
    index = build_site(ROOT, tmp_path / "site")
    page, _, errors = _open(browser_context, index.as_uri())
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(150)
            overflow = page.evaluate(
                "[document.documentElement.scrollWidth, window.innerWidth]")
            assert overflow[0] <= overflow[1], (width, overflow)
            page.screenshot(path=str(ARTIFACTS / f"release-{width}.png"), full_page=True)
            sweep = page.locator("#pooled-placement table.figures > tbody > tr",
                                 has=page.locator("code", has_text="sweep")).first
            if sweep.count():
                sweep.screenshot(path=str(ARTIFACTS / f"release-{width}-placement-sweep.png"))
        text = page.inner_text("body")
        assert "_hyg" not in text and "_@" not in text
        assert page.evaluate("Array.from(document.querySelectorAll('figure.plot img'))"
                             ".every(i => i.naturalWidth > 0)")
        assert errors == []
    finally:
        page.close()


def test_plots_are_drawn_and_no_internal_name_is_shown(
    browser_context: Any, built: dict[str, Any]
) -> None:
    page, _, _ = _open(browser_context, built["index"].as_uri())
    try:
        plots = page.locator("figure.plot img")
        assert plots.count() == 1
        assert (plots.first.get_attribute("src") or "").startswith("data:image/svg+xml;base64,")
        assert page.evaluate("document.querySelector('figure.plot img').naturalWidth") > 0
        text = page.inner_text("body")
        assert "_hyg" not in text and "_@" not in text
        assert "[DecidableEq α]" in text
        assert "hash of data/trace.txt matched the certificate" in text
    finally:
        page.close()


def test_an_auditors_own_pin_and_key_decide(browser_context: Any, built: dict[str, Any]) -> None:
    """Type a pin, paste a key, drop a forged pair: red with the reason; the genuine file
    under the same anchor is green; a wrong key is red."""
    paths, forged = built["paths"], built["forged"]
    pin = load_manifest(paths["manifest"]).sha256
    page, requests, errors = _open(browser_context, built["index"].as_uri())
    try:
        forged_pair = [str(forged / "certificates" / "MANIFEST.json"),
                       str(forged / "certificates" / "isolation-floor.json")]
        page.fill("#pin", pin)
        _reset(page)
        page.set_input_files("#file", forged_pair)
        got = _verdict(page)
        assert got["state"] == "red" and got["codes"][0] == "manifest-not-pinned", got
        _reset(page)
        page.set_input_files("#file", str(paths["floor"]))
        got = _verdict(page)
        assert got["state"] == "green" and got["codes"][0] == "manifest-pinned", got

        page.fill("#pin", "")
        page.fill("#pubkey", paths["public_key"].read_text())
        _reset(page)
        page.set_input_files("#file", [*forged_pair, str(paths["envelope"])])
        got = _verdict(page)
        assert got["state"] == "red" and got["codes"][0] == "manifest-not-signed", got
        _reset(page)
        page.set_input_files("#file", str(paths["ceiling"]))
        got = _verdict(page)
        assert got["state"] == "green" and got["codes"][0] == "manifest-signed", got

        page.fill("#pubkey", built["wrong"].read_text())
        _reset(page)
        page.set_input_files("#file", str(paths["ceiling"]))
        got = _verdict(page)
        assert got["state"] == "red" and got["codes"][0] == "signature-untrusted", got
        assert "not a trusted key" in got["text"]

        page.fill("#pubkey", "")
        page.fill("#pin", "not hex")
        _reset(page)
        page.set_input_files("#file", str(paths["ceiling"]))
        got = _verdict(page)
        assert got["state"] == "error" and "not 64 hex digits" in got["text"]
        page.fill("#pin", "")
        # drag and drop, as a person would
        _reset(page)
        handle = page.evaluate_handle(
            """(text) => { const dt = new DataTransfer();
                dt.items.add(new File([text], 'dropped.json', {type: 'application/json'}));
                return dt; }""",
            paths["ceiling"].read_text(encoding="utf-8").replace('"requests": ', '"requests":  '),
        )
        page.dispatch_event("#drop", "drop", {"dataTransfer": handle})
        got = _verdict(page)
        assert got["state"] == "red" and "unknown-hash" in got["codes"]
        assert "dropped.json" in got["text"]
        assert requests == [built["index"].as_uri()]
        assert errors == []
    finally:
        page.close()


NO_ED25519 = """
(() => {
  const subtle = crypto.subtle;
  const orig = subtle.importKey.bind(subtle);
  subtle.importKey = (format, key, alg, ...rest) => {
    const name = (alg && (alg.name || alg)) || "";
    if (String(name).toLowerCase() === "ed25519") {
      return Promise.reject(new DOMException("Ed25519 not supported", "NotSupportedError"));
    }
    return orig(format, key, alg, ...rest);
  };
})();
"""


def test_a_browser_without_ed25519_says_so(browser_context: Any, built: dict[str, Any]) -> None:
    """Planted: WebCrypto without Ed25519. The page says signatures are not checked here,
    skips the signed samples in its self-check, and refuses a pasted key (error, not green)."""
    page, _, errors = _open(browser_context, built["index"].as_uri(), NO_ED25519)
    try:
        assert page.get_attribute("#ed25519", "data-state") == "no"
        assert "NOT checked on this page" in page.inner_text("#ed25519")
        assert page.get_attribute("#selfcheck", "data-state") == "agree"
        assert "signed sample(s) skipped: no Ed25519 here" in page.inner_text("#selfcheck")
        page.fill("#pubkey", built["paths"]["public_key"].read_text())
        _reset(page)
        page.set_input_files("#file", str(built["paths"]["ceiling"]))
        got = _verdict(page)
        assert got["state"] == "error" and "no Ed25519" in got["text"]
        assert errors == []
    finally:
        page.close()


def test_csp_blocks_connections(browser_context: Any, built: dict[str, Any], http_url: str) -> None:
    """Planted defect: script on the page tries to phone home; the CSP must stop it."""
    page, requests, _ = _open(browser_context, http_url)
    try:
        before = list(requests)
        outcome = page.evaluate(
            """async () => { try { await fetch('http://127.0.0.1:9/leak'); return 'sent'; }
                             catch (e) { return 'blocked'; } }"""
        )
        assert outcome == "blocked"
        page.wait_for_timeout(200)
        assert requests == before
    finally:
        page.close()
