// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory timeline: its bookkeeping (user/trace/timeline.c) on buckets made here (what the drain
 * takes from the BPF ring and frees, how buckets merge as a run outgrows them, what the manifest
 * gets), then the timeline the real programs fill, against workloads whose spikes are known.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "trace/timeline.h"

TestSuite(timeline, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

#define MIB (1024ULL * 1024)
#define FINE_NS (1ULL << UM_TIMELINE_SHIFT)
#define START_NS 1000000000ULL
/* a tick at 100 Hz: how far a CPU's cached clock can be behind (timeline.bpf.c) */
#define TICK_SLACK_S 0.010

/* A fine bucket as the BPF side leaves it after one RSS value. */
static void put_rss(struct um_timeline_bucket *ring, uint64_t index, uint64_t bytes)
{
	struct um_timeline_bucket *b = &ring[index & (UM_TIMELINE_SLOTS - 1)];

	if (!b->index || b->index != index) {
		memset(b, 0, sizeof(*b));
		b->index = index;
	}
	if (bytes > b->rss.max_bytes)
		b->rss.max_bytes = bytes;
	if (~bytes > b->rss.min_complement)
		b->rss.min_complement = ~bytes;
	b->rss.last_bytes = bytes;
}

static uint64_t at(json_t *timeline, const char *key, size_t i)
{
	json_t *v = json_array_get(json_object_get(timeline, key), i);

	cr_assert(json_is_integer(v), "%s[%zu] is not a number", key, i);
	return (uint64_t)json_integer_value(v);
}

static struct memory_timeline *new_timeline(void)
{
	struct memory_timeline *t = malloc(sizeof(*t));

	cr_assert_not_null(t);
	memory_timeline__init(t, START_NS);
	return t;
}

Test(timeline, a_bucket_holds_the_value_it_started_with_and_a_quiet_one_carries_it)
{
	struct um_timeline_bucket *ring = calloc(UM_TIMELINE_SLOTS, sizeof(*ring));
	struct memory_timeline *t = new_timeline();
	json_t *j;

	put_rss(ring, 1, 10 * MIB);
	put_rss(ring, 1, 30 * MIB);
	put_rss(ring, 1, 20 * MIB); /* bucket 0: 10..30, ends at 20 */
	put_rss(ring, 4, 5 * MIB);  /* bucket 3: one change, from 20 down to 5 */
	cr_assert_eq(memory_timeline__drain(t, ring, START_NS + 20 * FINE_NS, false), 2);
	j = memory_timeline__json(t, START_NS - 500, START_NS + 6 * FINE_NS);
	cr_expect_eq(json_integer_value(json_object_get(j, "start_ns")), 500);
	cr_expect_eq(json_integer_value(json_object_get(j, "bucket_ns")), (json_int_t)FINE_NS);
	cr_assert_eq(json_integer_value(json_object_get(j, "buckets")), 7, "up to the end of tracing");
	cr_expect_eq(at(j, "rss_min_bytes", 0), 10 * MIB);
	cr_expect_eq(at(j, "rss_max_bytes", 0), 30 * MIB);
	for (size_t i = 1; i < 3; i++) {
		cr_expect_eq(at(j, "rss_min_bytes", i), 20 * MIB, "no change: the last value holds");
		cr_expect_eq(at(j, "rss_max_bytes", i), 20 * MIB);
	}
	cr_expect_eq(at(j, "rss_min_bytes", 3), 5 * MIB);
	cr_expect_eq(at(j, "rss_max_bytes", 3), 20 * MIB, "the bucket began at the value before");
	cr_expect_eq(at(j, "rss_max_bytes", 6), 5 * MIB);
	cr_expect(json_is_null(json_object_get(j, "charge_min_bytes")), "no charge was read");
	json_decref(j);
	free(ring);
	free(t);
}

Test(timeline, the_drain_takes_ended_buckets_and_frees_their_slots)
{
	struct um_timeline_bucket *ring = calloc(UM_TIMELINE_SLOTS, sizeof(*ring));
	struct memory_timeline *t = new_timeline();

	put_rss(ring, 1, MIB);
	put_rss(ring, 2, 2 * MIB);
	put_rss(ring, 3, 3 * MIB);
	/* now in bucket 17 (index 18): the last 16 may still be written (a CPU's tick clock) */
	cr_expect_eq(memory_timeline__drain(t, ring, START_NS + 17 * FINE_NS + 5, false), 2);
	cr_expect_eq(ring[1].index, 0, "taken slots are free for the ring's next round");
	cr_expect_eq(ring[2].index, 0);
	cr_expect_eq(ring[3].index, 3, "a bucket that may still be written stays");
	/* a late write into an ended bucket is taken by a later drain */
	put_rss(ring, 2, 9 * MIB);
	cr_expect_eq(memory_timeline__drain(t, ring, START_NS + 23 * FINE_NS, false), 2);
	cr_expect_eq(t->spans[1].rss.max_bytes, 9 * MIB);
	/* and one held up for much longer (a vCPU descheduled): before the ring comes round */
	put_rss(ring, 5, 11 * MIB);
	cr_expect_eq(memory_timeline__drain(t, ring, START_NS + 700 * FINE_NS, false), 1);
	cr_expect_eq(t->spans[4].rss.max_bytes, 11 * MIB);
	cr_expect_eq(ring[5].index, 0);
	put_rss(ring, 9, 4 * MIB);
	cr_expect_eq(memory_timeline__drain(t, ring, START_NS + 8 * FINE_NS + 1, true), 1,
		     "at the end every bucket is taken, the current one too");
	cr_expect_eq(t->used, 9);
	free(ring);
	free(t);
}

Test(timeline, a_long_run_merges_buckets_and_keeps_a_one_bucket_peak)
{
	struct um_timeline_bucket *ring = calloc(UM_TIMELINE_SLOTS, sizeof(*ring));
	struct memory_timeline *t = new_timeline();
	const uint64_t n = 20000, spike = 13777; /* ~21 s of 1 ms buckets; the spike ~1 ms */
	uint64_t best = 0;
	size_t best_at = 0, buckets;
	json_t *j;

	for (uint64_t i = 1; i <= n; i++) {
		put_rss(ring, i, i == spike ? 1024 * MIB : 100 * MIB + (i % 7) * MIB);
		/* the loader drains every 50 ms or so */
		if (i % 50 == 0)
			memory_timeline__drain(t, ring, START_NS + (i + 16) * FINE_NS, false);
	}
	memory_timeline__drain(t, ring, START_NS + (n + 16) * FINE_NS, true);
	j = memory_timeline__json(t, START_NS, START_NS + n * FINE_NS);
	buckets = json_integer_value(json_object_get(j, "buckets"));
	cr_assert_leq(buckets, TIMELINE_BUCKETS, "bounded: %zu buckets", buckets);
	cr_expect_gt(buckets, TIMELINE_BUCKETS / 2, "the width doubles only when needed");
	for (size_t i = 0; i < buckets; i++)
		if (at(j, "rss_max_bytes", i) > best) {
			best = at(j, "rss_max_bytes", i);
			best_at = i;
		}
	cr_expect_eq(best, 1024 * MIB, "the peak is kept at its full height");
	cr_expect_eq(best_at, ((spike - 1) * FINE_NS) >> t->shift, "in the bucket of its time");
	cr_expect_eq(at(j, "rss_max_bytes", buckets - 1), 100 * MIB + (n % 7) * MIB,
		     "the line runs on to the end at the last value");
	json_decref(j);
	free(ring);
	free(t);
}

/* What a manifest's timeline shows of a spike workload. */
struct spikes_seen {
	double peak;
	int spikes;                 /* rises above high after a bucket all below low */
	long first_high, last_high; /* buckets that reached high; -1: none */
};

/*
 * Read the timeline. A bucket's range holds the value it began with, so a spike is counted where
 * a bucket reaches high after one that stayed below low all through: spikes with gaps between
 * them longer than a bucket (and a CPU's tick, which can place a value a tick early or late).
 */
static struct spikes_seen read_spikes(const json_t *tl, double high, double low)
{
	const json_t *maxs = jget(tl, "rss_max_bytes");
	struct spikes_seen s = { .first_high = -1, .last_high = -1 };
	bool was_low = true;

	for (size_t i = 0; i < json_array_size(maxs); i++) {
		double hi = json_number_value(json_array_get(maxs, i));

		if (!json_is_number(json_array_get(maxs, i)))
			continue;
		s.peak = hi > s.peak ? hi : s.peak;
		if (hi >= high) {
			s.first_high = s.first_high < 0 ? (long)i : s.first_high;
			s.last_high = (long)i;
			s.spikes += was_low;
			was_low = false;
		} else if (hi <= low) {
			was_low = true;
		}
	}
	return s;
}

/* A spike workload's run: its timeline's top is the exact peak; each spike counted when asked. */
static void check_spikes(const char *mib, const char *hold_ms, const char *gap_ms,
			 const char *repeat, bool count_each)
{
	const char *args[] = { "run", "-q", "--", workload("spike"), "--mib", mib, "--hold-ms",
			       hold_ms, "--gap-ms", gap_ms, "--repeat", repeat, NULL };
	struct um_result r;
	json_t *run, *tl;
	double spike, base, bucket_s, held_s;
	struct spikes_seen seen;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(r.truth, "no truth line: %s", r.out);
	run = jget(r.manifest, "run");
	tl = jget(run, "memory_timeline");
	cr_assert(json_is_object(tl), "no memory_timeline in the manifest");
	cr_expect_eq(jnum(tl, "overruns"), 0, "the loader kept up with the ring: %.0f overruns",
		     jnum(tl, "overruns"));
	cr_expect_leq(jnum(tl, "buckets"), TIMELINE_BUCKETS);
	spike = jnum(r.truth, "spike_bytes");
	base = jnum(r.truth, "baseline_rss_bytes");
	seen = read_spikes(tl, base + 0.9 * spike, base + 0.5 * spike);
	/* every change was seen: the timeline's top is the run's exact peak, not a sample of it */
	cr_expect_eq(seen.peak, jnum(run, "peak_rss_bytes"), "timeline top %.0f, run peak %.0f",
		     seen.peak, jnum(run, "peak_rss_bytes"));
	cr_expect(within(seen.peak, jnum(r.truth, "peak_rss_bytes"), 0.02, 0),
		  "timeline top %.1f MiB, the workload held %.1f MiB", seen.peak / MIB_F,
		  jnum(r.truth, "peak_rss_bytes") / MIB_F);
	if (count_each)
		cr_expect_eq(seen.spikes, atoi(repeat), "each of the %s spikes in the timeline: %d seen",
			     repeat, seen.spikes);
	/*
	 * Spikes from the first held to the last unmapped, as the workload's own clock saw them:
	 * none lost to a ring the loader did not drain. A bucket's edges hold its values' instants,
	 * give or take the tick a CPU's cached clock can be behind (timeline.bpf.c), at each end.
	 * (Not against the run's end, which a loaded CI node put 173 ms, three cycles, after the
	 * last spike in the timeline.)
	 */
	bucket_s = jnum(tl, "bucket_ns") / 1e9;
	held_s = jnum(r.truth, "held_span_ns") / 1e9;
	cr_assert_geq(seen.first_high, 0, "no spike in the timeline");
	cr_expect_geq((seen.last_high + 1 - seen.first_high) * bucket_s, held_s - 2 * TICK_SLACK_S,
		      "spikes over %.3f s of the timeline (%ld buckets of %.1f ms), held over %.3f s",
		      (seen.last_high + 1 - seen.first_high) * bucket_s,
		      seen.last_high + 1 - seen.first_high, bucket_s * 1e3, held_s);
	um_result_free(&r);
}

Test(timeline, spikes_of_two_ms_at_full_height_each)
{
	/* 40 ms apart: a gap of whole buckets between them, however the tick places a value */
	check_spikes("64", "2", "40", "3", true);
}

/*
 * ~4 s of spikes (a minute in an emulated guest): more than the BPF ring holds (4096 buckets of
 * ~1 ms), so the loader's drains must keep up, and the timeline merges its buckets as it grows,
 * until they may be wider than a spike (then spikes share buckets and are not counted one by one)
 */
Test(timeline, a_run_longer_than_the_ring_is_all_there)
{
	check_spikes("32", "25", "0", "120", false);
}
