/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel as the programs see it: the constants taken from its headers, and a shim for
 * every difference between the kernels unitmeter runs on. Each shim names the kernel change it
 * follows. This file is the only one that reads the build (UM_BUILD, `make bpf-layout-check`):
 * code elsewhere asks for a feature.
 *
 * The programs are built three times from these sources (Makefile, UM_BUILD), and the loader
 * picks the object the running kernel can take (user/trace/kernel.c):
 * - UM_BUILD_PER_CPU: kernels that keep mm counters per CPU (mm->rss_stat is percpu_counter[]),
 *   which also have every newer BPF feature used here: fetching atomics, task storage,
 *   bpf_get_current_task_btf, attach cookies, bpf_loop, the kfunc bpf_rdonly_cast.
 * - UM_BUILD_THREAD_CACHE: kernels before the per-CPU counters (mm counters are plain atomics
 *   with a private cache in each thread, task->rss_stat, read where they change: rss.bpf.c)
 *   that have the BPF of 5.17: every feature above but bpf_rdonly_cast. Its handover of a
 *   running slice is the atomic one of the per-CPU build (Debian 12's 6.1, Amazon Linux 2023's).
 * - UM_BUILD_BASELINE: what a 5.10 kernel offers. The same mm counters and caches; the only
 *   atomic is the plain add, so read-modify-write runs under one lock (um_lock); tracked
 *   threads are known by their threads entry; each unit spec has its own entry program
 *   instead of a cookie.
 */
#ifndef UNITMETER_COMPAT_BPF_H
#define UNITMETER_COMPAT_BPF_H

#include "state.bpf.h"

#define UM_BUILD_PER_CPU 0
#define UM_BUILD_BASELINE 1
#define UM_BUILD_THREAD_CACHE 2
#ifndef UM_BUILD
#define UM_BUILD UM_BUILD_PER_CPU
#endif
/* what 5.10's BPF offers, and no more */
#define UM_BPF_OF_5_10 (UM_BUILD == UM_BUILD_BASELINE)

/*
 * The features, each as the build has it (1) or not (0). The per-CPU build needs 6.2, and so
 * has them all; the thread-cache build all but bpf_rdonly_cast; the baseline build none.
 *
 * Threads' private RSS caches (task->rss_stat), until 6.2: 'mm: convert mm's rss stats into
 * percpu_counter' (f1a7941243c1) made the mm counters per CPU and removed the caches
 * (SPLIT_RSS_COUNTING). The counter reader (rss.bpf.c) follows the same change.
 */
#define UM_HAVE_THREAD_RSS_CACHES (UM_BUILD != UM_BUILD_PER_CPU)
/*
 * Fetching atomics (fetch-add, xchg, cmpxchg), 5.12: 'bpf: Add BPF_FETCH field / create
 * atomic_fetch_add instruction' (5ca419f2864a), 'bpf: Add instructions for atomic_[cmp]xchg'
 * (5ffa25502b5a). Before them only the plain atomic add exists; 5.10's verifier refuses every
 * fetching atomic, even where it cannot be reached (the Makefile checks the baseline object).
 */
#define UM_HAVE_FETCH_ATOMICS (!UM_BPF_OF_5_10)
/* Task storage for tracing programs, 5.11: 'bpf: Enable task local storage for tracing
 * programs' (a10787e6d58c). */
#define UM_HAVE_TASK_STORAGE (!UM_BPF_OF_5_10)
/* bpf_get_current_task_btf(), 5.11: the current task as a BTF pointer, loaded through directly. */
#define UM_HAVE_TASK_BTF (!UM_BPF_OF_5_10)
/* The kfunc bpf_rdonly_cast, 6.2: 'bpf: Add a kfunc for generic type cast' (a35b9af4ec2c). */
#define UM_HAVE_RDONLY_CAST (UM_BUILD == UM_BUILD_PER_CPU)
/* bpf_loop, 5.17: 'bpf: Add bpf_loop helper' (e6f2dd0f8067). */
#define UM_HAVE_BPF_LOOP (!UM_BPF_OF_5_10)
/*
 * Attach cookies, 5.15: 'bpf: Allow to specify user-provided bpf_cookie for BPF perf links'
 * (82e6b1eee6a8), 'bpf: Add bpf_get_attach_cookie() BPF helper to access bpf_cookie value'
 * (7adfc6c9b315). Every build declares unit_enter and the unit_enter_N programs (units.bpf.c),
 * and the loader loads those the kernel can take; a unit probe's run (um_probe_group) is its
 * cookie's high half where there are cookies, and any run without (the baseline is loaded by
 * one run only).
 */
#define UM_HAVE_ATTACH_COOKIE (!UM_BPF_OF_5_10)
#define UM_ANY_GROUP 0
#if UM_HAVE_ATTACH_COOKIE
#define um_probe_group(ctx) ((__u32)(bpf_get_attach_cookie(ctx) >> 32))
#else
#define um_probe_group(ctx) UM_ANY_GROUP
#endif
/*
 * task_struct::__state, 5.14: 'sched: Change task_struct::state' (2f064a59a11f); before it the
 * field is `state`. Every kernel of the per-CPU build (6.2) has it; the other builds ask
 * (task_is_dead): a vendor kernel can have the BPF of 5.17 on an older scheduler.
 */
#define UM_HAVE_TASK___STATE (UM_BUILD == UM_BUILD_PER_CPU)

/* include/linux/sched.h: a task's state on its final switch-out */
#define UM_TASK_DEAD 0x00000080
/* include/linux/sched/signal.h */
#define UM_SIGNAL_GROUP_EXIT 0x00000004
/* include/linux/sched.h */
#define UM_PF_IO_WORKER 0x00000010
#define UM_PF_KTHREAD 0x00200000
/* include/uapi/asm-generic/errno-base.h: what a BPF_NOEXIST update returns for a key present */
#define UM_EEXIST 17

/*
 * An index into the per-CPU arrays, masked at the access (UM_MAX_CPUS is a power of two):
 * verifiers before 6.x forget a value's bound when the compiler spills it to the stack, even
 * after the code has checked it.
 */
#define CPU_SLOT(cpu)                                                                      \
	({                                                                                 \
		__u32 __slot = (cpu);                                                      \
		/* hidden from the compiler, which would drop a mask it knows is void */   \
		asm volatile("" : "+r"(__slot));                                           \
		__slot & (UM_MAX_CPUS - 1);                                                \
	})
_Static_assert((UM_MAX_CPUS & (UM_MAX_CPUS - 1)) == 0, "UM_MAX_CPUS is a power of two");

/*
 * Set by the loader when the kernel's threads keep private RSS caches (thread_rss_caches); known
 * false at compile time in a build for kernels without them: its code and relocations go.
 */
#define UM_THREAD_CACHES (UM_HAVE_THREAD_RSS_CACHES && thread_rss_caches)

/*
 * Read-modify-write of shared counters. With fetching atomics they are the compiler's builtins;
 * without, the same steps as plain code, inside um_lock().
 */
#if UM_HAVE_FETCH_ATOMICS
#define um_fetch_add(p, v) __sync_fetch_and_add(p, v)
#define um_cas(p, expected, desired) __sync_val_compare_and_swap(p, expected, desired)
#define um_xchg(p, v) __sync_lock_test_and_set(p, v)
#else
#define um_fetch_add(p, v)                                                         \
	({                                                                         \
		__typeof__(*(p)) __old = *(p);                                     \
		*(p) = __old + (v);                                                \
		__old;                                                             \
	})
#define um_cas(p, expected, desired)                                               \
	({                                                                         \
		__typeof__(*(p)) __seen = *(p);                                    \
		if (__seen == (expected))                                          \
			*(p) = (desired);                                          \
		__seen;                                                            \
	})
#define um_xchg(p, v)                                                              \
	({                                                                         \
		__typeof__(*(p)) __seen = *(p);                                    \
		*(p) = (v);                                                        \
		__seen;                                                            \
	})
#endif

/*
 * A store that no earlier store or atomic may pass (a release). x86 orders stores after stores
 * and locked operations by itself (TSO), and its JIT makes every BPF atomic a locked one: a
 * plain store. Elsewhere (arm64: a BPF atomic add without fetch is an unordered STADD) an
 * exchange, the one release the BPF instruction set had before 6.15; the baseline's exchange is
 * plain code, so there a fence (um_exchange_fence, below) and the store.
 */
#if defined(__TARGET_ARCH_x86)
#define um_store_release(p, v) (*(volatile __typeof__(*(p)) *)(p) = (v))
#elif UM_HAVE_FETCH_ATOMICS
#define um_store_release(p, v) ((void)um_xchg(p, v))
#else
#define um_store_release(p, v)                                                             \
	({                                                                                 \
		um_order_fence();                                                          \
		*(volatile __typeof__(*(p)) *)(p) = (v);                                   \
	})
#endif

/* Tries at the baseline lock: its holder runs a few hundred instructions with preemption off. */
#define UM_LOCK_TRIES 256

/*
 * The baseline's one lock, around every read-modify-write of shared accounting state (the
 * functions named *_locked run inside it): taken by inserting its key (an insert that fails
 * while the key is there), released by deleting it. BPF spin locks are refused to tracing
 * programs on these kernels. Not had in time (a holder interrupted, or nested on this CPU), the
 * update runs unlocked and lock_timeouts says so. Returns whether it is held; with fetching
 * atomics it is never taken.
 */
static __always_inline bool um_lock(void)
{
#if !UM_HAVE_FETCH_ATOMICS
	__u32 key = 0, one = 1;

	for (int i = 0; i < UM_LOCK_TRIES; i++)
		if (!bpf_map_update_elem(&baseline_lock, &key, &one, BPF_NOEXIST))
			return true;
	__sync_fetch_and_add(&lock_timeouts, 1);
#endif
	return false;
}

static __always_inline void um_unlock(bool held)
{
#if !UM_HAVE_FETCH_ATOMICS
	__u32 key = 0;

	if (held)
		bpf_map_delete_elem(&baseline_lock, &key);
#endif
}

/*
 * What an exchange orders, for the build whose exchange is plain code: every store before it
 * is seen by other CPUs before any load after it. The running slice's handover needs it on both
 * sides (the close publishes its end and then reads threads' words; a switch-out publishes its
 * word and then reads its units' ends: model.bpf.h, slice_key_claim), so that at least one of the
 * two sees the other. x86's JIT makes the atomic add a locked instruction, a full barrier: one
 * on a word of this CPU's own cache line. Elsewhere (arm64: an atomic add without fetch has no
 * order) the barrier is the kernel's: a ring buffer record's commit is an exchange, fully
 * ordered, and a discarded record is skipped by the reader; one not had (the ring full) is
 * counted as a handover timeout.
 */
#if UM_HAVE_FETCH_ATOMICS
#define um_exchange_fence() ((void)0)
#elif defined(__TARGET_ARCH_x86)
#define um_exchange_fence()                                                                \
	__sync_fetch_and_add(&cpu_pending_alloc[CPU_SLOT(bpf_get_smp_processor_id())].fences, 1)
#else
#define um_exchange_fence()                                                                \
	({                                                                                 \
		void *__rec = bpf_ringbuf_reserve(&fence_ring, 8, 0);                      \
		if (__rec)                                                                 \
			bpf_ringbuf_discard(__rec, BPF_RB_NO_WAKEUP);                      \
		else                                                                       \
			__sync_fetch_and_add(&handover_timeouts, 1);                       \
	})
#endif

/*
 * Stores kept in order, and loads: what x86 does by itself (TSO) and the other builds' exchange
 * and compare-and-swap do where the baseline's are plain code; the full fence for the baseline
 * elsewhere (arm64). On x86 the compiler must still keep them in order: its barrier (the plain
 * code around would otherwise be moved across, the unit's fields past its id).
 */
#if UM_HAVE_FETCH_ATOMICS
#define um_order_fence() ((void)0)
#elif defined(__TARGET_ARCH_x86)
#define um_order_fence() asm volatile("" ::: "memory")
#else
#define um_order_fence() um_exchange_fence()
#endif

/*
 * Tries a close gives a slice's switch-in or switch-out on another CPU (a few instructions with
 * interrupts off there) before it counts a handover timeout: with bpf_loop, each a reread of the
 * word, ~2^20 (a millisecond and more, what a vCPU descheduled by its host needs). Without, each
 * try is a wait of its own of UM_WAIT_ROUNDS x UM_WAIT_SPIN rereads (units.bpf.c, slice_wait):
 * a loop the old verifier walks step by step, so its steps are functions verified once.
 */
#if UM_HAVE_BPF_LOOP
#define UM_HANDOVER_TRIES (1 << 20)
#else
#define UM_HANDOVER_TRIES 8
#endif
/*
 * The baseline's waits: rounds of rereads, 2^19 a try (milliseconds in an emulated guest, what
 * a vCPU its host holds up needs: 2^15 were outlasted in 5.10's guest, a few times a run).
 */
#define UM_WAIT_ROUNDS 128
#define UM_WAIT_SPIN 4096

/*
 * One thread of proc is gone: whether it was the last. Fork adds threads with an atomic add,
 * outside any lock; without a fetching add, the count is subtracted the same way and read after,
 * under the lock, so two threads dying at once cannot both read the last.
 */
static __always_inline bool live_threads_drop_locked(struct um_proc *proc)
{
#if UM_HAVE_FETCH_ATOMICS
	return __sync_fetch_and_add(&proc->live_threads, -1) == 1;
#else
	__sync_fetch_and_add(&proc->live_threads, -1);
	return *(volatile __u32 *)&proc->live_threads == 0;
#endif
}

/*
 * Take what a CPU holds: an exchange, since the CPU itself may be adding at the same time. A
 * plain load first: most of the time there is nothing, and the exchange is a locked write.
 * Without an exchange, what was read is taken out with a plain add: the CPU's own adds
 * meanwhile stay; two CPUs taking the same bytes would both charge them, so only a CPU's own are
 * taken (cpu_pending_takeable).
 */
static __always_inline __u64 cpu_pending_take(__u32 cpu)
{
	__u64 bytes;

	if (cpu >= UM_MAX_CPUS || !cpu_pending_alloc[CPU_SLOT(cpu)].bytes)
		return 0;
#if UM_HAVE_FETCH_ATOMICS
	bytes = __sync_lock_test_and_set(&cpu_pending_alloc[CPU_SLOT(cpu)].bytes, 0);
#else
	bytes = cpu_pending_alloc[CPU_SLOT(cpu)].bytes;
	__sync_fetch_and_add(&cpu_pending_alloc[CPU_SLOT(cpu)].bytes, -bytes);
#endif
	return bytes;
}

/*
 * Whether this CPU may take what another CPU holds (cpu_pending_take): with an exchange, any;
 * without, only its own, and another CPU's bytes go at that thread's switch-out.
 */
static __always_inline bool cpu_pending_takeable(__u32 cpu)
{
	return UM_HAVE_FETCH_ATOMICS || cpu == bpf_get_smp_processor_id();
}

/*
 * A bounded loop whose body is a callback, long (*fn)(__u64 index, void *ctx) returning 1 to
 * stop: bpf_loop where the kernel has it, so the verifier walks the body once instead of once
 * per iteration (most of the programs' load time was such loops); a plain loop before.
 * Evaluates to the iterations run.
 */
#if UM_HAVE_BPF_LOOP
#define UM_LOOP(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#else
#define UM_LOOP(n, fn, ctx)                                                                \
	({                                                                                 \
		long __i;                                                                  \
		for (__i = 0; __i < (long)(n); __i++)                                      \
			if ((fn)(__i, (ctx)))                                              \
				break;                                                     \
		__i;                                                                       \
	})
#endif

/*
 * Slots searched for a free one (units.bpf.c). Only open units hold slots, so the search fails
 * only while this many units are open at once. With bpf_loop, all of them; a plain loop is
 * verified step by step, and the verifier refuses a path of more than 8192 jumps.
 */
#if UM_HAVE_BPF_LOOP
#define UM_UNIT_SEARCH UM_UNIT_SLOTS
#else
#define UM_UNIT_SEARCH 512
#endif

/*
 * Fields of the current task. bpf_get_current_task_btf() gives a pointer the verifier lets us
 * load through; before it, the task's address is a number, read with probe reads.
 */
#if UM_HAVE_TASK_BTF
/*
 * A task pointer as a read-only, untrusted one: loads through it stay direct (fault-safe) loads,
 * and the verifier no longer asks, for every pointer they yield, whether its type is trusted, a
 * search of the kernel's BTF by name (on 6.18 ~40% of the programs' load time went there). It
 * is the kfunc bpf_rdonly_cast (a register move at run time) behind a call of rss.bpf.c: libbpf
 * 1.1's linker cannot link one kfunc declared in several objects.
 */
#if UM_HAVE_RDONLY_CAST
extern struct task_struct *um_untrusted_task(struct task_struct *task);
#define UM_UNTRUSTED_TASK(p) um_untrusted_task(p)
#else
/* before 6.2 the verifier asks nothing of a BTF pointer's type: nothing to cast away */
#define UM_UNTRUSTED_TASK(p) (p)
#endif
#define current_task() bpf_get_current_task_btf()
#define TASK_READ(task, field) (UM_UNTRUSTED_TASK(task)->field)
#else
#define UM_UNTRUSTED_TASK(p) (p)
#define current_task() ((struct task_struct *)bpf_get_current_task())
#define TASK_READ(task, ...) BPF_CORE_READ(task, __VA_ARGS__)
#endif
#define CURRENT_READ(...) TASK_READ(current_task(), __VA_ARGS__)

static __always_inline __u32 current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

/* The task's state field before 5.14 (UM_HAVE_TASK___STATE). */
struct task_struct___state_before_5_14 {
	long state;
} __attribute__((preserve_access_index));

/*
 * Whether a task switching out is dead (its final switch). The tracepoint names the state only
 * from 5.18 on; the task's own field is what it reports.
 */
static __always_inline bool task_is_dead(struct task_struct *task)
{
#if !UM_HAVE_TASK___STATE
	if (!bpf_core_field_exists(task->__state))
		return ((struct task_struct___state_before_5_14 *)task)->state & UM_TASK_DEAD;
#endif
	return task->__state & UM_TASK_DEAD;
}

/*
 * The map of the marks (tracked_tasks, state.bpf.h): task storage; before it, the threads map
 * is the mark, and this stays empty.
 */
#if UM_HAVE_TASK_STORAGE
struct um_task_marks {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
};
#else
struct um_task_marks {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u32);
};
#endif

/*
 * Whether a task carries the mark; without task storage, true (the threads map decides).
 * sched_switch asks it of both tasks of every switch on the node.
 */
static __always_inline bool task_marked(struct task_struct *task)
{
#if UM_HAVE_TASK_STORAGE
	/* most tasks of a node have no BPF storage at all: ruled out by a load, not the helper
	 * (its lock and lookup: 1.7 points of a pinned switch storm, BENCHMARKS.md) */
	if (!task->bpf_storage)
		return false;
	return bpf_task_storage_get(&tracked_tasks, task, 0, 0) != NULL;
#else
	return true;
#endif
}

static __always_inline bool current_marked(void)
{
#if UM_HAVE_TASK_STORAGE
	return task_marked(bpf_get_current_task_btf());
#else
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&threads, &tid) != NULL;
#endif
}

/* Mark a task as tracked; a failure (out of memory) is counted like a full map. */
static __always_inline void mark_tracked(struct task_struct *task)
{
#if UM_HAVE_TASK_STORAGE
	/* an unmarked tracked task would be skipped: from now on, look every event up */
	if (!bpf_task_storage_get(&tracked_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		__sync_fetch_and_add(&map_full, 1);
		trust_marks = 0;
	}
#endif
}

/* The runqueue's count of interrupt time (CONFIG_IRQ_TIME_ACCOUNTING, not on every kernel). */
struct rq___irq_time {
	u64 prev_irq_time;
} __attribute__((preserve_access_index));

/* Its count of stolen time (CONFIG_PARAVIRT_TIME_ACCOUNTING: not in Debian's arm64 kernels). */
struct rq___steal_time {
	u64 prev_steal_time_rq;
} __attribute__((preserve_access_index));

/*
 * Time taken from the tasks of the CPU this task runs on, cumulative, as of the runqueue's last
 * clock update: what the hypervisor stole (CONFIG_PARAVIRT_TIME_ACCOUNTING) and what interrupts
 * took (CONFIG_IRQ_TIME_ACCOUNTING). The thread clocks exclude both, so a wall-clock span of a
 * running slice is corrected by this much. ("steal" below means both.) 0 where neither is kept.
 */
static __always_inline __u64 rq_steal_ns(struct rq *rq)
{
	__u64 ns = 0;

	if (!rq)
		return 0;
#if UM_HAVE_TASK_BTF
	/* direct BTF loads, not probe-read calls: this runs twice for every unit */
	if (bpf_core_field_exists(((struct rq___steal_time *)rq)->prev_steal_time_rq))
		ns += ((struct rq___steal_time *)rq)->prev_steal_time_rq;
	if (bpf_core_field_exists(((struct rq___irq_time *)rq)->prev_irq_time))
		ns += ((struct rq___irq_time *)rq)->prev_irq_time;
#else
	/* the runqueue's address may be a plain number here (probe-read from the current task) */
	if (bpf_core_field_exists(((struct rq___steal_time *)rq)->prev_steal_time_rq))
		ns += BPF_CORE_READ((struct rq___steal_time *)rq, prev_steal_time_rq);
	if (bpf_core_field_exists(((struct rq___irq_time *)rq)->prev_irq_time))
		ns += BPF_CORE_READ((struct rq___irq_time *)rq, prev_irq_time);
#endif
	return ns;
}

static __always_inline __u64 task_cpu_steal_ns(struct task_struct *task)
{
	struct cfs_rq *cfs_rq = UM_UNTRUSTED_TASK(task)->se.cfs_rq;

	return cfs_rq ? rq_steal_ns(cfs_rq->rq) : 0;
}

/* The scheduler's clock of the runqueue of the CPU this task runs on, as of its last update. */
static __always_inline __u64 task_rq_clock_ns(struct task_struct *task)
{
	struct cfs_rq *cfs_rq = UM_UNTRUSTED_TASK(task)->se.cfs_rq;

#if UM_HAVE_TASK_BTF
	return cfs_rq && cfs_rq->rq ? cfs_rq->rq->clock : 0;
#else
	return cfs_rq ? BPF_CORE_READ(cfs_rq, rq, clock) : 0;
#endif
}

/*
 * The current task's CPU time as of now, in the scheduler's own units, given the scheduler's
 * clock now (sched_now): what it had at its last update (se.sum_exec_runtime) and the run since
 * (its runqueue's task clock, which leaves out stolen and interrupt time, since se.exec_start,
 * plus the runqueue's clock since its last update). What CLOCK_THREAD_CPUTIME_ID would say.
 */
static __always_inline __u64 current_runtime_at(__u64 sched_now)
{
	__u64 runtime = CURRENT_READ(se.sum_exec_runtime), start = CURRENT_READ(se.exec_start);
	struct cfs_rq *cfs_rq = CURRENT_READ(se.cfs_rq);
	__u64 clock, clock_task;

	if (!cfs_rq)
		return runtime;
#if UM_HAVE_TASK_BTF
	if (!cfs_rq->rq)
		return runtime;
	clock = cfs_rq->rq->clock;
	clock_task = cfs_rq->rq->clock_task;
#else
	clock = BPF_CORE_READ(cfs_rq, rq, clock);
	clock_task = BPF_CORE_READ(cfs_rq, rq, clock_task);
#endif
	if ((__s64)(clock_task - start) > 0)
		runtime += clock_task - start;
	if ((__s64)(sched_now - clock) > 0)
		runtime += sched_now - clock;
	return runtime;
}

/* task_cpu_steal_ns() of the current task. */
static __always_inline __u64 current_cpu_steal_ns(void)
{
#if UM_HAVE_TASK_BTF
	return task_cpu_steal_ns(bpf_get_current_task_btf());
#else
	struct cfs_rq *cfs_rq = CURRENT_READ(se.cfs_rq);

	return cfs_rq ? rq_steal_ns(BPF_CORE_READ(cfs_rq, rq)) : 0;
#endif
}

#endif /* UNITMETER_COMPAT_BPF_H */
