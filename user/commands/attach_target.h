/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* attach's target, before anything is traced: a process, or a cgroup (--cgroup, --job). */
#ifndef UM_COMMANDS_ATTACH_TARGET_H
#define UM_COMMANDS_ATTACH_TARGET_H

#include <stddef.h>
#include <sys/types.h>
#include "commands/cli.h"
#include "trace/adopt.h"
#include "trace/limits.h"

/* A process's state letter from /proc/PID/stat ('Z': exited, not reaped), '\0' if gone; its
 * flags, and its name in comm (NULL: not wanted). */
char attach_target_state(pid_t pid, unsigned long *flags, char *comm, size_t commlen);

/*
 * Whether process pid can be attached to (not a kernel thread, not exited): 0 with its
 * executable in exe and its name in comm, or a negative errno, one line said.
 */
int attach_target_check(pid_t pid, char *exe, size_t exelen, char *comm, size_t commlen);

/*
 * attach --cgroup, --job: the cgroup opened (a job's through SLURM, its ids in ids), and in pid
 * its newest member, where specs are looked up. 0, or the exit status, one line said.
 */
int attach_target_cgroup(const struct um_options *o, struct cgroup_target *cg,
			 struct slurm_ids *ids, pid_t *pid);

#endif
