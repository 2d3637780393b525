"""The static page in headless Chromium: the in-page verifier agrees with the CLI on every
sample, genuine files are green, tampered ones red, and the page makes no network request.

Needs Debian ``chromium`` and the PyPI ``playwright`` package (``.ci/install-browser.sh``);
Playwright drives the system Chromium through ``executable_path`` (no browser download).
Skips with the reason when either is missing. The screenshot goes to ``artifacts/site.png``.
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
from test_verify import make_release

from pytools.publish.site.page import build_site
from pytools.publish.site.release import build_samples, load_release
from pytools.publish.verify import load_manifest, verify_bytes

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
    paths = make_release(root)
    index = build_site(root, root / "site")
    return {"root": root, "paths": paths, "index": index}


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


def _open(context: Any, url: str) -> tuple[Any, list[str], list[str]]:
    page = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    # Selectors, not wait_for_function: the page's CSP forbids evaluating strings.
    page.wait_for_selector('#selfcheck:not([data-state="pending"])', state="attached",
                           timeout=20000)
    return page, requests, errors


def _verdict(page: Any) -> dict[str, Any]:
    page.wait_for_selector(
        '#verdict[data-state="green"], #verdict[data-state="red"], #verdict[data-state="error"]',
        state="attached", timeout=20000,
    )
    state = page.get_attribute("#verdict", "data-state")
    codes = (page.get_attribute("#verdict", "data-codes") or "").split()
    return {"state": state, "codes": codes, "text": page.inner_text("#verdict")}


def _reset(page: Any) -> None:
    page.evaluate("document.getElementById('verdict').dataset.state = 'idle'")


@pytest.mark.parametrize("scheme", ["file", "http"])
def test_page_verifies_samples_offline(
    browser_context: Any, built: dict[str, Any], http_url: str, scheme: str
) -> None:
    url = built["index"].as_uri() if scheme == "file" else http_url
    page, requests, errors = _open(browser_context, url)
    try:
        assert page.get_attribute("#selfcheck", "data-state") == "agree", page.inner_text(
            "#selfcheck"
        )
        manifest = load_manifest(built["paths"]["manifest"])
        data = json.loads(page.text_content("#pcv-data"))
        release = load_release(built["root"])
        samples = {s.id: s for s in build_samples(release)}
        assert {s["id"] for s in data["samples"]} == set(samples)
        for sample_id, sample in samples.items():
            _reset(page)
            page.click(f"button[data-sample={sample_id}]")
            got = _verdict(page)
            want = verify_bytes(sample.data, manifest, sample.filename)  # the CLI's verdict
            assert got["state"] == ("green" if want.green else "red"), (sample_id, got)
            assert got["codes"] == want.codes, (sample_id, got, want.reasons)
        assert samples["genuine"].expected.green and not samples["tampered"].expected.green
        own = {url, url.rsplit("/", 1)[0] + "/"}
        assert [r for r in requests if r not in own] == [], requests
        assert errors == []
        if scheme == "file":
            ARTIFACTS.mkdir(exist_ok=True)
            page.click("button[data-sample=tampered]")
            _verdict(page)
            page.screenshot(path=str(ARTIFACTS / "site.png"), full_page=True)
    finally:
        page.close()


def test_pick_and_drop_real_files(
    browser_context: Any, built: dict[str, Any], tmp_path: Path
) -> None:
    paths = built["paths"]
    manifest = load_manifest(paths["manifest"])
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(paths["ceiling"].read_bytes().replace(b'"requests": ', b'"requests":  '))
    page, requests, errors = _open(browser_context, built["index"].as_uri())
    try:
        for path, green in ((paths["ceiling"], True), (tampered, False), (paths["floor"], True)):
            _reset(page)
            page.set_input_files("#file", str(path))
            got = _verdict(page)
            want = verify_bytes(path.read_bytes(), manifest, path.name)
            assert want.green is green
            assert (got["state"], got["codes"]) == ("green" if green else "red", want.codes)
        # drag and drop, as a person would
        _reset(page)
        handle = page.evaluate_handle(
            """(text) => { const dt = new DataTransfer();
                dt.items.add(new File([text], 'dropped.json', {type: 'application/json'}));
                return dt; }""",
            tampered.read_text(encoding="utf-8"),
        )
        page.dispatch_event("#drop", "drop", {"dataTransfer": handle})
        got = _verdict(page)
        assert got["state"] == "red" and "unknown-hash" in got["codes"]
        assert "dropped.json" in got["text"]
        assert requests == [built["index"].as_uri()]
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
