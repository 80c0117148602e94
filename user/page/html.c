// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The HTML report (see html.h): the page's sections, and writing it in one piece; its inputs
 * are read by html_load.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <jansson.h>
#include "common/manifest_keys.h"
#include "page/html.h"
#include "page/html_page.h"
#include "common/grow.h"
#include "common/fileio.h"
#include "files/summary.h"
#include "common/unit_keys.h"
#include "files/units_file.h"
#include "page/html_tasks.h"
#include "page/svg.h"
#include "common/version.h"

/*
 * The page's stylesheet and its script, which sorts the unit table by a column (numbers by their
 * data-v, text as text): user/page/report.css and report.js, embedded at build time as arrays
 * (Makefile: newlines dropped, then xxd -i), not NUL-terminated.
 */
#include "page/report_css.h"
#include "page/report_js.h"

/* --- the run ---------------------------------------------------------------------------- */

static void fact(FILE *out, const char *name, const char *value)
{
	fprintf(out, "<dt>%s</dt><dd>", name);
	markup_text(out, value && *value ? value : "not recorded");
	fputs("</dd>", out);
}

static void command_text(FILE *out, const json_t *command)
{
	size_t i;
	const json_t *arg;

	json_array_foreach(command, i, arg) {
		if (i)
			fputc(' ', out);
		markup_text(out, json_string_value(arg));
	}
}

/* A row of the totals: the value for a person, the exact figure in data-v (tests read it). */
static void total_row(FILE *out, const char *key, const char *name, const json_t *v,
		      enum value_kind kind)
{
	char text[64] = "not known";

	if (json_is_number(v))
		svg_format_value(text, sizeof(text), json_number_value(v), kind);
	fprintf(out, "<tr data-key=\"%s\"><td>%s</td><td data-v=\"", key, name);
	if (json_is_integer(v))
		fprintf(out, "%lld", (long long)json_integer_value(v));
	else if (json_is_number(v))
		fprintf(out, "%.17g", json_number_value(v));
	fprintf(out, "\">%s</td></tr>", text);
}

static void count_row(FILE *out, const char *key, const char *name, long long n)
{
	fprintf(out, "<tr data-key=\"%s\"><td>%s</td><td data-v=\"%lld\">%lld</td></tr>", key, name, n,
		n);
}

static void warning(FILE *out, bool *open, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warning(FILE *out, bool *open, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!*open)
		fputs("<ul class=\"warnings\">", out);
	*open = true;
	fputs("<li>", out);
	markup_text(out, line);
	fputs("</li>", out);
}

static size_t incomplete_units(const struct um_read_unit *units, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += !um_unit_complete(&units[i]);
	return c;
}

static void run_warnings(FILE *out, const struct page *pg, const struct html_input *in,
			 const json_t *run)
{
	const json_t *tl = json_object_get(run, UM_RUN_MEMORY_TIMELINE),
		     *charge = json_object_get(run, UM_RUN_CHARGE);
	size_t incomplete = incomplete_units(pg->units + in->first, in->n);
	double lost = um_json_number(run, UM_RUN_LOST_EVENTS, 0),
	       map_full = um_json_number(run, UM_RUN_MAP_FULL_EVENTS, 0),
	       lock_timeouts = um_json_number(json_object_get(run, UM_RUN_TRACING),
					      UM_TRACING_LOCK_TIMEOUTS, 0);
	bool open = false;

	if (lost > 0 || map_full > 0)
		warning(out, &open, "%.0f ring-buffer records lost and %.0f map-full events: some "
			"processes or units are missing from the figures", lost, map_full);
	if (incomplete)
		warning(out, &open, "%zu unit%s did not complete (the process exited or exec'd inside "
			"it): left out of the distributions and the projection", incomplete,
			incomplete == 1 ? "" : "s");
	if (um_json_number(run, UM_RUN_SCOPE_OVERFLOWS, 0) > 0)
		warning(out, &open, "%.0f processes were inside more nested units than are tracked: "
			"the innermost two got their figures",
			um_json_number(run, UM_RUN_SCOPE_OVERFLOWS, 0));
	if (lock_timeouts > 0)
		warning(out, &open, "%.0f updates ran without the baseline lock: a peak they touched may "
			"be off by one change", lock_timeouts);
	if (um_json_number(tl, UM_TIMELINE_OVERRUNS, 0) > 0)
		warning(out, &open, "the memory timeline has gaps: %.0f values arrived while the loader "
			"was behind (the peaks above are exact; only the chart misses them)",
			um_json_number(tl, UM_TIMELINE_OVERRUNS, 0));
	if (um_json_string(charge, UM_CHARGE_NOTE))
		warning(out, &open, "memory (cgroup): %s", um_json_string(charge, UM_CHARGE_NOTE));
	if (json_is_integer(json_object_get(run, UM_RUN_EXIT_SIGNAL)))
		warning(out, &open, "the command was killed by signal %lld",
			(long long)json_integer_value(json_object_get(run, UM_RUN_EXIT_SIGNAL)));
	else if (um_json_number(run, UM_RUN_EXIT_STATUS, 0) != 0)
		warning(out, &open, "the command exited with status %.0f",
			um_json_number(run, UM_RUN_EXIT_STATUS, 0));
	if (open)
		fputs("</ul>", out);
}

static void section_run(struct page *pg, const struct html_input *in, size_t k)
{
	FILE *out = pg->out;
	const json_t *run = json_object_get(in->doc, UM_MANIFEST_RUN),
		     *hw = json_object_get(in->doc, UM_MANIFEST_HARDWARE);
	char mem[64] = "", cores[64] = "";

	fprintf(out, "<article class=\"run\" id=\"run-%zu\" data-file=\"", k);
	markup_text(out, in->path);
	fputs("\"><h3><code>", out);
	command_text(out, json_object_get(in->doc, UM_MANIFEST_COMMAND));
	fputs("</code></h3><dl class=\"facts\">", out);
	fact(out, "file", in->path);
	fact(out, "mode", um_json_string(in->doc, UM_MANIFEST_MODE));
	fact(out, "started", um_json_string(run, UM_RUN_STARTED_AT));
	fact(out, "host", um_json_string(hw, UM_HW_HOSTNAME));
	fact(out, "CPU", um_json_string(hw, UM_HW_CPU_MODEL));
	if (json_is_number(json_object_get(hw, UM_HW_LOGICAL_CORES)))
		snprintf(cores, sizeof(cores), "%.0f logical, %.0f physical",
			 um_json_number(hw, UM_HW_LOGICAL_CORES, 0), um_json_number(hw, UM_HW_PHYSICAL_CORES, 0));
	fact(out, "cores", cores);
	if (json_is_number(json_object_get(hw, UM_HW_TOTAL_MEMORY_BYTES)))
		svg_format_value(mem, sizeof(mem), um_json_number(hw, UM_HW_TOTAL_MEMORY_BYTES, 0),
				 VALUE_BYTES);
	fact(out, "memory", mem);
	fact(out, "kernel", um_json_string(hw, UM_HW_KERNEL_RELEASE));
	fact(out, "programs", um_json_string(json_object_get(run, UM_RUN_TRACING), UM_TRACING_BUILD));
	fact(out, "memory cgroup", um_json_string(json_object_get(run, UM_RUN_CHARGE), UM_CHARGE_CGROUP));
	fputs("</dl><table class=\"totals\"><tbody>", out);
	total_row(out, UM_RUN_WALL_S, "wall time", json_object_get(run, UM_RUN_WALL_S), VALUE_SECONDS);
	total_row(out, UM_RUN_CPU_S, "CPU time", json_object_get(run, UM_RUN_CPU_S), VALUE_SECONDS);
	total_row(out, UM_RUN_PEAK_RSS_BYTES, "peak RSS (the group's, at one instant)",
		  json_object_get(run, UM_RUN_PEAK_RSS_BYTES), VALUE_BYTES);
	total_row(out, UM_RUN_PEAK_CHARGE_BYTES, "peak memory (cgroup): what --mem is enforced on",
		  json_object_get(run, UM_RUN_PEAK_CHARGE_BYTES), VALUE_BYTES);
	total_row(out, UM_RUN_OUTPUT_BYTES, "bytes written",
		  json_object_get(run, UM_RUN_OUTPUT_BYTES), VALUE_BYTES);
	count_row(out, UM_RUN_PROCESSES, "processes",
		  (long long)um_json_number(run, UM_RUN_PROCESSES, 0));
	count_row(out, "units", "units", (long long)in->n);
	fputs("</tbody></table>", out);
	run_warnings(out, pg, in, run);
	fputs("</article>\n", out);
}

static void section_runs(struct page *pg)
{
	size_t manifests = 0;

	fputs("<section id=\"runs\"><h2>Runs</h2>", pg->out);
	for (size_t i = 0; i < pg->n_inputs; i++) {
		if (pg->inputs[i].doc) {
			section_run(pg, &pg->inputs[i], i);
			manifests++;
		} else {
			fputs("<p class=\"why stream\">", pg->out);
			markup_text(pg->out, pg->inputs[i].path);
			fprintf(pg->out, ": a units stream (%zu units), without its run record: no "
				"command, hardware or totals.</p>", pg->inputs[i].n);
		}
	}
	if (!manifests)
		fputs("<p class=\"why\">No run manifest was given.</p>", pg->out);
	fputs("</section>\n", pg->out);
}

/* --- distributions ---------------------------------------------------------------------- */

static void section_distributions(struct page *pg)
{
	static const struct {
		enum um_unit_field field;
		const char *key, *label;
		enum value_kind kind;
	} figures[] = {
		{ UM_F_WALL_S, UM_KEY_WALL_S, "wall time", VALUE_SECONDS },
		{ UM_F_CPU_S, UM_KEY_CPU_S, "CPU time", VALUE_SECONDS },
		{ UM_F_CPU_UTILISATION, UM_KEY_CPU_UTILISATION, "cores used (CPU time / wall)",
		  VALUE_CORES },
		{ UM_F_PEAK_RSS_BYTES, UM_KEY_PEAK_RSS_BYTES, "peak RSS", VALUE_BYTES },
		{ UM_F_PEAK_CHARGE_BYTES, UM_KEY_PEAK_CHARGE_BYTES, "peak memory (cgroup)", VALUE_BYTES },
	};
	size_t n = pg->n_units, i;
	double *values = malloc((n ? n : 1) * sizeof(*values));

	fprintf(pg->out, "<section id=\"distributions\"><h2>How the units' costs spread</h2>"
			 "<p class=\"sub\">Complete units only. The median and p90 are marked: "
			 "<code>project</code> asks --time from the sum of a task's units (close to "
			 "N x the mean), each worker's warm-up once, --mem from the highest peak.</p>"
			 "<div class=\"dists\">");
	for (size_t f = 0; values && f < sizeof(figures) / sizeof(figures[0]); f++) {
		size_t m = 0;

		for (i = 0; i < n; i++) {
			const struct um_read_unit *u = &pg->units[i];

			if (um_unit_is_number(u, figures[f].field) && um_unit_complete(u))
				values[m++] = um_unit_number(u, figures[f].field, 0);
		}
		svg_distribution(pg->out, figures[f].key, figures[f].label, values, m, figures[f].kind);
	}
	fputs("</div></section>\n", pg->out);
	free(values);
}

/* --- over time -------------------------------------------------------------------------- */

/*
 * Beside RSS, a run's device memory, where it has any: the memory timeline samples RSS and the
 * charge, not the GPU, so the chart is each unit's device peak over its time, as the caption
 * says. No chart, and no word, in a run without GPU figures: such a page is as it was.
 */
static void gpu_over_time(struct page *pg, const struct html_input *in)
{
	const json_t *run = json_object_get(in->doc, UM_MANIFEST_RUN);
	const struct um_read_unit *units = pg->units + in->first;
	double run_peak = um_json_number(run, UM_RUN_PEAK_GPU_BYTES, -1), end_s;
	const json_t *tl;
	bool any = run_peak > 0;
	size_t placed = 0, with_gpu = 0;

	for (size_t u = 0; u < in->n; u++)
		if (um_unit_number(&units[u], UM_F_PEAK_GPU_BYTES, -1) >= 0) {
			with_gpu++;
			placed += um_unit_is_number(&units[u], UM_F_START_NS);
		}
	if (!any && !with_gpu)
		return;
	fprintf(pg->out, "<h4 class=\"gpu\">Device memory (GPU)</h4><p class=\"sub\" "
		"id=\"gpu-caption\">Each unit's peak device memory through the CUDA driver API "
		"(<code>peak_gpu_bytes</code>, all devices) as a bar over the unit's time, and the "
		"run's peak as a dashed line. The memory timeline holds no GPU samples, so this is "
		"drawn from the per-unit peaks, not sampled over time; the CUDA context and pools "
		"are not in it. %zu of %zu units made such a call", with_gpu, in->n);
	if (placed < with_gpu)
		fprintf(pg->out, "; %zu have no start time and are not drawn", with_gpu - placed);
	fputs(".</p>", pg->out);
	/* the memory chart's time axis, so the two line up */
	tl = json_object_get(run, UM_RUN_MEMORY_TIMELINE);
	end_s = fmax(um_json_number(run, UM_RUN_WALL_S, 0),
		     (um_json_number(tl, UM_TIMELINE_START_NS, 0) +
		      (double)json_array_size(json_object_get(tl, UM_TIMELINE_RSS_MAX_BYTES)) *
			      um_json_number(tl, UM_TIMELINE_BUCKET_NS, 0)) / 1e9);
	svg_gpu_units(pg->out, units, in->n, um_json_number(tl, UM_TIMELINE_START_NS, 0) / 1e9, end_s,
		      run_peak);
}

static void section_over_time(struct page *pg)
{
	FILE *out = pg->out;
	bool any = false;

	fputs("<section id=\"timeline\"><h2>Processes and units over time</h2><p class=\"sub\">One "
	      "lane per process, from its start (a dashed line from its parent's lane at the fork) to "
	      "its exit; each unit a bar on its process. Hover for the figures.</p>", out);
	for (size_t i = 0; i < pg->n_inputs; i++) {
		const struct html_input *in = &pg->inputs[i];
		const json_t *run = json_object_get(in->doc, UM_MANIFEST_RUN);

		if (!in->doc)
			continue;
		any = true;
		if (pg->n_inputs > 1) {
			fputs("<h3>", out);
			markup_text(out, in->path);
			fputs("</h3>", out);
		}
		if (!json_array_size(json_object_get(run, UM_RUN_PER_PROCESS))) {
			fputs("<p class=\"why\">The manifest lists no process.</p>", out);
			continue;
		}
		svg_process_lanes(out, json_object_get(run, UM_RUN_PER_PROCESS), pg->units + in->first,
				  pg->text + in->first, in->n, (const char *const *)pg->strings,
				  um_json_number(run, UM_RUN_WALL_S, 0));
	}
	if (!any)
		fputs("<p class=\"why\" id=\"no-timeline\">No timeline: the input is a units stream "
		      "alone, and the processes' lives are in the run manifest (<code>unitmeter run -o "
		      "FILE</code>). Give the manifest to see it.</p>", out);
	fputs("</section>\n<section id=\"memory\"><h2>Memory over time</h2><p class=\"sub\">The "
	      "group's RSS (blue) and its memory cgroup's (orange: what --mem is enforced on), from their lowest to their "
	      "highest value in each interval: every change was seen, so a short spike shows at its "
	      "full height.</p>", out);
	any = false;
	for (size_t i = 0; i < pg->n_inputs; i++) {
		const json_t *run = json_object_get(pg->inputs[i].doc, UM_MANIFEST_RUN);
		const json_t *tl = json_object_get(run, UM_RUN_MEMORY_TIMELINE);

		if (!pg->inputs[i].doc)
			continue;
		any = true;
		if (pg->n_inputs > 1) {
			fputs("<h3>", out);
			markup_text(out, pg->inputs[i].path);
			fputs("</h3>", out);
		}
		if (!json_is_object(tl))
			fputs("<p class=\"why\">This manifest has no memory timeline (written by an "
			      "earlier unitmeter).</p>", out);
		else
			svg_memory_timeline(out, tl, um_json_number(run, UM_RUN_WALL_S, 0));
		gpu_over_time(pg, &pg->inputs[i]);
	}
	if (!any)
		fputs("<p class=\"why\" id=\"no-memory\">No memory timeline: it is kept in the run "
		      "manifest, and only a units stream was given.</p>", out);
	fputs("</section>\n", out);
}

/* --- the projection --------------------------------------------------------------------- */

static void model_row(FILE *out, const char *key, const char *name, double seconds,
		      const char *how)
{
	fprintf(out, "<tr data-key=\"%s\"><td>%s</td><td data-v=\"%.17g\">%.2f s</td><td "
		"class=\"text\">", key, name, seconds, seconds);
	markup_text(out, how);
	fputs("</td></tr>", out);
}

/* How a task's --time is made up: the same parts and words as project's header. */
static void time_model_table(FILE *out, const struct projection *p,
			     const struct project_options *opt)
{
	char total[96];

	fprintf(out, "<p class=\"sub\">One task of %lld units, as <code>project</code> models it: "
		"--time = fixed + warm-up + the units spread over the workers + tail, x the "
		"margin (or the sum's p90, when it is larger).</p><table class=\"totals\" id=\"time-model\"><tbody>", p->units_per_task);
	model_row(out, "fixed_s", "fixed", p->model.fixed_s, p->time_parts[0]);
	model_row(out, "warmup_s", "warm-up", p->task.warmup_s, p->time_parts[1]);
	model_row(out, "units_s", "units", p->task.spread_s, p->time_parts[2]);
	model_row(out, "tail_s", "workers and tail", p->task.tail_s, p->time_parts[3]);
	if (p->task.quantile_s > p->task.total_s * opt->margin)
		snprintf(total, sizeof(total), "%.2f s expected; the sum's p90 (above x %.2f margin), "
			 "in whole minutes", p->task.total_s, opt->margin);
	else
		snprintf(total, sizeof(total), "%.2f s expected x %.2f margin, in whole minutes",
			 p->task.total_s, opt->margin);
	model_row(out, "time_s", "--time", p->time_s, total);
	fputs("</tbody></table>", out);
}

/* last_use: the page's units are freed once the projection has taken its figures from them,
 * before it models (the array page at a million units stays under 200 MB so) */
static void section_projection(struct page *pg, const struct project_options *opt, bool last_use)
{
	FILE *out = pg->out, *mem;
	struct project_input in;
	struct projection p;
	char err[1024] = "", *text = NULL;
	size_t len = 0;

	fputs("<section id=\"projection\"><h2>The SLURM request of the full run</h2>", out);
	if (!opt) {
		fputs("<p class=\"why\">Not asked for: <code>unitmeter report FILE... --units N</code> "
		      "(with <code>--tasks K</code> or <code>--units-per-task M</code>) adds it.</p>"
		      "</section>\n", out);
		return;
	}
	/* from the files as read above: parsing 100,000 units once is time enough */
	um_project_input_init(&in);
	if (um_project_input_reserve(&in, pg->n_units))
		snprintf(err, sizeof(err), "out of memory for %zu units", pg->n_units);
	for (size_t i = 0; i < pg->n_inputs && !*err; i++) {
		um_project_add(&in, pg->inputs[i].path, pg->units + pg->inputs[i].first,
			       pg->inputs[i].n, json_object_get(pg->inputs[i].doc, UM_MANIFEST_RUN), err,
			       sizeof(err));
		if (last_use)
			units_release(pg, pg->inputs[i].first + pg->inputs[i].n);
	}
	if (last_use)
		units_free(pg);
	if (*err || um_project(&in, opt, &p, err, sizeof(err))) {
		fputs("<p class=\"why\">No projection: ", out);
		markup_text(out, err);
		fputs("</p></section>\n", out);
		um_project_input_free(&in);
		return;
	}
	time_model_table(out, &p, opt);
	mem = open_memstream(&text, &len);
	if (mem) {
		um_print_sbatch(mem, &p, opt, pg->req->files, pg->req->n_files);
		fclose(mem);
	}
	if (pg->array)
		fputs("<div class=\"pair\"><div><h3>What the next array should ask</h3>", out);
	fputs("<pre id=\"sbatch\">", out);
	markup_text(out, text);
	fputs("</pre>", out);
	if (pg->array) {
		fputs("</div><div>", out);
		html_tasks_ran_under(out, &pg->tasks);
		fputs("</div></div>", out);
	}
	free(text);
	um_project_input_free(&in);
	fputs("</section>\n", out);
}

/* --- the table -------------------------------------------------------------------------- */

static void cell(FILE *out, const struct um_read_unit *u, enum um_unit_field f,
		 enum value_kind kind, int digits)
{
	double x = um_unit_number(u, f, 0);
	char text[64];

	if (!um_unit_is_number(u, f)) {
		fputs("<td data-v=\"\">&ndash;</td>", out);
		return;
	}
	if (digits >= 0)
		snprintf(text, sizeof(text), "%.*f", digits, x);
	else
		svg_format_value(text, sizeof(text), x, kind);
	if (u->kind[f] == UM_V_INT)
		fprintf(out, "<td data-v=\"%lld\">%s</td>", u->v[f].i, text);
	else
		fprintf(out, "<td data-v=\"%.17g\">%s</td>", x, text);
}

struct table_row {
	double wall_s;
	size_t at; /* in pg->units */
};

/* a before b in the table: the longer wall, then the earlier unit (as a stable sort keeps them) */
static bool row_before(const struct table_row *a, const struct table_row *b)
{
	return a->wall_s > b->wall_s || (a->wall_s == b->wall_s && a->at < b->at);
}

static int by_table_order(const void *a, const void *b)
{
	return row_before(b, a) - row_before(a, b);
}

/* Restore the heap below i: each row before neither of its children (the last row on top). */
static void heap_down(struct table_row *rows, size_t n, size_t i)
{
	for (;;) {
		size_t last = i, l = 2 * i + 1, r = l + 1;
		struct table_row swap;

		if (l < n && row_before(&rows[last], &rows[l]))
			last = l;
		if (r < n && row_before(&rows[last], &rows[r]))
			last = r;
		if (last == i)
			return;
		swap = rows[i], rows[i] = rows[last], rows[last] = swap;
		i = last;
	}
}

/*
 * The `keep` units of longest wall, in table order, into rows: a heap whose top is the last
 * row kept, so a million units need room for `keep` rows, not a million and a sort's copy.
 */
static size_t longest_units(const struct page *pg, struct table_row *rows, size_t keep)
{
	size_t n = 0;

	for (size_t i = 0; i < pg->n_units; i++) {
		struct table_row row = { um_unit_number(&pg->units[i], UM_F_WALL_S, 0), i };

		if (n < keep) {
			rows[n++] = row;
			if (n == keep)
				for (size_t k = keep / 2; k-- > 0;)
					heap_down(rows, n, k);
		} else if (row_before(&row, &rows[0])) {
			rows[0] = row;
			heap_down(rows, n, 0);
		}
	}
	qsort(rows, n, sizeof(*rows), by_table_order);
	return n;
}

static void section_table(struct page *pg)
{
	FILE *out = pg->out;
	size_t n = pg->n_units, shown = n < HTML_TABLE_ROWS ? n : HTML_TABLE_ROWS, i;
	struct table_row *rows = malloc((shown ? shown : 1) * sizeof(*rows));

	fputs("<section id=\"units\"><h2>Units</h2>", out);
	if (!rows) {
		fputs("<p class=\"why\">Out of memory.</p></section>\n", out);
		return;
	}
	if (n > HTML_TABLE_ROWS) {
		longest_units(pg, rows, HTML_TABLE_ROWS);
		fprintf(out, "<p class=\"sub\" id=\"rows-note\">The %d units with the longest wall time "
			     "of %zu; every unit is in the files given and in the charts above.</p>",
			HTML_TABLE_ROWS, n);
	} else {
		for (i = 0; i < n; i++)
			rows[i] = (struct table_row){ um_unit_number(&pg->units[i], UM_F_WALL_S, 0), i };
	}
	fputs("<p class=\"sub\">Click a column to sort.</p><div class=\"scroll\"><table class=\"sortable\" "
	      "id=\"unit-table\"><thead><tr><th>unit</th><th>pid</th><th class=\"text\">function</th>"
	      "<th>start s</th><th>wall</th><th>CPU</th><th>cores</th><th>peak RSS</th>"
	      "<th>RSS rise</th><th>peak memory (cgroup)</th><th>written</th><th class=\"text\">status</th>"
	      "</tr></thead><tbody>", out);
	for (i = 0; i < shown; i++) {
		const struct um_read_unit *u = &pg->units[rows[i].at];
		const char *status = unit_string(pg, pg->text[rows[i].at].status);

		fputs("<tr>", out);
		cell(out, u, UM_F_INDEX, VALUE_SECONDS, 0);
		cell(out, u, UM_F_PID, VALUE_SECONDS, 0);
		fputs("<td class=\"text\">", out);
		markup_text(out, unit_string(pg, pg->text[rows[i].at].spec));
		fputs("</td>", out);
		if (u->kind[UM_F_START_NS] == UM_V_INT)
			fprintf(out, "<td data-v=\"%lld\">%.3f</td>", u->v[UM_F_START_NS].i,
				u->v[UM_F_START_NS].i / 1e9);
		else
			fputs("<td data-v=\"\">&ndash;</td>", out);
		cell(out, u, UM_F_WALL_S, VALUE_SECONDS, -1);
		cell(out, u, UM_F_CPU_S, VALUE_SECONDS, -1);
		cell(out, u, UM_F_CPU_UTILISATION, VALUE_CORES, 2);
		cell(out, u, UM_F_PEAK_RSS_BYTES, VALUE_BYTES, -1);
		cell(out, u, UM_F_PEAK_RSS_DELTA_BYTES, VALUE_BYTES, -1);
		cell(out, u, UM_F_PEAK_CHARGE_BYTES, VALUE_BYTES, -1);
		cell(out, u, UM_F_OUTPUT_BYTES, VALUE_BYTES, -1);
		fputs("<td class=\"text\">", out);
		markup_text(out, status ? status : UM_STATUS_COMPLETE);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div></section>\n", out);
	free(rows);
}

/* --- the page --------------------------------------------------------------------------- */

static void page_head(struct page *pg)
{
	FILE *out = pg->out;
	char when[64] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">", out);
	if (pg->array) {
		/* an array's page names its job, not its 200 files */
		fputs("<title>unitmeter: ", out);
		html_tasks_title(out, &pg->tasks);
		fputs("</title>", out);
	} else {
		fputs("<title>unitmeter report</title>", out);
	}
	fputs("<style>", out);
	fwrite(um_report_css, 1, um_report_css_len, out);
	fputs(pg->array ? "</style></head><body class=\"array\"><main>"
			: "</style></head><body><main>", out);
	if (pg->array) {
		fputs("<h1 id=\"job\">", out);
		html_tasks_title(out, &pg->tasks);
		fputs("</h1><p class=\"sub\">", out);
	} else {
		fputs("<h1>unitmeter report</h1><p class=\"sub\">", out);
		for (size_t i = 0; i < pg->req->n_files; i++) {
			fputs(i ? ", " : "", out);
			markup_text(out, pg->req->files[i]);
		}
		fputs(" &middot; ", out);
	}
	fprintf(out, "%zu units &middot; made %s by unitmeter %s</p>\n", pg->n_units, when,
		UM_VERSION);
	if (pg->array) {
		fprintf(out, "<details id=\"files\"><summary>%zu files</summary><ul>",
			pg->req->n_files);
		for (size_t i = 0; i < pg->req->n_files; i++) {
			fputs("<li>", out);
			markup_text(out, pg->req->files[i]);
			fputs("</li>", out);
		}
		fputs("</ul></details>\n", out);
	}
}

/*
 * The array's sections: its tasks against their limits first, the request re-projected from the
 * whole run (--units and --tasks, when not given, the array's own) beside the one it ran under,
 * the extremes with their task, the units merged. The request is written last, once the units
 * are drawn, so their memory goes before the model's comes; the stylesheet shows it second
 * (body.array main is a flex column). Each task's run and its processes over time are left to
 * its own page: 200 of them would bury the answer.
 */
static void array_sections(struct page *pg)
{
	struct project_options again = { .margin = 1.25 };
	long long units = 0;

	for (size_t i = 0; i < pg->tasks.n; i++)
		units += pg->tasks.rows[i].units_done + pg->tasks.rows[i].units_incomplete;
	again.units_total = units;
	again.tasks = (long long)pg->tasks.n;
	html_tasks_section(pg->out, &pg->tasks);
	html_tasks_extremes(pg->out, &pg->tasks);
	section_distributions(pg);
	section_table(pg);
	section_projection(pg, pg->req->project ? pg->req->project : units ? &again : NULL, true);
}

int html_report_write(const struct html_request *req, char *err, size_t errlen)
{
	struct page pg = { .req = req };
	struct um_atomic_file af;
	int rc = -1;

	if (load_inputs(&pg, err, errlen))
		goto out;
	if (um_atomic_open(&af, req->output, 0644, req->owner_uid, req->owner_gid)) {
		if (errno == ENAMETOOLONG)
			snprintf(err, errlen, "%s: the path is too long", req->output);
		else
			snprintf(err, errlen, "cannot write the report %s: %s", af.tmp, strerror(errno));
		goto out;
	}
	pg.out = fdopen(af.fd, "w");
	if (!pg.out) {
		snprintf(err, errlen, "cannot write the report %s: %s", af.tmp, strerror(errno));
		close(af.fd);
		um_atomic_abort(&af);
		goto out;
	}
	page_head(&pg);
	if (pg.array) {
		array_sections(&pg);
	} else {
		section_runs(&pg);
		section_distributions(&pg);
		section_over_time(&pg);
		section_projection(&pg, req->project, false);
		section_table(&pg);
	}
	fputs("</main><script>", pg.out);
	fwrite(um_report_js, 1, um_report_js_len, pg.out);
	fputs("</script></body></html>\n", pg.out);
	if (ferror(pg.out) | fclose(pg.out)) {
		snprintf(err, errlen, "cannot write the report %s: %s", af.tmp, strerror(errno));
		um_atomic_abort(&af);
		goto out;
	}
	if (um_atomic_commit(&af)) {
		snprintf(err, errlen, "cannot write the report %s: %s", req->output, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free_inputs(&pg);
	return rc;
}
