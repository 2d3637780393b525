"""The published results, one room each, next to the Lean folder it speaks for.

:mod:`.spec` holds the records every result shares (and imports nothing of the project);
:mod:`.isolation` (``Proofs/Isolation``), :mod:`.ceiling` (``Proofs/Ceiling``),
:mod:`.kernel` (``Proofs/Kernel``), :mod:`.placement` (``Proofs/Placement``) and :mod:`.leak`
(``Proofs/Leak``, measured on the engines' cache code and closed by :mod:`pytools.admission`)
each compute their result's evidence; :mod:`.registry` lists them for
:mod:`pytools.publish.certify`; :mod:`.cli` holds ``pytools regenerate`` and each room's
``cli.py`` its result's commands. Nothing here imports :mod:`pytools.publish`, and no room
imports another: what two results share (reading and replaying traces) is :mod:`pytools.traces`.
A room whose figures come from a committed record keeps the code that makes it (servers,
engines, a long solve) apart from the ``*_record`` module that re-checks it for certify.
"""
