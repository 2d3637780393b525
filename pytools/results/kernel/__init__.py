"""The single-owner state-movement kernel (``Proofs/Kernel/``): its independent reference.

:mod:`.model` decides every request in plain Python; :mod:`.table` enumerates a finite
domain with it and writes the Lean agreement table; :mod:`.workflows` runs the named
workflow bench; :mod:`.result` is the published result; :mod:`.cli` the command line.
"""
