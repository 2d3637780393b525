"""The demand-fetch hit ceiling (``Proofs/Ceiling/``), measured on traces read by
:mod:`pytools.traces`.

:mod:`.sweep` writes the tables and plots (:mod:`.plot`, drawn in :mod:`.plot_worker`);
:mod:`.bypass_table` is the certificate's table of Belady with and without bypass;
:mod:`.scale` goes past one machine (DuckDB, Dask, SHARDS sampling); :mod:`.lean_instance`
generates the kernel-checked Lean instance; :mod:`.result` is the published result;
:mod:`.cli` the ``pytools ceiling`` command line.
"""
