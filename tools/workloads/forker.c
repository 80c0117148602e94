// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forker: a parent that holds --parent-mib MiB forks --children K children. Each child reads its
 * own VmRSS right after fork (the inherited pages), touches --child-mib MiB, reads VmRSS again,
 * and once all K hold at the same time, burns --cpu-ms of CPU.
 * Truth: every child's RSS at fork and while holding, its CPU clock, and the parent's RSS while
 * all children hold; their sum is the group's peak (pages shared after fork count in each
 * process, as ps and SLURM count them).
 */
#include <sys/wait.h>
#include "truth.h"

int main(int argc, char **argv)
{
	long parent_mib = arg_long(argc, argv, "--parent-mib", 64);
	long k = arg_long(argc, argv, "--children", 3);
	long child_mib = arg_long(argc, argv, "--child-mib", 32);
	long cpu_ms = arg_long(argc, argv, "--cpu-ms", 200);
	int ready[2], go[2], results[2];
	long long parent_rss, sum_hold = 0;
	char line[512], buf[65536];
	ssize_t got = 0, n;

	touch_anon(parent_mib * MIB);
	if (pipe(ready) || pipe(go) || pipe(results))
		return 1;
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			long long at_fork = self_rss_bytes(), at_hold;
			uint64_t cpu;
			char c;

			close(go[1]);
			if (child_mib > 0)
				touch_anon(child_mib * MIB);
			at_hold = self_rss_bytes();
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			/* EOF on go: every child holds its memory now */
			while (read(go[0], &c, 1) > 0)
				;
			burn_cpu_ns(cpu_ms * 1000000ULL);
			cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
			snprintf(line, sizeof(line),
				 "{\"pid\": %d, \"rss_at_fork_bytes\": %lld, \"rss_at_hold_bytes\": %lld, "
				 "\"cpu_ns\": %llu}\n", getpid(), at_fork, at_hold, (unsigned long long)cpu);
			if (write(results[1], line, strlen(line)) < 0)
				_exit(1);
			_exit(0);
		}
	}
	close(go[0]);
	for (long i = 0; i < k; i++) {
		char c;

		if (read(ready[0], &c, 1) != 1)
			return 1;
	}
	parent_rss = self_rss_bytes();
	close(go[1]);
	while (wait(NULL) > 0)
		;
	close(results[1]);
	while ((n = read(results[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	printf("{\"parent_rss_bytes\": %lld, \"children\": [", parent_rss);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		long long hold = 0;
		char *p = strstr(l, "\"rss_at_hold_bytes\": ");

		if (p)
			hold = atoll(p + 21);
		sum_hold += hold;
		printf("%s%s", sum_hold == hold ? "" : ", ", l);
	}
	printf("], \"group_peak_truth_bytes\": %lld}\n", parent_rss + sum_hold);
	return 0;
}
