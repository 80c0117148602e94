/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The accounting state as every BPF object sees it: the maps and globals (defined once, in
 * maps.bpf.c) and the functions one object defines for the others. Declarations only; the
 * kernel shims are in compat.bpf.h, the accounting model in model.bpf.h. A *.bpf.c includes
 * model.bpf.h (or compat.bpf.h), which include this; never user code.
 *
 * Functions whose name ends in _locked are called with the baseline's lock held (um_lock in
 * compat.bpf.h: what a kernel without fetching atomics needs around read-modify-write).
 */
#ifndef UNITMETER_STATE_BPF_H
#define UNITMETER_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "unitmeter.h"

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct um_proc);
} procs_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct um_mm);
} mms_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct um_thread);
} threads_map_t;

/* open units by slot: an array, so the per-event lookups are inlined, with no hashing */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UM_UNIT_SLOTS);
	__type(key, __u32);
	__type(value, struct um_unit);
} units_map_t;

/* tid of a task inside fork or exec -> the mm it is building, until the new owner is known */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} pending_mm_map_t;

/* tid inside a write-family syscall on a regular file -> UM_WRITE_REGULAR or UM_WRITE_TMP_DIR */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} pending_write_map_t;

/*
 * A written file -> UM_WRITE_REGULAR or UM_WRITE_TMP_DIR, for one run's tmp dir: the parents'
 * walk once per file, not once per write (a program that writes a line at a time would pay it
 * on every line). Keyed by
 * the inode's address and its random generation, read with i_mode from the same struct: an
 * inode freed and another allocated at its address differs by its generation (an inode number
 * would be reused by ext4 as soon as a file is deleted). A file renamed across the tmp dir's
 * edge afterwards keeps its first answer.
 */
struct um_file_key {
	__u64 inode;
	__u32 generation;
	__u32 group; /* the run whose tmp dir the answer is about */
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct um_file_key);
	__type(value, __u32);
} write_kinds_map_t;

/* The runs (struct um_group), by slot; mapped by the loader, which reads its own figures there. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UM_MAX_GROUPS);
	__type(key, __u32);
	__type(value, struct um_group);
} groups_map_t;

/* A run's records: a ring of its own, made by its loader (8 MiB: about 80,000 unit records,
 * a second of a storm of tiny units; the loader sizes its own). */
struct group_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UM_MAX_GROUPS);
	__type(key, __u32);
	__array(values, struct group_ring);
} group_rings_map_t;

/* A run's memory timeline (timeline.bpf.c): a ring of buckets of its own, mapped by its loader. */
struct group_timeline {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UM_TIMELINE_SLOTS);
	/* sizes, not types: an object that only names the map would have the struct as a
	 * forward declaration, whose size libbpf cannot take */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct um_timeline_bucket));
};

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, UM_MAX_GROUPS);
	__type(key, __u32);
	__array(values, struct group_timeline);
} group_timelines_map_t;

/* The arm64 baseline's fence (um_exchange_fence): a ring whose records are only discarded. */
typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} fence_ring_map_t;

/*
 * A mark on every tracked thread, kept by the kernel with the task itself (gone when it is
 * freed, so a recycled tid never inherits it). sched_switch and the per-fault programs ask
 * it before any hash lookup: for a task with no BPF storage at all (most of a node's) one
 * load says no. Its kind of map is a kernel shim: struct um_task_marks, in compat.bpf.h.
 */
typedef struct um_task_marks tracked_tasks_map_t;

/* The baseline lock: held while its one key is in the map (see um_lock). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} baseline_lock_map_t;

/*
 * The baseline's handover keys (struct um_slice_claim): a slice's claim (its value who has it)
 * or a unit's edge being fixed (tid 0; its value the instant). One entry in the other builds.
 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UM_SLICE_CLAIMS);
	__type(key, struct um_slice_claim);
	__type(value, __u64);
} slice_claims_map_t;

extern procs_map_t procs SEC(".maps");
extern tracked_tasks_map_t tracked_tasks SEC(".maps");
extern mms_map_t mms SEC(".maps");
extern threads_map_t threads SEC(".maps");
extern units_map_t units SEC(".maps");
extern pending_mm_map_t pending_mm SEC(".maps");
extern pending_write_map_t pending_write SEC(".maps");
extern write_kinds_map_t write_kinds SEC(".maps");
extern groups_map_t groups SEC(".maps");
extern group_rings_map_t group_rings SEC(".maps");
extern group_timelines_map_t group_timelines SEC(".maps");
extern fence_ring_map_t fence_ring SEC(".maps");
extern baseline_lock_map_t baseline_lock SEC(".maps");
extern slice_claims_map_t slice_claims SEC(".maps");

/*
 * Node-wide: the units' ids (unique across runs, whose units share one map), and the counters
 * of what the programs could not do, which a run reads as their change while it ran
 * (docs/ARCHITECTURE.md). A run's own figures are in its struct um_group.
 */
extern __u64 next_unit_id;
extern __u64 map_full;
extern __u64 scope_overflows;
/* a new thread whose tid still had an entry (a missed exit): its CPU may be misattributed */
extern __u64 thread_collisions;
/* slices of a tracked thread whose process was already gone */
extern __u64 orphan_slices;
/* a unit's closing thread found marked off-CPU: its switch-in was not seen (see units.bpf.c) */
extern __u64 switch_in_misses;
/* a close that could not settle a running slice's handover in time (units.bpf.c) */
extern __u64 handover_timeouts;
/* of switch_in_misses, those whose slice was taken from the scheduler's clocks to the ns */
extern __u64 switch_in_misses_exact;
/* tracked threads found running on a CPU whose switch to them was not reported (cpu.bpf.c) */
extern __u64 late_switch_ins;
/* the untracked threads CPUs were last seen switching to at those misses (unitmeter.h) */
extern __u32 unseen_after_tid[UM_UNSEEN_SLOTS];
extern __u64 unseen_after_count[UM_UNSEEN_SLOTS];
/* baseline: the lock could not be had in time and an update ran without it (see um_lock) */
extern __u64 lock_timeouts;
/*
 * A value of a group's RSS or of its memory charge, into its timeline's bucket of this instant
 * (timeline.bpf.c): one function each, no mode flag (see charge_sample).
 */
extern int timeline_note_rss_locked(__u32 group, __u64 bytes);
extern int timeline_note_charge_locked(__u32 group, __u64 bytes);
/* possible CPUs: the bound of every loop over them (set by the loader) */
extern const volatile __u32 nr_possible_cpus;
/*
 * The kernel's page size in bytes (4K, 16K or 64K on arm64), set by the loader from its own
 * AT_PAGESZ: PAGE_SIZE is a macro, absent from BTF, and every mm counter counts in pages.
 */
extern const volatile __u64 page_size;
/*
 * Set by the loader when the kernel's threads keep private RSS caches (task->rss_stat, before
 * the per-CPU mm counters): rss.bpf.c then reads them where they change.
 */
extern const volatile __u32 thread_rss_caches;

/* Set by the loader when every tracked thread it started with carries the mark. */
extern __u32 trust_marks;

/*
 * What each CPU runs, as sched_switch last saw it (um_cpu_running_entry). Asking it costs a
 * load; asking the mark of a marked task costs a task-storage lookup (~70 ns), which every
 * page fault of a tracked thread would pay. A thread it does not name (a switch-in not seen,
 * one running since before attach) is asked the long way. Tracked means a threads entry and,
 * while marks are trusted, the mark.
 */
extern __u64 cpu_running[UM_MAX_CPUS];

/* Page bytes each CPU holds for the tracked thread cpu_running names (see unitmeter.h). */
extern struct cpu_pending_alloc cpu_pending_alloc[UM_MAX_CPUS];

/* The process's last thread is gone: emit its record and forget it (defined in proc.bpf.c). */
extern int proc_finish_locked(__u32 tgid, __u64 now);

/* Close an open unit: emit its record and forget it everywhere (defined in units.bpf.c). */
extern int unit_close_locked(__u32 tgid, __u64 id, __u32 status);

/* A switch-in the tracepoint did not report, made late (defined in cpu.bpf.c). */
extern int thread_switch_in_late(void);

/* A tmp dir figure of group's, or UM_TMP_UNKNOWN where it names no tmp dir (units.bpf.c). */
extern __u64 group_tmp_output_bytes(__u32 group, __u64 bytes);

/* Whether group's ring holds a batch its reader should be woken for (units.bpf.c). */
extern int group_ring_batch_waits(__u32 group);

/* Adopt the current task's mm, every counter read from the kernel (defined in rss.bpf.c). */
extern int mm_adopt_current_locked(void);

/* The run of this tag; NULL when its slot holds another run now (or none). */
static __always_inline struct um_group *group_get(__u32 tag)
{
	__u32 slot = UM_GROUP_SLOT(tag);
	struct um_group *g = bpf_map_lookup_elem(&groups, &slot);

	return g && g->tag == tag && tag ? g : NULL;
}

#endif /* UNITMETER_STATE_BPF_H */
