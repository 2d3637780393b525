"""The admission proxy: an ASGI app (Starlette) in front of a vLLM OpenAI-compatible server.

For ``POST /v1/completions`` and ``POST /v1/chat/completions`` it

1. authenticates the tenant by its API key (``Authorization: Bearer KEY``; 401 otherwise, 400
   for more than one ``Authorization`` header), before reading any body;
2. checks the framing headers: ``Content-Length`` with ``Transfer-Encoding`` 400 (the classic
   request-smuggling pair; the connection is closed), a ``Content-Type`` other than
   ``application/json`` (UTF-8) or any ``Content-Encoding`` 415;
3. reads the body up to the limit (413 past it, from ``Content-Length`` or while reading);
4. runs :func:`.request_policy.admit`: a body that is not strict JSON or not an object 400, a
   body that brings its own ``cache_salt`` (or a key that reads as one) 400, otherwise the body
   re-serialised with the tenant's keyed salt;
5. forwards that body (and nothing of the client's headers but ``Accept``) with httpx to the
   route's own path and streams the upstream's answer back unchanged (server-sent events
   included); an upstream that cannot be reached gives 502 with a generic message (the
   upstream's address and the error go to the log, not to tenants).

Every refusal happens before anything is sent upstream. Any other route is 404 (no redirects:
``/v1/completions/`` too), another method 405, all with an OpenAI-style JSON error body.
``GET /health`` answers without touching the upstream or needing a key.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .request_policy import DEFAULT_MAX_BODY, SALTED_ROUTES, Refused, admit
from .tenants import Tenants

#: Upstream response headers passed back (hop-by-hop and length headers are not).
PASSED_RESPONSE_HEADERS = ("content-type", "content-encoding", "cache-control", "x-request-id")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    502: "upstream_error",
}
#: What a tenant is told when the upstream fails; the detail (its address) is logged only.
UPSTREAM_FAILED = "upstream unreachable or failed to answer; the proxy's log has the detail"
#: The 404 message quotes at most this much of the requested path.
SHOWN_PATH = 200


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


def bearer_key(request: Request) -> str | None | Refused:
    """The API key of an ``Authorization: Bearer KEY`` header, None without one, or a refusal
    when the header is repeated: a proxy in front may pick another one than this one does, so
    which tenant a request is from would depend on who reads it."""
    values = request.headers.getlist("authorization")
    if len(values) > 1:
        return Refused(400, "more than one Authorization header")
    scheme, _, key = (values[0] if values else "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return key.strip()


def framing_problem(request: Request) -> Refused | None:
    """Why the request's body headers are refused, or None.

    ``Content-Length`` beside ``Transfer-Encoding`` is how requests are smuggled past a proxy
    that reads the other one (RFC 9112 6.1). The body is forwarded as ``application/json``, so
    only that (UTF-8, or no ``Content-Type`` at all, as vLLM's own server accepts) comes in;
    an encoded (compressed) body would be parsed as if it were not.
    """
    headers = request.headers
    if "content-length" in headers and "transfer-encoding" in headers:
        return Refused(400, "both Content-Length and Transfer-Encoding are set")
    types = headers.getlist("content-type")
    if len(types) > 1:
        return Refused(415, "more than one Content-Type header")
    if types and not is_json_utf8(types[0]):
        return Refused(415, f"Content-Type must be application/json, not {types[0][:100]!r}")
    encodings = [e.strip().lower() for v in headers.getlist("content-encoding")
                 for e in v.split(",") if e.strip()]
    if any(e != "identity" for e in encodings):
        return Refused(415, "Content-Encoding is not supported; send the body uncompressed")
    return None


def is_json_utf8(content_type: str) -> bool:
    """Whether a ``Content-Type`` value is ``application/json``, with no charset but UTF-8."""
    media, *params = content_type.split(";")
    if media.strip().lower() != "application/json":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and \
                value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is longer than ``limit`` bytes (read no further).

    Raises :class:`~starlette.requests.ClientDisconnect` when the client goes away first."""
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
    log = logging.getLogger(__name__)

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

    async def forward(route: str, request: Request) -> Response:
        # ``route`` is the matched route's own path: what goes upstream never depends on how
        # the client spelled it (percent-escapes and the like)
        api_key = bearer_key(request)
        if isinstance(api_key, Refused):
            return error(api_key.status, api_key.message)
        if api_key is None:
            return error(401, "missing API key: send `Authorization: Bearer <key>`",
                         {"WWW-Authenticate": "Bearer"})
        tenant = config.tenants.authenticate(api_key)
        if tenant is None:
            return error(401, "unknown API key", {"WWW-Authenticate": "Bearer"})
        framing = framing_problem(request)
        if framing is not None:
            # after ambiguous framing the rest of the connection cannot be trusted: close it
            close = {"Connection": "close"} if framing.status == 400 else None
            return error(framing.status, framing.message, close)
        try:
            body = await read_body(request, config.max_body)
        except ClientDisconnect:
            log.info("client went away while sending the body; nothing forwarded")
            return Response(status_code=400)  # nobody reads it
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
        outgoing = client.build_request("POST", upstream + route, content=outcome.body,
                                        headers=headers)
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            log.warning("upstream %s%s failed: %s: %s", upstream, route, type(exc).__name__,
                        exc)
            return error(502, UPSTREAM_FAILED)
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
            # the path as received (request.url.path would read ``//x`` as a host)
            shown = request.scope["path"][:SHOWN_PATH]
            return error(404, f"no route {shown}; this proxy serves "
                         + ", ".join(f"POST {r}" for r in SALTED_ROUTES))
        return error(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    routes = [Route(path, partial(forward, path), methods=["POST"]) for path in SALTED_ROUTES]
    routes.append(Route("/health", health, methods=["GET"]))
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error})
    # Starlette answers /v1/completions/ with a redirect built from the client's Host header
    # (an open redirect, and a second spelling of a route); the README promises 404
    app.router.redirect_slashes = False
    return app
