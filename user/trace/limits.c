// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fileio.h"
#include "trace/limits.h"
#include "trace/memcg.h"

/*
 * Above this a memory limit is "none": v1 writes an unlimited cgroup's limit as the page
 * counter's maximum (0x7ffffffffffff000 on 64-bit kernels), v2 writes "max".
 */
#define NO_LIMIT_ABOVE (1ULL << 62)

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *end || n > UINT32_MAX || *s == '-')
		return -EINVAL;
	*v = (uint32_t)n;
	return 0;
}

int slurm_ids_parse(struct slurm_ids *ids, const char *text)
{
	char buf[128], *f[5], *save = NULL;
	int n = 0;

	memset(ids, 0, sizeof(*ids));
	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return -EINVAL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == 5)
			return -EINVAL;
		f[n++] = t;
	}
	if (n != 5 || parse_u32(f[0], &ids->job) || !*f[3] || strlen(f[3]) >= sizeof(ids->step))
		return -EINVAL;
	if (strcmp(f[1], "-") || strcmp(f[2], "-")) {
		if (parse_u32(f[1], &ids->array_job) || parse_u32(f[2], &ids->array_task))
			return -EINVAL;
		ids->in_array = true;
	}
	if (strcmp(f[4], "-")) {
		char *end;

		errno = 0;
		ids->time_limit_s = strtoull(f[4], &end, 10);
		if (errno || end == f[4] || *end || *f[4] == '-')
			return -EINVAL;
		ids->time_limit_known = true;
	}
	snprintf(ids->step, sizeof(ids->step), "%s", f[3]);
	ids->set = true;
	return 0;
}

/* A cgroup's memory limit in bytes; false when it has none (or the file cannot be read). */
static bool cgroup_limit(const char *dir, int version, uint64_t *bytes)
{
	char file[PATH_MAX + 32], *text, *end;
	unsigned long long v;
	bool limited;

	snprintf(file, sizeof(file), "%s/%s", dir,
		 version == 1 ? "memory.limit_in_bytes" : "memory.max");
	text = um_read_text(file);
	if (!text)
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	/* "max\n" (v2) parses to nothing */
	limited = !errno && end != text && v < NO_LIMIT_ABOVE;
	free(text);
	if (limited)
		*bytes = v;
	return limited;
}

/*
 * The limit the kernel holds the cgroup to: the smallest on its path to the hierarchy's root (a
 * charge is refused where any ancestor is full). SLURM's task/cgroup sets it on the job's and
 * the step's cgroups, not the task's; run's own cgroup has none, but the one unitmeter runs in
 * may. The nearest of equal limits is named.
 */
static void memory_limit(struct run_limits *l, const struct memcg *m)
{
	char dir[PATH_MAX];
	size_t name_len = strlen(m->name), mnt_len;

	if (!m->dir[0] || !m->name[0] || strlen(m->dir) < name_len)
		return;
	mnt_len = strlen(m->dir) - name_len;
	if (strcmp(m->dir + mnt_len, m->name))
		return;
	snprintf(dir, sizeof(dir), "%s", m->dir);
	for (;;) {
		uint64_t v;

		if (cgroup_limit(dir, m->version, &v) && (!l->memory_known || v < l->memory_bytes)) {
			l->memory_known = true;
			l->memory_bytes = v;
			snprintf(l->memory_cgroup, sizeof(l->memory_cgroup), "%s",
				 strlen(dir) > mnt_len ? dir + mnt_len : "/");
		}
		if (strlen(dir) <= mnt_len)
			break;
		*strrchr(dir, '/') = '\0';
		if (strlen(dir) < mnt_len)
			break;
	}
}

void run_limits_capture(struct run_limits *l, pid_t pid, const struct memcg *m,
			const struct slurm_ids *slurm)
{
	cpu_set_t *set;
	size_t size;

	memset(l, 0, sizeof(*l));
	if (slurm)
		l->slurm = *slurm;
	l->cpus = -1;
	/* a mask big enough for any CPU number the kernel may have */
	set = CPU_ALLOC(8192);
	size = CPU_ALLOC_SIZE(8192);
	if (set && sched_getaffinity(pid, size, set) == 0)
		l->cpus = CPU_COUNT_S(size, set);
	CPU_FREE(set);
	if (gethostname(l->node, sizeof(l->node)))
		l->node[0] = '\0';
	l->node[sizeof(l->node) - 1] = '\0';
	/* id 0: no cgroup, or the command could not enter the one made for it */
	if (m && m->id)
		memory_limit(l, m);
}
