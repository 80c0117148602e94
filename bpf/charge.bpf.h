/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory charge: what the group's memory cgroup counts against its limit (page_counter
 * `memory`), the figure SLURM's --mem and the OOM killer are enforced on. A page shared by forked
 * processes is charged once; page cache the group reads is charged too.
 *
 * The counter is read where it can have grown: after a tracked task maps a page (rss.bpf.c,
 * after the fault's charge) or adds one to the page cache (charge.bpf.c), at each of its
 * switch-outs (what the kernel charged for it meanwhile: page tables, slab), and at every unit's
 * edges. Every open unit keeps the highest value read in its window (charge_watchers names them,
 * so a read need not search the units). The kernel's own high-water mark (page_counter.watermark,
 * raised at every charge) makes a peak exact whenever it rose inside the window: the window
 * then held that value.
 */
#ifndef UNITMETER_CHARGE_BPF_H
#define UNITMETER_CHARGE_BPF_H

#include "model.bpf.h"

/* The memory cgroup to read, by its kernfs id (its directory's inode); 0: none (set by the loader) */
extern const volatile __u64 charge_cgroup_id;
/* Its struct mem_cgroup, learned from a tracked task inside it; 0 until then. */
extern __u64 charge_memcg;
/* The last value read: most reads find it unchanged (the kernel charges 64 pages at a time). */
extern __u64 charge_seen_bytes;
extern __u64 group_peak_charge_bytes;
/* The kernel's watermark when the memcg was learned, and as last read (unit close, exits). */
extern __u64 charge_watermark_start_bytes;
extern __u64 charge_watermark_last_bytes;
/* Units that found every watcher taken: their charge peak is not known (null). */
extern __u64 charge_unwatched;
extern __u64 charge_watchers[UM_CHARGE_WATCHERS];
/* Watchers ever used (the reads' loop bound). */
extern __u32 charge_watchers_used;

/*
 * Functions of their own (charge.bpf.c): the verifier walks each once, not in every program and
 * path that reads the charge (sched_switch, unit close).
 */
/* Learn the memcg from the current task (tracked) if not known yet; 0: not (yet) known. */
extern __u64 charge_learn_current(void);
/*
 * Read the charge and raise the peaks that watch it; returns it. charge_sample takes the lock
 * (baseline) only when the value moved; charge_sample_locked is called with it held.
 */
extern __u64 charge_sample(void);
extern __u64 charge_sample_locked(void);
/* The kernel's watermark now, kept as the last seen (the run's figure at the end). */
extern __u64 charge_watermark_read(void);
/* A unit opens (its id in place): its charge so far, and a watcher for its window. */
extern int charge_unit_open_locked(__u64 id);
/* A unit closes: its peak (UM_CHARGE_UNKNOWN: none), its watcher given back. */
extern __u64 charge_unit_close_locked(__u64 id);

#endif /* UNITMETER_CHARGE_BPF_H */
