"""The release the page shows: the manifest and every file it lists (each re-hashed and
verified), the figures of each result with their display form, and the verifier's samples."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytools.publish.canonical import sha256_bytes
from pytools.publish.verify import DEFAULT_MANIFEST, Manifest, Verdict, load_manifest, verify_bytes

from .evidence import FigureContext, InputCheck, age_days, assign_state, check_inputs

#: shown after these; an id listed here without a certificate is shown as ``unsearched``.
PRODUCT_RESULTS: tuple[tuple[str, str], ...] = (
    ("isolation-floor", "Isolation floor: the price of zero-leak sharing"),
    ("demand-fetch-ceiling", "Demand-fetch ceiling: no cache beats the traffic"),
    ("single-owner-kernel", "Single-owner kernel: moving cached state safely"),
    ("pooled-placement", "Pooled placement: reaching the wall"),
)


class SiteError(RuntimeError):
    """The site cannot be built; the message names the file and the problem."""



# --------------------------------------------------------------------------- display


@dataclass(frozen=True)
class Display:
    """How a figure's value is shown: ``text`` or a small ``table``."""

    text: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    more_rows: int = 0


MAX_TABLE_ROWS = 24


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def display_value(value: Any) -> Display:
    """Scalars as text, a list of flat objects with one key set as a table, else JSON."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(row, dict) for row in value)
        and len({tuple(row) for row in value}) == 1
        and all(not isinstance(v, dict | list) for row in value for v in row.values())
    ):
        columns = tuple(value[0])
        rows = tuple(tuple(_scalar_text(row[c]) for c in columns) for row in value)
        return Display(
            columns=columns,
            rows=rows[:MAX_TABLE_ROWS],
            more_rows=max(0, len(rows) - MAX_TABLE_ROWS),
        )
    if isinstance(value, dict | list):
        return Display(text=json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1))
    return Display(text=_scalar_text(value))


# --------------------------------------------------------------------------- the release


@dataclass(frozen=True)
class FigureRow:
    name: str
    display: Display
    state: str
    detail: str


@dataclass(frozen=True)
class PublishedFile:
    path: str
    sha256: str
    size: int
    kind: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class ResultView:
    id: str
    heading: str
    cert: dict[str, Any] | None
    file: PublishedFile | None
    verdict: Verdict | None
    figures: tuple[FigureRow, ...]
    inputs: tuple[InputCheck, ...]


@dataclass(frozen=True)
class Release:
    root: Path
    manifest: Manifest
    manifest_rel: str  # where the manifest is published in the site
    manifest_bytes: bytes = field(repr=False)
    files: tuple[PublishedFile, ...]
    results: tuple[ResultView, ...]


def _manifest_rel(path: Path, root: Path) -> str:
    """Where the manifest goes in the site: its place in the project, else the default."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return DEFAULT_MANIFEST.as_posix()


def figure_rows(
    cert: dict[str, Any],
    verdict: Verdict,
    inputs: tuple[InputCheck, ...],
    mtime: float | None,
    now: dt.datetime,
) -> tuple[FigureRow, ...]:
    """One row per figure of a certificate, each with its evidence state and detail."""
    figures = cert.get("figures")
    if not isinstance(figures, dict) or not figures:
        age = age_days(cert, None, mtime, now)
        ctx = FigureContext("", None, cert, verdict, inputs, inputs, age)
        state, detail = assign_state(ctx)
        return (FigureRow("(no figures)", Display(text="—"), state, detail),)
    rows = []
    for name in sorted(figures):
        raw = figures[name]
        depends = inputs
        if isinstance(raw, dict) and isinstance(raw.get("input"), str):
            depends = tuple(c for c in inputs if c.path == raw["input"])
        ctx = FigureContext(
            name, raw, cert, verdict, depends, inputs, age_days(cert, raw, mtime, now)
        )
        state, detail = assign_state(ctx)
        rows.append(FigureRow(name, display_value(ctx.value), state, detail))
    return tuple(rows)


def load_release(
    root: Path,
    manifest_path: Path | None = None,
    now: dt.datetime | None = None,
    product: Sequence[tuple[str, str]] = PRODUCT_RESULTS,
) -> Release:
    """Load the manifest and every file it lists, re-hash them, verify and assign states."""
    now = now or dt.datetime.now(dt.UTC)
    manifest_path = manifest_path or root / DEFAULT_MANIFEST
    try:
        manifest = load_manifest(manifest_path)
    except Exception as exc:  # VerifyError: names the file and the problem
        raise SiteError(str(exc)) from None
    files: list[PublishedFile] = []
    certs: dict[str, tuple[dict[str, Any], PublishedFile, Verdict, float]] = {}
    for entry in manifest.data["files"]:
        rel = entry["path"]
        if Path(rel).is_absolute() or ".." in Path(rel).parts or "\\" in rel:
            raise SiteError(f"{manifest_path}: listed path {rel!r} leaves the project")
        path = root / rel
        if not path.is_file():
            raise SiteError(f"{rel}: listed in {manifest_path} but missing")
        data = path.read_bytes()
        if sha256_bytes(data) != entry["sha256"] or len(data) != entry["size"]:
            raise SiteError(
                f"{rel}: SHA-256 or size differs from {manifest_path}; refusing to publish"
            )
        verdict = verify_bytes(data, manifest, rel)
        published = PublishedFile(rel, entry["sha256"], len(data), verdict.kind, data)
        files.append(published)
        if verdict.kind == "certificate" and verdict.result:
            if verdict.result in certs:
                raise SiteError(f"{rel}: a second certificate for result {verdict.result!r}")
            cert = json.loads(data)
            certs[verdict.result] = (cert, published, verdict, path.stat().st_mtime)
    order = [rid for rid, _ in product] + sorted(set(certs) - {rid for rid, _ in product})
    headings = dict(product)
    results = []
    for rid in order:
        if rid not in certs:
            row = FigureRow("(no certificate)", Display(text="—"), "unsearched",
                            "no certificate for this result is published yet")
            results.append(ResultView(rid, headings.get(rid, rid), None, None, None, (row,), ()))
            continue
        cert, published, verdict, mtime = certs[rid]
        inputs = check_inputs(cert, root)
        rows = figure_rows(cert, verdict, inputs, mtime, now)
        heading = headings.get(rid) or str(cert.get("title") or rid)
        results.append(ResultView(rid, heading, cert, published, verdict, rows, inputs))
    manifest_bytes = Path(manifest_path).read_bytes()
    if sha256_bytes(manifest_bytes) != manifest.sha256:
        raise SiteError(f"{manifest_path}: changed while the site was being built")
    return Release(
        root, manifest, _manifest_rel(Path(manifest_path), root), manifest_bytes,
        tuple(files), tuple(results),
    )


# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class Sample:
    """A file embedded in the page for the verifier panel, with the CLI's verdict on it."""

    id: str
    label: str
    filename: str
    data: bytes
    expected: Verdict


def tamper(data: bytes) -> bytes:
    """Change one byte of a certificate: the first digit among its figures, else its title."""
    start = data.find(b'"figures": ')
    end = data.find(b'\n  "', start + 1) if start >= 0 else -1
    for at in range(start, end if end > 0 else start):
        if 48 <= data[at] <= 57:
            return data[:at] + bytes([48 + (data[at] - 47) % 10]) + data[at + 1 :]
    at = data.find(b'"title": "') + len(b'"title": "')
    flipped = data[at] ^ 0x01 if data[at] < 0x80 else ord("X")
    return data[:at] + bytes([flipped]) + data[at + 1 :]


def build_samples(release: Release) -> tuple[Sample, ...]:
    """Genuine certificate, run receipt, tampered copy and the manifest, each with its verdict."""
    manifest = release.manifest
    certs = [r.file for r in release.results if r.file is not None]
    out: list[Sample] = []

    def add(sid: str, label: str, filename: str, data: bytes) -> None:
        out.append(Sample(sid, label, filename, data, verify_bytes(data, manifest, filename)))

    if certs:
        genuine = certs[0]
        name = Path(genuine.path).name
        add("genuine", f"Genuine certificate ({name})", name, genuine.data)
        add("tampered", f"Tampered copy of {name} (one byte changed)", "tampered-" + name,
            tamper(genuine.data))
    receipts = [f for f in release.files if f.kind == "published-file"]
    if receipts:
        rname = Path(receipts[0].path).name
        add("receipt", f"Run receipt ({rname}, published)", rname, receipts[0].data)
    else:
        receipt = {
            "receipt": "site-build",
            "manifest_sha256": manifest.sha256,
            "theorems": sorted(manifest.theorems),
        }
        data = (json.dumps(receipt, indent=2, sort_keys=True) + "\n").encode("utf-8")
        add("receipt", "Run receipt of this page's build (not published)", "receipt.json", data)
    mpath = Path(release.manifest_rel).name
    add("manifest", f"The manifest ({mpath})", mpath, release.manifest_bytes)
    return tuple(out)
