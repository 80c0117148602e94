/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef UM_FILEIO_H
#define UM_FILEIO_H

#include <stddef.h>

/* The whole of a small text file (proc, sys) as a NUL-terminated string, or NULL with errno. */
char *um_read_text(const char *path);
/* um_read_text of root + path, for readers that run against fixture trees in tests. */
char *um_read_text_at(const char *root, const char *path);

#endif
