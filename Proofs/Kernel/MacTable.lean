module

public import Proofs.Kernel.MacCheck

-- GENERATED FILE, do not edit. Regenerate with
--   pytools regenerate single-owner-kernel
-- (rows and bit strings run past 100 columns)

/-!
# Single-owner state movement: the tagged kernel's certified finite check

The domain: 2 holders, 1 block, epochs 0..1, generations 0..2, 3 tokens per block,
epoch and generation (smaller than `Proofs.Kernel.Table`'s, to fit the CI budget).

* **The states and the ownership kernel**, as in `Proofs.Kernel.Table`: the Python reference
  found 36 reachable kernel states; each has a row with the reference's answer to all
  1,845 requests of the alphabet (66,420 cases) and the whole outcome of each of its candidates
  (576 cases, 115 accepted); `table_passes` runs `checkTable`.
* **The tag layer**: every request of the alphabet is presented with each of its tags
  (`tagsFor`: the token's tag for every holder, the right one and the other holder's, and 0,
  issued to nobody): 5,517 tagged cases, 1,233 passing the reference's tag check;
  `tag_table_passes` runs `tagTableOk` against the reference's verdict on every one.

The MAC is the toy `toyMac` (an injective packing, not a cryptographic MAC): the check checks
the variant kernel's logic under a MAC, not the MAC, whose unforgeability is the assumption
`Unforged`. So (`mac_reachable_agrees_reference`): in every state a run of the variant system
reaches, the variant kernel `mstep` decides every tagged case as the reference
(`pytools.results.kernel.mac`) does: refused at the tag check (`unknownPresenter`, nothing
changed) where the reference's tag check fails, otherwise as `step`, which there gives the
reference's answer to every request of the alphabet.
-/

@[expose] public section

-- One chunk's kernel check at a time bounds the memory by the largest chunk.
set_option Elab.async false

namespace KVCache.Kernel.MacTable

/-- The domain: 2 holders, 1 block, epochs 0..1, generations 0..2, 3 tokens
per block, epoch and generation. -/
def cfg : Config := ⟨2, 1, 1, 2, 3⟩

/-- The number of state codes of the domain. -/
def codes : Nat := 168

/-- The listed states: bit `c` set for the code `c` of each of the 36 reachable states. -/
def listed : Nat := 0x86621c086621c00000040866218086621800000040

/-- The reference's digit strings of token groups (`Row.groups` indexes them). -/
def dict : List Nat := [
  0x1111000001111111111000001111111111000001111111111,
  0x2222000002222222222000002222222222000002222222222,
  0x3333000003333333333000003333333333000003333333333,
  0xbbbb000004444444444000004444444444000004444444444,
  0xbbbb000006666666666000006666666666000006666666666,
  0xbbbb00000777777777700000ddddd7777700000777778f9ff,
  0xbbbb0000077777777770000089fff777770000077777ddddd,
  0xbbbb000005555555555000005555555555000005555555555,
  0xfffe000005555555555000005555555555000005555555555,
  0xfeff000005555555555000005555555555000005555555555,
  0xbbbb00000777777777700000ddddd7777700000777778a9ff,
  0xbbbb0000077777777770000089aff777770000077777ddddd
]

/-- The reference's rows for the codes 0..133. -/
def rows_0 : List Row := [
  ⟨6, 0x2108421084221084210c63, 0x14f001f1f, [0x5a0000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x23000000000000001a, 0x2400000000000000ac], 0, 0⟩,
  ⟨35, 0x2108421084221088428842, 0x1ff001c1c, [0x770000000000000062, 0x230000000000000001, 0x290000000000000001, 0, 0, 0, 0x2d0000002000000023, 0, 0, 0, 0, 0, 0, 0x23000000000000001a, 0, 0], 6, 14⟩,
  ⟨36, 0x2108421084221088430842, 0x1ff001c1c, [0x7800000000000000f4, 0, 0, 0, 0, 0, 0, 0x240000000000000001, 0x290000000000000001, 0, 0, 0x2e0000002200000021, 0, 0x2400000000000000ac, 0, 0], 6, 15⟩,
  ⟨41, 0x2108421084221086318842, 0x14f001f1f, [0x760000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f0000000000000032, 0x4000000000000000c4], 35, 2⟩,
  ⟨45, 0x210842108422108e838842, 0x1f5001c1c, [0, 0, 0, 0, 0x310000000000000026, 0, 0, 0, 0, 0x3200000000000000b8, 0x310000000000000026, 0, 0, 0x2d0000002000000023, 0, 0], 35, 6⟩,
  ⟨46, 0x210842108422108e938842, 0x1f5001c1c, [0, 0, 0, 0x310000000000000026, 0x3200000000000000b8, 0, 0, 0, 0, 0, 0x3200000000000000b8, 0, 0, 0x2e0000002200000021, 0, 0], 36, 11⟩,
  ⟨49, 0x2108421084221094420842, 0x1ff001c1c, [0x770000000000000062, 0x310000000000000001, 0x370000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x310000000000000026, 0, 0], 45, 4⟩,
  ⟨50, 0x2108421084221096420842, 0x1ff001c1c, [0x7800000000000000f4, 0, 0, 0, 0, 0, 0, 0x320000000000000001, 0x370000000000000001, 0, 0, 0, 0, 0x3200000000000000b8, 0, 0], 45, 9⟩,
  ⟨55, 0x2108421084221086318842, 0x14f001f1f, [0x760000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f0000000000000032, 0x4000000000000000c4], 49, 2⟩,
  ⟨63, 0x2108421084242144210842, 0x1ff001c1c, [0x93000000000000007a, 0x3f0000000000000001, 0x450000000000000001, 0, 0, 0, 0x49000000380000003b, 0, 0, 0, 0, 0, 0, 0x3f0000000000000032, 0, 0], 41, 14⟩,
  ⟨64, 0x2108421084242184210842, 0x1ff001c1c, [0x94000000000000010c, 0, 0, 0, 0, 0, 0, 0x400000000000000001, 0x450000000000000001, 0, 0, 0x4a0000003a00000039, 0, 0x4000000000000000c4, 0, 0], 41, 15⟩,
  ⟨69, 0x21084210842318c4210842, 0x14f001a1a, [0x920000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 63, 2⟩,
  ⟨73, 0x21084210842741c4210842, 0x1f5001c1c, [0, 0, 0, 0, 0x4d000000000000003e, 0, 0, 0, 0, 0x4e00000000000000d0, 0x4d000000000000003e, 0, 0, 0x49000000380000003b, 0, 0], 63, 6⟩,
  ⟨74, 0x21084210842749c4210842, 0x1f5001c1c, [0, 0, 0, 0x4d000000000000003e, 0x4e00000000000000d0, 0, 0, 0, 0, 0, 0x4e00000000000000d0, 0, 0, 0x4a0000003a00000039, 0, 0], 64, 11⟩,
  ⟨77, 0x21084210842a2104210842, 0x1ff001c1c, [0x93000000000000007a, 0x4d0000000000000001, 0x530000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x4d000000000000003e, 0, 0], 73, 4⟩,
  ⟨78, 0x21084210842b2104210842, 0x1ff001c1c, [0x94000000000000010c, 0, 0, 0, 0, 0, 0, 0x4e0000000000000001, 0x530000000000000001, 0, 0, 0, 0, 0x4e00000000000000d0, 0, 0], 73, 9⟩,
  ⟨83, 0x21084210842318c4210842, 0x14f001a1a, [0x920000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 77, 2⟩,
  ⟨90, 0x421084218c610842108421, 0x14a001f1f, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x770000000000000062, 0x7800000000000000f4], 6, 0⟩,
  ⟨118, 0x4210c63108410842108421, 0x14a001f1f, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x93000000000000007a, 0x94000000000000010c], 41, 0⟩,
  ⟨119, 0x4211085108410842108421, 0x1fa001c1c, [0, 0x770000000000000001, 0x7d0000000000000001, 0, 0, 0, 0x81000000680000006b, 0, 0, 0, 0, 0, 0, 0x770000000000000062, 0, 0], 90, 14⟩,
  ⟨120, 0x4211086108410842108421, 0x1fa001c1c, [0, 0, 0, 0, 0, 0, 0, 0x780000000000000001, 0x7d0000000000000001, 0, 0, 0x820000006a00000069, 0, 0x7800000000000000f4, 0, 0], 90, 15⟩,
  ⟨125, 0x4210c63108410842108421, 0x14a001f1f, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x93000000000000007a, 0x94000000000000010c], 119, 2⟩,
  ⟨129, 0x4211d07108410842108421, 0x1f5001c1c, [0, 0, 0, 0, 0x85000000000000006e, 0, 0, 0, 0, 0x860000000000000100, 0x85000000000000006e, 0, 0, 0x81000000680000006b, 0, 0], 119, 6⟩,
  ⟨130, 0x4211d27108410842108421, 0x1f5001c1c, [0, 0, 0, 0x85000000000000006e, 0x860000000000000100, 0, 0, 0, 0, 0, 0x860000000000000100, 0, 0, 0x820000006a00000069, 0, 0], 120, 11⟩,
  ⟨133, 0x4212884108410842108421, 0x1fa001c1c, [0, 0x850000000000000001, 0x8b0000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85000000000000006e, 0, 0], 129, 4⟩
]

/-- The kernel checks the rows of the codes 0..133. -/
theorem chunk_0 : checkCodes cfg listed dict 134 0 rows_0 = true := by
  decide +kernel

/-- The reference's rows for the codes 134..167. -/
def rows_1 : List Row := [
  ⟨134, 0x4212c84108410842108421, 0x1fa001c1c, [0, 0, 0, 0, 0, 0, 0, 0x860000000000000001, 0x8b0000000000000001, 0, 0, 0, 0, 0x860000000000000100, 0, 0], 129, 9⟩,
  ⟨139, 0x4210c63108410842108421, 0x14a001f1f, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x93000000000000007a, 0x94000000000000010c], 133, 2⟩,
  ⟨146, 0x6318842108410842108421, 0x14a001a1a, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 69, 0⟩,
  ⟨147, 0x8428842108410842108421, 0x1fa001c1c, [0, 0x930000000000000001, 0x990000000000000001, 0, 0, 0, 0x9d0000008000000083, 0, 0, 0, 0, 0, 0, 0x93000000000000007a, 0, 0], 125, 14⟩,
  ⟨148, 0x8430842108410842108421, 0x1fa001c1c, [0, 0, 0, 0, 0, 0, 0, 0x940000000000000001, 0x990000000000000001, 0, 0, 0x9e0000008200000081, 0, 0x94000000000000010c, 0, 0], 125, 15⟩,
  ⟨153, 0x6318842108410842108421, 0x14a001a1a, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 147, 2⟩,
  ⟨157, 0xe838842108410842108421, 0x1f5001c1c, [0, 0, 0, 0, 0xa10000000000000086, 0, 0, 0, 0, 0xa20000000000000118, 0xa10000000000000086, 0, 0, 0x9d0000008000000083, 0, 0], 147, 6⟩,
  ⟨158, 0xe938842108410842108421, 0x1f5001c1c, [0, 0, 0, 0xa10000000000000086, 0xa20000000000000118, 0, 0, 0, 0, 0, 0xa20000000000000118, 0, 0, 0x9e0000008200000081, 0, 0], 148, 11⟩,
  ⟨161, 0x14420842108410842108421, 0x1fa001c1c, [0, 0xa10000000000000001, 0xa70000000000000001, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa10000000000000086, 0, 0], 157, 4⟩,
  ⟨162, 0x16420842108410842108421, 0x1fa001c1c, [0, 0, 0, 0, 0, 0, 0, 0xa20000000000000001, 0xa70000000000000001, 0, 0, 0, 0, 0xa20000000000000118, 0, 0], 157, 9⟩,
  ⟨167, 0x6318842108410842108421, 0x14a001a1a, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 161, 2⟩
]

/-- The kernel checks the rows of the codes 134..167. -/
theorem chunk_1 : checkCodes cfg listed dict 34 134 rows_1 = true := by
  decide +kernel

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- The reference's rows, one per listed code, in code order. -/
noncomputable def rows : List Row :=
  rows_0 ++ (rows_1)

/-- **The kernel checks the whole state table** (as `Table.table_passes`, on this domain). -/
theorem table_passes : checkTable cfg listed codes dict rows = true :=
  checkTable_of_parts (by decide +kernel) (by decide +kernel) (by decide +kernel)
    (checkCodes_append 134 34 0 rows_0 (rows_1)
      chunk_0 chunk_1)

/-- The reference's verdicts on a token group's tagged cases, one bit string per distinct
group (bit `i` set: case `i` of the group passes the tag check). -/
def tagDict : List Nat := [
  0x2448000492449240002492249200012491249
]

/-- The reference's verdicts on the tagged cases of the requests after the groups. -/
def tagOthers : Nat := 0x1ff

/-- The dictionary entries of token groups 0..35. -/
def groups_0 : List Nat := [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

/-- The kernel checks the tag verdicts of token groups 0..35. -/
theorem tags_0 :
    checkTagGroups (fun r g => r.tagged toyMac g) cfg tagDict
      (((tokQuads cfg).drop 0).take 36) groups_0 = true := by
  decide +kernel

-- noncomputable: compiling it needs `List.appendTR`, absent from the registry Lean.
/-- The dictionary entries of every token group, in order. -/
noncomputable def tagGroups : List Nat := groups_0

/-- **The kernel checks the tag verdict of every tagged case** against the reference's. -/
theorem tag_table_passes :
    tagTableOk (fun r g => r.tagged toyMac g) cfg tagDict tagGroups tagOthers = true :=
  tagTableOk_of_parts
    (checkTagGroups_whole (n := 36) (by decide +kernel)
      tags_0)
    (by decide +kernel)

/-- **In every state a run of the variant system reaches, the variant kernel under the toy MAC
agrees with the reference on every tagged case**: the state has a row whose answers are the reference's on
every request of the alphabet (and whose candidates' outcomes are the reference's); and every
tagged case is decided by `step` where the reference's tag check passes, and refused at the tag
check otherwise. -/
theorem mac_reachable_agrees_reference {l : List Decision} {S : MSys}
    (hrun : MLRun cfg toyMac (MSys.init cfg) l S) :
    (∃ row ∈ rows, row.code = encKern cfg S.kern ∧ answers cfg S.kern = row.expected cfg dict ∧
      (candidates cfg S.kern).map (outCode cfg S.kern) = row.outs) ∧
      ∀ (i : Nat) (hi : i < (tagCases cfg).length),
        mstep cfg toyMac S.kern (tagCases cfg)[i].1 (tagCases cfg)[i].2 =
          bif (refTags cfg tagDict tagGroups tagOthers)[i]?.getD false then
            step cfg S.kern (tagCases cfg)[i].1
          else refuse S.kern .unknownPresenter :=
  ⟨reachable_agrees table_passes hrun.kreach, mstep_of_tagTable tag_table_passes S.kern⟩

end KVCache.Kernel.MacTable

end
