/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The seed's summarise(): the distribution of per-unit figures that a projection is built from,
 * with the same keys, rounding and linear-interpolation percentiles (numpy's default).
 */
#ifndef UM_SUMMARY_H
#define UM_SUMMARY_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

/* q-th percentile (0..100) of n values by linear interpolation; sorts values in place. */
double um_percentile(double *values, size_t n, double q);
/* Python's round(x, ndigits) for the values we print: correctly rounded, ties to even. */
double um_round(double x, int ndigits);
/* What the summary reads of one unit. */
struct unit_figures {
	double wall_s;
	double cpu_s;
	double peak_rss_bytes;
	long long output_bytes; /* < 0: not recorded */
};

/* Summary object over n units; {"n_units": 0} when empty. */
json_t *um_summarise_figures(const struct unit_figures *units, size_t n);
/* The same over a JSON array of unit objects. */
json_t *um_summarise(const json_t *units);

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

/* The summary as a short human table. */
void um_print_summary_table(FILE *out, const json_t *summary);

#endif
