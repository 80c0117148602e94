// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Memory: every change of an mm's RSS counters (tp_btf/rss_stat) and every page allocation by a
 * tracked task (tp_btf/mm_page_alloc).
 *
 * rss_stat hands over only (mm, member); the counter's value is read here the way the kernel's
 * percpu_counter_sum() reads it: the shared count plus every CPU's unfolded share. The classic
 * kmem:rss_stat tracepoint carries that sum, but the kernel then computes it and feeds the perf
 * path on every page fault of every process while anyone listens (~0.12x of a faulting workload
 * here, BENCHMARKS.md); this way untracked processes pay the per-CPU test of current_tracked().
 *
 * The CPUs' shares sit at the counter's __percpu address plus each CPU's per-CPU offset. This
 * kernel names neither __per_cpu_offset nor this_cpu_off to BPF, so learn_cpu_offsets() takes
 * them from a per-CPU array of our own: the address bpf_map_lookup_percpu_elem() gives for a
 * CPU, less the array's __percpu base (bpf_array.pptrs[0]), is that CPU's offset.
 *
 * Kernels before the per-CPU counters (the thread-cache and baseline builds) keep each mm
 * counter as one atomic, and every thread of the mm keeps a private cache of its own changes
 * (task->rss_stat), added silently on most page faults and folded into the mm every 64 faults,
 * at exec and at exit, each fold an rss_stat event. There an mm's RSS is its counters plus the
 * caches of the threads that use it; each tracked thread's cache is copied in its threads
 * entry and brought up to date where it changes: at the end of every page fault (fexit of
 * handle_mm_fault), at switch-out (cpu.bpf.c), and at its own mm's events, where a fold is told
 * from other changes by the state the kernel folds in (see cache_is_folding).
 *
 * mms are keyed by their address and learned from the events: on the owner's own events, or,
 * for a child being forked, on the copy's events that arrive from the parent's context before
 * sched_process_fork names the child; the mm an exec builds, at the exec, and a process's mm
 * when its first unit opens before any event showed it (mm_adopt_current_locked).
 */
#include "model.bpf.h"
#include "rss_cache.bpf.h"
#include "charge.bpf.h"

#if UM_HAVE_RDONLY_CAST
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* See compat.bpf.h: TASK_READ. */
__hidden __noinline struct task_struct *um_untrusted_task(struct task_struct *task)
{
	return bpf_rdonly_cast(task, bpf_core_type_id_kernel(struct task_struct));
}
#endif

/* __per_cpu_offset[cpu], filled once by learn_cpu_offsets() before anything is attached */
__u64 cpu_offsets[UM_MAX_CPUS];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} offset_probe SEC(".maps");

/*
 * The verifier forbids arithmetic on map pointers; one stored to a global and read back is a
 * plain number (allowed to root only, as the programs are).
 */
volatile __u64 address_as_number;

/* Run once by the loader (BPF_PROG_TEST_RUN); returns the number of CPUs learned. */
SEC("raw_tp")
int learn_cpu_offsets(void *ctx)
{
	__u64 base = 0;
	__u32 zero = 0, cpu;

	address_as_number = (__u64)(void *)&offset_probe;
	if (bpf_probe_read_kernel(&base, sizeof(base),
				  (void *)(address_as_number +
					   bpf_core_field_offset(struct bpf_array, pptrs))))
		return 0;
	for (cpu = 0; cpu < nr_possible_cpus && cpu < UM_MAX_CPUS; cpu++) {
		void *share = bpf_map_lookup_percpu_elem(&offset_probe, &zero, cpu);

		if (!share)
			break;
		address_as_number = (__u64)share;
		cpu_offsets[CPU_SLOT(cpu)] = address_as_number - base;
	}
	return cpu;
}

/* The end of every page fault: the faulting thread's cache took the fault's pages. */
static __always_inline int fault_done(void)
{
	/* loaded only where threads keep caches (one body in every build, so all declare the
	 * same programs) */
#if UM_HAVE_THREAD_RSS_CACHES
	struct um_thread *th;
	__u64 task;

	if (!current_tracked())
		return 0;
	task = bpf_get_current_task();
	thread_cache_catch_up(task, (__u32)bpf_get_current_pid_tgid(), (__u64)CURRENT_READ(mm));
	/* the fault's pages were charged before the thread's cache took them */
	th = bpf_map_lookup_elem(&threads, &(__u32){ (__u32)bpf_get_current_pid_tgid() });
	if (th)
		charge_sample(th->group);
#endif
	return 0;
}

/*
 * Two hooks on the fault's end, the loader loading the one that attaches here (it tries both,
 * user/trace/fault_hook.c): fexit needs ftrace direct calls, which arm64 gained in 6.4; a
 * kretprobe (a trap at the return) attaches everywhere kprobes are, at a higher cost per fault.
 */
SEC("fexit/handle_mm_fault")
int BPF_PROG(handle_fault_done)
{
	return fault_done();
}

SEC("kretprobe/handle_mm_fault")
int BPF_KRETPROBE(handle_fault_done_kretprobe)
{
	return fault_done();
}

/*
 * The current thread's own mm changed: first its cache (the fold of `member` when this is
 * one), then the counter. From handle_rss_stat and mm_adopt_current_locked.
 */
static __always_inline void own_mm_sync_locked(struct um_mm *mm, struct mm_struct *kmm, int member)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_rss_stat___cached cache;
	struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);

	if (th && task_cache_read((struct task_struct *)bpf_get_current_task(), &cache))
		cache_sync_locked(th, mm, &cache, cache_is_folding(&cache) ? member : -1);
}

#if UM_HAVE_THREAD_RSS_CACHES
/* The value of one mm counter, in bytes: one atomic (the threads' caches are kept apart). */
static __always_inline __u64 mm_counter_bytes(struct mm_struct *kmm, __u32 member)
{
	struct mm_struct___cached *mm = (void *)kmm;
	__s64 pages;

	switch (member) {
	case UM_MM_FILEPAGES:
		pages = BPF_CORE_READ(mm, rss_stat.count[UM_MM_FILEPAGES].counter);
		break;
	case UM_MM_ANONPAGES:
		pages = BPF_CORE_READ(mm, rss_stat.count[UM_MM_ANONPAGES].counter);
		break;
	default:
		pages = BPF_CORE_READ(mm, rss_stat.count[UM_MM_SHMEMPAGES].counter);
		break;
	}
	return pages > 0 ? (__u64)pages * page_size : 0;
}

#else /* per-CPU counters */

/* The value of one mm counter, in bytes, as percpu_counter_sum_positive() would give it. */
static __always_inline __u64 mm_counter_bytes(struct mm_struct *kmm, __u32 member)
{
	struct percpu_counter *counter;
	__u64 shares;
	__s64 pages;

	/* constant offsets: the verifier takes no variable index into a kernel struct */
	switch (member) {
	case UM_MM_FILEPAGES:
		counter = &kmm->rss_stat[UM_MM_FILEPAGES];
		break;
	case UM_MM_ANONPAGES:
		counter = &kmm->rss_stat[UM_MM_ANONPAGES];
		break;
	default:
		counter = &kmm->rss_stat[UM_MM_SHMEMPAGES];
		break;
	}
	shares = (__u64)counter->counters;
	/*
	 * Without the counter's lock: a CPU folding its share into the count between our read of
	 * the count and of that share would be missed (up to a batch, 32 pages here). A fold changes
	 * the count, so a changed count means read again (once: a second fold in a few ns is rarer
	 * than the event that follows and corrects it).
	 */
	for (int attempt = 0; attempt < 2; attempt++) {
		__s64 count = counter->count;

		pages = count;
		for (__u32 cpu = 0; cpu < nr_possible_cpus && cpu < UM_MAX_CPUS; cpu++) {
			struct refcount_struct *share = bpf_rdonly_cast(
				(void *)(shares + cpu_offsets[CPU_SLOT(cpu)]),
				bpf_core_type_id_kernel(struct refcount_struct));

			pages += share->refs.counter;
		}
		if (counter->count == count)
			break;
	}
	return pages > 0 ? (__u64)pages * page_size : 0;
}
#endif /* UM_HAVE_THREAD_RSS_CACHES */

/*
 * Bring one member of a known mm up to the kernel's value. An exchange, not read-then-write:
 * two CPUs reporting the same mm at once each take the other's value as their base, so the
 * deltas add up to the last value exactly.
 */
static __always_inline void mm_member_sync(struct um_mm *mm, struct mm_struct *kmm, __u32 member)
{
	__u64 bytes = mm_counter_bytes(kmm, member);
	__s64 delta = bytes - um_xchg(&mm->member_bytes[member & 3], bytes);

	if (delta)
		rss_apply_locked(mm, delta);
}

/* An mm not seen yet: adopt it when it belongs to a tracked process, else ignore it. */
static __always_inline struct um_mm *mm_adopt(struct mm_struct *kmm, bool curr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), key = (__u64)kmm;
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_mm fresh = {};

	if (!proc)
		return NULL;
	fresh.units[0] = proc->units[0];
	fresh.units[1] = proc->units[1];
	fresh.group = proc->group;
	if (!curr) {
		/*
		 * Another mm touched from a tracked task: adopt it only as the first mm built inside a
		 * fork (clone placed an empty slot); reclaim of other processes' pages and
		 * process_vm_writev also arrive this way and must not count.
		 */
		__u64 *slot = bpf_map_lookup_elem(&pending_mm, &tid);

		if (!slot || *slot)
			return NULL;
		if (map_insert(&mms, &key, &fresh))
			return NULL;
		*slot = key;
		return bpf_map_lookup_elem(&mms, &key);
	}
	/* the root before its exec runs unitmeter's own image: its mm is the exec's
	 * (mm_adopt_current_locked) */
	if (proc->flags & UM_PROC_AWAIT_EXEC)
		return NULL;
	fresh.tgid = tgid;
	/* attach: the counters the loader read from /proc, already in the group's sum */
	for (int m = 0; m < UM_MM_NR_MEMBERS; m++)
		fresh.member_bytes[m] = proc->initial_member_bytes[m];
	fresh.rss_bytes = fresh.member_bytes[UM_MM_FILEPAGES] + fresh.member_bytes[UM_MM_ANONPAGES] +
			  fresh.member_bytes[UM_MM_SHMEMPAGES];
	fresh.peak_rss_bytes = fresh.rss_bytes;
	if (map_insert(&mms, &key, &fresh))
		return NULL;
	for (int m = 0; m < UM_MM_NR_MEMBERS; m++)
		proc->initial_member_bytes[m] = 0;
	/* a new mm of a known process: exec replaced the old one, which is gone or going */
	if (proc->mm && proc->mm != key)
		mm_retire_locked(proc, proc->mm);
	proc->mm = key;
	return bpf_map_lookup_elem(&mms, &key);
}

/* Every member of a newly adopted mm from the kernel: a fork's copy starts at 0, attach's /proc
 * figures were rounded and a moment old. */
static __always_inline void mm_sync_all(struct um_mm *mm, struct mm_struct *kmm)
{
	mm_member_sync(mm, kmm, UM_MM_FILEPAGES);
	mm_member_sync(mm, kmm, UM_MM_ANONPAGES);
	mm_member_sync(mm, kmm, UM_MM_SHMEMPAGES);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *kmm, int member)
{
	struct task_struct *task;
	struct um_mm *mm;
	bool curr, adopted = false, held;
	__u64 key = (__u64)kmm;

	if ((__u32)member >= UM_MM_NR_MEMBERS || member == UM_MM_SWAPENTS)
		return 0;
	/* fetched once: every page fault of every process on the machine comes here */
	task = current_task();
	curr = TASK_READ(task, mm) == kmm;
	/*
	 * The task's own mm: only a tracked task's can matter. Kernel threads working on a user mm
	 * (kthread_use_mm) and io_uring workers (not created through the fork tracepoint) go the
	 * long way. A change from another context (fork copying, reclaim, the OOM reaper) is
	 * always looked up.
	 */
	if (curr && !current_tracked() &&
	    !(TASK_READ(task, flags) & (UM_PF_KTHREAD | UM_PF_IO_WORKER)))
		return 0;
	/*
	 * An mm no one tracks, changed by an untracked process (any exit or fork on the machine
	 * zaps or copies from outside the mm): mm_adopt would refuse it. Left before the lock, which
	 * these would otherwise take machine-wide; a tracked task's own faults skip the test.
	 */
	if (!curr && !bpf_map_lookup_elem(&mms, &key) &&
	    !bpf_map_lookup_elem(&procs, &(__u32){ current_tgid() }))
		return 0;
	held = um_lock();
	mm = bpf_map_lookup_elem(&mms, &key);
	if (!mm) {
		mm = mm_adopt(kmm, curr);
		adopted = true;
	}
	if (mm) {
		if (curr && UM_THREAD_CACHES)
			own_mm_sync_locked(mm, kmm, member);
		if (adopted)
			mm_sync_all(mm, kmm);
		else
			mm_member_sync(mm, kmm, member);
		/* a page mapped by the group was charged before it was counted */
		charge_sample_locked(mm->group);
	}
	um_unlock(held);
	return 0;
}

/*
 * Adopt the current task's mm now, every counter read from the kernel:
 * - at an exec (proc.bpf.c), for the mm it built: events of the new image before this moment
 *   could not be told from the old one's (the root's is unitmeter's own copy);
 * - when a unit opens in a process whose mm no event has shown yet (units.bpf.c): attach's
 *   /proc reading may be stale by then (a change between the reading and the attach).
 */
__noinline int mm_adopt_current_locked(void)
{
	struct mm_struct *kmm = CURRENT_READ(mm);
	__u64 key = (__u64)kmm;
	struct um_mm *mm;

	if (!kmm || bpf_map_lookup_elem(&mms, &key))
		return 0;
	mm = mm_adopt(kmm, true);
	if (!mm)
		return 0;
	if (UM_THREAD_CACHES)
		own_mm_sync_locked(mm, kmm, -1);
	mm_sync_all(mm, kmm);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(handle_page_alloc, struct page *page, unsigned int order)
{
	__u32 cpu = bpf_get_smp_processor_id(), tgid;
	__u64 bytes = page_size << (order & 31);
	struct um_proc *proc;

	/* every page allocated on the machine comes here: what sched_switch saw first (unless the
	 * marks are off: then the threads map may miss tracked threads, and everything is looked up) */
	if (trust_marks) {
		int known = cpu_running_current(cpu);

		if (known == 1 && cpu < UM_MAX_CPUS)
			__sync_fetch_and_add(&cpu_pending_alloc[CPU_SLOT(cpu)].bytes, bytes);
		/* a thread sched_switch did not name here: the mark, then its process, at once */
		if (known >= 0 || !current_marked())
			return 0;
	}
	tgid = current_tgid();
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc)
		proc_charge_page_alloc(proc, bytes);
	return 0;
}
