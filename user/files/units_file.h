/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one reader of run files: a run manifest (schema unitmeter.run/1, record/manifest.c) or a
 * units stream (JSON Lines, record/units_stream.c), each unit checked for the figures every
 * reader takes (unit_keys.h). summary, project and report read their inputs through it.
 */
#ifndef UM_UNITS_FILE_H
#define UM_UNITS_FILE_H

#include <stddef.h>
#include <jansson.h>

/*
 * Append the units of one file to `units`: a run manifest (its "units" array) or a JSON Lines
 * stream of unit objects. On failure, returns -1 and writes one line naming the file and the
 * position into err.
 */
int um_load_units(const char *path, json_t *units, char *err, size_t errlen);
/* The same; for a manifest, *run also gets its "run" object (a new reference), else NULL. */
int um_load_units_run(const char *path, json_t *units, json_t **run, char *err, size_t errlen);
/* The same; for a manifest, *manifest gets the whole document (a new reference), else NULL. */
int um_load_units_doc(const char *path, json_t *units, json_t **manifest, char *err, size_t errlen);
/* A number of a JSON object, or otherwise when the key is missing or not a number. */
double um_json_number(const json_t *obj, const char *key, double otherwise);

#endif
