"""The static product page: ``python -m pytools.site [--out site/]``.

Built only from the published files: ``certificates/MANIFEST.json`` and every file it lists
(each re-hashed; a file that is missing or whose SHA-256 differs from the manifest stops the
build). Nothing on the page is typed in by hand: theorem names and statements, figures and
limits come from the certificates, and every figure gets an *evidence state* assigned by the
rules of :data:`RULES` from the files (never by hand).

The page carries an in-browser verifier (``templates/verifier.js`` + ``templates/panel.js``)
that mirrors :func:`pytools.verify.verify_bytes`, with the manifest, the two JSON Schemas and
a few samples embedded. A Content-Security-Policy meta tag allows only the page's own inline
script and style (by SHA-256) and forbids every connection; the page loads no other asset.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import click
import jinja2

from pytools.canonical import atomic_write_bytes, load_schema, sha256_bytes
from pytools.paths import project_root, sha256_file
from pytools.verify import DEFAULT_MANIFEST, Manifest, Verdict, load_manifest, verify_bytes

#: The product's results, in page order: (result id, heading). Certificates with other ids are
#: shown after these; an id listed here without a certificate is shown as ``unsearched``.
PRODUCT_RESULTS: tuple[tuple[str, str], ...] = (
    ("isolation-floor", "Isolation floor: the price of zero-leak sharing"),
    ("demand-fetch-ceiling", "Demand-fetch ceiling: no cache beats the traffic"),
    ("single-owner-kernel", "Single-owner kernel: moving cached state safely"),
    ("pooled-placement", "Pooled placement: reaching the wall"),
)

#: A certificate (or its data) older than this many days is ``stale``.
STALE_DAYS = 7

#: Licences under which an input file's figures may be shown without restriction.
OPEN_LICENSES = frozenset(
    {
        "apache-2.0",
        "mit",
        "bsd-2-clause",
        "bsd-3-clause",
        "cc0-1.0",
        "cc-by-4.0",
        "cc-by-sa-4.0",
        "odc-by",
        "pddl",
        "public-domain",
    }
)

#: Keys that make a figure an *annotated* figure: ``{"value": ..., "n": ..., ...}``.
ANNOTATION_KEYS = frozenset(
    {"value", "values", "n", "min_n", "input", "error", "applicable", "license", "as_of"}
)

#: Files of the page template (package data, ``pytools/templates``).
TEMPLATE = "index.html.j2"
STYLE = "style.css"
SCRIPTS = ("verifier.js", "panel.js")


class SiteError(RuntimeError):
    """The site cannot be built; the message names the file and the problem."""


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class InputCheck:
    """One input file of a certificate, re-checked on the machine that builds the page."""

    path: str
    sha256: str
    status: str  # verified | missing | hash-differs | unsafe-path
    inside_project: bool
    license: str | None = None
    actual_sha256: str | None = None


@dataclass(frozen=True)
class FigureContext:
    """Everything a rule may look at for one figure."""

    name: str
    raw: Any  # the figure as the certificate states it
    cert: dict[str, Any]
    verdict: Verdict
    inputs: tuple[InputCheck, ...]  # the inputs this figure depends on
    all_inputs: tuple[InputCheck, ...]
    age_days: float | None

    @property
    def annotated(self) -> bool:
        return isinstance(self.raw, dict) and bool(ANNOTATION_KEYS & self.raw.keys())

    @property
    def value(self) -> Any:
        if self.annotated:
            if "value" in self.raw:
                return self.raw["value"]
            if "values" in self.raw:
                return self.raw["values"]
            return None
        return self.raw


def _rule_analysis_failed(ctx: FigureContext) -> str | None:
    """The certificate does not verify green against the manifest, or the figure records an
    ``error`` (its evidence function failed)."""
    if not ctx.verdict.green:
        red = [r for r in ctx.verdict.reasons if not r.startswith(("listed", "theorems-ok"))]
        return "certificate does not verify: " + "; ".join(red)
    if ctx.annotated and ctx.raw.get("error"):
        return f"analysis error: {ctx.raw['error']}"
    return None


def _rule_not_applicable(ctx: FigureContext) -> str | None:
    """The figure is marked ``"applicable": false``, or the result is purely mathematical
    (its certificate has no figures: nothing to measure)."""
    if ctx.name == "" and not ctx.cert.get("figures"):
        return "purely mathematical result: no figures, no data inputs"
    if ctx.annotated and ctx.raw.get("applicable") is False:
        return "marked not applicable by the result's evidence"
    return None


def _rule_unresolved_identity(ctx: FigureContext) -> str | None:
    """The figure names an ``input`` that the certificate does not list exactly once, or the
    certificate lists one path with two different hashes, or an input path is absolute."""
    paths: dict[str, set[str]] = {}
    for check in ctx.all_inputs:
        paths.setdefault(check.path, set()).add(check.sha256)
        if check.status == "unsafe-path":
            return f"input path {check.path!r} is absolute; it cannot be resolved"
    clashing = sorted(p for p, hashes in paths.items() if len(hashes) > 1)
    if clashing:
        return f"input {clashing[0]} is listed with {len(paths[clashing[0]])} different hashes"
    if ctx.annotated and "input" in ctx.raw and ctx.raw["input"] not in paths:
        return f"figure names input {ctx.raw['input']!r}, which the certificate does not list"
    return None


def _rule_search_failed(ctx: FigureContext) -> str | None:
    """An input file the figure depends on has a SHA-256 that differs from the certificate's,
    or it lies inside the project (so it is committed and must be there) and is missing."""
    for check in ctx.inputs:
        if check.status == "hash-differs":
            return (
                f"{check.path}: SHA-256 is {check.actual_sha256}, "
                f"certificate says {check.sha256}"
            )
        if check.status == "missing" and check.inside_project:
            return f"{check.path}: missing from the project"
    return None


def _rule_no_data_available(ctx: FigureContext) -> str | None:
    """An input file the figure depends on lies outside the project (shared data) and is not
    present where the page was built, so it could not be re-hashed; or the figure has no
    value and the certificate lists no input to compute it from."""
    for check in ctx.inputs:
        if check.status == "missing":
            return f"{check.path}: not present here, so its SHA-256 could not be re-checked"
    if ctx.value is None and not ctx.all_inputs:
        return "no value and no input file to compute it from"
    return None


def _rule_license_restricted(ctx: FigureContext) -> str | None:
    """An input file the figure depends on (or the figure itself) carries a ``license`` that is
    not one of the open licences (:data:`OPEN_LICENSES`)."""
    licences = [c.license for c in ctx.inputs if c.license]
    if ctx.annotated and isinstance(ctx.raw.get("license"), str):
        licences.append(ctx.raw["license"])
    for licence in licences:
        if licence.lower() not in OPEN_LICENSES:
            return f"licence {licence!r} restricts redistribution of this figure"
    return None


def _rule_contradictory(ctx: FigureContext) -> str | None:
    """The figure carries ``values`` from two or more sources (e.g. Lean and a solver) and
    they are not all equal; every value is shown."""
    if not ctx.annotated or not isinstance(ctx.raw.get("values"), dict):
        return None
    values = ctx.raw["values"]
    distinct = {json.dumps(v, sort_keys=True) for v in values.values()}
    if len(values) >= 2 and len(distinct) > 1:
        return "sources disagree: " + ", ".join(
            f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(values.items())
        )
    return None


def _rule_underpowered(ctx: FigureContext) -> str | None:
    """The figure records a sample size ``n`` below its stated minimum ``min_n``."""
    if not ctx.annotated:
        return None
    n, min_n = ctx.raw.get("n"), ctx.raw.get("min_n")
    if isinstance(n, int) and isinstance(min_n, int) and n < min_n:
        return f"n = {n}, below the minimum {min_n}"
    return None


def _rule_searched_none_found(ctx: FigureContext) -> str | None:
    """The inputs were found and hash right, but the figure is empty (null, an empty list or
    an empty object): the computation ran and found nothing."""
    if ctx.value is None or ctx.value == [] or ctx.value == {}:
        return "computed from verified inputs; nothing found"
    return None


def _rule_stale(ctx: FigureContext) -> str | None:
    """The certificate is older than :data:`STALE_DAYS` days, by the figure's ``as_of`` or the
    certificate's ``generated_at`` when present, else by the certificate file's modification
    time; the age is shown."""
    if ctx.age_days is not None and ctx.age_days > STALE_DAYS:
        return f"{ctx.age_days:.1f} days old (limit {STALE_DAYS})"
    return None


def _rule_verified(ctx: FigureContext) -> str | None:
    """None of the rules above applies: the certificate verifies and every input file it
    depends on is present and hashes to the recorded SHA-256."""
    if ctx.inputs:
        return "; ".join(f"{c.path}: SHA-256 matches" for c in ctx.inputs)
    return "no input file; value from the verified certificate"


@dataclass(frozen=True)
class Rule:
    """One evidence state and the function that decides whether it applies."""

    state: str
    check: Callable[[FigureContext], str | None] | None
    doc: str


def _doc(func: Callable[..., Any]) -> str:
    """A rule's docstring as one plain sentence for the page (reST roles resolved)."""
    text = " ".join((func.__doc__ or "").split())

    def constant(match: re.Match[str]) -> str:
        value = globals()[match.group(1)]
        if isinstance(value, frozenset):
            return ", ".join(sorted(value))
        return str(value)

    text = re.sub(r":data:`([A-Z_]+)`", constant, text)
    return text.replace("``", "")


#: Evidence states, in precedence order: the first rule that applies decides the state.
#: ``loading`` and ``unsearched`` are not per-figure rules (see their docs).
RULES: tuple[Rule, ...] = (
    Rule(
        "loading",
        None,
        "Shown by the in-page verifier while it reads and hashes a file; never written by the "
        "generator.",
    ),
    Rule(
        "unsearched",
        None,
        "A product result with no published certificate yet: its evidence was never computed.",
    ),
    Rule("analysis-failed", _rule_analysis_failed, _doc(_rule_analysis_failed)),
    Rule("not-applicable", _rule_not_applicable, _doc(_rule_not_applicable)),
    Rule("unresolved-identity", _rule_unresolved_identity, _doc(_rule_unresolved_identity)),
    Rule("search-failed", _rule_search_failed, _doc(_rule_search_failed)),
    Rule("no-data-available", _rule_no_data_available, _doc(_rule_no_data_available)),
    Rule("license-restricted", _rule_license_restricted, _doc(_rule_license_restricted)),
    Rule("contradictory", _rule_contradictory, _doc(_rule_contradictory)),
    Rule("underpowered", _rule_underpowered, _doc(_rule_underpowered)),
    Rule("searched-none-found", _rule_searched_none_found, _doc(_rule_searched_none_found)),
    Rule("stale", _rule_stale, _doc(_rule_stale)),
    Rule("verified", _rule_verified, _doc(_rule_verified)),
)

#: Every evidence state, in table order.
EVIDENCE_STATES: tuple[str, ...] = tuple(rule.state for rule in RULES)


def assign_state(ctx: FigureContext) -> tuple[str, str]:
    """(state, detail) for one figure: the first rule of :data:`RULES` that applies."""
    for rule in RULES:
        if rule.check is None:
            continue
        detail = rule.check(ctx)
        if detail is not None:
            return rule.state, detail
    raise AssertionError("the verified rule always applies")  # pragma: no cover


def check_inputs(cert: dict[str, Any], root: Path) -> tuple[InputCheck, ...]:
    """Re-hash every input file a certificate lists (paths relative to ``root``)."""
    out: list[InputCheck] = []
    resolved_root = root.resolve()
    for entry in cert.get("inputs") or []:
        if not isinstance(entry, dict):
            continue
        rel = str(entry.get("path", ""))
        sha = str(entry.get("sha256", ""))
        licence = entry.get("license") if isinstance(entry.get("license"), str) else None
        if rel.startswith("/") or Path(rel).is_absolute():
            out.append(InputCheck(rel, sha, "unsafe-path", False, licence))
            continue
        target = (root / rel).resolve()
        inside = target.is_relative_to(resolved_root)
        if not target.is_file():
            out.append(InputCheck(rel, sha, "missing", inside, licence))
            continue
        actual = sha256_file(target)
        status = "verified" if actual == sha else "hash-differs"
        out.append(InputCheck(rel, sha, status, inside, licence, actual))
    return tuple(out)


def _age_days(
    cert: dict[str, Any], raw: Any, mtime: float | None, now: dt.datetime
) -> float | None:
    stamp = None
    if isinstance(raw, dict) and isinstance(raw.get("as_of"), str):
        stamp = raw["as_of"]
    elif isinstance(cert.get("generated_at"), str):
        stamp = cert["generated_at"]
    if stamp is not None:
        try:
            when = dt.datetime.fromisoformat(stamp)
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return (now - when).total_seconds() / 86400
    if mtime is None:
        return None
    return (now.timestamp() - mtime) / 86400


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
        age = _age_days(cert, None, mtime, now)
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
            name, raw, cert, verdict, depends, inputs, _age_days(cert, raw, mtime, now)
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


# --------------------------------------------------------------------------- rendering


def _template_text(name: str) -> str:
    return resources.files("pytools").joinpath("templates", name).read_text(encoding="utf-8")


def csp_hash(text: str) -> str:
    """The CSP source expression for an inline script or style with exactly this text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _json_for_html(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_data(release: Release, samples: Sequence[Sample]) -> dict[str, Any]:
    """What the in-page verifier reads: manifest, schemas, samples (base64) and their verdicts."""
    return {
        "manifest": release.manifest.to_browser(),
        "schemas": {name: load_schema(name) for name in ("certificate", "manifest")},
        "samples": [
            {
                "id": s.id,
                "label": s.label,
                "filename": s.filename,
                "b64": base64.b64encode(s.data).decode("ascii"),
                "expected": {"green": s.expected.green, "codes": s.expected.codes},
            }
            for s in samples
        ],
    }


def render_page(release: Release, generated: str) -> str:
    """The HTML of the page (everything inline; CSP by hash)."""
    samples = build_samples(release)
    style = _template_text(STYLE)
    script = "\n".join(_template_text(name) for name in SCRIPTS)
    csp = (
        "default-src 'none'; "
        f"script-src {csp_hash(script)}; "
        f"style-src {csp_hash(style)}; "
        "img-src data:; connect-src 'none'; font-src 'none'; media-src 'none'; "
        "object-src 'none'; frame-src 'none'; worker-src 'none'; manifest-src 'none'; "
        "form-action 'none'; base-uri 'none'"
    )
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _template_text(name)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    state_counts: dict[str, int] = {}
    for result in release.results:
        for row in result.figures:
            state_counts[row.state] = state_counts.get(row.state, 0) + 1
    return env.get_template(TEMPLATE).render(
        csp=csp,
        style=style,
        script=script,
        data_json=_json_for_html(page_data(release, samples)),
        release=release,
        samples=samples,
        rules=RULES,
        state_counts=state_counts,
        generated=generated,
        stale_days=STALE_DAYS,
    )


def build_site(
    root: Path,
    out: Path,
    manifest_path: Path | None = None,
    now: dt.datetime | None = None,
) -> Path:
    """Build the site into ``out`` atomically (a temp folder swapped in); return index.html."""
    now = now or dt.datetime.now(dt.UTC)
    release = load_release(root, manifest_path, now)
    html = render_page(release, now.strftime("%Y-%m-%d %H:%M UTC"))
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        atomic_write_bytes(tmp / "index.html", html.encode("utf-8"))
        for published in release.files:
            atomic_write_bytes(tmp / published.path, published.data)
        atomic_write_bytes(tmp / release.manifest_rel, release.manifest_bytes)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            old.rmdir()
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    return out / "index.html"


@click.command()
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: site/ under the project root).")
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path), default=None,
              help="Manifest to build from (default: certificates/MANIFEST.json).")
@click.option("--root", "root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Project root the manifest's paths are relative to.")
def main(out: Path | None, manifest_path: Path | None, root: Path | None) -> None:
    """Build the static product page with its offline verifier."""
    root = (root or project_root()).resolve()
    try:
        index = build_site(root, out or root / "site", manifest_path)
    except SiteError as exc:
        hint = ""
        if "MANIFEST.json: not a file" in str(exc):
            hint = " (run python -m pytools.certify first)"
        click.echo(f"error: {exc}{hint}", err=True)
        sys.exit(1)
    click.echo(f"wrote {index}")


if __name__ == "__main__":
    main()
