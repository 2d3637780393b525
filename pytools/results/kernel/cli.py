"""``pytools kernel``: the kernel reference's command line (the workflow bench, the figures;
the generated Lean files: ``pytools regenerate single-owner-kernel``)."""

from __future__ import annotations

import json

import click

from pytools.paths import project_root
from pytools.traces.progress import progress_line

from .model import KernelRefError


@click.group()
def main() -> None:
    """The single-owner kernel's executable reference."""


@main.command("workflows")
def workflows_cmd() -> None:
    """Print the workflow bench: each workflow played by the reference, and whether it agrees
    with its file and with the committed Lean bench."""
    from .result import workflow_rows

    try:
        rows = workflow_rows(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    header = f"{'workflow':36} {'family':22} {'steps':>5} {'refusals':>8} agree"
    click.echo(header)
    click.echo("-" * len(header))
    for r in rows:
        refusals = "-" if r["refusals"] is None else r["refusals"]
        click.echo(f"{r['name']:36} {r['family']:22} {r['steps']:>5} {refusals:>8} "
                   f"{'yes' if r['agree'] else 'NO'}")
    if not all(r["agree"] for r in rows):
        raise click.ClickException("some workflows disagree (see above)")


@main.command("mac-workflows")
def mac_workflows_cmd() -> None:
    """Print the tagged variant's bench: each workflow played on the tagged system, whether it
    agrees with its file and with the committed Lean bench, and (first bench) whether it keeps
    the first kernel's verdicts."""
    from .result import mac_evidence

    try:
        _, rows = mac_evidence(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    header = f"{'workflow':36} {'family':22} {'steps':>5} {'refusals':>8} agree  verdicts"
    click.echo(header)
    click.echo("-" * len(header))
    for r in rows:
        kept = {True: "kept", False: "CHANGED"}.get(r.get("verdicts_kept"), "-")
        click.echo(f"{r['name']:36} {r['family']:22} {r['steps']:>5} {r['refusals']:>8} "
                   f"{'yes' if r['agree'] else 'NO ':5} {kept}")
    if not all(r["agree"] and r.get("verdicts_kept", True) for r in rows):
        raise click.ClickException("some tagged workflows disagree (see above)")


@main.command("summary")
def summary_cmd() -> None:
    """Print the evidence figures as JSON."""
    from .result import evidence

    try:
        with progress_line("kernel summary: playing the workflows"):
            ev = evidence(project_root())
    except KernelRefError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(ev.figures, indent=2, sort_keys=True))
