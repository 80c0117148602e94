/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the projection's files share (project.h is the stage's face): derive.c (the request
 * derived from the calibrated input, no I/O), input.c (the input assembled from the files),
 * print.c (the #SBATCH header and the JSON, from one derived struct projection).
 */
#ifndef UM_PROJECT_INTERNAL_H
#define UM_PROJECT_INTERNAL_H

#include <stddef.h>
#include "project/project.h"

#define MIB (1024.0 * 1024.0)

/* A note for the request's reader, kept with the projection (at most UM_PROJECT_MAX_NOTES). */
void note(struct projection *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
