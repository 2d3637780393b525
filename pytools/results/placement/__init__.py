"""Pooled KV placement (``Proofs/Placement/``): the committed instance and its solver.

:mod:`.instance` generates, writes and reads serving instances; :mod:`.solver` is the CP-SAT
model, an independent schedule replay and a concrete pooled policy; :mod:`.sweep` runs the
host-count sweep; :mod:`.result` is the published result; :mod:`.cli` the command line.
"""
