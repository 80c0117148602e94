/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers for the ground-truth workloads: each workload measures itself with the kernel's own
 * per-process interfaces (VmRSS, thread and process CPU clocks) and prints that truth as JSON,
 * so the tests compare unitmeter with something it did not compute.
 */
#ifndef UM_TRUTH_H
#define UM_TRUTH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

/* A "Vm...:  N kB" field of /proc/self/status in bytes, -1 if it cannot be read. */
static inline long long self_status_bytes(const char *field)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "re");
	size_t len = strlen(field);
	long long kib = -1;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, field, len) && buf[len] == ':' &&
		    sscanf(buf + len + 1, "%lld kB", &kib) == 1)
			break;
	fclose(f);
	return kib < 0 ? -1 : kib * 1024;
}

/* VmRSS of this process in bytes, as the kernel reports it (file + anon + shmem). */
static inline long long self_rss_bytes(void)
{
	return self_status_bytes("VmRSS");
}

/*
 * VmHWM: the kernel's own high-water mark of that RSS. The mm raises it before every unmap or
 * zap that lowers RSS, so read at the end it is the process's peak (reclaim aside).
 */
static inline long long self_hwm_bytes(void)
{
	return self_status_bytes("VmHWM");
}

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Map and touch every page of `bytes` of anonymous memory; the pages are resident on return. */
static inline char *touch_anon(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (size_t off = 0; off < bytes; off += 4096)
		p[off] = 1;
	return p;
}

/* Spin on this thread's CPU until it has used `ns` of CPU time; returns what the clock says. */
static inline uint64_t burn_cpu_ns(uint64_t ns)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now;
	volatile double x = 1.0;

	do {
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 0.5;
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < ns);
	return now - start;
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	if (!ms)
		return; /* nanosleep(0) still switches the thread out: "no hold" means none */
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* "--name value" from argv, or the default. */
static inline long arg_long(int argc, char **argv, const char *name, long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtol(argv[i + 1], NULL, 10);
	return def;
}

static inline const char *arg_str(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return def;
}

/* Whether "--name" (without a value) is in argv. */
static inline int arg_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

#endif
