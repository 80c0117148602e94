/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a run ran under (the manifest's run.limits): the memory limit enforced on its memory
 * cgroup, the CPUs it may run on, the node, and under SLURM the job's ids, which the SPANK plugin
 * passes with attach --slurm-job, the job's time limit among them. Each figure is read, never guessed: unknown is null.
 */
#ifndef UM_LIMITS_H
#define UM_LIMITS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct memcg;

/* attach --slurm-job JOB,ARRAY_JOB,ARRAY_TASK,STEP,TIME_LIMIT_S: as the plugin got them */
struct slurm_ids {
	bool set;
	uint32_t job;
	bool in_array;           /* array_job and array_task hold the array's ids */
	uint32_t array_job, array_task;
	char step[16];           /* a number, or batch, extern, interactive */
	bool time_limit_known;
	uint64_t time_limit_s;   /* the job's, when its task started */
};

struct run_limits {
	struct slurm_ids slurm;
	int cpus;                 /* CPUs in the process's affinity mask; -1: unknown */
	char node[256];           /* "": unknown */
	bool memory_known;        /* a limit was found on the cgroup or an ancestor */
	uint64_t memory_bytes;
	char memory_cgroup[PATH_MAX]; /* the cgroup that holds it, as /proc/PID/cgroup names it */
};

/*
 * Parse JOB,ARRAY_JOB,ARRAY_TASK,STEP,TIME_LIMIT_S ("-" for both array ids outside an array, and
 * for a time limit that is unlimited or not known). 0 or -EINVAL.
 */
int slurm_ids_parse(struct slurm_ids *ids, const char *text);
/*
 * Read the limits of pid (the command of run, the target of attach) in the memory cgroup m (its
 * directory; none: no memory limit known), keeping slurm as given.
 */
void run_limits_capture(struct run_limits *l, pid_t pid, const struct memcg *m,
			const struct slurm_ids *slurm);

#endif
