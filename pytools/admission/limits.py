"""The per-connection limits of the proxy's server (:mod:`.serving` says what each bounds).
Standard library only: the CLI reads the defaults before it imports the web stack."""

from __future__ import annotations

from dataclasses import dataclass

#: The largest request head (request line and headers) accepted, in bytes.
MAX_HEAD_BYTES = 16 * 1024
#: Seconds a client has to send a whole request body (the app's deadline: 408 past it).
BODY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Limits:
    """Per-connection limits of the proxy's server (seconds, bytes, connections)."""

    head_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_head_bytes: int = MAX_HEAD_BYTES
    max_concurrency: int = 512
