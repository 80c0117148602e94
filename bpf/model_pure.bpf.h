/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The accounting model's arithmetic: on values and lists only, no map, no helper, no kernel
 * type. It needs unitmeter.h's types, __always_inline and um_cas (compat.bpf.h in BPF), so a
 * host compiler takes it too: tests/bpf/host_model.h supplies those and the white-box tests
 * (tests/bpf/) run it. Included by model.bpf.h.
 */
#ifndef UNITMETER_MODEL_PURE_BPF_H
#define UNITMETER_MODEL_PURE_BPF_H

#include "unitmeter.h"

#ifndef um_cas
#error "model_pure.bpf.h needs um_cas: include compat.bpf.h (BPF) or tests/bpf/host_model.h"
#endif

/* --- arithmetic ---------------------------------------------------------------------------- */

/*
 * Raise a maximum shared by all CPUs. A plain compare-and-store can lose the higher of two racing
 * values; the CAS retries only while another CPU keeps raising it. Three tries lost the max in 1
 * of 20,000 rounds of two CPUs raising it without pause (tests/bpf, raise_to_keeps_the_max_of_
 * racing_threads); each failed try means another CPU did raise it, so 16 cover any real burst.
 */
#define UM_RAISE_TRIES 16

static __always_inline void raise_to(__u64 *max, __u64 value)
{
	__u64 seen = *max;

	for (int i = 0; i < UM_RAISE_TRIES && value > seen; i++) {
		__u64 prev = um_cas(max, seen, value);

		if (prev == seen)
			break;
		seen = prev;
	}
}

/* The same for a peak of a signed sum: a sum at or below zero raises nothing. */
static __always_inline void peak_raise(__u64 *peak, __s64 value)
{
	if (value > 0)
		raise_to(peak, (__u64)value);
}

/* A wall-clock span on one CPU, less the steal measured on that CPU between its ends. */
static __always_inline __u64 on_cpu_span(__u64 wall_ns, __u64 steal_start, __u64 steal_end)
{
	__u64 stolen = steal_end > steal_start ? steal_end - steal_start : 0;

	return stolen < wall_ns ? wall_ns - stolen : 0;
}

/*
 * A unit's id is its sequence number times UM_UNIT_SLOTS plus its slot (unitmeter.h); the slot
 * of an id, or of a sequence number (where its search for a free slot begins).
 */
static __always_inline __u32 unit_slot(__u64 id_or_seq)
{
	return (__u32)(id_or_seq & (UM_UNIT_SLOTS - 1));
}

static __always_inline __u64 unit_id(__u64 seq, __u32 slot)
{
	return seq * UM_UNIT_SLOTS + slot;
}

/*
 * A thread's RSS cache (rss_cache.bpf.h) folded into its copy: the copy takes the kernel's
 * counts, except `folding`, the member the kernel is folding into the mm at this very event
 * (its new counter value already holds it, and the cache is zeroed right after): taken as 0.
 * Returns the change in pages.
 */
static __always_inline __s64 cache_fold(__s32 copy[UM_MM_NR_MEMBERS],
					const int count[UM_MM_NR_MEMBERS], int folding)
{
	__s32 file = folding == UM_MM_FILEPAGES ? 0 : count[UM_MM_FILEPAGES];
	__s32 anon = folding == UM_MM_ANONPAGES ? 0 : count[UM_MM_ANONPAGES];
	__s32 shmem = folding == UM_MM_SHMEMPAGES ? 0 : count[UM_MM_SHMEMPAGES];
	__s64 pages = (__s64)(file - copy[UM_MM_FILEPAGES]) + (anon - copy[UM_MM_ANONPAGES]) +
		      (shmem - copy[UM_MM_SHMEMPAGES]);

	copy[UM_MM_FILEPAGES] = file;
	copy[UM_MM_ANONPAGES] = anon;
	copy[UM_MM_SHMEMPAGES] = shmem;
	return pages;
}

/* A scope list (UM_SCOPE_DEPTH ids, newest first) without this unit. */
static __always_inline void units_remove(__u64 *list, __u64 id)
{
	if (list[0] == id) {
		list[0] = list[1];
		list[1] = 0;
	} else if (list[1] == id) {
		list[1] = 0;
	}
}

#endif /* UNITMETER_MODEL_PURE_BPF_H */
