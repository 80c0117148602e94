// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * handover: units that open and close while other threads of the process run and switch, so a
 * unit's close meets its threads' switch-ins and switch-outs on the other CPUs.
 *
 * --units N calls of fit_unit(); each spins --body-us of the calling thread's CPU. --threads T
 * workers spin through the whole run in steps of about a microsecond, yielding the CPU
 * (sched_yield) every --yield-us steps (0: never): with more threads than CPUs, a storm of
 * context switches at every unit's edges.
 *
 * Truth: the calling thread reads its own CLOCK_THREAD_CPUTIME_ID at each of four phases of
 * each unit as it announces them: before the call (open), first thing in the body (start),
 * last thing in the body (end) and after the return (closed). Each worker brackets its own
 * clock at each change between two readings (struct watch): the last taken before a look that
 * still found the old phase, and one taken after the look that found the new one. So each
 * unit's CPU lies between
 *   cpu_ns    = the caller's (end - start) + each worker's (end's first - start's second):
 *               the least that ran inside the body, and
 *   cpu_hi_ns = the caller's (closed - open) + each worker's (closed's second - open's first):
 *               the most that ran across the call, its probes too;
 * on real hardware the two differ by the probes' work and the workers' clock readings (tens of
 * microseconds). Printed as {"pid", "threads", "context_switches", "units": [{"cpu_ns",
 * "cpu_hi_ns"}...]} on the last line. --dump FILE also writes, a line per phase, the caller's
 * CLOCK_MONOTONIC and clock and each worker's two readings (for a unit's post-mortem).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include "truth.h"

#define MAX_WORKERS 16
#define PHASES 4 /* open, start, end, closed */

static _Atomic uint64_t phase;     /* units * PHASES + phase: the last one announced */
static _Atomic int done;
static uint64_t n_phases;          /* units * PHASES */
static uint64_t yield_steps;
static uint64_t *clocks; /* the caller's clock at each phase, [unit * PHASES + phase] */
static uint64_t *walls; /* CLOCK_MONOTONIC at each announce (--dump) */

struct job {
	uint64_t body_ns;
	uint64_t unit;
};

/* The calling thread announces a phase and reads its own clock at it. */
static void announce(uint64_t p)
{
	clocks[p] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (walls)
		walls[p] = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&phase, p + 1);
}

/*
 * A worker's clock at a phase change lies between two readings: `before`, its clock at its last
 * look that still found the old phase (read before that look), and `after`, read after the look
 * that found the new one. Off its CPU in between it used nothing, so the two are close; a
 * worker held up in the kernel across a change (a yield on a contended runqueue) has them far
 * apart, and the truth says so instead of guessing.
 */
struct watch {
	uint64_t *before, *after; /* [unit * PHASES + phase] */
	uint64_t seen, last;      /* phases seen; the clock read before the last look */
};

static void look(struct watch *w)
{
	uint64_t clock = clock_ns(CLOCK_THREAD_CPUTIME_ID), now = atomic_load(&phase), after;

	if (now != w->seen) {
		after = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (; w->seen < now && w->seen < n_phases; w->seen++) {
			w->before[w->seen] = w->last;
			w->after[w->seen] = after;
		}
	}
	w->last = clock;
}

/*
 * Between two looks at the phase a worker makes no system call but its clock reading: it
 * yields by count of steps, not by its clock.
 */
static void *worker(void *arg)
{
	struct watch *w = arg;
	uint64_t steps = 0;
	volatile double x = 1.0;

	/* a thread's clock starts at 0 when it is created: what it ran before its first reading
	 * (its start in the kernel and libc, faults on its new stack) may lie inside the first
	 * unit, when it first runs after that unit opened (as under 6.12's scheduler in a guest) */
	w->last = 0;
	while (!atomic_load(&done)) {
		look(w);
		for (int i = 0; i < 200; i++) /* a step: ~1 us */
			x = x * 1.0000001 + 0.5;
		if (yield_steps && ++steps >= yield_steps) {
			sched_yield();
			steps = 0;
		}
	}
	look(w);
	return NULL;
}

__attribute__((noinline, used)) void fit_unit(struct job *j)
{
	announce(j->unit * PHASES + 1);
	burn_cpu_ns(j->body_ns);
	announce(j->unit * PHASES + 2);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long units = arg_long(argc, argv, "--units", 1000), threads = arg_long(argc, argv, "--threads", 3);
	uint64_t body_ns = arg_long(argc, argv, "--body-us", 100) * 1000ULL;
	pthread_t tids[MAX_WORKERS];
	struct watch watches[MAX_WORKERS] = { 0 };
	struct rusage ru;

	yield_steps = arg_long(argc, argv, "--yield-us", 20);
	if (units < 1 || threads < 0 || threads > MAX_WORKERS)
		return 2;
	n_phases = (uint64_t)units * PHASES;
	clocks = calloc(n_phases, sizeof(uint64_t));
	if (!clocks)
		return 1;
	for (long t = 0; t < threads; t++) {
		watches[t].before = calloc(n_phases, sizeof(uint64_t));
		watches[t].after = calloc(n_phases, sizeof(uint64_t));
		if (!watches[t].before || !watches[t].after)
			return 1;
	}
	if (arg_str(argc, argv, "--dump", NULL))
		walls = calloc(n_phases, sizeof(uint64_t));
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, worker, &watches[t]))
			return 1;
	for (long u = 0; u < units; u++) {
		struct job j = { .body_ns = body_ns, .unit = u };

		announce(u * PHASES);
		fit_unit(&j);
		announce(u * PHASES + 3);
	}
	atomic_store(&done, 1);
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	getrusage(RUSAGE_SELF, &ru);
	if (walls) {
		FILE *f = fopen(arg_str(argc, argv, "--dump", NULL), "w");

		for (uint64_t p = 0; f && p < n_phases; p++) {
			fprintf(f, "%llu %llu", (unsigned long long)walls[p], (unsigned long long)clocks[p]);
			for (long t = 0; t < threads; t++)
				fprintf(f, " %llu %llu", (unsigned long long)watches[t].before[p],
					(unsigned long long)watches[t].after[p]);
			fprintf(f, "\n");
		}
		if (f)
			fclose(f);
	}

	printf("{\"pid\": %d, \"threads\": %ld, \"context_switches\": %ld, \"units\": [", (int)getpid(),
	       threads + 1, ru.ru_nvcsw + ru.ru_nivcsw);
	for (long u = 0; u < units; u++) {
		const uint64_t *c = clocks + u * PHASES;
		uint64_t lo = c[2] - c[1], hi = c[3] - c[0];

		for (long t = 0; t < threads; t++) {
			const uint64_t *before = watches[t].before + u * PHASES;
			const uint64_t *after = watches[t].after + u * PHASES;

			/* the least it can have run inside the body, the most across the call */
			lo += before[2] > after[1] ? before[2] - after[1] : 0;
			hi += after[3] - before[0];
		}
		printf("%s{\"cpu_ns\": %llu, \"cpu_hi_ns\": %llu}", u ? ", " : "",
		       (unsigned long long)lo, (unsigned long long)hi);
	}
	printf("]}\n");
	return 0;
}
