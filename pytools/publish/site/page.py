"""The static product page that ``pytools site [--out site/]`` (:mod:`pytools.publish.cli`)
builds.

Built only from the published files: ``certificates/MANIFEST.json`` and every file it lists
(each re-hashed; a file that is missing or whose SHA-256 differs from the manifest stops the
build). Nothing on the page is typed in by hand: theorem names and statements, figures and
limits come from the certificates, and every figure gets an *evidence state* assigned by the
rules of :data:`RULES` from the files (never by hand).

The page carries an in-browser verifier (``templates/verifier.js`` + ``templates/panel.js``)
that mirrors :mod:`pytools.publish.verify` and its anchors (pin, Ed25519 signature through
WebCrypto), with the manifest's and the signature's bytes, every JSON Schema, the table of
reason codes (:mod:`pytools.publish.codes`, put into the script by :func:`verifier_script`)
and a few samples embedded. The page never trusts a key it carries: the auditor pastes the
publisher's public key (and the pin) obtained out of band. A Content-Security-Policy meta
tag allows only the page's own inline script and style (by SHA-256) and images from ``data:``
URIs (the plots), and forbids every connection; the page loads no other asset. Every file is
written world-readable (0644, folders 0755), whatever the umask.

``--recompute`` recomputes each result's figures from its inputs with the result's own code
(:mod:`pytools.results.registry`) so the page can say "recomputed from X" rather than "hash
of X matched".
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from pytools.publish.codes import table_for_page
from pytools.publish.headlines import HeadlineError, headline
from pytools.publish.keys import TrustedKey

from .display import FOLD_ROWS, LONG_LIMITS
from .evidence import CHECK_LABELS, RULES, STALE_DAYS
from .placement import check_out, place_site
from .release import (
    Recompute,
    Release,
    ResultView,
    Sample,
    SiteError,
    build_samples,
    load_release,
)

#: Files of the page template (package data, ``pytools/publish/site/templates``).
TEMPLATE = "index.html.j2"
STYLE = "style.css"
VERIFIER = "verifier.js"
PANEL = "panel.js"
#: The place in ``verifier.js`` that receives the reason-code table (:mod:`..codes`).
CODES_SLOT = "/*@reason-codes@*/null"

#: The counts the intro spells out; it counts the results it shows (never a typed number).
_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                 "ten", "eleven", "twelve")


# --------------------------------------------------------------------------- rendering


def _template_text(name: str) -> str:
    templates = resources.files("pytools.publish.site").joinpath("templates")
    return templates.joinpath(name).read_text(encoding="utf-8")


def count_words(n: int) -> str:
    """``5`` as ``five`` (digits past twelve), for sentences that count what the page shows."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def sentence_case(text: str) -> str:
    """A heading as it reads inside a sentence: ``Pooled placement`` is ``pooled placement``;
    an acronym (``KV cache``) keeps its capitals."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


#: Words of a figure's name written in capitals in its label.
_ACRONYMS = frozenset({"lru", "opt", "cp", "sat", "kv", "id", "ids", "sha256", "csv", "svg",
                       "api", "ttl", "vllm", "sglang", "lmcache"})


def human_label(name: str) -> str:
    """A figure's or a column's key as a label: ``per_instance_hit_rate`` is ``Per instance
    hit rate``, ``lru_percent`` is ``LRU percent`` (the key itself is shown beside it)."""
    words = [w.upper() if w.lower() in _ACRONYMS else w for w in name.split("_") if w]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def finding(result: ResultView) -> str | None:
    """The result's finding in one sentence, computed from its certificate by the headline
    that README's summary uses (:mod:`pytools.publish.headlines`): None without a verified
    certificate, or a result without a headline."""
    if result.cert is None or result.verdict is None or not result.verdict.green:
        return None
    try:
        said = headline(result.cert)
    except HeadlineError as exc:
        return f"no finding: {exc}"
    return None if said is None else said[:1].upper() + said[1:] + "."


def inline_code(text: str) -> Markup:
    """``text`` escaped for HTML, its backquoted parts (a statement, a theorem's name) set
    as code."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched backquote: shown as it is
        return Markup(escape(text))
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p)
                           for i, p in enumerate(parts))


def verifier_script(table: Sequence[Mapping[str, Any]] | None = None) -> str:
    """``verifier.js`` with the reason-code table embedded (default: :mod:`..codes`'s), so
    the page's verifier reads every code's verdict from the one table the CLI reads."""
    text = _template_text(VERIFIER)
    if text.count(CODES_SLOT) != 1:
        raise SiteError(f"templates/{VERIFIER}: needs exactly one {CODES_SLOT} for the "
                        "reason-code table")
    return text.replace(CODES_SLOT, _json_for_html(table_for_page() if table is None
                                                    else list(table)))


def csp_hash(text: str) -> str:
    """The CSP source expression for an inline script or style with exactly this text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _json_for_html(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def page_data(release: Release, samples: Sequence[Sample]) -> dict[str, Any]:
    """What the in-page verifier reads: the manifest's and the signature's bytes, every
    schema, and the samples (base64) with the CLI's verdicts."""
    return {
        "manifest": {"name": release.manifest_rel, "b64": _b64(release.manifest_bytes)},
        "envelope": None if release.envelope is None else {
            "name": release.envelope_rel, "b64": _b64(release.envelope)},
        "schemas": release.schemas.for_page(),
        "samples": [
            {
                "id": s.id,
                "label": s.label,
                "files": [{"name": f.name, "role": f.role, "b64": _b64(f.data)} for f in s.files],
                "subject": s.subject,
                "pin": s.pin,
                "keys": list(s.keys),
                "requireSignature": s.require_signature,
                "expected": {"green": s.expected.green, "codes": s.expected.codes,
                             "reasons": s.expected.reasons},
            }
            for s in samples
        ],
    }


def render_page(release: Release, generated: str,
                publisher_keys: dict[str, TrustedKey] | None = None) -> str:
    """The HTML of the page (everything inline; CSP by hash)."""
    samples = build_samples(release, publisher_keys)
    style = _template_text(STYLE)
    script = "\n".join([verifier_script(), _template_text(PANEL)])
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
    env.filters.update(sentence_case=sentence_case, count_words=count_words,
                       human_label=human_label, inline_code=inline_code)
    env.globals.update(finding=finding)
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
        check_labels=CHECK_LABELS,
        file_kinds=_file_kinds(release),
        state_counts=state_counts,
        generated=generated,
        stale_days=STALE_DAYS,
        signer_hint=_signer_hint(release),
        fold_rows=FOLD_ROWS,
        long_limits=LONG_LIMITS,
    )


def _file_kinds(release: Release) -> list[str]:
    """How many published files of each kind (``5 certificates``, ``3 plots (SVG)``), for the
    summary of the folded list of downloads."""
    kinds: dict[str, int] = {}
    for f in release.files:
        kinds[f.label] = kinds.get(f.label, 0) + 1
    out = []
    for label, n in kinds.items():
        noun, paren, rest = label.partition(" (")
        out.append(f"{n} {noun}{'s' if n != 1 else ''}{paren}{rest}")
    return out


def _signer_hint(release: Release) -> str | None:
    """The key id the envelope *claims* (a hint, shown as such; never trusted)."""
    if release.envelope is None:
        return None
    try:
        return str(json.loads(release.envelope)["signatures"][0]["keyid"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def registry_recompute(result_id: str, root: Path) -> dict[str, Any] | None:
    """A published result's figures recomputed from its inputs by its own code."""
    from pytools.results.registry import published_results

    spec = next((s for s in published_results() if s.id == result_id), None)
    if spec is None or spec.evidence is None:
        return None
    return spec.evidence(root).figures


def build_site(
    root: Path,
    out: Path,
    manifest_path: Path | None = None,
    now: dt.datetime | None = None,
    recompute: Recompute | None = None,
    publisher_keys: dict[str, TrustedKey] | None = None,
    force: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Path:
    """Build the site into ``out`` by the rule of :mod:`.placement` (a new or empty folder,
    or with ``force`` an earlier site of this tool); return index.html. ``warn`` receives a
    line per input file not present here (:meth:`.release.Release.missing_inputs`)."""
    check_out(out, force, root)  # before the (possibly long) build: fail early
    now = now or dt.datetime.now(dt.UTC)
    release = load_release(root, manifest_path, now, recompute=recompute)
    for line in release.missing_inputs():
        if warn is not None:
            warn(line)
    html = render_page(release, now.strftime("%Y-%m-%d %H:%M UTC"), publisher_keys)
    files = {"index.html": html.encode("utf-8")}
    for published in release.files:
        files[published.path] = published.data
    files[release.manifest_rel] = release.manifest_bytes
    if release.envelope is not None:
        files[release.envelope_rel] = release.envelope
    return place_site(out, files, force=force, root=root) / "index.html"
