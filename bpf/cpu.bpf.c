// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPU: every slice of every tracked thread, from sched_switch. A slice's CPU time is the growth of
 * the scheduler's own se.sum_exec_runtime (what CLOCK_THREAD_CPUTIME_ID and /proc/PID/schedstat
 * report), so totals carry no tick rounding; the switch-in time only clips a slice at a unit's
 * edges.
 */
#include "model.bpf.h"
#include "charge.bpf.h"
#include "rss_cache.bpf.h"

struct slice {
	__u64 cpu_ns;     /* scheduler runtime of the slice: exact */
	__u64 since_ns;   /* switch-in */
	__u64 now;        /* switch-out */
	__u64 steal_now;  /* this CPU's cumulative steal at switch-out */
	__u32 cpu;
};

/*
 * The part of a slice that falls inside an open unit: all of it when it began after the unit
 * opened; else the span since the opening, less the steal in it when the unit opened on this CPU.
 */
static __always_inline void unit_cpu_add(__u64 id, const struct slice *s)
{
	struct um_unit *unit;
	__u64 inside;

	unit = unit_get(id);
	if (!unit || (__s64)(s->now - unit->start_ns) <= 0)
		return;
	inside = s->now - unit->start_ns;
	if (s->since_ns < unit->start_ns && unit->start_cpu == s->cpu)
		inside = on_cpu_span(inside, unit->start_steal_ns, s->steal_now);
	__sync_fetch_and_add(&unit->cpu_ns, s->cpu_ns < inside ? s->cpu_ns : inside);
}

static __always_inline void thread_switch_out(struct um_thread *th, __u32 tid,
					      struct task_struct *prev, __u64 now, bool dead)
{
	__u64 runtime = prev->se.sum_exec_runtime;
	struct slice s = {
		.cpu_ns = runtime - th->runtime_seen_ns,
		.since_ns = th->on_cpu_since_ns,
		.now = now,
		.cpu = th->cpu,
	};
	__u32 tgid = th->tgid;
	struct um_proc *proc;

	th->runtime_seen_ns = runtime;
	th->last_out_ns = now;
	th->running = 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc) {
		__sync_fetch_and_add(&orphan_slices, 1);
	} else {
		__sync_fetch_and_add(&proc->cpu_ns, s.cpu_ns);
		if (proc->units[0]) {
			s.steal_now = task_cpu_steal_ns(prev);
			unit_cpu_add(proc->units[0], &s);
			unit_cpu_add(proc->units[1], &s);
		}
	}
	if (!dead)
		return;
	/* one that died without calling exit (another thread's exit_group or exec, a signal)
	 * leaves the active ones here */
	if (proc && !th->exit_called)
		__sync_fetch_and_add(&proc->active_threads, -1);
	bpf_map_delete_elem(&threads, &tid);
	/* the last thread's final switch-out: nothing more can be charged to the process */
	if (proc) {
		bool held = um_lock();

		if (live_threads_drop_locked(proc))
			proc_finish_locked(tgid, now);
		um_unlock(held);
	}
}

/*
 * Charge this CPU's pending page bytes to the thread it ran (normally the one switching out).
 * They are taken out in any case: left behind, they would go to the next tracked thread here,
 * of any process. A thread whose process is already gone counts as an orphan slice.
 */
static __always_inline void charge_leaving_pages(__u32 cpu, __u32 tid)
{
	__u64 bytes = cpu_pending_take(cpu);
	struct um_thread *th;
	struct um_proc *proc = NULL;
	__u32 tgid;

	if (!bytes)
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th) {
		tgid = th->tgid;
		proc = bpf_map_lookup_elem(&procs, &tgid);
	}
	if (proc)
		proc_charge_page_alloc(proc, bytes);
	else
		__sync_fetch_and_add(&orphan_slices, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tid = prev->pid, next_tid = next->pid;
	struct um_thread *out = bpf_map_lookup_elem(&threads, &prev_tid);
	struct um_thread *in = bpf_map_lookup_elem(&threads, &next_tid);
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = 0;

	if (cpu < UM_MAX_CPUS) {
		__u64 seen = cpu_running[CPU_SLOT(cpu)];
		bool tracked = in != NULL;

		/* the leaving thread's pages: before its entry can go with it (a dead one's does) */
		if (seen & 1)
			charge_leaving_pages(cpu, seen >> 1);
		/* an entry left by an exit never seen, its tid now another task's: the mark decides */
		if (tracked && trust_marks && !task_marked(next))
			tracked = false;
		cpu_running[CPU_SLOT(cpu)] = um_cpu_running_entry(next_tid, tracked);
	}
	/* every context switch of the machine comes here: read the clock only for tracked ones */
	if (out) {
		bool dead = task_is_dead(prev);

		/* what its cache took outside a fault (a dying thread's was folded at its exit) */
		if (UM_THREAD_CACHES && !dead)
			thread_cache_catch_up((__u64)prev, prev_tid, (__u64)prev->mm);
		/* what the kernel charged for it outside faults (page tables, slab, buffers) */
		charge_sample();
		now = bpf_ktime_get_ns();
		thread_switch_out(out, prev_tid, prev, now, dead);
	}
	if (in) {
		in->on_cpu_since_ns = now ? now : bpf_ktime_get_ns();
		in->steal_at_in_ns = task_cpu_steal_ns(next);
		in->cpu = cpu;
		in->running = 1;
	}
	return 0;
}
