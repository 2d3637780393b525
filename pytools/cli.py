"""The pipeline's command line, ``pytools`` (also ``python -m pytools``): the table of its
commands, in pipeline order. Each command lives in its package's ``cli.py`` and is imported
only when it runs, so ``pytools toolchain`` does not pay for the solver or the plotting
library, and ``pytools verify`` runs in an install with the default dependencies alone.
``pytools --help`` lists the table's summaries without importing any command.

A command whose packages this install lacks (an optional extra of ``pyproject.toml``) ends in
one line naming the extra to install, and exit status 1.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

R = TypeVar("R")


@dataclass(frozen=True)
class Entry:
    """One command: where it lives (``module:attribute``), the summary ``pytools --help``
    prints (its docstring's first sentence; a test keeps them equal), and the optional extra
    its code needs beyond the default dependencies (None: none)."""

    target: str
    summary: str
    extra: str | None = None

    def load(self) -> click.Command:
        """Import the command's module and return the command."""
        module_name, attr = self.target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):  # pragma: no cover - a wiring mistake
            raise TypeError(f"{self.target} is not a click command")
        return command


#: Every command, in pipeline order: the Lean stage, the results, publishing, the proxy.
COMMANDS: dict[str, Entry] = {
    "toolchain": Entry("pytools.lean.cli:toolchain",
                       "Say which Lean toolchain the pipeline will use."),
    "build": Entry("pytools.lean.cli:build",
                   "Compile the library (lake build, or the pytools builder without lake)."),
    "audit": Entry("pytools.lean.cli:audit",
                   "Audit every declaration of MODULES from their .olean files (every rule of "
                   "pytools.lean.audit.rules)."),
    "review-statements": Entry("pytools.publish.cli:review_statements",
                               "Compare (or, with --accept, record) the published theorems' "
                               "statements.", "certify"),
    "regenerate": Entry("pytools.results.cli:regenerate",
                        "Rewrite (or check) the generated files of RESULT (default: every "
                        "result).", "certify"),
    "ceiling": Entry("pytools.results.ceiling.cli:main",
                     "Demand-fetch hit ceiling of a Mooncake JSONL trace (``.jsonl`` or "
                     "``.jsonl.gz``).", "certify"),
    "kernel": Entry("pytools.results.kernel.cli:main",
                    "The single-owner kernel's executable reference.", "certify"),
    "placement": Entry("pytools.results.placement.cli:main",
                       "Pooled KV placement: CP-SAT certificate on the committed instance "
                       "(default: solve).", "certify"),
    "leak": Entry("pytools.results.leak.cli:main",
                  "Cross-tenant prefix-cache leak on vLLM and SGLang, and its keyed-salt "
                  "closure.", "certify"),
    "certify": Entry("pytools.publish.cli:certify",
                     "Build, audit every declaration, and emit (or --check) the certificates.",
                     "certify"),
    "verify": Entry("pytools.publish.cli:verify",
                    "Verify certificate FILEs offline against a published, anchored "
                    "manifest."),
    "keygen": Entry("pytools.publish.cli:keygen",
                    "Make an Ed25519 key pair: PRIVATE (PEM, 0600; keep it OUT of the "
                    "repository) signs with `certify --sign-key`; PUBLIC is what auditors pass "
                    "to `verify --key`, obtained from you out of band, never from the bundle."),
    "site": Entry("pytools.publish.cli:site",
                  "Build the static product page with its offline verifier.", "certify"),
    "admission": Entry("pytools.admission.cli:main",
                       "The admission proxy: binds each tenant's keyed cache_salt, refuses "
                       "client salts.", "admission"),
}

#: Where the group notes, per invocation, which command it resolved (``ctx.meta``).
_CHOSEN = "pytools.cli.command"


def missing_extra(name: str, exc: ModuleNotFoundError) -> click.ClickException | None:
    """The one-line error for command ``name`` failing to import a package of an optional
    extra; None when the missing module is the project's own or the command needs no extra
    (a broken install, not a missing extra: the error is left as it is)."""
    entry = COMMANDS.get(name)
    missing = (exc.name or "").split(".")[0]
    if entry is None or entry.extra is None or not missing or missing == "pytools":
        return None
    return click.ClickException(
        f"pytools {name} needs the optional dependencies `{entry.extra}` ({missing} is not "
        f"installed): pip install 'pytools[{entry.extra}]' (from a checkout: "
        f"pip install -e '.[{entry.extra}]')")


def _guarded(name: Callable[[], str], run: Callable[[], R]) -> R:
    """``run()``, a missing extra's import error turned into :func:`missing_extra`'s line
    (``name``: the command, asked once the error happened)."""
    try:
        return run()
    except ModuleNotFoundError as exc:
        error = missing_extra(name(), exc)
        if error is None:
            raise
        raise error from None


class PipelineGroup(click.Group):
    """The group over :data:`COMMANDS`: listed in table order from the table alone, each
    imported when it is resolved."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        return None if entry is None else _guarded(lambda: cmd_name, entry.load)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        ctx.meta[_CHOSEN] = name
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        run = super().invoke
        return _guarded(lambda: ctx.meta.get(_CHOSEN, ""), lambda: run(ctx))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing from the table's summaries, as click would print the commands'
        own (no command module is imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, click.Command(n, help=COMMANDS[n].summary).get_short_help_str(limit))
                for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=PipelineGroup)
def cli() -> None:
    """Build, audit, certify and verify the Proofs Lean library."""
