/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Text written into a buffer of its own size. */
#ifndef UM_TEXT_H
#define UM_TEXT_H

#include <stddef.h>

/*
 * snprintf for text a long path or name may cut short (a cgroup's, a file's): cut, it still
 * reads, and the compiler's truncation warning, which would ask for a check nobody needs, is
 * not raised.
 */
void um_say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
