"""The admission proxy: an ASGI app (Starlette) in front of a vLLM OpenAI-compatible server.

For ``POST /v1/completions`` and ``POST /v1/chat/completions`` it

1. authenticates the tenant by its API key (``Authorization: Bearer KEY``; 401 otherwise, 400
   for more than one ``Authorization`` header), before reading any body;
2. checks the framing headers: ``Content-Length`` with ``Transfer-Encoding`` 400 (the classic
   request-smuggling pair; the connection is closed), a ``Content-Type`` other than
   ``application/json`` (UTF-8) or any ``Content-Encoding`` 415;
3. reads the body up to the limit (413 past it, from ``Content-Length`` or while reading)
   within ``body_timeout_s`` (408 and the connection closed past it);
4. runs :func:`.request_policy.admit`: a body that is not strict JSON or not an object 400, a
   body that brings its own ``cache_salt`` (or a key that reads as one) 400, otherwise the body
   re-serialised with the tenant's keyed salt;
5. forwards that body (and nothing of the client's headers but ``Accept``) with httpx to the
   route's own path and streams the upstream's answer back unchanged (server-sent events
   included); an upstream that cannot be reached gives 502 with a generic message (the
   upstream's address and the error go to the log, not to tenants); one that fails
   mid-answer gives one log line, and the answer ends there (a server-sent-events answer
   with a last ``error`` event).

``GET /v1/models`` is authenticated the same way and forwarded with no body (nothing to salt):
many OpenAI clients list the models first. A request with a query string is refused (400):
no route takes one, and the proxy forwards nothing of the client's URL. Any other route is 404
(no redirects: ``/v1/completions/`` too), another method 405, all with an OpenAI-style JSON
error body. ``GET /health`` answers without touching the upstream or needing a key. Every
refusal happens before anything is sent upstream.

No state crosses tenants: the one upstream client keeps no cookies (:class:`NoCookies`), follows
no redirects and reads nothing from the environment (proxies, ``.netrc``); of the client's
headers only ``Accept`` is forwarded, and of the upstream's only
:data:`PASSED_RESPONSE_HEADERS` (never ``Set-Cookie``). What remains shared is the pool of
keep-alive connections to the upstream, which carries no per-client data. Credentials in the
upstream URL (``http://user:pass@host``) are taken out of it and sent as HTTP Basic
authentication, so no log line or message ever holds them. One access line is logged per
request, with the client's method and path cut to :data:`.display.SHOWN_LOG` characters and escaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import logging
import socket
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .display import ACCESS_LOG, shown, split_upstream
from .limits import BODY_TIMEOUT_S, MAX_HEAD_BYTES
from .request_policy import DEFAULT_MAX_BODY, SALTED_ROUTES, Refused, admit
from .tenants import Tenants

#: Upstream response headers passed back (hop-by-hop and length headers are not).
PASSED_RESPONSE_HEADERS = ("content-type", "content-encoding", "cache-control", "x-request-id")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "invalid_request_error",
    413: "invalid_request_error",
    431: "invalid_request_error",
    415: "invalid_request_error",
    502: "upstream_error",
}
#: What a tenant is told when the upstream fails; the detail (its address) is logged only.
UPSTREAM_FAILED = "upstream unreachable or failed to answer; the proxy's log has the detail"
#: The 404 message quotes at most this much of the requested path.
SHOWN_PATH = 200
#: The route that lists the upstream's models (forwarded as it is: no body, nothing to salt).
MODELS_ROUTE = "/v1/models"


@dataclass(frozen=True)
class ProxyConfig:
    """Everything the proxy runs with; no field has a secret default."""

    upstream: str  # base URL, e.g. http://127.0.0.1:8000 (user:pass@ allowed: Basic auth)
    tenants: Tenants
    secret: bytes = field(repr=False)
    max_body: int = DEFAULT_MAX_BODY
    timeout_s: float = 600.0  # read timeout: a long generation streams for minutes
    # sent as the upstream's bearer token, if it has one
    upstream_api_key: str | None = field(default=None, repr=False)
    body_timeout_s: float = BODY_TIMEOUT_S  # the whole request body must arrive within this
    max_head_bytes: int = MAX_HEAD_BYTES  # request line and headers, as received


class NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: the proxy's one upstream client serves every tenant,
    so a cookie the upstream sets on one tenant's answer must never ride on another's."""

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return

    def extract_cookies(self, response: Any, request: urllib.request.Request) -> None:
        return


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


def head_size(scope: Scope) -> int:
    """The size of a request's head as received: request line and header lines."""
    line = len(scope["method"]) + len(scope.get("raw_path") or b"") \
        + len(scope.get("query_string") or b"") + 12
    return line + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


class Guard:
    """Outermost layer: refuses a head over ``max_head_bytes`` (431; uvicorn's h11 bounds only
    a head still arriving) and a query string (400), and logs one access line per request, the
    client's method and path cut and escaped (:func:`shown`), the query by its length only.
    """

    def __init__(self, app: ASGIApp, log: logging.Logger, max_head_bytes: int) -> None:
        self.app = app
        self.log = log
        self.max_head_bytes = max_head_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        query = scope.get("query_string", b"")
        try:
            if head_size(scope) > self.max_head_bytes:
                await error(431, f"the request head exceeds {self.max_head_bytes} bytes",
                            {"Connection": "close"})(scope, receive, sending)
            elif query:
                await error(400, "query strings are not accepted: no route takes one, and the "
                            "request's parameters go in its JSON body")(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            host, port = scope.get("client") or ("-", 0)
            asked = shown(scope["path"]) + (f" ?<{len(query)} bytes>" if query else "")
            self.log.info("%s:%s %s %s %s", host, port, shown(scope["method"], 16), asked,
                          status or "-")


def create_app(config: ProxyConfig, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    """The proxy app. ``transport`` replaces the network (tests); by default httpx's own."""
    upstream, basic_auth = split_upstream(config.upstream)
    log = logging.getLogger(__name__)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx.Timeout(config.timeout_s, connect=10.0)
        # TCP_NODELAY on the upstream connections too: a request's headers and body may leave
        # in two writes, and Nagle's algorithm would hold the second for the peer's delayed ACK.
        transport_ = transport or httpx.AsyncHTTPTransport(
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        # one client for every tenant, so it keeps nothing per client: no cookies, no
        # redirects followed, nothing from the environment (HTTP_PROXY, .netrc)
        async with httpx.AsyncClient(transport=transport_, timeout=timeout, cookies=NoCookies(),
                                     follow_redirects=False, trust_env=False,
                                     auth=basic_auth) as client:
            app.state.client = client
            yield

    def tenant_of(request: Request) -> str | Response:
        """The authenticated tenant's id, or the refusal to answer with."""
        api_key = bearer_key(request)
        if isinstance(api_key, Refused):
            return error(api_key.status, api_key.message)
        if api_key is None:
            return error(401, "missing API key: send `Authorization: Bearer <key>`",
                         {"WWW-Authenticate": "Bearer"})
        tenant = config.tenants.authenticate(api_key)
        if tenant is None:
            return error(401, "unknown API key", {"WWW-Authenticate": "Bearer"})
        return tenant

    async def relay(answer: httpx.Response, route: str) -> AsyncIterator[bytes]:
        """The upstream's answer as it comes; if the upstream fails mid-answer, one log line
        and the end of the answer (for server-sent events, after an ``error`` event)."""
        try:
            async for chunk in answer.aiter_raw():
                yield chunk
        except (httpx.HTTPError, httpx.StreamError) as exc:
            log.warning("upstream %s%s failed mid-answer: %s: %s", upstream, route,
                        type(exc).__name__, exc)
            if answer.headers.get("content-type", "").startswith("text/event-stream"):
                event = {"error": {"message": UPSTREAM_FAILED, "type": ERROR_TYPES[502],
                                   "code": 502}}
                yield f"\n\ndata: {json.dumps(event)}\n\n".encode()

    async def send_upstream(request: Request, method: str, route: str,
                            body: bytes | None) -> Response:
        # ``route`` is the matched route's own path: what goes upstream never depends on how
        # the client spelled it (percent-escapes and the like)
        headers = {"content-type": "application/json"} if body is not None else {}
        if accept := request.headers.get("accept"):
            headers["accept"] = accept
        if config.upstream_api_key:
            headers["authorization"] = f"Bearer {config.upstream_api_key}"
        client: httpx.AsyncClient = request.app.state.client
        outgoing = client.build_request(method, upstream + route, content=body, headers=headers)
        try:
            answer = await client.send(outgoing, stream=True)
        except httpx.TransportError as exc:
            log.warning("upstream %s%s failed: %s: %s", upstream, route,
                        type(exc).__name__, exc)
            return error(502, UPSTREAM_FAILED)
        passed = {k: v for k, v in answer.headers.items() if k.lower() in PASSED_RESPONSE_HEADERS}
        return StreamingResponse(
            relay(answer, route),
            status_code=answer.status_code,
            headers=passed,
            background=BackgroundTask(answer.aclose),
        )

    async def forward(route: str, request: Request) -> Response:
        tenant = tenant_of(request)
        if isinstance(tenant, Response):
            return tenant
        framing = framing_problem(request)
        if framing is not None:
            # after ambiguous framing the rest of the connection cannot be trusted: close it
            close = {"Connection": "close"} if framing.status == 400 else None
            return error(framing.status, framing.message, close)
        try:
            async with asyncio.timeout(config.body_timeout_s):
                body = await read_body(request, config.max_body)
        except ClientDisconnect:
            log.info("client went away while sending the body; nothing forwarded")
            return Response(status_code=400)  # nobody reads it
        except TimeoutError:
            log.info("client did not send its body within %g s; connection closed",
                     config.body_timeout_s)
            return error(408, f"the request body did not arrive within "
                         f"{config.body_timeout_s:g} s", {"Connection": "close"})
        if body is None:
            return error(413, f"request body exceeds the limit of {config.max_body} bytes")
        outcome = admit(body, tenant, config.secret, config.max_body)
        if isinstance(outcome, Refused):
            return error(outcome.status, outcome.message)
        return await send_upstream(request, "POST", route, outcome.body)

    async def models(request: Request) -> Response:
        tenant = tenant_of(request)
        if isinstance(tenant, Response):
            return tenant
        if request.headers.get("content-length", "0") != "0" or \
                "transfer-encoding" in request.headers:
            return error(400, f"GET {MODELS_ROUTE} takes no body", {"Connection": "close"})
        return await send_upstream(request, "GET", MODELS_ROUTE, None)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            # the path as received (request.url.path would read ``//x`` as a host)
            asked = request.scope["path"][:SHOWN_PATH]
            return error(404, f"no route {asked}; this proxy serves "
                         + ", ".join(f"POST {r}" for r in SALTED_ROUTES)
                         + f", GET {MODELS_ROUTE}")
        return error(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    routes = [Route(path, partial(forward, path), methods=["POST"]) for path in SALTED_ROUTES]
    routes.append(Route(MODELS_ROUTE, models, methods=["GET"]))
    routes.append(Route("/health", health, methods=["GET"]))
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error},
                    middleware=[Middleware(Guard, log=logging.getLogger(ACCESS_LOG),
                                           max_head_bytes=config.max_head_bytes)])
    # Starlette answers /v1/completions/ with a redirect built from the client's Host header
    # (an open redirect, and a second spelling of a route); the README promises 404
    app.router.redirect_slashes = False
    return app
