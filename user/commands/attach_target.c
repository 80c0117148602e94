// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* attach's target: a process checked (not a kernel thread, not exited), or a cgroup found. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands/attach_target.h"
#include "common/fileio.h"
#include "common/log.h"
#include "trace/slurm_job.h"

/* A process's state letter from /proc/PID/stat ('Z': exited, not reaped), '\0' if gone. */
char attach_target_state(pid_t pid, unsigned long *flags, char *comm, size_t commlen)
{
	char path[64], *stat_text, *open_paren, *close_paren, state = '\0';

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	stat_text = um_read_text(path);
	if (!stat_text)
		return '\0';
	/* "pid (comm) state ppid pgrp session tty tpgid flags": comm may hold anything */
	open_paren = strchr(stat_text, '(');
	close_paren = strrchr(stat_text, ')');
	if (open_paren && close_paren > open_paren) {
		if (comm)
			snprintf(comm, commlen, "%.*s", (int)(close_paren - open_paren - 1),
				 open_paren + 1);
		sscanf(close_paren + 2, "%c %*d %*d %*d %*d %*d %lu", &state, flags);
	}
	free(stat_text);
	return state;
}

/* Kernel threads have no user memory or executable to probe; an exited process has neither. */
int attach_target_check(pid_t pid, char *exe, size_t exelen, char *comm, size_t commlen)
{
	char path[64];
	unsigned long flags = 0;
	char state = attach_target_state(pid, &flags, comm, commlen);
	ssize_t n;

	if (!state) {
		um_err("no process %d: %s", pid, strerror(errno));
		return -ESRCH;
	}
	if (flags & 0x00200000 /* PF_KTHREAD */) {
		um_err("process %d is a kernel thread: there is nothing in user space to measure", pid);
		return -EINVAL;
	}
	if (state == 'Z') {
		um_err("process %d has exited (its parent has not yet reaped it): there is nothing "
		       "left to measure", pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, exelen - 1);
	exe[n > 0 ? n : 0] = '\0';
	return 0;
}

/*
 * attach --cgroup, --job: the cgroup, and the process specs are looked up in: its newest member
 * (the highest pid, most often the program that does the work, not a launcher). 0, or the exit
 * status, one line said.
 */
int attach_target_cgroup(const struct um_options *o, struct cgroup_target *cg,
			 struct slurm_ids *ids, pid_t *pid)
{
	char why[PATH_MAX + 256], dir[PATH_MAX], job_id[64];
	const char *path = o->cgroup;
	pid_t *pids;
	size_t n;
	int err;

	if (o->job[0]) {
		if (slurm_job_ids(o->job, o->job_step, ids, job_id, sizeof(job_id))) {
			um_err("SLURM knows no job %s (scontrol show job %s)", o->job, o->job);
			return um_exit_failed(o->command);
		}
		if (slurm_job_cgroup(job_id, o->job_step, dir, sizeof(dir), why, sizeof(why))) {
			um_err("%s", why);
			return um_exit_failed(o->command);
		}
		if (!ids->set)
			um_warn("scontrol cannot say what job %s is: its ids and time limit will be "
				"null in run.limits", o->job);
		path = dir;
	}
	if (cgroup_target_open(cg, path, why, sizeof(why))) {
		um_err("%s", why);
		return um_exit_failed(o->command);
	}
	err = cgroup_target_pids(cg, &pids, &n);
	if (err || !n) {
		um_err("the cgroup %s holds no process%s%s", cg->dir, err ? ": " : " now",
		       err ? strerror(-err) : "");
		free(pids);
		return um_exit_failed(o->command);
	}
	*pid = pids[n - 1];
	free(pids);
	return 0;
}
