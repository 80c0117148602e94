// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The array page's sections (see html_tasks.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "page/html_tasks.h"
#include "page/svg.h"

/* Units listed in each of the slowest and biggest tables. */
#define EXTREMES 5

bool html_tasks_are_an_array(const struct um_task_table *t)
{
	if (t->n < 2)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].job >= 0)
			return true;
	return false;
}

void html_tasks_title(FILE *out, const struct um_task_table *t)
{
	for (size_t from = 0, to; from < t->n; from = to) {
		char title[128];

		to = um_task_job_end(t, from);
		um_task_job_title(t, from, to, title, sizeof(title));
		fputs(from ? "; " : "", out);
		markup_text(out, title);
	}
}

static bool killed(const struct um_task_row *r)
{
	return r->exit == UM_EXIT_OOM || r->exit == UM_EXIT_TIMED_OUT;
}

/* A cell with its sort value; '-' (sorted lowest) when unknown. */
static void value_cell(FILE *out, double x, enum value_kind kind)
{
	char text[64];

	if (x < 0) {
		fputs("<td data-v=\"\">-</td>", out);
		return;
	}
	svg_format_value(text, sizeof(text), x, kind);
	fprintf(out, "<td data-v=\"%.17g\">%s</td>", x, text);
}

static void share_cell(FILE *out, double share)
{
	if (share < 0) {
		fputs("<td data-v=\"\">-</td>", out);
		return;
	}
	fprintf(out, "<td data-v=\"%.17g\" class=\"%s\">%.0f%%</td>", share,
		share >= 0.9 ? "near" : "", 100 * share);
}

/*
 * Every task's headroom at a glance: a bar per task, as tall as the larger share of a limit it
 * used, red when a limit killed it; the 90% line is where a kill is put on a limit.
 */
static void strip(FILE *out, const struct um_task_table *t, size_t from, size_t to)
{
	const double w = 960, h = 70, top = 8;
	double step = w / (double)(to - from);

	fputs("<figure class=\"strip\"><figcaption>Headroom: each task's larger share of its time "
	      "or memory limit</figcaption>", out);
	fprintf(out, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\">", w, h + top + 2);
	fprintf(out, "<line class=\"grid\" x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", w, top,
		top);
	fprintf(out, "<line class=\"p90\" x1=\"0\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/>", w,
		top + h * 0.1, top + h * 0.1);
	for (size_t i = from; i < to; i++) {
		const struct um_task_row *r = &t->rows[i];
		double used = um_task_used(r), bar = used < 0 ? 0 : fmin(used, 1.05) * h;

		fprintf(out, "<rect class=\"task %s\" data-task=\"", killed(r) ? "killed" :
			r->exit == UM_EXIT_FAILED ? "failed" : used < 0 ? "unknown" : "fits");
		markup_text(out, r->task);
		fprintf(out, "\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>task ",
			(double)(i - from) * step + step * 0.1, used < 0 ? top : top + h - bar,
			fmax(step * 0.8, 0.5), used < 0 ? h : bar);
		markup_text(out, r->task);
		if (used < 0)
			fprintf(out, ": %s, no limit known</title></rect>", um_task_exit_name(r->exit));
		else
			fprintf(out, ": %s, %.0f%% of a limit</title></rect>", um_task_exit_name(r->exit),
				100 * used);
	}
	fputs("</svg><p class=\"legend\"><span class=\"killed\"></span>killed by a limit"
	      "<span class=\"failed\"></span>failed<span class=\"fits\"></span>ok"
	      "<span class=\"unknown\"></span>no limit known; dashed: 90%</p></figure>", out);
}

static void task_table(FILE *out, const struct um_task_table *t, size_t from, size_t to)
{
	fputs("<div class=\"scroll\"><table class=\"sortable tasks\"><thead><tr>"
	      "<th class=\"text\">task</th><th class=\"text\">state</th><th>units</th>"
	      "<th>incomplete</th><th>wall</th><th>time limit</th><th>time%</th>"
	      "<th title=\"the task's peak memory (cgroup): what --mem is enforced on\">memory</th>"
	      "<th>mem limit</th><th>mem%</th><th>CPUs used</th>"
	      "<th>given</th></tr></thead><tbody>", out);
	for (size_t i = from; i < to; i++) {
		const struct um_task_row *r = &t->rows[i];
		double cpus = um_task_cpus_used(r);

		/* the file on hover: the folded list at the top has them all */
		fprintf(out, "<tr class=\"%s\"><td class=\"text\" title=\"", killed(r) ? "killed" : "");
		markup_text(out, r->file);
		fputs("\">", out);
		markup_text(out, r->task);
		fprintf(out, "</td><td class=\"text exit %s\">%s</td>",
			r->exit == UM_EXIT_OK ? "ok" : r->exit == UM_EXIT_UNKNOWN ? "" : "bad",
			um_task_exit_name(r->exit));
		fprintf(out, "<td data-v=\"%lld\">%lld</td><td data-v=\"%lld\">%lld</td>",
			r->units_done, r->units_done, r->units_incomplete, r->units_incomplete);
		value_cell(out, r->wall_s, VALUE_SECONDS);
		value_cell(out, r->time_limit_s, VALUE_SECONDS);
		share_cell(out, um_task_time_used(r));
		value_cell(out, r->peak_charge_bytes, VALUE_BYTES);
		value_cell(out, r->memory_limit_bytes, VALUE_BYTES);
		share_cell(out, um_task_memory_used(r));
		if (cpus < 0)
			fputs("<td data-v=\"\">-</td>", out);
		else
			fprintf(out, "<td data-v=\"%.17g\">%.2f</td>", cpus, cpus);
		if (r->cpus < 0)
			fputs("<td data-v=\"\">-</td>", out);
		else
			fprintf(out, "<td data-v=\"%lld\">%lld</td>", r->cpus, r->cpus);
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table></div>", out);
}

void html_tasks_section(FILE *out, const struct um_task_table *t)
{
	fputs("<section id=\"tasks\"><h2>Tasks against their limits</h2><p class=\"sub\">Nearest "
	      "a limit first; click a column to sort. Killed: SIGKILL with the memory (cgroup) "
	      "at 90% of the memory limit (OUT_OF_MEMORY), SIGTERM or SIGKILL with the wall at 90% of the time limit. "
	      "- : not known (a task whose tracer was killed has no manifest).</p>", out);
	for (size_t from = 0, to; from < t->n; from = to) {
		char title[128];

		to = um_task_job_end(t, from);
		um_task_job_title(t, from, to, title, sizeof(title));
		fputs("<h3>", out);
		markup_text(out, title);
		fputs("</h3>", out);
		strip(out, t, from, to);
		task_table(out, t, from, to);
	}
	fputs("</section>\n", out);
}

static const struct um_task_row *const *rows_by(const struct um_task_table *t,
						int (*cmp)(const void *, const void *))
{
	const struct um_task_row **by = malloc((t->n ? t->n : 1) * sizeof(*by));

	if (!by)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		by[i] = &t->rows[i];
	qsort(by, t->n, sizeof(*by), cmp);
	return by;
}

static int by_slowest(const void *a, const void *b)
{
	double x = (*(const struct um_task_row *const *)a)->slowest_unit_s;
	double y = (*(const struct um_task_row *const *)b)->slowest_unit_s;

	return (x < y) - (x > y);
}

static int by_biggest(const void *a, const void *b)
{
	double x = (*(const struct um_task_row *const *)a)->biggest_unit_bytes;
	double y = (*(const struct um_task_row *const *)b)->biggest_unit_bytes;

	return (x < y) - (x > y);
}

/* A task's slowest or biggest unit, one per task: the array's extremes among its tasks. */
static void extremes_table(FILE *out, const struct um_task_table *t, bool slowest)
{
	const struct um_task_row *const *by = rows_by(t, slowest ? by_slowest : by_biggest);

	fprintf(out, "<table class=\"extremes\" id=\"%s\"><thead><tr><th>unit</th>"
		     "<th class=\"text\">task</th><th>%s</th></tr></thead><tbody>",
		slowest ? "slowest" : "biggest", slowest ? "wall" : "peak RSS");
	for (size_t i = 0; by && i < t->n && i < EXTREMES; i++) {
		const struct um_task_row *r = by[i];
		double x = slowest ? r->slowest_unit_s : r->biggest_unit_bytes;
		long long index = slowest ? r->slowest_unit_index : r->biggest_unit_index;
		char text[64];

		if (x < 0)
			break;
		svg_format_value(text, sizeof(text), x, slowest ? VALUE_SECONDS : VALUE_BYTES);
		if (index >= 0)
			fprintf(out, "<tr><td>%lld</td><td class=\"text\">", index);
		else
			fputs("<tr><td>-</td><td class=\"text\">", out);
		markup_text(out, r->task);
		fprintf(out, "</td><td>%s</td></tr>", text);
	}
	fputs("</tbody></table>", out);
	free((void *)by);
}

void html_tasks_extremes(FILE *out, const struct um_task_table *t)
{
	fputs("<section id=\"extremes\"><h2>The slowest and the biggest units</h2><p class=\"sub\">"
	      "Complete units, each task's own at most once.</p><div class=\"pair\"><div><h3>"
	      "Slowest</h3>", out);
	extremes_table(out, t, true);
	fputs("</div><div><h3>Biggest</h3>", out);
	extremes_table(out, t, false);
	fputs("</div></div></section>\n", out);
}

void html_tasks_ran_under(FILE *out, const struct um_task_table *t)
{
	const struct um_task_row *r = NULL;

	for (size_t i = 0; i < t->n && !r; i++)
		if (t->rows[i].has_manifest)
			r = &t->rows[i];
	fputs("<div id=\"ran-under\"><h3>What it ran under</h3>", out);
	if (!r || (r->time_limit_s < 0 && r->memory_limit_bytes < 0 && r->cpus < 0)) {
		fputs("<p class=\"why\">No limits recorded in the manifests.</p></div>", out);
		return;
	}
	fputs("<pre>", out);
	if (r->time_limit_s >= 0) {
		long long s = llround(r->time_limit_s);

		fprintf(out, "#SBATCH --time=%lld:%02lld:%02lld\n", s / 3600, s / 60 % 60, s % 60);
	}
	if (r->memory_limit_bytes >= 0)
		fprintf(out, "#SBATCH --mem=%.0fM\n", ceil(r->memory_limit_bytes / 1048576));
	if (r->cpus >= 0)
		fprintf(out, "#SBATCH --cpus-per-task=%lld\n", r->cpus);
	fputs("</pre></div>", out);
}
