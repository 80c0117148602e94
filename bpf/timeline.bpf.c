// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory timeline: every value the group's RSS takes (rss_apply) and every charge read
 * (charge_raise) goes into the bucket of its instant, which keeps the lowest, the highest and the
 * last. Nothing is sampled, so a 2 ms spike is in the timeline at its full height; the loader
 * takes buckets as they end and merges them into a timeline of bounded size (user/timeline.c).
 *
 * Buckets are claimed by their number and only ever raised (the lowest value is kept as its
 * complement), so CPUs writing the same bucket at once lose nothing and need no lock; the loader
 * frees a bucket after reading it. A bucket still unread a whole ring later is not overwritten:
 * the value is counted in timeline_overruns and the loader says the timeline has a gap.
 */
#include "state.bpf.h"

/* Raise *p to value; unsigned (peak_raise is for signed sums). */
static __always_inline void raise_to(__u64 *p, __u64 value)
{
	__u64 seen = *p;

	for (int i = 0; i < 3 && value > seen; i++) {
		__u64 prev = um_cas(p, seen, value);

		if (prev == seen)
			break;
		seen = prev;
	}
}

__noinline int timeline_note(__u32 charge, __u64 bytes)
{
	__u64 start = timeline_start_ns, index, seen;
	struct um_timeline_bucket *b;

	if (!start)
		return 0;
	index = ((bpf_ktime_get_ns() - start) >> UM_TIMELINE_SHIFT) + 1;
	b = &timeline[index & (UM_TIMELINE_SLOTS - 1)];
	seen = b->index;
	if (seen != index) {
		/* taken by another CPU meanwhile: ours too; still unread from a ring ago: a gap */
		if (seen || ((seen = um_cas(&b->index, 0, index)) && seen != index)) {
			__sync_fetch_and_add(&timeline_overruns, 1);
			return 0;
		}
	}
	if (charge) {
		raise_to(&b->charge_max_bytes, bytes);
		raise_to(&b->charge_min_complement, ~bytes);
		b->charge_last_bytes = bytes;
	} else {
		raise_to(&b->rss_max_bytes, bytes);
		raise_to(&b->rss_min_complement, ~bytes);
		b->rss_last_bytes = bytes;
	}
	return 0;
}
