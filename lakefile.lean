import Lake
open Lake DSL

/-! Lake configuration for proof engineers with elan (`lake build`). CI here has no lake;
`pytools build` compiles the same modules in the same order (see README).

Every library file is a `module` (the module system). Since Lean v4.27.0 that needs no option:
`experimental.module` became a no-op (leanprover/lean4#11637), so the pinned v4.28.0 needs
nothing here, and the registry build compiles the same files without it. -/

package proofs

/- The generated data modules (`Proofs/Ceiling/MooncakeTrace.lean`, `Proofs/Kernel/Table.lean`,
...) check big computations with `decide +kernel`, which recurses deeply on Lean's threads.
`--tstack` (in KiB) gives those threads 512 MiB, the stack CI's registry Lean runs with; the
measured need is far smaller (docs/toolchain.md, "The elan world's thread stack"). -/
@[default_target]
lean_lib Proofs where
  moreLeanArgs := #["--tstack=524288"]
