"""Run an ASGI app with uvicorn on 127.0.0.1 in a background thread (tests and the bench).

Only the loopback address is ever bound; the port is chosen by the kernel (port 0), so runs do
not collide. The server stops when the ``with`` block ends, or after ``max_seconds`` at the
latest, so nothing outlives a crashed test.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from .limits import Limits
from .serving import server_config

LOOPBACK = "127.0.0.1"


def loopback_socket() -> socket.socket:
    """A listening TCP socket on 127.0.0.1 with a kernel-chosen port."""
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only then (without it
    # Nagle and delayed ACKs add ~40 ms to every response written in two parts, measured)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, 0))
    sock.listen(128)
    return sock


@contextlib.contextmanager
def serve_in_thread(app: Any, max_seconds: float = 600.0,
                    limits: Limits | None = None) -> Iterator[str]:
    """Serve ``app`` on loopback; yield its base URL (``http://127.0.0.1:PORT``). With
    ``limits``, the server is configured as ``pytools admission`` configures the proxy's."""
    sock = loopback_socket()
    port = sock.getsockname()[1]
    options: dict[str, Any] = {"log_level": "warning", "lifespan": "on", "access_log": False}
    config = uvicorn.Config(app, **options) if limits is None else \
        server_config(app, limits, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the loopback server did not start")
        time.sleep(0.01)
    timer = threading.Timer(max_seconds, lambda: setattr(server, "should_exit", True))
    timer.daemon = True
    timer.start()
    try:
        yield f"http://{LOOPBACK}:{port}"
    finally:
        timer.cancel()
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
