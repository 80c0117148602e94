// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * units: calls of fit_unit() with known costs, one --mode per property of the unit model.
 * Each unit's truth (bytes touched, thread CPU clocks, pids) is printed as JSON:
 * {"units": [...]} on the last line of stdout, or one line per unit with --stream.
 *   spikes    --sizes 16,48,32   each unit touches its size in MiB, holds --hold-ms, unmaps;
 *             with --kib the sizes are KiB (units smaller than a thread's RSS cache folds);
 *             with --keep a unit's pages are unmapped after it returns, not inside it;
 *             with --exit-at-once the first unit only, then _exit(0) as it returns (no output)
 *   cpu       --units N --cpu-ms C [--threads T] [--thread-mib M]  CPU-bound units, T threads
 *             each; each helper thread first touches M MiB and unmaps it; with --rt-joiner the
 *             process keeps to one CPU and the calling thread is SCHED_FIFO, so a joined
 *             helper's wake-up of it preempts the helper inside its exit, before the helper's
 *             last switch: the next unit opens while the kernel still runs a thread the program
 *             has joined
 *   recursion --units N --depth D [--level-ms L]  fit_unit calls itself D times; each level burns
 *             L ms of CPU after the inner call returns, so a unit that closed at the innermost
 *             return would miss D x L ms (recursion_cpu_ns: the outermost body's thread clock)
 *   fork      --child-mib M --cpu-ms C  the unit forks a child that holds M MiB and burns C ms
 *   exit      two units, then one that calls exit(3) inside the unit
 *   kill      one unit, then one that SIGKILLs its own process inside the unit
 *   workers   --workers W --units N  W forked workers run units at the same time
 *   slow      --units N --sleep-ms S  small units with pauses (for attach); prints "ready"
 *   exec      a unit, then one that execs this program again inside the unit; the new image
 *             runs one more unit and prints the truth of all three (same pid throughout)
 *   write     --paths P1,P2,... --bytes B  unit i creates Pi and writes B bytes to it (write(2),
 *             64 KiB at a time); the truth adds "files": [{"path", "file_size"}], unit i's file
 *             and its size afterwards
 *   oom       --cgroup DIR --mib M  joins the memory cgroup DIR (its limit set by the caller),
 *             runs one 8 MiB unit, then one that touches up to M MiB a MiB at a time, printing
 *             {"touched_mib": k, "rss_bytes": r} after each, until the OOM killer ends it
 * cpu, fork, workers and exec modes (exec: the units that return) also report call_cpu_ns,
 * the process clock across the whole call as its caller sees it: the unit probes' own work on
 * the thread and the helper threads' start and exit included. A unit's CPU lies between cpu_ns
 * and call_cpu_ns (plus child_cpu_ns in fork mode).
 * Each unit also reports proc_cpu_ns, CLOCK_PROCESS_CPUTIME_ID across the unit's body (every
 * thread of the process, the helper threads' creation and exit included).
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET, sched_getcpu */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "truth.h"

/* Threads a unit may run at once (--threads), the calling thread included, plus one. */
#define MAX_THREADS 256

struct job {
	long mib;
	long kib; /* added to mib: units of a few pages */
	int keep; /* leave the pages mapped at the unit's return, in kept */
	char *kept;
	long hold_ms;
	long cpu_ms;
	long threads;
	long thread_mib; /* touched and unmapped by each helper thread before it burns */
	long depth;
	long level_ms;  /* recursion: CPU each level burns after its inner call returns */
	int recursing;  /* set by the outermost call */
	long child_mib;
	int exit_inside, kill_inside;
	char *const *exec_argv; /* exec this inside the unit, after the CPU work */
	char *exec_truth;       /* ... once this unit's truth is appended to this argument */
	size_t exec_truth_len;
	long oom_mib;           /* touch up to this many MiB, reporting RSS after each */
	const char *write_path; /* create this file and write write_bytes to it */
	long write_bytes;
	/* truth, filled by the unit */
	uint64_t cpu_ns, proc_cpu_ns;
	uint64_t call_cpu_ns;   /* the caller's process clock across the call (call_fit_unit) */
	uint64_t recursion_cpu_ns; /* the outermost call's thread clock across its whole body */
	long long rss_before, rss_hold;
	pid_t child;
	uint64_t child_cpu_ns;
	long long child_rss_hold;
};

static int unit_json(char *buf, size_t len, int first, const struct job *j);
static void write_file(const char *path, long bytes);

/* The helper threads' attributes: NULL, or SCHED_OTHER under an --rt-joiner caller. */
static pthread_attr_t *helper_attr;

/* --rt-joiner: one CPU for the process, SCHED_FIFO for the caller, SCHED_OTHER for helpers. */
static void become_rt_joiner(void)
{
	static pthread_attr_t attr;
	struct sched_param rt = { .sched_priority = 1 }, other = { 0 };
	cpu_set_t one;
	int err = 0;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) ||
	    (err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt))) {
		fprintf(stderr, "units: --rt-joiner: cannot pin to one CPU and take SCHED_FIFO: %s\n",
			strerror(errno ? errno : err));
		exit(3);
	}
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &other);
	helper_attr = &attr;
}

static void *burn_thread(void *arg)
{
	struct job *j = arg;

	if (j->thread_mib > 0)
		munmap(touch_anon(j->thread_mib * MIB), j->thread_mib * MIB);
	return (void *)(uintptr_t)burn_cpu_ns(j->cpu_ms * 1000000ULL);
}

__attribute__((noinline, used)) void fit_unit(struct job *j)
{
	if (j->depth > 0) {
		int outermost = !j->recursing;
		uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		j->recursing = 1;
		j->depth--;
		fit_unit(j);
		burn_cpu_ns(j->level_ms * 1000000ULL);
		if (outermost)
			j->recursion_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - start;
		return;
	}
	uint64_t cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t proc_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	j->rss_before = self_rss_bytes();
	if (j->mib > 0 || j->kib > 0) {
		size_t bytes = j->mib * MIB + j->kib * 1024;
		char *p = touch_anon(bytes);

		j->rss_hold = self_rss_bytes();
		sleep_ms(j->hold_ms);
		if (j->keep)
			j->kept = p;
		else
			munmap(p, bytes);
	}
	if (j->cpu_ms > 0) {
		pthread_t tids[MAX_THREADS];
		long extra = j->threads > 1 ? (j->threads - 1 < MAX_THREADS ? j->threads - 1 : MAX_THREADS) : 0;

		for (long i = 0; i < extra; i++)
			if (pthread_create(&tids[i], helper_attr, burn_thread, j)) {
				fprintf(stderr, "units: cannot create thread %ld\n", i + 1);
				exit(1);
			}
		burn_cpu_ns(j->cpu_ms * 1000000ULL);
		for (long i = 0; i < extra; i++) {
			void *used;

			pthread_join(tids[i], &used);
			j->cpu_ns += (uintptr_t)used;
		}
	}
	/* this thread's clock over the whole unit, plus the helper threads' (counted above) */
	j->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	/* the joined threads' time stays in the process clock, their start and exit included */
	j->proc_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - proc_start;
	if (j->write_path)
		write_file(j->write_path, j->write_bytes);
	if (j->oom_mib > 0) {
		/* one MiB at a time, so the last line printed bounds the RSS at the kill */
		for (long k = 1; k <= j->oom_mib; k++) {
			touch_anon(MIB);
			printf("{\"touched_mib\": %ld, \"rss_bytes\": %lld}\n", k, self_rss_bytes());
		}
	}
	if (j->exec_argv) {
		size_t used = strlen(j->exec_truth);

		unit_json(j->exec_truth + used, j->exec_truth_len - used, 0, j);
		fflush(stdout);
		execv("/proc/self/exe", j->exec_argv);
		perror("execv");
		exit(1);
	}
	if (j->child_mib > 0) {
		/* the parent's own part of this, fork and wait included, is the unit's too */
		uint64_t parent_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		int fds[2];

		if (pipe(fds))
			exit(1);
		j->child = fork();
		if (j->child == 0) {
			uint64_t figures[2];

			touch_anon(j->child_mib * MIB);
			figures[1] = (uint64_t)self_rss_bytes();
			burn_cpu_ns(j->cpu_ms * 1000000ULL);
			figures[0] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
			if (write(fds[1], figures, sizeof(figures)) != sizeof(figures))
				_exit(1);
			_exit(0);
		} else {
			uint64_t figures[2] = { 0, 0 };
			struct rusage ru;

			if (read(fds[0], figures, sizeof(figures)) != sizeof(figures))
				exit(1);
			/* the child's whole CPU, its exit included (freeing its pages takes some):
			 * the kernel's rusage of the reaped child, to the microsecond */
			if (wait4(j->child, NULL, 0, &ru) != j->child)
				exit(1);
			j->child_cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
					  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
			j->child_rss_hold = (long long)figures[1];
			close(fds[0]);
			close(fds[1]);
			j->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - parent_start;
		}
	}
	if (j->exit_inside) {
		fflush(stdout);
		exit(3);
	}
	if (j->kill_inside) {
		fflush(stdout);
		kill(getpid(), SIGKILL);
	}
}

/* Create path and write bytes to it, in chunks of 64 KiB. */
static void write_file(const char *path, long bytes)
{
	static char chunk[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		fprintf(stderr, "units: cannot create %s: %s\n", path, strerror(errno));
		exit(1);
	}
	memset(chunk, 'w', sizeof(chunk));
	for (long done = 0; done < bytes;) {
		size_t n = (size_t)(bytes - done) < sizeof(chunk) ? (size_t)(bytes - done) : sizeof(chunk);
		ssize_t w = write(fd, chunk, n);

		if (w <= 0)
			exit(1);
		done += w;
	}
	close(fd);
}

/* fit_unit, with the process clock across the call as its caller sees it (call_cpu_ns). */
static void call_fit_unit(struct job *j)
{
	uint64_t start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	fit_unit(j);
	j->call_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - start;
}

static int unit_json(char *buf, size_t len, int first, const struct job *j)
{
	return snprintf(buf, len,
			"%s{\"pid\": %d, \"bytes\": %ld, \"rss_before\": %lld, \"rss_hold\": %lld, "
			"\"cpu_ns\": %llu, \"call_cpu_ns\": %llu, \"proc_cpu_ns\": %llu, \"child\": %d, "
			"\"child_cpu_ns\": %llu, \"child_rss_hold\": %lld, \"recursion_cpu_ns\": %llu}",
			first ? "" : ", ", getpid(), j->mib * (long)MIB + j->kib * 1024, j->rss_before, j->rss_hold,
			(unsigned long long)j->cpu_ns, (unsigned long long)j->call_cpu_ns,
			(unsigned long long)j->proc_cpu_ns, j->child,
			(unsigned long long)j->child_cpu_ns, j->child_rss_hold,
			(unsigned long long)j->recursion_cpu_ns);
}

static void print_unit(int first, const struct job *j)
{
	char buf[512];

	unit_json(buf, sizeof(buf), first, j);
	fputs(buf, stdout);
}

/* The memory cgroup DIR (v1 or v2): write our pid to its cgroup.procs. */
static void join_cgroup(const char *dir)
{
	char path[512], pid[16];
	int fd, n = snprintf(pid, sizeof(pid), "%d\n", getpid());

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, pid, n) != n) {
		fprintf(stderr, "units: cannot join the cgroup %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *mode = arg_str(argc, argv, "--mode", "spikes");
	long n = arg_long(argc, argv, "--units", 3);
	struct job base = {
		.hold_ms = arg_long(argc, argv, "--hold-ms", 1),
		.cpu_ms = arg_long(argc, argv, "--cpu-ms", 0),
		.threads = arg_long(argc, argv, "--threads", 1),
		.thread_mib = arg_long(argc, argv, "--thread-mib", 0),
		.child_mib = 0,
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the truths are the bytes touched: a transparent huge page holds more (a thread's first
	 * malloc arena took 32 MiB at once in the 16K arm64 guest, whose huge pages are 32 MiB);
	 * inherited by the children and across exec */
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		perror("prctl(PR_SET_THP_DISABLE)");
	if (!strcmp(mode, "spikes")) {
		char sizes[256];
		int first = 1;

		int kib = arg_flag(argc, argv, "--kib");

		/* the code and buffers a unit uses fault in now, so a unit of a few pages holds
		 * its own pages only */
		if (kib) {
			self_rss_bytes();
			munmap(touch_anon(4096), 4096);
			sleep_ms(1);
		}

		snprintf(sizes, sizeof(sizes), "%s", arg_str(argc, argv, "--sizes", "16,48,32"));
		printf("{\"units\": [");
		for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) {
			struct job j = base;

			if (kib)
				j.kib = atol(s);
			else
				j.mib = atol(s);
			j.keep = arg_flag(argc, argv, "--keep");
			fit_unit(&j);
			/* the unit's return is the command's last act: its record must still be read */
			if (arg_flag(argc, argv, "--exit-at-once"))
				_exit(0);
			if (j.kept)
				munmap(j.kept, j.mib * MIB + j.kib * 1024);
			print_unit(first, &j);
			first = 0;
		}
		printf("]}\n");
	} else if (!strcmp(mode, "cpu") || !strcmp(mode, "recursion")) {
		if (arg_flag(argc, argv, "--rt-joiner"))
			become_rt_joiner();
		printf("{\"units\": [");
		for (long i = 0; i < n; i++) {
			struct job j = base;

			j.depth = arg_long(argc, argv, "--depth", 0);
			j.level_ms = arg_long(argc, argv, "--level-ms", 0);
			call_fit_unit(&j);
			print_unit(i == 0, &j);
		}
		printf("]}\n");
	} else if (!strcmp(mode, "fork")) {
		struct job j = base;

		j.child_mib = arg_long(argc, argv, "--child-mib", 40);
		printf("{\"units\": [");
		/* the child, reaped inside the unit, is in child_cpu_ns, not in call_cpu_ns */
		call_fit_unit(&j);
		print_unit(1, &j);
		printf("]}\n");
	} else if (!strcmp(mode, "exit") || !strcmp(mode, "kill")) {
		long before = !strcmp(mode, "exit") ? 2 : 1;

		for (long i = 0; i <= before; i++) {
			struct job j = base;

			j.cpu_ms = 20;
			j.exit_inside = i == before && !strcmp(mode, "exit");
			j.kill_inside = i == before && !strcmp(mode, "kill");
			fit_unit(&j);
		}
	} else if (!strcmp(mode, "workers")) {
		long workers = arg_long(argc, argv, "--workers", 2);
		int results[2];

		if (pipe(results))
			return 1;
		for (long w = 0; w < workers; w++) {
			if (fork() == 0) {
				char line[4096];
				FILE *out = fmemopen(line, sizeof(line), "w");

				/* each worker's units differ, so a mix-up between workers shows */
				for (long i = 0; i < n; i++) {
					struct job j = base;

					j.mib = 24 * (w + 1);
					j.hold_ms = 30;
					j.cpu_ms = 150 * (w + 1);
					call_fit_unit(&j);
					fprintf(out,
						"%s{\"pid\": %d, \"bytes\": %ld, \"cpu_ns\": %llu, "
						"\"call_cpu_ns\": %llu}",
						i ? ", " : "", getpid(), j.mib * (long)MIB,
						(unsigned long long)j.cpu_ns,
						(unsigned long long)j.call_cpu_ns);
				}
				fputc('\n', out);
				fclose(out);
				if (write(results[1], line, strlen(line)) < 0)
					_exit(1);
				_exit(0);
			}
		}
		close(results[1]);
		while (wait(NULL) > 0)
			;
		{
			char buf[65536];
			ssize_t got = 0, r;

			while ((r = read(results[0], buf + got, sizeof(buf) - 1 - got)) > 0)
				got += r;
			buf[got] = '\0';
			for (char *p = buf; (p = strchr(p, '\n'));)
				*p = (p[1] ? ',' : ' ');
			printf("{\"units\": [%s]}\n", buf);
		}
	} else if (!strcmp(mode, "write")) {
		char paths[4096], files[8192] = "", *save = NULL;
		size_t used = 0;
		int first = 1;

		snprintf(paths, sizeof(paths), "%s", arg_str(argc, argv, "--paths", "units.out"));
		printf("{\"units\": [");
		for (char *path = strtok_r(paths, ",", &save); path; path = strtok_r(NULL, ",", &save)) {
			struct job j = base;
			struct stat st;

			j.write_path = path;
			j.write_bytes = arg_long(argc, argv, "--bytes", 1024);
			call_fit_unit(&j);
			print_unit(first, &j);
			if (used < sizeof(files))
				used += snprintf(files + used, sizeof(files) - used,
						 "%s{\"path\": \"%s\", \"file_size\": %lld}",
						 first ? "" : ", ", path,
						 stat(path, &st) ? -1LL : (long long)st.st_size);
			first = 0;
		}
		printf("], \"files\": [%s]}\n", files);
	} else if (!strcmp(mode, "slow")) {
		long pause = arg_long(argc, argv, "--sleep-ms", 100);

		printf("ready %d\n", getpid());
		for (long i = 0; i < n; i++) {
			struct job j = base;

			j.mib = 8;
			j.cpu_ms = 20;
			fit_unit(&j);
			printf("{\"unit\": %ld}\n", i);
			sleep_ms(pause);
		}
	} else if (!strcmp(mode, "exec")) {
		/* stage 2 is this program again, exec'd inside unit 1, given the first two truths */
		const char *before = arg_str(argc, argv, "--before-exec", NULL);
		struct job j = base;

		j.cpu_ms = 40;
		if (!before) {
			static char truths[1024];
			char *again[] = { argv[0], "--mode", "exec", "--before-exec", truths, NULL };
			struct job first = j;

			call_fit_unit(&first);
			unit_json(truths, sizeof(truths), 1, &first);
			j.exec_argv = again;
			j.exec_truth = truths;
			j.exec_truth_len = sizeof(truths);
			fit_unit(&j);
			return 1; /* not reached: fit_unit execs */
		}
		call_fit_unit(&j);
		printf("{\"units\": [%s", before);
		print_unit(0, &j);
		printf("]}\n");
	} else if (!strcmp(mode, "oom")) {
		struct job j = base;

		join_cgroup(arg_str(argc, argv, "--cgroup", "/nonexistent"));
		printf("{\"pid\": %d}\n", getpid());
		j.mib = 8;
		fit_unit(&j);
		printf("{\"units\": [");
		print_unit(1, &j);
		printf("]}\n");
		j = base;
		j.oom_mib = arg_long(argc, argv, "--mib", 1024);
		fit_unit(&j);
		printf("{\"survived\": true}\n");
	} else {
		fprintf(stderr, "units: unknown --mode %s\n", mode);
		return 2;
	}
	return 0;
}
