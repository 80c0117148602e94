// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The HTML report's charts (see svg.h). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "files/summary.h"
#include "common/unit_keys.h"
#include "files/units_file.h"
#include "page/svg.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

void svg_format_value(char *buf, size_t len, double v, enum value_kind kind)
{
	/* an axis's origin, and no "-0" from a tick computed as -1e-17 */
	if (fabs(v) < 1e-12) {
		snprintf(buf, len, "0");
		return;
	}
	switch (kind) {
	case VALUE_SECONDS:
		if (v < 1e-3)
			snprintf(buf, len, "%.0f us", v * 1e6);
		else if (v < 1)
			snprintf(buf, len, "%.3g ms", v * 1e3);
		else if (v < 120)
			snprintf(buf, len, "%.3g s", v);
		else if (v < 7200)
			snprintf(buf, len, "%.1f min", v / 60);
		else
			snprintf(buf, len, "%.1f h", v / 3600);
		break;
	case VALUE_BYTES:
		if (v < 1024)
			snprintf(buf, len, "%.0f B", v);
		else if (v < 1024 * 1024)
			snprintf(buf, len, "%.1f KiB", v / 1024);
		else if (v < GIB)
			snprintf(buf, len, "%.1f MiB", v / MIB);
		else
			snprintf(buf, len, "%.2f GiB", v / GIB);
		break;
	case VALUE_CORES:
		snprintf(buf, len, "%.2f cores", v);
		break;
	}
}

void markup_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

/* A round step for about `target` ticks over range: 1, 2 or 5 times a power of ten. */
static double tick_step(double range, int target)
{
	double raw = range / target, mag, f;

	if (!(raw > 0))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* Ticks in the unit a person reads: seconds, or bytes in MiB or GiB steps. */
static double axis_step(double hi, enum value_kind kind, int target)
{
	if (kind == VALUE_BYTES) {
		double scale = hi >= 4 * GIB ? GIB : hi >= 4 * MIB ? MIB : 1024;

		return tick_step(hi / scale, target) * scale;
	}
	return tick_step(hi, target);
}

/* The chart area of every plot: its own coordinates, scaled by the viewBox. */
struct plot {
	double left, top, width, height;
	double x_lo, x_hi, y_lo, y_hi;
};

static double px(const struct plot *p, double x)
{
	return p->left + (p->x_hi > p->x_lo ? (x - p->x_lo) / (p->x_hi - p->x_lo) : 0) * p->width;
}

static double py(const struct plot *p, double y)
{
	return p->top + p->height -
	       (p->y_hi > p->y_lo ? (y - p->y_lo) / (p->y_hi - p->y_lo) : 0) * p->height;
}

static void x_axis(FILE *out, const struct plot *p, enum value_kind kind)
{
	double step = axis_step(p->x_hi - p->x_lo, kind, 6), y = p->top + p->height;
	char label[48];

	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", p->left,
		y, p->left + p->width, y);
	for (double v = ceil(p->x_lo / step) * step; v <= p->x_hi + step * 1e-9; v += step) {
		if (fabs(v) < step * 1e-9)
			v = 0;
		svg_format_value(label, sizeof(label), v, kind);
		fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			     "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
			px(p, v), y, px(p, v), y + 4, px(p, v), y + 16, label);
	}
}

static void y_axis(FILE *out, const struct plot *p, enum value_kind kind)
{
	double step = axis_step(p->y_hi - p->y_lo, kind, 4);
	char label[48];

	for (double v = ceil(p->y_lo / step) * step; v <= p->y_hi + step * 1e-9; v += step) {
		svg_format_value(label, sizeof(label), v, kind);
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			     "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			p->left, py(p, v), p->left + p->width, py(p, v), p->left - 6, py(p, v) + 4,
			label);
	}
}

#define DIST_BINS 30

/* A mark's label beside its line, on the left of it near the right edge. */
static bool label_left(const struct plot *p, double x)
{
	return px(p, x) > p->left + 0.85 * p->width;
}

static double label_x(const struct plot *p, double x)
{
	return px(p, x) + (label_left(p, x) ? -3 : 3);
}

static const char *label_anchor(const struct plot *p, double x)
{
	return label_left(p, x) ? "end" : "start";
}

static void stat_item(FILE *out, const char *name, double v, enum value_kind kind)
{
	char text[48];

	svg_format_value(text, sizeof(text), v, kind);
	fprintf(out, "<span class=\"stat\" data-stat=\"%s\" data-value=\"%.17g\">%s %s</span> ", name, v,
		name, text);
}

void svg_distribution(FILE *out, const char *key, const char *label, const double *values, size_t n,
		      enum value_kind kind)
{
	struct plot p = { .left = 56, .top = 10, .width = 390, .height = 130 };
	size_t counts[DIST_BINS] = { 0 }, top = 0;
	double *v, lo, hi, width, median, p90;
	char a[48], b[48];

	fprintf(out, "<figure class=\"dist\" id=\"dist-%s\" data-key=\"%s\" data-n=\"%zu\">"
		     "<figcaption>%s</figcaption>", key, key, n, label);
	if (!n) {
		fputs("<p class=\"why\">No unit has this figure.</p></figure>\n", out);
		return;
	}
	v = malloc(n * sizeof(*v));
	if (!v) {
		fputs("<p class=\"why\">Out of memory.</p></figure>\n", out);
		return;
	}
	memcpy(v, values, n * sizeof(*v));
	median = um_percentile(v, n, 50); /* sorts v */
	p90 = um_percentile(v, n, 90);
	lo = v[0];
	hi = v[n - 1];
	/* from zero, as a person reads a cost; a flat distribution gets a bin of its own width */
	lo = lo > 0 ? 0 : lo;
	if (hi <= lo)
		hi = lo + (hi > 0 ? hi : 1);
	width = (hi - lo) / DIST_BINS;
	for (size_t i = 0; i < n; i++) {
		size_t bin = (size_t)((v[i] - lo) / width);

		counts[bin < DIST_BINS ? bin : DIST_BINS - 1]++;
	}
	for (size_t i = 0; i < DIST_BINS; i++)
		top = counts[i] > top ? counts[i] : top;
	p.x_lo = lo;
	p.x_hi = hi;
	p.y_hi = (double)top;
	fprintf(out, "<svg viewBox=\"0 0 460 170\" role=\"img\" aria-label=\"%s\">", label);
	x_axis(out, &p, kind);
	for (size_t i = 0; i < DIST_BINS; i++) {
		double x0 = px(&p, lo + i * width), x1 = px(&p, lo + (i + 1) * width);

		if (!counts[i])
			continue;
		svg_format_value(a, sizeof(a), lo + i * width, kind);
		svg_format_value(b, sizeof(b), lo + (i + 1) * width, kind);
		fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			     "data-count=\"%zu\"><title>%s to %s: %zu unit%s</title></rect>",
			x0 + 0.5, py(&p, counts[i]), x1 - x0 - 1 > 1 ? x1 - x0 - 1 : 1,
			p.top + p.height - py(&p, counts[i]), counts[i], a, b, counts[i],
			counts[i] == 1 ? "" : "s");
	}
	svg_format_value(a, sizeof(a), median, kind);
	svg_format_value(b, sizeof(b), p90, kind);
	fprintf(out, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
		     "<title>median %s</title></line>"
		     "<line class=\"p90\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>p90 %s</title></line>"
		     "<text class=\"mark\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">median</text>"
		     "<text class=\"mark p90\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">p90</text></svg>",
		px(&p, median), p.top, px(&p, median), p.top + p.height, a, px(&p, p90), p.top,
		px(&p, p90), p.top + p.height, b, label_x(&p, median), p.top + 9,
		label_anchor(&p, median), label_x(&p, p90), p.top + 20, label_anchor(&p, p90));
	fputs("<p class=\"stats\">", out);
	fprintf(out, "<span class=\"stat\" data-stat=\"n\" data-value=\"%zu\">%zu units</span> ", n, n);
	stat_item(out, "median", median, kind);
	stat_item(out, "p90", p90, kind);
	stat_item(out, "max", v[n - 1], kind);
	fputs("</p></figure>\n", out);
	free(v);
}

/* --- processes and units over time ------------------------------------------------------ */

#define LANE_HEIGHT 16
#define LANE_LABEL 150
#define MAX_LANES 300
/* Units drawn one by one up to this many; more: a lane's units closer than half a pixel are
 * one bar, so the page stays small and quick. */
#define MAX_UNIT_BARS 4000

struct lane {
	const json_t *proc;
	long long pid, ppid;
	double start_s, end_s;
	int row; /* -1: not drawn */
};

static int by_start(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	return (x->start_s > y->start_s) - (x->start_s < y->start_s);
}

/* Rows in tree order: each process right below its parent's subtree's earlier children. */
static void place(struct lane *lanes, size_t n, size_t at, int *next_row)
{
	if (*next_row >= MAX_LANES)
		return;
	lanes[at].row = (*next_row)++;
	for (size_t i = 0; i < n; i++)
		if (lanes[i].row < 0 && lanes[i].ppid == lanes[at].pid)
			place(lanes, n, i, next_row);
}

/* Lanes by pid, for finding a parent among thousands of processes (a fork storm). */
struct pid_at {
	long long pid;
	size_t at;
};

static int by_pid(const void *a, const void *b)
{
	const struct pid_at *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct lane *lane_of(struct lane *lanes, const struct pid_at *index, size_t n, long long pid)
{
	struct pid_at key = { .pid = pid };
	const struct pid_at *hit = n ? bsearch(&key, index, n, sizeof(*index), by_pid) : NULL;

	return hit ? &lanes[hit->at] : NULL;
}

/* A unit on the timeline: the units sorted by process, then start, once for every lane. */
struct unit_span {
	long long pid;
	double start_s, end_s;
	const struct um_read_unit *unit;
	const char *spec;
};

static void unit_bar(FILE *out, const struct plot *p, int row, double s0, double s1, size_t count,
		     const struct unit_span *span)
{
	const struct um_read_unit *unit = span->unit;
	char wall[48], peak[48];
	double y = p->top + row * LANE_HEIGHT + 3, w = px(p, s1) - px(p, s0);

	fprintf(out, "<rect class=\"unit\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		     "data-units=\"%zu\"><title>",
		px(p, s0), y, w > 0.6 ? w : 0.6, LANE_HEIGHT - 6, count);
	if (count == 1) {
		svg_format_value(wall, sizeof(wall), um_unit_number(unit, UM_F_WALL_S, 0),
				 VALUE_SECONDS);
		svg_format_value(peak, sizeof(peak), um_unit_number(unit, UM_F_PEAK_RSS_BYTES, 0),
				 VALUE_BYTES);
		fprintf(out, "unit %lld (", um_unit_integer(unit, UM_F_INDEX, -1));
		markup_text(out, span->spec);
		fprintf(out, "): wall %s, %.2f cores, peak RSS %s, at %.3f s", wall,
			um_unit_number(unit, UM_F_CPU_UTILISATION, 0), peak, s0);
	} else {
		fprintf(out, "%zu units from %.3f s to %.3f s", count, s0, s1);
	}
	fputs("</title></rect>", out);
}

static int by_pid_start(const void *a, const void *b)
{
	const struct unit_span *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->start_s > y->start_s) - (x->start_s < y->start_s);
}

/* The units with a start time, sorted; *n gets their number. NULL: none (or no memory). */
static struct unit_span *unit_spans(const struct um_read_unit *units,
				     const struct page_unit_text *text, size_t n_units,
				     const char *const *strings, size_t *n)
{
	struct unit_span *spans = malloc((n_units + 1) * sizeof(*spans));

	*n = 0;
	if (!spans)
		return NULL;
	for (size_t i = 0; i < n_units; i++) {
		const struct um_read_unit *u = &units[i];

		if (!um_unit_is_number(u, UM_F_START_NS))
			continue;
		spans[*n].pid = um_unit_integer(u, UM_F_PID, -1);
		spans[*n].start_s = um_unit_number(u, UM_F_START_NS, 0) / 1e9;
		spans[*n].end_s = spans[*n].start_s + um_unit_number(u, UM_F_WALL_S, 0);
		spans[*n].unit = u;
		spans[*n].spec = text[i].spec ? strings[text[i].spec - 1] : NULL;
		(*n)++;
	}
	qsort(spans, *n, sizeof(*spans), by_pid_start);
	return spans;
}

/* The units of one lane, in start order, merged where closer than half a pixel when many. */
static void lane_units(FILE *out, const struct plot *p, const struct lane *l,
		       const struct unit_span *spans, size_t n, bool merge)
{
	double gap = merge ? 0.5 * (p->x_hi - p->x_lo) / p->width : -1, s0 = 0, s1 = 0;
	const struct unit_span *first = NULL;
	size_t lo = 0, hi = n, count = 0;

	/* the first unit of this process */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (spans[mid].pid < l->pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && spans[i].pid == l->pid; i++) {
		if (count && spans[i].start_s - s1 <= gap) {
			s1 = spans[i].end_s > s1 ? spans[i].end_s : s1;
			count++;
			continue;
		}
		if (count)
			unit_bar(out, p, l->row, s0, s1, count, first);
		first = &spans[i];
		s0 = spans[i].start_s;
		s1 = spans[i].end_s;
		count = 1;
	}
	if (count)
		unit_bar(out, p, l->row, s0, s1, count, first);
}

static void lane_title(FILE *out, const struct lane *l)
{
	char cpu[48], peak[48];
	const json_t *exit_status = json_object_get(l->proc, UM_PROCESS_EXIT_STATUS);
	const json_t *signal = json_object_get(l->proc, UM_PROCESS_EXIT_SIGNAL);

	svg_format_value(cpu, sizeof(cpu), um_json_number(l->proc, UM_PROCESS_CPU_S, 0), VALUE_SECONDS);
	svg_format_value(peak, sizeof(peak), um_json_number(l->proc, UM_PROCESS_PEAK_RSS_BYTES, 0),
			 VALUE_BYTES);
	fprintf(out, "<title>pid %lld (", l->pid);
	markup_text(out, json_string_value(json_object_get(l->proc, UM_PROCESS_COMM)));
	fprintf(out, "), parent %lld: %.3f s to %.3f s, CPU %s, peak RSS %s, %lld units", l->ppid,
		l->start_s, l->end_s, cpu, peak, (long long)um_json_number(l->proc, UM_PROCESS_UNITS, 0));
	if (json_is_integer(signal))
		fprintf(out, ", killed by signal %lld", (long long)json_integer_value(signal));
	else if (json_is_integer(exit_status))
		fprintf(out, ", exit status %lld", (long long)json_integer_value(exit_status));
	else
		fputs(", still running when tracing stopped", out);
	fputs("</title>", out);
}

size_t svg_process_lanes(FILE *out, const json_t *per_process, const struct um_read_unit *units,
			 const struct page_unit_text *text, size_t n_units, const char *const *strings,
			 double end_s)
{
	size_t n = json_array_size(per_process), i, drawn = 0;
	struct plot p = { .left = LANE_LABEL, .top = 4, .width = 960 - LANE_LABEL - 10 };
	struct lane *lanes = calloc(n ? n : 1, sizeof(*lanes));
	struct pid_at *index = calloc(n ? n : 1, sizeof(*index));
	size_t n_spans = 0;
	struct unit_span *spans = unit_spans(units, text, n_units, strings, &n_spans);
	const json_t *proc;
	int rows = 0;

	if (!lanes || !spans || !index) {
		free(lanes);
		free(spans);
		free(index);
		return 0;
	}
	json_array_foreach(per_process, i, proc) {
		struct lane *l = &lanes[i];
		const json_t *end = json_object_get(proc, UM_PROCESS_END_NS);

		l->proc = proc;
		l->pid = (long long)um_json_number(proc, UM_PROCESS_PID, -1);
		l->ppid = (long long)um_json_number(proc, UM_PROCESS_PPID, -1);
		l->start_s = um_json_number(proc, UM_PROCESS_START_NS, 0) / 1e9;
		l->end_s = json_is_number(end) ? json_number_value(end) / 1e9 : end_s;
		if (l->end_s > end_s)
			end_s = l->end_s;
		l->row = -1;
	}
	qsort(lanes, n, sizeof(*lanes), by_start);
	for (i = 0; i < n; i++)
		index[i] = (struct pid_at){ .pid = lanes[i].pid, .at = i };
	qsort(index, n, sizeof(*index), by_pid);
	/* roots first (a parent not in the table), each followed by its descendants */
	for (i = 0; i < n; i++)
		if (lanes[i].row < 0 && !lane_of(lanes, index, n, lanes[i].ppid))
			place(lanes, n, i, &rows);
	for (i = 0; i < n; i++)
		if (lanes[i].row < 0)
			place(lanes, n, i, &rows);
	p.height = rows * LANE_HEIGHT;
	p.x_hi = end_s > 0 ? end_s : 1;
	fprintf(out, "<svg class=\"timeline\" viewBox=\"0 0 960 %.0f\" role=\"img\" "
		     "aria-label=\"processes and units over time\">", p.height + 30);
	for (i = 0; i < n; i++) {
		struct lane *l = &lanes[i], *parent;
		double y;

		if (l->row < 0)
			continue;
		y = p.top + l->row * LANE_HEIGHT;
		fprintf(out, "<g class=\"lane\" data-pid=\"%lld\" data-ppid=\"%lld\">"
			     "<text class=\"lane-label\" x=\"%d\" y=\"%.1f\">%lld ",
			l->pid, l->ppid, LANE_LABEL - 6, y + 12, l->pid);
		markup_text(out, json_string_value(json_object_get(l->proc, UM_PROCESS_COMM)));
		fprintf(out, "</text><rect class=\"proc\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\">",
			px(&p, l->start_s), y + 1, fmax(px(&p, l->end_s) - px(&p, l->start_s), 0.8),
			LANE_HEIGHT - 2);
		lane_title(out, l);
		fputs("</rect>", out);
		parent = lane_of(lanes, index, n, l->ppid);
		if (parent && parent->row >= 0)
			fprintf(out, "<line class=\"fork\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>",
				px(&p, l->start_s), p.top + parent->row * LANE_HEIGHT + LANE_HEIGHT / 2.0,
				px(&p, l->start_s), y + LANE_HEIGHT / 2.0);
		lane_units(out, &p, l, spans, n_spans, n_spans > MAX_UNIT_BARS);
		fputs("</g>", out);
		drawn++;
	}
	x_axis(out, &p, VALUE_SECONDS);
	fputs("</svg>\n", out);
	free(lanes);
	free(spans);
	free(index);
	return drawn;
}

/* --- memory over time ------------------------------------------------------------------- */

static bool bucket_value(const json_t *array, size_t i, double *v)
{
	const json_t *x = json_array_get(array, i);

	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

/* One figure's band, lowest to highest per bucket, as a path of steps; gaps (null) split it. */
static void band(FILE *out, const struct plot *p, const json_t *mins, const json_t *maxs, size_t n,
		 double start_s, double bucket_s, const char *cls)
{
	size_t i = 0;

	while (i < n) {
		double v;
		size_t j;

		if (!bucket_value(maxs, i, &v)) {
			i++;
			continue;
		}
		for (j = i; j < n && bucket_value(maxs, j, &v); j++)
			;
		fprintf(out, "<path class=\"%s\" d=\"M%.2f,%.1f", cls, px(p, start_s + i * bucket_s),
			py(p, 0));
		for (size_t k = i; k < j; k++) {
			bucket_value(maxs, k, &v);
			fprintf(out, "V%.1fH%.2f", py(p, v), px(p, start_s + (k + 1) * bucket_s));
		}
		for (size_t k = j; k-- > i;) {
			if (!bucket_value(mins, k, &v))
				v = 0;
			fprintf(out, "V%.1fH%.2f", py(p, v), px(p, start_s + k * bucket_s));
		}
		fputs("Z\"/>", out);
		i = j;
	}
}

void svg_memory_timeline(FILE *out, const json_t *tl, double end_s)
{
	const json_t *rss_min = json_object_get(tl, UM_TIMELINE_RSS_MIN_BYTES),
		     *rss_max = json_object_get(tl, UM_TIMELINE_RSS_MAX_BYTES),
		     *charge_min = json_object_get(tl, UM_TIMELINE_CHARGE_MIN_BYTES),
		     *charge_max = json_object_get(tl, UM_TIMELINE_CHARGE_MAX_BYTES);
	size_t n = json_array_size(rss_max), peak_at = 0;
	double start_s = um_json_number(tl, UM_TIMELINE_START_NS, 0) / 1e9,
	       bucket_s = um_json_number(tl, UM_TIMELINE_BUCKET_NS, 1) / 1e9;
	double top = 0, peak = -1, v;
	struct plot p = { .left = 70, .top = 10, .width = 870, .height = 220 };
	char a[48], b[48], c[48];

	for (size_t i = 0; i < n; i++) {
		if (bucket_value(rss_max, i, &v) && v > peak) {
			peak = v;
			peak_at = i;
		}
		if (bucket_value(charge_max, i, &v) && v > top)
			top = v;
	}
	top = fmax(top, peak);
	p.x_lo = fmin(0, start_s);
	p.x_hi = fmax(end_s, start_s + n * bucket_s);
	p.y_hi = top > 0 ? top * 1.08 : 1;
	fprintf(out, "<svg class=\"memory\" viewBox=\"0 0 960 260\" role=\"img\" aria-label=\"memory "
		     "over time\" data-buckets=\"%zu\" data-bucket-ns=\"%.0f\">", n, bucket_s * 1e9);
	y_axis(out, &p, VALUE_BYTES);
	x_axis(out, &p, VALUE_SECONDS);
	band(out, &p, rss_min, rss_max, n, start_s, bucket_s, "rss");
	if (json_is_array(charge_max))
		band(out, &p, charge_min, charge_max, n, start_s, bucket_s, "charge");
	/* hover: each bucket's figures */
	for (size_t i = 0; i < n; i++) {
		double lo = 0, hi = 0;

		if (!bucket_value(rss_max, i, &hi))
			continue;
		bucket_value(rss_min, i, &lo);
		svg_format_value(a, sizeof(a), lo, VALUE_BYTES);
		svg_format_value(b, sizeof(b), hi, VALUE_BYTES);
		fprintf(out, "<rect class=\"hover\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\">"
			     "<title>%.3f s to %.3f s: RSS %s to %s",
			px(&p, start_s + i * bucket_s), p.top,
			px(&p, start_s + (i + 1) * bucket_s) - px(&p, start_s + i * bucket_s), p.height,
			start_s + i * bucket_s, start_s + (i + 1) * bucket_s, a, b);
		if (bucket_value(charge_max, i, &hi)) {
			if (!bucket_value(charge_min, i, &lo))
				lo = hi;
			svg_format_value(a, sizeof(a), lo, VALUE_BYTES);
			svg_format_value(b, sizeof(b), hi, VALUE_BYTES);
			fprintf(out, "; charge %s to %s", a, b);
		}
		fputs("</title></rect>", out);
	}
	if (peak >= 0) {
		double x = px(&p, start_s + (peak_at + 0.5) * bucket_s);

		svg_format_value(c, sizeof(c), peak, VALUE_BYTES);
		fprintf(out, "<circle class=\"peak\" cx=\"%.2f\" cy=\"%.1f\" r=\"4\" data-value=\"%.0f\">"
			     "<title>peak RSS %s at %.3f s</title></circle>"
			     "<text class=\"mark\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"%s\">peak %s</text>",
			x, py(&p, peak), peak, c, start_s + (peak_at + 0.5) * bucket_s,
			x + (x > 700 ? -8 : 8), py(&p, peak) + 4, x > 700 ? "end" : "start", c);
	}
	fputs("</svg>\n", out);
}

size_t svg_gpu_units(FILE *out, const struct um_read_unit *units, size_t n, double start_s,
		     double end_s, double run_peak)
{
	struct plot p = { .left = 70, .top = 10, .width = 870, .height = 220 };
	double top = run_peak > 0 ? run_peak : 0;
	size_t drawn = 0;
	char a[48];

	for (size_t i = 0; i < n; i++) {
		double peak = um_unit_number(&units[i], UM_F_PEAK_GPU_BYTES, -1);
		double start = um_unit_number(&units[i], UM_F_START_NS, -1) / 1e9;
		double end = start + um_unit_number(&units[i], UM_F_WALL_S, 0);

		if (peak > top)
			top = peak;
		if (start >= 0 && end > end_s)
			end_s = end;
	}
	p.x_lo = fmin(0, start_s);
	p.x_hi = end_s > p.x_lo ? end_s : p.x_lo + 1;
	p.y_hi = top > 0 ? top * 1.08 : 1;
	fprintf(out, "<svg class=\"gpu\" viewBox=\"0 0 960 260\" role=\"img\" aria-label=\"device "
		     "memory of each unit over time\">");
	y_axis(out, &p, VALUE_BYTES);
	x_axis(out, &p, VALUE_SECONDS);
	for (size_t i = 0; i < n; i++) {
		double peak = um_unit_number(&units[i], UM_F_PEAK_GPU_BYTES, -1);
		double start = um_unit_number(&units[i], UM_F_START_NS, -1) / 1e9;
		double wall = um_unit_number(&units[i], UM_F_WALL_S, 0);

		/* a unit with no start time has no place on the axis; one with no call, no bar */
		if (!(peak >= 0) || !(start >= 0))
			continue;
		svg_format_value(a, sizeof(a), peak, VALUE_BYTES);
		/* at least a pixel wide: a 1 ms unit of a 10 min run still shows */
		fprintf(out, "<rect class=\"gpu-unit\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			     "height=\"%.1f\" data-value=\"%.0f\"><title>unit %lld, %.3f s to %.3f s: "
			     "device memory peak %s</title></rect>",
			px(&p, start), py(&p, peak), fmax(px(&p, start + wall) - px(&p, start), 1),
			py(&p, 0) - py(&p, peak), peak, um_unit_integer(&units[i], UM_F_INDEX, -1),
			start, start + wall, a);
		drawn++;
	}
	if (run_peak > 0) {
		svg_format_value(a, sizeof(a), run_peak, VALUE_BYTES);
		fprintf(out, "<line class=\"gpu-run-peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			     "y2=\"%.1f\" data-value=\"%.0f\"/><text class=\"mark\" x=\"%.1f\" "
			     "y=\"%.1f\" text-anchor=\"end\">run peak %s</text>",
			p.left, py(&p, run_peak), p.left + p.width, py(&p, run_peak), run_peak,
			p.left + p.width - 3, py(&p, run_peak) - 3, a);
	}
	fputs("</svg>\n", out);
	return drawn;
}
