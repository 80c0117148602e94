/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command of `run`: forked, dropped to the invoking user under sudo, and held at a barrier
 * until every probe is attached, so nothing from its first instruction is missed.
 */
#ifndef UM_LAUNCH_H
#define UM_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int release_fd; /* write end of the barrier pipe; -1 once released */
	int cgroup_fd;  /* read end of the child's word on entering its cgroup; -1: none asked */
};

/* Full path of argv0 through PATH, as execvp would find it; NULL (errno set) when none is. */
char *launch_resolve(const char *argv0);
/* The uid/gid the command should run as: SUDO_UID/SUDO_GID unless as_root. */
int launch_target_ids(bool as_root, uid_t *uid, gid_t *gid);
/*
 * Fork the command, held. cgroup_procs (or NULL): a cgroup.procs file the child writes itself
 * into first, while still root: moving a process between cgroups waits for an RCU grace period
 * (~16 ms here), which the child spends while unitmeter loads its programs.
 */
int launch__start(struct launch *l, const char *path, char *const argv[], bool as_root,
		  const char *cgroup_procs);
/* The child's word on entering its cgroup: 0, or the negative errno it met. */
int launch__cgroup_result(struct launch *l);
/* Let the held command exec. */
int launch__release(struct launch *l);
/* Kill a command that was never released (tracing failed to start) and reap it. */
void launch__abort(struct launch *l);

#endif
