// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "common/summary.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A double's bits as an unsigned key in its order; -0 and +0 one key, as cmp_double has them. */
static uint64_t sort_key(double x)
{
	uint64_t bits;

	if (x == 0)
		x = 0.0;
	memcpy(&bits, &x, sizeof(bits));
	return bits >> 63 ? ~bits : bits | (1ull << 63);
}

/*
 * Sort doubles as qsort with cmp_double does (glibc's qsort is a stable merge sort: the two
 * zeros keep their order), by a stable radix sort of their keys a byte at a time: a million
 * units' figures in tens of milliseconds, where qsort's calls to a comparison take ten times
 * that, and summary, project and the page sort several. Small or NaN-holding inputs: qsort.
 */
static void sort_doubles(double *v, size_t n)
{
	size_t (*counts)[256] = NULL;
	double *tmp = NULL, *from = v, *to;
	bool nan = false;

	for (size_t i = 0; i < n && !nan; i++)
		nan = isnan(v[i]);
	if (n >= 4096 && !nan) {
		tmp = malloc(n * sizeof(*tmp));
		counts = calloc(8, sizeof(*counts));
	}
	if (!tmp || !counts) {
		free(tmp);
		free(counts);
		qsort(v, n, sizeof(*v), cmp_double);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = sort_key(v[i]);

		for (int b = 0; b < 8; b++)
			counts[b][(k >> (8 * b)) & 0xff]++;
	}
	to = tmp;
	for (int b = 0; b < 8; b++) {
		size_t at = 0;

		/* a byte all keys share moves nothing */
		if (counts[b][(sort_key(from[0]) >> (8 * b)) & 0xff] == n)
			continue;
		for (int d = 0; d < 256; d++) {
			size_t c = counts[b][d];

			counts[b][d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[counts[b][(sort_key(from[i]) >> (8 * b)) & 0xff]++] = from[i];
		to = from;
		from = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	free(counts);
}

double um_percentile(double *values, size_t n, double q)
{
	double rank, frac;
	size_t low;

	if (!n)
		return 0.0;
	/* asked again of the same values (median, then p90): sorted already, an O(n) look */
	for (size_t i = 1; i < n; i++)
		if (!(values[i] >= values[i - 1])) {
			sort_doubles(values, n);
			break;
		}
	if (n == 1)
		return values[0];
	rank = q / 100.0 * (double)(n - 1);
	low = (size_t)rank;
	frac = rank - (double)low;
	if (low + 1 >= n)
		return values[n - 1];
	return values[low] + frac * (values[low + 1] - values[low]);
}

double um_round(double x, int ndigits)
{
	char buf[64];

	/* printf rounds the exact binary value, ties to even, as Python's round() does */
	snprintf(buf, sizeof(buf), "%.*f", ndigits, x);
	return strtod(buf, NULL);
}

json_t *um_summarise_figures(const struct unit_figures *units, size_t n)
{
	double *walls, *rss, total_wall = 0, total_cpu = 0, util_sum = 0, wall_max = 0, rss_max = 0;
	long long out_sum = 0;
	size_t n_out = 0;
	json_t *summary = json_object();

	if (!n) {
		json_object_set_new(summary, UM_SUMMARY_N_UNITS, json_integer(0));
		return summary;
	}
	walls = calloc(n, sizeof(*walls));
	rss = calloc(n, sizeof(*rss));
	if (!walls || !rss) {
		free(walls);
		free(rss);
		json_decref(summary);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		double wall = units[i].wall_s, cpu = units[i].cpu_s;

		walls[i] = wall;
		rss[i] = units[i].peak_rss_bytes;
		total_wall += wall;
		total_cpu += cpu;
		/* the seed's cpu_utilisation property: unrounded, 0 for a zero-length unit */
		util_sum += wall > 0 ? cpu / wall : 0.0;
		if (i == 0 || wall > wall_max)
			wall_max = wall;
		if (i == 0 || rss[i] > rss_max)
			rss_max = rss[i];
		/* a sum past what JSON integers hold cannot be read: null, as unrecorded is */
		if (units[i].output_bytes >= 0 && out_sum >= 0) {
			if (__builtin_add_overflow(out_sum, units[i].output_bytes, &out_sum))
				out_sum = -1;
			n_out++;
		}
	}
	json_object_set_new(summary, UM_SUMMARY_N_UNITS, json_integer((json_int_t)n));
	json_object_set_new(summary, UM_SUMMARY_TOTAL_WALL_S, json_real(um_round(total_wall, 3)));
	json_object_set_new(summary, UM_SUMMARY_TOTAL_CPU_S, json_real(um_round(total_cpu, 3)));
	json_object_set_new(summary, UM_SUMMARY_WALL_S_MEDIAN,
			    json_real(um_round(um_percentile(walls, n, 50), 4)));
	json_object_set_new(summary, UM_SUMMARY_WALL_S_P90,
			    json_real(um_round(um_percentile(walls, n, 90), 4)));
	json_object_set_new(summary, UM_SUMMARY_WALL_S_MAX, json_real(um_round(wall_max, 4)));
	json_object_set_new(summary, UM_SUMMARY_PEAK_RSS_BYTES_MEDIAN,
			    json_integer((json_int_t)um_percentile(rss, n, 50)));
	json_object_set_new(summary, UM_SUMMARY_PEAK_RSS_BYTES_MAX, json_integer((json_int_t)rss_max));
	json_object_set_new(summary, UM_SUMMARY_CPU_UTILISATION_MEAN,
			    json_real(um_round(util_sum / n, 3)));
	json_object_set_new(summary, UM_SUMMARY_TOTAL_OUTPUT_BYTES,
			    n_out && out_sum >= 0 ? json_integer(out_sum) : json_null());
	free(walls);
	free(rss);
	return summary;
}

static void mib_cell(FILE *out, const json_t *v)
{
	if (json_is_number(v))
		fprintf(out, "%10.1f MiB", json_number_value(v) / 1048576.0);
	else
		fprintf(out, "%14s", "-");
}

static void seconds_cell(FILE *out, const json_t *v)
{
	if (json_is_number(v))
		fprintf(out, "%12.4f s", json_number_value(v));
	else
		fprintf(out, "%14s", "-");
}

void um_print_summary_table(FILE *out, const json_t *s)
{
	const json_t *outb = json_object_get(s, UM_SUMMARY_TOTAL_OUTPUT_BYTES);

	fprintf(out, "units            %lld\n",
		(long long)json_integer_value(json_object_get(s, UM_SUMMARY_N_UNITS)));
	if (!json_integer_value(json_object_get(s, UM_SUMMARY_N_UNITS)))
		return;
	fprintf(out, "wall  median/p90/max ");
	seconds_cell(out, json_object_get(s, UM_SUMMARY_WALL_S_MEDIAN));
	seconds_cell(out, json_object_get(s, UM_SUMMARY_WALL_S_P90));
	seconds_cell(out, json_object_get(s, UM_SUMMARY_WALL_S_MAX));
	fprintf(out, "\npeak RSS median/max  ");
	mib_cell(out, json_object_get(s, UM_SUMMARY_PEAK_RSS_BYTES_MEDIAN));
	mib_cell(out, json_object_get(s, UM_SUMMARY_PEAK_RSS_BYTES_MAX));
	fprintf(out, "\ntotal wall %.3f s, total CPU %.3f s, mean CPU utilisation %.3f cores\n",
		json_number_value(json_object_get(s, UM_SUMMARY_TOTAL_WALL_S)),
		json_number_value(json_object_get(s, UM_SUMMARY_TOTAL_CPU_S)),
		json_number_value(json_object_get(s, UM_SUMMARY_CPU_UTILISATION_MEAN)));
	if (json_is_integer(outb))
		fprintf(out, "total output %lld bytes\n", (long long)json_integer_value(outb));
	else
		fprintf(out, "total output: not recorded\n");
}
