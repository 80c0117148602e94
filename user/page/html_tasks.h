/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The array page's own sections (html.c draws them when its files are the tasks of SLURM
 * jobs): per job, a strip of every task's headroom and the sortable task table (files/tasks.h),
 * then the slowest and the biggest units with their task, and the limits the array ran under.
 */
#ifndef UM_HTML_TASKS_H
#define UM_HTML_TASKS_H

#include <stdio.h>
#include "files/tasks.h"

/* Whether the rows are an array's (several files, a SLURM job among them): the array page. */
bool html_tasks_are_an_array(const struct um_task_table *t);
/* The page's title: each job's ("job 4242 array, 5 tasks"), joined by "; ". */
void html_tasks_title(FILE *out, const struct um_task_table *t);
/* Per job: the headroom strip and the task table. */
void html_tasks_section(FILE *out, const struct um_task_table *t);
/* The slowest and the biggest units, each with its task. */
void html_tasks_extremes(FILE *out, const struct um_task_table *t);
/* The request the array ran under (its first task's limits), beside the projection. */
void html_tasks_ran_under(FILE *out, const struct um_task_table *t);

#endif
