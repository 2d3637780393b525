"""The price-of-isolation table (CSV) and plot (SVG, byte-deterministic) of :mod:`.price`, and
its fixed-width text table for the command line."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_bytes

from .price import DESIGNS, SPLITS, TENANT_COUNTS

#: Columns of ``price_of_isolation.csv`` (the certificate's table rows, in order).
COLUMNS: tuple[str, ...] = (
    "split", "tenants", "capacity", *(f"{d}_percent" for d in DESIGNS), "salted_loss_hits",
    "system_block_loss_hits", "system_block_share_of_loss_percent",
)
STEM = "price_of_isolation"
LABELS = {
    "unsalted": "shared pool, unsalted",
    "salted": "shared pool, salted",
    "proportional": "partitioned, quotas by traffic",
    "equal": "partitioned, equal quotas",
}


def price_csv(table: Sequence[dict[str, Any]], sha256: str) -> bytes:
    """The table, one row per split, tenant count and capacity; a comment names the trace."""
    out = io.StringIO()
    out.write(f"# Mooncake conversation trace sha256 {sha256}; pytools.results.leak.price\n")
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in table:
        writer.writerow({c: "" if row[c] is None else row[c] for c in COLUMNS})
    return out.getvalue().encode("utf-8")


def price_svg(table: Sequence[dict[str, Any]]) -> bytes:
    """Hit rate against capacity, one panel per split and tenant count, four designs each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rc = {"svg.hashsalt": "kvcache-price", "svg.fonttype": "path", "path.simplify": True}
    markers = {"unsalted": "o", "salted": "x", "proportional": "s", "equal": "^"}
    with matplotlib.rc_context(rc):
        fig, axes = plt.subplots(len(SPLITS), len(TENANT_COUNTS), figsize=(10.0, 3.8),
                                 sharex=True, sharey=True)
        try:
            for i, split in enumerate(SPLITS):
                for j, n in enumerate(TENANT_COUNTS):
                    ax = axes[i][j]
                    rows = [r for r in table if r["split"] == split and r["tenants"] == n]
                    caps = [r["capacity"] for r in rows]
                    for d in DESIGNS:
                        ax.plot(caps, [float(r[f"{d}_percent"]) for r in rows],
                                marker=markers[d], markersize=3, linewidth=1, label=LABELS[d])
                    ax.set_xscale("log", base=2)
                    ax.grid(True, alpha=0.3)
                    ax.set_title(f"{split} split, T = {n}", fontsize=8)
                    ax.tick_params(labelsize=7)
                    if j == 0:
                        ax.set_ylabel("hit rate (%)", fontsize=8)
                    if i == len(SPLITS) - 1:
                        ax.set_xlabel("capacity (blocks)", fontsize=8)
            axes[0][0].legend(fontsize=6, loc="upper left")
            fig.suptitle("The price of isolation at equal total memory (Mooncake trace, "
                         "derived tenants, LRU)", fontsize=9)
            fig.tight_layout()
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        finally:
            plt.close(fig)
    return buf.getvalue()


def write_price(out_dir: Path, table: Sequence[dict[str, Any]], sha256: str) -> list[Path]:
    """Write ``price_of_isolation.csv`` and ``price_of_isolation.svg`` into ``out_dir``."""
    out_dir = Path(out_dir)
    csv_path, svg_path = out_dir / f"{STEM}.csv", out_dir / f"{STEM}.svg"
    csv_bytes, svg_bytes = price_csv(table, sha256), price_svg(table)
    atomic_write_bytes(csv_path, csv_bytes)
    atomic_write_bytes(svg_path, svg_bytes)
    return [csv_path, svg_path]


def price_table(table: Sequence[dict[str, Any]]) -> str:
    """The table as fixed-width text."""
    head = ("split", "T", "capacity", *DESIGNS, "salted loss", "on system block")
    lines = ["  ".join(f"{h:>12}" for h in head)]
    for r in table:
        share = r["system_block_share_of_loss_percent"]
        vals = (r["split"], r["tenants"], r["capacity"], *(r[f"{d}_percent"] for d in DESIGNS),
                r["salted_loss_hits"], f"{share} %" if share is not None else "-")
        lines.append("  ".join(f"{v:>12}" for v in vals))
    return "\n".join(lines) + "\n"
