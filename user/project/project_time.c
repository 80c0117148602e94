// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The time model of `unitmeter project`: what one task of N units takes, from how the
 * calibration's units really ran.
 *
 *   task = fixed + warm-up + (the sum of N unit times) / workers + tail
 *   limit = max(margin x the expected task, the task with the sum's upper quantile)
 *
 * - fixed: before the first unit and after the last (start-up, a data load, writing results);
 * - warm-up: a process's leading units that ran markedly slower than its later ones (imports,
 *   first page faults, caches) cost their excess once per process, not once per unit;
 * - the sum: a task's time is the sum of its units', expected N x mean; its upper quantile is
 *   N mu + z sigma sqrt(N) (normal approximation), not N x p90, with z such that every task of
 *   the array is within it 9 times in 10. The margin and the quantile are both headroom over the
 *   expected sum: the limit takes the larger, so a pool of many units asks the margin and a task
 *   of few, widely spread units asks the quantile;
 * - workers: units that ran at once in the calibration (a pool) share that sum;
 * - tail: the last units of a task end one by one, leaving workers idle.
 * Pure: no files, no clocks, so every figure can be worked out by hand in a test.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "project/project.h"
#include "files/summary.h"

/* Every task of an array within its limit this often, as far as the units' spread goes. */
#define ALL_TASKS_WITHIN 0.9

struct placed_unit {
	long long process, rank;
	size_t index; /* in the input's arrays */
};

static int by_process_then_rank(const void *a, const void *b)
{
	const struct placed_unit *x = a, *y = b;

	if (x->process != y->process)
		return (x->process > y->process) - (x->process < y->process);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * Put the k-th smallest of v[0..n) at v[k], the smaller before it and the larger after it
 * (Hoare's partition around a median of three). The projection asks a million units' figures
 * for a few percentiles each; a selection is a fraction of the sort um_percentile does.
 */
static void select_kth(double *v, ptrdiff_t n, ptrdiff_t k)
{
	ptrdiff_t lo = 0, hi = n - 1;

	while (hi > lo) {
		double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], pivot, t;
		ptrdiff_t i = lo, j = hi;

		pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		/* [lo, j] <= pivot <= [i, hi], and what lies between is the pivot */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double um_percentile_of(const double *v, size_t n, double q)
{
	double *copy = malloc(n * sizeof(*copy)), r, rank, frac, next;
	bool sort = n < 4096;
	size_t i, low;

	if (!copy) { /* the safe side of any percentile */
		for (r = v[0], i = 1; i < n; i++)
			r = v[i] > r ? v[i] : r;
		return r;
	}
	memcpy(copy, v, n * sizeof(*copy));
	/* a NaN, or a -0 the sort keeps in its place, read as um_percentile reads them */
	for (i = 0; i < n && !sort; i++)
		sort = isnan(copy[i]) || (copy[i] == 0 && signbit(copy[i]));
	if (sort) {
		r = um_percentile(copy, n, q);
		free(copy);
		return r;
	}
	/* um_percentile's interpolation, between the low-th and the next value in order */
	rank = q / 100.0 * (double)(n - 1);
	low = (size_t)rank;
	frac = rank - (double)low;
	select_kth(copy, (ptrdiff_t)n, (ptrdiff_t)low);
	if (low + 1 >= n) {
		r = copy[low];
	} else {
		for (next = copy[low + 1], i = low + 2; i < n; i++)
			next = copy[i] < next ? copy[i] : next;
		r = copy[low] + frac * (next - copy[low]);
	}
	free(copy);
	return r;
}

/*
 * u (in the input's order) by process, then rank: what qsort with by_process_then_rank gives
 * (glibc's is a stable merge sort), in one pass for a million units. A process's units have
 * ranks 0..k-1 (place_units), so each has its slot; the units of no known process (-1) keep
 * their order, then are sorted by rank. Returns -1, having moved nothing, when the places are
 * not those (out of range, or a slot taken twice): the caller then sorts.
 */
static int sort_by_process_then_rank(struct placed_unit *u, size_t n, size_t n_processes)
{
	size_t *first = calloc(n_processes + 2, sizeof(*first)), unknown = 0, i;
	struct placed_unit *out = malloc((n ? n : 1) * sizeof(*out));
	bool *taken = calloc(n ? n : 1, sizeof(*taken));
	int rc = -1;

	if (!first || !out || !taken)
		goto out;
	/* first[p + 1]: where process p's units begin (first[0]: the unknown process's) */
	for (i = 0; i < n; i++) {
		if (u[i].process < -1 || u[i].process >= (long long)n_processes)
			goto out;
		first[u[i].process + 2]++;
	}
	for (i = 1; i < n_processes + 2; i++)
		first[i] += first[i - 1];
	for (i = 0; i < n; i++) {
		size_t at;

		if (u[i].process < 0) {
			at = unknown++;
		} else {
			at = first[u[i].process + 1] + (size_t)u[i].rank;
			if (u[i].rank < 0 || at >= first[u[i].process + 2] || taken[at])
				goto out;
		}
		taken[at] = true;
		out[at] = u[i];
	}
	qsort(out, unknown, sizeof(*out), by_process_then_rank);
	memcpy(u, out, n * sizeof(*u));
	rc = 0;
out:
	free(first);
	free(out);
	free(taken);
	return rc;
}

/* A leading unit is warm-up: slower than 1.5x the later units' median, and either slower than
 * every later unit or it kept memory no later unit kept (so not merely a big unit first). */
static bool is_warmup(const struct project_input *in, size_t i, const struct time_model *tm)
{
	double kept = in->kept_bytes ? in->kept_bytes[i] : NAN;

	if (in->cycle_s[i] <= tm->warmup_threshold_s)
		return false;
	return in->cycle_s[i] > tm->warmup_later_max_s ||
	       (isfinite(kept) && isfinite(tm->warmup_later_kept_bytes) &&
		kept > tm->warmup_later_kept_bytes + UM_WARMUP_KEPT_BYTES);
}

/*
 * Mark the warm-up units: in each process with two or more units, its leading units (at most
 * the first half) that is_warmup says are, against the later halves of every such process.
 * Leaves warmup_threshold_s 0 when no process ran two units (nothing can be told).
 */
static void mark_warmup(const struct project_input *in, const struct placed_unit *u,
			bool *warmup, struct time_model *tm)
{
	double *later = malloc(in->n * sizeof(*later));
	size_t n_later = 0, start, end, j;

	if (!later)
		return;
	tm->warmup_later_kept_bytes = NAN;
	for (start = 0; start < in->n; start = end) {
		for (end = start; end < in->n && u[end].process == u[start].process; end++)
			;
		if (u[start].process < 0 || end - start < 2)
			continue;
		tm->tested_processes++;
		for (j = start + (end - start + 1) / 2; j < end; j++) {
			size_t i = u[j].index;
			double kept = in->kept_bytes ? in->kept_bytes[i] : NAN;

			later[n_later++] = in->cycle_s[i];
			if (in->cycle_s[i] > tm->warmup_later_max_s)
				tm->warmup_later_max_s = in->cycle_s[i];
			if (isfinite(kept) && !(kept <= tm->warmup_later_kept_bytes))
				tm->warmup_later_kept_bytes = kept;
		}
	}
	if (!n_later) {
		free(later);
		return;
	}
	tm->warmup_threshold_s = UM_WARMUP_FACTOR * um_percentile_of(later, n_later, 50);
	free(later);
	for (start = 0; start < in->n; start = end) {
		bool warmed = false;

		for (end = start; end < in->n && u[end].process == u[start].process; end++)
			;
		if (u[start].process < 0 || end - start < 2)
			continue;
		for (j = start; j < start + (end - start) / 2; j++) {
			if (!is_warmup(in, u[j].index, tm))
				break;
			warmup[u[j].index] = true;
			tm->warmup_units++;
			warmed = true;
		}
		tm->warmup_processes += warmed;
	}
}

/* Mean, sample standard deviation, p90 and max of the steady units' times. */
static void steady_statistics(const struct project_input *in, const bool *warmup,
			      struct time_model *tm)
{
	double *steady = malloc(in->n * sizeof(*steady)), sum = 0, squares = 0;
	size_t n = 0;

	for (size_t i = 0; i < in->n; i++)
		if (!warmup[i]) {
			if (steady)
				steady[n] = in->cycle_s[i];
			sum += in->cycle_s[i];
			n++;
		}
	tm->steady_n = n;
	tm->unit_mean_s = sum / (double)n;
	for (size_t i = 0; i < in->n; i++)
		if (!warmup[i]) {
			double d = in->cycle_s[i] - tm->unit_mean_s;

			squares += d * d;
			if (in->cycle_s[i] > tm->unit_max_s)
				tm->unit_max_s = in->cycle_s[i];
		}
	tm->unit_sd_s = n > 1 ? sqrt(squares / (double)(n - 1)) : 0;
	tm->unit_p90_s = steady ? um_percentile_of(steady, n, 90) : tm->unit_max_s;
	free(steady);
}

/* Each warmed process's excess over a steady unit: the largest, and all of them per unit. */
static void warmup_excess(const struct project_input *in, const struct placed_unit *u,
			  const bool *warmup, struct time_model *tm)
{
	double total = 0;
	size_t start, end;

	for (start = 0; start < in->n; start = end) {
		double excess = 0;

		for (end = start; end < in->n && u[end].process == u[start].process; end++)
			if (warmup[u[end].index])
				excess += in->cycle_s[u[end].index] - tm->unit_mean_s;
		if (excess > tm->warmup_max_s)
			tm->warmup_max_s = excess;
		total += excess;
	}
	tm->warmup_per_unit_s = total / (double)in->n;
}

int um_time_model(const struct project_input *in, const struct project_options *opt,
		  struct time_model *tm)
{
	struct placed_unit *u = calloc(in->n, sizeof(*u));
	bool *warmup = calloc(in->n, sizeof(*warmup));

	memset(tm, 0, sizeof(*tm));
	if (!u || !warmup) {
		free(u);
		free(warmup);
		return -1;
	}
	tm->fixed_s = in->fixed_s > 0 ? in->fixed_s : 0;
	tm->bound = opt->time_max;
	tm->workers_given = opt->workers > 0;
	tm->workers = opt->workers > 0 ? opt->workers
		      : in->workers_calibrated > 0 ? in->workers_calibrated : 1;
	/* a process replaced by another (workers recycled, a process per batch) warms up again */
	tm->workers_replaced = in->workers_calibrated > 0 &&
			       (long long)in->n_processes > in->workers_calibrated;
	if (in->process && in->rank) {
		for (size_t i = 0; i < in->n; i++)
			u[i] = (struct placed_unit){ in->process[i], in->rank[i], i };
		if (sort_by_process_then_rank(u, in->n, in->n_processes))
			qsort(u, in->n, sizeof(*u), by_process_then_rank);
		mark_warmup(in, u, warmup, tm);
	}
	steady_statistics(in, warmup, tm);
	if (tm->warmup_units)
		warmup_excess(in, u, warmup, tm);
	free(u);
	free(warmup);
	return 0;
}

double um_normal_quantile(double p)
{
	double lo = 0, hi = 40;

	/* bisection on the exact CDF (erfc): 64 halvings of [0, 40] reach a double's precision */
	for (int i = 0; i < 64; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(-mid / M_SQRT2) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void um_task_time(const struct time_model *tm, long long units, long long tasks,
		  struct task_time *tt)
{
	double n = (double)units;

	memset(tt, 0, sizeof(*tt));
	tt->workers = tm->workers < units ? tm->workers : units;
	if (tt->workers < 1)
		tt->workers = 1;
	tt->tasks = tasks > 1 ? tasks : 1;
	tt->units_sum_s = n * (tm->bound ? tm->unit_max_s : tm->unit_mean_s);
	tt->spread_s = tt->units_sum_s / (double)tt->workers;
	/* workers warm up side by side: once a task; replaced ones as often as they were */
	tt->warmup_s = tm->workers_replaced ? n * tm->warmup_per_unit_s / (double)tt->workers
					    : tm->warmup_max_s;
	tt->tail_s = (double)(tt->workers - 1) / (double)tt->workers *
		     (tm->bound ? tm->unit_max_s : tm->unit_p90_s);
	tt->total_s = tm->fixed_s + tt->warmup_s + tt->spread_s + tt->tail_s;
	/* P(every task within) = P(one task within)^tasks, the tasks' units being independent */
	tt->z = tm->bound ? 0 : um_normal_quantile(pow(ALL_TASKS_WITHIN, 1.0 / (double)tt->tasks));
	tt->quantile_s = tt->total_s + tt->z * tm->unit_sd_s * sqrt(n) / (double)tt->workers;
}

double um_task_request_s(const struct task_time *tt, double margin)
{
	double with_margin = tt->total_s * margin;

	return with_margin > tt->quantile_s ? with_margin : tt->quantile_s;
}
