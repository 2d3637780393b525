"""The Lean side of the pipeline: toolchain → build → audit.

:mod:`.toolchain` finds a Lean (native from elan, or the registry WebAssembly build);
:mod:`.modules` reads the library's import headers and orders its modules; :mod:`.build`
compiles them (``lake build``, or our own incremental module builder); :mod:`.olean` reads
the compiled ``.olean`` files; :mod:`.audit` enumerates and audits every declaration;
:mod:`.build_audit` says which files the library is made of and builds then audits it, the
one way certify and :mod:`.statement_review` (``pytools review-statements``) both use;
:mod:`.axioms` names the allowed axioms (read by the audit and by the offline verifier);
:mod:`.cli` holds the stage's commands.
"""
