"""The demand-fetch hit ceiling (``Proofs/Ceiling/``) and the traces it is measured on.

:mod:`.trace` reads (JSONL or gzip, whole or a window of lines) and counts a trace;
:mod:`.curve` computes exact LRU and OPT hits at every capacity in one pass; :mod:`.policies`
simulates LRU, FIFO and Belady one capacity at a time (the independent cross-check);
:mod:`.sweep` writes the tables and plots; :mod:`.output` writes outputs all or nothing;
:mod:`.scale` goes past one machine (DuckDB, Dask, SHARDS sampling); :mod:`.synth` makes
Mooncake-shaped test traces; :mod:`.lean_instance` generates the kernel-checked Lean instance;
:mod:`.result` is the published result; :mod:`.cli` (with :mod:`.progress`) the
``pytools ceiling`` command line.
"""
