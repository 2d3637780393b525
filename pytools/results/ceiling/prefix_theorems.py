"""The Lean theorems on prefix (radix) caches that the ceiling result publishes.

Proofs/Ceiling/Prefix.lean models a cache that serves a request only the leading run of its
cached blocks, kept closed under prefixes, and proves that every such cache (every policy,
bypass included) scores at most the flat optimum with bypass on the same blocks, hence at most
Belady with bypass and the flat ceiling; Proofs/Ceiling/PrefixMooncake.lean states the
Mooncake window, warm-window and whole-trace ceilings for that class, reusing the kernel's
counts; Proofs/Ceiling/PrefixLru*.lean define radix LRU (evict the least recently used leaf)
and prove that its cache is the top of the LRU stack of the tail-first touches at every
capacity, hence flat LRU's over those touches and a stack algorithm whose prefix hits at every
capacity are a count over one list of stack distances (the one-pass curve), with kernel-checked
instances against flat LRU and of an all-or-nothing variant that is no stack algorithm below
the longest request.
"""

from __future__ import annotations

#: Fully qualified Lean theorems on prefix caches, headline first.
PREFIX_THEOREMS: tuple[str, ...] = (
    "KVCache.Ceiling.runHits_le_bopt",
    "KVCache.Ceiling.runHits_le_beladyBypass_bhits",
    "KVCache.Ceiling.runHits_add_distinct_le_length",
    "KVCache.Ceiling.runHits_add_distinctFrom_le",
    "KVCache.Ceiling.mem_of_prefixRun",
    "KVCache.Ceiling.leadRun_eq_countP_of_closed",
    "KVCache.Ceiling.bopt_le_bopt_of_subset",
    "KVCache.Ceiling.Mooncake.window_prefix_hits_le",
    "KVCache.Ceiling.Mooncake.window_prefix_hit_rate_le_ceiling",
    "KVCache.Ceiling.Mooncake.warm_window_prefix_hits_le",
    "KVCache.Ceiling.Mooncake.warm_window_prefix_hit_rate_le_ceiling",
    "KVCache.Ceiling.Mooncake.prefix_hit_rate_le_ceiling",
    "KVCache.Ceiling.runHits_radixLru_eq_tailFirstLru",
    "KVCache.Ceiling.radixLru_mem_iff_tailFirstLru",
    "KVCache.Ceiling.reverse_tailFirst",
    "KVCache.Ceiling.runHits_radixLru_eq_countP",
    "KVCache.Ceiling.runHits_tailFirstLru_eq_countP",
    "KVCache.Ceiling.runHits_stackCaches_eq_countP",
    "KVCache.Ceiling.leadRun_take_eq_countP_runDepths",
    "KVCache.Ceiling.runHits_radixLru_eq_stackCaches_nil",
    "KVCache.Ceiling.runHits_radixLru_eq_stackCaches",
    "KVCache.Ceiling.radixLruStep_mem_iff",
    "KVCache.Ceiling.runHits_stackCaches_le_succ",
    "KVCache.Ceiling.parentsBefore_append",
    "KVCache.Ceiling.evictLeaves_spec",
    "KVCache.Ceiling.radixLru_eq_tailFirstLru_example",
    "KVCache.Ceiling.allOrNothing_not_stack_example",
    "KVCache.Ceiling.allOrNothing_lt_tailFirstLru_example",
)
