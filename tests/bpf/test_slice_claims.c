// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The loader's sweep of the baseline's handover keys (user/trace/slice_claims.c), on maps of the
 * programs' own shapes made here: the keys of units whose slot no longer holds them go a sweep
 * after that was first seen, those of units still there stay, slice claims and edge keys (tid 0)
 * alike.
 */
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "trace/slice_claims.h"
#include "unitmeter.h"

TestSuite(bpf_slice_claims, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

/* the unit in slot s of sequence q */
static __u64 unit_of(__u64 q, __u32 s)
{
	return q * UM_UNIT_SLOTS + s;
}

Test(bpf_slice_claims, the_keys_of_closed_units_go_and_the_open_ones_stay)
{
	int claims = bpf_map_create(BPF_MAP_TYPE_HASH, "slice_claims", sizeof(struct um_slice_claim),
				    sizeof(__u64), UM_SLICE_CLAIMS, NULL);
	int units = bpf_map_create(BPF_MAP_TYPE_ARRAY, "units", sizeof(__u32),
				   sizeof(struct um_unit), UM_UNIT_SLOTS, NULL);
	struct um_slice_claim key, *prev = NULL;
	struct claims_sweep sweep = { 0 };
	size_t open_keys = 0, closed_keys = 0, left = 0;
	struct um_unit unit;
	__u64 who = UM_CLAIM_BY_CLOSE;

	cr_assert(claims >= 0 && units >= 0, "cannot make the maps");
	/* slots 0-99 hold units of sequence 1; slots 100-199 held them, now free or reused */
	for (__u32 s = 0; s < 200; s++) {
		memset(&unit, 0, sizeof(unit));
		unit.id = s < 100 ? unit_of(1, s) : s < 150 ? 0 : unit_of(2, s);
		cr_assert_eq(bpf_map_update_elem(units, &s, &unit, BPF_ANY), 0);
	}
	/* four slices of three threads each, and an edge key, for every unit of sequence 1 */
	for (__u32 s = 0; s < 200; s++) {
		for (__u32 tid = 0; tid <= 3; tid++)
			for (__u32 seq = tid ? 1 : UM_EDGE_END; seq <= (tid ? 4u : UM_EDGE_END); seq++) {
				key = (struct um_slice_claim){ .tid = tid, .seq = seq,
							       .unit_id = unit_of(1, s) };
				cr_assert_eq(bpf_map_update_elem(claims, &key, &who, BPF_NOEXIST), 0);
				if (s < 100)
					open_keys++;
				else
					closed_keys++;
			}
	}
	cr_assert_gt(closed_keys, 256, "more than one batch of removals");
	/* a key goes a sweep after its unit was seen closed: a program held up since it read the
	 * unit may still be about to insert one */
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), 0);
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), (long)closed_keys);
	while (!bpf_map_get_next_key(claims, prev, &key)) {
		cr_expect_lt(key.unit_id % UM_UNIT_SLOTS, 100, "a key of closed unit %llu left",
			     (unsigned long long)key.unit_id);
		left++;
		prev = &key;
	}
	cr_expect_eq(left, open_keys);
	/* nothing more to remove */
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), 0);
	/* a unit that closes now: its keys go at the second sweep after, and one inserted after
	 * the first of them at the third */
	unit.id = 0;
	key = (struct um_slice_claim){ .tid = 7, .seq = 1, .unit_id = unit_of(1, 5) };
	cr_assert_eq(bpf_map_update_elem(units, &(__u32){ 5 }, &unit, BPF_ANY), 0);
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), 0);
	cr_assert_eq(bpf_map_update_elem(claims, &key, &who, BPF_NOEXIST), 0);
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), 13,
		     "slot 5's 13 keys, seen closed at the sweep before; the new one seen now");
	cr_expect_eq(slice_claims_sweep(&sweep, claims, units), 1, "the new one, a sweep later");
	claims_sweep_free(&sweep);
	close(claims);
	close(units);
}
