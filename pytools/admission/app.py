"""The admission proxy: an ASGI app (Starlette) in front of a vLLM OpenAI-compatible server.

For ``POST /v1/completions`` and ``POST /v1/chat/completions`` it

1. authenticates the tenant by its API key (``Authorization: Bearer KEY``; 401 otherwise),
   before reading any body;
2. reads the body up to the limit (413 past it, from ``Content-Length`` or while reading);
3. runs :func:`.policy.admit`: malformed JSON or a non-object 400, a body that brings its own
   ``cache_salt`` 400, otherwise the body re-serialised with the tenant's keyed salt;
4. forwards that body (and nothing of the client's headers but ``Accept``) with httpx and
   streams the upstream's answer back unchanged (server-sent events included); an upstream that
   cannot be reached gives 502.

Every refusal happens before anything is sent upstream. Any other route is 404, another method
405, all with an OpenAI-style JSON error body. ``GET /health`` answers without touching the
upstream or needing a key.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .policy import DEFAULT_MAX_BODY, SALTED_ROUTES, Refused, admit
from .tenants import Tenants

#: Upstream response headers passed back (hop-by-hop and length headers are not).
PASSED_RESPONSE_HEADERS = ("content-type", "content-encoding", "cache-control", "x-request-id")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    502: "upstream_error",
}


@dataclass(frozen=True)
class ProxyConfig:
    """Everything the proxy runs with; no field has a secret default."""

    upstream: str  # base URL, e.g. http://127.0.0.1:8000
    tenants: Tenants
    secret: bytes
    max_body: int = DEFAULT_MAX_BODY
    timeout_s: float = 600.0  # read timeout: a long generation streams for minutes
    upstream_api_key: str | None = None  # sent as the upstream's bearer token, if it has one


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """An OpenAI-style error body."""
    body = {"error": {"message": message, "type": ERROR_TYPES.get(status, "error"),
                      "code": status}}
    return JSONResponse(body, status_code=status, headers=headers)


def bearer_key(request: Request) -> str | None:
    """The API key of an ``Authorization: Bearer KEY`` header, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return key.strip()


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is longer than ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                return None
        except ValueError:
            pass
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(config: ProxyConfig, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    """The proxy app. ``transport`` replaces the network (tests); by default httpx's own."""
    upstream = config.upstream.rstrip("/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx.Timeout(config.timeout_s, connect=10.0)
        # TCP_NODELAY on the upstream connections too: a request's headers and body may leave
        # in two writes, and Nagle's algorithm would hold the second for the peer's delayed ACK.
        transport_ = transport or httpx.AsyncHTTPTransport(
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        async with httpx.AsyncClient(transport=transport_, timeout=timeout) as client:
            app.state.client = client
            yield

    async def forward(request: Request) -> Response:
        api_key = bearer_key(request)
        if api_key is None:
            return error(401, "missing API key: send `Authorization: Bearer <key>`",
                         {"WWW-Authenticate": "Bearer"})
        tenant = config.tenants.authenticate(api_key)
        if tenant is None:
            return error(401, "unknown API key", {"WWW-Authenticate": "Bearer"})
        body = await read_body(request, config.max_body)
        if body is None:
            return error(413, f"request body exceeds the limit of {config.max_body} bytes")
        outcome = admit(body, tenant, config.secret, config.max_body)
        if isinstance(outcome, Refused):
            return error(outcome.status, outcome.message)
        headers = {"content-type": "application/json"}
        if accept := request.headers.get("accept"):
            headers["accept"] = accept
        if config.upstream_api_key:
            headers["authorization"] = f"Bearer {config.upstream_api_key}"
        client: httpx.AsyncClient = request.app.state.client
        outgoing = client.build_request(
            "POST", upstream + request.url.path, content=outcome.body, headers=headers
        )
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            return error(502, f"upstream {upstream} unreachable: {type(exc).__name__}")
        passed = {k: v for k, v in answer.headers.items() if k.lower() in PASSED_RESPONSE_HEADERS}
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers=passed,
            background=BackgroundTask(answer.aclose),
        )

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return error(404, f"no route {request.url.path}; this proxy serves "
                         + ", ".join(f"POST {r}" for r in SALTED_ROUTES))
        return error(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    routes = [Route(path, forward, methods=["POST"]) for path in SALTED_ROUTES]
    routes.append(Route("/health", health, methods=["GET"]))
    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={HTTPException: http_error})
