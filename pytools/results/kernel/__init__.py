"""The single-owner state-movement kernel (``Proofs/Kernel/``): its independent reference.

The Lean side: ``Model.lean`` (the kernel's ``step`` over several blocks, kernel-issued
capabilities and tickets with nonces; the system ``Sys``: holders' tokens and a network that
delays, duplicates, reorders and drops; workflow actions ``runActs``; the codes ``encKern``,
``decKern``, ``encOut`` and ``Sys.flat``), ``Invariants.lean`` (kernel theorems for every
configuration: accepted means current, stale tokens refused and nothing changes, escrow
unreadable, commit/abort hand the block over, clocks only move forward, a settled ticket is
refused forever, reallocation kills every older token, progress), ``Custody.lean`` (over every
reachable system state: at most one valid capability per block, only the holder reads, a
pending transfer can always be committed and aborted, an owner can always act),
``Provenance.lean`` (over logged runs: every accepted use comes from the custodian that the run's
history names), ``Mac.lean`` (the same without an authenticated presenter, with tokens tagged by
an unforgeable MAC), ``Once.lean`` (a begun transfer settles exactly once under fair delivery),
``Check.lean`` (the finite-check checker, the alphabet and candidates, and its soundness),
``MacCheck.lean`` (the tagged variant's checkers: the toy MAC, the tagged cases of the alphabet,
the tag check's soundness, the trajectory check), and four generated modules: ``Table.lean``
(the finite check of one domain), ``Workflows.lean`` (the workflow bench;
``set_option Elab.async false``: elaborated in parallel, the registry Lean was killed at
6 GB), ``MacTable.lean`` and ``MacWorkflows.lean`` (the tagged variant's finite check and
bench).

The Python side, written again from the documented rules (it shares no code with the Lean
side; the Lean kernel checks that the two agree):

* :mod:`.model`: the kernel's step function (the rules are in its docstring);
* :mod:`.codes`: the numbers exchanged with Lean (state, token, message and outcome codes),
  a domain's request alphabet and every state's candidate requests;
* :mod:`.system`: holders, network and the workflow actions, and the ``Sys.flat`` layout;
* :mod:`.table`: the reachable states of the finite domain and ``Table.lean``;
* :mod:`.workflows`: the named workflows of ``workflows.json``, played by :mod:`.system`;
* :mod:`.workflows_lean`: ``Workflows.lean``, one ``decide +kernel`` theorem per workflow;
* :mod:`.mac`: the tagged variant's reference (toy MAC, tag check, planted tagged kernels) and
  ``MacTable.lean``; :mod:`.mac_system`: its system (tagged tokens, spoofed presenters,
  rerouted requests); :mod:`.mac_workflows`: its bench (``mac_workflows.json``) and
  ``MacWorkflows.lean``;
* :mod:`.result`: the published result; :mod:`.cli`: ``pytools kernel``.

Planted defects of the bench (a wrong final state, refusal count, verdict digit or outcome
code, a broken chain, a replayed commit claimed accepted, and an honest control) live in
``tests/fixtures/lean/kernel/WorkflowsPlanted.lean``; ``tests/test_kernel_lean.py`` (marked
``lean``) compiles them with the table checker's planted defects (a wrong digit, outcome, code
or witness, a reachable state left out, an unreachable one listed).
"""
