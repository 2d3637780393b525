"""Pooled KV placement (``Proofs/Placement/``): the committed instance and its solver.

:mod:`.instance` generates, writes and reads serving instances; :mod:`.solver` is the CP-SAT
model, an independent schedule replay and a concrete pooled policy; :mod:`.sweep` runs the
host-count sweep; :mod:`.routing` (with :mod:`.routing_report`) replays the shared trace under
operators' routings; :mod:`.paging` is the interval model of one cache, :mod:`.windows` solves
it on windows of the trace into a committed record and :mod:`.windows_record` re-checks that
record; :mod:`.result` is the published result; :mod:`.cli` the command line.
"""
