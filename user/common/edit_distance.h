/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* How far a name a user wrote is from a real one: for the "closest:" of a refusal. */
#ifndef UM_EDIT_DISTANCE_H
#define UM_EDIT_DISTANCE_H

/* Levenshtein distance; names longer than 128 bytes only compare their start. */
unsigned um_edit_distance(const char *a, const char *b);

#endif
