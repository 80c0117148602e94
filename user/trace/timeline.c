// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The memory timeline: fine buckets merged into a bounded one (see timeline.h). */
#include <string.h>
#include "common/manifest_keys.h"
#include "trace/timeline.h"

void memory_timeline__init(struct memory_timeline *t, uint64_t start_ns)
{
	memset(t, 0, sizeof(*t));
	t->start_ns = start_ns;
	t->shift = UM_TIMELINE_SHIFT;
}

static void range_merge(struct timeline_range *into, const struct timeline_range *from)
{
	if (!from->last_index)
		return;
	if (!into->last_index) {
		*into = *from;
		return;
	}
	if (from->min_bytes < into->min_bytes)
		into->min_bytes = from->min_bytes;
	if (from->max_bytes > into->max_bytes)
		into->max_bytes = from->max_bytes;
	if (from->last_index > into->last_index) {
		into->last_index = from->last_index;
		into->last_bytes = from->last_bytes;
	}
}

/* Neighbours merged in pairs: half as many buckets, each twice as wide. */
static void halve(struct memory_timeline *t)
{
	for (size_t k = 0; k < TIMELINE_BUCKETS / 2; k++) {
		struct timeline_span merged = t->spans[2 * k];

		range_merge(&merged.rss, &t->spans[2 * k + 1].rss);
		range_merge(&merged.charge, &t->spans[2 * k + 1].charge);
		t->spans[k] = merged;
	}
	memset(&t->spans[TIMELINE_BUCKETS / 2], 0,
	       sizeof(t->spans[0]) * (TIMELINE_BUCKETS - TIMELINE_BUCKETS / 2));
	t->shift++;
	t->used = (t->used + 1) / 2;
}

/* The bucket of an instant offset_ns after the start, the timeline widened until it fits. */
static size_t bucket_of(struct memory_timeline *t, uint64_t offset_ns)
{
	while (t->shift < 63 && (offset_ns >> t->shift) >= TIMELINE_BUCKETS)
		halve(t);
	return offset_ns >> t->shift < TIMELINE_BUCKETS ? offset_ns >> t->shift : TIMELINE_BUCKETS - 1;
}

/* One figure of a fine bucket (index), as a range; none when no value came. */
static struct timeline_range fine_range(uint64_t index, const struct um_timeline_range *fine)
{
	struct timeline_range r = { 0 };

	/* a complement of 0 is "no value": every value's complement is above it but ~UINT64_MAX */
	if (!fine->min_complement)
		return r;
	r.min_bytes = ~fine->min_complement;
	r.max_bytes = fine->max_bytes;
	r.last_bytes = fine->last_bytes;
	r.last_index = index;
	return r;
}

void memory_timeline__add(struct memory_timeline *t, const struct um_timeline_bucket *fine)
{
	struct timeline_range rss, charge;
	size_t k;

	if (!fine->index)
		return;
	rss = fine_range(fine->index, &fine->rss);
	charge = fine_range(fine->index, &fine->charge);
	if (!rss.last_index && !charge.last_index)
		return;
	k = bucket_of(t, (fine->index - 1) << UM_TIMELINE_SHIFT);
	range_merge(&t->spans[k].rss, &rss);
	range_merge(&t->spans[k].charge, &charge);
	if (k + 1 > t->used)
		t->used = k + 1;
}

/* Buckets (~1 ms each) a drain leaves to be written on: more than a 100 Hz tick. */
#define TIMELINE_SETTLE_BUCKETS 16

/* A range the BPF side is writing meanwhile: read, then emptied for the slot's next round. */
static struct um_timeline_range take_range(struct um_timeline_range *r)
{
	struct um_timeline_range copy = {
		.max_bytes = __atomic_exchange_n(&r->max_bytes, 0, __ATOMIC_RELAXED),
		.min_complement = __atomic_exchange_n(&r->min_complement, 0, __ATOMIC_RELAXED),
		.last_bytes = __atomic_exchange_n(&r->last_bytes, 0, __ATOMIC_RELAXED),
	};

	return copy;
}

/* Take one slot (its index read already): copy and empty it, then free it (the index last). */
static void take_slot(struct memory_timeline *t, struct um_timeline_bucket *slot, uint64_t index)
{
	struct um_timeline_bucket copy = { .index = index };

	copy.rss = take_range(&slot->rss);
	copy.charge = take_range(&slot->charge);
	memory_timeline__add(t, &copy);
	__atomic_store_n(&slot->index, 0, __ATOMIC_RELEASE);
}

/* Values written this late into an ended bucket are taken by the next drain... */
#define TIMELINE_LATE_BUCKETS 64
/* ...later ones by a look at the whole ring every this many drains (~1 s), well before the ring
 * comes round (~4 s) */
#define TIMELINE_FULL_SCAN_EVERY 20

static size_t take_slot_if_ended(struct memory_timeline *t, struct um_timeline_bucket *slot,
				 uint64_t to)
{
	uint64_t index = __atomic_load_n(&slot->index, __ATOMIC_ACQUIRE);

	if (!index || index > to)
		return 0;
	take_slot(t, slot, index);
	return 1;
}

size_t memory_timeline__drain(struct memory_timeline *t, struct um_timeline_bucket *ring,
			      uint64_t now_ns, bool all)
{
	uint64_t to = UINT64_MAX, from, now_index;
	size_t taken = 0;

	if (!all) {
		if (now_ns < t->start_ns)
			return 0;
		now_index = ((now_ns - t->start_ns) >> UM_TIMELINE_SHIFT) + 1;
		/* buckets still written: the one filling now, and those a CPU's tick clock (behind the
		 * fine one by up to a tick, 10 ms at 100 Hz) still names */
		if (now_index <= TIMELINE_SETTLE_BUCKETS)
			return 0;
		to = now_index - TIMELINE_SETTLE_BUCKETS;
	}
	/*
	 * A CPU that read the clock and was then held up (an interrupt, its vCPU descheduled by the
	 * host) writes into a bucket that ended long ago, and that slot must be freed before the
	 * ring comes round to it: now and then the whole ring, else the buckets since the last
	 * drain and a margin before them. Scanning the whole ring every time cost a traced
	 * workload a few percent of its CPU under emulation (the kernel matrix).
	 */
	if (all || ++t->drains % TIMELINE_FULL_SCAN_EVERY == 0 ||
	    to - t->next_index + TIMELINE_LATE_BUCKETS >= UM_TIMELINE_SLOTS) {
		for (size_t i = 0; i < UM_TIMELINE_SLOTS; i++)
			taken += take_slot_if_ended(t, &ring[i], to);
	} else {
		from = t->next_index > TIMELINE_LATE_BUCKETS ? t->next_index - TIMELINE_LATE_BUCKETS : 1;
		for (uint64_t i = from; i <= to; i++)
			taken += take_slot_if_ended(t, &ring[i & (UM_TIMELINE_SLOTS - 1)], to);
	}
	if (!all)
		t->next_index = to + 1;
	return taken;
}

/*
 * One figure's lowest and highest per bucket. The value at a bucket's start is the one the bucket
 * before ended with, so it belongs to the bucket's range too; a bucket without a change holds it.
 * Returns whether any value was seen.
 */
static bool range_arrays(const struct memory_timeline *t, size_t n, bool charge, json_t *mins,
			 json_t *maxs)
{
	bool known = false;
	uint64_t carried = 0;

	for (size_t i = 0; i < n; i++) {
		const struct timeline_range *r = charge ? &t->spans[i].charge : &t->spans[i].rss;
		uint64_t lo = carried, hi = carried;

		if (r->last_index) {
			if (!known || r->min_bytes < lo)
				lo = r->min_bytes;
			if (!known || r->max_bytes > hi)
				hi = r->max_bytes;
			carried = r->last_bytes;
			known = true;
		} else if (!known) {
			json_array_append_new(mins, json_null());
			json_array_append_new(maxs, json_null());
			continue;
		}
		json_array_append_new(mins, json_integer((json_int_t)lo));
		json_array_append_new(maxs, json_integer((json_int_t)hi));
	}
	return known;
}

json_t *memory_timeline__json(const struct memory_timeline *t, uint64_t origin_ns, uint64_t end_ns)
{
	size_t n = t->used;
	json_t *o, *rss_min = json_array(), *rss_max = json_array(), *charge_min = json_array(),
		  *charge_max = json_array();
	bool charge_known;

	/* the line runs on to the end of tracing: nothing changed after the last bucket */
	if (end_ns > t->start_ns && ((end_ns - t->start_ns) >> t->shift) + 1 > n)
		n = ((end_ns - t->start_ns) >> t->shift) + 1;
	if (n > TIMELINE_BUCKETS)
		n = TIMELINE_BUCKETS;
	range_arrays(t, n, false, rss_min, rss_max);
	charge_known = range_arrays(t, n, true, charge_min, charge_max);
	if (!charge_known) {
		json_decref(charge_min);
		json_decref(charge_max);
		charge_min = json_null();
		charge_max = json_null();
	}
	o = json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I}", UM_TIMELINE_START_NS,
		      (json_int_t)((int64_t)t->start_ns - (int64_t)origin_ns),
		      UM_TIMELINE_BUCKET_NS, (json_int_t)(1ULL << t->shift), UM_TIMELINE_BUCKETS,
		      (json_int_t)n, UM_TIMELINE_RSS_MIN_BYTES, rss_min, UM_TIMELINE_RSS_MAX_BYTES,
		      rss_max, UM_TIMELINE_CHARGE_MIN_BYTES, charge_min,
		      UM_TIMELINE_CHARGE_MAX_BYTES, charge_max, UM_TIMELINE_OVERRUNS,
		      (json_int_t)t->overruns);
	return o;
}
