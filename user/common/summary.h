/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The seed's summarise(): the distribution of per-unit figures that a projection is built from,
 * with the same keys, rounding and linear-interpolation percentiles (numpy's default). The
 * statistics alone, for the writer (record/) and the readers (files/summary.h: over JSON and
 * over files) alike.
 */
#ifndef UM_COMMON_SUMMARY_H
#define UM_COMMON_SUMMARY_H

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

/* The summary as a short human table. */
void um_print_summary_table(FILE *out, const json_t *summary);

#endif
