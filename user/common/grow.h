/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A doubling array's growth, written once for every list the loader and the readers keep. */
#ifndef UM_GROW_H
#define UM_GROW_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Room for `need` elements of `size` bytes in `at`, whose capacity is *cap: `at` itself when it
 * has room, else a copy twice as large (or `first` elements at first) with *cap raised, or NULL
 * when out of memory, `at` and *cap then left as they were.
 */
static inline void *um_grow(void *at, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t want = *cap ? *cap : first;
	void *bigger;

	if (need <= *cap)
		return at;
	while (want < need)
		want *= 2;
	bigger = realloc(at, want * size);
	if (bigger)
		*cap = want;
	return bigger;
}

#endif
