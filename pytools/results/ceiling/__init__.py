"""The demand-fetch hit ceiling (``Proofs/Ceiling/``) and the traces it is measured on.

:mod:`.trace` reads and counts a trace; :mod:`.policies` simulates LRU, FIFO and Belady;
:mod:`.sweep` draws hit rate against capacity; :mod:`.lean_instance` generates the
kernel-checked Lean instance; :mod:`.result` is the published result; :mod:`.cli` the
``python -m pytools.traces`` command line.
"""
