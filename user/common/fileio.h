/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef UM_FILEIO_H
#define UM_FILEIO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The whole of a small text file (proc, sys) as a NUL-terminated string, or NULL with errno. */
char *um_read_text(const char *path);
/* um_read_text of root + path, for readers that run against fixture trees in tests. */
char *um_read_text_at(const char *root, const char *path);

/*
 * Field `field` (1-based, as proc(5) numbers them: 4 the parent, 22 the start in clock ticks)
 * of /proc/PID/stat, counted after the name, which may hold blanks and parentheses. 0, or
 * -errno (-ENOENT: no such process).
 */
int um_proc_stat_field(pid_t pid, int field, unsigned long long *value);

/* Open path for writing without following a planted symlink, owned by uid/gid. */
FILE *um_create_output(const char *path, uid_t uid, gid_t gid);
/* Hand the file fd (written at path) to uid/gid when root writes it for them; warns on failure. */
void um_hand_over(int fd, const char *path, uid_t uid, gid_t gid);

/*
 * A file written whole or not at all (the manifest, the page, the kernel's feature record): a
 * temporary file beside path (.unitmeter-XXXXXX in its directory, so the rename stays on one
 * file system), created O_EXCL | O_NOFOLLOW so neither a planted symlink nor a planted file is
 * written through, handed to uid/gid, and renamed over path once complete.
 */
struct um_atomic_file {
	const char *path; /* borrowed */
	char tmp[PATH_MAX];
	int fd;
};

/* Create the temporary file with mode (less the umask) as a->fd; -1 with errno set. */
int um_atomic_open(struct um_atomic_file *a, const char *path, mode_t mode, uid_t uid, gid_t gid);
/* Rename it over path, once the caller has closed a->fd; -1 with errno set, the file removed. */
int um_atomic_commit(struct um_atomic_file *a);
/* Remove the temporary file (a write failed; a->fd is the caller's to close). */
void um_atomic_abort(struct um_atomic_file *a);

/*
 * An output's directory must exist, and the output must not be a directory, before anything
 * starts (a run must not end unwritable): 0, or a negative errno with one line said.
 */
int um_output_path_check(const char *what, const char *path);
/* Whether two output paths name one file: the same directory (resolved) and the same name. */
bool um_same_output(const char *a, const char *b);

/* Default units stream beside a manifest: run.json -> run.units.jsonl (malloc'd). */
char *um_default_units_path(const char *manifest);

#endif
