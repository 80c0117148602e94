/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The seed's summarise(): the distribution of per-unit figures that a projection is built from,
 * with the same keys, rounding and linear-interpolation percentiles (numpy's default). The
 * files it reads come through units_file.h.
 */
#ifndef UM_SUMMARY_H
#define UM_SUMMARY_H

#include <stdbool.h>
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
 * The summary of the units of n_files manifests or units streams, read one unit at a time
 * (um_read_units): only the four figures a unit are kept. unitless (n_files entries, or NULL)
 * says which files held no unit. NULL with one line in err on failure.
 */
json_t *um_summarise_files(const char *const *files, size_t n_files, bool *unitless, char *err,
			   size_t errlen);

/* The summary as a short human table. */
void um_print_summary_table(FILE *out, const json_t *summary);

#endif
