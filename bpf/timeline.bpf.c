// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory timeline: every value a group's RSS takes (rss_apply_locked) and every charge read
 * (charge_raise_locked) goes into the bucket of its instant, which keeps the lowest, the highest and the
 * last. Nothing is sampled, so a 2 ms spike is in the timeline at its full height; the loader
 * takes buckets as they end and merges them into a timeline of bounded size (user/trace/timeline.c).
 *
 * Buckets are claimed by their number and only ever raised (the lowest value is kept as its
 * complement), so CPUs writing the same bucket at once lose nothing and need no lock; the loader
 * frees a bucket after reading it. A bucket still unread a whole ring later is not overwritten:
 * the value is counted in the group's timeline_overruns and the loader says the timeline has a gap.
 * Each run has a timeline of its own (group_timelines), measured from its own start.
 */
#include "model.bpf.h"

/*
 * The clock of the buckets. bpf_ktime_get_ns() reads the TSC and scales it: ~50 ns here (a VM),
 * a third of the RSS program, on every page fault (the tick's clock, a few ns, is refused to
 * tracing programs). So each CPU keeps the instant it last read the clock at, and reuses it
 * while the tick (jiffies, one load) has not moved and for at most TIMELINE_CLOCK_REUSE events:
 * in a burst of page faults (a few us each) a value's bucket is off by at most that many
 * events' time, and a lone value's by less than a tick (4 ms at Debian's 250 Hz).
 */
#define TIMELINE_CLOCK_REUSE 32

struct um_timeline_clock timeline_clocks[UM_MAX_CPUS];

static __always_inline __u64 timeline_now(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct um_timeline_clock *c = &timeline_clocks[CPU_SLOT(cpu)];
	__u64 jiffies = bpf_jiffies64(), now;

	/* jiffies is never 0 (it starts 5 minutes before its wrap): the first event reads the clock */
	if (c->jiffies == jiffies && c->reused < TIMELINE_CLOCK_REUSE) {
		c->reused++;
		return c->now_ns;
	}
	now = bpf_ktime_get_ns();
	c->jiffies = jiffies;
	c->reused = 0;
	c->now_ns = now;
	return now;
}

/* The bucket of this instant in group's timeline, claimed; NULL: its timeline is off, or this
 * bucket is a gap. */
static __always_inline struct um_timeline_bucket *timeline_bucket_now(__u32 group)
{
	struct um_group *g = group_get(group);
	__u32 slot = UM_GROUP_SLOT(group), key;
	__u64 start, now, index, seen;
	struct um_timeline_bucket *b;
	void *buckets;

	if (!g || !(start = g->timeline_start_ns))
		return NULL;
	buckets = bpf_map_lookup_elem(&group_timelines, &slot);
	if (!buckets)
		return NULL;
	now = timeline_now();
	index = ((now > start ? now - start : 0) >> UM_TIMELINE_SHIFT) + 1;
	key = index & (UM_TIMELINE_SLOTS - 1);
	b = bpf_map_lookup_elem(buckets, &key);
	if (!b)
		return NULL;
	seen = b->index;
	if (seen != index) {
		/* taken by another CPU meanwhile: ours too; still unread from a ring ago: a gap */
		if (seen || ((seen = um_cas(&b->index, 0, index)) && seen != index)) {
			__sync_fetch_and_add(&g->timeline_overruns, 1);
			return NULL;
		}
	}
	return b;
}

static __always_inline void timeline_range_raise(struct um_timeline_range *r, __u64 bytes)
{
	raise_to(&r->max_bytes, bytes);
	raise_to(&r->min_complement, ~bytes);
	r->last_bytes = bytes;
}

__noinline int timeline_note_rss_locked(__u32 group, __u64 bytes)
{
	struct um_timeline_bucket *b = timeline_bucket_now(group);

	if (b)
		timeline_range_raise(&b->rss, bytes);
	return 0;
}

__noinline int timeline_note_charge_locked(__u32 group, __u64 bytes)
{
	struct um_timeline_bucket *b = timeline_bucket_now(group);

	if (b)
		timeline_range_raise(&b->charge, bytes);
	return 0;
}
