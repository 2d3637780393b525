"""The cross-tenant prefix-cache leak and its closure (result ``tenant-leak``, ``Proofs/Leak/``).

:mod:`.prompts` makes the synthetic prompt pairs, :mod:`.scenarios` runs the four scenarios on
any engine, :mod:`.engines` adapts vLLM's and SGLang's own cache code, :mod:`.reference` is the
pure-Python model certify re-runs, :mod:`.evidence` writes and re-checks the committed evidence
files, :mod:`.probe` measures prime and probe through eviction on the reference of
``Proofs/Leak/Eviction.lean``'s two designs, :mod:`.result` turns them into the certificate's
figures, :mod:`.cli` is ``pytools leak``.
"""
