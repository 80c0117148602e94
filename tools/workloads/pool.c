// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pool: processes that are running before a tracer attaches, for attach's walk of what a process
 * had forked. It prints "ready" on stdout once they are all up, then waits for --go FILE to exist
 * before any calls fit_unit().
 *   workers --workers K --units U --unit-mib M --cpu-ms C
 *       a parent with K workers; each calls fit_unit U times, touching M MiB and burning C ms.
 *       Truth: each worker's pid, its units' own CPU (CLOCK_THREAD_CPUTIME_ID around each call)
 *       and VmHWM after its last unit.
 *   churn --churn-ms T
 *       a parent with one child that forks a grandchild every millisecond, each living up to
 *       20 ms; a grandchild that sees the go file calls fit_unit once (1 ms) and exits; the
 *       child forks for T ms after go. The tree changes all the time a tracer walks it.
 *       Truth: the pid of every grandchild that called fit_unit.
 * The truth is the parent's last stdout line, as JSON.
 */
#include <stdbool.h>
#include <sys/wait.h>
#include "truth.h"

struct unit_truth {
	pid_t pid;
	int units;
	uint64_t cpu_ns;
	long long hwm_bytes;
};

__attribute__((noinline, used)) uint64_t fit_unit(long mib, long cpu_ms)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	char *p = mib ? touch_anon((size_t)mib * MIB) : NULL;

	burn_cpu_ns((uint64_t)cpu_ms * 1000000ULL);
	if (p)
		munmap(p, (size_t)mib * MIB);
	return clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void wait_for(const char *path)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };

	while (!exists(path))
		nanosleep(&pause, NULL);
}

static int workers(int argc, char **argv, const char *go)
{
	long k = arg_long(argc, argv, "--workers", 3);
	long units = arg_long(argc, argv, "--units", 4);
	long mib = arg_long(argc, argv, "--unit-mib", 16);
	long cpu_ms = arg_long(argc, argv, "--cpu-ms", 100);
	int ready[2], results[2];
	struct unit_truth t[64];
	char c;

	if (k < 1 || k > 64 || pipe(ready) || pipe(results))
		return 1;
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct unit_truth mine = { .pid = getpid() };

			close(ready[0]);
			close(results[0]);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			wait_for(go);
			for (long u = 0; u < units; u++) {
				mine.cpu_ns += fit_unit(mib, cpu_ms);
				mine.units++;
			}
			mine.hwm_bytes = self_hwm_bytes();
			if (write(results[1], &mine, sizeof(mine)) != sizeof(mine))
				_exit(1);
			_exit(0);
		}
	}
	close(ready[1]);
	close(results[1]);
	for (long i = 0; i < k; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < k; i++)
		if (read(results[0], &t[i], sizeof(t[i])) != sizeof(t[i]))
			return 1;
	while (wait(NULL) > 0)
		;
	printf("{\"workers\": [");
	for (long i = 0; i < k; i++)
		printf("%s{\"pid\": %d, \"units\": %d, \"cpu_ns\": %llu, \"hwm_bytes\": %lld}",
		       i ? ", " : "", t[i].pid, t[i].units, (unsigned long long)t[i].cpu_ns,
		       t[i].hwm_bytes);
	printf("]}\n");
	return 0;
}

static int churn(int argc, char **argv, const char *go)
{
	long churn_ms = arg_long(argc, argv, "--churn-ms", 300);
	int results[2];
	pid_t child, pid;
	bool first = true;

	if (pipe(results))
		return 1;
	child = fork();
	if (child == 0) {
		uint64_t stop = 0;
		struct timespec tick = { 0, 1000 * 1000 };
		bool said = false;

		close(results[0]);
		for (;;) {
			pid_t g;

			if (!said) {
				/* the tree is up: the parent says ready for it */
				if (write(results[1], &(pid_t){ 0 }, sizeof(pid_t)) != sizeof(pid_t))
					_exit(1);
				said = true;
			}
			if (!stop && exists(go))
				stop = clock_ns(CLOCK_MONOTONIC) + (uint64_t)churn_ms * 1000000ULL;
			if (stop && clock_ns(CLOCK_MONOTONIC) > stop)
				break;
			g = fork();
			if (g == 0) {
				for (int i = 0; i < 10; i++) {
					if (exists(go)) {
						pid_t me = getpid();

						fit_unit(0, 1);
						if (write(results[1], &me, sizeof(me)) != sizeof(me))
							_exit(1);
						_exit(0);
					}
					nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
				}
				_exit(0);
			}
			nanosleep(&tick, NULL);
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	close(results[1]);
	if (read(results[0], &pid, sizeof(pid)) != sizeof(pid))
		return 1;
	printf("ready\n");
	fflush(stdout);
	printf("{\"child\": %d, \"unit_pids\": [", child);
	while (read(results[0], &pid, sizeof(pid)) == sizeof(pid)) {
		printf("%s%d", first ? "" : ", ", pid);
		first = false;
	}
	printf("]}\n");
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	const char *go = arg_str(argc, argv, "--go", NULL);

	if (argc < 2 || !go) {
		fprintf(stderr, "usage: pool workers|churn --go FILE [...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "workers"))
		return workers(argc, argv, go);
	if (!strcmp(argv[1], "churn"))
		return churn(argc, argv, go);
	fprintf(stderr, "pool: unknown mode %s\n", argv[1]);
	return 2;
}
