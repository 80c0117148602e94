/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory charge: what a group's memory cgroup counts against its limit (page_counter
 * `memory`), the figure SLURM's --mem and the OOM killer are enforced on. A page shared by forked
 * processes is charged once; page cache the group reads is charged too.
 *
 * The counter is read where it can have grown: after a tracked task maps a page (rss.bpf.c,
 * after the fault's charge) or adds one to the page cache (charge.bpf.c), at each of its
 * switch-outs (what the kernel charged for it meanwhile: page tables, slab), and at every unit's
 * edges. Every open unit keeps the highest value read in its window (its group's charge_watchers
 * names them, so a read need not search the units). The kernel's own high-water mark (page_counter.watermark,
 * raised at every charge) makes a peak exact whenever it rose inside the window: the window
 * then held that value.
 */
#ifndef UNITMETER_CHARGE_BPF_H
#define UNITMETER_CHARGE_BPF_H

#include "model.bpf.h"

/*
 * Functions of their own (charge.bpf.c): the verifier walks each once, not in every program and
 * path that reads the charge (sched_switch, unit close).
 */
/* Learn the memcg from the current task (tracked) if not known yet; 0: not (yet) known. */
extern __u64 charge_learn_current(__u32 group);
/*
 * Read the charge and raise the peaks that watch it; returns it. charge_sample takes the lock
 * (baseline) only when the value moved; charge_sample_locked is called with it held.
 */
extern __u64 charge_sample(__u32 group);
extern __u64 charge_sample_locked(__u32 group);
/* The kernel's watermark now, kept as the last seen (the run's figure at the end). */
extern __u64 charge_watermark_read(__u32 group);
/* A unit opens (its id in place): its charge so far, and a watcher for its window. */
extern int charge_unit_open_locked(__u64 id);
/* A unit closes: its peak (UM_CHARGE_UNKNOWN: none), its watcher given back. */
extern __u64 charge_unit_close_locked(__u64 id);

#endif /* UNITMETER_CHARGE_BPF_H */
