// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Units: one call of a unit function in one process, from the uprobe on its entry to the
 * uretprobe on its return. Only the outermost call opens a unit; the loader attaches the same two
 * programs to every spec, with the spec's index as the attach cookie. For interpreted code the
 * two are plain uprobes on the begin and end markers, whose first argument is the spec index.
 */
#include "state.bpf.h"

/* Unit records waiting in the ring before the reader is woken: ~600 units. */
#define UM_WAKEUP_BYTES (64 * 1024)

struct unit_edge {
	__u64 id;
	__u64 start_ns;
	__u64 start_steal_ns;
	__u32 start_cpu;
	__u32 closer_tid;      /* the thread closing the unit, whose CPU's steal we can read */
	__u64 closer_steal_ns; /* that CPU's cumulative steal now */
	__u64 now;
	__u64 cpu_ns;
};

/*
 * Another scope thread still on a CPU when the unit closes: its running slice so far counts, and
 * the pages that CPU holds for it.
 */
static long add_running_slice(struct bpf_map *map, __u32 *tid, struct um_thread *th,
			      struct unit_edge *edge)
{
	__u32 tgid = th->tgid;
	struct um_proc *proc;
	__u64 since;

	if (*tid == edge->closer_tid || !th->running)
		return 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc || (proc->units[0] != edge->id && proc->units[1] != edge->id))
		return 0;
	cpu_pending_charge(th->cpu, *tid, proc);
	since = th->on_cpu_since_ns > edge->start_ns ? th->on_cpu_since_ns : edge->start_ns;
	if (edge->now > since)
		edge->cpu_ns += edge->now - since;
	return 0;
}

/*
 * The closing thread is on its CPU by definition. Its slice so far is the wall-clock span since
 * its switch-in, less the steal inside it. On these machines a switch-in is now and then not
 * seen (the thread is found marked off-CPU), so the scheduler's own count since the last
 * switch-out, exact to the last tick, stands in as a floor; such misses are counted.
 */
static __always_inline __u64 closer_slice(struct unit_edge *edge)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct um_thread *th = bpf_map_lookup_elem(&threads, &edge->closer_tid);
	__u64 span = 0, runtime, inside, start_steal;

	if (!th)
		return 0;
	/* the unit's start, as seen on this thread's CPU (another CPU's steal is not comparable) */
	start_steal = edge->start_cpu == th->cpu ? edge->start_steal_ns : edge->closer_steal_ns;
	inside = edge->now > edge->start_ns ? edge->now - edge->start_ns : 0;
	inside = on_cpu_span(inside, start_steal, edge->closer_steal_ns);
	if (!th->running)
		__sync_fetch_and_add(&switch_in_misses, 1);
	else if (th->on_cpu_since_ns > edge->start_ns)
		span = edge->now > th->on_cpu_since_ns ?
		       on_cpu_span(edge->now - th->on_cpu_since_ns, th->steal_at_in_ns,
				   edge->closer_steal_ns) : 0;
	else
		span = inside; /* on its CPU since before the unit began */
	runtime = task->se.sum_exec_runtime;
	runtime = runtime > th->runtime_seen_ns ? runtime - th->runtime_seen_ns : 0;
	/* accounted up to a switch-out before the unit began: only the part inside counts */
	if (th->last_out_ns < edge->start_ns && runtime > inside)
		runtime = inside;
	return span > runtime ? span : runtime;
}

static long forget_in_proc(struct bpf_map *map, __u32 *tgid, struct um_proc *proc, __u64 *id)
{
	units_remove(proc->units, *id);
	return 0;
}

static long forget_in_mm(struct bpf_map *map, __u64 *mm_key, struct um_mm *mm, __u64 *id)
{
	units_remove(mm->units, *id);
	return 0;
}

__hidden int unit_close(__u32 tgid, __u64 id, __u32 status)
{
	struct unit_edge edge = { .id = id, .now = bpf_ktime_get_ns() };
	struct um_unit_record *rec;
	struct um_proc *owner;
	struct um_unit *unit;
	bool alone;

	unit = unit_get(id);
	if (!unit)
		return 0;
	owner = bpf_map_lookup_elem(&procs, &tgid);
	/* the closing thread's pages so far belong to the unit (at exit, already charged) */
	if (owner && current_tgid() == tgid)
		cpu_pending_charge(bpf_get_smp_processor_id(), (__u32)bpf_get_current_pid_tgid(),
				   owner);
	edge.start_ns = unit->start_ns;
	edge.start_steal_ns = unit->start_steal_ns;
	edge.start_cpu = unit->start_cpu;
	edge.closer_tid = (__u32)bpf_get_current_pid_tgid();
	edge.closer_steal_ns = task_cpu_steal_ns(bpf_get_current_task_btf());
	edge.cpu_ns = closer_slice(&edge);
	/*
	 * A single-threaded process that forked nothing inside the unit (most fits) needs no walk
	 * over the maps: its own lists are the only ones that name the unit. A call storm of tiny
	 * units would otherwise pay for every bucket of three maps on each return.
	 */
	alone = owner && unit->processes == 1 && owner->live_threads == 1;
	if (alone) {
		struct um_mm *mm = owner->mm ? bpf_map_lookup_elem(&mms, &owner->mm) : NULL;

		units_remove(owner->units, id);
		if (mm)
			units_remove(mm->units, id);
	} else {
		bpf_for_each_map_elem(&threads, add_running_slice, &edge, 0);
		/* from here on no slice or page of the scope is charged to this unit */
		bpf_for_each_map_elem(&procs, forget_in_proc, &id, 0);
		bpf_for_each_map_elem(&mms, forget_in_mm, &id, 0);
	}
	if (owner && owner->own_unit == id) {
		owner->own_unit = 0;
		owner->unit_depth = 0;
	}

	rec = record_reserve(sizeof(*rec));
	if (rec) {
		rec->type = UM_REC_UNIT;
		rec->pid = unit->pid;
		rec->spec = unit->spec;
		rec->status = status;
		rec->id = id;
		rec->start_ns = unit->start_ns;
		rec->end_ns = edge.now;
		rec->cpu_ns = unit->cpu_ns + edge.cpu_ns;
		rec->start_rss_bytes = unit->start_rss_bytes;
		rec->peak_rss_bytes = unit->peak_rss_bytes;
		rec->n_rss_changes = unit->n_rss_changes;
		rec->page_alloc_bytes = unit->page_alloc_bytes;
		rec->output_bytes = unit->output_bytes;
		rec->processes = unit->processes;
		rec->threads = unit->threads;
		/*
		 * Waking the reader for every unit costs more than a tiny unit itself: wake it only
		 * when a batch is waiting; its 100 ms poll picks up the rest.
		 */
		bpf_ringbuf_submit(rec, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > UM_WAKEUP_BYTES ?
					BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	}
	/* free the slot: charges still in flight on other CPUs no longer match its id */
	__sync_val_compare_and_swap(&unit->id, id, 0);
	return 0;
}

/* A unit opens: what the process's other running threads hold goes to the units before it. */
static long charge_sibling_pages(struct bpf_map *map, __u32 *tid, struct um_thread *th,
				 __u32 *tgid)
{
	struct um_proc *proc;

	if (th->tgid != *tgid || !th->running)
		return 0;
	proc = bpf_map_lookup_elem(&procs, tgid);
	if (proc)
		cpu_pending_charge(th->cpu, *tid, proc);
	return 0;
}

struct claim {
	__u64 seq;
	__u64 id;
	struct um_unit *unit;
};

static long claim_slot(__u32 i, struct claim *c)
{
	__u32 slot = (__u32)((c->seq + i) & (UM_UNIT_SLOTS - 1));
	struct um_unit *unit = bpf_map_lookup_elem(&units, &slot);

	if (unit && __sync_val_compare_and_swap(&unit->id, 0, UM_UNIT_CLAIMING) == 0) {
		c->id = c->seq * UM_UNIT_SLOTS + slot;
		c->unit = unit;
		return 1; /* stop */
	}
	return 0;
}

/*
 * Take a free slot for a new unit, from its sequence number's own onwards (it is almost always
 * free: a slot is busy only while a unit opened a multiple of UM_UNIT_SLOTS earlier is still
 * open). Returns the slot marked UM_UNIT_CLAIMING and sets *id, or NULL when all are open
 * (counted as a full map).
 */
static __always_inline struct um_unit *unit_claim(__u64 seq, __u64 *id)
{
	struct claim c = { .seq = seq };

	bpf_loop(UM_UNIT_SLOTS, claim_slot, &c, 0);
	if (!c.unit) {
		__sync_fetch_and_add(&map_full, 1);
		return NULL;
	}
	*id = c.id;
	return c.unit;
}

SEC("uprobe")
int BPF_KPROBE(unit_enter)
{
	__u32 tgid = current_tgid();
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_unit *unit;
	struct um_mm *mm;
	__u64 mm_key;
	__u32 spec;
	__u64 id = 0;
	__s64 rss;

	if (!proc)
		return 0;
	/* recursion, or a second thread entering while the unit is open: part of the same unit */
	if (__sync_fetch_and_add(&proc->unit_depth, 1) != 0)
		return 0;
	/* pages allocated before the unit are not the unit's: charge what CPUs hold for them */
	cpu_pending_charge(bpf_get_smp_processor_id(), (__u32)bpf_get_current_pid_tgid(), proc);
	if (proc->live_threads > 1)
		bpf_for_each_map_elem(&threads, charge_sibling_pages, &tgid, 0);
	unit = unit_claim(__sync_fetch_and_add(&next_unit_id, 1) + 1, &id);
	if (!unit)
		return 0;
	mm_key = proc->mm;
	mm = mm_key ? bpf_map_lookup_elem(&mms, &mm_key) : NULL;
	spec = bpf_get_attach_cookie(ctx);
	if (spec == UM_SPEC_FROM_ARG)
		spec = (__u32)PT_REGS_PARM1(ctx);
	rss = mm ? mm->rss_bytes : 0;
	/* every field before the id: until the id is there, nothing is charged to the slot */
	unit->pid = tgid;
	unit->spec = spec;
	unit->start_ns = bpf_ktime_get_ns();
	unit->start_steal_ns = task_cpu_steal_ns(bpf_get_current_task_btf());
	unit->start_cpu = bpf_get_smp_processor_id();
	unit->rss_bytes = rss;
	unit->start_rss_bytes = rss;
	unit->peak_rss_bytes = rss;
	unit->cpu_ns = 0;
	unit->n_rss_changes = 0;
	unit->page_alloc_bytes = 0;
	unit->output_bytes = 0;
	unit->processes = 1;
	unit->threads = proc->live_threads;
	unit->pad = 0;
	__sync_val_compare_and_swap(&unit->id, UM_UNIT_CLAIMING, id);
	proc->own_unit = id;
	units_push(proc->units, id);
	if (mm)
		units_push(mm->units, id);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(unit_return)
{
	__u32 tgid = current_tgid();
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	__u64 id;

	/* depth 0: a call that began before attach, whose entry was never seen */
	if (!proc || !proc->unit_depth)
		return 0;
	/* the unit this return may close, read before the depth drops: once it is 0 another
	 * thread's entry can open a new unit, which this return must not close */
	id = proc->own_unit;
	if (__sync_fetch_and_add(&proc->unit_depth, -1) != 1)
		return 0;
	if (id)
		unit_close(tgid, id, UM_UNIT_COMPLETE);
	return 0;
}
