/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef UM_FILEIO_H
#define UM_FILEIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The whole of a small text file (proc, sys) as a NUL-terminated string, or NULL with errno. */
char *um_read_text(const char *path);
/* um_read_text of root + path, for readers that run against fixture trees in tests. */
char *um_read_text_at(const char *root, const char *path);

/* Open path for writing without following a planted symlink, owned by uid/gid. */
FILE *um_create_output(const char *path, uid_t uid, gid_t gid);
/* Hand the file fd (written at path) to uid/gid when root writes it for them; warns on failure. */
void um_hand_over(int fd, const char *path, uid_t uid, gid_t gid);

#endif
