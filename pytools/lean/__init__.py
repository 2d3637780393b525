"""The Lean side of the pipeline: toolchain → build → audit.

:mod:`.toolchain` finds a Lean (native from elan, or the registry WebAssembly build);
:mod:`.modules` reads the library's import headers and orders its modules; :mod:`.build`
compiles them (``lake build``, or our own incremental module builder); :mod:`.olean` reads
the compiled ``.olean`` files; :mod:`.audit` enumerates and audits every declaration.
"""
