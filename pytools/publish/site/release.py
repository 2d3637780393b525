"""The release the page shows: the manifest, its signature envelope and every file it lists
(each re-hashed and verified), the figures of each result with what they are and how the page
knows them, the plots drawn from the published SVG files, and the verifier's samples."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.paths import input_path
from pytools.publish.anchor import AnchorOptions, check_anchor
from pytools.publish.attest import ENVELOPE_NAME
from pytools.publish.canonical import canonical_bytes, sha256_bytes, with_body_hash
from pytools.publish.keys import TrustedKey, keyid, parse_public_keys, public_pem
from pytools.publish.manifest import (
    DEFAULT_MANIFEST,
    Manifest,
    VerifyError,
    load_manifest,
    manifest_from_bytes,
)
from pytools.publish.validation import SchemaSet, package_schemas
from pytools.publish.verify import Verdict, verify_bytes
from pytools.results.kernel.workflows import LEAN_NAMESPACE as WORKFLOWS_NAMESPACE
from pytools.results.kernel.workflows import theorem_name as workflow_theorem_name

from .display import (
    LONG_STATEMENT,
    Display,
    display_value,
    figure_description,
    list_literal,
    readable_statement,
)
from .evidence import (
    NOT_RECOMPUTED,
    FigureContext,
    InputCheck,
    RecomputeFailed,
    age_days,
    assign_state,
    badge,
    check_inputs,
    obtained,
)
from .plots import Plot, svg_size

#: shown after these; an id listed here without a certificate is shown as ``unsearched``.
PRODUCT_RESULTS: tuple[tuple[str, str], ...] = (
    ("isolation-floor", "Isolation floor: the price of zero-leak sharing"),
    ("demand-fetch-ceiling", "Demand-fetch ceiling: no cache beats the traffic"),
    ("single-owner-kernel", "Single-owner kernel: moving cached state safely"),
    ("pooled-placement", "Pooled placement: reaching the wall"),
    ("tenant-leak", "Tenant leak: a keyed salt closes the cross-tenant cache hit"),
)

#: Recomputes a result's figures here from its inputs: (result id, root) -> figures, or None
#: when it cannot (no code for that result).
Recompute = Callable[[str, Path], dict[str, Any] | None]


class SiteError(RuntimeError):
    """The site cannot be built; the message names the file and the problem."""


@dataclass(frozen=True)
class FigureRow:
    name: str
    display: Display
    state: str
    detail: str
    description: str = ""
    obtained: str = ""
    #: the badge: what was checked for a verified figure (hash matched, recomputed), else
    #: the state; and its css key (see :func:`.evidence.badge`)
    badge: str = ""
    check: str = ""

    @property
    def badge_label(self) -> str:
        return self.badge or self.state

    @property
    def badge_class(self) -> str:
        """``ck-…`` (what was checked) for a verified figure, ``st-…`` (the state) else."""
        return f"ck-{self.check}" if self.state == "verified" and self.check else \
            f"st-{self.state}"


@dataclass(frozen=True)
class PublishedFile:
    path: str
    sha256: str
    size: int
    kind: str
    data: bytes = field(repr=False)

    @property
    def label(self) -> str:
        """What the file is, for people."""
        suffix = Path(self.path).suffix
        if self.kind == "certificate":
            return "certificate"
        return {".csv": "figure table (CSV)", ".svg": "plot (SVG)"}.get(suffix, "published file")


@dataclass(frozen=True)
class TheoremView:
    name: str
    module: str
    statement_sha256: str
    statement: str  # as shown (internal names hidden)
    simplified: bool
    axioms: tuple[str, ...]

    @property
    def short_name(self) -> str:
        """The name without its namespaces (the row shows the module beside it)."""
        return self.name.rpartition(".")[2] or self.name

    @property
    def long(self) -> bool:
        """A machine-expanded term rather than a statement to read: folded on the page."""
        return len(self.statement) > LONG_STATEMENT


@dataclass(frozen=True)
class WorkflowView:
    """One named workflow of a certificate's bench (``workflows``), with the Lean theorem that
    states it when the certificate lists one, and its steps read from that theorem."""

    name: str
    family: str
    steps: int
    refusals: int
    agree: bool
    theorem: TheoremView | None = None
    #: the actions as the theorem states them (``alloc 0 0``); empty unless there are exactly
    #: ``steps`` of them, so a statement of another shape is never misread as steps
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultView:
    id: str
    heading: str
    cert: dict[str, Any] | None
    file: PublishedFile | None
    verdict: Verdict | None
    figures: tuple[FigureRow, ...]
    inputs: tuple[InputCheck, ...]
    theorems: tuple[TheoremView, ...] = ()
    plots: tuple[Plot, ...] = ()
    tables: tuple[PublishedFile, ...] = ()
    workflows: tuple[WorkflowView, ...] = ()

    @property
    def short_heading(self) -> str:
        """The heading before its colon: the result's name in a sentence."""
        return self.heading.partition(":")[0].strip()

    @property
    def listed_theorems(self) -> tuple[TheoremView, ...]:
        """The theorems of the theorem table: all but those the workflow table shows."""
        shown = {w.theorem.name for w in self.workflows if w.theorem is not None}
        return tuple(t for t in self.theorems if t.name not in shown)

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.module for t in self.theorems if t.module))

    @property
    def axioms(self) -> tuple[str, ...]:
        return tuple(sorted({a for t in self.theorems for a in t.axioms}))

    @property
    def common_obtained(self) -> str:
        """How the page knows the figures, when it is the same for all of them (said once
        above the table instead of on every row)."""
        known = {row.obtained for row in self.figures}
        return known.pop() if len(self.figures) > 1 and len(known) == 1 else ""

    @property
    def badge_counts(self) -> tuple[tuple[str, str, int], ...]:
        """(label, css key, number of figures) per badge, for the result's card."""
        counts: dict[tuple[str, str], int] = {}
        for row in self.figures:
            key = (row.badge_label, row.badge_class)
            counts[key] = counts.get(key, 0) + 1
        return tuple((label, css, n) for (label, css), n in counts.items())

    @property
    def figure_count(self) -> int:
        """How many figures the certificate states (0 for a theorems-only result)."""
        figures = (self.cert or {}).get("figures")
        return len(figures) if isinstance(figures, dict) else 0

    @property
    def families(self) -> tuple[tuple[str, int], ...]:
        """The workflow families, in order, with how many workflows each has."""
        counts: dict[str, int] = {}
        for w in self.workflows:
            counts[w.family] = counts.get(w.family, 0) + 1
        return tuple(counts.items())


@dataclass(frozen=True)
class Release:
    root: Path
    manifest: Manifest
    manifest_rel: str  # where the manifest is published in the site
    manifest_bytes: bytes = field(repr=False)
    files: tuple[PublishedFile, ...]
    results: tuple[ResultView, ...]
    envelope: bytes | None = field(default=None, repr=False)
    envelope_rel: str = ""
    schemas: SchemaSet = field(default_factory=package_schemas, repr=False)
    recomputed: bool = False

    def missing_inputs(self) -> list[str]:
        """One line per input file not present where the page was built: where it was
        looked for, and how many figures of which results it leaves unchecked."""
        lines = []
        checks = {c.path: c for r in self.results for c in r.inputs if c.status == "missing"}
        for path in sorted(checks):
            hit = {r.id: sum(row.state == "no-data-available" and path in row.detail
                             for row in r.figures) for r in self.results
                   if any(c.path == path for c in r.inputs)}
            figures = sum(hit.values())
            lines.append(f"{path}: not present here (looked for "
                         f"{input_path(self.root, path)}); {figures} figure(s) of "
                         f"{', '.join(sorted(hit))} badged no-data-available")
        return lines


def _manifest_rel(path: Path, root: Path) -> str:
    """Where the manifest goes in the site: its place in the project, else the default."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return DEFAULT_MANIFEST.as_posix()


def _recomputed(recompute: Recompute | None, rid: str, root: Path) -> Any:
    if recompute is None:
        return None
    try:
        return recompute(rid, root)
    except Exception as exc:  # a failing recomputation is shown, not fatal
        return RecomputeFailed(f"{type(exc).__name__}: {exc}"[:200])


def registry_input_figures() -> dict[str, dict[str, tuple[str, ...]]]:
    """Per published result, the figures each of its inputs is read by, as the result's spec
    declares them (:attr:`pytools.results.spec.ResultSpec.input_figures`)."""
    from pytools.results.registry import published_results

    return {spec.id: dict(spec.input_figures) for spec in published_results()}


def figure_rows(
    cert: dict[str, Any],
    verdict: Verdict,
    inputs: tuple[InputCheck, ...],
    mtime: float | None,
    now: dt.datetime,
    schema: dict[str, Any] | None = None,
    recomputed: Any = None,
    input_figures: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[FigureRow, ...]:
    """One row per figure of a certificate, each with its evidence state, what it is and how
    the page knows it (``recomputed``: the figures recomputed here, a RecomputeFailed, or
    None when not recomputed). A figure depends on the input its ``input`` names, else on
    every input that ``input_figures`` does not restrict to other figures."""
    uses = input_figures or {}
    figures = cert.get("figures")
    if not isinstance(figures, dict) or not figures:
        age = age_days(cert, None, mtime, now)
        ctx = FigureContext("", None, cert, verdict, inputs, inputs, age)
        state, detail = assign_state(ctx)
        return (FigureRow("(no figures)", Display(text="—"), state, detail,
                          "a purely mathematical result: theorems only", ""),)
    rows = []
    for name in sorted(figures):
        raw = figures[name]
        depends = tuple(c for c in inputs if c.path not in uses or name in uses[c.path])
        if isinstance(raw, dict) and isinstance(raw.get("input"), str):
            depends = tuple(c for c in inputs if c.path == raw["input"])
        if recomputed is None:
            again = NOT_RECOMPUTED
        elif isinstance(recomputed, RecomputeFailed):
            again = recomputed
        else:
            again = recomputed.get(name, RecomputeFailed(f"{name} is not recomputed"))
        ctx = FigureContext(name, raw, cert, verdict, depends, inputs,
                            age_days(cert, raw, mtime, now), again)
        state, detail = assign_state(ctx)
        how = obtained(ctx) if verdict.green else "the certificate does not verify"
        label, check = badge(state, ctx)
        rows.append(FigureRow(name, display_value(ctx.value), state, detail,
                              figure_description(schema, name), how, label, check))
    return tuple(rows)


def _theorems(cert: dict[str, Any]) -> tuple[TheoremView, ...]:
    out = []
    for t in cert.get("theorems", []):
        shown, simplified = readable_statement(str(t.get("statement", "")))
        name, _ = readable_statement(str(t.get("name", "")))
        out.append(TheoremView(name, str(t.get("module", "")), str(t.get("statement_sha256", "")),
                               shown, simplified, tuple(t.get("axioms", []))))
    return tuple(out)


def _workflows(cert: dict[str, Any], theorems: Sequence[TheoremView]
               ) -> tuple[WorkflowView, ...]:
    """The certificate's workflow bench, each with its theorem (named by the bench's own rule,
    :func:`pytools.results.kernel.workflows.theorem_name`) and the steps that theorem states."""
    # By full name: the tagged variant's bench (MacWorkflows) names its theorems alike.
    by_name = {t.name: t for t in theorems}
    out = []
    for w in cert.get("workflows") or []:
        if not isinstance(w, dict):
            continue
        name = str(w.get("name", ""))
        steps = int(w.get("steps", 0))
        thm = by_name.get(f"{WORKFLOWS_NAMESPACE}.{workflow_theorem_name(name)}")
        actions = list_literal(thm.statement) if thm is not None else ()
        out.append(WorkflowView(name, str(w.get("family", "")), steps,
                                int(w.get("refusals", 0)), bool(w.get("agree")), thm,
                                actions if len(actions) == steps else ()))
    return tuple(out)


def _plots(cert: dict[str, Any], files: Mapping[str, PublishedFile]
           ) -> tuple[tuple[Plot, ...], tuple[PublishedFile, ...]]:
    """The certificate's artifacts that the manifest lists with the same hash: SVG plots to
    draw, CSV tables to link."""
    plots, tables = [], []
    for entry in cert.get("artifacts", []):
        published = files.get(entry.get("path", ""))
        if published is None or published.sha256 != entry.get("sha256"):
            continue
        if published.path.endswith(".svg"):
            uri = "data:image/svg+xml;base64," + base64.b64encode(published.data).decode()
            plots.append(Plot(published.path, published.sha256, uri,
                              f"{published.path}: its SHA-256 matched the manifest and the "
                              "certificate's list",
                              published.path, svg_size(published.data)))
        elif published.path.endswith(".csv"):
            tables.append(published)
    return tuple(plots), tuple(tables)


def load_release(
    root: Path,
    manifest_path: Path | None = None,
    now: dt.datetime | None = None,
    product: Sequence[tuple[str, str]] = PRODUCT_RESULTS,
    recompute: Recompute | None = None,
    schemas: SchemaSet | None = None,
    input_figures: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
) -> Release:
    """Load the manifest and every file it lists, re-hash them, verify and assign states.
    ``input_figures``: per result, the figures each input is read by (default: as the
    results' specs declare, :func:`registry_input_figures`)."""
    now = now or dt.datetime.now(dt.UTC)
    if input_figures is None:
        input_figures = registry_input_figures()
    schemas = schemas or package_schemas()
    manifest_path = manifest_path or root / DEFAULT_MANIFEST
    try:
        manifest = load_manifest(manifest_path, schemas)
    except VerifyError as exc:
        raise SiteError(str(exc)) from None
    files: dict[str, PublishedFile] = {}
    certs: dict[str, tuple[dict[str, Any], PublishedFile, Verdict, float]] = {}
    for entry in manifest.data["files"]:
        rel = entry["path"]
        path = root / rel
        if not path.resolve().is_relative_to(root.resolve()):
            raise SiteError(f"{manifest_path}: listed path {rel!r} leaves the project")
        if not path.is_file():
            raise SiteError(f"{rel}: listed in {manifest_path} but missing")
        data = path.read_bytes()
        if sha256_bytes(data) != entry["sha256"] or len(data) != entry["size"]:
            raise SiteError(
                f"{rel}: SHA-256 or size differs from {manifest_path}; refusing to publish"
            )
        verdict = verify_bytes(data, manifest, rel, None, schemas)
        published = PublishedFile(rel, entry["sha256"], len(data), verdict.kind, data)
        files[rel] = published
        if verdict.kind == "certificate" and verdict.result:
            if verdict.result in certs:
                raise SiteError(f"{rel}: a second certificate for result {verdict.result!r}")
            certs[verdict.result] = (json.loads(data), published, verdict, path.stat().st_mtime)
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
        fname = schemas.figures_schema(rid)
        schema = dict(schemas.get(fname)) if fname else None
        rows = figure_rows(cert, verdict, inputs, mtime, now, schema,
                           _recomputed(recompute, rid, root), input_figures.get(rid))
        heading = headings.get(rid) or str(cert.get("title") or rid)
        plots, tables = _plots(cert, files)
        theorems = _theorems(cert)
        results.append(ResultView(rid, heading, cert, published, verdict, rows, inputs,
                                  theorems, plots, tables, _workflows(cert, theorems)))
    manifest_bytes = Path(manifest_path).read_bytes()
    if sha256_bytes(manifest_bytes) != manifest.sha256:
        raise SiteError(f"{manifest_path}: changed while the site was being built")
    envelope_path = Path(manifest_path).parent / ENVELOPE_NAME
    envelope = envelope_path.read_bytes() if envelope_path.is_file() else None
    manifest_rel = _manifest_rel(Path(manifest_path), root)
    return Release(
        root, manifest, manifest_rel, manifest_bytes, tuple(files.values()), tuple(results),
        envelope, str(Path(manifest_rel).parent / ENVELOPE_NAME), schemas,
        recompute is not None,
    )


# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class SampleFile:
    name: str
    role: str  # manifest | envelope | file
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Sample:
    """Files the page's verifier checks as an auditor would, with the CLI's verdict on the
    ``subject`` file under the same manifest, signature and anchor options."""

    id: str
    label: str
    files: tuple[SampleFile, ...]
    subject: int  # index in files of the file whose verdict is shown
    pin: str | None
    keys: tuple[str, ...]  # PEM public keys the "auditor" gives
    expected: Verdict
    require_signature: bool = False

    @property
    def filename(self) -> str:
        return self.files[self.subject].name

    @property
    def data(self) -> bytes:
        return self.files[self.subject].data


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


def forge_pair(manifest_bytes: bytes, cert_path: str, cert_bytes: bytes) -> tuple[bytes, bytes]:
    """A careful forger: weaken the first theorem's statement (``≤`` to ``<``, or append
    `` ∨ True``), recompute its hashes and the certificate's body hash, and rewrite the
    manifest to match. Returns (manifest bytes, certificate bytes)."""
    cert = json.loads(cert_bytes)
    theorem = cert["theorems"][0]
    text = theorem["statement"]
    theorem["statement"] = text.replace("≤", "<", 1) if "≤" in text else text + " ∨ True"
    theorem["statement_sha256"] = sha256_bytes(("forged:" + theorem["statement"]).encode())
    forged = canonical_bytes(with_body_hash(cert))
    manifest = json.loads(manifest_bytes)
    for entry in manifest["files"]:
        if entry["path"] == cert_path:
            entry.update(sha256=sha256_bytes(forged), size=len(forged))
    for entry in manifest["theorems"]:
        if entry["name"] == theorem["name"] and entry["result"] == cert["result"]:
            entry["statement_sha256"] = theorem["statement_sha256"]
            entry["statement_text_sha256"] = sha256_bytes(theorem["statement"].encode("utf-8"))
    return canonical_bytes(manifest), forged


def _expected(files: Sequence[SampleFile], subject: int, release: Release, pin: str | None,
              keys: Mapping[str, TrustedKey], require: bool) -> Verdict:
    """The CLI's verdict: the library functions verify and `pytools verify` use."""
    manifest_file = next((f for f in files if f.role == "manifest"), None)
    if manifest_file is None:  # the page's embedded manifest, named as the page names it
        manifest = manifest_from_bytes(release.manifest_bytes, release.manifest_rel,
                                       release.schemas)
        envelope = release.envelope
        envelope_name = release.envelope_rel
    else:
        manifest = manifest_from_bytes(manifest_file.data, manifest_file.name, release.schemas)
        env_file = next((f for f in files if f.role == "envelope"), None)
        envelope = env_file.data if env_file else None
        folder = manifest_file.name.rpartition("/")[0]
        envelope_name = env_file.name if env_file else (
            f"{folder}/{ENVELOPE_NAME}" if folder else ENVELOPE_NAME)
    anchor = check_anchor(manifest, AnchorOptions(pin, keys, require or bool(keys)), envelope,
                          envelope_name, release.schemas)
    target = files[subject]
    return verify_bytes(target.data, manifest, target.name, anchor, release.schemas)


def build_samples(
    release: Release, publisher_keys: Mapping[str, TrustedKey] | None = None
) -> tuple[Sample, ...]:
    """The verifier panel's samples, each with the CLI's verdict: genuine (with and without a
    pin), tampered, a published figure file, the manifest, a JSON that is no certificate, a
    forged pair (certificate and manifest rewritten together) under the pin and, for a signed
    release whose publisher key the page builder was given, under that key, and a wrong key.
    """
    out: list[Sample] = []
    certs = [r.file for r in release.results if r.file is not None]
    pin = release.manifest.sha256

    def add(sid: str, label: str, files: list[SampleFile], subject: int = 0,
            pin_: str | None = None, pems: tuple[bytes, ...] = (),
            require: bool = False) -> None:
        keys: dict[str, TrustedKey] = {}
        for pem in pems:
            keys.update(parse_public_keys(pem, "pasted key"))
        expected = _expected(files, subject, release, pin_, keys, require)
        out.append(Sample(sid, label, tuple(files), subject, pin_,
                          tuple(p.decode() for p in pems), expected, require))

    if certs:
        genuine = certs[0]
        name = Path(genuine.path).name
        add("genuine", f"Genuine certificate ({name}), no anchor",
            [SampleFile(genuine.path, "file", genuine.data)])
        add("pinned", f"Genuine certificate ({name}) with the manifest pinned",
            [SampleFile(genuine.path, "file", genuine.data)], pin_=pin)
        add("tampered", f"Tampered copy of {name} (one byte changed)",
            [SampleFile("tampered-" + name, "file", tamper(genuine.data))])
    tables = [f for f in release.files if f.path.endswith(".csv")]
    if tables:
        table = tables[0]
        add("figure-file", f"Published figure table ({Path(table.path).name})",
            [SampleFile(table.path, "file", table.data)])
    add("manifest", f"The manifest ({Path(release.manifest_rel).name})",
        [SampleFile(release.manifest_rel, "file", release.manifest_bytes)])
    add("not-a-certificate", "A JSON file that is not a certificate",
        [SampleFile("notes.json", "file", b'{"note": "not a certificate"}\n')])
    if certs:
        genuine = certs[0]
        forged_manifest, forged_cert = forge_pair(release.manifest_bytes, genuine.path,
                                                  genuine.data)
        pair = [SampleFile(release.manifest_rel, "manifest", forged_manifest),
                SampleFile(genuine.path, "file", forged_cert)]
        add("forged-pinned", "Forged pair (certificate and manifest rewritten together), "
            "manifest pinned", pair, subject=1, pin_=pin)
        if release.envelope is not None:
            envelope = SampleFile(release.envelope_rel, "envelope", release.envelope)
            if publisher_keys:
                pems = tuple(public_pem(k.key) for k in publisher_keys.values())
                add("forged-signed", "Forged pair, checked against the publisher's key",
                    [*pair, envelope], subject=1, pems=pems)
                add("signed", "Genuine certificate, checked against the publisher's key",
                    [SampleFile(release.manifest_rel, "manifest", release.manifest_bytes),
                     envelope, SampleFile(genuine.path, "file", genuine.data)],
                    subject=2, pems=pems)
            stranger = Ed25519PrivateKey.generate().public_key()
            add("wrong-key", f"Genuine certificate, checked against a wrong key "
                f"({keyid(stranger)[:12]}…)",
                [SampleFile(release.manifest_rel, "manifest", release.manifest_bytes),
                 envelope, SampleFile(genuine.path, "file", genuine.data)],
                subject=2, pems=(public_pem(stranger),))
        else:
            add("unsigned-required", "Genuine certificate, signature required (the release "
                "is unsigned)", [SampleFile(genuine.path, "file", genuine.data)], require=True)
    return tuple(out)
