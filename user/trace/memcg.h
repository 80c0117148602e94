/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The memory cgroup whose charge is measured: one made for `run`'s command (so the charge is the
 * command's alone, as SLURM's task/cgroup sees a step's), or the one `attach`'s target is in.
 * Cgroup v1 (the memory hierarchy) and v2 (the unified one, memory controller enabled).
 */
#ifndef UM_MEMCG_H
#define UM_MEMCG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct memcg {
	uint64_t id;             /* its kernfs id (the directory's inode); 0: none */
	int version;             /* 1 or 2 */
	bool made_for_run;       /* unitmeter made it, and removes it at the end */
	char dir[PATH_MAX];      /* the directory */
	char name[PATH_MAX];     /* its path inside the hierarchy, as /proc/PID/cgroup names it */
	char reason[512];        /* id 0: why there is none */
};

/*
 * Make a memory cgroup for the command of `run` beside unitmeter's own (v1: a child of it; v2:
 * a child, or a sibling when unitmeter's own holds processes), removing ones an earlier
 * unitmeter left behind. Never fails: id 0 and a reason when the kernel or a container forbids.
 */
void memcg_make_for_run(struct memcg *m);
/* Its cgroup.procs file, which a process writes itself into (launch.h). */
void memcg_procs_file(const struct memcg *m, char *path, size_t len);
/* A process could not enter it (err < 0): id 0 and the reason. */
void memcg_entry_failed(struct memcg *m, int err);
/* Remove it once the command's processes have left; says so when it cannot. */
void memcg_remove(struct memcg *m);
/* The memory cgroup pid is in (attach); id 0 and a reason when it has none charged. */
/*
 * The mount points of the v1 hierarchy with the memory controller and of cgroup2, from
 * /proc/self/mountinfo: the first of each (a chroot's bind mount of either comes later); ""
 * where there is none.
 */
void memcg_mounts(char *v1_memory, char *v2, size_t len);
void memcg_of_pid(struct memcg *m, pid_t pid);
/*
 * The memory cgroup of attach --cgroup: the cgroup dir itself when its hierarchy holds the memory
 * controller, else the cgroup of the same path (name, inside the hierarchy) in the memory
 * hierarchy (cgroup v1); id 0 and a reason when neither is one.
 */
void memcg_of_cgroup(struct memcg *m, const char *dir, const char *name);

#endif
