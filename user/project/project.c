// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow.h"
#include "project/project.h"
#include "files/summary.h"
#include "common/unit_keys.h"
#include "files/units_file.h"

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

/* snprintf for text that a long directory or file name may cut short: cut, it still reads. */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
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

static double task_time_s(const struct projection *p, const struct project_options *opt,
			  long long units)
{
	struct task_time tt;

	um_task_time(&p->model, units, ceil_div(opt->units_total, units), &tt);
	return um_task_request_s(&tt, opt->margin);
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
	p->wall_median_s = um_percentile_of(in->wall_s, in->n, 50);
	p->wall_max_s = max_of(in->wall_s, in->n);
	p->wall_unit_s = p->used_max ? p->wall_max_s : um_percentile_of(in->wall_s, in->n, 90);
	p->peak_unit_bytes = max_of(in->peak_rss_bytes, in->n);
	p->peak_median_bytes = um_percentile_of(in->peak_rss_bytes, in->n, 50);
	p->charge_unit_bytes = -1;
	p->charge_median_bytes = -1;
	if (!in->charge_unknown[0]) {
		p->charge_unit_bytes = max_of(in->peak_charge_bytes, in->n);
		p->charge_median_bytes = um_percentile_of(in->peak_charge_bytes, in->n, 50);
	}
	p->cpu_utilisation_unit = p->used_max ? max_of(in->cpu_utilisation, in->n)
					      : um_percentile_of(in->cpu_utilisation, in->n, 90);
	for (size_t i = 0; i < in->n; i++)
		if (in->output_bytes[i] >= 0 && in->output_bytes[i] > out_max)
			out_max = in->output_bytes[i];
	p->output_unit_bytes = out_max;
	p->tmp_unit_bytes = in->n && in->tmp_units == in->n ? in->tmp_unit_max_bytes : -1;
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
static int fit_max_time(struct projection *p, const struct project_options *opt, char *err,
			size_t errlen)
{
	long long lo = 0, hi = p->units_per_task; /* the task's time grows with its units */
	char limit[32], wanted[32];

	if (opt->max_time_s <= 0 || (double)p->time_min * 60 <= opt->max_time_s)
		return 0;
	while (lo < hi) {
		long long mid = lo + (hi - lo + 1) / 2;

		if ((double)whole_minutes(task_time_s(p, opt, mid)) * 60 <= opt->max_time_s)
			lo = mid;
		else
			hi = mid - 1;
	}
	um_format_slurm_minutes((long long)(opt->max_time_s / 60), limit, sizeof(limit));
	if (lo == 0) {
		um_format_slurm_minutes(whole_minutes(task_time_s(p, opt, 1)), wanted,
					sizeof(wanted));
		snprintf(err, errlen, "one unit alone needs %s (a unit %.3f s + %.2f s fixed + %.2f s "
			 "warm-up, x %.2f margin, in whole minutes), more than --max-time %s: no "
			 "split fits", wanted, p->model.bound ? p->model.unit_max_s
			 : p->model.unit_mean_s, p->model.fixed_s, p->model.warmup_max_s,
			 opt->margin, limit);
		return -1;
	}
	um_format_slurm_minutes(p->time_min, wanted, sizeof(wanted));
	p->split = true;
	p->units_per_task = lo;
	p->tasks = ceil_div(opt->units_total, lo);
	p->time_s = task_time_s(p, opt, lo);
	p->time_min = whole_minutes(p->time_s);
	note(p, "split: one task would need %s, past --max-time %s; %lld units now run in "
	     "%lld tasks of at most %lld", wanted, limit, opt->units_total, p->tasks, lo);
	return 0;
}

static void derive_time(struct projection *p, const struct project_input *in,
			const struct project_options *opt)
{
	const struct time_model *m = &p->model;
	struct task_time *t = &p->task;
	long long n = p->units_per_task;
	char rule[200];

	um_task_time(m, n, p->tasks, t);
	p->fixed_s = in->fixed_s;
	if (t->quantile_s > t->total_s * opt->margin)
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "fixed %.2f s + warm-up %.2f s + %lld units over %lld worker%s %.2f s + tail "
			 "%.2f s = %.2f s expected; the sum's p90 for %s%lld task%s (above x %.2f "
			 "margin, %.1f s) = %.1f s, in whole minutes", m->fixed_s, t->warmup_s, n,
			 t->workers, t->workers == 1 ? "" : "s", t->spread_s, t->tail_s, t->total_s,
			 t->tasks > 1 ? "all " : "", t->tasks, t->tasks == 1 ? "" : "s", opt->margin,
			 t->total_s * opt->margin, p->time_s);
	else
		snprintf(p->derivation[0], sizeof(p->derivation[0]),
			 "fixed %.2f s + warm-up %.2f s + %lld units over %lld worker%s %.2f s + tail "
			 "%.2f s = %.2f s expected, x %.2f margin (covers the sum's p90, %.1f s) = "
			 "%.1f s, in whole minutes", m->fixed_s, t->warmup_s, n, t->workers,
			 t->workers == 1 ? "" : "s", t->spread_s, t->tail_s, t->total_s, opt->margin,
			 t->quantile_s, p->time_s);
	if (in->fixed_s < 0)
		snprintf(p->time_parts[0], sizeof(p->time_parts[0]),
			 "fixed: unknown (units streams only: no run record of the time outside "
			 "the units), 0 s");
	else if (in->fixed_from_totals)
		snprintf(p->time_parts[0], sizeof(p->time_parts[0]),
			 "fixed: %.2f s, the run's wall less its units' (they have no start times)",
			 in->fixed_s);
	else
		snprintf(p->time_parts[0], sizeof(p->time_parts[0]),
			 "fixed: %.2f s before the first unit + %.2f s after the last (start-up, "
			 "loading, writing; the most of any file)", in->fixed_before_s,
			 in->fixed_after_s);
	/* the rule of is_warmup (project_time.c), in the words of each case below */
	snprintf(rule, sizeof(rule), "over %.3f s (%.1fx the median of the later units) and over "
		 "the slowest later one (%.3f s)%s", m->warmup_threshold_s, UM_WARMUP_FACTOR,
		 m->warmup_later_max_s, isfinite(m->warmup_later_kept_bytes)
		 ? " or keeping 1 MiB more memory than any later one (imports, caches)" : "");
	if (m->warmup_units && m->workers_replaced)
		snprintf(p->time_parts[1], sizeof(p->time_parts[1]),
			 "warm-up: %zu of %zu processes ran their first unit%s %s; %zu processes ran "
			 "units, at most %lld at once, so workers are replaced and each new one warms "
			 "up: %.3f s of excess a unit over %lld worker%s", m->warmup_processes,
			 m->tested_processes, m->warmup_units > m->warmup_processes ? "s" : "", rule,
			 in->n_processes, in->workers_calibrated, m->warmup_per_unit_s, t->workers,
			 t->workers == 1 ? "" : "s");
	else if (m->warmup_units)
		snprintf(p->time_parts[1], sizeof(p->time_parts[1]),
			 "warm-up: %zu of %zu processes ran their first unit%s %s, at most %.2f s more "
			 "than a steady unit: once per worker, not per unit; workers warm up side by "
			 "side, so once per task", m->warmup_processes, m->tested_processes,
			 m->warmup_units > m->warmup_processes ? "s" : "", rule, m->warmup_max_s);
	else if (m->tested_processes)
		snprintf(p->time_parts[1], sizeof(p->time_parts[1]),
			 "warm-up: none seen (no first unit ran %s, in %zu process%s with two or more "
			 "units)", rule, m->tested_processes, m->tested_processes == 1 ? "" : "es");
	else
		snprintf(p->time_parts[1], sizeof(p->time_parts[1]),
			 "warm-up: cannot be told (no process ran two units): every unit counts as "
			 "steady");
	if (m->bound)
		snprintf(p->time_parts[2], sizeof(p->time_parts[2]),
			 "units: %lld x the slowest steady unit %.3f s = %.1f s (--time-stat max: the "
			 "bound); a unit's time is its wall plus the gap to its process's next unit",
			 n, m->unit_max_s, t->units_sum_s);
	else
		snprintf(p->time_parts[2], sizeof(p->time_parts[2]),
			 "units: %lld x mean %.3f s = %.1f s expected (%zu steady units); the sum's p90"
			 "%s adds %.2f x sd %.3f s x sqrt(%lld) (normal approximation); --time is "
			 "the larger of it and the margin; a unit's time is its wall plus the gap to "
			 "its process's next unit", n, m->unit_mean_s, t->units_sum_s, m->steady_n,
			 t->tasks > 1 ? " for all tasks at once" : "", t->z, m->unit_sd_s, n);
	if (m->workers_given)
		snprintf(p->time_parts[3], sizeof(p->time_parts[3]),
			 "workers: %lld (--workers; the calibration ran %lld at once); tail: the last "
			 "units end one by one, (W-1)/W x the %s unit %.3f s = %.2f s", m->workers,
			 in->workers_calibrated ? in->workers_calibrated : 1, m->bound ? "slowest"
			 : "p90", m->bound ? m->unit_max_s : m->unit_p90_s, t->tail_s);
	else if (in->workers_calibrated == 1)
		snprintf(p->time_parts[3], sizeof(p->time_parts[3]),
			 "workers: 1, as calibrated (one unit at a time for most of the time units "
			 "ran; --workers W projects a pool of W)");
	else if (in->workers_calibrated)
		snprintf(p->time_parts[3], sizeof(p->time_parts[3]),
			 "workers: %lld, as calibrated (%lld or more units ran at once for %.0f%% of "
			 "the time any unit ran; --workers W projects another pool); tail: (W-1)/W x "
			 "the %s unit %.3f s = %.2f s", m->workers, in->workers_calibrated,
			 100 * in->workers_share, m->bound ? "slowest" : "p90",
			 m->bound ? m->unit_max_s : m->unit_p90_s, t->tail_s);
	else
		snprintf(p->time_parts[3], sizeof(p->time_parts[3]),
			 "workers: 1 (the units have no start times, so how many ran at once is not "
			 "known; --workers W sets it)");
}

/*
 * --mem from the memory charge when every unit has one: what SLURM's cgroup enforces, a page
 * shared by forked workers counted once, page cache counted. Else from peak RSS, with a note.
 */
static void derive_mem(struct projection *p, const struct project_input *in,
		       const struct project_options *opt)
{
	double units_peak, run_peak;
	long long calibrated = in->workers_calibrated > 0 ? in->workers_calibrated : 1;
	const char *what;

	p->mem_from_charge = !in->charge_unknown[0];
	units_peak = p->mem_from_charge ? p->charge_unit_bytes : p->peak_unit_bytes;
	run_peak = p->mem_from_charge ? in->group_peak_charge_bytes : in->group_peak_rss_bytes;
	what = p->mem_from_charge ? "memory (cgroup)" : "RSS";
	p->mem_basis_bytes = run_peak > units_peak ? run_peak : units_peak;
	p->mem_per_worker_bytes = 0;
	if (p->task.workers > calibrated) {
		/* each added worker as much as each calibrated one added to the run's base */
		double base = p->mem_from_charge ? in->worker_base_charge_bytes
						 : in->worker_base_rss_bytes;

		base = base > 0 && base < p->mem_basis_bytes ? base : 0;
		p->mem_per_worker_bytes = (p->mem_basis_bytes - base) / (double)calibrated;
		p->mem_basis_bytes += (double)(p->task.workers - calibrated) * p->mem_per_worker_bytes;
	}
	p->mem_mib = ceil_units(p->mem_basis_bytes * opt->margin, MIB);
	if (p->mem_mib < 1)
		p->mem_mib = 1;
	if (p->mem_per_worker_bytes > 0)
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "peak %s %.1f MiB with %lld worker%s + %lld added x %.1f MiB a worker (what "
			 "each calibrated worker added to the %.1f MiB the run held before the first "
			 "began) x %.2f margin = %.1f MiB", what, (run_peak > units_peak ? run_peak
			 : units_peak) / MIB, calibrated, calibrated == 1 ? "" : "s",
			 p->task.workers - calibrated, p->mem_per_worker_bytes / MIB,
			 ((run_peak > units_peak ? run_peak : units_peak) -
			  p->mem_per_worker_bytes * (double)calibrated) / MIB, opt->margin,
			 p->mem_basis_bytes * opt->margin / MIB);
	else if (run_peak > units_peak)
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "whole-run peak %s %.1f MiB (above the units' max %.1f MiB) x %.2f margin "
			 "= %.1f MiB", what, run_peak / MIB, units_peak / MIB, opt->margin,
			 run_peak * opt->margin / MIB);
	else
		snprintf(p->derivation[1], sizeof(p->derivation[1]),
			 "max peak %s %.1f MiB over %zu units x %.2f margin = %.1f MiB", what,
			 units_peak / MIB, in->n, opt->margin, units_peak * opt->margin / MIB);
	if (p->task.workers < calibrated)
		note(p, "--mem is the calibration's, with %lld workers; %lld need less, by an amount "
		     "it did not measure", calibrated, p->task.workers);
	if (p->mem_from_charge) {
		size_t len = strlen(p->derivation[1]);

		snprintf(p->derivation[1] + len, sizeof(p->derivation[1]) - len,
			 "; the units' peak RSS is %.1f MiB", p->peak_unit_bytes / MIB);
		if (p->peak_unit_bytes > 1.25 * units_peak)
			note(p, "peak RSS (max %.1f MiB) is %.1fx the peak memory (cgroup) (max %.1f "
			     "MiB): RSS counts a page shared by forked processes once per process, the "
			     "cgroup that --mem is enforced on counts it once", p->peak_unit_bytes / MIB,
			     p->peak_unit_bytes / units_peak, units_peak / MIB);
		else if (units_peak > 1.25 * p->peak_unit_bytes)
			note(p, "the peak memory (cgroup) (max %.1f MiB) is %.1fx peak RSS (max %.1f "
			     "MiB): the cgroup that --mem is enforced on also counts the page cache of "
			     "files the units read and write, and kernel memory", units_peak / MIB,
			     units_peak / p->peak_unit_bytes, p->peak_unit_bytes / MIB);
		note(p, "the %.2f margin adds %.0f MiB over the measured peak memory (cgroup)",
		     opt->margin, p->mem_basis_bytes * (opt->margin - 1) / MIB);
	} else {
		note(p, "--mem from peak RSS, as the cgroup's peak memory is not known: %s",
		     in->charge_unknown);
		note(p, "--mem is enforced on the job's memory (cgroup), which also counts the page "
		     "cache of files it reads and writes, and a page shared by forked processes "
		     "once; the %.2f margin adds %.0f MiB over the measured peak", opt->margin,
		     p->mem_basis_bytes * (opt->margin - 1) / MIB);
	}
}

#define GIB (1024.0 * MIB)

/* Device memory as a person reads it: GiB from a GiB (the size GPUs are sold in), else MiB. */
static void gpu_size(char *buf, size_t len, double bytes)
{
	if (bytes >= GIB)
		snprintf(buf, len, "%.2f GiB", bytes / GIB);
	else
		snprintf(buf, len, "%.1f MiB", bytes / MIB);
}

/*
 * --gres=gpu:N and the device memory per GPU: SLURM has no request for device memory, so the
 * figure is a comment the user maps to a GPU type: the unit's peak traced through the CUDA driver
 * API, plus the context and pools NVML read (gpu_context_bytes) where it was, else without them.
 */
static void derive_gpu(struct projection *p, const struct project_input *in,
		       const struct project_options *opt)
{
	long long w = p->task.workers > 0 ? p->task.workers : 1;
	double unit_peak = in->gpu_device_peak_max_bytes;
	char a[32], b[32], c[32];

	if (!in->gpu_units)
		return;
	p->gpus = in->gpu_devices_max > 0 ? in->gpu_devices_max : 1;
	snprintf(p->gres_derivation, sizeof(p->gres_derivation),
		 "the most devices one unit held device memory on: %lld (%zu of %zu units used a "
		 "GPU)", p->gpus, in->gpu_units, in->n);
	gpu_size(b, sizeof(b), unit_peak);
	if (in->gpu_context_max_bytes >= 0) {
		/* NVML's figure is the process's over all its devices: on one GPU, at most that */
		p->gpu_mem_bytes = (unit_peak + in->gpu_context_max_bytes) * opt->margin;
		gpu_size(a, sizeof(a), p->gpu_mem_bytes);
		gpu_size(c, sizeof(c), in->gpu_context_max_bytes);
		snprintf(p->gpu_mem_line, sizeof(p->gpu_mem_line),
			 "GPU memory: %s per GPU for one unit (its peak on one device %s, traced, + "
			 "the CUDA context and pools %s, the most NVML read at a unit's end%s, x %.2f "
			 "margin); SLURM has no request for it: choose a GPU type with at least this "
			 "much", a, b, c, p->gpus > 1 ? ", summed over its devices" : "",
			 opt->margin);
	} else {
		p->gpu_mem_bytes = unit_peak * opt->margin;
		gpu_size(a, sizeof(a), p->gpu_mem_bytes);
		snprintf(p->gpu_mem_line, sizeof(p->gpu_mem_line),
			 "GPU memory: %s per GPU for one unit (its peak on one device %s x %.2f "
			 "margin); SLURM has no request for it: choose a GPU type with at least this "
			 "much. Only the part traced through the CUDA driver API: the CUDA context and "
			 "pools are not in it (NVML was not read)", a, b, opt->margin);
	}
	if (in->gpu_units_device_unknown)
		note(p, "%zu unit%s held device memory whose device is not known (a context made "
		     "current another way): counted as one GPU", in->gpu_units_device_unknown,
		     in->gpu_units_device_unknown == 1 ? "" : "s");
	if (w > 1) {
		int len;

		gpu_size(a, sizeof(a), (double)w * p->gpu_mem_bytes);
		len = snprintf(p->gpu_workers_line, sizeof(p->gpu_workers_line),
			       "GPUs with %lld workers: %lld units at once on %lld GPU%s; the per-GPU "
			       "figure is per unit: %lld units sharing %s need up to %s on each, or "
			       "ask --gres=gpu:%lld for a GPU set each", w, w, p->gpus,
			       p->gpus == 1 ? "" : "s", w, p->gpus == 1 ? "it" : "them", a,
			       w * p->gpus);
		if (in->run_gpu_device_peak_bytes > unit_peak && len > 0 &&
		    (size_t)len < sizeof(p->gpu_workers_line)) {
			gpu_size(a, sizeof(a), in->run_gpu_device_peak_bytes);
			gpu_size(b, sizeof(b), unit_peak);
			snprintf(p->gpu_workers_line + len, sizeof(p->gpu_workers_line) - (size_t)len,
				 "; in the calibration one device held %s at once, above any unit's "
				 "%s: units of several workers (or memory held outside the units) "
				 "shared it", a, b);
		}
	}
	/* the figures hold no allocation's own size: one preallocated block shows as the same
	 * peak in every unit, equal to the run's */
	p->gpu_preallocated = unit_peak >= UM_GPU_PREALLOC_MIN_BYTES &&
			      in->gpu_device_peak_min_bytes == unit_peak &&
			      in->run_gpu_device_peak_bytes == unit_peak;
	gpu_size(a, sizeof(a), unit_peak);
	if (p->gpu_preallocated)
		note(p, "every unit's device peak is the same %s, the run's own: one block "
		     "held throughout, as JAX preallocates 75%% of a device at its first operation, "
		     "which says nothing of the fit. With JAX, calibrate with "
		     "XLA_PYTHON_CLIENT_PREALLOCATE=false (or XLA_PYTHON_CLIENT_ALLOCATOR=platform) "
		     "for the fit's own peak", a);
}

/* Bytes as a person reads them: whole bytes below a KiB, else KiB, MiB or GiB. */
static void byte_size(char *buf, size_t len, double bytes)
{
	if (bytes < 1024)
		snprintf(buf, len, "%.0f bytes", bytes);
	else if (bytes < MIB)
		snprintf(buf, len, "%.1f KiB", bytes / 1024);
	else if (bytes < 1024 * MIB)
		snprintf(buf, len, "%.1f MiB", bytes / MIB);
	else
		snprintf(buf, len, "%.2f GiB", bytes / (1024 * MIB));
}

/*
 * --tmp from the bytes the units wrote under the node-local tmp dir only (SLURM's --tmp is
 * node-local scratch, not output), and only from UM_TMP_REQUEST_MIN_BYTES a task: a job asking
 * any --tmp where no node has scratch configured (TmpDisk=0) never starts.
 */
static void derive_tmp(struct projection *p, const struct project_input *in,
		       const struct project_options *opt)
{
	char unit[32], task[32], limit[32];
	const char *dir = in->tmp_dir[0] ? in->tmp_dir : "the tmp dir";

	p->tmp_mib = 0;
	p->tmp_task_bytes = -1;
	if (p->tmp_unit_bytes < 0) {
		p->tmp_decision = "not_measured";
		say(p->derivation[3], sizeof(p->derivation[3]),
			 "no --tmp: what the units wrote to node-local scratch was not measured (%s)",
			 in->tmp_unknown[0] ? in->tmp_unknown : "no unit carries tmp_output_bytes");
		return;
	}
	p->tmp_task_bytes = (double)p->units_per_task * p->tmp_unit_bytes * opt->margin;
	byte_size(unit, sizeof(unit), p->tmp_unit_bytes);
	byte_size(task, sizeof(task), p->tmp_task_bytes);
	byte_size(limit, sizeof(limit), UM_TMP_REQUEST_MIN_BYTES);
	if (p->tmp_task_bytes < UM_TMP_REQUEST_MIN_BYTES) {
		p->tmp_decision = "below_threshold";
		say(p->derivation[3], sizeof(p->derivation[3]),
			 "no --tmp: a unit wrote at most %s under %s; %lld units x %.2f margin = %s a "
			 "task, under the %s from which --tmp is asked (a cluster without node-local "
			 "scratch would never start a job that asks any)", unit, dir,
			 p->units_per_task, opt->margin, task, limit);
		return;
	}
	p->tmp_decision = "requested";
	p->tmp_mib = ceil_units(p->tmp_task_bytes, MIB);
	say(p->derivation[3], sizeof(p->derivation[3]),
		 "a unit wrote at most %s under %s; %lld units x %.2f margin = %s, in whole MiB "
		 "(--tmp is node-local scratch: ask your admins whether nodes have it)", unit, dir,
		 p->units_per_task, opt->margin, task);
}

/* --cpus-per-task, --tmp and --array, each with its derivation. */
static void derive_cpus_tmp_array(struct projection *p, const struct project_input *in,
				  const struct project_options *opt)
{
	long long workers = p->task.workers;

	p->cpus = ceil_units((double)workers * p->cpu_utilisation_unit - CPU_ROUND_SLACK, 1.0);
	if (p->cpus < 1)
		p->cpus = 1;
	snprintf(p->derivation[2], sizeof(p->derivation[2]),
		 "%lld worker%s x %s CPU utilisation %.2f cores over %zu units = %.2f cores, rounded "
		 "up (%.2f core of slack), at least 1", workers, workers == 1 ? "" : "s",
		 p->used_max ? "max" : "p90", p->cpu_utilisation_unit, in->n,
		 (double)workers * p->cpu_utilisation_unit, CPU_ROUND_SLACK);
	derive_tmp(p, in, opt);
	snprintf(p->derivation[4], sizeof(p->derivation[4]),
		 "task $SLURM_ARRAY_TASK_ID runs units [ID*%lld, ID*%lld+%lld) of %lld",
		 p->units_per_task, p->units_per_task, p->units_per_task, opt->units_total);
}

/*
 * How well the calibration knows the mean unit time, which the sum of a task's units rests on:
 * its 90% interval is +-1.645 sd/sqrt(n); past +-10%, say how many units would bring it there.
 */
#define MEAN_PRECISION 0.10
#define Z_P95 1.6448536269514722

static void precision_note(struct projection *p, const struct project_options *opt)
{
	const struct time_model *m = &p->model;
	double cv, half, want;

	if (opt->time_max)
		return;
	if (m->steady_n < 2 || m->unit_mean_s <= 0) {
		note(p, "%zu steady unit%s: how unit times spread is not known, so the sum of a "
		     "task's units assumes they do not; calibrate on %d or more", m->steady_n,
		     m->steady_n == 1 ? "" : "s", MIN_UNITS_FOR_P90);
		return;
	}
	cv = m->unit_sd_s / m->unit_mean_s;
	half = Z_P95 * cv / sqrt((double)m->steady_n);
	if (half <= MEAN_PRECISION && m->steady_n >= MIN_UNITS_FOR_P90)
		return;
	want = ceil(pow(Z_P95 * cv / MEAN_PRECISION, 2));
	if (want < MIN_UNITS_FOR_P90)
		want = MIN_UNITS_FOR_P90;
	note(p, "the mean unit time is known to +-%.0f%% (90%% interval) from %zu steady units "
	     "(sd %.0f%% of the mean); calibrate on %.0f or more (plus each worker's warm-up) to "
	     "know it to +-%.0f%%, or raise --margin", 100 * half, m->steady_n, 100 * cv,
	     want > (double)m->steady_n ? want : (double)m->steady_n + 1, 100 * MEAN_PRECISION);
}

/* What the calibration cannot tell. */
static void calibration_notes(struct projection *p, const struct project_input *in,
			      const struct project_options *opt)
{
	const struct time_model *m = &p->model;

	note(p, "calibrated on %zu complete unit%s from %zu file%s: wall median %.3f s, max %.3f s; "
	     "peak RSS median %.1f MiB, max %.1f MiB", in->n, in->n == 1 ? "" : "s", in->n_files,
	     in->n_files == 1 ? "" : "s", p->wall_median_s, p->wall_max_s,
	     p->peak_median_bytes / MIB, p->peak_unit_bytes / MIB);
	if (in->n_incomplete)
		note(p, "%zu unit%s cut short (exit, kill or exec inside the unit) left out",
		     in->n_incomplete, in->n_incomplete == 1 ? "" : "s");
	if (!opt->time_max && in->n < MIN_UNITS_FOR_P90)
		note(p, "only %zu unit%s measured: too few to trust a p90, so the max CPU "
		     "utilisation sizes the cores; calibrate on %d or more", in->n,
		     in->n == 1 ? "" : "s", MIN_UNITS_FOR_P90);
	precision_note(p, opt);
	if (m->workers_given && in->workers_calibrated && m->workers != in->workers_calibrated)
		note(p, "--workers %lld where the calibration ran %lld units at once: unit times were "
		     "measured with %lld running; workers that share cores, memory bandwidth or a "
		     "disk can each run slower", m->workers, in->workers_calibrated,
		     in->workers_calibrated);
	if (in->fixed_s < 0)
		note(p, "time outside the units (start-up, loading) is unknown from units streams: "
		     "give the run manifest to count it");
	else if (in->fixed_from_totals)
		note(p, "the units have no start times (an older manifest): the run's time outside "
		     "them is counted once per task, as set-up");
}

/* The time in a line or two: the expected time's parts, then what made the limit. */
static void brief_time(struct projection *p, const struct project_options *opt)
{
	const struct task_time *t = &p->task;

	snprintf(p->brief[0][0], sizeof(p->brief[0][0]),
		 "%lld units x %s %.3f s over %lld worker%s + %.2f s fixed, warm-up and tail = "
		 "%.1f s", p->units_per_task, p->model.bound ? "the slowest" : "mean",
		 p->model.bound ? p->model.unit_max_s : p->model.unit_mean_s, t->workers,
		 t->workers == 1 ? "" : "s", t->total_s - t->spread_s, t->total_s);
	if (t->quantile_s > t->total_s * opt->margin)
		snprintf(p->brief[0][1], sizeof(p->brief[0][1]),
			 "the p90 of the sum%s = %.1f s (above x %.2f margin), in whole minutes",
			 t->tasks > 1 ? " over all tasks" : "", t->quantile_s, opt->margin);
	else
		snprintf(p->brief[0][1], sizeof(p->brief[0][1]),
			 "x %.2f margin = %.1f s, in whole minutes", opt->margin, p->time_s);
}

/* --mem, --cpus-per-task, --tmp in a line each: the measured figure and the factors. */
static void brief_other(struct projection *p, const struct project_input *in,
			const struct project_options *opt)
{
	const char *what = p->mem_from_charge ? "memory (cgroup)" : "RSS";
	char unit[32], task[32], limit[32];
	const char *dir = in->tmp_dir[0] ? in->tmp_dir : "the tmp dir";

	if (p->mem_per_worker_bytes > 0)
		say(p->brief[1][0], sizeof(p->brief[1][0]),
			 "peak %s with %lld calibrated workers + %.1f MiB a worker added, x %.2f "
			 "margin", what, in->workers_calibrated > 0 ? in->workers_calibrated : 1,
			 p->mem_per_worker_bytes / MIB, opt->margin);
	else
		say(p->brief[1][0], sizeof(p->brief[1][0]), "%s peak %s %.1f MiB x %.2f margin",
			 p->mem_basis_bytes > (p->mem_from_charge ? p->charge_unit_bytes
								  : p->peak_unit_bytes)
				 ? "the whole run's" : "the units' max",
			 what, p->mem_basis_bytes / MIB, opt->margin);
	say(p->brief[2][0], sizeof(p->brief[2][0]),
		 "%lld worker%s x %.2f cores (the %s CPU utilisation of a unit), rounded up",
		 p->task.workers, p->task.workers == 1 ? "" : "s", p->cpu_utilisation_unit,
		 p->used_max ? "max" : "p90");
	if (p->tmp_unit_bytes < 0) {
		say(p->brief[3][0], sizeof(p->brief[3][0]),
			 "no --tmp: writes to node-local scratch were not measured (see the note)");
		note(p, "no --tmp line: %s", p->derivation[3] + strlen("no --tmp: "));
	} else {
		byte_size(unit, sizeof(unit), p->tmp_unit_bytes);
		byte_size(task, sizeof(task), p->tmp_task_bytes);
		byte_size(limit, sizeof(limit), UM_TMP_REQUEST_MIN_BYTES);
		say(p->brief[3][0], sizeof(p->brief[3][0]), "%sa unit wrote at most %s under %s",
			 p->tmp_mib ? "" : "no --tmp: ", unit, dir);
		say(p->brief[3][1], sizeof(p->brief[3][1]),
			 "x %lld units x %.2f margin = %s a task%s%s", p->units_per_task,
			 opt->margin, task, p->tmp_mib ? "" : ", under ", p->tmp_mib ? "" : limit);
	}
	if (in->tmp_dirs_differ)
		note(p, "the calibration's files counted node-local writes under different "
		     "directories; the first named is %s", in->tmp_dir);
	say(p->brief[4][0], sizeof(p->brief[4][0]), "%s", p->derivation[4]);
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
	if (um_time_model(in, opt, &p->model)) {
		snprintf(err, errlen, "out of memory modelling %zu units", in->n);
		return -1;
	}
	p->cycle_unit_s = p->model.bound ? p->model.unit_max_s : p->model.unit_p90_s;
	split_into_tasks(p, opt);
	p->time_s = task_time_s(p, opt, p->units_per_task);
	if (!(p->time_s / 60 < FIGURE_MAX) ||
	    !((double)p->units_per_task * (p->tmp_unit_bytes > 0 ? p->tmp_unit_bytes : 0) *
		      opt->margin / MIB < FIGURE_MAX)) {
		snprintf(err, errlen, "a task of %lld units would need %.3g s or write %.3g bytes "
			 "to node-local scratch: beyond any SLURM request; use more tasks",
			 p->units_per_task, p->time_s,
			 (double)p->units_per_task * p->tmp_unit_bytes);
		return -1;
	}
	p->time_min = whole_minutes(p->time_s);
	if (fit_max_time(p, opt, err, errlen))
		return -1;
	derive_time(p, in, opt);
	calibration_notes(p, in, opt);
	derive_mem(p, in, opt);
	derive_cpus_tmp_array(p, in, opt);
	derive_gpu(p, in, opt);
	brief_time(p, opt);
	brief_other(p, in, opt);
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

/* Files up to this many are named one by one in the header; more, by their count and ends. */
#define HEADER_FILES_NAMED 3

/* The directory part of path, with its slash ("" where it has none). */
static size_t dir_part(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path + 1) : 0;
}

/*
 * The calibration's files on the header's first line: named where they are a few, else (a
 * job array of hundreds of tasks) their count, the directory they share, and the first and
 * last, so the line stays one a person reads.
 */
static void print_files(FILE *out, const char *const *files, size_t n_files)
{
	size_t dir;

	if (n_files <= HEADER_FILES_NAMED) {
		for (size_t i = 0; i < n_files; i++)
			fprintf(out, " %s", files[i]);
		return;
	}
	dir = dir_part(files[0]);
	for (size_t i = 1; i < n_files && dir; i++)
		if (dir_part(files[i]) != dir || strncmp(files[i], files[0], dir))
			dir = 0;
	fprintf(out, " %zu files", n_files);
	if (dir)
		fprintf(out, " in %.*s", (int)dir, files[0]);
	fprintf(out, " (%s ... %s)", files[0] + dir, files[n_files - 1] + dir);
}

/*
 * text as comment lines of at most UM_HEADER_WIDTH columns: the first after lead, the others
 * after "#   ", broken at spaces (a word longer than a line, a long path, is cut).
 */
static void print_comment(FILE *out, const char *lead, const char *text)
{
	const char *cont = "#   ";
	size_t room = UM_HEADER_WIDTH - strlen(lead);

	fputs(lead, out);
	while (strlen(text) > room) {
		size_t cut = room;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0)
			cut = room; /* one word longer than the line */
		fprintf(out, "%.*s\n%s", (int)cut, text, cont);
		text += cut;
		while (*text == ' ')
			text++;
		room = UM_HEADER_WIDTH - strlen(cont);
	}
	fprintf(out, "%s\n", text);
}

/* One #SBATCH line's comment: its brief line or two, or with --explain its derivation. */
static void print_derivation(FILE *out, const struct projection *p, const struct project_options *opt,
			     size_t line, const char *lead)
{
	if (opt->explain) {
		print_comment(out, lead, p->derivation[line]);
		return;
	}
	print_comment(out, lead, p->brief[line][0]);
	if (p->brief[line][1][0])
		print_comment(out, "#   ", p->brief[line][1]);
}

/* The first line: the request's shape and the calibration's files. */
static void print_title(FILE *out, const struct projection *p, const struct project_options *opt,
			const char *const *files, size_t n_files)
{
	char *title = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&title, &len);

	if (!mem)
		return;
	fprintf(mem, "%lld units in %lld array task%s of %lld units, from", opt->units_total,
		p->tasks, p->tasks == 1 ? "" : "s", p->units_per_task);
	print_files(mem, files, n_files);
	fclose(mem);
	print_comment(out, "# unitmeter project: ", title);
	free(title);
}

void um_print_sbatch(FILE *out, const struct projection *p, const struct project_options *opt,
		     const char *const *files, size_t n_files)
{
	char time[32], line[64];

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	fprintf(out, "#!/bin/bash\n");
	print_title(out, p, opt, files, n_files);
	/* comments on lines of their own: sbatch reads only the option on an #SBATCH line */
	print_derivation(out, p, opt, 0, "# --time: ");
	for (size_t i = 0; opt->explain && i < sizeof(p->time_parts) / sizeof(p->time_parts[0]); i++)
		print_comment(out, "#   ", p->time_parts[i]);
	fprintf(out, "#SBATCH --time=%s\n", time);
	print_derivation(out, p, opt, 1, "# --mem: ");
	if (p->mem_from_charge)
		print_comment(out, "#   ", "memory (cgroup): what SLURM enforces --mem on; a page "
			      "shared by forked processes counts once, page cache included");
	fprintf(out, "#SBATCH --mem=%lldM\n", p->mem_mib);
	print_derivation(out, p, opt, 2, "# --cpus-per-task: ");
	fprintf(out, "#SBATCH --cpus-per-task=%lld\n", p->cpus);
	print_derivation(out, p, opt, 3, p->tmp_mib ? "# --tmp: " : "# ");
	if (p->tmp_mib)
		fprintf(out, "#SBATCH --tmp=%lldM\n", p->tmp_mib);
	print_derivation(out, p, opt, 4, "# --array: ");
	fprintf(out, "#SBATCH --array=0-%lld\n", p->tasks - 1);
	if (p->gpus) {
		print_comment(out, "# --gres: ", p->gres_derivation);
		snprintf(line, sizeof(line), "#SBATCH --gres=gpu:%lld", p->gpus);
		fprintf(out, "%s\n", line);
		print_comment(out, "# ", p->gpu_mem_line);
		if (p->gpu_workers_line[0])
			print_comment(out, "# ", p->gpu_workers_line);
	}
	if (opt->partition)
		fprintf(out, "#SBATCH --partition=%s\n", opt->partition);
	for (size_t i = 0; i < p->n_notes; i++)
		print_comment(out, "# note: ", p->notes[i]);
	if (!opt->explain)
		fprintf(out, "# (unitmeter project --explain: how each figure was derived)\n");
}

/* The time model's parts and what each was measured from (see project_time.c); limit_by: which
 * of the margin and the quantile made --time. */
static json_t *time_model_json(const struct projection *p, const struct project_input *in,
			       double margin)
{
	const struct time_model *m = &p->model;
	const struct task_time *t = &p->task;

	/* o? takes a new reference or NULL, which packs as null */
	return json_pack("{s:f, s:{s:I, s:I, s:I, s:o?, s:o?, s:o?, s:f, s:b, s:f}, "
			 "s:{s:o?, s:o?, s:I, s:b, s:I}, "
			 "s:{s:I, s:f, s:f, s:f, s:f, s:s, s:o?, s:f, s:f, s:f}, s:f, s:f, s:I, s:s}",
			 "fixed_s", m->fixed_s,
			 "warmup",
			 "processes_tested", (json_int_t)m->tested_processes,
			 "processes_warmed", (json_int_t)m->warmup_processes,
			 "units", (json_int_t)m->warmup_units,
			 "threshold_s", m->tested_processes ? json_real(m->warmup_threshold_s) : NULL,
			 "later_max_s", m->tested_processes ? json_real(m->warmup_later_max_s) : NULL,
			 "later_kept_bytes", isfinite(m->warmup_later_kept_bytes)
				? json_real(m->warmup_later_kept_bytes) : NULL,
			 "max_excess_s", m->warmup_max_s,
			 "workers_replaced", m->workers_replaced,
			 "task_s", t->warmup_s,
			 "workers",
			 "calibrated", in->workers_calibrated
				? json_integer(in->workers_calibrated) : NULL,
			 "calibrated_share", in->workers_calibrated
				? json_real(in->workers_share) : NULL,
			 "used", (json_int_t)t->workers,
			 "given", m->workers_given,
			 "processes", (json_int_t)in->n_processes,
			 "units",
			 "steady", (json_int_t)m->steady_n,
			 "mean_s", m->unit_mean_s,
			 "sd_s", m->unit_sd_s,
			 "p90_s", m->unit_p90_s,
			 "max_s", m->unit_max_s,
			 "sum_stat", m->bound ? "max" : "p90",
			 "z", m->bound ? NULL : json_real(t->z),
			 "sum_s", t->units_sum_s,
			 "per_worker_s", t->spread_s,
			 "tail_s", t->tail_s,
			 "total_s", t->total_s,
			 "quantile_s", t->quantile_s,
			 "tasks", (json_int_t)t->tasks,
			 "limit_by", t->quantile_s > t->total_s * margin ? "quantile" : "margin");
}

json_t *um_projection_json(const struct projection *p, const struct project_input *in,
			   const struct project_options *opt, const char *const *files,
			   size_t n_files)
{
	json_t *root = json_object(), *inputs = json_object(), *unit = json_object();
	json_t *req = json_object(), *deriv = json_object(), *notes = json_array(), *names, *parts;
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
	json_object_set_new(inputs, "tmp_dir", in->tmp_dir[0] ? json_string(in->tmp_dir)
							      : json_null());

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
	json_object_set_new(unit, "tmp_output_bytes_max",
			    p->tmp_unit_bytes >= 0 ? json_integer((json_int_t)p->tmp_unit_bytes)
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
	json_object_set_new(unit, "gpu_units", json_integer((json_int_t)in->gpu_units));
	json_object_set_new(unit, "gpu_devices_max",
			    p->gpus ? json_integer(p->gpus) : json_null());
	json_object_set_new(unit, "peak_gpu_device_bytes_max",
			    p->gpus ? json_integer((json_int_t)in->gpu_device_peak_max_bytes)
				    : json_null());
	json_object_set_new(unit, "gpu_context_bytes_max",
			    p->gpus && in->gpu_context_max_bytes >= 0
				    ? json_integer((json_int_t)in->gpu_context_max_bytes)
				    : json_null());
	json_object_set_new(unit, "run_peak_gpu_device_bytes",
			    p->gpus && in->run_gpu_device_peak_bytes >= 0
				    ? json_integer((json_int_t)in->run_gpu_device_peak_bytes)
				    : json_null());
	json_object_set_new(unit, "gpu_preallocated",
			    p->gpus ? json_boolean(p->gpu_preallocated) : json_null());

	um_format_slurm_minutes(p->time_min, time, sizeof(time));
	json_object_set_new(req, "time", json_string(time));
	json_object_set_new(req, "time_minutes", json_integer(p->time_min));
	json_object_set_new(req, "time_s_projected", json_real(p->time_s));
	json_object_set_new(req, "mem_mib", json_integer(p->mem_mib));
	json_object_set_new(req, "mem_per_added_worker_bytes",
			    p->mem_per_worker_bytes > 0
				    ? json_integer((json_int_t)p->mem_per_worker_bytes)
				    : json_null());
	json_object_set_new(req, "cpus_per_task", json_integer(p->cpus));
	json_object_set_new(req, "tmp_mib", p->tmp_mib ? json_integer(p->tmp_mib) : json_null());
	/* requested, below_threshold (under tmp_threshold_bytes a task) or not_measured */
	json_object_set_new(req, "tmp_decision", json_string(p->tmp_decision));
	json_object_set_new(req, "tmp_task_bytes", p->tmp_task_bytes >= 0
				    ? json_integer((json_int_t)ceil(p->tmp_task_bytes)) : json_null());
	json_object_set_new(req, "tmp_threshold_bytes",
			    json_integer((json_int_t)UM_TMP_REQUEST_MIN_BYTES));
	json_object_set_new(req, "tasks", json_integer(p->tasks));
	json_object_set_new(req, "units_per_task", json_integer(p->units_per_task));
	json_object_set_new(req, "array", json_sprintf("0-%lld", p->tasks - 1));
	json_object_set_new(req, "partition", opt->partition ? json_string(opt->partition) : json_null());
	json_object_set_new(req, "split_for_max_time", json_boolean(p->split));
	json_object_set_new(req, "gres", p->gpus ? json_sprintf("gpu:%lld", p->gpus) : json_null());
	json_object_set_new(req, "gpus", p->gpus ? json_integer(p->gpus) : json_null());
	json_object_set_new(req, "gpu_mem_per_gpu_bytes",
			    p->gpus ? json_integer((json_int_t)ceil(p->gpu_mem_bytes)) : json_null());
	/* false: NVML's context and pools are in it */
	json_object_set_new(req, "gpu_mem_traced_only",
			    p->gpus ? json_boolean(in->gpu_context_max_bytes < 0) : json_null());

	json_object_set_new(deriv, "time", json_string(p->derivation[0]));
	parts = json_array();
	for (size_t i = 0; i < sizeof(p->time_parts) / sizeof(p->time_parts[0]); i++)
		json_array_append_new(parts, json_string(p->time_parts[i]));
	json_object_set_new(deriv, "time_parts", parts);
	json_object_set_new(deriv, "mem", json_string(p->derivation[1]));
	json_object_set_new(deriv, "cpus_per_task", json_string(p->derivation[2]));
	json_object_set_new(deriv, "tmp", json_string(p->derivation[3]));
	json_object_set_new(deriv, "array", json_string(p->derivation[4]));
	json_object_set_new(deriv, "gres", p->gpus ? json_string(p->gres_derivation) : json_null());
	json_object_set_new(deriv, "gpu_mem", p->gpus ? json_string(p->gpu_mem_line) : json_null());
	json_object_set_new(deriv, "gpu_workers",
			    p->gpu_workers_line[0] ? json_string(p->gpu_workers_line) : json_null());
	for (size_t i = 0; i < p->n_notes; i++)
		json_array_append_new(notes, json_string(p->notes[i]));

	json_object_set_new(root, "inputs", inputs);
	json_object_set_new(root, "time_model", time_model_json(p, in, opt->margin));
	json_object_set_new(root, "per_unit", unit);
	json_object_set_new(root, "request", req);
	json_object_set_new(root, "derivation", deriv);
	json_object_set_new(root, "notes", notes);
	return root;
}

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
	const json_t *procs = json_object_get(run, "per_process"), *p;
	const json_t *tl = json_object_get(run, "memory_timeline");
	double first = INFINITY, charge = 0, rss = 0, t0, width;
	const char *keys[2] = { "charge_min_bytes", "rss_min_bytes" };
	double *base[2] = { &charge, &rss };
	size_t i;

	json_array_foreach(procs, i, p) {
		long long pid = (long long)um_json_number(p, "pid", -1);
		double start = um_json_number(p, "start_ns", NAN) / 1e9;

		if (bsearch(&pid, t, k, sizeof(*t), pid_is) && start < first)
			first = i == 0 ? 0 : start; /* the first record is the command's own */
	}
	t0 = um_json_number(tl, "start_ns", NAN) / 1e9;
	width = um_json_number(tl, "bucket_ns", NAN) / 1e9;
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
	double wall_run = json_number_value(json_object_get(run, "wall_s")), last_end = 0;
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
	const char *why = json_string_value(json_object_get(json_object_get(run, "charge"), "note"));

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
	const json_t *dir = json_object_get(run, "tmp_dir");
	const char *path = json_string_value(json_object_get(dir, "path"));
	const char *why = json_string_value(json_object_get(dir, "note"));

	if (path && !in->tmp_dir[0])
		say(in->tmp_dir, sizeof(in->tmp_dir), "%s", path);
	else if (path && strcmp(path, in->tmp_dir))
		in->tmp_dirs_differ = true;
	if (!units_lack || in->tmp_unknown[0])
		return;
	say(in->tmp_unknown, sizeof(in->tmp_unknown), "%s: %s", file,
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
	const json_t *list = json_object_get(run, UM_KEY_PEAK_GPU_BY_DEVICE), *e;
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
	if (run && (!run_figure_ok(run, "wall_s", 1e9) ||
		    !run_figure_ok(run, "peak_rss_bytes", 4e18) ||
		    !run_figure_ok(run, "peak_charge_bytes", 4e18))) {
		snprintf(err, errlen, "%s: the manifest's \"run\" has a wall_s, peak_rss_bytes or "
			 "peak_charge_bytes outside what a run can have", path);
		return -1;
	}
	if (!place_units(in, units, n, run, first) && run &&
	    json_is_number(json_object_get(run, "wall_s"))) {
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
			json_t *run = json_object_get(doc, "run");

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
