/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A run as a group of the programs (struct um_group, bpf/unitmeter.h): its slot of the groups
 * map, mapped here; its ring and its memory timeline's buckets, maps of its own in the arrays
 * of maps at its slot; its tag in every entry it owns. A run with programs of its own is the one
 * group of slot 0; a run of the node's set (node_programs.h) registers in a free slot under the
 * node's lock, and gives it back at its end.
 */
#ifndef UM_RUN_GROUP_H
#define UM_RUN_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "trace/tracer.h"
#include "unitmeter.h"

struct unitmeter_bpf;

struct run_group {
	__u32 tag;                /* this run's (slot | generation << 8) */
	struct um_group *groups;  /* the groups map, mapped: every slot */
	size_t groups_bytes;
	struct um_group *me;      /* this run's slot */
	int ring_fd, timeline_fd; /* -1: none */
	struct um_timeline_bucket *timeline_buckets; /* the timeline, mapped */
};

/* The mapped bytes of an mmapable array map of n values of size bytes each. */
size_t run_group_array_bytes(size_t size, size_t n);

/* Map the groups map (g->groups). 0 or -errno, said. */
int run_group_map(struct run_group *g, struct unitmeter_bpf *skel);

/* Take slot (mapped): its ring and timeline found or made, emptied; the configuration, then the
 * tag. 0 or -errno, said. */
int run_group_join(struct run_group *g, struct unitmeter_bpf *skel,
		   const struct tracer_config *cfg, __u32 slot);

/* Map, then join the free slot given back longest ago (a fresh one where none has maps yet);
 * slots of runs that are gone are swept on the way. Under the node's lock. */
int run_group_register(struct run_group *g, struct unitmeter_bpf *skel,
		       const struct tracer_config *cfg);

/* Give the slot back (if still this run's) and sweep its entries; true when no other live run
 * holds a slot (the caller, the last out, removes the set's registry). Under the node's lock. */
bool run_group_give_back(struct run_group *g, struct unitmeter_bpf *skel,
			 const struct tracer_config *cfg);

/* Forget every entry a run of tag left in the maps: its processes, threads, mms, open units and
 * the programs it looked up. */
void run_group_sweep(struct unitmeter_bpf *skel, __u32 tag);

/* Whether a slot's registering run is gone (its pid and start time no longer a process). */
bool run_group_owner_gone(const struct um_group *g);

/* Unmap and close what the run holds of its group (the slot itself is given back apart). */
void run_group_close(struct run_group *g);

/*
 * The first slot's ring and timeline, put in place beside the load: an array of maps' update
 * waits for an RCU grace period (15-20 ms each here), which a thread of its own spends while
 * the verifier works. The outer maps are made here (with the inner maps as their templates)
 * and handed to libbpf, which then makes none.
 */
struct slot_fill {
	int rings_fd, timelines_fd, ring_fd, timeline_fd;
	int err;
	pthread_t thread;
	bool started;
};

/* Before a load: make the outer maps with the first slot's maps and fill it in a thread. */
void slot_fill_start(struct slot_fill *f, struct unitmeter_bpf *skel,
		     const struct tracer_config *cfg);
/* After it: the thread joined, what it held closed. */
void slot_fill_finish(struct slot_fill *f);

#endif
