/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The progress lines on stderr: one per finished unit, but no more than UM_PROGRESS_LINES a
 * second (progress.c): a storm of tiny units gets a count per second instead of a flood.
 */
#ifndef UM_PROGRESS_H
#define UM_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "unitmeter.h"

/* Kept by value in its owner; zeroed, it starts a run. */
struct progress {
	bool quiet;         /* no line at all (-q) */
	uint64_t second_ns; /* the second being counted began here (the units' clock) */
	size_t lines, skipped;
};

/* Unit u, number index, has finished; spec is its spec's text (NULL: not known). */
void progress__unit(struct progress *p, size_t index, const struct um_unit_record *u,
		    const char *spec);
/* Say how many units the second being counted did not show: the batch has ended. */
void progress__flush(struct progress *p);

#endif
