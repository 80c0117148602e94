// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* unitmeter: what each unit of work costs, measured from the kernel. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "commands/check.h"
#include "commands/cli.h"
#include "common/fileio.h"
#include "trace/hw.h"
#include "page/html.h"
#include "project/project.h"
#include "common/log.h"
#include "commands/session.h"
#include "files/run_dir.h"
#include "files/summary.h"
#include "files/tasks.h"
#include "files/units_file.h"
#include "trace/tracer.h"

static int cmd_hw(const struct um_options *o)
{
	json_t *hw = hw_capture("");
	FILE *out = stdout;
	int rc = 0;

	if (o->output) {
		out = um_create_output(o->output, 0, 0);
		if (!out) {
			um_err("cannot write %s: %s", o->output, strerror(errno));
			json_decref(hw);
			return 2;
		}
	}
	if (json_dumpf(hw, out, JSON_REAL_PRECISION(15) | JSON_INDENT(2)) || fputc('\n', out) == EOF)
		rc = 2;
	if (out != stdout && fclose(out))
		rc = 2;
	if (rc)
		um_err("cannot write the hardware record: %s", strerror(errno));
	json_decref(hw);
	return rc;
}

/* `summary --by-task`: the task table, as lines or as JSON. */
static int cmd_task_table(const struct um_options *o)
{
	struct um_task_table t;
	char err[1024];

	if (um_task_table_read(&t, (const char *const *)o->inputs, (size_t)o->n_inputs, err,
			       sizeof(err))) {
		um_err("%s", err);
		return 2;
	}
	if (o->json) {
		json_t *j = um_task_table_json(&t);

		json_dumpf(j, stdout, JSON_REAL_PRECISION(15) | JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		um_print_task_table(stdout, &t);
	}
	um_task_table_free(&t);
	if (fflush(stdout) || ferror(stdout)) {
		um_err("cannot write the task table: %s", strerror(errno));
		return 2;
	}
	return 0;
}

static int cmd_summary(const struct um_options *o)
{
	char err[1024];
	json_t *summary;
	bool *unitless;

	if (o->by_task)
		return cmd_task_table(o);
	unitless = calloc((size_t)o->n_inputs, sizeof(*unitless));
	if (!unitless) {
		um_err("out of memory");
		return 2;
	}
	summary = um_summarise_files((const char *const *)o->inputs, (size_t)o->n_inputs, unitless,
				     err, sizeof(err));
	if (!summary) {
		um_err("%s", err);
		free(unitless);
		return 2;
	}
	/* a word, not a failure: a task may have died before its first unit */
	for (int i = 0; i < o->n_inputs; i++)
		if (unitless[i])
			um_warn("%s holds no unit", o->inputs[i]);
	free(unitless);
	if (o->json) {
		json_dumpf(summary, stdout, JSON_REAL_PRECISION(15) | JSON_INDENT(2));
		fputc('\n', stdout);
	} else {
		printf("%d file%s\n", o->n_inputs, o->n_inputs == 1 ? "" : "s");
		um_print_summary_table(stdout, summary);
	}
	json_decref(summary);
	if (fflush(stdout) || ferror(stdout)) {
		um_err("cannot write the summary: %s", strerror(errno));
		return 2;
	}
	return 0;
}

static int cmd_project(const struct um_options *o)
{
	const char *const *files = (const char *const *)o->inputs;
	struct project_input in;
	struct projection p;
	char err[1024];
	int rc = 2;

	if (um_project_load(files, o->n_inputs, &in, err, sizeof(err)) ||
	    um_project(&in, &o->project, &p, err, sizeof(err))) {
		um_err("%s", err);
		goto out;
	}
	if (o->json) {
		json_t *j = um_projection_json(&p, &in, &o->project, files, o->n_inputs);

		json_dumpf(j, stdout, JSON_REAL_PRECISION(10) | JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		um_print_sbatch(stdout, &p, &o->project, files, o->n_inputs);
	}
	rc = fflush(stdout) || ferror(stdout) ? 2 : 0;
	if (rc)
		um_err("cannot write the projection: %s", strerror(errno));
out:
	um_project_input_free(&in);
	return rc;
}

static int cmd_report(const struct um_options *o)
{
	struct html_request req = {
		.files = (const char *const *)o->inputs,
		.n_files = (size_t)o->n_inputs,
		.output = o->output ? o->output : "unitmeter-report.html",
		.project = o->project.units_total ? &o->project : NULL,
	};
	char err[1024];

	if (html_report_write(&req, err, sizeof(err))) {
		um_err("%s", err);
		return 2;
	}
	fprintf(stderr, "report: %s\n", req.output);
	return 0;
}

/*
 * The readers of a job array (summary, project, report) allocate and free arrays of a million
 * figures several times (a sorted copy per percentile, the time model's). glibc maps each one
 * past its threshold afresh and unmaps it when freed: every page faulted in again, a third of
 * `project`'s time on a million units. Kept in the heap and reused instead (32 MiB, glibc's
 * largest threshold; a few tens of MiB more at the peak).
 */
static void keep_big_arrays(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int main(int argc, char **argv)
{
	struct um_options opts;
	int rc = um_parse_args(argc, argv, &opts);

	if (rc >= 0)
		return rc;
	if (opts.command == UM_CMD_SUMMARY || opts.command == UM_CMD_PROJECT ||
	    opts.command == UM_CMD_REPORT) {
		char err[1024];
		char **files;
		int n, dropped;

		keep_big_arrays();
		/* a directory (unitmeter-out/) read as its tasks' files */
		if (um_expand_inputs(opts.inputs, opts.n_inputs, &files, &n, &dropped, err,
				     sizeof(err))) {
			um_err("%s", err);
			return 2;
		}
		if (dropped)
			um_warn("%d file name%s skipped: a file named twice, or a units stream named "
				"with its manifest (which holds the same units); each task is read once",
				dropped, dropped == 1 ? "" : "s");
		if (opts.command != UM_CMD_SUMMARY)
			free(opts.inputs);
		opts.inputs = files;
		opts.n_inputs = n;
	}
	switch (opts.command) {
	case UM_CMD_RUN:
		return session_run(&opts);
	case UM_CMD_ATTACH:
		return session_attach(&opts);
	case UM_CMD_HW:
		return cmd_hw(&opts);
	case UM_CMD_CHECK:
		return command_check(stdout);
	case UM_CMD_SUMMARY:
		rc = cmd_summary(&opts);
		break;
	case UM_CMD_PROJECT:
		rc = cmd_project(&opts);
		break;
	case UM_CMD_REPORT:
		rc = cmd_report(&opts);
		break;
	default:
		return 2;
	}
	um_inputs_free(opts.inputs, opts.n_inputs);
	return rc;
}
