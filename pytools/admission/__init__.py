"""The admission layer: binds each tenant's keyed ``cache_salt`` in front of a vLLM server.

* :mod:`.salt` — the keyed salt (HMAC-SHA256 keyed by a server secret over a label, a NUL and
  the tenant id) and vLLM's salt rules; standard library only, imported by the leak
  reproduction too;
* :mod:`.request_policy` — what happens to one request body (pure);
* :mod:`.tenants` — the tenants file (API key hashes) and the secret;
* :mod:`.app` — the ASGI proxy (Starlette + httpx); :mod:`.cli` — ``pytools admission``;
* :mod:`.serving`, :mod:`.limits` — uvicorn with per-connection limits; :mod:`.display` —
  client input and upstream URLs fit to print;
* :mod:`.standin`, :mod:`.loopback`, :mod:`.bench` — the stand-in upstream, loopback serving
  and the overhead measurement.

Importing this package imports nothing else, so the salt is usable without the web stack.
"""
