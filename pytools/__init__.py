"""Build, audit, certify and verify the ``Proofs`` Lean library.

The pipeline, in order, one package a stage:

* :mod:`pytools.lean` — toolchain → build → audit: find a Lean, compile the library, read the
  compiled ``.olean`` files and audit every declaration;
* :mod:`pytools.results` — one room per published result (isolation floor, hit ceiling,
  ownership kernel, pooled placement), each computing its evidence from hashed input files;
* :mod:`pytools.publish` — certify → verify: canonical, hashed certificates and their manifest,
  the offline verifier, and the static page.

:mod:`pytools.cli` is the command line (``python -m pytools`` / ``pytools``); the modules
``pytools.certify``, ``pytools.verify`` and ``pytools.traces`` are entry points kept for
``python -m``.
"""

__version__ = "0.1.0"
