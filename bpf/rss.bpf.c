// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Memory: every change of an mm's RSS counters (kmem:rss_stat) and every page allocation by a
 * tracked task (kmem:mm_page_alloc).
 *
 * The classic rss_stat tracepoint is used because it carries the counter's exact value (`size`,
 * a full per-CPU sum since 6.2); tp_btf/rss_stat gives only (mm, member). It identifies the mm by
 * `mm_id`, a keyed hash of the mm pointer, so mms are learned from the events themselves: on the
 * owner's own events (curr=1), or, for a child being forked, on the copy's events that arrive from
 * the parent's context (curr=0) before sched_process_fork names the child.
 */
#include "state.bpf.h"

/* An mm_id not seen yet: adopt it when it belongs to a tracked process, else ignore it. */
static __always_inline struct um_mm *mm_adopt(__u32 mm_id, __u32 curr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_mm fresh = {};

	if (!proc)
		return NULL;
	fresh.units[0] = proc->units[0];
	fresh.units[1] = proc->units[1];
	if (!curr) {
		/*
		 * Another mm touched from a tracked task: adopt it only as the first mm built inside a
		 * fork (clone placed an empty slot); reclaim of other processes' pages and
		 * process_vm_writev also arrive this way and must not count.
		 */
		__u32 *slot = bpf_map_lookup_elem(&pending_mm, &tid);

		if (!slot || *slot)
			return NULL;
		if (map_insert(&mms, &mm_id, &fresh))
			return NULL;
		*slot = mm_id;
		return bpf_map_lookup_elem(&mms, &mm_id);
	}
	if (proc->flags & UM_PROC_AWAIT_EXEC) {
		/* The root before its exec runs unitmeter's own image: start with the exec'd one. */
		struct task_struct *task = bpf_get_current_task_btf();

		if (!BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
			return NULL;
	}
	fresh.tgid = tgid;
	/* attach: counters read from /proc stand in until the kernel reports each one */
	for (int m = 0; m < UM_MM_NR_MEMBERS; m++)
		fresh.member_bytes[m] = proc->initial_member_bytes[m];
	fresh.rss_bytes = fresh.member_bytes[UM_MM_FILEPAGES] + fresh.member_bytes[UM_MM_ANONPAGES] +
			  fresh.member_bytes[UM_MM_SHMEMPAGES];
	fresh.peak_rss_bytes = fresh.rss_bytes;
	if (map_insert(&mms, &mm_id, &fresh))
		return NULL;
	for (int m = 0; m < UM_MM_NR_MEMBERS; m++)
		proc->initial_member_bytes[m] = 0;
	/* a new mm of a known process: exec replaced the old one, which is gone or going */
	if (proc->mm_id && proc->mm_id != mm_id)
		mm_retire_by_id(proc, proc->mm_id);
	proc->mm_id = mm_id;
	return bpf_map_lookup_elem(&mms, &mm_id);
}

SEC("tracepoint/kmem/rss_stat")
int handle_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	__u32 mm_id = ctx->mm_id;
	__u32 member = ctx->member;
	struct um_mm *mm;
	__s64 delta;

	if (member >= UM_MM_NR_MEMBERS || member == UM_MM_SWAPENTS)
		return 0;
	/*
	 * The task's own mm (curr=1): only a tracked task's can matter. Kernel threads working on
	 * a user mm (kthread_use_mm) and io_uring workers (not created through the fork
	 * tracepoint) go the long way. A change from another context (curr=0: fork copying,
	 * reclaim, the OOM reaper) is always looked up.
	 */
	if (ctx->curr && !current_tracked()) {
		struct task_struct *task = bpf_get_current_task_btf();

		if (!(task->flags & (UM_PF_KTHREAD | UM_PF_IO_WORKER)))
			return 0;
	}
	mm = bpf_map_lookup_elem(&mms, &mm_id);
	if (!mm) {
		mm = mm_adopt(mm_id, ctx->curr);
		if (!mm)
			return 0;
	}
	/*
	 * Exchange, not read-then-write: two CPUs reporting the same mm at once each take the
	 * other's value as their base, so the deltas add up to the last value exactly.
	 */
	delta = ctx->size - (__s64)__sync_lock_test_and_set(&mm->member_bytes[member], ctx->size);
	if (delta)
		rss_apply(mm, delta);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(handle_page_alloc, struct page *page, unsigned int order)
{
	__u32 tgid;
	struct um_proc *proc;
	__u64 bytes;

	/* every page allocated on the machine comes here: the cheap test first */
	if (!current_tracked())
		return 0;
	tgid = current_tgid();
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc)
		return 0;
	bytes = (__u64)UM_PAGE_SIZE << (order & 31);
	__sync_fetch_and_add(&proc->page_alloc_bytes, bytes);
	UNIT_ADD(proc->units[0], page_alloc_bytes, bytes);
	UNIT_ADD(proc->units[1], page_alloc_bytes, bytes);
	return 0;
}
