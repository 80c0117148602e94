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
	__u64 taken;      /* the handover word the switch-out took (model_pure.bpf.h) */
	__u32 cpu;
	__u32 tid;
};

/*
 * The part of a slice that falls inside an open unit: all of it when it lies inside; else the
 * wall-clock span inside, less the steal in it when the unit opened on this CPU. Nothing for a
 * unit whose close took the slice (the handover), and nothing past a closing unit's instant.
 */
static __always_inline void unit_cpu_add(__u64 id, const struct slice *s)
{
	struct um_unit *unit;
	__u64 inside, start, end;

	unit = unit_get(id);
	if (!unit)
		return;
	/* the edges are read after the clock (s->now) and the word's exchange (a full barrier;
	 * the baseline's, plain, is followed by um_exchange_fence) */
	start = unit_edge_settle(unit, UM_EDGE_START);
	if ((__s64)(s->now - start) <= 0)
		return;
	if (UM_SLICE_STATE(s->taken) == UM_SLICE_RUNNING && slice_claimed_by(s->taken, unit_slot(id)))
		return;
#if !UM_HAVE_FETCH_ATOMICS
	/* a unit closing: its close may have read this slice RUNNING and be taking it (the key) */
	if (UM_SLICE_STATE(s->taken) == UM_SLICE_RUNNING && *(volatile __u64 *)&unit->end_ns &&
	    slice_key_claim(s->tid, s->taken >> 32, id, UM_CLAIM_BY_SWITCH_OUT) == UM_CLAIM_LOST)
		return;
#endif
	end = unit_edge_settle(unit, UM_EDGE_END);
	if (s->since_ns >= start && (!end || s->now <= end)) {
		/* all of it, but never more than the wall time since the unit's start: a runtime
		 * that grew faster than the wall here began before the start (a switch-in held up
		 * after the kernel began the slice, a vCPU its host preempted) */
		inside = s->now - start;
		__sync_fetch_and_add(&unit->cpu_ns, s->cpu_ns < inside ? s->cpu_ns : inside);
		return;
	}
	inside = span_inside(s->since_ns, s->now, start, end);
	if (s->since_ns < start && unit->start_cpu == s->cpu)
		inside = on_cpu_span(inside, unit->start_steal_ns, s->steal_now);
	__sync_fetch_and_add(&unit->cpu_ns, s->cpu_ns < inside ? s->cpu_ns : inside);
}

/*
 * A tracked thread leaves its CPU: its slice goes to its process and to the open units of its
 * scope whose close has not taken it. The word goes LEAVING before anything is added and OFF
 * after: a close that finds it LEAVING waits, and reads the unit after the adds.
 */
static __always_inline void thread_switch_out(struct um_thread *th, __u32 tid,
					      struct task_struct *prev, __u64 now, bool dead)
{
	__u64 runtime = prev->se.sum_exec_runtime;
	struct slice s = {
		.cpu_ns = runtime - th->runtime_seen_ns,
		.since_ns = th->on_cpu_since_ns,
		.now = now,
		.cpu = th->cpu,
		.tid = tid,
	};
	__u32 tgid = th->tgid;
	struct um_proc *proc;
	bool held;

	proc = bpf_map_lookup_elem(&procs, &tgid);
	s.taken = um_xchg(&th->slice, UM_SLICE_LEAVING);
	th->runtime_seen_ns = runtime;
	th->last_out_ns = now;
	if (!proc) {
		__sync_fetch_and_add(&orphan_slices, 1);
	} else {
		__sync_fetch_and_add(&proc->cpu_ns, s.cpu_ns);
		if (proc->units[0]) {
			/* the baseline's exchange is plain: the word out before the units' ends are
			 * read (a unit a close could be taking from is listed since its open) */
			um_exchange_fence();
			s.steal_now = task_cpu_steal_ns(prev);
			unit_cpu_add(proc->units[0], &s);
			unit_cpu_add(proc->units[1], &s);
		}
	}
	/* after the adds: whoever sees OFF sees them */
	um_store_release(&th->slice, UM_SLICE_OFF);
	if (!dead)
		return;
	/* one that died without calling exit (another thread's exit_group or exec, a signal)
	 * leaves the active ones here */
	if (proc && !th->exit_called)
		__sync_fetch_and_add(&proc->active_threads, -1);
	bpf_map_delete_elem(&threads, &tid);
	/* the last thread's final switch-out: nothing more can be charged to the process */
	if (proc) {
		held = um_lock();
		if (live_threads_drop_locked(proc))
			proc_finish_locked(tgid, now);
		um_unlock(held);
	}
}

/*
 * A tracked thread arrives on this CPU. Its CPU's entry names it before the clock is read: a
 * close that read the clock and then found this CPU's entry not naming it has its instant
 * before this switch-in, so nothing of this slice is its unit's. Two approximations, each a
 * locked operation or a clock read less on every switch (BENCHMARKS.md, 2026-12-06): the
 * entry's store is seen by other CPUs tens of nanoseconds late, and when a tracked thread left
 * this CPU in the same switch its clock reading (`out_now`, before the switch-out's adds, a few
 * hundred nanoseconds earlier) stands for this one. The word is RUNNING only once the slice's
 * fields are there.
 */
static __always_inline void thread_switch_in(struct um_thread *th, struct task_struct *next,
					     __u32 cpu, __u64 entry, __u64 out_now)
{
	__u32 seq = th->slice_seq + 1;

	th->slice = UM_SLICE_ARRIVING;
	if (cpu < UM_MAX_CPUS)
		um_store_release(&cpu_running[CPU_SLOT(cpu)], entry);
	th->on_cpu_since_ns = out_now ? out_now : bpf_ktime_get_ns();
	/* updated by __schedule just before: with the line above, the two clocks' offset */
	th->in_rq_clock_ns = task_rq_clock_ns(next);
	th->steal_at_in_ns = task_cpu_steal_ns(next);
	th->cpu = cpu;
	th->slice_seq = seq;
	um_store_release(&th->slice, slice_running(seq));
}
/*
 * The current thread is tracked and on this CPU, but the CPU's entry does not name it: its
 * switch-in was not seen (the kernel made that switch without the sched_switch tracepoint:
 * docs/limitations.md). Make it now, as of now: a close from here on finds it, and its
 * switch-out counts its runtime (exact: the scheduler's) for this slice, which begins when the
 * unseen switch was made (as long before now as unseen_run_ns): a unit that opened in between is clipped at its start.
 * Placing the switch at the scheduler's own stamp (sched_info.last_arrival) was tried: the
 * stamp is not reliably that switch's on this kernel, and units came out milliseconds high;
 * taken as of now, the CPU before it went to a unit that opened in between.
 * Called from the programs a running thread meets first (system calls). Counted in
 * late_switch_ins.
 */
__noinline int thread_switch_in_late(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), cpu = bpf_get_smp_processor_id(), seq;
	struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 now = bpf_ktime_get_ns(), word, since;

	if (!th || cpu >= UM_MAX_CPUS)
		return 0;
	word = *(volatile __u64 *)&th->slice;
	/* OFF to ARRIVING by a swap: the thread's own switch-out, should it come meanwhile
	 * (a preempted program), takes the word back to OFF and this gives way. The baseline's swap
	 * is plain code and needs no atomicity: its kernels run these programs with preemption off,
	 * and only the thread's own CPU writes its word there (a close claims by key). */
	if (UM_SLICE_STATE(word) != UM_SLICE_OFF || um_cas(&th->slice, word, UM_SLICE_ARRIVING) != word)
		return 0;
	um_xchg(&cpu_running[CPU_SLOT(cpu)], um_cpu_running_entry(tid, 1));
	since = now - unseen_run_ns(th, now);
	/* the two clocks' offset stays that of the last seen switch-in: both move by as much */
	if (th->in_rq_clock_ns)
		th->in_rq_clock_ns += since - th->on_cpu_since_ns;
	th->on_cpu_since_ns = since;
	th->steal_at_in_ns = current_cpu_steal_ns();
	th->cpu = cpu;
	seq = th->slice_seq + 1;
	th->slice_seq = seq;
	/* the baseline's swap is plain: the slice's fields out before its word says RUNNING */
	um_order_fence();
	if (um_cas(&th->slice, UM_SLICE_ARRIVING, slice_running(seq)) == UM_SLICE_ARRIVING)
		__sync_fetch_and_add(&late_switch_ins, 1);
	return 0;
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
	__u32 cpu = bpf_get_smp_processor_id();
	struct um_thread *out = NULL, *in = NULL;
	__u64 entry = 0, now = 0;

	/* every context switch of the machine comes here: while the marks are trusted, a task
	 * without one is not looked up (the mark is a load for most, BENCHMARKS.md), and an entry
	 * left by an exit never seen, its tid now an unmarked task's, is not taken for it */
	if (!trust_marks || task_marked(prev))
		out = bpf_map_lookup_elem(&threads, &prev_tid);
	if (!trust_marks || task_marked(next))
		in = bpf_map_lookup_elem(&threads, &next_tid);
	if (cpu < UM_MAX_CPUS) {
		__u64 seen = cpu_running[CPU_SLOT(cpu)];

		/* the leaving thread's pages: before its entry can go with it (a dead one's does) */
		if (seen & 1)
			charge_leaving_pages(cpu, seen >> 1);
		entry = um_cpu_running_entry(next_tid, in != NULL);
	}
	/* read the clock only for tracked ones */
	if (out) {
		bool dead = task_is_dead(prev);

		/* what its cache took outside a fault (a dying thread's was folded at its exit) */
		if (UM_THREAD_CACHES && !dead)
			thread_cache_catch_up((__u64)prev, prev_tid, (__u64)prev->mm);
		/* what the kernel charged for it outside faults (page tables, slab, buffers) */
		charge_sample(out->group);
		now = bpf_ktime_get_ns();
		thread_switch_out(out, prev_tid, prev, now, dead);
	}
	/* this CPU's entry changes only now: a close that still finds the leaving thread named
	 * here finds its word LEAVING (and waits) or OFF (its adds done) */
	if (in)
		thread_switch_in(in, next, cpu, entry, now);
	else if (cpu < UM_MAX_CPUS)
		cpu_running[CPU_SLOT(cpu)] = entry;
	return 0;
}
