"""The host-count sweep: 1..16 hosts on one stream, pooled against per-instance hit rates, as a
CSV table and a byte-deterministic SVG plot."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytools.files import atomic_write_bytes

from .instance import generate_instance, host_walls, wall
from .solver import check_solve, hit_rate, solve_per_instance, solve_pooled

#: Parameters of the host-count sweep (the stream is the same for every host count).
SWEEP_PARAMS: dict[str, int] = {"seed": 7, "blocks": 16, "requests": 48, "max_hosts": 16}


# --------------------------------------------------------------------------- sweep

SWEEP_COLUMNS = (
    "hosts", "requests", "wall", "pooled_misses", "per_instance_misses", "host_walls",
    "pooled_hit_rate", "per_instance_hit_rate", "per_instance_unbounded_hit_rate",
)


def sweep(params: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Pooled against per-instance, 1..max_hosts hosts, one stream, same total memory.

    Every row is CP-SAT-optimal (pooled and per-instance), so the rows are deterministic.
    ``per_instance_unbounded_hit_rate`` is per-instance caching with unbounded memory (the
    Lean floor ``hostWalls``, reached by keep-everything caches).
    """
    p = dict(SWEEP_PARAMS if params is None else params)
    rows = []
    for hosts in range(1, p["max_hosts"] + 1):
        inst = generate_instance(p["seed"], hosts, p["blocks"], p["requests"])
        pooled = solve_pooled(inst)
        check_solve(pooled, inst.block_sizes, [inst.pooled_capacity])
        per = solve_per_instance(inst)
        check_solve(per, inst.block_sizes, inst.host_capacity)
        n = len(inst.requests)
        hw = host_walls(inst)
        rows.append({
            "hosts": hosts,
            "requests": n,
            "wall": wall(inst.stream),
            "pooled_misses": pooled.objective,
            "per_instance_misses": per.objective,
            "host_walls": hw,
            "pooled_hit_rate": hit_rate(n - pooled.objective, n),
            "per_instance_hit_rate": hit_rate(n - per.objective, n),
            "per_instance_unbounded_hit_rate": hit_rate(n - hw, n),
        })
    return rows


def sweep_table(rows: Sequence[dict[str, Any]]) -> str:
    """The sweep as a fixed-width text table."""
    out = io.StringIO()
    out.write(" ".join(f"{c:>12}" if i else f"{c:>5}" for i, c in enumerate(
        ("hosts", "wall", "pooled_miss", "per_inst_miss", "host_walls", "pooled_hit",
         "per_inst_hit", "unbounded_hit"))) + "\n")
    for r in rows:
        vals = (r["hosts"], r["wall"], r["pooled_misses"], r["per_instance_misses"],
                r["host_walls"], r["pooled_hit_rate"], r["per_instance_hit_rate"],
                r["per_instance_unbounded_hit_rate"])
        out.write(" ".join(f"{v:>12}" if i else f"{v:>5}" for i, v in enumerate(vals)) + "\n")
    return out.getvalue()


def sweep_csv(rows: Sequence[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(SWEEP_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: r[c] for c in SWEEP_COLUMNS})
    return out.getvalue().encode("utf-8")


def sweep_svg(rows: Sequence[dict[str, Any]]) -> bytes:
    """Hit rate against host count, byte-deterministic (fixed hash salt, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rc = {"svg.hashsalt": "kvcache-placement", "svg.fonttype": "path", "path.simplify": True}
    with matplotlib.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        try:
            hosts = [r["hosts"] for r in rows]
            ax.plot(hosts, [r["pooled_hit_rate"] for r in rows], marker="o",
                    label="pooled (CP-SAT optimum = wall)")
            ax.plot(hosts, [r["per_instance_unbounded_hit_rate"] for r in rows], marker="^",
                    label="per-instance, unbounded memory (Lean floor)")
            ax.plot(hosts, [r["per_instance_hit_rate"] for r in rows], marker="s",
                    label="per-instance, same total memory (CP-SAT optimum)")
            ax.set_xlabel("hosts")
            ax.set_ylabel("hit rate")
            ax.set_ylim(0, 1)
            ax.set_xticks(hosts)
            ax.grid(True, alpha=0.3)
            ax.legend(loc="center right", fontsize=8)
            ax.set_title("Pooled vs per-instance KV caching (synthetic stream)", fontsize=10)
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        finally:
            plt.close(fig)
    return buf.getvalue()


def write_sweep(out_dir: Path, rows: Sequence[dict[str, Any]] | None = None) -> list[Path]:
    """Write ``placement_sweep.csv`` and ``placement_sweep.svg`` into ``out_dir``."""
    rows = sweep() if rows is None else rows
    out_dir = Path(out_dir)
    csv_path = out_dir / "placement_sweep.csv"
    svg_path = out_dir / "placement_sweep.svg"
    atomic_write_bytes(csv_path, sweep_csv(rows))
    atomic_write_bytes(svg_path, sweep_svg(rows))
    return [csv_path, svg_path]
