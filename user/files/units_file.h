/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one reader of run files: a run manifest (schema unitmeter.run/1, record/manifest.c) or a
 * units stream (JSON Lines, record/units_stream.c), each unit checked for the figures every
 * reader takes (unit_keys.h). summary, project and report read their inputs through it a unit
 * at a time (um_read_units), at the scale of a job array: a million units in 200 files.
 */
#ifndef UM_UNITS_FILE_H
#define UM_UNITS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "common/unit_keys.h"

/*
 * What the readers take of one unit, without the parsed document: the figures a command reads,
 * each with the kind of JSON value it was, as the checks and the readers tell them apart (a
 * missing output_bytes is not recorded; a real one is not summed; a peak past 2^53 is exact).
 */
enum um_unit_field {
#define UM_FIGURE_FIELD(field, key, form, value, known, max, read) UM_IF_##read(UM_F_##field, )
	UM_UNIT_KEYS(UM_FIGURE_FIELD)
#undef UM_FIGURE_FIELD
	/* not a key: the largest "peak_bytes" of UM_KEY_PEAK_GPU_BY_DEVICE (one device's peak, what
	 * a GPU must hold), null when that key is null, other when it is not an array of objects
	 * with numbers */
	UM_F_PEAK_GPU_DEVICE_MAX_BYTES,
	UM_F_N
};
enum um_value_kind { UM_V_ABSENT, UM_V_NULL, UM_V_REAL, UM_V_INT, UM_V_OTHER };
/* UM_KEY_STATUS: absent or not a string (a complete unit), or one of its values */
enum um_read_status { UM_US_NONE, UM_US_COMPLETE, UM_US_INCOMPLETE, UM_US_OTHER };
struct um_read_unit {
	union {
		double d;    /* UM_V_REAL */
		long long i; /* UM_V_INT */
	} v[UM_F_N];
	unsigned char kind[UM_F_N];
	unsigned char status;
};
/* A unit's strings, valid only during the callback; NULL when not a string. */
struct um_unit_text {
	const char *spec;
	const char *status;
};
/* Called for each unit of a file in order; nonzero stops the reading (out of memory). */
typedef int (*um_unit_fn)(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t);

/*
 * Whether path can be a run of ours: 0; 1 when it is well-formed JSON of another kind (a
 * hardware record, a summary: err names it "not a unitmeter manifest or units stream"); -1
 * when it cannot be opened. A file that does not parse is 0: the readers say where it broke.
 */
int um_units_file_check(const char *path, char *err, size_t errlen);

/*
 * Read one file's units, checked as um_load_units checks them, one at a time into fn, never
 * holding more than one line's document. For a manifest, *manifest (when not NULL) gets the
 * document less its "units" array (a new reference), else NULL. Returns 0, or -1 with one line
 * naming the file and the position in err.
 */
int um_read_units(const char *path, um_unit_fn fn, void *ctx, json_t **manifest, char *err,
		  size_t errlen);
/* A unit object's figures and strings, unchecked (t's strings are the object's). */
void um_unit_from_json(const json_t *unit, struct um_read_unit *u, struct um_unit_text *t);
static inline bool um_unit_is_number(const struct um_read_unit *u, enum um_unit_field f)
{
	return u->kind[f] == UM_V_REAL || u->kind[f] == UM_V_INT;
}
/* The figure as json_number_value gives it, or otherwise when it is not a number. */
static inline double um_unit_number(const struct um_read_unit *u, enum um_unit_field f, double otherwise)
{
	return u->kind[f] == UM_V_INT ? (double)u->v[f].i : u->kind[f] == UM_V_REAL ? u->v[f].d
											: otherwise;
}
/* The figure when it is a whole number a long long holds (a pid, an index), or otherwise: a
 * cast of 2.9e39 would be undefined. */
static inline long long um_unit_integer(const struct um_read_unit *u, enum um_unit_field f,
					long long otherwise)
{
	double d = u->v[f].d;

	if (u->kind[f] == UM_V_INT)
		return u->v[f].i;
	if (u->kind[f] == UM_V_REAL && d >= -9e18 && d <= 9e18 && d == (double)(long long)d)
		return (long long)d;
	return otherwise;
}
/* A whole complete unit: status absent, not a string, or "complete". */
static inline bool um_unit_complete(const struct um_read_unit *u)
{
	return u->status == UM_US_NONE || u->status == UM_US_COMPLETE;
}

/*
 * The document reader: append the unit objects of one file to `units`, jansson alone, checked
 * as um_read_units checks them. No command uses it (they stream); it is the reference the
 * streaming reader is tested and fuzzed against (fuzz_summary.c). On failure, returns -1 and
 * writes one line naming the file and the position into err.
 */
int um_load_units(const char *path, json_t *units, char *err, size_t errlen);
/* A number of a JSON object, or otherwise when the key is missing or not a number. */
double um_json_number(const json_t *obj, const char *key, double otherwise);
/* obj[key] if it is a string, else NULL. */
const char *um_json_string(const json_t *obj, const char *key);

#endif
