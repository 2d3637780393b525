"""Enumerate and audit every declaration of compiled Lean modules, from their ``.olean`` files.

This is the independent checker CI relies on: it never asks Lean (``#print axioms`` is refused
by the registry WebAssembly build) and never greps sources. It reads the compacted regions with
:mod:`pytools.lean.olean` and walks constant references.

Public API (stable; the certify step calls it):

* :func:`audit_modules` ``(modules, search_path, *, cache_dir=True) -> AuditReport`` — one
  batched pass: enumerate every declaration of ``modules`` and compute, for each, the axioms it
  depends on transitively (through the project modules and into the imported library).
* :func:`enumerate_declarations` — the same, returning only the declarations.
* :class:`Declaration`, :class:`Finding`, :class:`AuditReport` — frozen records.
* :func:`native_axioms` / :func:`compare_with_native` — where a native Lean exists, ask it
  (``#print axioms``) and list disagreements with this reader.
* :func:`classify_auxiliary` — the user-facing / auxiliary rule.
* :func:`statement_sha256`, :func:`pp_expr` — the canonical statement hash and printer.
* CLI: ``python -m pytools audit MODULE... [--search-path P]...`` prints a table and exits
  non-zero (1) on any finding, 2 on unreadable input.

Axiom rules. Allowed: exactly :data:`ALLOWED_AXIOMS`. Every other axiom reached gives a
:class:`Finding` per declaration, with a category:

* ``sorry`` — ``sorryAx`` (an unproved goal);
* ``native-code`` — ``Lean.ofReduceBool``, ``Lean.ofReduceNat``, ``Lean.trustCompiler``
  (decided by running compiled code, i.e. ``native_decide``);
* ``project-axiom`` — an ``axiom`` declared in one of the audited modules;
* ``foreign-axiom`` — any other axiom (declared in an imported library).

The walk mirrors Lean's ``CollectAxioms``: a definition, theorem or opaque contributes the
constants of its type and value, an inductive its type and constructors, a constructor,
recursor or quotient constant its type, an axiom itself.

Trusted core constants. Under the module system the *exported* ``.olean`` level (the only level
the registry build ships for ``Init``/``Std``) weakens a theorem to an ``axiom`` and drops
non-exposed definition bodies. Such a constant is recognised explicitly, never mistaken for an
axiom: the module's ``privateConstKindsExt`` entry records its real kind (theorem, definition,
opaque); a constant stored as an axiom *without* such an entry is a real axiom (in core:
``propext``, ``Quot.sound``, ``Lean.ofReduceBool``, ``Lean.ofReduceNat``,
``Lean.trustCompiler``; ``Classical.choice``, ``sorryAx`` elsewhere). For a body-absent constant
the walk follows its type but cannot follow its proof: it is listed in
:attr:`AuditReport.trusted_core` ("trusted core theorems, bodies absent, axioms not
re-derived"). Consequence, to be stated in certificates: axioms used only *inside* such a
proof are not reported (e.g. a theorem proved with ``Classical.em`` shows no
``Classical.choice``), so the axiom set of a declaration reaching trusted constants
(``Declaration.trusted_deps > 0``) is a lower bound made of the project's own proofs plus
every axiom reachable through bodies that are present. A project module must have its
``.olean.private`` (full bodies); otherwise the audit refuses to run.

Pointer width: the reader handles the 32-bit layout (registry WebAssembly Lean, tested) and the
64-bit layout of native Lean (implemented, tested only on synthetic regions: no native Lean
here).

The package, one job a module: :mod:`.rules` (what is allowed and how a finding is classified),
:mod:`.walk` (the reference walk over the compiled modules), :mod:`.library` (the imported
library's name index), :mod:`.statements` (printing and hashing statements), :mod:`.records`
(the report's records), :mod:`.native` (the ``#print axioms`` cross-check), :mod:`.cli`.
"""

from .library import Library, default_cache_dir, module_file
from .native import compare_with_native, native_axioms, parse_print_axioms
from .records import AuditError, AuditReport, Declaration, Finding
from .rules import ALLOWED_AXIOMS, NATIVE_AXIOMS, SORRY_AXIOMS, categorize, classify_auxiliary
from .statements import INFIX, pp_expr, statement_sha256
from .walk import audit_modules, enumerate_declarations

__all__ = [
    "ALLOWED_AXIOMS", "INFIX", "NATIVE_AXIOMS", "SORRY_AXIOMS", "AuditError", "AuditReport",
    "Declaration", "Finding", "Library", "audit_modules", "categorize", "classify_auxiliary",
    "compare_with_native", "default_cache_dir", "enumerate_declarations", "module_file",
    "native_axioms", "parse_print_axioms", "pp_expr", "statement_sha256",
]
