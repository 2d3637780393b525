"""How the proxy is served: uvicorn with per-connection limits, so no client holds the server.

uvicorn alone bounds a connection only between requests (``timeout_keep_alive``, armed when a
response completes and disarmed by the next byte): a client that opens a connection and sends
one header byte every half second, or opens hundreds of connections and never finishes a
request head, holds them for ever. :func:`server_config` adds

* a **head deadline** (:attr:`Limits.head_timeout_s`): from the moment a connection opens, or
  a response on it completes, the next request's head (request line and headers) must be
  complete within this many seconds, however the bytes are dripped; past it the connection is
  closed (one log line, no answer: there is no request to answer);
* the **head size** cap (:attr:`Limits.max_head_bytes`, h11's ``max_incomplete_event_size``):
  a larger request head gets uvicorn's 400 and the connection is closed;
* the **idle** keep-alive timeout (``timeout_keep_alive``) and a **concurrency** cap
  (``limit_concurrency``: past it a new request gets 503 at once);

and the proxy app (:mod:`.app`) puts its own deadline on reading a request body
(``ProxyConfig.body_timeout_s``: 408 and the connection closed).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import Limits

log = logging.getLogger(__name__)


def bounded_protocol(head_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline on every request head (module docstring)."""

    class BoundedH11Protocol(H11Protocol):
        head_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_deadline()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # a whole request head has arrived
                self._disarm_head_deadline()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm_head_deadline()

        def _arm_head_deadline(self) -> None:
            self._disarm_head_deadline()
            self.head_deadline = self.loop.call_later(head_timeout_s, self._head_too_slow)

        def _disarm_head_deadline(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
                self.head_deadline = None

        def _head_too_slow(self) -> None:
            self.head_deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                log.info("closed a connection: no complete request head within %g s",
                         head_timeout_s)
                self.transport.close()

    return BoundedH11Protocol


def server_config(app: Any, limits: Limits, **options: Any) -> uvicorn.Config:
    """A uvicorn configuration serving ``app`` under ``limits`` (h11, the bounded protocol);
    ``options`` are passed to :class:`uvicorn.Config` as they are (log level and the like)."""
    return uvicorn.Config(
        app,
        http=bounded_protocol(limits.head_timeout_s),
        timeout_keep_alive=limits.keep_alive_s,
        h11_max_incomplete_event_size=limits.max_head_bytes,
        limit_concurrency=limits.max_concurrency,
        **options,
    )
