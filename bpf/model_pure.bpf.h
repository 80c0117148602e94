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

/* --- the running slice's handover ---------------------------------------------------------- */

/*
 * A running slice of a thread belongs, for each unit whose scope holds the thread, to exactly
 * one of two programs: the thread's switch-out (sched_switch, on the thread's CPU), which adds
 * the slice's part inside the unit, or the unit's close (another CPU), which counts the part
 * up to its own instant. Which one is decided on one word of the thread, um_thread.slice:
 *
 *   bits 0-1  state: OFF (off CPU), ARRIVING (its switch-in is under way), RUNNING, LEAVING
 *             (its switch-out has taken the slice and is adding it)
 *   bits 2-14, 15-27  claims: slot + 1 of up to two units whose close took the slice so far
 *   bits 32-63  the slice's number (um_thread.slice_seq), so a word is never seen twice
 *
 * The switch-out exchanges the word for LEAVING: what it gets back says which units' closes
 * took the slice (it adds nothing to those). A close compare-and-swaps a RUNNING word for the
 * same word with its claim: it counts the part only if the word was unchanged, that is, before
 * the exchange. Either the exchange or the swap comes first; never both, never neither. The
 * close waits out ARRIVING and LEAVING, which last a few instructions of another CPU's
 * sched_switch program with interrupts off: LEAVING ends (OFF) only after that program's adds,
 * so what the close reads of the unit afterwards holds them.
 */
#define UM_SLICE_OFF 0ULL
#define UM_SLICE_ARRIVING 1ULL
#define UM_SLICE_RUNNING 2ULL
#define UM_SLICE_LEAVING 3ULL
#define UM_SLICE_STATE(w) ((w) & 3ULL)
#define UM_SLICE_CLAIM_BITS 13
#define UM_SLICE_CLAIM_MASK ((1ULL << UM_SLICE_CLAIM_BITS) - 1)
#define UM_SLICE_CLAIM_SHIFT(i) (2 + (i) * UM_SLICE_CLAIM_BITS)
_Static_assert(UM_UNIT_SLOTS + 1 <= UM_SLICE_CLAIM_MASK, "a unit slot + 1 fits a claim");
_Static_assert(UM_SLICE_CLAIM_SHIFT(2) <= 32, "two claims below the slice's number");

/* The word of a slice just switched in, claimed by no close. */
static __always_inline __u64 slice_running(__u32 seq)
{
	return (__u64)seq << 32 | UM_SLICE_RUNNING;
}

static __always_inline __u32 slice_claim(__u64 word, int i)
{
	return (word >> UM_SLICE_CLAIM_SHIFT(i)) & UM_SLICE_CLAIM_MASK;
}

/* Whether the close of the unit in this slot has taken the slice (word: RUNNING or taken). */
static __always_inline bool slice_claimed_by(__u64 word, __u32 slot)
{
	return slice_claim(word, 0) == slot + 1 || slice_claim(word, 1) == slot + 1;
}

/* What a close does with a scope thread's word. */
enum um_slice_step {
	UM_SLICE_STEP_CLAIM, /* compare-and-swap `word` for *next; on success count the part */
	UM_SLICE_STEP_MINE,  /* this close took it already (the thread seen on two CPUs) */
	UM_SLICE_STEP_WAIT,  /* a switch-in or switch-out is under way: read the word again */
	UM_SLICE_STEP_OFF,   /* off CPU: its switch-out added what was the unit's */
	UM_SLICE_STEP_FULL,  /* two other closes hold the claims (cannot be: two units a scope) */
};

static __always_inline enum um_slice_step slice_close_step(__u64 word, __u32 slot, __u64 *next)
{
	switch (UM_SLICE_STATE(word)) {
	case UM_SLICE_OFF:
		return UM_SLICE_STEP_OFF;
	case UM_SLICE_RUNNING:
		break;
	default:
		return UM_SLICE_STEP_WAIT;
	}
	if (slice_claimed_by(word, slot))
		return UM_SLICE_STEP_MINE;
	for (int i = 0; i < 2; i++) {
		if (slice_claim(word, i))
			continue;
		*next = word | (__u64)(slot + 1) << UM_SLICE_CLAIM_SHIFT(i);
		return UM_SLICE_STEP_CLAIM;
	}
	return UM_SLICE_STEP_FULL;
}

/* The word without this slot's claim (the close gives it back before its slot is free). */
static __always_inline __u64 slice_unclaimed(__u64 word, __u32 slot)
{
	for (int i = 0; i < 2; i++)
		if (slice_claim(word, i) == slot + 1)
			word &= ~(UM_SLICE_CLAIM_MASK << UM_SLICE_CLAIM_SHIFT(i));
	return word;
}

/*
 * The part of [since, out] inside a unit [start, end] (end 0: still open), as wall time.
 */
static __always_inline __u64 span_inside(__u64 since, __u64 out, __u64 start, __u64 end)
{
	__u64 lo = since > start ? since : start, hi = end && end < out ? end : out;

	return hi > lo ? hi - lo : 0;
}

#endif /* UNITMETER_MODEL_PURE_BPF_H */
