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

/* A record for the ring of group's run; NULL (counted) when it is full. */
static __always_inline void *record_reserve(__u32 group, __u64 size)
{
	__u32 slot = UM_GROUP_SLOT(group);
	void *ring = bpf_map_lookup_elem(&group_rings, &slot);
	struct um_group *g;
	void *rec;

	/* the run has ended (its slot may be another run's by now): nobody reads */
	g = group_get(group);
	if (!ring || !g)
		return NULL;
	rec = bpf_ringbuf_reserve(ring, size, 0);
	if (!rec)
		__sync_fetch_and_add(&g->lost_records, 1);
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

#if !UM_HAVE_FETCH_ATOMICS
/*
 * Insert the key (tid, seq, id) with value unless it is there: the value it holds after, ours
 * or, with UM_KEY_HELD, the one inserted first; 0 when neither (the map full: counted). A
 * function (units.bpf.c): its key on its own stack, not on that of sched_switch's deepest chain
 * (a close at a process's last switch-out), which 5.10 holds to 512 bytes.
 */
#define UM_KEY_HELD (1ULL << 63)
extern __u64 key_first_value(__u32 tid, __u32 seq, __u64 id, __u64 value);
#endif

static __always_inline __u64 *unit_edge(struct um_unit *unit, int which)
{
	return which == UM_EDGE_END ? &unit->end_ns : &unit->start_ns;
}

#if UM_HAVE_FETCH_ATOMICS
/* The instant of a unit's edge, fixed now if it was still pending (0: an end not reached). */
static __always_inline __u64 unit_edge_settle(struct um_unit *unit, int which)
{
	__u64 *edge = unit_edge(unit, which), seen = *(volatile __u64 *)edge, now;

	if (seen != UM_EDGE_PENDING)
		return seen;
	now = bpf_ktime_get_ns(); /* after the look: the instant follows the publication */
	seen = um_cas(edge, UM_EDGE_PENDING, now);
	return seen == UM_EDGE_PENDING ? now : seen;
}

/* The edge's own program fixes it as any other reader would. */
#define unit_edge_fix unit_edge_settle
#else
/*
 * Without a compare-and-swap, the first fix is decided by a key, (tid 0, edge, unit) in the
 * handover keys' map (model_pure's word cannot be swapped here either): inserted only if absent
 * with the fixer's clock, it holds the instant every later fixer takes. The edge's own program
 * then writes the instant and removes the key; a fixer that comes after the removal inserts
 * its own again, and so reads the edge once more, which holds the instant by then (written
 * before the removal). A key left so goes with the unit's (the loader's sweep). Functions in
 * units.bpf.c, their keys on their own stacks.
 */
extern int unit_edge_forget(__u64 id, __u32 which);
/* The edge of the unit in slot found pending, as of now: its instant (units.bpf.c). */
extern __u64 unit_edge_pending(__u32 slot, __u32 which, __u64 now);

/* The instant of a unit's edge, decided by its key; 0 when the key is gone. */
static __always_inline __u64 unit_edge_claim(__u64 id, __u32 which, __u64 now)
{
	return key_first_value(0, which, id, now) & ~UM_KEY_HELD;
}

static __always_inline __u64 unit_edge_settle(struct um_unit *unit, int which)
{
	__u64 seen = *(volatile __u64 *)unit_edge(unit, which);

	if (seen != UM_EDGE_PENDING)
		return seen;
	/* the clock after the look: the instant follows the publication */
	return unit_edge_pending(unit_slot(unit->id), which, bpf_ktime_get_ns());
}

static __always_inline __u64 unit_edge_fix(struct um_unit *unit, int which)
{
	__u64 now = bpf_ktime_get_ns(), id = unit->id, instant = unit_edge_claim(id, which, now);

	if (!instant)
		instant = now;
	*unit_edge(unit, which) = instant;
	unit_edge_forget(id, which);
	return instant;
}
#endif

/*
 * The baseline's handover of a running slice (model_pure.bpf.h has the word's, for builds with
 * an exchange). For each unit, the close that finds the thread's word RUNNING with slice seq and
 * the thread's switch-out of that slice both insert the key (tid, seq, unit); the insert is one
 * step under the map's bucket lock, so exactly one of them has it, whatever the order:
 * - The close publishes its end, then (um_exchange_fence) reads the word; the switch-out
 *   publishes LEAVING, then (the same fence) reads the unit's end. Each ordered store before its
 *   load: if the close read RUNNING, the switch-out's end read follows the close's publication
 *   and sees the unit closing, so it inserts too. A switch-out that sees no end was read LEAVING
 *   or OFF by any close of the unit, which takes nothing (it waits for OFF).
 * - The key is never replaced, and the loader removes it only a sweep (100 ms) after it saw the
 *   unit's slot no longer holding the unit, after its close: while the close runs, a key that
 *   is there stays there, and a switch-out that read the unit before would have to be held up
 *   (preemption off) that long to insert after the removal, adding to a unit gone.
 * Returns who has the slice for this unit: the caller (WON), the other (LOST), the caller
 * already (MINE: a close that met the thread on two CPUs); FAILED (the map full: counted) when
 * neither can tell, in which case a close leaves the slice to the switch-out, which adds it.
 */
enum um_claim { UM_CLAIM_WON, UM_CLAIM_LOST, UM_CLAIM_MINE, UM_CLAIM_FAILED };

#if !UM_HAVE_FETCH_ATOMICS
static __always_inline enum um_claim slice_key_claim(__u32 tid, __u32 seq, __u64 id, __u64 by)
{
	__u64 held = key_first_value(tid, seq, id, by);

	if (!held)
		return UM_CLAIM_FAILED;
	if (!(held & UM_KEY_HELD))
		return UM_CLAIM_WON;
	return (held & ~UM_KEY_HELD) == by ? UM_CLAIM_MINE : UM_CLAIM_LOST;
}
#endif

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

/* An RSS change of one mm: the mm's own figure, its group's, and its open units'. */
static __always_inline void rss_apply_locked(struct um_mm *mm, __s64 delta)
{
	struct um_group *g = group_get(mm->group);

	peak_raise(&mm->peak_rss_bytes, um_fetch_add(&mm->rss_bytes, delta) + delta);
	if (g) {
		__s64 sum = um_fetch_add(&g->rss_bytes, delta) + delta;

		peak_raise(&g->peak_rss_bytes, sum);
		timeline_note_rss_locked(mm->group, sum > 0 ? sum : 0);
	}
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
