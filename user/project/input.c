// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The projection's input, assembled from the files: each unit's figures, the workers and their
 * placement, the runs' concurrency, the memory each worker adds to, the run-wide figures
 * (charge, scratch, device memory), and why a figure is missing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "common/grow.h"
#include "common/summary.h"
#include "common/unit_keys.h"
#include "files/units_file.h"
#include "common/text.h"
#include "project/project_internal.h"

static int input_grow(struct project_input *in, size_t want)
{
	double **arrays[] = { &in->wall_s, &in->cycle_s, &in->kept_bytes, &in->cpu_utilisation,
			      &in->peak_rss_bytes, &in->peak_charge_bytes, &in->output_bytes };

	long long **places[] = { &in->process, &in->rank };

	if (want <= in->cap)
		return 0;
	if (want < 2 * in->cap)
		want = 2 * in->cap;
	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++) {
		double *bigger = realloc(*arrays[a], (want ? want : 1) * sizeof(double));

		if (!bigger)
			return -1;
		*arrays[a] = bigger;
	}
	for (size_t a = 0; a < sizeof(places) / sizeof(places[0]); a++) {
		long long *bigger = realloc(*places[a], (want ? want : 1) * sizeof(long long));

		if (!bigger)
			return -1;
		*places[a] = bigger;
	}
	in->cap = want;
	return 0;
}

int um_project_input_reserve(struct project_input *in, size_t n)
{
	return input_grow(in, n);
}

/* One unit of a file as it ran: where it starts and ends, in which process, and its place
 * among the complete units (-1: cut short). */
struct file_unit {
	double start_s, end_s;
	double start_rss_bytes; /* NAN: not recorded */
	long long pid;
	size_t order; /* in the file */
	long long complete;
};

/* By process, then by start (or by place in the file, which is the order a process's units
 * ended in, when there are no start times: a process runs one unit at a time). */
static int by_pid_then_start(const void *a, const void *b)
{
	const struct file_unit *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	if (x->start_s != y->start_s)
		return (x->start_s > y->start_s) - (x->start_s < y->start_s);
	return (x->order > y->order) - (x->order < y->order);
}

struct edge {
	double at;
	int step; /* +1 a unit starts, -1 one ends */
};

/* By time, an end before a start at the same instant: units that touch are not at once. */
static int by_time_ends_first(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	return x->step - y->step;
}

/*
 * Units that ran at once: sweep the starts and ends, and find the most units that were running
 * for at least half the time any unit was (a pool of W is at W but for its first and last
 * moments; a serial program is at 1 even if two units touch).
 */
static void concurrency(struct project_input *in, const struct file_unit *t, size_t k)
{
	struct edge *e = malloc(2 * k * sizeof(*e));
	double *at_least = calloc(k + 2, sizeof(*at_least)), busy;
	size_t level = 0, i, c, n_edges;

	if (!e || !at_least)
		goto out;
	/* at_least[c]: first the time at exactly c units, then summed down into "c or more". A
	 * unit of no length (its wall lost to the precision of a far start) is at once with none:
	 * its end, sorted before its start, would take the count below 0 */
	for (i = 0, n_edges = 0; i < k; i++) {
		if (!(t[i].end_s > t[i].start_s))
			continue;
		e[n_edges++] = (struct edge){ t[i].start_s, 1 };
		e[n_edges++] = (struct edge){ t[i].end_s, -1 };
	}
	qsort(e, n_edges, sizeof(*e), by_time_ends_first);
	for (i = 0; i + 1 < n_edges; i++) {
		level += e[i].step; /* never below 0: every end follows its start */
		at_least[level] += e[i + 1].at - e[i].at;
	}
	for (c = k; c >= 1; c--)
		at_least[c] += at_least[c + 1];
	busy = at_least[1];
	for (c = k; c >= 1 && busy > 0; c--)
		if (at_least[c] >= 0.5 * busy) {
			if ((long long)c > in->workers_calibrated) {
				in->workers_calibrated = (long long)c;
				in->workers_share = at_least[c] / busy;
			}
			break;
		}
out:
	free(e);
	free(at_least);
}

/* bsearch over units sorted by process: is this one of pid's? */
static int pid_is(const void *key, const void *unit)
{
	long long pid = *(const long long *)key, of = ((const struct file_unit *)unit)->pid;

	return (pid > of) - (pid < of);
}

/*
 * What a process that runs units adds to: the memory (charge, or RSS) of the run just before the
 * first such process began, from the run's memory timeline. 0 when the command's own process
 * ran units (a new worker is then a whole new copy of it), or when the timeline cannot say:
 * the safe side, as each added worker is then given more.
 */
/* t: the file's units, sorted by process */
static void worker_base(struct project_input *in, const json_t *run, const struct file_unit *t,
			size_t k)
{
	const json_t *procs = json_object_get(run, UM_RUN_PER_PROCESS), *p;
	const json_t *tl = json_object_get(run, UM_RUN_MEMORY_TIMELINE);
	double first = INFINITY, charge = 0, rss = 0, t0, width;
	const char *keys[2] = { UM_TIMELINE_CHARGE_MIN_BYTES, UM_TIMELINE_RSS_MIN_BYTES };
	double *base[2] = { &charge, &rss };
	size_t i;

	json_array_foreach(procs, i, p) {
		long long pid = (long long)um_json_number(p, UM_PROCESS_PID, -1);
		double start = um_json_number(p, UM_PROCESS_START_NS, NAN) / 1e9;

		if (bsearch(&pid, t, k, sizeof(*t), pid_is) && start < first)
			first = i == 0 ? 0 : start; /* the first record is the command's own */
	}
	t0 = um_json_number(tl, UM_TIMELINE_START_NS, NAN) / 1e9;
	width = um_json_number(tl, UM_TIMELINE_BUCKET_NS, NAN) / 1e9;
	if (isfinite(first) && first > 0 && isfinite(t0) && width > 0) {
		for (int m = 0; m < 2; m++) {
			const json_t *values = json_object_get(tl, keys[m]);
			double b = floor((first - t0) / width);
			/* the lowest value of the bucket the process began in, or the last one before */
			for (long long at = b < (double)json_array_size(values) ? (long long)b
				       : (long long)json_array_size(values) - 1; at >= 0; at--)
				if (json_is_number(json_array_get(values, (size_t)at))) {
					*base[m] = json_number_value(json_array_get(values, (size_t)at));
					break;
				}
		}
	}
	if (in->worker_base_charge_bytes < 0 || charge < in->worker_base_charge_bytes)
		in->worker_base_charge_bytes = charge;
	if (in->worker_base_rss_bytes < 0 || rss < in->worker_base_rss_bytes)
		in->worker_base_rss_bytes = rss;
}

/*
 * Where a file's units ran: each complete unit's process and place in it, its time (its wall
 * plus the gap to the next unit of its process), the units that ran at once, and the task's
 * fixed part (before the first unit and after the last). Returns false when the units have no
 * start times: then only processes and places are known.
 */
static bool place_units(struct project_input *in, const struct um_read_unit *units, size_t n,
			const json_t *run, size_t first)
{
	size_t i, k = 0, c = first, start, end;
	struct file_unit *t = calloc(n ? n : 1, sizeof(*t));
	double wall_run = json_number_value(json_object_get(run, UM_RUN_WALL_S)), last_end = 0;
	bool timed = true;

	if (!t)
		return false;
	for (i = 0; i < n; i++) {
		const struct um_read_unit *u = &units[i];

		timed = timed && um_unit_is_number(u, UM_F_START_NS);
		t[k].start_s = um_unit_number(u, UM_F_START_NS, 0) / 1e9;
		t[k].end_s = t[k].start_s + um_unit_number(u, UM_F_WALL_S, 0);
		t[k].pid = um_unit_integer(u, UM_F_PID, -1);
		t[k].start_rss_bytes = um_unit_number(u, UM_F_START_RSS_BYTES, NAN);
		t[k].order = i;
		t[k].complete = um_unit_complete(u) ? (long long)c++ : -1;
		k++;
	}
	qsort(t, k, sizeof(*t), by_pid_then_start);
	for (start = 0; start < k; start = end) {
		long long id = (long long)in->n_processes++, rank = 0;

		for (end = start; end < k && t[end].pid == t[start].pid; end++) {
			long long at = t[end].complete;

			if (at < 0)
				continue;
			in->process[at] = t[start].pid < 0 ? -1 : id;
			in->rank[at] = rank++;
			if (t[start].pid >= 0 && end + 1 < k && t[end + 1].pid == t[start].pid)
				in->kept_bytes[at] = t[end + 1].start_rss_bytes - t[end].start_rss_bytes;
			if (timed && end + 1 < k && t[end + 1].pid == t[start].pid &&
			    t[end + 1].start_s > t[end].end_s)
				in->cycle_s[at] += t[end + 1].start_s - t[end].end_s;
		}
	}
	if (timed && run) {
		double first_start = k ? t[0].start_s : wall_run;

		for (i = 0; i < k; i++) {
			if (t[i].start_s < first_start)
				first_start = t[i].start_s;
			if (t[i].end_s > last_end)
				last_end = t[i].end_s;
		}
		double before = first_start;
		double after = k && wall_run > last_end ? wall_run - last_end : 0;

		if (before + after > in->fixed_s) {
			in->fixed_s = before + after;
			in->fixed_before_s = before;
			in->fixed_after_s = after;
		}
		worker_base(in, run, t, k);
	}
	if (timed && k)
		concurrency(in, t, k);
	free(t);
	return timed;
}

/* Why a file's charge figures cannot make --mem (first reason kept). */
static void charge_missing(struct project_input *in, const char *file, const json_t *run)
{
	const char *why =
	    json_string_value(json_object_get(json_object_get(run, UM_RUN_CHARGE), UM_CHARGE_NOTE));

	if (in->charge_unknown[0])
		return;
	snprintf(in->charge_unknown, sizeof(in->charge_unknown), "%s: %s", file,
		 why ? why : run ? "the manifest predates unitmeter's cgroup memory measurement"
			     : "its units carry no cgroup memory figures");
}

/*
 * Which directory a manifest counted tmp_output_bytes under; and, for a file whose units lack
 * the figure, why (first reason kept).
 */
static void tmp_dir_of(struct project_input *in, const char *file, const json_t *run,
		       bool units_lack)
{
	const json_t *dir = json_object_get(run, UM_RUN_TMP_DIR);
	const char *path = json_string_value(json_object_get(dir, UM_TMP_DIR_PATH));
	const char *why = json_string_value(json_object_get(dir, UM_TMP_DIR_NOTE));

	if (path && !in->tmp_dir[0])
		um_say(in->tmp_dir, sizeof(in->tmp_dir), "%s", path);
	else if (path && strcmp(path, in->tmp_dir))
		in->tmp_dirs_differ = true;
	if (!units_lack || in->tmp_unknown[0])
		return;
	um_say(in->tmp_unknown, sizeof(in->tmp_unknown), "%s: %s", file,
		    why ? why : run && !dir ? "the manifest predates unitmeter's count of node-local "
					      "writes (tmp_output_bytes)"
			        : "its units carry no tmp_output_bytes");
}

static bool run_figure_ok(const json_t *run, const char *key, double max)
{
	const json_t *v = json_object_get(run, key);
	double x = json_number_value(v);

	return !v || json_is_null(v) || (json_is_number(v) && x >= 0 && x <= max);
}

void um_project_input_init(struct project_input *in)
{
	memset(in, 0, sizeof(*in));
	in->fixed_s = -1;
	in->group_peak_charge_bytes = -1;
	in->worker_base_charge_bytes = -1;
	in->worker_base_rss_bytes = -1;
	in->run_gpu_device_peak_bytes = -1;
	in->gpu_context_max_bytes = -1;
}

/* A unit's device memory into the GPU figures (a unit that held none adds nothing). */
static void add_gpu(struct project_input *in, const struct um_read_unit *u)
{
	double peak = um_unit_number(u, UM_F_PEAK_GPU_DEVICE_MAX_BYTES, 0);
	double context = um_unit_number(u, UM_F_GPU_CONTEXT_BYTES, -1);
	long long devices = um_unit_integer(u, UM_F_GPU_DEVICES, -1);

	if (!(peak > 0 && peak < 4e18))
		return;
	if (context >= 0 && context < 4e18 && context > in->gpu_context_max_bytes)
		in->gpu_context_max_bytes = context;
	if (!in->gpu_units || peak < in->gpu_device_peak_min_bytes)
		in->gpu_device_peak_min_bytes = peak;
	if (peak > in->gpu_device_peak_max_bytes)
		in->gpu_device_peak_max_bytes = peak;
	in->gpu_units++;
	if (devices > 0 && devices < 1 << 20) {
		if (devices > in->gpu_devices_max)
			in->gpu_devices_max = devices;
	} else {
		in->gpu_units_device_unknown++;
	}
}

/* The run's largest peak on one device, from its peak_gpu_bytes_by_device. */
static void add_run_gpu(struct project_input *in, const json_t *run)
{
	const json_t *list = json_object_get(run, UM_RUN_PEAK_GPU_BY_DEVICE), *e;
	size_t i;

	json_array_foreach(list, i, e) {
		double v = um_json_number(e, UM_KEY_PEAK_BYTES, -1);

		if (v >= 0 && v < 4e18 && v > in->run_gpu_device_peak_bytes)
			in->run_gpu_device_peak_bytes = v;
	}
}

int um_project_add(struct project_input *in, const char *path, const struct um_read_unit *units,
		   size_t n, const json_t *run, char *err, size_t errlen)
{
	double walls = 0;
	size_t i, first = in->n, tmp_lacking = 0;

	*err = '\0';
	if (input_grow(in, in->n + n)) {
		snprintf(err, errlen, "out of memory reading %s", path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct um_read_unit *u = &units[i];
		double wall = um_unit_number(u, UM_F_WALL_S, 0);
		double cpu = um_unit_number(u, UM_F_CPU_S, 0);

		walls += wall;
		/* the seed's stream has no status: every unit it wrote returned */
		if (!um_unit_complete(u)) {
			in->n_incomplete++;
			continue;
		}
		in->wall_s[in->n] = wall;
		in->cycle_s[in->n] = wall;
		in->kept_bytes[in->n] = NAN;
		in->cpu_utilisation[in->n] = um_unit_is_number(u, UM_F_CPU_UTILISATION)
						     ? um_unit_number(u, UM_F_CPU_UTILISATION, 0)
						     : wall > 0 ? cpu / wall : 0;
		in->peak_rss_bytes[in->n] = um_unit_number(u, UM_F_PEAK_RSS_BYTES, 0);
		in->peak_charge_bytes[in->n] = um_unit_number(u, UM_F_PEAK_CHARGE_BYTES, -1);
		if (!um_unit_is_number(u, UM_F_PEAK_CHARGE_BYTES))
			charge_missing(in, path, run);
		in->output_bytes[in->n] = um_unit_number(u, UM_F_OUTPUT_BYTES, -1);
		if (um_unit_is_number(u, UM_F_TMP_OUTPUT_BYTES)) {
			double tmp = um_unit_number(u, UM_F_TMP_OUTPUT_BYTES, 0);

			in->tmp_units++;
			if (tmp > in->tmp_unit_max_bytes)
				in->tmp_unit_max_bytes = tmp;
		} else {
			tmp_lacking++;
		}
		add_gpu(in, u);
		in->n++;
	}
	if (run && (!run_figure_ok(run, UM_RUN_WALL_S, 1e9) ||
		    !run_figure_ok(run, UM_RUN_PEAK_RSS_BYTES, 4e18) ||
		    !run_figure_ok(run, UM_RUN_PEAK_CHARGE_BYTES, 4e18))) {
		snprintf(err, errlen, "%s: the manifest's \"run\" has a wall_s, peak_rss_bytes or "
			 "peak_charge_bytes outside what a run can have", path);
		return -1;
	}
	if (!place_units(in, units, n, run, first) && run &&
	    json_is_number(json_object_get(run, UM_RUN_WALL_S))) {
		/* no start times: all the time outside the units is the fixed part */
		double outside = json_number_value(json_object_get(run, UM_RUN_WALL_S)) - walls;

		in->fixed_from_totals = true;
		if (outside < 0)
			outside = 0;
		if (outside > in->fixed_s)
			in->fixed_s = outside;
	}
	if (run && json_number_value(json_object_get(run, UM_RUN_PEAK_RSS_BYTES)) >
			   in->group_peak_rss_bytes)
		in->group_peak_rss_bytes = json_number_value(json_object_get(run, UM_RUN_PEAK_RSS_BYTES));
	if (run && json_is_number(json_object_get(run, UM_RUN_PEAK_CHARGE_BYTES))) {
		double peak = json_number_value(json_object_get(run, UM_RUN_PEAK_CHARGE_BYTES));

		if (peak > in->group_peak_charge_bytes)
			in->group_peak_charge_bytes = peak;
	} else if (run) {
		charge_missing(in, path, run);
	}
	if (run)
		add_run_gpu(in, run);
	tmp_dir_of(in, path, run, tmp_lacking > 0);
	in->n_files++;
	return 0;
}

/* One file's units, compact: a few thousand in a task's stream, dropped once added. */
struct unit_list {
	struct um_read_unit *at;
	size_t n, cap;
};

static int keep_unit(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t)
{
	struct unit_list *l = ctx;
	struct um_read_unit *bigger;

	(void)t;
	bigger = um_grow(l->at, &l->cap, l->n + 1, sizeof(*l->at), 1024);
	if (!bigger)
		return -1;
	l->at = bigger;
	l->at[l->n++] = *u;
	return 0;
}

int um_project_load(const char *const *files, size_t n_files, struct project_input *in,
		    char *err, size_t errlen)
{
	struct unit_list l = { 0 };
	int rc = 0;

	um_project_input_init(in);
	for (size_t f = 0; f < n_files && !rc; f++) {
		json_t *doc = NULL;

		l.n = 0;
		rc = um_read_units(files[f], keep_unit, &l, &doc, err, errlen);
		if (!rc) {
			json_t *run = json_object_get(doc, UM_MANIFEST_RUN);

			rc = um_project_add(in, files[f], l.at, l.n, json_is_object(run) ? run : NULL,
					    err, errlen);
		}
		json_decref(doc);
	}
	free(l.at);
	return rc ? -1 : 0;
}

void um_project_input_free(struct project_input *in)
{
	free(in->wall_s);
	free(in->cycle_s);
	free(in->kept_bytes);
	free(in->peak_charge_bytes);
	free(in->cpu_utilisation);
	free(in->peak_rss_bytes);
	free(in->output_bytes);
	free(in->process);
	free(in->rank);
	memset(in, 0, sizeof(*in));
}
