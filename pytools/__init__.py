"""Build, audit, certify and verify the ``Proofs`` Lean library.

The pipeline, in order, one package a stage:

* :mod:`pytools.lean` — toolchain → build → audit: find a Lean, compile the library, read the
  compiled ``.olean`` files and audit every declaration;
* :mod:`pytools.results` — one room per published result (isolation floor, demand-fetch hit
  ceiling, single-owner kernel, pooled placement, tenant leak), each computing its evidence
  from hashed input files;
* :mod:`pytools.publish` — certify → verify: canonical, hashed certificates and their manifest,
  the offline verifier, and the static page.

Below the results, :mod:`pytools.traces` is the trace library they read traces with (the
reader, exact curves, policy simulators). Beside them, :mod:`pytools.admission` is the
admission proxy that closes the tenant leak: it binds a keyed cache salt per tenant in front
of a vLLM server (``pytools admission``).
Below them all, :mod:`pytools.files` (the atomic write) and :mod:`pytools.paths` import nothing
of the project; no package imports a later stage (``tests/test_layout.py``).

:mod:`pytools.cli` is the command line (``python -m pytools`` / ``pytools``): only the table
of commands, in pipeline order; each command lives in its package's ``cli.py``
(:mod:`pytools.lean.cli`, :mod:`pytools.results.cli` and each result's room,
:mod:`pytools.publish.cli`, :mod:`pytools.admission.cli`). The module :mod:`pytools.certify`
stays as CI's ``-m`` entry point.
"""

__version__ = "0.1.0"
