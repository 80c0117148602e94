// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threads: --threads T threads, each burning --cpu-ms of CPU. Truth: each thread's
 * CLOCK_THREAD_CPUTIME_ID, the process's CLOCK_PROCESS_CPUTIME_ID at the very end, and the
 * process's peak RSS (VmHWM) then, which covers every thread's stack.
 *
 * --in-child: all of that runs in a forked child; the parent waits for it and prints the child's
 * truth with "pid" and "rusage_cpu_ns", the CPU wait4 reports for the whole child, its exit
 * path included, which the child's own clocks cannot see.
 *
 * --exec-mib M instead: the main thread leaves (pthread_exit) while a second thread touches M MiB
 * and then execs /bin/true, so a non-leader thread execs and takes the process id. Truth: the
 * bytes it touched, printed before the exec.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "truth.h"

static long cpu_ms;
static long exec_mib;

static void *touch_then_exec(void *arg)
{
	char *const argv[] = { "true", NULL };

	(void)arg;
	touch_anon(exec_mib * MIB);
	printf("{\"touched_bytes\": %lld}\n", (long long)exec_mib * MIB);
	fflush(stdout);
	execv("/bin/true", argv);
	perror("execv");
	exit(1);
}

static void *worker(void *arg)
{
	*(uint64_t *)arg = burn_cpu_ns(cpu_ms * 1000000ULL);
	return NULL;
}

/* --in-child: the parent's part. Returns the exit status for main. */
static int wait_for_child(pid_t child, int from_child)
{
	char truth[512];
	struct rusage ru;
	ssize_t got;
	int status;

	got = read(from_child, truth, sizeof(truth) - 1);
	if (got <= 1 || wait4(child, &status, 0, &ru) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	truth[got] = '\0';
	truth[strcspn(truth, "}")] = '\0';
	printf("%s, \"pid\": %d, \"rusage_cpu_ns\": %llu}\n", truth, (int)child,
	       (unsigned long long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
				    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL));
	return 0;
}

int main(int argc, char **argv)
{
	long n = arg_long(argc, argv, "--threads", 4);
	pthread_t tids[64];
	uint64_t used[64], sum = 0;
	int pipefd[2];
	pid_t child;

	cpu_ms = arg_long(argc, argv, "--cpu-ms", 300);
	exec_mib = arg_long(argc, argv, "--exec-mib", 0);
	if (exec_mib > 0) {
		pthread_t toucher;

		if (pthread_create(&toucher, NULL, touch_then_exec, NULL))
			return 2;
		pthread_exit(NULL);
	}
	if (n < 1 || n > 64)
		return 2;
	if (arg_flag(argc, argv, "--in-child")) {
		if (pipe(pipefd))
			return 2;
		child = fork();
		if (child < 0)
			return 2;
		if (child > 0) {
			close(pipefd[1]);
			return wait_for_child(child, pipefd[0]);
		}
		close(pipefd[0]);
		dup2(pipefd[1], 1);
		close(pipefd[1]);
	}
	for (long i = 0; i < n; i++)
		pthread_create(&tids[i], NULL, worker, &used[i]);
	for (long i = 0; i < n; i++) {
		pthread_join(tids[i], NULL);
		sum += used[i];
	}
	printf("{\"threads\": %ld, \"threads_cpu_ns\": %llu, \"process_cpu_ns\": %llu, "
	       "\"peak_rss_bytes\": %lld}\n", n, (unsigned long long)sum,
	       (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID), self_hwm_bytes());
	return 0;
}
