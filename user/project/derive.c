// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The request derived from the calibrated input (project_input): time, memory, CPUs, scratch,
 * devices, and the notes that say how; pure functions over the input, no I/O. The time model
 * itself is project_time.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/summary.h"
#include "common/text.h"
#include "project/project_internal.h"

/* Below this many units a 90th percentile is one of the two largest values at best. */
#define MIN_UNITS_FOR_P90 5
/*
 * A unit at 1.03 cores is a one-core unit plus kernel work done on its behalf (page faults on
 * another CPU's clock, exit): asking for two cores for that would waste one per task.
 */
#define CPU_ROUND_SLACK 0.05

void note(struct projection *p, const char *fmt, ...)
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

/* --explain's part on the time outside the units. */
static void time_fixed_part(struct projection *p, const struct project_input *in)
{
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
}

/* --explain's part on the first units' warm-up, in the words of is_warmup's rule. */
static void time_warmup_part(struct projection *p, const struct project_input *in)
{
	const struct time_model *m = &p->model;
	const struct task_time *t = &p->task;
	char rule[200];

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
}

/* --explain's part on the units' sum. */
static void time_units_part(struct projection *p)
{
	const struct time_model *m = &p->model;
	const struct task_time *t = &p->task;
	long long n = p->units_per_task;

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
}

/* --explain's part on the workers and the tail. */
static void time_workers_part(struct projection *p, const struct project_input *in)
{
	const struct time_model *m = &p->model;
	const struct task_time *t = &p->task;

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

static void derive_time(struct projection *p, const struct project_input *in,
			const struct project_options *opt)
{
	const struct time_model *m = &p->model;
	struct task_time *t = &p->task;
	long long n = p->units_per_task;

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
	time_fixed_part(p, in);
	time_warmup_part(p, in);
	time_units_part(p);
	time_workers_part(p, in);
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
		um_say(p->derivation[3], sizeof(p->derivation[3]),
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
		um_say(p->derivation[3], sizeof(p->derivation[3]),
			    "no --tmp: a unit wrote at most %s under %s; %lld units x %.2f margin = %s a "
			    "task, under the %s from which --tmp is asked (a cluster without node-local "
			    "scratch would never start a job that asks any)", unit, dir,
			    p->units_per_task, opt->margin, task, limit);
		return;
	}
	p->tmp_decision = "requested";
	p->tmp_mib = ceil_units(p->tmp_task_bytes, MIB);
	um_say(p->derivation[3], sizeof(p->derivation[3]),
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
		um_say(p->brief[1][0], sizeof(p->brief[1][0]),
			    "peak %s with %lld calibrated workers + %.1f MiB a worker added, x %.2f "
			    "margin", what, in->workers_calibrated > 0 ? in->workers_calibrated : 1,
			    p->mem_per_worker_bytes / MIB, opt->margin);
	else
		um_say(p->brief[1][0], sizeof(p->brief[1][0]), "%s peak %s %.1f MiB x %.2f margin",
			    p->mem_basis_bytes > (p->mem_from_charge ? p->charge_unit_bytes
								     : p->peak_unit_bytes)
				    ? "the whole run's" : "the units' max",
			    what, p->mem_basis_bytes / MIB, opt->margin);
	um_say(p->brief[2][0], sizeof(p->brief[2][0]),
		    "%lld worker%s x %.2f cores (the %s CPU utilisation of a unit), rounded up",
		    p->task.workers, p->task.workers == 1 ? "" : "s", p->cpu_utilisation_unit,
		    p->used_max ? "max" : "p90");
	if (p->tmp_unit_bytes < 0) {
		um_say(p->brief[3][0], sizeof(p->brief[3][0]),
			    "no --tmp: writes to node-local scratch were not measured (see the note)");
		note(p, "no --tmp line: %s", p->derivation[3] + strlen("no --tmp: "));
	} else {
		byte_size(unit, sizeof(unit), p->tmp_unit_bytes);
		byte_size(task, sizeof(task), p->tmp_task_bytes);
		byte_size(limit, sizeof(limit), UM_TMP_REQUEST_MIN_BYTES);
		um_say(p->brief[3][0], sizeof(p->brief[3][0]), "%sa unit wrote at most %s under %s",
			    p->tmp_mib ? "" : "no --tmp: ", unit, dir);
		um_say(p->brief[3][1], sizeof(p->brief[3][1]),
			    "x %lld units x %.2f margin = %s a task%s%s", p->units_per_task,
			    opt->margin, task, p->tmp_mib ? "" : ", under ", p->tmp_mib ? "" : limit);
	}
	if (in->tmp_dirs_differ)
		note(p, "the calibration's files counted node-local writes under different "
		     "directories; the first named is %s", in->tmp_dir);
	um_say(p->brief[4][0], sizeof(p->brief[4][0]), "%s", p->derivation[4]);
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

