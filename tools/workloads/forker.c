// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forker: a parent that holds --parent-mib MiB forks --children K children. Each child reads its
 * own VmRSS right after fork (the inherited pages), touches --child-mib MiB, reads VmRSS again,
 * and once all K hold at the same time, burns --cpu-ms of CPU.
 * Truth: every child's RSS at fork and while holding, its CPU (its own clock, and its whole
 * life's from the parent's wait4 rusage), and the parent's RSS while
 * all children hold; their sum is the group's peak (pages shared after fork count in each
 * process, as ps and SLURM count them).
 */
#include <sys/resource.h>
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
	struct {
		pid_t pid;
		unsigned long long cpu_ns;
	} reaped[64];
	int nreaped = 0;
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
	/* rusage from wait4 covers each child's whole life, its exit (freeing its pages) included */
	for (;;) {
		struct rusage ru;
		pid_t pid = wait4(-1, NULL, 0, &ru);

		if (pid <= 0)
			break;
		if (nreaped < 64) {
			reaped[nreaped].pid = pid;
			reaped[nreaped++].cpu_ns =
				(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
		}
	}
	close(results[1]);
	while ((n = read(results[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	printf("{\"parent_rss_bytes\": %lld, \"children\": [", parent_rss);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		long long hold = 0;
		unsigned long long rusage_ns = 0;
		char *p = strstr(l, "\"rss_at_hold_bytes\": ");
		pid_t pid = atoi(l + strlen("{\"pid\": "));

		if (p)
			hold = atoll(p + 21);
		for (int i = 0; i < nreaped; i++)
			if (reaped[i].pid == pid)
				rusage_ns = reaped[i].cpu_ns;
		sum_hold += hold;
		l[strlen(l) - 1] = '\0'; /* reopen the object to add the rusage figure */
		printf("%s%s, \"rusage_cpu_ns\": %llu}", sum_hold == hold ? "" : ", ", l, rusage_ns);
	}
	printf("], \"group_peak_truth_bytes\": %lld}\n", parent_rss + sum_hold);
	return 0;
}
