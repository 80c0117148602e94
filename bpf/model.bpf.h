/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The accounting model: how a change is added to the figures of a process, its mm, the group
 * and the open units whose scope holds it. Included by each *.bpf.c.
 *
 * The first part is arithmetic on values and lists only: no map, no helper, no kernel type; it
 * needs unitmeter.h's types and um_cas (compat.bpf.h), so it can be compiled on the host. The
 * second part applies it to the maps.
 */
#ifndef UNITMETER_MODEL_BPF_H
#define UNITMETER_MODEL_BPF_H

#include "compat.bpf.h"

/* --- arithmetic ---------------------------------------------------------------------------- */

/*
 * Raise a maximum shared by all CPUs. A plain compare-and-store can lose the higher of two racing
 * values; the CAS retries only while another CPU keeps raising it, so a few rounds suffice.
 */
static __always_inline void raise_to(__u64 *max, __u64 value)
{
	__u64 seen = *max;

	for (int i = 0; i < 3 && value > seen; i++) {
		__u64 prev = um_cas(max, seen, value);

		if (prev == seen)
			break;
		seen = prev;
	}
}

/* The same for a peak of a signed sum: a sum at or below zero raises nothing. */
static __always_inline void peak_raise(__u64 *peak, __s64 value)
{
	if (value > 0)
		raise_to(peak, (__u64)value);
}

/* A wall-clock span on one CPU, less the steal measured on that CPU between its ends. */
static __always_inline __u64 on_cpu_span(__u64 wall_ns, __u64 steal_start, __u64 steal_end)
{
	__u64 stolen = steal_end > steal_start ? steal_end - steal_start : 0;

	return stolen < wall_ns ? wall_ns - stolen : 0;
}

/*
 * A unit's id is its sequence number times UM_UNIT_SLOTS plus its slot (unitmeter.h); the slot
 * of an id, or of a sequence number (where its search for a free slot begins).
 */
static __always_inline __u32 unit_slot(__u64 id_or_seq)
{
	return (__u32)(id_or_seq & (UM_UNIT_SLOTS - 1));
}

static __always_inline __u64 unit_id(__u64 seq, __u32 slot)
{
	return seq * UM_UNIT_SLOTS + slot;
}

/*
 * A thread's RSS cache (rss_cache.bpf.h) folded into its copy: the copy takes the kernel's
 * counts, except `folding`, the member the kernel is folding into the mm at this very event
 * (its new counter value already holds it, and the cache is zeroed right after): taken as 0.
 * Returns the change in pages.
 */
static __always_inline __s64 cache_fold(__s32 copy[UM_MM_NR_MEMBERS],
					const int count[UM_MM_NR_MEMBERS], int folding)
{
	__s32 file = folding == UM_MM_FILEPAGES ? 0 : count[UM_MM_FILEPAGES];
	__s32 anon = folding == UM_MM_ANONPAGES ? 0 : count[UM_MM_ANONPAGES];
	__s32 shmem = folding == UM_MM_SHMEMPAGES ? 0 : count[UM_MM_SHMEMPAGES];
	__s64 pages = (__s64)(file - copy[UM_MM_FILEPAGES]) + (anon - copy[UM_MM_ANONPAGES]) +
		      (shmem - copy[UM_MM_SHMEMPAGES]);

	copy[UM_MM_FILEPAGES] = file;
	copy[UM_MM_ANONPAGES] = anon;
	copy[UM_MM_SHMEMPAGES] = shmem;
	return pages;
}

/* A scope list (UM_SCOPE_DEPTH ids, newest first) without this unit. */
static __always_inline void units_remove(__u64 *list, __u64 id)
{
	if (list[0] == id) {
		list[0] = list[1];
		list[1] = 0;
	} else if (list[1] == id) {
		list[1] = 0;
	}
}

/* --- on the maps --------------------------------------------------------------------------- */

/* Insert a fresh map value; a full map is counted, never silent. */
static __always_inline int map_insert(void *map, const void *key, const void *value)
{
	int err = bpf_map_update_elem(map, key, value, BPF_NOEXIST);

	if (err && err != -UM_EEXIST)
		__sync_fetch_and_add(&map_full, 1);
	return err;
}

static __always_inline void *record_reserve(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		__sync_fetch_and_add(&lost_records, 1);
	return rec;
}

/* The open unit with this id; NULL for 0, or when it has closed (its slot freed or reused). */
static __always_inline struct um_unit *unit_get(__u64 id)
{
	__u32 slot = unit_slot(id);
	struct um_unit *unit;

	if (!id)
		return NULL;
	unit = bpf_map_lookup_elem(&units, &slot);
	return unit && unit->id == id ? unit : NULL;
}

/*
 * A unit already closed is only a stale id in a list: nothing can be charged to it. (No map of
 * its own but unit_get's: a host test compiles it with a unit_get of its own.)
 */
static __always_inline void units_prune(__u64 *list)
{
	if (list[1] && !unit_get(list[1]))
		list[1] = 0;
	if (list[0] && !unit_get(list[0])) {
		list[0] = list[1];
		list[1] = 0;
	}
}

/*
 * Lists keep the ids of units that closed while the process lived in them (a closing unit
 * does not walk every process): they are dropped here, before they could count as overflow.
 */
static __always_inline void units_push(__u64 *list, __u64 id)
{
	units_prune(list);
	if (list[UM_SCOPE_DEPTH - 1])
		__sync_fetch_and_add(&scope_overflows, 1);
	list[1] = list[0];
	list[0] = id;
}

/* Apply a change of scope RSS to one open unit (missing: the unit already closed). */
static __always_inline void unit_rss_apply_locked(__u64 id, __s64 delta)
{
	struct um_unit *unit = unit_get(id);

	if (!unit)
		return;
	peak_raise(&unit->peak_rss_bytes, um_fetch_add(&unit->rss_bytes, delta) + delta);
	__sync_fetch_and_add(&unit->n_rss_changes, 1);
}

/* An RSS change of one mm: the mm's own figure, the group's, and its open units'. */
static __always_inline void rss_apply_locked(struct um_mm *mm, __s64 delta)
{
	peak_raise(&mm->peak_rss_bytes, um_fetch_add(&mm->rss_bytes, delta) + delta);
	__s64 group = um_fetch_add(&group_rss_bytes, delta) + delta;

	peak_raise(&group_peak_rss_bytes, group);
	timeline_note_locked(0, group > 0 ? group : 0);
	unit_rss_apply_locked(mm->units[0], delta);
	unit_rss_apply_locked(mm->units[1], delta);
}

/* Retire an mm its process no longer uses: keep its peak, take its pages off every sum. */
static __always_inline void mm_retire_locked(struct um_proc *proc, __u64 mm_key)
{
	struct um_mm *mm = bpf_map_lookup_elem(&mms, &mm_key);

	if (!mm)
		return;
	if (mm->peak_rss_bytes > proc->peak_rss_bytes)
		proc->peak_rss_bytes = mm->peak_rss_bytes;
	if (mm->rss_bytes)
		rss_apply_locked(mm, -mm->rss_bytes);
	bpf_map_delete_elem(&mms, &mm_key);
}

/* Add to a counter (a struct um_unit field, named) of an open unit; 0 or a closed unit: nothing. */
#define UNIT_ADD(id, field, value)                                                 \
	do {                                                                       \
		struct um_unit *__u = unit_get(id);                                \
		if (__u)                                                           \
			__sync_fetch_and_add(&__u->field, (value));                \
	} while (0)

/* Pages allocated by a thread of proc: the process's figure and its open units'. */
static __always_inline void proc_charge_page_alloc(struct um_proc *proc, __u64 bytes)
{
	__sync_fetch_and_add(&proc->page_alloc_bytes, bytes);
	UNIT_ADD(proc->units[0], page_alloc_bytes, bytes);
	UNIT_ADD(proc->units[1], page_alloc_bytes, bytes);
}

/*
 * Charge what a CPU holds for thread tid (of proc), if it runs that thread and this CPU may
 * take it (cpu_pending_takeable).
 */
static __always_inline void cpu_pending_charge(__u32 cpu, __u32 tid, struct um_proc *proc)
{
	__u64 bytes;

	if (cpu >= UM_MAX_CPUS || cpu_running[CPU_SLOT(cpu)] != um_cpu_running_entry(tid, 1))
		return;
	if (!cpu_pending_takeable(cpu))
		return;
	bytes = cpu_pending_take(cpu);
	if (bytes)
		proc_charge_page_alloc(proc, bytes);
}

/* What cpu_running says of the current thread on this CPU: 1 tracked, 0 not, -1 not named. */
static __always_inline int cpu_running_current(__u32 cpu)
{
	__u64 seen;

	if (cpu >= UM_MAX_CPUS)
		return -1;
	seen = cpu_running[CPU_SLOT(cpu)];
	return seen >> 1 == (__u32)bpf_get_current_pid_tgid() ? (int)(seen & 1) : -1;
}

/*
 * Whether the current task may be a tracked thread (see tracked_tasks): false only when the
 * marks are trusted and it has none.
 */
static __always_inline bool current_tracked(void)
{
	int known;

	if (!trust_marks)
		return true;
	known = cpu_running_current(bpf_get_smp_processor_id());
	return known >= 0 ? known : current_marked();
}

#endif /* UNITMETER_MODEL_BPF_H */
