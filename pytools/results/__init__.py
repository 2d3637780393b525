"""The published results, one room each, next to the Lean folder it speaks for.

:mod:`.spec` holds the records every result shares (and imports nothing of the project);
:mod:`.isolation` (``Proofs/Isolation``), :mod:`.ceiling` (``Proofs/Ceiling``),
:mod:`.kernel` (``Proofs/Kernel``), :mod:`.placement` (``Proofs/Placement``) and :mod:`.leak`
(``Proofs/Leak``, measured on the engines' cache code and closed by :mod:`pytools.admission`)
each compute their result's evidence; :mod:`.registry` lists them for
:mod:`pytools.publish.certify`; :mod:`.cli` holds ``pytools regenerate`` and each room's
``cli.py`` its result's commands. Nothing here imports :mod:`pytools.publish`.
"""
