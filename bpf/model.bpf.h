/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The accounting model: how a change is added to the figures of a process, its mm, the group
 * and the open units whose scope holds it. Included by each *.bpf.c.
 *
 * Its arithmetic on values and lists (model_pure.bpf.h) needs no map, helper or kernel type,
 * so the host compiles and tests it (tests/bpf/); the scope lists' upkeep (model_scope.bpf.h)
 * needs only unit_get. This file applies them to the maps.
 */
#ifndef UNITMETER_MODEL_BPF_H
#define UNITMETER_MODEL_BPF_H

#include "compat.bpf.h"
#include "model_pure.bpf.h"

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
 * A unit's edges, start_ns and end_ns, are instants fixed after the unit is seen to open (is
 * listed) or to close: the edge is UM_EDGE_PENDING while it is being fixed. The open (close)
 * writes PENDING, makes the unit visible (closing), reads the clock and compare-and-swaps it in.
 * A switch-out that reads PENDING does the same with its own clock read after that look, and
 * the first swap fixes the instant: it lies after the publication and before the edge's
 * program has ended, as any instant of the open (close) may. So a switch-out that read its
 * clock before it looked and did not see the edge ended its slice before it: reading the clock
 * first and publishing after (as before) let a switch-out on another CPU, in between, count
 * past the close (milliseconds when the closing vCPU was held up: issue #40).
 */
#define UM_EDGE_PENDING (~0ULL)

/* The instant of a unit's edge, fixed now if it was still pending (0: an end not reached). */
static __always_inline __u64 unit_edge_settle(__u64 *edge)
{
	__u64 seen = *(volatile __u64 *)edge, now;

	if (seen != UM_EDGE_PENDING)
		return seen;
	now = bpf_ktime_get_ns(); /* after the look: the instant follows the publication */
	seen = um_cas(edge, UM_EDGE_PENDING, now);
	return seen == UM_EDGE_PENDING ? now : seen;
}

/*
 * The CPU the current thread, tracked but found running unseen at now (its switch-in made
 * without the sched_switch tracepoint), has used since its last seen switch-out: it has run
 * without a break since (a switch away from it is seen). The scheduler's runtime as of now, its
 * clock taken from ours through the two clocks' offset at the last seen switch-in; never more
 * than the time since that switch-out (the offset was learned on whichever CPU that switch-in
 * ran on). 0 when a clock is missing.
 */
static __always_inline __u64 unseen_run_ns(const struct um_thread *th, __u64 now)
{
	__u64 runtime;

	if (!th->in_rq_clock_ns || !th->on_cpu_since_ns)
		return 0;
	runtime = current_runtime_at(now + (th->in_rq_clock_ns - th->on_cpu_since_ns));
	if (runtime <= th->runtime_seen_ns)
		return 0;
	runtime -= th->runtime_seen_ns;
	if (now > th->last_out_ns && runtime > now - th->last_out_ns)
		runtime = now - th->last_out_ns;
	return runtime;
}

#include "model_scope.bpf.h"

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
	timeline_note_rss_locked(group > 0 ? group : 0);
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
