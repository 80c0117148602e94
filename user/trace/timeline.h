/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory timeline of a run: the group's RSS and memory charge over time, as the lowest and
 * highest value in each of at most TIMELINE_BUCKETS buckets. The BPF programs fill ~1 ms buckets
 * (bpf/timeline.bpf.c); each one the loader takes is merged in here. When the run outgrows the
 * buckets, neighbours are merged in pairs and the width doubles: the memory stays bounded, and
 * a peak, however short, stays in its bucket at its full height.
 */
#ifndef UM_TIMELINE_H
#define UM_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "unitmeter.h"

#define TIMELINE_BUCKETS 1024

/* One figure (RSS or charge) over one bucket. */
struct timeline_range {
	uint64_t min_bytes, max_bytes;
	uint64_t last_bytes;  /* the value at the bucket's last change */
	uint64_t last_index;  /* the fine bucket last_bytes came from, plus one; 0: no value */
};

struct timeline_span {
	struct timeline_range rss, charge;
};

struct memory_timeline {
	uint64_t start_ns; /* CLOCK_MONOTONIC of the first fine bucket's start */
	unsigned shift;    /* a bucket is 2^shift ns */
	size_t used;       /* buckets up to the last with a value */
	uint64_t overruns; /* values the BPF ring had no room for (a gap in the timeline) */
	uint64_t next_index; /* the first fine bucket the next drain looks at (and a margin before) */
	uint64_t drains;
	struct timeline_span spans[TIMELINE_BUCKETS];
};

void memory_timeline__init(struct memory_timeline *t, uint64_t start_ns);
/* Merge in one fine bucket of the BPF ring (its index field names it). */
void memory_timeline__add(struct memory_timeline *t, const struct um_timeline_bucket *fine);
/*
 * Take the ended buckets of the BPF ring (shared memory, written meanwhile) and free their slots;
 * all: every bucket, the one still filling too (tracing is over). Call it at least once a ring
 * (~4 s); returns the buckets taken.
 */
size_t memory_timeline__drain(struct memory_timeline *t, struct um_timeline_bucket *ring,
			      uint64_t now_ns, bool all);
/*
 * The timeline as the manifest's memory_timeline: times relative to origin_ns, one entry per
 * bucket up to end_ns; a bucket without a change holds the value before it (nothing changed);
 * null where no value was seen yet, or for the charge when none was read.
 */
json_t *memory_timeline__json(const struct memory_timeline *t, uint64_t origin_ns, uint64_t end_ns);

#endif
