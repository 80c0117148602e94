// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The summary over units read from JSON and from files (the statistics: common/summary.c). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/grow.h"
#include "common/unit_keys.h"
#include "files/summary.h"
#include "files/units_file.h"

json_t *um_summarise(const json_t *units)
{
	size_t n = json_array_size(units), i;
	struct unit_figures *figures = calloc(n ? n : 1, sizeof(*figures));
	json_t *unit, *summary;

	if (!figures)
		return NULL;
	json_array_foreach(units, i, unit) {
		const json_t *out = json_object_get(unit, UM_KEY_OUTPUT_BYTES);

		figures[i].wall_s = um_json_number(unit, UM_KEY_WALL_S, 0);
		figures[i].cpu_s = um_json_number(unit, UM_KEY_CPU_S, 0);
		figures[i].peak_rss_bytes = um_json_number(unit, UM_KEY_PEAK_RSS_BYTES, 0);
		figures[i].output_bytes = json_is_integer(out) ? json_integer_value(out) : -1;
	}
	summary = um_summarise_figures(figures, n);
	free(figures);
	return summary;
}

struct figures_list {
	struct unit_figures *at;
	size_t n, cap;
};

static int add_figures(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t)
{
	struct figures_list *l = ctx;
	struct unit_figures *bigger;

	(void)t;
	bigger = um_grow(l->at, &l->cap, l->n + 1, sizeof(*l->at), 4096);
	if (!bigger)
		return -1;
	l->at = bigger;
	l->at[l->n++] = (struct unit_figures){
		.wall_s = um_unit_number(u, UM_F_WALL_S, 0),
		.cpu_s = um_unit_number(u, UM_F_CPU_S, 0),
		.peak_rss_bytes = um_unit_number(u, UM_F_PEAK_RSS_BYTES, 0),
		.output_bytes = u->kind[UM_F_OUTPUT_BYTES] == UM_V_INT ? u->v[UM_F_OUTPUT_BYTES].i : -1,
	};
	return 0;
}

json_t *um_summarise_files(const char *const *files, size_t n_files, bool *unitless, char *err,
			   size_t errlen)
{
	struct figures_list l = { 0 };
	json_t *summary = NULL;
	size_t f, before;

	for (f = 0; f < n_files; f++) {
		before = l.n;
		if (um_read_units(files[f], add_figures, &l, NULL, err, errlen))
			break;
		if (unitless)
			unitless[f] = l.n == before;
	}
	if (f == n_files) {
		summary = um_summarise_figures(l.at, l.n);
		if (!summary)
			snprintf(err, errlen, "out of memory summarising %zu units", l.n);
	}
	free(l.at);
	return summary;
}
