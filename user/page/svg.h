/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTML report's charts, as inline SVG: a distribution across units, the processes and their
 * units over time, and memory over time. Every mark carries its numbers in a <title> (the
 * browser shows it on hover) and in data- attributes (for the page's script and the tests).
 */
#ifndef UM_SVG_H
#define UM_SVG_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "files/units_file.h"

enum value_kind {
	VALUE_SECONDS,
	VALUE_BYTES,
	VALUE_CORES,
};

/* A value for a person: "85.3 ms", "96.0 MiB", "1.97 cores". */
void svg_format_value(char *buf, size_t len, double value, enum value_kind kind);
/* Text inside HTML or SVG markup (both pages share it), with &, <, > and quotes escaped. */
void markup_text(FILE *out, const char *s);

/*
 * A histogram of n values (any order; copied), the median and p90 marked (linear interpolation,
 * as summary and project compute them) and the maximum given.
 */
void svg_distribution(FILE *out, const char *key, const char *label, const double *values, size_t n,
		      enum value_kind kind);

/* A unit's strings on the page: 1 + their index in the page's strings; 0: not a string. */
struct page_unit_text {
	unsigned spec, status;
};

/*
 * One lane per process of a run's per_process table, from its start to its exit (or the end of
 * tracing), a line from its parent's lane at its fork; each unit of the run a bar on its
 * process's lane. end_s: the run's wall time. Returns the lanes drawn.
 */
size_t svg_process_lanes(FILE *out, const json_t *per_process, const struct um_read_unit *units,
			 const struct page_unit_text *text, size_t n, const char *const *strings,
			 double end_s);

/* The run's memory_timeline: RSS (and the memory charge) lowest to highest per bucket. */
void svg_memory_timeline(FILE *out, const json_t *timeline, double end_s);

/*
 * Device memory over time, as the run records it: the timeline holds no GPU samples, so each
 * unit's peak_gpu_bytes is a bar over the unit's time, and the run's peak a line. Units without
 * a start time or a GPU peak are not drawn. start_s, end_s: the time axis, the memory chart's
 * beside it. Returns the bars drawn.
 */
size_t svg_gpu_units(FILE *out, const struct um_read_unit *units, size_t n, double start_s,
		     double end_s, double run_peak);

#endif
