/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attach --job JOBID[.STEP]: a SLURM job's (or step's) cgroup on this node, as slurmd lays it
 * out (cgroup/v1: MOUNT/memory/slurm[_NODE]/uid_U/job_J/step_S; cgroup/v2: under slurmstepd's
 * scope, .../job_J/step_S), and its ids and time limit for run.limits, from scontrol.
 */
#ifndef UM_SLURM_JOB_H
#define UM_SLURM_JOB_H

#include <limits.h>
#include <stddef.h>
#include "trace/limits.h"

/* "123", "123.0", "123.batch", "123_4" (an array task), "123_4.0"; 0 or -EINVAL. */
int slurm_job_parse(const char *text, char *job, size_t job_len, char *step, size_t step_len);

/*
 * The directory of the job's cgroup (step "" or "job": the job's own; else step_STEP) in the
 * hierarchy of the memory controller (v1), else the v2 one. 0, or a negative errno and one line
 * in why ("job 12 has no cgroup on this node").
 */
int slurm_job_cgroup(const char *job_id, const char *step, char *dir, size_t len, char *why,
		     size_t why_len);

/*
 * ids from `scontrol show job -o JOB` (JobId, ArrayJobId, ArrayTaskId, TimeLimit), with step;
 * ids->set false when scontrol cannot say (run.limits' SLURM fields null). The job's own id into
 * job_id (an array task's "123_4" becomes its own id). 0, or -ENOENT (scontrol knows no such job).
 */
int slurm_job_ids(const char *job, const char *step, struct slurm_ids *ids, char *job_id,
		  size_t len);

#endif
