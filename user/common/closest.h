/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The closest real names to one a user wrote: for the "closest:" of a refusal (unit specs,
 * options). */
#ifndef UM_CLOSEST_H
#define UM_CLOSEST_H

#include <stddef.h>

/* Levenshtein distance; names longer than 128 bytes only compare their start. */
unsigned um_edit_distance(const char *a, const char *b);

/* The closest names to a wanted one, nearest first (what a "closest:" list shows). */
#define NEAR_MATCHES 5
struct near_names {
	char *names[NEAR_MATCHES];
	unsigned dist[NEAR_MATCHES];
};

/* How far name is from wanted: their edit distance, a quarter of it when one contains the other. */
unsigned name_distance(const char *name, const char *wanted);
/* Keep name if it is among the NEAR_MATCHES nearest so far (a name given twice is kept once). */
void near_names__add(struct near_names *near, const char *name, unsigned dist);
/* "a, b, c" into buf; returns what snprintf would. */
int near_names__format(const struct near_names *near, char *buf, size_t len);
void near_names__free(struct near_names *near);

#endif
