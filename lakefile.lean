import Lake
open Lake DSL

/-! Lake configuration for proof engineers with elan (`lake build`). CI here has no lake;
`python -m pytools build` compiles the same modules in the same order (see README). -/

package proofs

@[default_target]
lean_lib Proofs
