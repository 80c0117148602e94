// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The running slice's handover (bpf/model_pure.bpf.h), compiled on the host from the header the
 * BPF programs include: what a close does with each state of a thread's word, two closes'
 * claims and their release, the part of a slice inside a unit, and the decision itself raced
 * between two threads playing the switch-out (exchange) and the close (compare-and-swap) with
 * the builtins the per-CPU build's atomics are. No BPF, no root.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include "host_model.h"

TestSuite(bpf_handover);

Test(bpf_handover, close_step_for_each_state)
{
	__u64 next = 0, running = slice_running(7);

	cr_expect_eq(slice_close_step(UM_SLICE_OFF, 5, &next), UM_SLICE_STEP_OFF);
	cr_expect_eq(slice_close_step(UM_SLICE_ARRIVING, 5, &next), UM_SLICE_STEP_WAIT);
	cr_expect_eq(slice_close_step(UM_SLICE_LEAVING, 5, &next), UM_SLICE_STEP_WAIT);
	cr_assert_eq(slice_close_step(running, 5, &next), UM_SLICE_STEP_CLAIM);
	/* the claim keeps the state and the slice's number, and names the slot */
	cr_expect_eq(UM_SLICE_STATE(next), UM_SLICE_RUNNING);
	cr_expect_eq(next >> 32, 7);
	cr_expect(slice_claimed_by(next, 5));
	cr_expect(!slice_claimed_by(next, 4));
	cr_expect(!slice_claimed_by(running, 5));
	/* the same close finding it again (its thread seen on two CPUs) takes nothing twice */
	cr_expect_eq(slice_close_step(next, 5, &next), UM_SLICE_STEP_MINE);
}

/* Slot 0 and the last slot are claims too (slot + 1 is stored: 0 means none). */
Test(bpf_handover, claims_of_the_first_and_last_slots)
{
	__u64 word = slice_running(1), next = 0;

	cr_assert_eq(slice_close_step(word, 0, &next), UM_SLICE_STEP_CLAIM);
	word = next;
	cr_assert_eq(slice_close_step(word, UM_UNIT_SLOTS - 1, &next), UM_SLICE_STEP_CLAIM);
	word = next;
	cr_expect(slice_claimed_by(word, 0));
	cr_expect(slice_claimed_by(word, UM_UNIT_SLOTS - 1));
	cr_expect_eq(word >> 32, 1, "the claims leave the slice's number alone");
}

/* Two units' closes claim one slice; a third cannot (a process is in two units at most). */
Test(bpf_handover, two_claims_then_full_and_given_back)
{
	__u64 word = slice_running(3), next = 0;

	cr_assert_eq(slice_close_step(word, 10, &next), UM_SLICE_STEP_CLAIM);
	word = next;
	cr_assert_eq(slice_close_step(word, 20, &next), UM_SLICE_STEP_CLAIM);
	word = next;
	cr_expect(slice_claimed_by(word, 10) && slice_claimed_by(word, 20));
	cr_expect_eq(slice_close_step(word, 30, &next), UM_SLICE_STEP_FULL);
	/* the first close gives its claim back: the second's stays, the slot is free again */
	word = slice_unclaimed(word, 10);
	cr_expect(!slice_claimed_by(word, 10));
	cr_expect(slice_claimed_by(word, 20));
	cr_expect_eq(slice_close_step(word, 30, &next), UM_SLICE_STEP_CLAIM);
	word = slice_unclaimed(word, 20);
	cr_expect_eq(word, slice_running(3), "both given back: the word as the switch-in left it");
}

Test(bpf_handover, span_inside_a_unit)
{
	/* inside an open unit (end 0): from the later of switch-in and start to the switch-out */
	cr_expect_eq(span_inside(100, 200, 50, 0), 100);
	cr_expect_eq(span_inside(100, 200, 150, 0), 50);
	/* a closing unit: nothing past its instant */
	cr_expect_eq(span_inside(100, 200, 50, 180), 80);
	/* a slice that began after the close's instant is none of the unit's */
	cr_expect_eq(span_inside(190, 200, 50, 180), 0);
	cr_expect_eq(span_inside(100, 120, 150, 0), 0);
}

/*
 * The decision raced: each round a thread is switched in (RUNNING), then one host thread plays
 * its switch-out (exchange for LEAVING; counts the slice for the unit unless the word it took
 * holds the unit's claim; OFF) while another plays the unit's close (compare-and-swap of the
 * RUNNING word for the claimed one; counts the slice if that succeeded, and waits out LEAVING).
 * Every round exactly one of them counts it, whichever comes first.
 */
#define ROUNDS 200000
#define SLOT 42

static struct {
	__u64 word;
	unsigned int round;   /* the round both players may play */
	unsigned int done;    /* players finished with the round */
	unsigned int counted; /* this round's count of the slice */
	unsigned int wrong;   /* rounds counted other than once */
	unsigned int out_first, close_first;
} game;

static void wait_round(unsigned int round)
{
	while (__atomic_load_n(&game.round, __ATOMIC_ACQUIRE) != round)
		spin_hint();
}

static void finish(unsigned int round)
{
	if (__atomic_add_fetch(&game.done, 1, __ATOMIC_ACQ_REL) != round * 2)
		return;
	if (game.counted != 1)
		game.wrong++;
	game.counted = 0;
	/* the next switch-in */
	__atomic_store_n(&game.word, slice_running(round + 1), __ATOMIC_RELEASE);
	__atomic_store_n(&game.round, round + 1, __ATOMIC_RELEASE);
}

static void *switch_out(void *arg)
{
	(void)arg;
	for (unsigned int round = 1; round <= ROUNDS; round++) {
		__u64 taken;

		wait_round(round);
		/* as thread_switch_out: the exchange first, the adds, then OFF */
		taken = __sync_lock_test_and_set(&game.word, UM_SLICE_LEAVING);
		if (!(UM_SLICE_STATE(taken) == UM_SLICE_RUNNING && slice_claimed_by(taken, SLOT))) {
			__atomic_add_fetch(&game.counted, 1, __ATOMIC_ACQ_REL);
			game.out_first++;
		}
		__atomic_store_n(&game.word, UM_SLICE_OFF, __ATOMIC_RELEASE);
		finish(round);
	}
	return NULL;
}

static void *close_unit(void *arg)
{
	(void)arg;
	for (unsigned int round = 1; round <= ROUNDS; round++) {
		wait_round(round);
		/* as hand_over_try, until the thread is settled */
		for (;;) {
			__u64 word = __atomic_load_n(&game.word, __ATOMIC_ACQUIRE), next = 0;
			enum um_slice_step step = slice_close_step(word, SLOT, &next);

			if (step == UM_SLICE_STEP_WAIT) {
				spin_hint();
				continue;
			}
			if (step == UM_SLICE_STEP_CLAIM) {
				if (um_cas(&game.word, word, next) != word)
					continue;
				__atomic_add_fetch(&game.counted, 1, __ATOMIC_ACQ_REL);
				game.close_first++;
			}
			break;
		}
		finish(round);
	}
	return NULL;
}

Test(bpf_handover, each_slice_counted_once_by_switch_out_or_close, .timeout = 120)
{
	pthread_t out, close;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("one CPU: the two players never overlap");
	game.word = slice_running(1);
	game.round = 1;
	cr_assert_eq(pthread_create(&out, NULL, switch_out, NULL), 0);
	cr_assert_eq(pthread_create(&close, NULL, close_unit, NULL), 0);
	pthread_join(out, NULL);
	pthread_join(close, NULL);
	cr_expect_eq(game.wrong, 0, "%u of %d rounds counted the slice other than once", game.wrong,
		     ROUNDS);
	/* both orders happened, or the race proved nothing */
	cr_expect_gt(game.out_first, 0);
	cr_expect_gt(game.close_first, 0, "the close never won (switch-out first %u times)",
		     game.out_first);
}
