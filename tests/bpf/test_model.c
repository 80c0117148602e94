// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The accounting model's arithmetic, compiled on the host from the headers the BPF programs
 * include (bpf/model_pure.bpf.h, bpf/model_scope.bpf.h) and checked against values worked out
 * by hand: slot arithmetic, maxima raised from racing threads, steal clipping, the RSS cache
 * fold and the scope lists. Each test fails on a deliberate break of its helper (see the
 * commit that added them). No BPF, no root.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "host_model.h"

/* ---- the host's units map, for the scope lists' unit_get -------------------------------- */

/* Slots as the units map keeps them: an id is open while its slot holds it. */
static struct um_unit host_units[UM_UNIT_SLOTS];
static __u64 scope_overflows;

/* unit_get of model.bpf.h, on host_units instead of the map. */
static struct um_unit *unit_get(__u64 id)
{
	struct um_unit *unit = &host_units[unit_slot(id)];

	return id && unit->id == id ? unit : NULL;
}

#include "model_scope.bpf.h"

static void unit_opens(__u64 id)
{
	host_units[unit_slot(id)].id = id;
}

static void unit_closes(__u64 id)
{
	host_units[unit_slot(id)].id = 0;
}

/* ---- slots --------------------------------------------------------------------------------- */

Test(bpf_model, unit_id_and_slot_round_trip)
{
	const __u64 seqs[] = { 1, 2, UM_UNIT_SLOTS - 1, UM_UNIT_SLOTS, 12345, 1ULL << 40,
			       UINT64_MAX / UM_UNIT_SLOTS - 1 };
	const __u32 slots[] = { 0, 1, 77, UM_UNIT_SLOTS - 1 };

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		for (size_t j = 0; j < sizeof(slots) / sizeof(slots[0]); j++) {
			__u64 id = unit_id(seqs[i], slots[j]);

			cr_assert_eq(unit_slot(id), slots[j], "slot of unit_id(%llu, %u): %u",
				     (unsigned long long)seqs[i], slots[j], unit_slot(id));
			cr_assert_eq(id / UM_UNIT_SLOTS, seqs[i], "sequence of unit_id(%llu, %u)",
				     (unsigned long long)seqs[i], slots[j]);
			/* ids of consecutive sequence numbers in one slot never meet */
			cr_assert_neq(id, unit_id(seqs[i] + 1, slots[j]));
			cr_assert_neq(id, 0, "an id is never 0 (a free slot)");
		}
}

/* The search for a free slot starts at the sequence number's own slot and wraps round the map. */
Test(bpf_model, unit_slot_wraps)
{
	static bool seen[UM_UNIT_SLOTS];
	const __u64 seq = 5 * UM_UNIT_SLOTS - 2;

	cr_assert_eq(unit_slot(seq), UM_UNIT_SLOTS - 2);
	cr_assert_eq(unit_slot(seq + 1), UM_UNIT_SLOTS - 1);
	cr_assert_eq(unit_slot(seq + 2), 0, "past the last slot, the first");
	cr_assert_eq(unit_slot(seq + 3), 1);
	cr_assert_eq(unit_slot(UINT64_MAX), UM_UNIT_SLOTS - 1);
	/* a whole search visits every slot once */
	for (__u64 i = 0; i < UM_UNIT_SLOTS; i++) {
		__u32 slot = unit_slot(seq + i);

		cr_assert_lt(slot, UM_UNIT_SLOTS);
		cr_assert_not(seen[slot], "slot %u visited twice in one search", slot);
		seen[slot] = true;
	}
}

/* ---- raise_to, peak_raise ------------------------------------------------------------------ */

Test(bpf_model, raise_to_only_raises)
{
	__u64 max = 0;

	raise_to(&max, 10);
	cr_assert_eq(max, 10);
	raise_to(&max, 3);
	cr_assert_eq(max, 10, "a lower value lowered the max to %llu", (unsigned long long)max);
	raise_to(&max, 10);
	cr_assert_eq(max, 10);
	raise_to(&max, UINT64_MAX);
	cr_assert_eq(max, UINT64_MAX);
}

#define MAX_RACERS 4
#define ROUNDS 20000
#define RAISES 64 /* per racer and round: the racers start a round together and overlap in it */

struct race {
	unsigned int racers;
	unsigned int round;    /* the round under way, spun on: the racers start it together */
	unsigned int finished; /* racers done, over all rounds */
	__u64 max;             /* the shared maximum, reset each round */
	__u64 truth[MAX_RACERS]; /* each racer's highest value this round */
	unsigned int seed[MAX_RACERS];
	unsigned int lost, first_lost; /* rounds whose max was not the highest value */
};

static struct race race;

/* The last racer to finish a round checks it and starts the next: no thread waits on another's
 * wake-up, so the racers overlap on every round. */
static void round_end(unsigned int round)
{
	__u64 truth = 0;

	for (unsigned int i = 0; i < race.racers; i++)
		if (race.truth[i] > truth)
			truth = race.truth[i];
	if (race.max != truth && race.lost++ == 0)
		race.first_lost = round;
	race.max = 0;
	__atomic_store_n(&race.round, round + 1, __ATOMIC_RELEASE);
}

static void *racer(void *arg)
{
	unsigned int me = (unsigned int)(intptr_t)arg;

	for (unsigned int round = 1; round <= ROUNDS; round++) {
		__u64 mine = 0;

		while (__atomic_load_n(&race.round, __ATOMIC_ACQUIRE) != round)
			spin_hint();
		/* rising by random steps: every racer stores often, so their stores race */
		for (__u64 i = 0, v = 0; i < RAISES; i++) {
			v += 1 + rand_r(&race.seed[me]) % 1024;
			if (v > mine)
				mine = v;
			raise_to(&race.max, v);
		}
		race.truth[me] = mine;
		if (__atomic_add_fetch(&race.finished, 1, __ATOMIC_ACQ_REL) == round * race.racers)
			round_end(round);
	}
	return NULL;
}

/*
 * CPUs raise one peak at once (a unit's RSS from its threads' faults). Threads, one a CPU,
 * raise one max with values rising by random steps, round after round: at the end of each it
 * is the highest of all values, not the last one stored. A plain compare-and-store loses it in
 * some rounds.
 */
Test(bpf_model, raise_to_keeps_the_max_of_racing_threads, .timeout = 120)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[MAX_RACERS];

	/* a racer spinning for its round on a CPU another racer needs slows both */
	race.racers = cpus < 2 ? 2 : cpus > MAX_RACERS ? MAX_RACERS : (unsigned int)cpus;
	race.round = 1;
	for (unsigned int i = 0; i < race.racers; i++) {
		race.seed[i] = 0x5eed + i;
		cr_assert_eq(pthread_create(&threads[i], NULL, racer, (void *)(intptr_t)i), 0);
	}
	for (unsigned int i = 0; i < race.racers; i++)
		pthread_join(threads[i], NULL);
	cr_assert_eq(race.lost, 0, "%u of %d rounds lost the max (the first: round %u)", race.lost,
		     ROUNDS, race.first_lost);
}

/* The peak of a signed sum (a unit's RSS may go below its start): a sum at or below 0 raises
 * nothing, not a huge unsigned value. */
Test(bpf_model, peak_raise_of_a_signed_sum)
{
	__u64 peak = 0;

	peak_raise(&peak, -1);
	cr_assert_eq(peak, 0, "-1 raised the peak to %llu", (unsigned long long)peak);
	peak_raise(&peak, INT64_MIN);
	cr_assert_eq(peak, 0);
	peak_raise(&peak, 0);
	cr_assert_eq(peak, 0);
	peak_raise(&peak, 4096);
	cr_assert_eq(peak, 4096);
	peak_raise(&peak, -8192);
	cr_assert_eq(peak, 4096, "a negative sum lowered or raised the peak: %llu",
		     (unsigned long long)peak);
	peak_raise(&peak, INT64_MAX);
	cr_assert_eq(peak, (__u64)INT64_MAX);
}

/* ---- on_cpu_span --------------------------------------------------------------------------- */

/* A span less the steal between its ends, never below 0, and no steal when the two readings
 * went backwards (another CPU's counter, as at a unit's start on one CPU and end on another). */
Test(bpf_model, on_cpu_span_clips_steal)
{
	cr_assert_eq(on_cpu_span(1000, 0, 0), 1000, "no steal: the whole span");
	cr_assert_eq(on_cpu_span(1000, 500, 800), 700, "300 stolen of 1000");
	cr_assert_eq(on_cpu_span(1000, 500, 1500), 0, "all of it stolen");
	cr_assert_eq(on_cpu_span(1000, 500, 2500), 0, "more stolen than the span: 0, not a wrap");
	cr_assert_eq(on_cpu_span(1000, 800, 500), 1000, "steal going backwards counts as none");
	cr_assert_eq(on_cpu_span(0, 0, 10), 0, "an empty span");
	cr_assert_eq(on_cpu_span(UINT64_MAX, 1, 2), UINT64_MAX - 1);
}

/* ---- cache_fold ---------------------------------------------------------------------------- */

Test(bpf_model, cache_fold_takes_the_kernel_counts)
{
	__s32 copy[UM_MM_NR_MEMBERS] = { [UM_MM_FILEPAGES] = 10, [UM_MM_ANONPAGES] = 20,
					 [UM_MM_SWAPENTS] = 7, [UM_MM_SHMEMPAGES] = 30 };
	int count[UM_MM_NR_MEMBERS] = { [UM_MM_FILEPAGES] = 12, [UM_MM_ANONPAGES] = 15,
					[UM_MM_SWAPENTS] = 99, [UM_MM_SHMEMPAGES] = 31 };

	/* no member being folded (-1): +2 file, -5 anon, +1 shmem; swap is not RSS */
	cr_assert_eq(cache_fold(copy, count, -1), -2);
	cr_assert_eq(copy[UM_MM_FILEPAGES], 12);
	cr_assert_eq(copy[UM_MM_ANONPAGES], 15);
	cr_assert_eq(copy[UM_MM_SHMEMPAGES], 31);
	cr_assert_eq(copy[UM_MM_SWAPENTS], 7, "the swap member was touched");
	/* the same counts again: nothing changed */
	cr_assert_eq(cache_fold(copy, count, -1), 0);
}

/* The member the kernel folds into the mm at this event is already in its counter: taken as 0,
 * so its cached pages leave the thread's copy (a negative change) and are not counted twice. */
Test(bpf_model, cache_fold_zeroes_the_member_being_folded)
{
	__s32 copy[UM_MM_NR_MEMBERS] = { [UM_MM_FILEPAGES] = 4, [UM_MM_ANONPAGES] = 64,
					 [UM_MM_SHMEMPAGES] = 2 };
	int count[UM_MM_NR_MEMBERS] = { [UM_MM_FILEPAGES] = 4, [UM_MM_ANONPAGES] = 64,
					[UM_MM_SHMEMPAGES] = 2 };

	cr_assert_eq(cache_fold(copy, count, UM_MM_ANONPAGES), -64);
	cr_assert_eq(copy[UM_MM_ANONPAGES], 0);
	cr_assert_eq(copy[UM_MM_FILEPAGES], 4);
	count[UM_MM_FILEPAGES] = -3; /* a cache may hold a negative count (pages freed) */
	/* file -7, anon back from 0 (+64), shmem taken as 0 (-2) */
	cr_assert_eq(cache_fold(copy, count, UM_MM_SHMEMPAGES), -7 + 64 - 2);
	cr_assert_eq(copy[UM_MM_FILEPAGES], -3);
	cr_assert_eq(copy[UM_MM_ANONPAGES], 64);
	cr_assert_eq(copy[UM_MM_SHMEMPAGES], 0);
	/* file taken as 0 (+3), shmem back from 0 (+2) */
	cr_assert_eq(cache_fold(copy, count, UM_MM_FILEPAGES), 3 + 2);
}

/* ---- scope lists ---------------------------------------------------------------------------- */

static void list_is(const __u64 *list, __u64 first, __u64 second)
{
	cr_assert(list[0] == first && list[1] == second, "list {%llu, %llu}, expected {%llu, %llu}",
		  (unsigned long long)list[0], (unsigned long long)list[1],
		  (unsigned long long)first, (unsigned long long)second);
}

Test(bpf_model, units_remove_keeps_the_order)
{
	__u64 list[UM_SCOPE_DEPTH] = { 8, 5 };

	units_remove(list, 99);
	list_is(list, 8, 5);
	units_remove(list, 8);
	list_is(list, 5, 0);
	units_remove(list, 5);
	list_is(list, 0, 0);
	list[0] = 8;
	list[1] = 5;
	units_remove(list, 5);
	list_is(list, 8, 0);
}

Test(bpf_model, units_push_prunes_closed_units_and_counts_overflow)
{
	__u64 a = unit_id(1, 1), b = unit_id(2, 2), c = unit_id(3, 3), d = unit_id(4, 3);
	__u64 list[UM_SCOPE_DEPTH] = { 0 };

	unit_opens(a);
	units_push(list, a);
	list_is(list, a, 0);
	unit_opens(b);
	units_push(list, b);
	list_is(list, b, a);
	cr_assert_eq(scope_overflows, 0);
	/* a third open unit: the oldest falls off, counted */
	unit_opens(c);
	units_push(list, c);
	list_is(list, c, b);
	cr_assert_eq(scope_overflows, 1, "a full list of open units did not count an overflow");
	/* b closed meanwhile: dropped before the push, no overflow */
	unit_closes(b);
	unit_closes(c);
	/* d reuses c's slot: c's id there is stale even though its slot is busy */
	unit_opens(d);
	units_push(list, d);
	list_is(list, d, 0);
	cr_assert_eq(scope_overflows, 1, "closed units counted as an overflow");
	/* the newest closed, the older still open: the older moves up */
	unit_opens(a);
	units_push(list, a);
	list_is(list, a, d);
	unit_closes(a);
	units_prune(list);
	list_is(list, d, 0);
	unit_closes(d);
	units_prune(list);
	list_is(list, 0, 0);
	cr_assert_eq(scope_overflows, 1);
}
