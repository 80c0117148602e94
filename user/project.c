// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "project.h"
#include "summary.h"

#define MIB (1024.0 * 1024.0)
/* Below this many units a 90th percentile is one of the two largest values at best. */
#define MIN_UNITS_FOR_P90 5
/*
 * A unit at 1.03 cores is a one-core unit plus kernel work done on its behalf (page faults on
 * another CPU's clock, exit): asking for two cores for that would waste one per task.
 */
#define CPU_ROUND_SLACK 0.05

static void note(struct projection *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct projection *p, const char *fmt, ...)
{
	va_list ap;

	if (p->n_notes == UM_PROJECT_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->n_notes++], sizeof(p->notes[0]), fmt, ap);
	va_end(ap);
}

static double max_of(const double *v, size_t n)
{
	double m = v[0];

	for (size_t i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* um_percentile sorts its input: work on a copy so the caller's order stays. */
static double percentile_of(const double *v, size_t n, double q)
{
	double *copy = malloc(n * sizeof(*copy)), r;

	if (!copy)
		return max_of(v, n); /* the safe side of any percentile */
	memcpy(copy, v, n * sizeof(*copy));
	r = um_percentile(copy, n, q);
	free(copy);
	return r;
}

static long long ceil_div(long long a, long long b)
{
	return (a + b - 1) / b;
}

/* A figure past this is no request SLURM could take (or a long long could hold). */
#define FIGURE_MAX 1e15

/* Whole units of `unit` needed to hold x, never fewer than what x asks for; x / unit is
 * at most FIGURE_MAX (um_project checks first). */
static long long ceil_units(double x, double unit)
{
	double q = x / unit;
	long long r = (long long)q;

	return (double)r < q ? r + 1 : r;
}

static double outside_for(const struct project_input *in, long long units)
{
	double scaled;

	if (in->outside_s < 0)
		return 0;
	/* fixed set-up (loading data once) or per-unit work outside the function (making each
	 * unit's input): the calibration cannot tell which, so take the larger */
	scaled = (double)units * in->outside_per_unit_s;
	return scaled > in->outside_s ? scaled : in->outside_s;
}

static double task_time_s(const struct projection *p, const struct project_input *in,
			  const struct project_options *opt, long long units)
{
	return ((double)units * p->wall_unit_s + outside_for(in, units)) * opt->margin;
}

static long long whole_minutes(double seconds)
{
	long long m = ceil_units(seconds, 60.0);

	return m < 1 ? 1 : m;
}

int um_project(const struct project_input *in, const struct project_options *opt,
	       struct projection *p, char *err, size_t errlen)
{
	const char *stat;
	double mem_basis, out_max = -1, outside;
	long long n = opt->units_total;
	char limit[32], wanted[32];

	memset(p, 0, sizeof(*p));
	if (!in->n) {
		snprintf(err, errlen, "no complete units to project from%s: calibrate with "
			 "'unitmeter run --unit SPEC' until at least one unit has returned",
			 in->n_incomplete ? " (every unit was cut short)" : "");
		return -1;
	}
	if (n <= 0 || opt->margin < 1 || !isfinite(opt->margin)) {
		snprintf(err, errlen, "--units must be positive and --margin at least 1");
		return -1;
	}
	p->used_max = opt->time_max || in->n < MIN_UNITS_FOR_P90;
	stat = p->used_max ? "max" : "p90";
	p->wall_median_s = percentile_of(in->wall_s, in->n, 50);
	p->wall_max_s = max_of(in->wall_s, in->n);
	p->wall_unit_s = p->used_max ? p->wall_max_s : percentile_of(in->wall_s, in->n, 90);
	p->peak_unit_bytes = max_of(in->peak_rss_bytes, in->n);
	p->peak_median_bytes = percentile_of(in->peak_rss_bytes, in->n, 50);
	p->cpu_utilisation_unit = p->used_max ? max_of(in->cpu_utilisation, in->n)
					      : percentile_of(in->cpu_utilisation, in->n, 90);
	for (size_t i = 0; i < in->n; i++)
		if (in->output_bytes[i] >= 0 && in->output_bytes[i] > out_max)
			out_max = in->output_bytes[i];
	p->output_unit_bytes = out_max;

	/* units per task and tasks */
	if (opt->tasks > 0) {
		long long k = opt->tasks > n ? n : opt->tasks;

		p->units_per_task = ceil_div(n, k);
	} else if (opt->units_per_task > 0) {
		p->units_per_task = opt->units_per_task > n ? n : opt->units_per_task;
	} else {
		p->units_per_task = n;
	}
	p->tasks = ceil_div(n, p->units_per_task);
	if (opt->tasks > 0 && p->tasks != opt->tasks)
		note(p, "%lld tasks asked for %lld units: %lld tasks of %lld units cover them, so the "
		     "array has %lld", opt->tasks, n, p->tasks, p->units_per_task, p->tasks);

	p->time_s = task_time_s(p, in, opt, p->units_per_task);
	if (!(p->time_s / 60 < FIGURE_MAX) ||
	    !((double)p->units_per_task * (out_max > 0 ? out_max : 0) * opt->margin / MIB < FIGURE_MAX)) {
		snprintf(err, errlen, "a task of %lld units would need %.3g s or write %.3g bytes: "
			 "beyond any SLURM request; use more tasks", p->units_per_task, p->time_s,
			 (double)p->units_per_task * out_max);
		return -1;
	}
	p->time_min = whole_minutes(p->time_s);
	if (opt->max_time_s > 0 && (double)p->time_min * 60 > opt->max_time_s) {
		long long m = p->units_per_task;

		long long lo = 0, hi = m; /* the task's time grows with m: the largest m that fits */

		while (lo < hi) {
			long long mid = lo + (hi - lo + 1) / 2;

			if ((double)whole_minutes(task_time_s(p, in, opt, mid)) * 60 <= opt->max_time_s)
				lo = mid;
			else
				hi = mid - 1;
		}
		m = lo;
		um_format_slurm_minutes((long long)(opt->max_time_s / 60), limit, sizeof(limit));
		if (m == 0) {
			um_format_slurm_minutes(whole_minutes(task_time_s(p, in, opt, 1)), wanted,
						sizeof(wanted));
			snprintf(err, errlen, "one unit alone needs %s (%s wall %.3f s x %.2f margin, "
				 "in whole minutes), more than --max-time %s: no split fits", wanted,
				 stat, p->wall_unit_s, opt->margin, limit);
			return -1;
		}
		um_format_slurm_minutes(p->time_min, wanted, sizeof(wanted));
		p->split = true;
		p->units_per_task = m;
		p->tasks = ceil_div(n, m);
		p->time_s = task_time_s(p, in, opt, m);
		p->time_min = whole_minutes(p->time_s);
		note(p, "split: one task would need %s, past --max-time %s; %lld units now run in "
		     "%lld tasks of at most %lld", wanted, limit, n, p->tasks, m);
	}
	outside = in->outside_s < 0 ? -1 : outside_for(in, p->units_per_task);
	p->outside_s = outside;

	mem_basis = p->peak_unit_bytes;
	if (in->group_peak_rss_bytes > mem_basis)
		mem_basis = in->group_peak_rss_bytes;
	p->mem_mib = ceil_units(mem_basis * opt->margin, MIB);
	if (p->mem_mib < 1)
		p->mem_mib = 1;
	p->cpus = ceil_units(p->cpu_utilisation_unit - CPU_ROUND_SLACK, 1.0);
	if (p->cpus < 1)
		p->cpus = 1;
	p->tmp_mib = out_max > 0 ? ceil_units((double)p->units_per_task * out_max * opt->margin, MIB)
				 : 0;

	/* how each figure came about, one line each */
	if (outside >= 0)
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "%lld units x %s wall %.3f s + %.2f s outside units = %.1f s, x %.2f margin "
			 "= %.1f s, in whole minutes", p->units_per_task, stat, p->wall_unit_s,
			 outside, (double)p->units_per_task * p->wall_unit_s + outside, opt->margin,
			 p->time_s);
	else
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "%lld units x %s wall %.3f s = %.1f s, x %.2f margin = %.1f s, in whole "
			 "minutes", p->units_per_task, stat, p->wall_unit_s,
			 (double)p->units_per_task * p->wall_unit_s, opt->margin, p->time_s);
	if (in->group_peak_rss_bytes > p->peak_unit_bytes)
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "whole-run peak %.1f MiB (above the units' max %.1f MiB) x %.2f margin = "
			 "%.1f MiB", mem_basis / MIB, p->peak_unit_bytes / MIB, opt->margin,
			 mem_basis * opt->margin / MIB);
	else
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "max peak %.1f MiB over %zu units x %.2f margin = %.1f MiB", mem_basis / MIB,
			 in->n, opt->margin, mem_basis * opt->margin / MIB);
	snprintf(p->derivation[2], sizeof(p->derivation[2]),
		 "%s CPU utilisation %.2f cores over %zu units, rounded up (%.2f core of slack), "
		 "at least 1", stat, p->cpu_utilisation_unit, in->n, CPU_ROUND_SLACK);
	if (out_max >= MIB)
		snprintf(p->derivation[3], sizeof(p->derivation[3]),
			 "%lld units x max %.2f MiB written per unit x %.2f margin",
			 p->units_per_task, out_max / MIB, opt->margin);
	else if (out_max > 0)
		snprintf(p->derivation[3], sizeof(p->derivation[3]),
			 "%lld units x max %.0f bytes written per unit x %.2f margin, in whole MiB",
			 p->units_per_task, out_max, opt->margin);
	else
		snprintf(p->derivation[3], sizeof(p->derivation[3]), "%s",
			 out_max == 0 ? "the units wrote nothing to files: no --tmp"
				      : "bytes written were not recorded: no --tmp");
	snprintf(p->derivation[4], sizeof(p->derivation[4]),
		 "task $SLURM_ARRAY_TASK_ID runs units [ID*%lld, ID*%lld+%lld) of %lld",
		 p->units_per_task, p->units_per_task, p->units_per_task, n);

	/* what the calibration cannot tell */
	note(p, "calibrated on %zu complete unit%s from %zu file%s: wall median %.3f s, max %.3f s; "
	     "peak median %.1f MiB, max %.1f MiB", in->n, in->n == 1 ? "" : "s", in->n_files,
	     in->n_files == 1 ? "" : "s", p->wall_median_s, p->wall_max_s,
	     p->peak_median_bytes / MIB, p->peak_unit_bytes / MIB);
	if (in->n_incomplete)
		note(p, "%zu unit%s cut short (exit, kill or exec inside the unit) left out",
		     in->n_incomplete, in->n_incomplete == 1 ? "" : "s");
	if (!opt->time_max && in->n < MIN_UNITS_FOR_P90)
		note(p, "only %zu unit%s measured: too few to trust a p90, so the max is used; "
		     "calibrate on %d or more", in->n, in->n == 1 ? "" : "s", MIN_UNITS_FOR_P90);
	if (p->wall_max_s > 2 * p->wall_median_s && !p->used_max)
		note(p, "unit wall times vary (max %.1fx the median): a task of slow units can pass "
		     "--time; consider --time-stat max or a larger --margin",
		     p->wall_max_s / p->wall_median_s);
	if (in->outside_s < 0)
		note(p, "time outside the units (start-up, loading) is unknown from units streams: "
		     "give the run manifest to count it");
	note(p, "--mem is enforced against the job's memory charge (cgroup), which is RSS plus the "
	     "page cache of files the job reads and writes, not RSS alone; the %.2f margin adds "
	     "%.0f MiB over the measured peak%s", opt->margin,
	     mem_basis * (opt->margin - 1) / MIB,
	     p->tmp_mib ? ", a task's writes included there too" : "");
	return 0;
}

double um_parse_slurm_time(const char *text)
{
	long long f[4] = { 0 }, days = 0;
	const char *s = text, *dash = strchr(text, '-');
	int nf = 0;
	char *end;

	if (!*s)
		return -1;
	if (dash) {
		if (dash == s || *s == '-')
			return -1;
		errno = 0;
		days = strtoll(s, &end, 10);
		if (errno || end != dash || days < 0 || days > 100000000LL)
			return -1;
		s = dash + 1;
	}
	for (;;) {
		if (nf == 3 || *s < '0' || *s > '9')
			return -1;
		errno = 0;
		f[nf++] = strtoll(s, &end, 10);
		if (errno || f[nf - 1] < 0 || f[nf - 1] > 100000000LL)
			return -1;
		if (*end == '\0')
			break;
		if (*end != ':')
			return -1;
		s = end + 1;
	}
	if (dash) /* days-hours[:minutes[:seconds]] */
		return (double)(((days * 24 + f[0]) * 60 + f[1]) * 60 + f[2]);
	switch (nf) {
	case 1: /* minutes */
		return (double)(f[0] * 60);
	case 2: /* minutes:seconds */
		return (double)(f[0] * 60 + f[1]);
	default: /* hours:minutes:seconds */
		return (double)((f[0] * 60 + f[1]) * 60 + f[2]);
	}
}

void um_format_slurm_minutes(long long minutes, char *buf, size_t len)
{
	long long days = minutes / (24 * 60), rest = minutes % (24 * 60);

	if (days)
		snprintf(buf, len, "%lld-%02lld:%02lld:00", days, rest / 60, rest % 60);
	else
		snprintf(buf, len, "%02lld:%02lld:00", rest / 60, rest % 60);
}

void um_print_sbatch(FILE *out, const struct projection *p, const struct project_options *opt,
		     const char *const *files, size_t n_files)
{
	char time[32];

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	fprintf(out, "#!/bin/bash\n");
	fprintf(out, "# unitmeter project: %lld units in %lld array task%s of %lld units, from",
		opt->units_total, p->tasks, p->tasks == 1 ? "" : "s", p->units_per_task);
	for (size_t i = 0; i < n_files; i++)
		fprintf(out, " %s", files[i]);
	/* comments on lines of their own: sbatch reads only the option on an #SBATCH line */
	fprintf(out, "\n# --time: %s\n#SBATCH --time=%s\n", p->derivation[0], time);
	fprintf(out, "# --mem: %s\n#SBATCH --mem=%lldM\n", p->derivation[1], p->mem_mib);
	fprintf(out, "# --cpus-per-task: %s\n#SBATCH --cpus-per-task=%lld\n", p->derivation[2],
		p->cpus);
	if (p->tmp_mib)
		fprintf(out, "# --tmp: %s\n#SBATCH --tmp=%lldM\n", p->derivation[3], p->tmp_mib);
	else
		fprintf(out, "# --tmp: %s\n", p->derivation[3]);
	fprintf(out, "# --array: %s\n#SBATCH --array=0-%lld\n", p->derivation[4], p->tasks - 1);
	if (opt->partition)
		fprintf(out, "#SBATCH --partition=%s\n", opt->partition);
	for (size_t i = 0; i < p->n_notes; i++)
		fprintf(out, "# note: %s\n", p->notes[i]);
}

json_t *um_projection_json(const struct projection *p, const struct project_input *in,
			   const struct project_options *opt, const char *const *files,
			   size_t n_files)
{
	json_t *root = json_object(), *inputs = json_object(), *unit = json_object();
	json_t *req = json_object(), *deriv = json_object(), *notes = json_array(), *names;
	char time[32];

	names = json_array();
	for (size_t i = 0; i < n_files; i++)
		json_array_append_new(names, json_string(files[i]));
	json_object_set_new(inputs, "files", names);
	json_object_set_new(inputs, "units_calibrated", json_integer((json_int_t)in->n));
	json_object_set_new(inputs, "units_incomplete", json_integer((json_int_t)in->n_incomplete));
	json_object_set_new(inputs, "units_total", json_integer(opt->units_total));
	json_object_set_new(inputs, "tasks_asked", opt->tasks ? json_integer(opt->tasks) : json_null());
	json_object_set_new(inputs, "units_per_task_asked",
			    opt->units_per_task ? json_integer(opt->units_per_task) : json_null());
	json_object_set_new(inputs, "margin", json_real(opt->margin));
	json_object_set_new(inputs, "time_stat", json_string(opt->time_max ? "max" : "p90"));
	json_object_set_new(inputs, "max_time_s",
			    opt->max_time_s > 0 ? json_real(opt->max_time_s) : json_null());

	json_object_set_new(unit, "stat_used", json_string(p->used_max ? "max" : "p90"));
	json_object_set_new(unit, "wall_s", json_real(p->wall_unit_s));
	json_object_set_new(unit, "wall_s_median", json_real(p->wall_median_s));
	json_object_set_new(unit, "wall_s_max", json_real(p->wall_max_s));
	json_object_set_new(unit, "peak_rss_bytes_max", json_integer((json_int_t)p->peak_unit_bytes));
	json_object_set_new(unit, "peak_rss_bytes_median",
			    json_integer((json_int_t)p->peak_median_bytes));
	json_object_set_new(unit, "run_peak_rss_bytes",
			    in->group_peak_rss_bytes > 0
				    ? json_integer((json_int_t)in->group_peak_rss_bytes)
				    : json_null());
	json_object_set_new(unit, "cpu_utilisation", json_real(p->cpu_utilisation_unit));
	json_object_set_new(unit, "output_bytes_max",
			    p->output_unit_bytes >= 0 ? json_integer((json_int_t)p->output_unit_bytes)
						      : json_null());
	json_object_set_new(unit, "outside_units_s",
			    p->outside_s >= 0 ? json_real(p->outside_s) : json_null());

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	json_object_set_new(req, "time", json_string(time));
	json_object_set_new(req, "time_minutes", json_integer(p->time_min));
	json_object_set_new(req, "time_s_projected", json_real(p->time_s));
	json_object_set_new(req, "mem_mib", json_integer(p->mem_mib));
	json_object_set_new(req, "cpus_per_task", json_integer(p->cpus));
	json_object_set_new(req, "tmp_mib", p->tmp_mib ? json_integer(p->tmp_mib) : json_null());
	json_object_set_new(req, "tasks", json_integer(p->tasks));
	json_object_set_new(req, "units_per_task", json_integer(p->units_per_task));
	json_object_set_new(req, "array", json_sprintf("0-%lld", p->tasks - 1));
	json_object_set_new(req, "partition", opt->partition ? json_string(opt->partition) : json_null());
	json_object_set_new(req, "split_for_max_time", json_boolean(p->split));

	json_object_set_new(deriv, "time", json_string(p->derivation[0]));
	json_object_set_new(deriv, "mem", json_string(p->derivation[1]));
	json_object_set_new(deriv, "cpus_per_task", json_string(p->derivation[2]));
	json_object_set_new(deriv, "tmp", json_string(p->derivation[3]));
	json_object_set_new(deriv, "array", json_string(p->derivation[4]));
	for (size_t i = 0; i < p->n_notes; i++)
		json_array_append_new(notes, json_string(p->notes[i]));

	json_object_set_new(root, "inputs", inputs);
	json_object_set_new(root, "per_unit", unit);
	json_object_set_new(root, "request", req);
	json_object_set_new(root, "derivation", deriv);
	json_object_set_new(root, "notes", notes);
	return root;
}

static int input_grow(struct project_input *in, size_t want)
{
	double **arrays[] = { &in->wall_s, &in->cpu_utilisation, &in->peak_rss_bytes,
			      &in->output_bytes };

	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++) {
		double *bigger = realloc(*arrays[a], (want ? want : 1) * sizeof(double));

		if (!bigger)
			return -1;
		*arrays[a] = bigger;
	}
	return 0;
}

/* A figure of a manifest's "run": absent, null, or a number in 0..max. */
static bool run_figure_ok(const json_t *run, const char *key, double max)
{
	const json_t *v = json_object_get(run, key);
	double x = json_number_value(v);

	return !v || json_is_null(v) || (json_is_number(v) && x >= 0 && x <= max);
}

int um_project_load(const char *const *files, size_t n_files, struct project_input *in,
		    char *err, size_t errlen)
{
	memset(in, 0, sizeof(*in));
	*err = '\0';
	in->outside_s = -1;
	in->outside_per_unit_s = -1;
	for (size_t f = 0; f < n_files; f++) {
		json_t *units = json_array(), *run = NULL, *u;
		double walls = 0;
		size_t i;

		if (um_load_units_run(files[f], units, &run, err, errlen) ||
		    input_grow(in, in->n + json_array_size(units))) {
			if (!*err)
				snprintf(err, errlen, "out of memory reading %s", files[f]);
			json_decref(units);
			json_decref(run);
			return -1;
		}
		json_array_foreach(units, i, u) {
			const char *status = json_string_value(json_object_get(u, "status"));
			const json_t *util = json_object_get(u, "cpu_utilisation");
			const json_t *out = json_object_get(u, "output_bytes");
			double wall = json_number_value(json_object_get(u, "wall_s"));
			double cpu = json_number_value(json_object_get(u, "cpu_s"));

			walls += wall;
			/* the seed's stream has no status: every unit it wrote returned */
			if (status && strcmp(status, "complete")) {
				in->n_incomplete++;
				continue;
			}
			in->wall_s[in->n] = wall;
			in->cpu_utilisation[in->n] = json_is_number(util) ? json_number_value(util)
							   : wall > 0 ? cpu / wall : 0;
			in->peak_rss_bytes[in->n] = json_number_value(json_object_get(u, "peak_rss_bytes"));
			in->output_bytes[in->n] = json_is_number(out) ? json_number_value(out) : -1;
			in->n++;
		}
		if (run && (!run_figure_ok(run, "wall_s", 1e9) ||
			    !run_figure_ok(run, "peak_rss_bytes", 4e18))) {
			snprintf(err, errlen, "%s: the manifest's \"run\" has a wall_s or "
				 "peak_rss_bytes outside what a run can have", files[f]);
			json_decref(units);
			json_decref(run);
			return -1;
		}
		if (run && json_is_number(json_object_get(run, "wall_s"))) {
			/* overlapping units (pool workers) can sum past the run: nothing outside then */
			double outside = json_number_value(json_object_get(run, "wall_s")) - walls;
			size_t n_units = json_array_size(units);

			if (outside < 0)
				outside = 0;
			if (outside > in->outside_s)
				in->outside_s = outside;
			if (n_units && outside / (double)n_units > in->outside_per_unit_s)
				in->outside_per_unit_s = outside / (double)n_units;
			if (in->outside_per_unit_s < 0)
				in->outside_per_unit_s = 0;
		}
		if (run && json_number_value(json_object_get(run, "peak_rss_bytes")) >
				   in->group_peak_rss_bytes)
			in->group_peak_rss_bytes = json_number_value(json_object_get(run, "peak_rss_bytes"));
		in->n_files++;
		json_decref(units);
		json_decref(run);
	}
	return 0;
}

void um_project_input_free(struct project_input *in)
{
	free(in->wall_s);
	free(in->cpu_utilisation);
	free(in->peak_rss_bytes);
	free(in->output_bytes);
	memset(in, 0, sizeof(*in));
}
