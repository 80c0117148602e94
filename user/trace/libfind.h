/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A shared library named as the dynamic loader is asked for it (a soname such as liblzma.so.5
 * or libcuda.so.1, no slash), found where the loader would find it for a command started now:
 * for a running process, the file it has mapped under that name; else LD_LIBRARY_PATH, the
 * loader's cache (/etc/ld.so.cache), the default directories (ld.so(8)). One lookup for --unit
 * LIB:SYMBOL and the GPU probes' libcuda.so.1.
 */
#ifndef UM_LIBFIND_H
#define UM_LIBFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The file for name into path: the one mapped_by (a running process; 0: none) has mapped whose
 * name or DT_SONAME is name, else the loader's places in order. accept (NULL: any readable file)
 * may refuse a candidate, and the search goes on. False when none was found; tried (when not
 * NULL) then names the places looked in.
 */
bool library_find(const char *name, pid_t mapped_by, bool (*accept)(const char *path), char *path,
		  size_t len, char *tried, size_t tried_len);

/* The loader's cache at cache_file (ld.so's own: /etc/ld.so.cache): its first entry for name of
 * this architecture that accept (NULL: any readable file) takes, into path. */
bool loader_cache_find(const char *cache_file, const char *name, bool (*accept)(const char *path),
		       char *path, size_t len);

#endif
