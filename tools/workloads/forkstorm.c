// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forkstorm: --outside N children forked outside any unit, then one call of fit_unit() that forks
 * --inside M children. Each burst forks every child before reaping any, so hundreds of processes
 * start and end within milliseconds of each other; each child exits at once.
 * Truth: the pid of every child fork() returned, and that each was reaped with status 0:
 * {"pid": P, "outside": [...], "inside": [...], "forks": N+M, "reaped_ok": N+M}
 */
#include <sys/wait.h>
#include "truth.h"

#define MAX_CHILDREN 4096

static pid_t outside[MAX_CHILDREN], inside[MAX_CHILDREN];
static long reaped_ok;

/* Fork n children at once, then reap them all. Returns how many forks succeeded. */
static long burst(pid_t *pids, long n)
{
	long forked = 0;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			break;
		}
		if (pid == 0)
			_exit(0);
		pids[forked++] = pid;
	}
	for (long i = 0; i < forked; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			reaped_ok++;
	}
	return forked;
}

static long n_inside;

__attribute__((noinline, used)) void fit_unit(long n)
{
	n_inside = burst(inside, n);
}

static void print_pids(const char *name, const pid_t *pids, long n)
{
	printf("\"%s\": [", name);
	for (long i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", pids[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	long n_out = arg_long(argc, argv, "--outside", 250);
	long n_in = arg_long(argc, argv, "--inside", 250);

	if (n_out < 0 || n_in < 0 || n_out > MAX_CHILDREN || n_in > MAX_CHILDREN)
		return 2;
	n_out = burst(outside, n_out);
	fit_unit(n_in);
	printf("{\"pid\": %d, ", getpid());
	print_pids("outside", outside, n_out);
	printf(", ");
	print_pids("inside", inside, n_inside);
	printf(", \"forks\": %ld, \"reaped_ok\": %ld}\n", n_out + n_inside, reaped_ok);
	return 0;
}
