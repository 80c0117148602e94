/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The node-local scratch directory whose writes count toward tmp_output_bytes (SLURM's --tmp):
 * --tmp-dir DIR, else the traced process's $TMPDIR, else /tmp, found as the traced process sees
 * it (through /proc/PID/root for attach: SLURM's job_container/tmpfs gives each job its own
 * /tmp), and named to the BPF programs by its superblock's device and its inode.
 */
#ifndef UM_TMP_DIR_H
#define UM_TMP_DIR_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct tmp_dir {
	char path[PATH_MAX]; /* as the traced process names it */
	const char *source;  /* "--tmp-dir", "TMPDIR" or "default" */
	uint64_t kernel_dev; /* st_dev in the kernel's dev_t encoding (MKDEV: major << 20 | minor) */
	uint64_t ino;        /* 0: not found (tmp_output_bytes is null), reason says why */
	char reason[PATH_MAX + 128];
};

/* glibc's st_dev in the kernel's encoding, as a superblock's s_dev holds it. */
uint64_t tmp_dir_kernel_dev(dev_t dev);

/*
 * Find the directory: given (--tmp-dir, or NULL), for process pid as it sees the filesystem, or
 * for unitmeter's own view and environment when pid is 0. Never fails: a directory not found
 * leaves ino 0 and the reason.
 */
void tmp_dir_resolve(struct tmp_dir *t, const char *given, pid_t pid);

#endif
