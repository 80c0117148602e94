// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * charge: units whose memory charge (what the memory cgroup counts) differs from their RSS.
 * Each unit is one call of fit_unit().
 *   pool     --mib M --units N --workers W   the parent builds an M MiB array once; each unit
 *            forks W workers that read every page of it and exit (the fork-pool pattern): the
 *            array is charged once, but is in every worker's RSS
 *   file     --file PATH --units N   each unit reads PATH with read(2) into a 1 MiB buffer,
 *            after the file's page cache was dropped: the charge takes the file, RSS does not
 *   retouch  --mib M --units N   each unit touches M MiB, frees it, touches M/2 MiB, frees it:
 *            its peak is M MiB above its start, every time (only the first raises the cgroup's
 *            all-time high-water mark)
 *   setup    --setup-ms S --units N --unit-ms U --gap-ms G   S ms of work before the first unit,
 *            then N units of U ms each, G ms apart (the time model)
 * Truth on the last line of stdout, as JSON: the set-up's length (CLOCK_MONOTONIC) and, per
 * unit, when its body began (after main's start) and its wall clock from then to the return.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "truth.h"

struct job {
	const char *mode;
	char *array;
	size_t bytes;
	long workers;
	const char *file;
	long unit_ms;
	uint64_t entered_ns; /* CLOCK_MONOTONIC at the body's first line */
};

static volatile unsigned long sink;

/* Every page of the array read, in a forked worker that then exits. */
static void pool_workers(const struct job *j)
{
	pid_t pids[64];
	long n = j->workers < 64 ? j->workers : 64;

	for (long w = 0; w < n; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			unsigned long sum = 0;

			for (size_t off = 0; off < j->bytes; off += 4096)
				sum += (unsigned char)j->array[off];
			sink = sum;
			_exit(0);
		}
	}
	for (long w = 0; w < n; w++)
		if (pids[w] > 0)
			waitpid(pids[w], NULL, 0);
}

static void read_file(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		exit(1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sink += (unsigned char)buf[0];
	close(fd);
}

static void touch_and_free(size_t bytes)
{
	char *p = touch_anon(bytes);

	munmap(p, bytes);
}

__attribute__((noinline, used)) void fit_unit(struct job *j)
{
	j->entered_ns = clock_ns(CLOCK_MONOTONIC);
	if (!strcmp(j->mode, "pool")) {
		pool_workers(j);
	} else if (!strcmp(j->mode, "file")) {
		read_file(j->file);
	} else if (!strcmp(j->mode, "retouch")) {
		touch_and_free(j->bytes);
		touch_and_free(j->bytes / 2);
	} else {
		burn_cpu_ns((uint64_t)j->unit_ms * 1000000);
	}
	__asm__ volatile("" ::: "memory");
}

/* Drop the file's pages from the page cache, so the units' reads charge them anew. */
static void drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

int main(int argc, char **argv)
{
	struct job j = {
		.mode = arg_str(argc, argv, "--mode", "pool"),
		.bytes = (size_t)arg_long(argc, argv, "--mib", 64) * MIB,
		.workers = arg_long(argc, argv, "--workers", 4),
		.file = arg_str(argc, argv, "--file", NULL),
		.unit_ms = arg_long(argc, argv, "--unit-ms", 50),
	};
	long n = arg_long(argc, argv, "--units", 2);
	long setup_ms = arg_long(argc, argv, "--setup-ms", 0);
	long gap_ms = arg_long(argc, argv, "--gap-ms", 0);
	uint64_t t_start = clock_ns(CLOCK_MONOTONIC), t_setup;
	double starts[1024];

	if (!strcmp(j.mode, "pool"))
		j.array = touch_anon(j.bytes);
	if (!strcmp(j.mode, "file")) {
		if (!j.file) {
			fprintf(stderr, "charge: --mode file needs --file PATH\n");
			return 2;
		}
		drop_cache(j.file);
	}
	if (setup_ms > 0)
		burn_cpu_ns((uint64_t)setup_ms * 1000000);
	t_setup = clock_ns(CLOCK_MONOTONIC);
	printf("{\"setup_s\": %.6f, \"unit_wall_s\": [", (t_setup - t_start) / 1e9);
	if (n > 1024)
		n = 1024;
	/* a unit begins in its body, after the entry probe: an emulated guest's first probe hit
	 * took 6-25 ms, which a start read before the call put into the first unit's cycle */
	for (long i = 0; i < n; i++) {
		fit_unit(&j);
		starts[i] = (j.entered_ns - t_start) / 1e9;
		printf("%s%.6f", i ? ", " : "", (clock_ns(CLOCK_MONOTONIC) - j.entered_ns) / 1e9);
		if (gap_ms > 0 && i + 1 < n)
			sleep_ms((unsigned)gap_ms);
	}
	printf("], \"unit_start_s\": [");
	for (long i = 0; i < n; i++)
		printf("%s%.6f", i ? ", " : "", starts[i]);
	printf("]}\n");
	return 0;
}
