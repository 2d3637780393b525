"""The cross-tenant prefix-cache leak and its closure (result ``tenant-leak``, ``Proofs/Leak/``).

:mod:`.prompts` makes the synthetic prompt pairs, :mod:`.scenarios` runs the four scenarios on
any engine, :mod:`.engines` adapts vLLM's and SGLang's own cache code, :mod:`.reference` is the
pure-Python model certify re-runs, :mod:`.evidence` writes and re-checks the committed evidence
files, :mod:`.probe` measures prime and probe through eviction on the reference of
``Proofs/Leak/Eviction.lean``'s two designs and :mod:`.probe_engines` on the engines' own
cache code (its records re-checked by :mod:`.probe_record`), :mod:`.served_run` on a served
vLLM behind the admission proxy (its record re-checked by :mod:`.served_record`),
:mod:`.result` turns them into the certificate's figures, :mod:`.cli` is ``pytools leak``.
"""
