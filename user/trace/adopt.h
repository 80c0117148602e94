/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who attach takes besides its target: the processes it had forked before (attach -p), or every
 * process in a cgroup and the ones that enter it later (attach --cgroup, --job). A walk of /proc
 * after the programs are attached, repeated until it finds nobody new: from then on the fork
 * program takes every child of a tracked process, and the cgroup program every newcomer.
 */
#ifndef UM_ADOPT_H
#define UM_ADOPT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;

/* A cgroup attach --cgroup watches, v1 or v2. */
struct cgroup_target {
	char dir[PATH_MAX];    /* its directory, resolved */
	char name[PATH_MAX];   /* its path inside its hierarchy ("/slurm/uid_0/job_5") */
	int version;           /* 1 or 2 */
	uint64_t id;           /* its kernfs id: the directory's inode */
	uint32_t hierarchy_id; /* v1: the hierarchy's number in /proc/PID/cgroup; v2: 0 */
};

/* Resolve path, a cgroup directory; 0, or a negative errno and one line in why. */
int cgroup_target_open(struct cgroup_target *c, const char *path, char *why, size_t len);
/*
 * The processes in the cgroup and every cgroup below it, ascending (a pid listed in two v1
 * cgroup.procs files once); *n 0 and 0 returned when it is empty; -ENOENT once it is removed.
 */
int cgroup_target_pids(const struct cgroup_target *c, pid_t **pids, size_t *n);

/*
 * Track, with tracer__adopt, every process not tracked yet that is a child of a tracked one
 * (children) or in the cgroup c (NULL: none), walking /proc again until a walk finds nobody new.
 * Returns how many were taken, or a negative errno.
 */
int adopt_walk(struct tracer *t, bool children, const struct cgroup_target *c);

#endif
