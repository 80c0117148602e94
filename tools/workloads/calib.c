// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * calib: the C tasks of the "projection holds" check (tools/bench/project_holds.py). The same
 * program runs a few units under `unitmeter run` (the calibration) and the full task untraced,
 * confined as SLURM would; each unit is one call of fit_unit().
 *   serial   --units N [--mib 64] [--cpu-ms 100]  each unit touches M MiB of its own, burns C ms
 *            of CPU and unmaps; a 32 MiB data set is loaded (touched) before the first unit
 *   pool     --units N [--workers 4] [--shared-mib 256] [--mib 16] [--cpu-ms 300]  the parent
 *            touches S MiB, then forks W workers that share those pages (copy-on-write, never
 *            written after the fork) and take the next unit from a shared counter, as a pool
 *            does; a unit reads a slice of the shared array, touches M MiB of its own and burns
 *   threads  --units N [--threads 2] [--mib 32] [--cpu-ms 300]  each unit touches M MiB, then
 *            runs T threads that each burn C ms (units on several cores)
 * The last stdout line is this run's truth: {"mode", "units" done, "wall_s", "peak_rss_bytes"}
 * (the peak is the parent's VmHWM; the pool's workers share most of theirs with it).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/wait.h>
#include "truth.h"

#define MAX_THREADS 64

struct unit {
	long mib;
	long cpu_ms;
	long threads;
	const char *shared; /* pool: the array the workers share, read only */
	size_t shared_bytes;
	long index;
	uint64_t sum; /* what the unit read of the shared array, so the read is not optimised out */
};

static void *burn_thread(void *arg)
{
	const struct unit *u = arg;

	burn_cpu_ns(u->cpu_ms * 1000000ULL);
	return NULL;
}

__attribute__((noinline, used)) void fit_unit(struct unit *u)
{
	pthread_t tids[MAX_THREADS];
	long extra = u->threads - 1 < MAX_THREADS ? u->threads - 1 : MAX_THREADS;
	char *own = u->mib > 0 ? touch_anon(u->mib * MIB) : NULL;

	if (u->shared) {
		/* an eighth of the shared array, a page at a time: read, so no copy is made */
		size_t slice = u->shared_bytes / 8, start = (u->index % 8) * slice;

		for (size_t off = 0; off < slice; off += 4096)
			u->sum += (unsigned char)u->shared[start + off];
	}
	for (long i = 0; i < extra; i++) /* none when threads <= 1 */
		if (pthread_create(&tids[i], NULL, burn_thread, u)) {
			fprintf(stderr, "calib: cannot create thread %ld\n", i + 1);
			exit(1);
		}
	burn_cpu_ns(u->cpu_ms * 1000000ULL);
	for (long i = 0; i < extra; i++)
		pthread_join(tids[i], NULL);
	if (own)
		munmap(own, u->mib * MIB);
}

/* W workers take units from a shared counter until N are taken; the units done, counted. */
static long run_pool(long n, long workers, struct unit base)
{
	long *counters =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;

	if (counters == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	counters[0] = counters[1] = 0; /* next unit, units done */
	for (long w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			exit(1);
		}
		if (pid == 0) {
			long i;

			while ((i = __atomic_fetch_add(&counters[0], 1, __ATOMIC_SEQ_CST)) < n) {
				struct unit u = base;

				u.index = i;
				fit_unit(&u);
				__atomic_fetch_add(&counters[1], 1, __ATOMIC_SEQ_CST);
			}
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fprintf(stderr, "calib: a worker ended with status 0x%x\n", status);
	return counters[1];
}

int main(int argc, char **argv)
{
	const char *mode = arg_str(argc, argv, "--mode", "serial");
	long n = arg_long(argc, argv, "--units", 10), done = 0;
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	struct unit base = {
		.cpu_ms = arg_long(argc, argv, "--cpu-ms", 100),
		.threads = 1,
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "serial")) {
		/* the data set, loaded before the first unit and kept: the task's fixed memory */
		char *data = touch_anon(32 * MIB);

		base.mib = arg_long(argc, argv, "--mib", 64);
		for (; done < n; done++) {
			struct unit u = base;

			u.index = done;
			fit_unit(&u);
		}
		munmap(data, 32 * MIB);
	} else if (!strcmp(mode, "pool")) {
		base.shared_bytes = arg_long(argc, argv, "--shared-mib", 256) * MIB;
		base.shared = touch_anon(base.shared_bytes);
		base.mib = arg_long(argc, argv, "--mib", 16);
		base.cpu_ms = arg_long(argc, argv, "--cpu-ms", 300);
		done = run_pool(n, arg_long(argc, argv, "--workers", 4), base);
	} else if (!strcmp(mode, "threads")) {
		base.mib = arg_long(argc, argv, "--mib", 32);
		base.cpu_ms = arg_long(argc, argv, "--cpu-ms", 300);
		base.threads = arg_long(argc, argv, "--threads", 2);
		for (; done < n; done++) {
			struct unit u = base;

			u.index = done;
			fit_unit(&u);
		}
	} else {
		fprintf(stderr, "calib: unknown --mode %s\n", mode);
		return 2;
	}
	printf("{\"mode\": \"%s\", \"units\": %ld, \"wall_s\": %.6f, \"peak_rss_bytes\": %lld}\n",
	       mode, done, (clock_ns(CLOCK_MONOTONIC) - start) / 1e9, self_hwm_bytes());
	return done == n ? 0 : 1;
}
