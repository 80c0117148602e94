/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernels before the per-CPU mm counters (6.2): each mm counter is one atomic, and every thread
 * keeps a private cache of its own RSS changes (task->rss_stat). The helpers that copy a tracked
 * thread's cache into its threads entry, used by rss.bpf.c (faults, its mm's events) and
 * cpu.bpf.c (switch-out). Only reached where the loader set thread_rss_caches.
 */
#ifndef UNITMETER_RSS_CACHE_BPF_H
#define UNITMETER_RSS_CACHE_BPF_H

#include "model.bpf.h"

/* The kernel's types before the per-CPU counters (include/linux/mm_types_task.h), for CO-RE. */
struct mm_rss_stat___cached {
	atomic_long_t count[UM_MM_NR_MEMBERS];
};

struct mm_struct___cached {
	struct mm_rss_stat___cached rss_stat;
} __attribute__((preserve_access_index));

struct task_rss_stat___cached {
	int events; /* faults since the last fold */
	int count[UM_MM_NR_MEMBERS];
};

struct task_struct___cached {
	struct task_rss_stat___cached rss_stat;
} __attribute__((preserve_access_index));

/* mm/memory.c: a thread folds its cache when a fault finds more than this many since the last */
#define UM_TASK_RSS_EVENTS_THRESH 64
/* include/linux/sched.h */
#define UM_PF_EXITING 0x00000004

/* A thread's cache as the kernel holds it now; false when it cannot be read. */
static __always_inline bool task_cache_read(struct task_struct *task,
					    struct task_rss_stat___cached *cache)
{
	return !bpf_core_read(cache, sizeof(*cache), &((struct task_struct___cached *)task)->rss_stat);
}

/* Whether the copy in a threads entry still equals the cache the kernel holds. */
static __always_inline bool cache_unchanged(const struct um_thread *th,
					    const struct task_rss_stat___cached *cache)
{
	return th->rss_cache_pages[UM_MM_FILEPAGES] == cache->count[UM_MM_FILEPAGES] &&
	       th->rss_cache_pages[UM_MM_ANONPAGES] == cache->count[UM_MM_ANONPAGES] &&
	       th->rss_cache_pages[UM_MM_SHMEMPAGES] == cache->count[UM_MM_SHMEMPAGES];
}

/*
 * Bring a thread's copy of its cache up to the kernel's and apply the difference to the mm it
 * uses (cache_fold: `folding` is the member the kernel is folding into the mm at this very
 * event, -1 for none). The cache's part goes first, so a fold never shows its pages twice, not
 * even for an instant.
 */
static __always_inline void cache_sync_locked(struct um_thread *th, struct um_mm *mm,
					      const struct task_rss_stat___cached *cache, int folding)
{
	__s64 pages = cache_fold(th->rss_cache_pages, cache->count, folding);

	if (pages)
		rss_apply_locked(mm, pages * (__s64)page_size);
}

/*
 * Whether an event of the current task's own mm is the fold of its cache (sync_mm_rss). Folds
 * come from a fault that found the cache's event count past the threshold (it is then one past
 * anything a fault leaves), from exit (PF_EXITING) and from exec (in_execve); other changes of
 * one's own mm in those moments (a huge page mapped while exiting) are taken as folds too, and
 * the copy is mended at the next fault's end or switch-out.
 */
static __always_inline bool cache_is_folding(const struct task_rss_stat___cached *cache)
{
	struct task_struct *task = (void *)bpf_get_current_task();

	return cache->events > UM_TASK_RSS_EVENTS_THRESH + 1 ||
	       (BPF_CORE_READ(task, flags) & UM_PF_EXITING) ||
	       BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
}

/*
 * A tracked thread's cache after it may have changed outside our events: at the end of a
 * fault, at switch-out (cpu.bpf.c). task is the thread's address, mm_key the mm it uses. The
 * lock is taken only when the copy differs. A static function, not a global one: kernels 6.2 to
 * 6.7 verify every global function, reached or not, and its reads do not exist there. Not
 * inlined: its copy of the cache would sit in the switch-out's frame, and the switch-out's
 * deepest chain (a process's last thread closing its unit, whose close waits in a bpf_loop
 * callback) would pass the verifier's 512 bytes of stack in the thread-cache build.
 */
static __noinline __attribute__((unused)) int thread_cache_catch_up(__u64 task, __u32 tid,
								   __u64 mm_key)
{
	struct task_rss_stat___cached cache;
	struct um_thread *th;
	struct um_mm *mm;
	bool held;

	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th || !mm_key || !task_cache_read((struct task_struct *)task, &cache) ||
	    cache_unchanged(th, &cache))
		return 0;
	held = um_lock();
	/* an mm not adopted yet keeps the old copy: its adoption reads the counters alone */
	mm = bpf_map_lookup_elem(&mms, &mm_key);
	if (mm)
		cache_sync_locked(th, mm, &cache, -1);
	um_unlock(held);
	return 0;
}

#endif /* UNITMETER_RSS_CACHE_BPF_H */
