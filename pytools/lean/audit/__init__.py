"""Enumerate and audit every declaration of compiled Lean modules, from their ``.olean`` files.

This is the independent checker CI relies on: it never asks Lean (``#print axioms`` is refused
by the registry WebAssembly build) and never greps sources (one rule excepted, see below). It
reads the compacted regions with :mod:`pytools.lean.olean`, walks constant references, and
judges what it read with the rules of :mod:`.rules`.

Public API (stable; the certify step calls it), each imported from its module (this package
imports nothing up front, so a module that needs one name of the audit loads only that part):

* :func:`.walk.audit_modules` ``(modules, search_path, *, core_dir, root, sources, ...) ->
  AuditReport`` — one batched pass: enumerate every declaration, compute the axioms each
  depends on transitively, and apply every rule.
* :class:`.records.Declaration`, :class:`.records.Finding`, :class:`.records.AuditReport` —
  frozen records.
* :func:`.native.native_axioms` / :func:`.native.compare_with_native` — where a native Lean
  exists, ask it (``#print axioms``) and list disagreements with this reader;
  :func:`.native.run_leanchecker` — kernel replay of every module.
* :mod:`.reviewed` — the reviewed statements file; :mod:`.certificate` — what certify prints.
* CLI: ``pytools audit MODULE... [--search-path P]... [--core DIR] [--root M]``
  (:mod:`pytools.lean.cli`) prints a table and exits non-zero (1) on any finding, 2 on
  unreadable input.

The trusted part is small and apart: :mod:`.policy` (pinned data: the allowed axioms by
identity, their names stated once in :mod:`pytools.lean.axioms`, the kernel's builtin names,
the trust-relevant extensions, the kernel-disabling options) and :mod:`.rules` (one function
per rule, each docstring naming its planted defect). Everything else reads files into
:class:`.library_facts.LibraryFacts`.

Axioms. Allowed: exactly core's ``propext``, ``Classical.choice``, ``Quot.sound``, by identity
(declaring core module and type hash, read from the verified core library); everything else
reached is a finding (``sorry``, ``native-code``, ``project-axiom``, ``axiom-identity``,
``foreign-axiom``). The walk mirrors Lean's ``CollectAxioms``: a definition, theorem or opaque
contributes the constants of its type and value, an inductive its type and constructors, a
constructor, recursor or quotient constant its type, an axiom itself.

Trusted core constants. Under the module system the *exported* ``.olean`` level (the only level
the registry build ships for ``Init``/``Std``) weakens a theorem to an ``axiom`` and drops
non-exposed definition bodies. Such a constant is recognised explicitly, never mistaken for an
axiom: the module's ``privateConstKindsExt`` entry records its real kind (theorem, definition,
opaque); a constant stored as an axiom *without* such an entry is a real axiom. For a
body-absent constant the walk follows its type but cannot follow its proof: it is listed in
:attr:`AuditReport.trusted_core`. Consequence, stated in certificates: axioms used only
*inside* such a proof are not reported, so the axiom set of a declaration reaching trusted
constants (``Declaration.trusted_deps > 0``) is a lower bound made of the library's own proofs
plus every axiom reachable through bodies that are present. A library module must have its
``.olean.private`` (full bodies); otherwise the audit refuses to run.

Names. Constants are keyed by :class:`pytools.lean.olean.Name` (string and number components,
printed as Lean prints them, ``«»`` where a component needs it): ``A.«b.c»`` and ``A.b.c`` are
two constants, both audited, and hashes (statement, meaning closure) cover the components.
Rules ``name-twin``, ``name-confusable``, ``name-chars`` and ``invisible-char`` report names
and statement texts that could mislead a reader (:mod:`.names`).

Pointer width: the reader handles the 32-bit layout (registry WebAssembly Lean, tested) and the
64-bit layout of native Lean (implemented, tested only on synthetic regions: no native Lean
here).
"""
