// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The task table of a job array (see tasks.h). */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "common/grow.h"
#include "files/tasks.h"

/*
 * A kill is put on a limit when the task reached 90% of it: the charge is sampled (about a
 * millisecond apart, timeline.c) and the OOM killer acts on the last page over the limit; the
 * task's wall starts after the job's, which SLURM times, and SLURM's check runs every 30 s.
 */
#define NEAR_LIMIT 0.9

static const char *file_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The file's name less .units.jsonl or .json: the SPANK plugin's JOB.STEP.TASK */
static char *file_stem(const char *path)
{
	static const char *const suffixes[] = { ".units.jsonl", ".jsonl", ".json" };
	const char *base = file_base(path);
	size_t n = strlen(base);

	for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
		size_t s = strlen(suffixes[k]);

		if (n > s && !strcmp(base + n - s, suffixes[k]))
			return strndup(base, n - s);
	}
	return strdup(base);
}

/* A stream alone names its array task only in its name: ARRAYJOB_ARRAYTASK.STEP.TASK */
static void ids_from_stem(struct um_task_row *r, const char *stem)
{
	long long job, task;
	int end = 0;

	if (sscanf(stem, "%lld_%lld.%n", &job, &task, &end) == 2 && end > 0 && job > 0 &&
	    task >= 0) {
		r->job = job;
		r->array = true;
		free(r->task);
		r->task = NULL;
		if (asprintf(&r->task, "%lld", task) < 0)
			r->task = NULL;
	}
}

static long long integer_or(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static int cmp_pid(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static bool is_slurmstepd(const json_t *p)
{
	const char *comm = json_string_value(json_object_get(p, UM_PROCESS_COMM));

	return comm && !strcmp(comm, "slurmstepd");
}

/*
 * attach --cgroup and --job take a cgroup's processes and have no root whose end is the run's.
 * A job ends as its tasks do: the processes SLURM's slurmstepd forked (the batch script, a
 * step's tasks), or, with no slurmstepd taken, those whose parent was not taken. Known only when
 * every taken process was seen to exit: the first task a signal ended, else the first nonzero
 * status, else 0. Anything less (one still running at the stop, a lost exit) leaves it unknown.
 */
static void exit_from_processes(struct um_task_row *r, const json_t *run)
{
	const json_t *procs = json_object_get(run, UM_RUN_PER_PROCESS), *p;
	size_t n = json_array_size(procs), i, tasks = 0;
	long long *pids, *stepds, status = 0, signal = -1;
	size_t n_stepds = 0;

	if (!n || !(pids = calloc(n, sizeof(*pids))))
		return;
	stepds = calloc(n, sizeof(*stepds));
	if (!stepds) {
		free(pids);
		return;
	}
	json_array_foreach(procs, i, p) {
		const char *st = json_string_value(json_object_get(p, UM_PROCESS_STATUS));

		if (!st || strcmp(st, "exited"))
			goto out;
		pids[i] = integer_or(p, UM_PROCESS_PID);
		if (is_slurmstepd(p))
			stepds[n_stepds++] = pids[i];
	}
	qsort(pids, n, sizeof(*pids), cmp_pid);
	qsort(stepds, n_stepds, sizeof(*stepds), cmp_pid);
	json_array_foreach(procs, i, p) {
		long long ppid = integer_or(p, UM_PROCESS_PPID);
		long long st = integer_or(p, UM_PROCESS_EXIT_STATUS), sig = integer_or(p, UM_PROCESS_EXIT_SIGNAL);

		if (is_slurmstepd(p) ||
		    (bsearch(&ppid, pids, n, sizeof(*pids), cmp_pid) &&
		     !bsearch(&ppid, stepds, n_stepds, sizeof(*stepds), cmp_pid)))
			continue;
		tasks++;
		if (st < 0 && sig < 0)
			goto out;
		if (sig >= 0 && signal < 0)
			signal = sig;
		if (st > 0 && status == 0)
			status = st;
	}
	if (tasks) {
		r->exit_signal = (int)signal;
		r->exit_status = signal >= 0 ? -1 : (int)status;
	}
out:
	free(stepds);
	free(pids);
}

/* What the manifest says beside its units: the run's figures, its exit and its limits. */
static int row_from_manifest(struct um_task_row *r, const json_t *m)
{
	const json_t *run = json_object_get(m, UM_MANIFEST_RUN);
	const json_t *lim = json_object_get(run, UM_RUN_LIMITS);
	long long array_job = integer_or(lim, UM_LIMITS_SLURM_ARRAY_JOB_ID);
	long long array_task = integer_or(lim, UM_LIMITS_SLURM_ARRAY_TASK_ID);
	long long job = integer_or(lim, UM_LIMITS_SLURM_JOB_ID);

	r->has_manifest = true;
	r->wall_s = um_json_number(run, UM_RUN_WALL_S, -1);
	r->cpu_s = um_json_number(run, UM_RUN_CPU_S, -1);
	r->peak_charge_bytes = um_json_number(run, UM_RUN_PEAK_CHARGE_BYTES, -1);
	r->exit_status = (int)integer_or(run, UM_RUN_EXIT_STATUS);
	r->exit_signal = (int)integer_or(run, UM_RUN_EXIT_SIGNAL);
	r->oom_kills = integer_or(run, UM_RUN_OOM_KILLS);
	r->time_limit_s = um_json_number(lim, UM_LIMITS_TIME_LIMIT_S, -1);
	r->memory_limit_bytes = um_json_number(lim, UM_LIMITS_MEMORY_LIMIT_BYTES, -1);
	r->cpus = integer_or(lim, UM_LIMITS_CPUS);
	if (r->exit_status < 0 && r->exit_signal < 0)
		exit_from_processes(r, run);
	if (array_job >= 0 && array_task >= 0) {
		r->job = array_job;
		r->array = true;
		free(r->task);
		if (asprintf(&r->task, "%lld", array_task) < 0)
			r->task = NULL;
		return r->task ? 0 : -1;
	}
	if (job >= 0)
		r->job = job;
	return 0;
}

void um_task_row_add_unit(struct um_task_row *r, const struct um_read_unit *u)
{
	double wall = um_unit_number(u, UM_F_WALL_S, 0);
	double peak = um_unit_number(u, UM_F_PEAK_RSS_BYTES, 0);
	long long index = um_unit_integer(u, UM_F_INDEX, -1);

	if (!um_unit_complete(u)) {
		r->units_incomplete++;
		return;
	}
	r->units_done++;
	if (wall > r->slowest_unit_s)
		r->slowest_unit_s = wall, r->slowest_unit_index = index;
	if (peak > r->biggest_unit_bytes)
		r->biggest_unit_bytes = peak, r->biggest_unit_index = index;
}

static int count_unit(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t)
{
	(void)t;
	um_task_row_add_unit(ctx, u);
	return 0;
}

int um_task_row_begin(struct um_task_row *r, const char *path)
{
	*r = (struct um_task_row){
		.job = -1, .wall_s = -1, .time_limit_s = -1, .peak_charge_bytes = -1,
		.memory_limit_bytes = -1, .cpu_s = -1, .cpus = -1, .exit_status = -1,
		.exit_signal = -1, .oom_kills = -1, .slowest_unit_s = -1, .biggest_unit_bytes = -1,
		.slowest_unit_index = -1, .biggest_unit_index = -1,
	};
	r->file = strdup(path);
	r->task = file_stem(path);
	return r->file && r->task ? 0 : -1;
}

int um_task_row_end(struct um_task_row *r, const json_t *manifest)
{
	if (manifest && row_from_manifest(r, manifest))
		return -1;
	if (!manifest)
		ids_from_stem(r, r->task);
	r->exit = um_task_classify(r);
	return r->task ? 0 : -1;
}

static int read_row(struct um_task_row *r, const char *path, char *err, size_t errlen)
{
	json_t *manifest = NULL;
	int rc;

	if (um_task_row_begin(r, path)) {
		snprintf(err, errlen, "out of memory reading %s", path);
		return -1;
	}
	rc = um_read_units(path, count_unit, r, &manifest, err, errlen);
	if (!rc && um_task_row_end(r, manifest)) {
		snprintf(err, errlen, "out of memory reading %s", path);
		rc = -1;
	}
	json_decref(manifest);
	return rc;
}

static double share(double used, double limit)
{
	return used >= 0 && limit > 0 ? used / limit : -1;
}

double um_task_time_used(const struct um_task_row *r)
{
	return share(r->wall_s, r->time_limit_s);
}

double um_task_memory_used(const struct um_task_row *r)
{
	return share(r->peak_charge_bytes, r->memory_limit_bytes);
}

double um_task_used(const struct um_task_row *r)
{
	return fmax(um_task_time_used(r), um_task_memory_used(r));
}

double um_task_cpus_used(const struct um_task_row *r)
{
	return r->cpu_s >= 0 && r->wall_s > 0 ? r->cpu_s / r->wall_s : -1;
}

enum um_task_exit um_task_classify(const struct um_task_row *r)
{
	bool near_memory = um_task_memory_used(r) >= NEAR_LIMIT;
	bool near_time = um_task_time_used(r) >= NEAR_LIMIT;
	/* a batch shell outlives the child a signal killed and exits 128 + its number */
	int signal = r->exit_signal >= 0 ? r->exit_signal
		     : r->exit_status > 128 && r->exit_status < 128 + 65 ? r->exit_status - 128 : -1;

	/* the kernel marked a traced process as the OOM killer's victim: no guess needed */
	if (r->oom_kills > 0)
		return UM_EXIT_OOM;
	if (r->exit_status == 0)
		return UM_EXIT_OK;
	if (signal < 0)
		return r->exit_status > 0 ? UM_EXIT_FAILED : UM_EXIT_UNKNOWN;
	/* SLURM's time limit sends SIGTERM first, then SIGKILL after KillWait to a task that
	 * outlived it; the OOM killer sends SIGKILL alone (told by the charge only in manifests
	 * from before oom_kills, and never when they say 0) */
	if ((signal == SIGTERM || signal == SIGKILL) && near_time)
		return UM_EXIT_TIMED_OUT;
	if (signal == SIGKILL && near_memory && r->oom_kills < 0)
		return UM_EXIT_OOM;
	return UM_EXIT_FAILED;
}

const char *um_task_exit_name(enum um_task_exit e)
{
	switch (e) {
	case UM_EXIT_OK:
		return "COMPLETED";
	case UM_EXIT_FAILED:
		return "FAILED";
	case UM_EXIT_TIMED_OUT:
		return "TIMEOUT";
	case UM_EXIT_OOM:
		return "OUT_OF_MEMORY";
	case UM_EXIT_UNKNOWN:
		break;
	}
	return "UNKNOWN";
}

/* By job (SLURM jobs by id, plain runs last), then nearest a limit first, then task. */
static int by_job_then_limit(const void *a, const void *b)
{
	const struct um_task_row *x = a, *y = b;
	double ux = um_task_used(x), uy = um_task_used(y);

	if (x->job != y->job)
		return x->job < 0 ? 1 : y->job < 0 ? -1 : x->job < y->job ? -1 : 1;
	if (x->array != y->array)
		return x->array ? -1 : 1;
	if (ux != uy)
		return ux > uy ? -1 : 1;
	return strverscmp(x->task, y->task);
}

int um_task_table_read(struct um_task_table *t, const char *const *files, size_t n_files,
		       char *err, size_t errlen)
{
	t->rows = calloc(n_files ? n_files : 1, sizeof(*t->rows));
	t->n = 0;
	if (!t->rows) {
		snprintf(err, errlen, "out of memory for %zu tasks", n_files);
		return -1;
	}
	for (size_t f = 0; f < n_files; f++) {
		int rc = read_row(&t->rows[t->n], files[f], err, errlen);

		t->n++;
		if (rc) {
			um_task_table_free(t);
			return -1;
		}
	}
	um_task_table_sort(t);
	return 0;
}

void um_task_table_sort(struct um_task_table *t)
{
	qsort(t->rows, t->n, sizeof(*t->rows), by_job_then_limit);
}

void um_task_table_free(struct um_task_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->rows[i].file);
		free(t->rows[i].task);
	}
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

size_t um_task_job_end(const struct um_task_table *t, size_t from)
{
	size_t to = from;

	while (to < t->n && t->rows[to].job == t->rows[from].job &&
	       t->rows[to].array == t->rows[from].array)
		to++;
	return to;
}

void um_task_job_title(const struct um_task_table *t, size_t from, size_t to, char *buf,
		       size_t len)
{
	const struct um_task_row *r = &t->rows[from];
	size_t n = to - from;

	if (r->job < 0)
		snprintf(buf, len, "%zu run%s outside SLURM", n, n == 1 ? "" : "s");
	else
		snprintf(buf, len, "job %lld%s, %zu task%s", r->job, r->array ? " array" : "", n,
			 n == 1 ? "" : "s");
}
