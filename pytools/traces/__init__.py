"""The project's trace library: block-reference traces read, counted and replayed.

:mod:`.trace` reads (JSONL or gzip, whole or a window of lines), validates, hashes and counts
a trace (the one reader every result uses); :mod:`.curve` computes exact LRU and OPT hits at
every capacity in one pass; :mod:`.policies` simulates LRU, FIFO and Belady one capacity at a
time (the independent cross-check) and :mod:`.bypass` Belady with bypass; :mod:`.synth`
makes Mooncake-shaped test traces; :mod:`.output` writes a command's outputs all or nothing;
:mod:`.progress` draws progress bars and lines on a terminal. It imports nothing of the results that
use it (``tests/test_layout.py``).
"""
