"""Evidence states: every figure on the page gets a state assigned by the rules of :data:`RULES`,
from the files (never by hand); each rule is one function whose docstring says what it
catches."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytools.paths import input_path, sha256_file
from pytools.publish.verify import Verdict

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


# --------------------------------------------------------------------------- evidence


class _NotRecomputed:
    def __repr__(self) -> str:
        return "NOT_RECOMPUTED"


#: The page builder did not recompute this figure (only re-hashed its inputs).
NOT_RECOMPUTED: Any = _NotRecomputed()


@dataclass(frozen=True)
class RecomputeFailed:
    """Recomputing a result's figures here raised; why."""

    error: str


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
    #: the figure as recomputed here from the inputs by the result's own code, or
    #: :data:`NOT_RECOMPUTED`; a recomputation that failed is a :class:`RecomputeFailed`
    recomputed: Any = NOT_RECOMPUTED

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


def _rule_recomputed_differs(ctx: FigureContext) -> str | None:
    """The page builder recomputed the figure from the same inputs with the result's own code
    and got another value than the certificate states."""
    if ctx.recomputed is NOT_RECOMPUTED or isinstance(ctx.recomputed, RecomputeFailed):
        return None
    if ctx.recomputed != ctx.raw:
        shown = json.dumps(ctx.recomputed, ensure_ascii=False, sort_keys=True)
        return f"recomputed here: {shown[:200]}; the certificate says otherwise"
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
    depends on is present and hashes to the recorded SHA-256. Its badge says what was checked:
    hash matched (the inputs were re-hashed, the value is the certificate's), recomputed (the
    page builder also recomputed the figure from the inputs and got the certificate's value),
    or certificate matched (no input file: only the certificate's own hash)."""
    return obtained(ctx)


def obtained(ctx: FigureContext) -> str:
    """How the page knows the figure: recomputed here, or only the inputs' hashes matched
    (an input not re-checked here is named as such, never as matched)."""
    absent = [f"{c.path} " + ("not present here" if c.status == "missing" else c.status)
              for c in ctx.inputs if c.status != "verified"]
    if absent:
        matched = [c.path for c in ctx.inputs if c.status == "verified"]
        return ((f"hash of {', '.join(matched)} matched; " if matched else "") +
                f"{', '.join(absent)}, so not re-checked; value from the verified "
                "certificate, not recomputed here")
    names = ", ".join(c.path for c in ctx.inputs) or "no input file"
    if isinstance(ctx.recomputed, RecomputeFailed):
        return (f"hash of {names} matched; not recomputed here ({ctx.recomputed.error}); "
                "value from the verified certificate")
    if ctx.recomputed is not NOT_RECOMPUTED:
        return (f"recomputed here by the result's own code from its inputs ({names}): equal "
                "to the certificate")
    if ctx.inputs:
        return (f"hash of {names} matched the certificate; value from the verified "
                "certificate, not recomputed here")
    return "no input file; value from the verified certificate"


#: What a ``verified`` figure's badge says was checked, by how the page knows the figure
#: (:func:`checked`): one green word for "recomputed" and for "its inputs' hashes matched"
#: would claim more than the page did for the second.
CHECK_LABELS: dict[str, str] = {
    "recomputed": "recomputed",
    "hash-matched": "hash matched",
    "certificate": "certificate matched",
}


def checked(ctx: FigureContext) -> str:
    """What was checked for the figure (a key of :data:`CHECK_LABELS`): ``recomputed`` here
    from its inputs with the result's own code and found equal, or only the SHA-256 of its
    input files (``hash-matched``), or, with no input file, only the certificate's own hash
    against the manifest (``certificate``)."""
    if ctx.recomputed is not NOT_RECOMPUTED and not isinstance(ctx.recomputed, RecomputeFailed):
        return "recomputed"
    return "hash-matched" if ctx.inputs else "certificate"


def badge(state: str, ctx: FigureContext) -> tuple[str, str]:
    """(label, css key) of a figure's badge: for a ``verified`` figure what was checked
    (:func:`checked`), for any other state the state itself (it names what is wrong)."""
    if state != "verified":
        return state, state
    what = checked(ctx)
    return CHECK_LABELS[what], what


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
    Rule("contradictory", _rule_recomputed_differs, _doc(_rule_recomputed_differs)),
    Rule("underpowered", _rule_underpowered, _doc(_rule_underpowered)),
    Rule("searched-none-found", _rule_searched_none_found, _doc(_rule_searched_none_found)),
    Rule("stale", _rule_stale, _doc(_rule_stale)),
    Rule("verified", _rule_verified, _doc(_rule_verified)),
)

#: Every evidence state, in table order.
EVIDENCE_STATES: tuple[str, ...] = tuple(dict.fromkeys(rule.state for rule in RULES))


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
        target = input_path(root, rel).resolve()
        inside = target.is_relative_to(resolved_root)
        if not target.is_file():
            out.append(InputCheck(rel, sha, "missing", inside, licence))
            continue
        actual = sha256_file(target)
        status = "verified" if actual == sha else "hash-differs"
        out.append(InputCheck(rel, sha, status, inside, licence, actual))
    return tuple(out)


def age_days(
    cert: dict[str, Any], raw: Any, mtime: float | None, now: dt.datetime
) -> float | None:
    """Age in days of the figure's ``as_of`` date, else the certificate's, else the file's."""
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
