// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The task table on the terminal and as JSON (see tasks.h). */
#include <math.h>
#include <string.h>
#include "files/tasks.h"

#define COLS "%-10s %-13s %6s %10s %9s %9s %5s %10s %10s %5s %6s %5s\n"

/* H:MM:SS, as seff and sacct show a wall */
static const char *hms(char *buf, size_t len, double s)
{
	long long t = llround(s);

	if (s < 0)
		return "-";
	snprintf(buf, len, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
	return buf;
}

static const char *mib(char *buf, size_t len, double bytes)
{
	if (bytes < 0)
		return "-";
	snprintf(buf, len, "%.1fM", bytes / 1048576.0);
	return buf;
}

static const char *percent(char *buf, size_t len, double share)
{
	if (share < 0)
		return "-";
	snprintf(buf, len, "%.0f%%", 100.0 * share);
	return buf;
}

static const char *count(char *buf, size_t len, long long n)
{
	if (n < 0)
		return "-";
	snprintf(buf, len, "%lld", n);
	return buf;
}

static void print_row(FILE *out, const struct um_task_row *r)
{
	char done[24], inc[24], wall[32], tl[32], tp[16], ch[32], ml[32], mp[16], cu[24], cg[24];
	double cpus_used = um_task_cpus_used(r);

	if (cpus_used >= 0)
		snprintf(cu, sizeof(cu), "%.2f", cpus_used);
	fprintf(out, COLS, r->task, um_task_exit_name(r->exit), count(done, sizeof(done), r->units_done),
		count(inc, sizeof(inc), r->units_incomplete), hms(wall, sizeof(wall), r->wall_s),
		hms(tl, sizeof(tl), r->time_limit_s),
		percent(tp, sizeof(tp), um_task_time_used(r)),
		mib(ch, sizeof(ch), r->peak_charge_bytes), mib(ml, sizeof(ml), r->memory_limit_bytes),
		percent(mp, sizeof(mp), um_task_memory_used(r)),
		cpus_used >= 0 ? cu : "-", count(cg, sizeof(cg), r->cpus));
}

void um_print_task_table(FILE *out, const struct um_task_table *t)
{
	for (size_t from = 0, to; from < t->n; from = to) {
		char title[128];

		to = um_task_job_end(t, from);
		um_task_job_title(t, from, to, title, sizeof(title));
		fprintf(out, "%s%s\n", from ? "\n" : "", title);
		fprintf(out, COLS, "TASK", "STATE", "UNITS", "INCOMPLETE", "WALL", "TIMELIMIT", "TIME%",
			"MEMORY", "MEMLIMIT", "MEM%", "CPUS", "GIVEN");
		for (size_t i = from; i < to; i++)
			print_row(out, &t->rows[i]);
	}
	fprintf(out, "\nMEMORY: the task's peak memory (cgroup), what --mem is enforced on; "
		     "CPUS: cores used on average, GIVEN: --cpus-per-task\n");
	for (size_t i = 0; i < t->n; i++)
		if (!t->rows[i].has_manifest) {
			fprintf(out, "\n- : not known; a task with no manifest (its tracer was killed) "
				     "has only its units stream\n");
			break;
		}
}

static json_t *number_or_null(double x)
{
	return x >= 0 ? json_real(x) : json_null();
}

/* bytes as an integer where one holds them (a file from elsewhere may say 1e300) */
static json_t *bytes_or_null(double x)
{
	return x < 0 ? json_null() : x <= 9e18 ? json_integer((json_int_t)x) : json_real(x);
}

static json_t *integer_or_null(long long x)
{
	return x >= 0 ? json_integer(x) : json_null();
}

static json_t *row_json(const struct um_task_row *r)
{
	return json_pack("{s:s, s:s, s:o, s:b, s:b, s:s, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, "
			 "s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}, s:{s:o, s:o}}",
			 "task", r->task, "file", r->file, "job", integer_or_null(r->job),
			 "array", r->array, "manifest", r->has_manifest,
			 "exit", um_task_exit_name(r->exit),
			 "exit_status", integer_or_null(r->exit_status),
			 "exit_signal", integer_or_null(r->exit_signal),
			 "oom_kills", integer_or_null(r->oom_kills),
			 "units_done", (json_int_t)r->units_done,
			 "units_incomplete", (json_int_t)r->units_incomplete,
			 "wall_s", number_or_null(r->wall_s),
			 "time_limit_s", number_or_null(r->time_limit_s),
			 "peak_charge_bytes", bytes_or_null(r->peak_charge_bytes),
			 "memory_limit_bytes", bytes_or_null(r->memory_limit_bytes),
			 "cpu_s", number_or_null(r->cpu_s), "cpus", integer_or_null(r->cpus),
			 "cpus_used", number_or_null(um_task_cpus_used(r)),
			 "limit_used", number_or_null(um_task_used(r)),
			 "time_used", number_or_null(um_task_time_used(r)),
			 "memory_used", number_or_null(um_task_memory_used(r)),
			 "slowest_unit", "index", integer_or_null(r->slowest_unit_index),
			 "wall_s", number_or_null(r->slowest_unit_s),
			 "biggest_unit", "index", integer_or_null(r->biggest_unit_index),
			 "peak_rss_bytes", bytes_or_null(r->biggest_unit_bytes));
}

json_t *um_task_table_json(const struct um_task_table *t)
{
	json_t *jobs = json_array();

	for (size_t from = 0, to; from < t->n; from = to) {
		const struct um_task_row *first = &t->rows[from];
		json_t *tasks = json_array();
		char title[128];

		to = um_task_job_end(t, from);
		um_task_job_title(t, from, to, title, sizeof(title));
		for (size_t i = from; i < to; i++)
			json_array_append_new(tasks, row_json(&t->rows[i]));
		json_array_append_new(jobs, json_pack("{s:s, s:o, s:b, s:o}", "title", title, "job",
						      integer_or_null(first->job), "array",
						      first->array, "tasks", tasks));
	}
	return json_pack("{s:o}", "jobs", jobs);
}
