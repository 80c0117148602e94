/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The task table of a job array: one row per task (a manifest, or a units stream whose tracer
 * left no manifest), each against the limits it ran under (run.limits), nearest a limit first,
 * grouped by job. The one model behind `summary --by-task` and the report's array page; it keeps
 * a few figures per task and never a parsed document (a million units in 200 files).
 */
#ifndef UM_TASKS_H
#define UM_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "files/units_file.h"

/* How a task ended, read from its manifest (um_task_classify). */
enum um_task_exit {
	UM_EXIT_UNKNOWN,   /* no manifest, or no exit recorded */
	UM_EXIT_OK,        /* exit status 0 */
	UM_EXIT_FAILED,    /* a nonzero status, or a signal neither limit explains */
	UM_EXIT_TIMED_OUT, /* SIGTERM/SIGKILL with the wall at its time limit */
	UM_EXIT_OOM,       /* SIGKILL with the charge at its memory limit */
};

/* A figure not known is negative (a count, seconds, bytes, CPUs): printed "-", written null. */
struct um_task_row {
	char *file;            /* the manifest, else the stream */
	char *task;            /* "3" (array task), else the file's name less its suffix */
	long long job;         /* the array job id, else the job id; -1: not a SLURM job */
	bool array;            /* job is an array job id */
	bool has_manifest;
	long long units_done, units_incomplete;
	double wall_s, time_limit_s;
	double peak_charge_bytes, memory_limit_bytes;
	double cpu_s;
	long long cpus;
	int exit_status, exit_signal; /* -1: none */
	long long oom_kills;          /* traced processes the OOM killer ended; -1: not recorded */
	enum um_task_exit exit;
	/* the task's slowest and biggest complete unit (-1: none) */
	double slowest_unit_s, biggest_unit_bytes;
	long long slowest_unit_index, biggest_unit_index;
};

struct um_task_table {
	struct um_task_row *rows; /* by job, then nearest a limit first (um_task_used) */
	size_t n;
};

/*
 * One row from what a reader has in hand (the page has its files read already): begin with the
 * file's path (-1: out of memory), add each unit, end with its manifest less its units (NULL for
 * a stream), which classifies the exit.
 */
int um_task_row_begin(struct um_task_row *r, const char *path);
void um_task_row_add_unit(struct um_task_row *r, const struct um_read_unit *u);
int um_task_row_end(struct um_task_row *r, const json_t *manifest);
/* Rows in the table's order: by job, then nearest a limit first. */
void um_task_table_sort(struct um_task_table *t);

/* The rows of n_files run files. Returns 0, or -1 with the file and line of a refusal in err. */
int um_task_table_read(struct um_task_table *t, const char *const *files, size_t n_files,
		       char *err, size_t errlen);
void um_task_table_free(struct um_task_table *t);

/* The largest share of a limit the task used (wall over time, charge over memory), or -1 when
 * neither is known: the order of the table, highest first. */
double um_task_used(const struct um_task_row *r);
/* The wall's share of the time limit, the charge's of the memory limit; -1 when not known. */
double um_task_time_used(const struct um_task_row *r);
double um_task_memory_used(const struct um_task_row *r);
/* The CPUs the task kept busy on average (cpu_s over wall_s), or -1. */
double um_task_cpus_used(const struct um_task_row *r);
/* SLURM's words, as sacct and seff say them: "COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY",
 * and "UNKNOWN" */
const char *um_task_exit_name(enum um_task_exit e);
/* The exit as the manifest's figures tell it: the OOM kills the kernel marked, exit_status,
 * exit_signal, and how close the task came to each limit. */
enum um_task_exit um_task_classify(const struct um_task_row *r);

/* "job 1234 array, 5 tasks" for the rows [from, to) of one job, into buf. */
void um_task_job_title(const struct um_task_table *t, size_t from, size_t to, char *buf,
		       size_t len);
/* The end of the job whose rows start at from. */
size_t um_task_job_end(const struct um_task_table *t, size_t from);

/* The table seff-style, a line per task, a heading per job. */
void um_print_task_table(FILE *out, const struct um_task_table *t);
/* The rows as a JSON array, figures null where unknown. */
json_t *um_task_table_json(const struct um_task_table *t);

#endif
