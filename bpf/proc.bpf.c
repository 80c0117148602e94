// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracked groups: a process forked by a tracked process joins its group (and the open units its
 * parent is in), exec closes a unit that can no longer return, and a process is finished when its
 * last thread has switched out for good (cpu.bpf.c calls proc_finish_locked).
 */
#include "model.bpf.h"
#include "charge.bpf.h"

#define UM_SIGSTOP 19

/*
 * --lookup-at-exec: bare unit symbols are looked up in each program a tracked process execs. A
 * program its run has not yet put in exec_programs stops its process at the exec (the stop is
 * taken on the way back to user space, before the program's first instruction), so the loader
 * can attach the probes before any unit can start, then continue it. The loader sets its group's
 * hold_at_exec before attaching and clears it before its final drain, so nobody is held whom it
 * will not continue.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct um_exec_key);
	__type(value, __u32);
} exec_programs SEC(".maps");

/*
 * attach --cgroup: runs that watch a cgroup (struct um_group: its kernfs id, the directory's
 * inode, and the id of its hierarchy: cgroup v1 numbers each, the v2 one is 0; kernfs ids are
 * only unique within one). Counted so that a node where none does skips the search.
 */
__u32 join_watchers;

/* cgroups nest at most this deep below the watched one (slurmd: job/step/user/task) */
#define UM_CGROUP_DEPTH 16

/* Groups searched for a watched cgroup: the baseline (no bpf_loop) runs one group only. */
#if UM_HAVE_BPF_LOOP
#define UM_JOIN_GROUPS UM_MAX_GROUPS
#else
#define UM_JOIN_GROUPS 1
#endif

/* Whether cgrp is the group's watched cgroup or below it, walking up through each parent's css. */
static __always_inline bool in_watched_cgroup(struct cgroup *cgrp, const struct um_group *g)
{
	__u64 watched = g->join_cgroup_id;

	if (!cgrp || !watched || BPF_CORE_READ(cgrp, root, hierarchy_id) != (int)g->join_hierarchy_id)
		return false;
	for (int i = 0; i < UM_CGROUP_DEPTH && cgrp; i++) {
		if (BPF_CORE_READ(cgrp, kn, id) == watched)
			return true;
		/* the root's css has no parent: NULL ends the walk */
		cgrp = BPF_CORE_READ(cgrp, self.parent, cgroup);
	}
	return false;
}

/* Tell group's loader that process tgid, not tracked, is now in its watched cgroup. */
static __always_inline void say_joined(__u32 group, __u32 tgid)
{
	struct um_cgroup_join *rec;

	if (bpf_map_lookup_elem(&procs, &tgid))
		return;
	rec = record_reserve(group, sizeof(*rec));
	if (!rec)
		return;
	rec->type = UM_REC_CGROUP_JOIN;
	rec->pid = tgid;
	rec->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

/* A process that entered a cgroup (v2 only: any_hierarchy 0), and the one it entered. */
struct cgroup_entry {
	struct cgroup *cgrp;
	__u32 tgid;
	__u32 v2_only;
};

/* One group's look at a process entering a cgroup (a loop body: UM_LOOP). */
static long join_check_group(__u64 slot, void *arg)
{
	struct cgroup_entry *e = arg;
	__u32 key = (__u32)slot;
	struct um_group *g = bpf_map_lookup_elem(&groups, &key);

	if (!g || !g->tag || !g->join_cgroup_id || (e->v2_only && g->join_hierarchy_id))
		return 0;
	if (in_watched_cgroup(e->cgrp, g))
		say_joined(g->tag, e->tgid);
	return 0;
}

/*
 * A write to cgroup.procs (or tasks) moved a process: fired once per move, after it, in v1 once
 * per hierarchy written (task is the group leader when threadgroup is set).
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(handle_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct cgroup_entry e = { .cgrp = dst, .tgid = task->tgid };

	if (join_watchers)
		UM_LOOP(UM_JOIN_GROUPS, join_check_group, &e);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, tgid = child->tgid, tid = child->pid;
	__u32 forker = (__u32)bpf_get_current_pid_tgid();
	struct um_proc *pproc = bpf_map_lookup_elem(&procs, &ptgid);
	struct um_thread th = {};
	struct um_proc proc = {};
	struct um_proc_start *rec;
	__u64 *pending;
	int err;

	if (!pproc) {
		/* clone3(CLONE_INTO_CGROUP), cgroup v2 only (5.7), puts the child straight into a
		 * cgroup its parent is not in: no move, so no cgroup_attach_task */
		if (join_watchers && tgid != ptgid) {
			struct cgroup_entry e = {
				.cgrp = BPF_CORE_READ(child, cgroups, dfl_cgrp),
				.tgid = tgid,
				.v2_only = 1,
			};

			UM_LOOP(UM_JOIN_GROUPS, join_check_group, &e);
		}
		return 0;
	}
	/* a process of a run that has ended: its children are nobody's */
	if (!group_get(pproc->group))
		return 0;
	mark_tracked(child);
	th.tgid = tgid;
	th.group = pproc->group;
	th.runtime_seen_ns = child->se.sum_exec_runtime;
	/* a leftover entry for a recycled tid would charge this thread to its old owner: replace */
	err = map_insert(&threads, &tid, &th);
	if (err && err != -UM_EEXIST)
		/* a tracked thread without an entry: what each CPU runs is no longer a sure test */
		trust_marks = 0;
	if (err == -UM_EEXIST) {
		__sync_fetch_and_add(&thread_collisions, 1);
		bpf_map_update_elem(&threads, &tid, &th, BPF_EXIST);
	}
	if (tgid == ptgid) {
		/* a new thread of a tracked process */
		__sync_fetch_and_add(&pproc->live_threads, 1);
		__sync_fetch_and_add(&pproc->active_threads, 1);
		__sync_fetch_and_add(&pproc->threads_seen, 1);
		UNIT_ADD(pproc->units[0], threads, 1);
		UNIT_ADD(pproc->units[1], threads, 1);
		return 0;
	}

	proc.ppid = ptgid;
	proc.group = pproc->group;
	proc.live_threads = 1;
	proc.active_threads = 1;
	proc.threads_seen = 1;
	proc.start_ns = bpf_ktime_get_ns();
	proc.units[0] = pproc->units[0];
	proc.units[1] = pproc->units[1];
	pending = bpf_map_lookup_elem(&pending_mm, &forker);
	if (pending && *pending) {
		struct um_mm *mm = bpf_map_lookup_elem(&mms, pending);

		if (mm && !mm->tgid) {
			mm->tgid = tgid;
			proc.mm = *pending;
		}
	}
	bpf_map_delete_elem(&pending_mm, &forker);
	if (map_insert(&procs, &tgid, &proc))
		return 0;
	UNIT_ADD(proc.units[0], processes, 1);
	UNIT_ADD(proc.units[1], processes, 1);
	UNIT_ADD(proc.units[0], threads, 1);
	UNIT_ADD(proc.units[1], threads, 1);

	rec = record_reserve(proc.group, sizeof(*rec));
	if (!rec)
		return 0;
	rec->type = UM_REC_PROC_START;
	rec->pid = tgid;
	rec->ppid = ptgid;
	rec->is_root = 0;
	rec->ts_ns = proc.start_ns;
	BPF_CORE_READ_STR_INTO(&rec->comm, child, comm);
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task->tgid;
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_exec_key looked_up = {};
	struct um_proc_exec *rec;
	struct um_group *g;
	__u32 group;
	bool held;

	if (!proc)
		return 0;
	group = proc->group;
	held = um_lock();
	proc->flags &= ~UM_PROC_AWAIT_EXEC;
	/* a non-leader thread that execs takes the tid of the leader, which is gone by now:
	 * its CPU accounting moves to the new key, and so does its CPU's entry in cpu_running */
	if ((__u32)old_pid != tgid) {
		__u32 old_tid = old_pid, cpu = bpf_get_smp_processor_id();
		struct um_thread *th = bpf_map_lookup_elem(&threads, &old_tid);

		if (cpu < UM_MAX_CPUS && cpu_running[CPU_SLOT(cpu)] == um_cpu_running_entry(old_tid, 1))
			cpu_running[CPU_SLOT(cpu)] = um_cpu_running_entry(tgid, 1);
		if (th) {
			struct um_thread moved = *th;

			bpf_map_update_elem(&threads, &tgid, &moved, BPF_ANY);
			bpf_map_delete_elem(&threads, &old_tid);
		}
	}
	/* the unit function's frame is gone with the old image: its return can never come */
	if (proc->own_unit)
		unit_close_locked(tgid, proc->own_unit, UM_UNIT_INCOMPLETE_EXEC);
	proc->unit_depth = 0;
	/* the mm the exec built */
	mm_adopt_current_locked();
	/* the run's command has just entered its memory cgroup's life: learn it */
	charge_learn_current(group);
	um_unlock(held);

	rec = record_reserve(group, sizeof(*rec));
	if (!rec)
		return 0;
	rec->type = UM_REC_PROC_EXEC;
	rec->pid = tgid;
	rec->ts_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&rec->comm, task, comm);
	looked_up.program.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	looked_up.program.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	looked_up.group = group;
	rec->program = looked_up.program;
	rec->held = 0;
	rec->pad = 0;
	/* stop only once the record is reserved: a process stopped without one would never resume */
	g = group_get(group);
	if (g && g->hold_at_exec && !bpf_map_lookup_elem(&exec_programs, &looked_up) &&
	    bpf_send_signal(UM_SIGSTOP) == 0)
		rec->held = 1;
	bpf_ringbuf_submit(rec, rec->held ? BPF_RB_FORCE_WAKEUP : 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task)
{
	__u32 tgid = task->tgid;
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct signal_struct *sig;

	if (!proc)
		return 0;
	sig = UM_UNTRUSTED_TASK(task)->signal;
	/* signal->live is decremented before this tracepoint: 0 means the whole group is dying */
	if (sig->live.counter != 0)
		return 0;
	proc->exit_code = (sig->flags & UM_SIGNAL_GROUP_EXIT) ? sig->group_exit_code : task->exit_code;
	/* mark_oom_victim sets oom_mm (since 4.10) on the process it kills, in a memory cgroup at
	 * its limit (SLURM's --mem) or for the whole machine; its SIGKILL alone would not say so */
	if (sig->oom_mm)
		proc->flags |= UM_PROC_OOM_VICTIM;
	return 0;
}

__noinline int proc_finish_locked(__u32 tgid, __u64 now)
{
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_proc_exit *rec;

	if (!proc)
		return 0;
	if (proc->own_unit)
		unit_close_locked(tgid, proc->own_unit, UM_UNIT_INCOMPLETE_EXIT);
	if (proc->mm)
		mm_retire_locked(proc, proc->mm);
	/* the last process's exit leaves the run's high-water mark here */
	charge_watermark_read(proc->group);

	rec = record_reserve(proc->group, sizeof(*rec));
	if (rec) {
		rec->type = UM_REC_PROC_EXIT;
		rec->pid = tgid;
		rec->ts_ns = now;
		rec->cpu_ns = proc->cpu_ns;
		rec->peak_rss_bytes = proc->peak_rss_bytes;
		rec->page_alloc_bytes = proc->page_alloc_bytes;
		rec->output_bytes = proc->output_bytes;
		rec->tmp_output_bytes = group_tmp_output_bytes(proc->group, proc->tmp_output_bytes);
		rec->exit_code = proc->exit_code;
		rec->threads = proc->threads_seen;
		rec->oom_victim = !!(proc->flags & UM_PROC_OOM_VICTIM);
		rec->pad = 0;
		bpf_ringbuf_submit(rec, 0);
	}
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}
