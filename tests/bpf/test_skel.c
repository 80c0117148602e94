// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The real skeleton, opened, configured, loaded and attached by the loader's own code
 * (user/trace/tracer.c), with the unit probes on a function of this binary: called nested and
 * from threads, then the BPF side's state is read where a black-box test cannot see it, the
 * .bss counters and the maps, as the kernel's prog_tests do. Once for each build this kernel
 * can load; the skeleton is destroyed at the end and the kernel must hold none of it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "helpers.h"
#include "trace/kernel.h"
#include "trace/tracer.h"
#include "unitmeter.h"
#include "unitmeter.skel.h"

TestSuite(bpf_skel, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

/* the unit spec's index, as the attach cookie (per-CPU, thread-cache) or the entry program
 * (baseline) gives it */
#define SPEC 7
#define DEPTH 5      /* nesting of each call: only the outermost is a unit */
#define WORKERS 4
#define CALLS 1000   /* per worker: enough that overlapping entries and returns meet */

static int calls; /* bodies run: DEPTH per outermost call, so the recursion really happened */
static int (*volatile unit_self)(int depth);

/*
 * The unit function: exported and never inlined, so it has a symbol of its own for the probe.
 * It calls itself through a volatile pointer, which the compiler cannot turn into a loop.
 * noipa is GCC's (clang, which cross-builds, knows only noinline).
 */
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noinline, noipa))
#endif
int um_bpf_skel_unit(int depth)
{
	/* a probe cannot go on an instruction with a lock prefix (x86 uprobes refuse it:
	 * arch/x86/kernel/uprobes.c), which the atomic add would be if it came first */
	asm volatile("nop" ::: "memory");
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	return depth > 1 ? unit_self(depth - 1) + 1 : 1;
}

/* ---- the unit records, as the loader's consumer would get them ----------------------------- */

struct seen {
	pid_t pid;
	int units, other_specs, incomplete;
	__u64 ids[1 + WORKERS * CALLS + 1];
};

static int on_record(void *ctx, void *data, size_t size, const struct gpu_nvml_unit *nvml)
{
	const struct um_unit_record *rec = data;

	(void)nvml;
	struct seen *seen = ctx;

	if (size < sizeof(*rec) || rec->type != UM_REC_UNIT || rec->pid != (__u32)seen->pid)
		return 0;
	if (rec->spec != SPEC)
		seen->other_specs++;
	if (rec->status != UM_UNIT_COMPLETE)
		seen->incomplete++;
	if (seen->units < (int)(sizeof(seen->ids) / sizeof(seen->ids[0])))
		seen->ids[seen->units] = rec->id;
	seen->units++;
	return 0;
}

/* Read the ring until it holds as many of our unit records as units were opened (2 s at most:
 * records are submitted without a wake-up, tracer__poll reads what is there). */
static void read_units(struct tracer *t, struct seen *seen, struct unitmeter_bpf *skel)
{
	for (int i = 0; i < 40 && seen->units < (int)skel->bss->next_unit_id; i++)
		cr_assert_geq(tracer__poll(t, 50 /* ms */), 0);
}

/* ---- what the maps hold -------------------------------------------------------------------- */

static void expect_no_open_unit(struct unitmeter_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.units);
	int open = 0;
	__u32 first = 0;

	for (__u32 slot = 0; slot < UM_UNIT_SLOTS; slot++) {
		struct um_unit unit;

		cr_assert_eq(bpf_map_lookup_elem(fd, &slot, &unit), 0, "units[%u]: %s", slot,
			     strerror(errno));
		if (unit.id && open++ == 0)
			first = slot;
	}
	cr_expect_eq(open, 0, "%d slots of the units map still hold a unit after every call "
		     "returned (the first: slot %u)", open, first);
}

/* The test process's entry: no call under way, no unit of its own or in its scope lists. */
static void expect_proc_at_rest(struct unitmeter_bpf *skel, pid_t pid)
{
	struct um_proc proc;
	struct um_mm mm;
	__u32 key = pid;

	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.procs), &key, &proc), 0,
		     "no procs entry for the test process %d", pid);
	cr_expect_eq(proc.unit_depth, 0, "unit_depth %u after every call returned", proc.unit_depth);
	cr_expect_eq(proc.own_unit, 0, "own_unit %llu after its unit closed",
		     (unsigned long long)proc.own_unit);
	cr_expect(proc.units[0] == 0 && proc.units[1] == 0, "the scope list holds {%llu, %llu}",
		  (unsigned long long)proc.units[0], (unsigned long long)proc.units[1]);
	if (proc.mm && bpf_map_lookup_elem(bpf_map__fd(skel->maps.mms), &proc.mm, &mm) == 0) {
		cr_expect_eq(mm.tgid, (__u32)pid);
		cr_expect(mm.units[0] == 0 && mm.units[1] == 0, "the mm's list holds {%llu, %llu}",
			  (unsigned long long)mm.units[0], (unsigned long long)mm.units[1]);
	}
}

static bool thread_tracked(struct unitmeter_bpf *skel, pid_t pid, pid_t tid)
{
	struct um_thread th;
	__u32 key = tid;

	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.threads), &key, &th) == 0 &&
	       th.tgid == (__u32)pid;
}

/* ---- the workers --------------------------------------------------------------------------- */

struct workers {
	pthread_barrier_t called; /* every worker has made its calls, and is alive */
	pthread_barrier_t leave;  /* the maps were read: the workers may exit */
	pid_t tids[WORKERS];
	int results[WORKERS];
};

static struct workers workers;

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;

	workers.tids[me] = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < CALLS; i++)
		workers.results[me] += um_bpf_skel_unit(DEPTH - 2);
	pthread_barrier_wait(&workers.called);
	pthread_barrier_wait(&workers.leave);
	return NULL;
}

/* ---- one build ----------------------------------------------------------------------------- */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Wait until pid is the only process tracked. The test process tracks itself, so what attach
 * runs (the shell and ldconfig that look for libcuda, user/trace/gpu_probes.c) is tracked as its
 * child, and takes the baseline's lock beside this process until its last switch-out. A run's
 * tracer is never tracked, nor are its children.
 */
static void expect_only_tracked(struct unitmeter_bpf *skel, pid_t pid)
{
	int fd = bpf_map__fd(skel->maps.procs), others = 0;

	for (int i = 0; i < 200; i++) {
		__u32 key, *prev = NULL;

		others = 0;
		while (bpf_map_get_next_key(fd, prev, &key) == 0) {
			others += key != (__u32)pid;
			prev = &key;
		}
		if (!others)
			return;
		sleep_ms(10);
	}
	cr_expect_eq(others, 0, "%d processes still tracked beside %d 2 s after attach", others,
		     pid);
}

/*
 * Threads calling at once: calls that overlap are one unit, so between one unit and one per
 * call; every unit opened has its record, and closes.
 */
static void calls_from_threads(struct tracer *t, struct unitmeter_bpf *skel, struct seen *seen)
{
	__u64 before = skel->bss->next_unit_id;
	pthread_t threads[WORKERS];
	int left = WORKERS;

	pthread_barrier_init(&workers.called, NULL, WORKERS + 1);
	pthread_barrier_init(&workers.leave, NULL, WORKERS + 1);
	for (int i = 0; i < WORKERS; i++)
		cr_assert_eq(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i), 0);
	pthread_barrier_wait(&workers.called);
	/* threads started after attach: the fork programs gave each an entry of this process */
	for (int i = 0; i < WORKERS; i++)
		cr_expect(thread_tracked(skel, seen->pid, workers.tids[i]),
			  "worker thread %d has no threads entry of process %d", workers.tids[i],
			  seen->pid);
	pthread_barrier_wait(&workers.leave);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(threads[i], NULL);
		cr_expect_eq(workers.results[i], CALLS * (DEPTH - 2));
	}
	cr_expect_gt(skel->bss->next_unit_id, before, "no unit opened by %d threads' calls",
		     WORKERS);
	cr_expect_leq(skel->bss->next_unit_id - before, WORKERS * CALLS);
	read_units(t, seen, skel);
	cr_expect_eq(seen->units, (int)skel->bss->next_unit_id, "%d unit records, %llu units opened",
		     seen->units, (unsigned long long)skel->bss->next_unit_id);
	cr_expect_eq(seen->other_specs, 0);
	cr_expect_eq(seen->incomplete, 0);
	/* ids are sequence * UM_UNIT_SLOTS + slot, sequences 1, 2, ... each once */
	for (int i = 0; i < seen->units && i < (int)(sizeof(seen->ids) / sizeof(seen->ids[0])); i++) {
		__u64 seq = seen->ids[i] / UM_UNIT_SLOTS;

		cr_expect(seq >= 1 && seq <= skel->bss->next_unit_id, "unit id %llu: sequence %llu",
			  (unsigned long long)seen->ids[i], (unsigned long long)seq);
		for (int j = 0; j < i; j++)
			cr_expect_neq(seen->ids[j] / UM_UNIT_SLOTS, seq, "sequence %llu twice",
				      (unsigned long long)seq);
	}
	/* a worker's entry goes with its exit, which may trail the join by a moment */
	for (int i = 0; left && i < 100; i++) {
		left = 0;
		for (int w = 0; w < WORKERS; w++)
			left += thread_tracked(skel, seen->pid, workers.tids[w]);
		if (left)
			sleep_ms(20);
	}
	cr_expect_eq(left, 0, "%d exited workers still in the threads map after 2 s", left);
}

/*
 * Open the build with the unit probes on um_bpf_skel_unit, the loader's choice forced as
 * UNITMETER_BUILD forces it; a build this kernel cannot load, and is not its own, skips the test.
 */
static struct tracer *tracer_of_build(enum kernel_build build, struct unit_target *target,
				      const struct tracer_config *cfg, struct seen *seen)
{
	static char exe[PATH_MAX];
	struct kernel_features k, own;
	struct tracer *t = NULL;
	ssize_t n;
	int err;

	/* read once a process, and each test is a process of its own */
	setenv("UNITMETER_BUILD", kernel_build_name(build), 1);
	kernel_features_read(&k);
	own = k;
	kernel_choose_build(&own); /* the kernel's own build, unforced */
	if (k.build == KERNEL_BUILD_NONE)
		cr_skip_test("%s", k.refusal);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert_gt(n, 0, "/proc/self/exe: %s", strerror(errno));
	exe[n] = '\0';
	target->path = exe;
	unit_self = um_bpf_skel_unit;

	err = tracer__open(&t, cfg, on_record, seen);
	/* a build that is not this kernel's own may not load (the baseline on 6.18 does not):
	 * skipped; the kernel's own build must */
	if (err && own.build != build)
		cr_skip_test("the %s build does not load on kernel %s, which takes the %s build: %s",
			     kernel_build_name(build), k.release, kernel_build_name(own.build),
			     strerror(-err));
	cr_assert_eq(err, 0, "the %s build, this kernel's own, did not load: %s",
		     kernel_build_name(build), strerror(-err));
	cr_assert_eq(tracer__kernel(t)->build, build);
	return t;
}

/*
 * Load the build, make one nested call (and the threads' calls), and read the state.
 */
static void units_of_one_build(enum kernel_build build, bool from_threads)
{
	struct unit_target target = { .symbol = "um_bpf_skel_unit", .cookie = SPEC };
	/* programs of the test's own: the counters, the unit ids and the release below are its alone
	 * (a node's set is shared with the runs of the tests beside it) */
	struct tracer_config cfg = { .targets = &target, .n_targets = 1, .own_programs = true };
	struct seen seen = { .pid = getpid() };
	struct unitmeter_bpf *skel;
	struct bpf_ids held = { 0 };
	struct tracer *t = tracer_of_build(build, &target, &cfg, &seen);
	__u64 timeouts_before, timeouts;
	char which[2048];

	skel = tracer__skel(t);
	cr_assert_eq(tracer__track(t, getpid(), getppid(), false), 0);
	cr_assert_eq(tracer__attach(t), 0);
	expect_only_tracked(skel, seen.pid);
	timeouts_before = skel->bss->lock_timeouts;

	/* nested: one unit, whose record carries the spec's index */
	cr_assert_eq(um_bpf_skel_unit(DEPTH), DEPTH);
	cr_assert_eq(calls, DEPTH, "the function ran %d times, not %d: no recursion", calls, DEPTH);
	cr_expect_eq(skel->bss->next_unit_id, 1, "%llu units opened by one nested call",
		     (unsigned long long)skel->bss->next_unit_id);
	read_units(t, &seen, skel);
	cr_expect_eq(seen.units, 1, "%d unit records for one nested call", seen.units);
	cr_expect_eq(seen.other_specs, 0, "a record with another spec than %d", SPEC);
	cr_expect_eq(seen.incomplete, 0);

	if (from_threads)
		calls_from_threads(t, skel, &seen);
	expect_no_open_unit(skel);
	expect_proc_at_rest(skel, seen.pid);
	cr_expect(thread_tracked(skel, seen.pid, seen.pid), "the main thread has no threads entry");
	cr_expect_eq(skel->bss->map_full, 0);
	cr_expect_eq(skel->bss->scope_overflows, 0, "%llu scope overflows",
		     (unsigned long long)skel->bss->scope_overflows);
	cr_expect_eq(tracer__group(t)->lost_records, 0);
	/*
	 * The baseline's lock gives up after UM_LOCK_TRIES and counts it (docs/output.md: lock_timeouts):
	 * 4 threads entering and returning without pause in an emulated guest (the 6.1 cell) do
	 * reach that, and the units still close, as asserted above. One call at a time, with
	 * nothing else tracked running, never does.
	 */
	/* only the baseline has the lock (the others' um_lock is compiled out) */
	timeouts = skel->bss->lock_timeouts - timeouts_before;
	if (build == KERNEL_BUILD_BASELINE && from_threads)
		cr_log_info("%llu lock timeouts in the threads' storm", (unsigned long long)timeouts);
	else if (build == KERNEL_BUILD_BASELINE)
		cr_expect_eq(timeouts, 0, "%llu lock timeouts in one call", (unsigned long long)timeouts);

	bpf_ids_collect(seen.pid, &held);
	cr_expect_gt(held.n[0], 0, "held no program");
	/* the uprobe pair of the spec, and the tracepoints' links */
	cr_expect_geq(held.n[1], 2, "held %d links", held.n[1]);
	tracer__destroy(t);
	cr_expect(bpf_ids_gone(&held, which, sizeof(which)),
		  "still loaded 3 s after the skeleton was destroyed:%s", which);
}

Test(bpf_skel, per_cpu_nested_call_is_one_unit)
{
	units_of_one_build(KERNEL_BUILD_PER_CPU, false);
}

Test(bpf_skel, per_cpu_threads_calling_at_once_close_every_unit)
{
	units_of_one_build(KERNEL_BUILD_PER_CPU, true);
}

Test(bpf_skel, thread_cache_nested_call_is_one_unit)
{
	units_of_one_build(KERNEL_BUILD_THREAD_CACHE, false);
}

Test(bpf_skel, thread_cache_threads_calling_at_once_close_every_unit)
{
	units_of_one_build(KERNEL_BUILD_THREAD_CACHE, true);
}

Test(bpf_skel, baseline_nested_call_is_one_unit)
{
	units_of_one_build(KERNEL_BUILD_BASELINE, false);
}

Test(bpf_skel, baseline_threads_calling_at_once_close_every_unit)
{
	units_of_one_build(KERNEL_BUILD_BASELINE, true);
}

/* Fork a child that touches memory and exits, and reap it, this many times: each zaps and copies
 * pages from outside their mm. */
#define UNTRACKED_CHILDREN 50

static void untracked_forks_and_exits(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	for (int i = 0; i < UNTRACKED_CHILDREN; i++) {
		pid_t child = fork();

		if (child < 0)
			_exit(3);
		if (child == 0) {
			size_t bytes = 256 << 10;
			volatile char *p = malloc(bytes);

			for (size_t off = 0; p && off < bytes; off += 4096)
				p[off] = 1;
			_exit(0);
		}
		if (waitpid(child, NULL, 0) != child)
			_exit(4);
	}
	_exit(0);
}

/*
 * Two children forked before the trace: a single-threaded sleeper, tracked (the programs then
 * attached), and an untracked one that runs body once told through go. Each keeps only its own
 * pipe's read end, so either sees the end of it if this process stops early. The sleeper
 * leaves when idle is closed.
 */
struct children {
	pid_t sleeper, untracked;
	int idle, go; /* the write ends */
};

static void children_start(struct tracer *t, struct seen *seen, void (*body)(int go),
			   struct children *kids)
{
	int idle[2], go[2];
	char c;

	cr_assert_eq(pipe(idle), 0);
	cr_assert_eq(pipe(go), 0);
	kids->sleeper = fork();
	cr_assert_geq(kids->sleeper, 0);
	if (kids->sleeper == 0) {
		close(idle[1]);
		close(go[0]);
		close(go[1]);
		_exit(read(idle[0], &c, 1) < 0);
	}
	kids->untracked = fork();
	cr_assert_geq(kids->untracked, 0);
	if (kids->untracked == 0) {
		close(idle[0]);
		close(idle[1]);
		close(go[1]);
		body(go[0]);
		_exit(0);
	}
	close(idle[0]);
	close(go[0]);
	kids->idle = idle[1];
	kids->go = go[1];
	seen->pid = kids->sleeper;
	cr_assert_eq(tracer__track(t, kids->sleeper, getpid(), false), 0);
	cr_assert_eq(tracer__attach(t), 0);
}

/* Tell the untracked child to run its body and wait for it; its exit status. */
static int children_run_untracked(const struct children *kids)
{
	int status = -1;

	cr_assert_eq(write(kids->go, "g", 1), 1);
	cr_assert_eq(waitpid(kids->untracked, &status, 0), kids->untracked);
	return status;
}

static void children_end(const struct children *kids)
{
	close(kids->go);
	close(kids->idle);
	cr_expect_eq(waitpid(kids->sleeper, NULL, 0), kids->sleeper);
}

/*
 * Every exit on the machine zaps its pages, and every fork copies them, from outside the mm (the
 * task's mm is already gone, or is the parent's): rss_stat sees each. An mm no tracked process
 * has must be left before the baseline's lock, or every exit on the machine queues behind it (a
 * tracked thread's probe gave up waiting in the 5.10 and 6.1 cells). The lock is held here from
 * user space while an untracked process forks and reaps children: a program that took it would
 * time out and count it. The process tracked is one that sleeps through it.
 */
Test(bpf_skel, baseline_untracked_exits_leave_the_lock_alone)
{
	struct unit_target target = { .symbol = "um_bpf_skel_unit", .cookie = SPEC };
	/* programs of the test's own: the counters, the unit ids and the release below are its alone
	 * (a node's set is shared with the runs of the tests beside it) */
	struct tracer_config cfg = { .targets = &target, .n_targets = 1, .own_programs = true };
	struct seen seen = { 0 };
	struct children kids;
	struct unitmeter_bpf *skel;
	struct tracer *t;
	__u32 key = 0, one = 1;
	int status, lock_fd;

	/* opened first: a kernel that cannot load the baseline skips before anything is forked */
	t = tracer_of_build(KERNEL_BUILD_BASELINE, &target, &cfg, &seen);
	skel = tracer__skel(t);
	children_start(t, &seen, untracked_forks_and_exits, &kids);

	lock_fd = bpf_map__fd(skel->maps.baseline_lock);
	cr_assert_eq(bpf_map_update_elem(lock_fd, &key, &one, BPF_NOEXIST), 0,
		     "the baseline lock was held with nothing tracked running");
	status = children_run_untracked(&kids);
	cr_expect_eq(bpf_map_delete_elem(lock_fd, &key), 0, "the lock's key went while held here");
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the untracked forks failed: %#x",
		  status);
	cr_expect_eq(skel->bss->lock_timeouts, 0,
		     "%llu lock timeouts while %d untracked processes forked and exited",
		     (unsigned long long)skel->bss->lock_timeouts, UNTRACKED_CHILDREN);

	children_end(&kids);
	tracer__destroy(t);
}

/* CPU time a stale entry's new task burns, yielding all along so that it switches often */
#define STALE_BURN_NS (200 * 1000000LL)

static long long process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void burn_and_yield(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	while (process_cpu_ns() < STALE_BURN_NS)
		for (int i = 0; i < 1000; i++)
			sched_yield();
	_exit(0);
}

/*
 * A threads entry left by an exit never seen, its tid now an untracked task's (the tid reused):
 * while the marks are trusted, sched_switch asks each task's mark before any lookup and leaves
 * that task alone at both edges. Before, its switch-outs charged the task's runtime to the
 * entry's process, and its exit removed the entry and ended that process's record (its only
 * thread gone, as the entry said). The entry is made here from user space,
 * a copy of a tracked sleeper's, for a child forked before the trace, which then burns CPU and
 * yields. The sleeper is single-threaded: before 6.9 only a leader can be marked from user
 * space (pidfd_open), and this process has Criterion's threads.
 */
static void stale_entry_left_alone(enum kernel_build build)
{
	struct unit_target target = { .symbol = "um_bpf_skel_unit", .cookie = SPEC };
	/* programs of the test's own: the maps written below are its alone */
	struct tracer_config cfg = { .targets = &target, .n_targets = 1, .own_programs = true };
	struct seen seen = { 0 };
	struct children kids;
	struct unitmeter_bpf *skel;
	struct um_thread th, stale;
	struct um_proc before, after;
	int status, threads_fd, procs_fd;
	__u32 key, burner_key;
	struct tracer *t;

	t = tracer_of_build(build, &target, &cfg, &seen);
	skel = tracer__skel(t);
	children_start(t, &seen, burn_and_yield, &kids);
	cr_assert(skel->bss->trust_marks, "the sleeper could not be marked: no mark to ask");

	/* the stale entry: the sleeper's, as if its tid were the burner's */
	threads_fd = bpf_map__fd(skel->maps.threads);
	procs_fd = bpf_map__fd(skel->maps.procs);
	key = kids.sleeper;
	cr_assert_eq(bpf_map_lookup_elem(threads_fd, &key, &th), 0, "no entry for the sleeper");
	th.slice = 0;
	th.runtime_seen_ns = 0;
	th.exit_called = 0;
	burner_key = kids.untracked;
	cr_assert_eq(bpf_map_update_elem(threads_fd, &burner_key, &th, BPF_NOEXIST), 0,
		     "the burner %d already had an entry", kids.untracked);
	cr_assert_eq(bpf_map_lookup_elem(procs_fd, &key, &before), 0);

	status = children_run_untracked(&kids);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the burner failed: %#x", status);
	if (bpf_map_lookup_elem(procs_fd, &key, &after) == 0)
		cr_expect_lt(after.cpu_ns - before.cpu_ns, STALE_BURN_NS / 2,
			     "the sleeper was charged %llu ns while an untracked task burnt %lld ns "
			     "under its stale entry",
			     (unsigned long long)(after.cpu_ns - before.cpu_ns), STALE_BURN_NS);
	else
		cr_expect_fail("the sleeper's process was ended by the exit of the untracked task "
			       "under its stale entry");
	cr_expect_eq(bpf_map_lookup_elem(threads_fd, &burner_key, &stale), 0,
		     "the stale entry went with the untracked task's exit");
	cr_expect_eq(stale.runtime_seen_ns, 0, "the untracked task's runtime was taken: %llu ns",
		     (unsigned long long)stale.runtime_seen_ns);
	children_end(&kids);
	tracer__destroy(t);
}

Test(bpf_skel, per_cpu_stale_entry_left_alone)
{
	stale_entry_left_alone(KERNEL_BUILD_PER_CPU);
}

Test(bpf_skel, thread_cache_stale_entry_left_alone)
{
	stale_entry_left_alone(KERNEL_BUILD_THREAD_CACHE);
}
