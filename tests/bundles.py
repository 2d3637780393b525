"""Small published releases for the verify, site and browser tests, built with the project's
own canonical/attest code the way certify writes them, plus the forgeries the tests plant.

Figures are computed from the input file here, never typed in. Keys are throw-away keys made
per test (never committed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pytools.lean.audit import certificate as audit_certificate
from pytools.lean.audit.records import AuditReport
from pytools.publish import attest
from pytools.publish.canonical import canonical_bytes, sha256_bytes, with_body_hash, write_canonical
from pytools.publish.keys import public_pem
from pytools.publish.trust import trust_block
from pytools.publish.validation import package_schemas

TOOLCHAIN = {"kind": "wasm", "version": "4.28.0-pre", "commit": "38f3c0c4" + "0" * 32}
SOURCE = {
    "library_tree": "c18a5696c648e692ca84c8a7678b247053700487",
    "tree_entries": ["Proofs", "Proofs.lean", "lakefile.lean", "lean-toolchain"],
    "commit": None,
}
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60" viewBox="0 0 120 60">'
       b'<rect width="120" height="60" fill="#eef"/><polyline points="0,60 40,30 120,10" '
       b'fill="none" stroke="#24c" stroke-width="3"/></svg>\n')


def theorem(name: str, statement: str, module: str, axioms: tuple[str, ...] = ("propext",)
            ) -> dict[str, Any]:
    return {
        "name": name,
        "statement": statement,
        # stands in for the term's Merkle hash: any fixed function of the statement will do
        "statement_sha256": sha256_bytes(("term:" + statement).encode("utf-8")),
        "axioms": list(axioms),
        "module": module,
        "constants": [{"name": "Nat", "module": "Init.Prelude"}],
        "closure_sha256": sha256_bytes(("closure:" + statement).encode("utf-8")),
    }


def audit_block() -> dict[str, Any]:
    """The audit block certify writes for a clean wasm run (reviewed statements compared, the
    kernel replay passed)."""
    report = AuditReport(declarations=(), findings=(), trusted_core=("Nat.le_refl",),
                         rules=("sorry", "native-code"))
    report = audit_certificate.with_checks(
        report, {"reviewed-statements": True, "kernel-replay": True})
    return audit_certificate.audit_block(report, {"version": TOOLCHAIN["version"],
                                                  "commit": TOOLCHAIN["commit"]})


def certificate(result: str, title: str, theorems: list[dict[str, Any]],
                figures: dict[str, Any], inputs: list[dict[str, str]],
                **extra: Any) -> dict[str, Any]:
    """A schema-valid certificate (format 2), body hash included."""
    return with_body_hash({
        "schema_version": "2",
        "result": result,
        "title": title,
        "theorems": theorems,
        "figures": figures,
        "inputs": inputs,
        "toolchain": TOOLCHAIN,
        "limits": [f"A limit of {result}."],
        "sources": [{"path": "Proofs/Isolation/Floor.lean", "sha256": "1" * 64}],
        "source": SOURCE,
        "oleans": [{"path": ".lake/build/lib/lean/Proofs/Isolation/Floor.olean",
                    "sha256": "2" * 64}],
        "audit": audit_block(),
        "trust": trust_block(TOOLCHAIN, ["sorry", "native-code"]),
        **extra,
    })


def ceiling_figures(trace: bytes) -> dict[str, Any]:
    """The demand-fetch ceiling's figures of a trace whose lines are block references."""
    refs = trace.splitlines()
    distinct = len(set(refs))
    ceiling = Fraction(len(refs) - distinct, len(refs))

    def row(capacity: int) -> dict[str, Any]:
        hits = len(refs) - distinct if capacity >= distinct else 0
        pct = f"{100 * hits / len(refs):.4f}"
        return {"capacity": capacity, "lru_hits": hits, "belady_hits": hits,
                "lru_percent": pct, "belady_percent": pct}

    counts = {
        "requests": len(refs), "references": len(refs), "distinct": distinct,
        "max_hits": len(refs) - distinct, "ceiling_numerator": ceiling.numerator,
        "ceiling_denominator": ceiling.denominator,
        "ceiling_percent": f"{100 * float(ceiling):.4f}",
        "policy_hits": [row(distinct)],
    }
    warm = {"label": "test: no lines before the window", "prefix_first_line": 1,
            "prefix_last_line": 1, "references": len(refs), "distinct": distinct,
            "distinct_seen_before": 0, "distinct_new": distinct,
            "max_hits": len(refs) - distinct, "ceiling_numerator": ceiling.numerator,
            "ceiling_denominator": ceiling.denominator,
            "ceiling_percent": counts["ceiling_percent"],
            "cold_ceiling_percent": counts["ceiling_percent"], "computed_by": "Python (test)",
            "theorem": "KVCache.Ceiling.hitsAfter_add_distinct_sdiff_le_length",
            "which": "test: the same figure warm and cold"}
    window = {"label": "the whole trace, as its own window", "first_line": 1,
              "last_line": len(refs), **counts, "warm_start": warm}
    kernel = [{"stream": "the whole trace", "requests": len(refs), "references": len(refs),
               "distinct": distinct, "ceiling_numerator": ceiling.numerator,
               "ceiling_denominator": ceiling.denominator,
               "ceiling_percent": counts["ceiling_percent"], "computed_by": "Python (test)",
               "theorem": None}]
    def bypass_row(capacity: int) -> dict[str, Any]:
        r = row(capacity)
        return {"capacity": capacity, "belady_hits": r["belady_hits"],
                "belady_bypass_hits": r["belady_hits"], "gain_hits": 0,
                "belady_percent": r["belady_percent"],
                "belady_bypass_percent": r["belady_percent"],
                "gain_percent_points": "0.0000"}

    bypass = {"label": "test: Belady with and without bypass, by formula",
              "method": "test: by formula",
              "theorems": ["KVCache.Ceiling.bhits_le_beladyBypass_bhits"],
              "rows": [bypass_row(1), bypass_row(distinct)], "computed_by": "Python (test)"}
    # The prefix figures come from a solver record, not from this trace: the committed
    # certificate's, which its schema accepts.
    committed = json.loads((Path(__file__).resolve().parent.parent / "certificates"
                            / "demand-fetch-ceiling.json").read_bytes())["figures"]
    return {**counts, "sweep": [row(1), row(distinct)], "curve_method": "test: by formula",
            "bypass": bypass, "window": window, "kernel_counts": kernel,
            "prefix_optima": committed["prefix_optima"], "semantics": committed["semantics"]}


def write_manifest(root: Path, paths: list[Path], certs: list[dict[str, Any]]) -> Path:
    files = []
    for p in sorted(paths, key=lambda q: q.relative_to(root).as_posix()):
        data = p.read_bytes()
        files.append({"path": p.relative_to(root).as_posix(), "sha256": sha256_bytes(data),
                      "size": len(data)})
    theorems = sorted(
        ({"name": t["name"], "result": c["result"], "statement_sha256": t["statement_sha256"],
          "statement_text_sha256": sha256_bytes(t["statement"].encode("utf-8"))}
         for c in certs for t in c["theorems"]),
        key=lambda t: (t["name"], t["result"]),
    )
    manifest = {"schema_version": "2", "files": files, "theorems": theorems}
    package_schemas().validate(manifest, "manifest")
    path = root / "certificates" / "MANIFEST.json"
    write_canonical(path, manifest)
    return path


def sign_release(root: Path, key: Ed25519PrivateKey) -> Path:
    """Sign the release under ``root`` (its manifest and the certificates it lists)."""
    manifest_path = root / "certificates" / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_bytes())
    certs = [json.loads((root / e["path"]).read_bytes()) for e in manifest["files"]
             if e["path"].endswith(".json")]
    statement = attest.statement("certificates/MANIFEST.json", manifest_path.read_bytes(), certs)
    envelope = root / "certificates" / attest.ENVELOPE_NAME
    envelope.write_bytes(attest.sign(statement, key))
    return envelope


def write_public_key(path: Path, key: Ed25519PrivateKey) -> Path:
    path.write_bytes(public_pem(key.public_key()))
    return path


def write_private_key(path: Path, key: Ed25519PrivateKey) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path


def make_release(root: Path, *, trace_bytes: bytes = b"a\nb\na\nc\na\nb\n",
                 key: Ed25519PrivateKey | None = None) -> dict[str, Path]:
    """Write two certificates, a data input, a figure table and plot, the manifest and, with
    ``key``, its signature under ``root``. Returns the paths by role: ``manifest``, ``floor``,
    ``ceiling``, ``csv``, ``svg``, ``trace`` and (signed) ``envelope``, ``public_key``."""
    cert_dir = root / "certificates"
    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    trace = data_dir / "trace.txt"
    trace.write_bytes(trace_bytes)
    figures = ceiling_figures(trace_bytes)
    csv = cert_dir / "figures" / "demand-fetch-ceiling" / "sweep.csv"
    svg = cert_dir / "figures" / "demand-fetch-ceiling" / "sweep.svg"
    csv.parent.mkdir(parents=True, exist_ok=True)
    csv.write_bytes(b"capacity,lru_hits\n" + b"".join(
        f"{r['capacity']},{r['lru_hits']}\n".encode() for r in figures["sweep"]))
    svg.write_bytes(SVG)
    floor = certificate(
        "isolation-floor", "Price of zero-leak sharing — ünïcode ✓",
        [theorem("KVCache.Isolation.two_pow_le_of_exact",
                 "∀ {T n s : Nat} (D : Design T n s), D.Exact → 2 ^ (T * n) ≤ s",
                 "Proofs.Isolation.Floor", ())],
        {}, [],
    )
    ceiling = certificate(
        "demand-fetch-ceiling", "No cache beats the traffic",
        [theorem("KVCache.Ceiling.hits_add_distinct_le_length",
                 "∀ {α : Type u} [inst._@.Proofs.Ceiling.Cache.791917390._hygCtx._hyg.3 : "
                 "DecidableEq α] (k : Nat) (P : Policy α) (r : List α), "
                 "hits k P r + distinct r ≤ r.length", "Proofs.Ceiling.Cache")],
        figures,
        [{"path": "data/trace.txt", "sha256": sha256_bytes(trace_bytes)}],
        artifacts=[{"path": p.relative_to(root).as_posix(), "sha256": sha256_bytes(p.read_bytes())}
                   for p in (csv, svg)],
    )
    paths = {"floor": cert_dir / "isolation-floor.json",
             "ceiling": cert_dir / "demand-fetch-ceiling.json", "csv": csv, "svg": svg}
    write_canonical(paths["floor"], floor)
    write_canonical(paths["ceiling"], ceiling)
    for cert in (floor, ceiling):
        package_schemas().validate(cert, "certificate")
    paths["manifest"] = write_manifest(
        root, [paths["floor"], paths["ceiling"], csv, svg], [floor, ceiling])
    paths["trace"] = trace
    if key is not None:
        paths["envelope"] = sign_release(root, key)
        paths["public_key"] = write_public_key(root / "publisher.pub.pem", key)
    return paths


def forge_pair(root: Path, edit: Callable[[dict[str, Any]], None],
               role: str = "floor") -> dict[str, Path]:
    """A careful forger: edit a certificate, recompute its body hash, and rewrite the
    manifest to match (files and theorems). Returns the edited paths."""
    manifest_path = root / "certificates" / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_bytes())
    name = {"floor": "isolation-floor", "ceiling": "demand-fetch-ceiling"}[role]
    path = root / "certificates" / f"{name}.json"
    cert = json.loads(path.read_bytes())
    edit(cert)
    cert = with_body_hash(cert)
    data = canonical_bytes(cert)
    path.write_bytes(data)
    for entry in manifest["files"]:
        if entry["path"] == f"certificates/{name}.json":
            entry.update(sha256=sha256_bytes(data), size=len(data))
    texts = {t["name"]: t for t in cert["theorems"]}
    for entry in manifest["theorems"]:
        if entry["result"] == name and entry["name"] in texts:
            t = texts[entry["name"]]
            entry["statement_sha256"] = t["statement_sha256"]
            entry["statement_text_sha256"] = sha256_bytes(t["statement"].encode("utf-8"))
    write_canonical(manifest_path, manifest)
    return {"manifest": manifest_path, "cert": path}


def weaken_floor(cert: dict[str, Any]) -> None:
    """The issue's forgery: the floor's statement from ``≤ s`` to ``< s``."""
    t = cert["theorems"][0]
    t["statement"] = t["statement"].replace("≤ s", "< s")
    t["statement_sha256"] = sha256_bytes(("term:" + t["statement"]).encode("utf-8"))
