// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory charge (see charge.bpf.h): where it is read, what watches it, and the one place it
 * is read where no RSS counter moves, a page added to the page cache by a tracked task (read(2),
 * readahead, writes): charged to its memory cgroup first, then added; the tracepoint fires after
 * both.
 */
#include "charge.bpf.h"

static __always_inline __u64 charge_counter_bytes(__u64 memcg, bool watermark)
{
	struct mem_cgroup *m = (struct mem_cgroup *)memcg;
	long pages;

	if (watermark)
		pages = BPF_CORE_READ(m, memory.watermark);
	else
		pages = BPF_CORE_READ(m, memory.usage.counter);
	return pages > 0 ? (__u64)pages * page_size : 0;
}

/*
 * The memory cgroup the loader named, when the task's is that one or below it. The memory controller's index
 * among the subsystems is the kernel's own (an enum, relocated).
 */
static __always_inline __u64 task_charge_memcg(struct task_struct *task, __u64 cgroup_id)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;
	__u64 id;
	int idx;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 0;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	cset = BPF_CORE_READ(task, cgroups);
	if (!cset || idx < 0 || idx >= 16)
		return 0;
	if (bpf_probe_read_kernel(&css, sizeof(css),
				  (void *)cset + bpf_core_field_offset(struct css_set, subsys) +
					  idx * sizeof(void *)) ||
	    !css)
		return 0;
	/* the named one or an ancestor: attach --job names a job's cgroup, whose processes are in
	 * its steps' (the charge is hierarchical: the job's counts its steps') */
	for (int depth = 0; depth < 16 && css; depth++) {
		id = BPF_CORE_READ(css, cgroup, kn, id);
		if (id == cgroup_id)
			return (__u64)css - bpf_core_field_offset(struct mem_cgroup, css);
		css = BPF_CORE_READ(css, parent);
	}
	return 0;
}

__noinline __u64 charge_learn_current(__u32 group)
{
	struct um_group *g = group_get(group);
	__u64 memcg;

	if (!g)
		return 0;
	memcg = g->charge_memcg;
	if (memcg || !g->charge_cgroup_id)
		return memcg;
	memcg = task_charge_memcg((struct task_struct *)bpf_get_current_task(), g->charge_cgroup_id);
	if (!memcg)
		return 0;
	if (um_cas(&g->charge_memcg, 0, memcg) == 0) {
		g->charge_watermark_start_bytes = charge_counter_bytes(memcg, true);
		g->charge_watermark_last_bytes = g->charge_watermark_start_bytes;
	}
	return g->charge_memcg;
}

/* A value read, for the group's watchers (a loop's argument: its slot, not a pointer). */
struct charge_reading {
	__u64 bytes;
	__u32 group;
};

/* Raise one watching unit's peak (a loop body: UM_LOOP). */
static long charge_watcher_raise(__u64 watcher, void *arg)
{
	struct charge_reading *r = arg;
	struct um_group *g = group_get(r->group);
	struct um_unit *unit;
	__u64 id;

	if (!g || watcher >= g->charge_watchers_used)
		return 1;
	id = g->charge_watchers[watcher & (UM_CHARGE_WATCHERS - 1)];
	unit = id ? unit_get(id) : NULL;
	if (unit)
		peak_raise(&unit->peak_charge_bytes, r->bytes);
	return 0;
}

/* A value read: the group's peak and every watching unit's. */
static __always_inline void charge_raise_locked(struct um_group *g, __u64 bytes)
{
	struct charge_reading r = { .bytes = bytes, .group = g->tag };

	peak_raise(&g->peak_charge_bytes, bytes);
	timeline_note_charge_locked(r.group, bytes);
	UM_LOOP(UM_CHARGE_WATCHERS, charge_watcher_raise, &r);
}

struct watcher_claim {
	__u64 id;
	__u32 watcher; /* index + 1; 0: none free */
	__u32 group;
};

static long claim_one_watcher(__u64 i, void *arg)
{
	struct watcher_claim *claim = arg;
	struct um_group *g = group_get(claim->group);

	if (!g)
		return 1;
	if (um_cas(&g->charge_watchers[i & (UM_CHARGE_WATCHERS - 1)], 0, claim->id) != 0)
		return 0;
	claim->watcher = i + 1;
	return 1;
}

/*
 * The counter now, and whether it moved since the last read (then it is kept as seen). Most reads
 * find it as it was: the kernel charges 64 pages at a time.
 */
static __always_inline bool charge_read_moved(struct um_group *g, __u64 *bytes)
{
	__u64 memcg = g->charge_memcg;

	/* attach: the target may never exec; it is learned at its first read */
	if (!memcg && !(memcg = charge_learn_current(g->tag))) {
		*bytes = 0;
		return false;
	}
	*bytes = charge_counter_bytes(memcg, false);
	if (*bytes == g->charge_seen_bytes)
		return false;
	g->charge_seen_bytes = *bytes;
	return true;
}

/*
 * Two functions, not one with a "lock needed" flag: where um_lock() is compiled out the flag is
 * dead, and clang (from 15 on) passes an undefined register for a global function's dead
 * argument, which the verifier refuses (R1 is not a scalar).
 */
__noinline __u64 charge_sample(__u32 group)
{
	struct um_group *g = group_get(group);
	__u64 bytes;
	bool held;

	if (!g || !g->charge_cgroup_id)
		return 0;
	if (!charge_read_moved(g, &bytes))
		return bytes;
	held = um_lock();
	charge_raise_locked(g, bytes);
	um_unlock(held);
	return bytes;
}

__noinline __u64 charge_sample_locked(__u32 group)
{
	struct um_group *g = group_get(group);
	__u64 bytes;

	if (!g || !g->charge_cgroup_id)
		return 0;
	if (charge_read_moved(g, &bytes))
		charge_raise_locked(g, bytes);
	return bytes;
}

__noinline __u64 charge_watermark_read(__u32 group)
{
	struct um_group *g = group_get(group);
	__u64 memcg, bytes;

	if (!g || !(memcg = g->charge_memcg))
		return 0;
	bytes = charge_counter_bytes(memcg, true);
	g->charge_watermark_last_bytes = bytes;
	return bytes;
}

__noinline int charge_unit_open_locked(__u64 id)
{
	struct um_unit *unit = unit_get(id);
	struct watcher_claim claim = { .id = id };
	struct um_group *g;
	__u64 bytes;

	if (!unit)
		return 0;
	unit->charge_watcher = 0;
	claim.group = unit->group;
	if (!charge_learn_current(claim.group)) {
		unit->start_charge_bytes = UM_CHARGE_UNKNOWN;
		unit->peak_charge_bytes = UM_CHARGE_UNKNOWN;
		return 0;
	}
	bytes = charge_sample_locked(claim.group);
	unit->start_charge_bytes = bytes;
	unit->peak_charge_bytes = bytes;
	unit->start_charge_watermark = charge_watermark_read(claim.group);
	UM_LOOP(UM_CHARGE_WATCHERS, claim_one_watcher, &claim);
	unit->charge_watcher = claim.watcher;
	g = group_get(claim.group);
	if (!g)
		return 0;
	if (!claim.watcher) {
		__sync_fetch_and_add(&g->charge_unwatched, 1);
		return 0;
	}
	if (g->charge_watchers_used < claim.watcher)
		g->charge_watchers_used = claim.watcher;
	return 0;
}

__noinline __u64 charge_unit_close_locked(__u64 id)
{
	struct um_unit *unit = unit_get(id);
	struct um_group *g;
	__u64 mark;
	__u32 w, group;

	if (!unit || unit->start_charge_bytes == UM_CHARGE_UNKNOWN)
		return UM_CHARGE_UNKNOWN;
	group = unit->group;
	charge_sample_locked(group);
	/* the kernel's high-water mark rose inside the window: the window held that value */
	mark = charge_watermark_read(group);
	if (mark > unit->start_charge_watermark)
		peak_raise(&unit->peak_charge_bytes, mark);
	w = unit->charge_watcher;
	g = group_get(group);
	if (!w || !g)
		return UM_CHARGE_UNKNOWN;
	um_cas(&g->charge_watchers[(w - 1) & (UM_CHARGE_WATCHERS - 1)], id, 0);
	return unit->peak_charge_bytes;
}

/* A raw tracepoint: its argument (a page before 5.16, a folio since) is not needed. */
SEC("raw_tp/mm_filemap_add_to_page_cache")
int handle_page_cache_add(void *ctx)
{
	struct um_thread *th;

	if (!current_tracked())
		return 0;
	/* the thread's run, whose charge it is (a run may watch none: charge_sample says) */
	th = bpf_map_lookup_elem(&threads, &(__u32){ (__u32)bpf_get_current_pid_tgid() });
	if (th)
		charge_sample(th->group);
	return 0;
}
