/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BPF-only view of the accounting state: the maps (defined once, in maps.bpf.c) and the small
 * helpers every handler uses. Included by each *.bpf.c; never by user code.
 */
#ifndef UNITMETER_STATE_BPF_H
#define UNITMETER_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "unitmeter.h"

/*
 * The programs are built twice from these sources (Makefile), and the loader picks the object
 * the running kernel can take (user/trace/kernel.c):
 * - UM_BASELINE 0: kernels that keep mm counters per CPU (mm->rss_stat is percpu_counter[]),
 *   which also have every newer BPF feature used here: fetching atomics, task storage,
 *   bpf_get_current_task_btf, attach cookies, the kfunc bpf_rdonly_cast.
 * - UM_BASELINE 1: what a 5.10 kernel offers. mm counters are plain atomics with a private cache
 *   in each thread (task->rss_stat), read where they change (rss.bpf.c); the only atomic is the
 *   plain add, so read-modify-write runs under one lock (um_lock); tracked threads are known by
 *   their threads entry; each unit spec has its own entry program instead of a cookie.
 */
#ifndef UM_BASELINE
#define UM_BASELINE 0
#endif

/* include/linux/sched.h: a task's state on its final switch-out */
#define UM_TASK_DEAD 0x00000080
/* include/linux/sched/signal.h */
#define UM_SIGNAL_GROUP_EXIT 0x00000004
#define UM_PAGE_SIZE 4096

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct um_proc);
} procs_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct um_mm);
} mms_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct um_thread);
} threads_map_t;

/* open units by slot: an array, so the per-event lookups are inlined, with no hashing */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UM_UNIT_SLOTS);
	__type(key, __u32);
	__type(value, struct um_unit);
} units_map_t;

/* tid of a task inside fork or exec -> the mm it is building, until the new owner is known */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} pending_mm_map_t;

/* tid inside a write-family syscall on a regular file -> 1 */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} pending_write_map_t;

typedef struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* 8 MiB: about 80,000 unit records, a second of a storm of tiny units */
	__uint(max_entries, 8 << 20);
} events_map_t;

/*
 * A mark on every tracked thread, kept by the kernel with the task itself (gone when it is
 * freed, so a recycled tid never inherits it). The per-fault programs ask it first: a pointer
 * chase instead of a hash lookup, which matters most for the untracked processes on the
 * machine, which would otherwise pay hash misses on every page fault.
 */
#if UM_BASELINE
/* no task storage before 5.11: the threads map is the mark; this stays empty */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u32);
} tracked_tasks_map_t;
#else
typedef struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} tracked_tasks_map_t;
#endif

/* The baseline lock: held while its one key is in the map (see um_lock). */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} baseline_lock_map_t;

extern procs_map_t procs SEC(".maps");
extern tracked_tasks_map_t tracked_tasks SEC(".maps");
extern mms_map_t mms SEC(".maps");
extern threads_map_t threads SEC(".maps");
extern units_map_t units SEC(".maps");
extern pending_mm_map_t pending_mm SEC(".maps");
extern pending_write_map_t pending_write SEC(".maps");
extern events_map_t events SEC(".maps");
extern baseline_lock_map_t baseline_lock SEC(".maps");

extern __s64 group_rss_bytes;
extern __u64 group_peak_rss_bytes;
extern __u64 next_unit_id;
extern __u64 lost_records;
extern __u64 map_full;
extern __u64 scope_overflows;
/* a new thread whose tid still had an entry (a missed exit): its CPU may be misattributed */
extern __u64 thread_collisions;
/* slices of a tracked thread whose process was already gone */
extern __u64 orphan_slices;
/* a unit's closing thread found marked off-CPU: its switch-in was not seen (see units.bpf.c) */
extern __u64 switch_in_misses;
/* baseline: the lock could not be had in time and an update ran without it (see um_lock) */
extern __u64 lock_timeouts;
/* The memory timeline's ring (unitmeter.h), its origin (set by the loader before attach; 0: off)
 * and the values that found their bucket still unread by the loader. */
extern struct um_timeline_bucket timeline[UM_TIMELINE_SLOTS];
extern __u64 timeline_start_ns;
extern __u64 timeline_overruns;
/*
 * A value of the group's RSS (charge 0) or memory charge (charge 1), into the timeline's bucket
 * of this instant (timeline.bpf.c). The lock held, baseline.
 */
extern int timeline_note(__u32 charge, __u64 bytes);
/* possible CPUs: the bound of every loop over them (set by the loader) */
extern const volatile __u32 nr_possible_cpus;
/*
 * Set by the loader when the kernel's threads keep private RSS caches (task->rss_stat, before
 * the per-CPU mm counters): rss.bpf.c then reads them where they change.
 */
extern const volatile __u32 thread_rss_caches;
/* The same, known false at compile time in the per-CPU build: its code and relocations go. */
#define UM_THREAD_CACHES (UM_BASELINE && thread_rss_caches)

/*
 * Read-modify-write of shared counters. With fetching atomics (5.12) they are the compiler's
 * builtins; the baseline runs the same steps as plain code, inside um_lock().
 */
#if UM_BASELINE
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
#else
#define um_fetch_add(p, v) __sync_fetch_and_add(p, v)
#define um_cas(p, expected, desired) __sync_val_compare_and_swap(p, expected, desired)
#define um_xchg(p, v) __sync_lock_test_and_set(p, v)
#endif

/*
 * A bounded loop whose body is a callback, long (*fn)(__u64 index, void *ctx) returning 1 to
 * stop: bpf_loop where the kernel has it (5.17; every kernel of the per-CPU build), so the
 * verifier walks the body once instead of once per iteration (most of the programs' load time
 * was such loops); a plain loop in the baseline. Evaluates to the iterations run.
 */
#if UM_BASELINE
#define UM_LOOP(n, fn, ctx)                                                                \
	({                                                                                 \
		long __i;                                                                  \
		for (__i = 0; __i < (long)(n); __i++)                                      \
			if ((fn)(__i, (ctx)))                                              \
				break;                                                     \
		__i;                                                                       \
	})
#else
#define UM_LOOP(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#endif

/* Tries at the baseline lock: its holder runs a few hundred instructions with preemption off. */
#define UM_LOCK_TRIES 256

/*
 * The baseline's one lock, around every read-modify-write of shared accounting state: taken by
 * inserting its key (an insert that fails while the key is there), released by deleting it.
 * BPF spin locks are refused to tracing programs on these kernels. Not had in time (a holder
 * interrupted, or nested on this CPU), the update runs unlocked and lock_timeouts says so.
 * Returns whether it is held; with fetching atomics it is never taken.
 */
static __always_inline bool um_lock(void)
{
#if UM_BASELINE
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
#if UM_BASELINE
	__u32 key = 0;

	if (held)
		bpf_map_delete_elem(&baseline_lock, &key);
#endif
}

/*
 * Fields of the current task. bpf_get_current_task_btf() (5.11) gives a pointer the verifier
 * lets us load through; before it, the task's address is a number, read with probe reads.
 */
#if UM_BASELINE
#define UM_UNTRUSTED_TASK(p) (p)
#define current_task() ((struct task_struct *)bpf_get_current_task())
#define TASK_READ(task, ...) BPF_CORE_READ(task, __VA_ARGS__)
#else
/*
 * A task pointer as a read-only, untrusted one: loads through it stay direct (fault-safe) loads,
 * and the verifier no longer asks, for every pointer they yield, whether its type is trusted, a
 * search of the kernel's BTF by name (on 6.18 ~40% of the programs' load time went there). It
 * is the kfunc bpf_rdonly_cast (a register move at run time) behind a call of rss.bpf.c: libbpf
 * 1.1's linker cannot link one kfunc declared in several objects.
 */
extern struct task_struct *um_untrusted_task(struct task_struct *task);
#define UM_UNTRUSTED_TASK(p) um_untrusted_task(p)
#define current_task() bpf_get_current_task_btf()
#define TASK_READ(task, field) (um_untrusted_task(task)->field)
#endif
#define CURRENT_READ(...) TASK_READ(current_task(), __VA_ARGS__)

static __always_inline __u32 current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

/* Set by the loader when every tracked thread it started with carries the mark. */
extern __u32 trust_marks;

/* include/linux/sched.h */
#define UM_PF_IO_WORKER 0x00000010
#define UM_PF_KTHREAD 0x00200000

/*
 * What each CPU runs, as sched_switch last saw it (um_cpu_running_entry). Asking it costs a
 * load; asking the mark costs a task-storage lookup (~70 ns), which every page fault on the
 * machine would pay. A thread it does not name (a switch-in not seen, one running since before
 * attach) is asked the long way. Tracked means a threads entry and, while marks are trusted,
 * the mark.
 */
extern __u64 cpu_running[UM_MAX_CPUS];

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

/* What cpu_running says of the current thread on this CPU: 1 tracked, 0 not, -1 not named. */
static __always_inline int cpu_running_current(__u32 cpu)
{
	__u64 seen;

	if (cpu >= UM_MAX_CPUS)
		return -1;
	seen = cpu_running[CPU_SLOT(cpu)];
	return seen >> 1 == (__u32)bpf_get_current_pid_tgid() ? (int)(seen & 1) : -1;
}

static __always_inline bool current_marked(void)
{
#if UM_BASELINE
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&threads, &tid) != NULL;
#else
	return bpf_task_storage_get(&tracked_tasks, bpf_get_current_task_btf(), 0, 0) != NULL;
#endif
}

/* Whether a task that has a threads entry carries the mark (not a stale entry's reused tid). */
static __always_inline bool task_marked(struct task_struct *task)
{
#if UM_BASELINE
	return true;
#else
	return bpf_task_storage_get(&tracked_tasks, task, 0, 0) != NULL;
#endif
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

/* Page bytes each CPU holds for the tracked thread cpu_running names (see unitmeter.h). */
extern struct cpu_pending_alloc cpu_pending_alloc[UM_MAX_CPUS];

/* Mark a task as tracked; a failure (out of memory) is counted like a full map. */
static __always_inline void mark_tracked(struct task_struct *task)
{
#if !UM_BASELINE
	/* an unmarked tracked task would be skipped: from now on, look every event up */
	if (!bpf_task_storage_get(&tracked_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		__sync_fetch_and_add(&map_full, 1);
		trust_marks = 0;
	}
#endif
}

/*
 * Raise a maximum shared by all CPUs. A plain compare-and-store can lose the higher of two racing
 * values; the CAS retries only while another CPU keeps raising it, so a few rounds suffice.
 */
static __always_inline void raise_to(__u64 *max, __u64 value)
{
	__u64 seen = *max;

	for (int i = 0; i < 3 && value > seen; i++) {
		__u64 prev = um_cas(max, seen, value);

		if (prev == seen)
			break;
		seen = prev;
	}
}

/* The same for a peak of a signed sum: a sum at or below zero raises nothing. */
static __always_inline void peak_raise(__u64 *peak, __s64 value)
{
	if (value > 0)
		raise_to(peak, (__u64)value);
}

/* The runqueue's count of interrupt time (CONFIG_IRQ_TIME_ACCOUNTING, not on every kernel). */
struct rq___irq_time {
	u64 prev_irq_time;
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
#if UM_BASELINE
	/* the runqueue's address may be a plain number here (probe-read from the current task) */
	if (bpf_core_field_exists(rq->prev_steal_time_rq))
		ns += BPF_CORE_READ(rq, prev_steal_time_rq);
	if (bpf_core_field_exists(((struct rq___irq_time *)rq)->prev_irq_time))
		ns += BPF_CORE_READ((struct rq___irq_time *)rq, prev_irq_time);
#else
	/* direct BTF loads, not probe-read calls: this runs twice for every unit */
	if (bpf_core_field_exists(rq->prev_steal_time_rq))
		ns += rq->prev_steal_time_rq;
	if (bpf_core_field_exists(((struct rq___irq_time *)rq)->prev_irq_time))
		ns += ((struct rq___irq_time *)rq)->prev_irq_time;
#endif
	return ns;
}

static __always_inline __u64 task_cpu_steal_ns(struct task_struct *task)
{
	struct cfs_rq *cfs_rq = UM_UNTRUSTED_TASK(task)->se.cfs_rq;

	return cfs_rq ? rq_steal_ns(cfs_rq->rq) : 0;
}

/* task_cpu_steal_ns() of the current task. */
static __always_inline __u64 current_cpu_steal_ns(void)
{
#if UM_BASELINE
	struct cfs_rq *cfs_rq = CURRENT_READ(se.cfs_rq);

	return cfs_rq ? rq_steal_ns(BPF_CORE_READ(cfs_rq, rq)) : 0;
#else
	return task_cpu_steal_ns(bpf_get_current_task_btf());
#endif
}

/* A wall-clock span on one CPU, less the steal measured on that CPU between its ends. */
static __always_inline __u64 on_cpu_span(__u64 wall_ns, __u64 steal_start, __u64 steal_end)
{
	__u64 stolen = steal_end > steal_start ? steal_end - steal_start : 0;

	return stolen < wall_ns ? wall_ns - stolen : 0;
}

/* Insert a fresh map value; a full map is counted, never silent. */
static __always_inline int map_insert(void *map, const void *key, const void *value)
{
	int err = bpf_map_update_elem(map, key, value, BPF_NOEXIST);

	if (err && err != -17 /* EEXIST */)
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
	__u32 slot = (__u32)(id & (UM_UNIT_SLOTS - 1));
	struct um_unit *unit;

	if (!id)
		return NULL;
	unit = bpf_map_lookup_elem(&units, &slot);
	return unit && unit->id == id ? unit : NULL;
}

/* Apply a change of scope RSS to one open unit (missing: the unit already closed). */
static __always_inline void unit_rss_apply(__u64 id, __s64 delta)
{
	struct um_unit *unit = unit_get(id);

	if (!unit)
		return;
	peak_raise(&unit->peak_rss_bytes, um_fetch_add(&unit->rss_bytes, delta) + delta);
	__sync_fetch_and_add(&unit->n_rss_changes, 1);
}

/* An RSS change of one mm: the mm's own figure, the group's, and its open units'. */
static __always_inline void rss_apply(struct um_mm *mm, __s64 delta)
{
	peak_raise(&mm->peak_rss_bytes, um_fetch_add(&mm->rss_bytes, delta) + delta);
	__s64 group = um_fetch_add(&group_rss_bytes, delta) + delta;

	peak_raise(&group_peak_rss_bytes, group);
	timeline_note(0, group > 0 ? group : 0);
	unit_rss_apply(mm->units[0], delta);
	unit_rss_apply(mm->units[1], delta);
}

/* Retire an mm its process no longer uses: keep its peak, take its pages off every sum. */
static __always_inline void mm_retire(struct um_proc *proc, __u64 mm_key)
{
	struct um_mm *mm = bpf_map_lookup_elem(&mms, &mm_key);

	if (!mm)
		return;
	if (mm->peak_rss_bytes > proc->peak_rss_bytes)
		proc->peak_rss_bytes = mm->peak_rss_bytes;
	if (mm->rss_bytes)
		rss_apply(mm, -mm->rss_bytes);
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
 * Take what a CPU holds: an exchange, since the CPU itself may be adding at the same time. A
 * plain load first: most of the time there is nothing, and the exchange is a locked write.
 */
static __always_inline __u64 cpu_pending_take(__u32 cpu)
{
	__u64 bytes;

	if (cpu >= UM_MAX_CPUS || !cpu_pending_alloc[CPU_SLOT(cpu)].bytes)
		return 0;
#if UM_BASELINE
	/* take out what was read with a plain add: the CPU's own adds meanwhile stay */
	bytes = cpu_pending_alloc[CPU_SLOT(cpu)].bytes;
	__sync_fetch_and_add(&cpu_pending_alloc[CPU_SLOT(cpu)].bytes, -bytes);
#else
	bytes = __sync_lock_test_and_set(&cpu_pending_alloc[CPU_SLOT(cpu)].bytes, 0);
#endif
	return bytes;
}

/*
 * Charge what a CPU holds for thread tid (of proc), if it runs that thread. The baseline takes
 * only its own CPU's: without an exchange, two CPUs taking the same bytes would both charge
 * them; another CPU's bytes go at that thread's switch-out.
 */
static __always_inline void cpu_pending_charge(__u32 cpu, __u32 tid, struct um_proc *proc)
{
	__u64 bytes;

	if (cpu >= UM_MAX_CPUS || cpu_running[CPU_SLOT(cpu)] != um_cpu_running_entry(tid, 1))
		return;
	if (UM_BASELINE && cpu != bpf_get_smp_processor_id())
		return;
	bytes = cpu_pending_take(cpu);
	if (bytes)
		proc_charge_page_alloc(proc, bytes);
}

/* A unit already closed is only a stale id in a list: nothing can be charged to it. */
static __always_inline void units_prune(__u64 *list)
{
	if (list[1] && !unit_get(list[1]))
		list[1] = 0;
	if (list[0] && !unit_get(list[0])) {
		list[0] = list[1];
		list[1] = 0;
	}
}

/*
 * Lists keep the ids of units that closed while the process lived in them (a closing unit
 * does not walk every process): they are dropped here, before they could count as overflow.
 */
static __always_inline void units_push(__u64 *list, __u64 id)
{
	units_prune(list);
	if (list[UM_SCOPE_DEPTH - 1])
		__sync_fetch_and_add(&scope_overflows, 1);
	list[1] = list[0];
	list[0] = id;
}

static __always_inline void units_remove(__u64 *list, __u64 id)
{
	if (list[0] == id) {
		list[0] = list[1];
		list[1] = 0;
	} else if (list[1] == id) {
		list[1] = 0;
	}
}

/* The process's last thread is gone: emit its record and forget it (defined in proc.bpf.c). */
extern int proc_finish(__u32 tgid, __u64 now);

/* Close an open unit: emit its record and forget it everywhere (defined in units.bpf.c). */
extern int unit_close(__u32 tgid, __u64 id, __u32 status);

#endif /* UNITMETER_STATE_BPF_H */
