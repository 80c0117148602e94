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

static double task_time_s(const struct projection *p, const struct project_input *in,
			  const struct project_options *opt, long long units)
{
	return ((double)units * p->cycle_unit_s + (in->fixed_s > 0 ? in->fixed_s : 0)) * opt->margin;
}

static long long whole_minutes(double seconds)
{
	long long m = ceil_units(seconds, 60.0);

	return m < 1 ? 1 : m;
}

/* The per-unit figures the request is made of: p90 (or max) of time, utilisation; max of peaks. */
static void unit_statistics(struct projection *p, const struct project_input *in,
			    const struct project_options *opt)
{
	double out_max = -1;

	p->used_max = opt->time_max || in->n < MIN_UNITS_FOR_P90;
	p->wall_median_s = percentile_of(in->wall_s, in->n, 50);
	p->wall_max_s = max_of(in->wall_s, in->n);
	p->wall_unit_s = p->used_max ? p->wall_max_s : percentile_of(in->wall_s, in->n, 90);
	p->cycle_unit_s = p->used_max ? max_of(in->cycle_s, in->n)
				      : percentile_of(in->cycle_s, in->n, 90);
	p->peak_unit_bytes = max_of(in->peak_rss_bytes, in->n);
	p->peak_median_bytes = percentile_of(in->peak_rss_bytes, in->n, 50);
	p->charge_unit_bytes = -1;
	p->charge_median_bytes = -1;
	if (!in->charge_unknown[0]) {
		p->charge_unit_bytes = max_of(in->peak_charge_bytes, in->n);
		p->charge_median_bytes = percentile_of(in->peak_charge_bytes, in->n, 50);
	}
	p->cpu_utilisation_unit = p->used_max ? max_of(in->cpu_utilisation, in->n)
					      : percentile_of(in->cpu_utilisation, in->n, 90);
	for (size_t i = 0; i < in->n; i++)
		if (in->output_bytes[i] >= 0 && in->output_bytes[i] > out_max)
			out_max = in->output_bytes[i];
	p->output_unit_bytes = out_max;
}

/* Units per task and tasks, from --tasks or --units-per-task (one task of all by default). */
static void split_into_tasks(struct projection *p, const struct project_options *opt)
{
	long long n = opt->units_total;

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
}

/* --max-time: the most units per task whose time fits, or -1 with err when one unit does not. */
static int fit_max_time(struct projection *p, const struct project_input *in,
			const struct project_options *opt, char *err, size_t errlen)
{
	long long lo = 0, hi = p->units_per_task; /* the task's time grows with its units */
	char limit[32], wanted[32];

	if (opt->max_time_s <= 0 || (double)p->time_min * 60 <= opt->max_time_s)
		return 0;
	while (lo < hi) {
		long long mid = lo + (hi - lo + 1) / 2;

		if ((double)whole_minutes(task_time_s(p, in, opt, mid)) * 60 <= opt->max_time_s)
			lo = mid;
		else
			hi = mid - 1;
	}
	um_format_slurm_minutes((long long)(opt->max_time_s / 60), limit, sizeof(limit));
	if (lo == 0) {
		um_format_slurm_minutes(whole_minutes(task_time_s(p, in, opt, 1)), wanted,
					sizeof(wanted));
		snprintf(err, errlen, "one unit alone needs %s (%s unit time %.3f s + %.2f s fixed, x "
			 "%.2f margin, in whole minutes), more than --max-time %s: no split fits",
			 wanted, p->used_max ? "max" : "p90", p->cycle_unit_s,
			 in->fixed_s > 0 ? in->fixed_s : 0, opt->margin, limit);
		return -1;
	}
	um_format_slurm_minutes(p->time_min, wanted, sizeof(wanted));
	p->split = true;
	p->units_per_task = lo;
	p->tasks = ceil_div(opt->units_total, lo);
	p->time_s = task_time_s(p, in, opt, lo);
	p->time_min = whole_minutes(p->time_s);
	note(p, "split: one task would need %s, past --max-time %s; %lld units now run in "
	     "%lld tasks of at most %lld", wanted, limit, opt->units_total, p->tasks, lo);
	return 0;
}

static void derive_time(struct projection *p, const struct project_input *in,
			const struct project_options *opt)
{
	const char *stat = p->used_max ? "max" : "p90";
	double units_s = (double)p->units_per_task * p->cycle_unit_s;

	p->fixed_s = in->fixed_s;
	if (in->fixed_s >= 0 && !in->fixed_from_totals)
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "per unit: %lld units x %s (unit wall + gap to the next) %.3f s = %.1f s; "
			 "fixed: %.2f s (%.2f s before the first unit, %.2f s after the last); "
			 "%.1f s x %.2f margin = %.1f s, in whole minutes", p->units_per_task, stat,
			 p->cycle_unit_s, units_s, in->fixed_s, in->fixed_before_s,
			 in->fixed_after_s, units_s + in->fixed_s, opt->margin, p->time_s);
	else if (in->fixed_s >= 0)
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "per unit: %lld units x %s wall %.3f s = %.1f s; fixed: %.2f s (the run's "
			 "wall less its units'); %.1f s x %.2f margin = %.1f s, in whole minutes",
			 p->units_per_task, stat, p->cycle_unit_s, units_s, in->fixed_s,
			 units_s + in->fixed_s, opt->margin, p->time_s);
	else
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "%lld units x %s wall %.3f s = %.1f s, x %.2f margin = %.1f s, in whole "
			 "minutes", p->units_per_task, stat, p->cycle_unit_s, units_s, opt->margin,
			 p->time_s);
}

/*
 * --mem from the memory charge when every unit has one: what SLURM's cgroup enforces, a page
 * shared by forked workers counted once, page cache counted. Else from peak RSS, with a note.
 */
static void derive_mem(struct projection *p, const struct project_input *in,
		       const struct project_options *opt)
{
	double units_peak, run_peak;
	const char *what;

	p->mem_from_charge = !in->charge_unknown[0];
	units_peak = p->mem_from_charge ? p->charge_unit_bytes : p->peak_unit_bytes;
	run_peak = p->mem_from_charge ? in->group_peak_charge_bytes : in->group_peak_rss_bytes;
	what = p->mem_from_charge ? "memory charge" : "RSS";
	p->mem_basis_bytes = run_peak > units_peak ? run_peak : units_peak;
	p->mem_mib = ceil_units(p->mem_basis_bytes * opt->margin, MIB);
	if (p->mem_mib < 1)
		p->mem_mib = 1;
	if (run_peak > units_peak)
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "whole-run peak %s %.1f MiB (above the units' max %.1f MiB) x %.2f margin "
			 "= %.1f MiB", what, run_peak / MIB, units_peak / MIB, opt->margin,
			 run_peak * opt->margin / MIB);
	else
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "max peak %s %.1f MiB over %zu units x %.2f margin = %.1f MiB", what,
			 units_peak / MIB, in->n, opt->margin, units_peak * opt->margin / MIB);
	if (p->mem_from_charge) {
		size_t len = strlen(p->derivation[1]);

		snprintf(p->derivation[1] + len, sizeof(p->derivation[1]) - len,
			 "; the units' peak RSS is %.1f MiB", p->peak_unit_bytes / MIB);
		if (p->peak_unit_bytes > 1.25 * units_peak)
			note(p, "peak RSS (max %.1f MiB) is %.1fx the memory charge (max %.1f MiB): "
			     "RSS counts a page shared by forked processes once per process, the "
			     "cgroup that --mem is enforced on counts it once", p->peak_unit_bytes / MIB,
			     p->peak_unit_bytes / units_peak, units_peak / MIB);
		else if (units_peak > 1.25 * p->peak_unit_bytes)
			note(p, "the memory charge (max %.1f MiB) is %.1fx peak RSS (max %.1f MiB): the "
			     "cgroup that --mem is enforced on also counts the page cache of files the "
			     "units read and write, and kernel memory", units_peak / MIB,
			     units_peak / p->peak_unit_bytes, p->peak_unit_bytes / MIB);
		note(p, "the %.2f margin adds %.0f MiB over the measured charge", opt->margin,
		     p->mem_basis_bytes * (opt->margin - 1) / MIB);
	} else {
		note(p, "--mem from peak RSS, as the memory charge is not known: %s", in->charge_unknown);
		note(p, "--mem is enforced on the job's cgroup charge, which also counts the page cache "
		     "of files it reads and writes, and a page shared by forked processes once; the "
		     "%.2f margin adds %.0f MiB over the measured peak", opt->margin,
		     p->mem_basis_bytes * (opt->margin - 1) / MIB);
	}
}

/* --cpus-per-task, --tmp and --array, each with its derivation. */
static void derive_cpus_tmp_array(struct projection *p, const struct project_input *in,
				  const struct project_options *opt)
{
	double out_max = p->output_unit_bytes;

	p->cpus = ceil_units(p->cpu_utilisation_unit - CPU_ROUND_SLACK, 1.0);
	if (p->cpus < 1)
		p->cpus = 1;
	p->tmp_mib = out_max > 0 ? ceil_units((double)p->units_per_task * out_max * opt->margin, MIB)
				 : 0;
	snprintf(p->derivation[2], sizeof(p->derivation[2]),
		 "%s CPU utilisation %.2f cores over %zu units, rounded up (%.2f core of slack), "
		 "at least 1", p->used_max ? "max" : "p90", p->cpu_utilisation_unit, in->n,
		 CPU_ROUND_SLACK);
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
		 p->units_per_task, p->units_per_task, p->units_per_task, opt->units_total);
}

/* What the calibration cannot tell. */
static void calibration_notes(struct projection *p, const struct project_input *in,
			      const struct project_options *opt)
{
	note(p, "calibrated on %zu complete unit%s from %zu file%s: wall median %.3f s, max %.3f s; "
	     "peak RSS median %.1f MiB, max %.1f MiB", in->n, in->n == 1 ? "" : "s", in->n_files,
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
	if (in->fixed_s < 0)
		note(p, "time outside the units (start-up, loading) is unknown from units streams: "
		     "give the run manifest to count it");
	else if (in->fixed_from_totals)
		note(p, "the units have no start times (an older manifest): the run's time outside "
		     "them is counted once per task, as set-up");
}

int um_project(const struct project_input *in, const struct project_options *opt,
	       struct projection *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!in->n) {
		snprintf(err, errlen, "no complete units to project from%s: calibrate with "
			 "'unitmeter run --unit SPEC' until at least one unit has returned",
			 in->n_incomplete ? " (every unit was cut short)" : "");
		return -1;
	}
	if (opt->units_total <= 0 || opt->margin < 1 || !isfinite(opt->margin)) {
		snprintf(err, errlen, "--units must be positive and --margin at least 1");
		return -1;
	}
	unit_statistics(p, in, opt);
	split_into_tasks(p, opt);
	p->time_s = task_time_s(p, in, opt, p->units_per_task);
	if (!(p->time_s / 60 < FIGURE_MAX) ||
	    !((double)p->units_per_task * (p->output_unit_bytes > 0 ? p->output_unit_bytes : 0) *
		      opt->margin / MIB < FIGURE_MAX)) {
		snprintf(err, errlen, "a task of %lld units would need %.3g s or write %.3g bytes: "
			 "beyond any SLURM request; use more tasks", p->units_per_task, p->time_s,
			 (double)p->units_per_task * p->output_unit_bytes);
		return -1;
	}
	p->time_min = whole_minutes(p->time_s);
	if (fit_max_time(p, in, opt, err, errlen))
		return -1;
	derive_time(p, in, opt);
	calibration_notes(p, in, opt);
	derive_mem(p, in, opt);
	derive_cpus_tmp_array(p, in, opt);
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
	json_object_set_new(unit, "unit_time_s", json_real(p->cycle_unit_s));
	json_object_set_new(unit, "fixed_s", p->fixed_s >= 0 ? json_real(p->fixed_s) : json_null());
	json_object_set_new(unit, "fixed_before_first_unit_s",
			    p->fixed_s >= 0 && !in->fixed_from_totals ? json_real(in->fixed_before_s)
								      : json_null());
	json_object_set_new(unit, "fixed_after_last_unit_s",
			    p->fixed_s >= 0 && !in->fixed_from_totals ? json_real(in->fixed_after_s)
								      : json_null());
	json_object_set_new(unit, "peak_charge_bytes_max",
			    p->charge_unit_bytes >= 0 ? json_integer((json_int_t)p->charge_unit_bytes)
						      : json_null());
	json_object_set_new(unit, "peak_charge_bytes_median",
			    p->charge_median_bytes >= 0
				    ? json_integer((json_int_t)p->charge_median_bytes)
				    : json_null());
	json_object_set_new(unit, "run_peak_charge_bytes",
			    p->mem_from_charge && in->group_peak_charge_bytes >= 0
				    ? json_integer((json_int_t)in->group_peak_charge_bytes)
				    : json_null());
	json_object_set_new(unit, "mem_from", json_string(p->mem_from_charge ? "charge" : "rss"));

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
	double **arrays[] = { &in->wall_s, &in->cycle_s, &in->cpu_utilisation, &in->peak_rss_bytes,
			      &in->peak_charge_bytes, &in->output_bytes };

	for (size_t a = 0; a < sizeof(arrays) / sizeof(arrays[0]); a++) {
		double *bigger = realloc(*arrays[a], (want ? want : 1) * sizeof(double));

		if (!bigger)
			return -1;
		*arrays[a] = bigger;
	}
	return 0;
}

/* One unit of a file's timeline: where it starts and ends, and its place among the complete. */
struct timeline_unit {
	double start_s, end_s;
	long long complete; /* index in the input's arrays, or -1 */
};

static int by_start(const void *a, const void *b)
{
	const struct timeline_unit *x = a, *y = b;

	return (x->start_s > y->start_s) - (x->start_s < y->start_s);
}

/*
 * The run's timeline (units with start times, and the run's wall): each complete unit's time is
 * its wall plus the gap to the next unit's start, and the task's fixed part is the time before
 * the first unit plus after the last. Returns false when the units have no start times.
 */
static bool apply_timeline(struct project_input *in, const json_t *units, const json_t *run,
			   size_t first)
{
	size_t n = json_array_size(units), i, k = 0, c = first;
	struct timeline_unit *t = calloc(n ? n : 1, sizeof(*t));
	double wall_run = json_number_value(json_object_get(run, "wall_s")), last_end = 0;
	double before, after;
	json_t *u;

	if (!t)
		return false;
	json_array_foreach(units, i, u) {
		const json_t *start = json_object_get(u, "start_ns");
		const char *status = json_string_value(json_object_get(u, "status"));

		if (!json_is_number(start)) {
			free(t);
			return false;
		}
		t[k].start_s = json_number_value(start) / 1e9;
		t[k].end_s = t[k].start_s + json_number_value(json_object_get(u, "wall_s"));
		t[k].complete = status && strcmp(status, "complete") ? -1 : (long long)c++;
		k++;
	}
	qsort(t, k, sizeof(*t), by_start);
	for (i = 0; i < k; i++) {
		if (t[i].end_s > last_end)
			last_end = t[i].end_s;
		if (t[i].complete >= 0 && i + 1 < k && t[i + 1].start_s > t[i].end_s)
			in->cycle_s[t[i].complete] += t[i + 1].start_s - t[i].end_s;
	}
	before = k ? t[0].start_s : wall_run;
	after = k && wall_run > last_end ? wall_run - last_end : 0;
	if (before + after > in->fixed_s) {
		in->fixed_s = before + after;
		in->fixed_before_s = before;
		in->fixed_after_s = after;
	}
	free(t);
	return true;
}

/* Why a file's charge figures cannot make --mem (first reason kept). */
static void charge_missing(struct project_input *in, const char *file, const json_t *run)
{
	const char *why = json_string_value(json_object_get(json_object_get(run, "charge"), "note"));

	if (in->charge_unknown[0])
		return;
	snprintf(in->charge_unknown, sizeof(in->charge_unknown), "%s: %s", file,
		 why ? why : run ? "the manifest predates unitmeter's charge measurement"
			     : "its units have no peak_charge_bytes");
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
}

int um_project_add(struct project_input *in, const char *path, const json_t *units,
		   const json_t *run, char *err, size_t errlen)
{
	const json_t *u;
	double walls = 0;
	size_t i, first = in->n;

	*err = '\0';
	if (input_grow(in, in->n + json_array_size(units))) {
		snprintf(err, errlen, "out of memory reading %s", path);
		return -1;
	}
	json_array_foreach(units, i, u) {
		const char *status = json_string_value(json_object_get(u, "status"));
		const json_t *util = json_object_get(u, "cpu_utilisation");
		const json_t *out = json_object_get(u, "output_bytes");
		const json_t *charge = json_object_get(u, "peak_charge_bytes");
		double wall = json_number_value(json_object_get(u, "wall_s"));
		double cpu = json_number_value(json_object_get(u, "cpu_s"));

		walls += wall;
		/* the seed's stream has no status: every unit it wrote returned */
		if (status && strcmp(status, "complete")) {
			in->n_incomplete++;
			continue;
		}
		in->wall_s[in->n] = wall;
		in->cycle_s[in->n] = wall;
		in->cpu_utilisation[in->n] = json_is_number(util) ? json_number_value(util)
						   : wall > 0 ? cpu / wall : 0;
		in->peak_rss_bytes[in->n] = json_number_value(json_object_get(u, "peak_rss_bytes"));
		in->peak_charge_bytes[in->n] = json_is_number(charge) ? json_number_value(charge) : -1;
		if (!json_is_number(charge))
			charge_missing(in, path, run);
		in->output_bytes[in->n] = json_is_number(out) ? json_number_value(out) : -1;
		in->n++;
	}
	if (run && (!run_figure_ok(run, "wall_s", 1e9) ||
		    !run_figure_ok(run, "peak_rss_bytes", 4e18) ||
		    !run_figure_ok(run, "peak_charge_bytes", 4e18))) {
		snprintf(err, errlen, "%s: the manifest's \"run\" has a wall_s, peak_rss_bytes or "
			 "peak_charge_bytes outside what a run can have", path);
		return -1;
	}
	if (run && json_is_number(json_object_get(run, "wall_s")) &&
	    !apply_timeline(in, units, run, first)) {
		/* no start times: all the time outside the units is the fixed part */
		double outside = json_number_value(json_object_get(run, "wall_s")) - walls;

		in->fixed_from_totals = true;
		if (outside < 0)
			outside = 0;
		if (outside > in->fixed_s)
			in->fixed_s = outside;
	}
	if (run && json_number_value(json_object_get(run, "peak_rss_bytes")) >
			   in->group_peak_rss_bytes)
		in->group_peak_rss_bytes = json_number_value(json_object_get(run, "peak_rss_bytes"));
	if (run && json_is_number(json_object_get(run, "peak_charge_bytes"))) {
		double peak = json_number_value(json_object_get(run, "peak_charge_bytes"));

		if (peak > in->group_peak_charge_bytes)
			in->group_peak_charge_bytes = peak;
	} else if (run) {
		charge_missing(in, path, run);
	}
	in->n_files++;
	return 0;
}

int um_project_load(const char *const *files, size_t n_files, struct project_input *in,
		    char *err, size_t errlen)
{
	um_project_input_init(in);
	for (size_t f = 0; f < n_files; f++) {
		json_t *units = json_array(), *run = NULL;
		int rc = um_load_units_run(files[f], units, &run, err, errlen);

		if (!rc)
			rc = um_project_add(in, files[f], units, run, err, errlen);
		json_decref(units);
		json_decref(run);
		if (rc)
			return -1;
	}
	return 0;
}

void um_project_input_free(struct project_input *in)
{
	free(in->wall_s);
	free(in->cycle_s);
	free(in->peak_charge_bytes);
	free(in->cpu_utilisation);
	free(in->peak_rss_bytes);
	free(in->output_bytes);
	memset(in, 0, sizeof(*in));
}
