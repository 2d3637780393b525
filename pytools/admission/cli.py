"""``pytools admission``: run the admission proxy, add tenants, time the overhead.

    pytools admission --upstream http://127.0.0.1:8000 --tenants tenants.json
    pytools admission add-tenant --tenants tenants.json --id acme
    pytools admission bench --requests 300
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import click

from .display import ACCESS_LOG, redacted, shown, split_upstream
from .limits import BODY_TIMEOUT_S, Limits
from .request_policy import DEFAULT_MAX_BODY
from .tenants import SECRET_ENV, ConfigError, add_tenant, load_secret, load_tenants

UPSTREAM_KEY_ENV = "PYTOOLS_ADMISSION_UPSTREAM_KEY"


def check_upstream(url: str) -> str:
    """An http(s) base URL with a host and no query; refused otherwise. The refusal never
    repeats credentials (``user:pass@``) the URL holds."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.query \
            and not parts.fragment
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise click.BadParameter(f"{shown(redacted(url))} is not an http(s) base URL such as "
                                 "http://127.0.0.1:8000", param_hint="--upstream")
    return url.rstrip("/")


def log_lines() -> None:
    """The proxy's own log lines: its access lines (one per request) on standard output, where
    uvicorn writes its own, which are off (they would echo a client's query verbatim); its
    warnings (an upstream failing) on standard error."""
    for name, stream in ((ACCESS_LOG, sys.stdout), ("pytools.admission", sys.stderr)):
        logger = logging.getLogger(name)
        if not logger.handlers:
            handler = logging.StreamHandler(stream)
            handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


@click.group(invoke_without_command=True)
@click.option("--upstream", default=None, help="Base URL of the vLLM OpenAI-compatible server.")
@click.option("--tenants", "tenants_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Tenants file (API key hashes; see add-tenant).")
@click.option("--secret-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help=f"File holding the salt secret (hex); default ${SECRET_ENV}. No default.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8100, show_default=True,
              help="Port to listen on (0: any free port, printed).")
@click.option("--max-body", type=click.IntRange(min=1), default=DEFAULT_MAX_BODY,
              show_default=True, help="Largest request body accepted, in bytes (413 past it).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=600.0,
              show_default=True, help="Upstream read timeout in seconds.")
@click.option("--head-timeout", type=click.FloatRange(min=0.1), default=Limits.head_timeout_s,
              show_default=True, help="Seconds a client has to send a whole request head.")
@click.option("--body-timeout", type=click.FloatRange(min=0.1), default=BODY_TIMEOUT_S,
              show_default=True, help="Seconds a client has to send a whole request body.")
@click.option("--max-connections", type=click.IntRange(min=1), default=Limits.max_concurrency,
              show_default=True, help="Connections served at once (503 past it).")
@click.pass_context
def main(ctx: click.Context, upstream: str | None, tenants_path: Path | None,
         secret_file: Path | None, host: str, port: int, max_body: int, timeout_s: float,
         head_timeout: float, body_timeout: float, max_connections: int) -> None:
    """The admission proxy: binds each tenant's keyed cache_salt, refuses client salts."""
    if ctx.invoked_subcommand is not None:
        return
    if upstream is None or tenants_path is None:
        raise click.UsageError("--upstream and --tenants are required to run the proxy")
    import uvicorn

    from .app import ProxyConfig, create_app
    from .serving import server_config

    try:
        config = ProxyConfig(
            upstream=check_upstream(upstream),
            tenants=load_tenants(tenants_path),
            secret=load_secret(secret_file),
            max_body=max_body,
            timeout_s=timeout_s,
            upstream_api_key=os.environ.get(UPSTREAM_KEY_ENV) or None,
            body_timeout_s=body_timeout,
        )
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if config.upstream_api_key and split_upstream(config.upstream)[1] is not None:
        raise click.UsageError(f"${UPSTREAM_KEY_ENV} and credentials in --upstream both set; "
                               "the upstream gets one Authorization header: choose one")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio then sets TCP_NODELAY on accepted sockets (see loopback.py)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from None
    sock.listen(1024)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    click.echo(f"LISTENING http://{shown}:{bound}", err=False)
    click.echo(f"admission proxy: {len(config.tenants.by_key_hash)} tenant(s), upstream "
               f"{redacted(config.upstream)}", err=True)
    limits = Limits(head_timeout_s=head_timeout, max_concurrency=max_connections)
    log_lines()
    server = uvicorn.Server(server_config(create_app(config), limits, log_level="info",
                                          access_log=False, proxy_headers=False,
                                          server_header=False))
    server.run(sockets=[sock])


@main.command("add-tenant")
@click.option("--tenants", "tenants_path", type=click.Path(path_type=Path, dir_okay=False),
              required=True, help="Tenants file to create or extend.")
@click.option("--id", "tenant_id", required=True, help="Tenant id (letters, digits, . _ -).")
def add_tenant_cmd(tenants_path: Path, tenant_id: str) -> None:
    """Add a tenant with a fresh API key; the key is printed once and stored only hashed."""
    try:
        key = add_tenant(tenants_path, tenant_id)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(key)
    click.echo(f"added {tenant_id!r} to {tenants_path} (only the key's SHA-256 is stored; "
               "this is the one time the key is shown)", err=True)


@main.command("bench")
@click.option("--requests", type=click.IntRange(1, 20_000), default=300, show_default=True)
@click.option("--upstream-python", default=None,
              help="Interpreter for the stand-in upstream (e.g. .venv-engines/bin/python).")
@click.option("--validate", type=click.Choice(["invariants", "vllm"]), default="invariants",
              show_default=True, help="vllm: the upstream parses bodies with vLLM's models.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def bench_cmd(requests: int, upstream_python: str | None, validate: str, as_json: bool) -> None:
    """Time the proxy's overhead against direct calls to a stand-in upstream (loopback)."""
    from .bench import measure

    result = measure(requests=requests, upstream_python=upstream_python, validate=validate)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, sort_keys=True))
        return
    r = result
    click.echo(f"{r.requests} interleaved request pairs on 127.0.0.1 (stand-in upstream, "
               f"validating: {validate}):")
    click.echo(f"  direct   median {r.direct_median_ms:.2f} ms   p99 {r.direct_p99_ms:.2f} ms")
    click.echo(f"  proxied  median {r.proxied_median_ms:.2f} ms   p99 {r.proxied_p99_ms:.2f} ms")
    click.echo(f"  overhead median {r.overhead_median_ms:.2f} ms   p99 {r.overhead_p99_ms:.2f} ms"
               " (per-pair difference)")
