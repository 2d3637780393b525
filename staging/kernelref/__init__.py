"""The new kernel model's Python reference, staged until the Lean model joins the library
(then it replaces ``pytools/results/kernel/model.py``; see ``staging/README.md``)."""
