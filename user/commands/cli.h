/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command line: one options struct, parsed and checked before the kernel is touched. */
#ifndef UM_CLI_H
#define UM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "project/project.h"
#include "trace/limits.h"
#include "unitmeter.h"

enum um_command {
	UM_CMD_RUN,
	UM_CMD_ATTACH,
	UM_CMD_HW,
	UM_CMD_CHECK,
	UM_CMD_SUMMARY,
	UM_CMD_PROJECT,
	UM_CMD_REPORT,
};

struct um_options {
	enum um_command command;
	const char *output;      /* -o */
	const char *units_jsonl; /* --units-jsonl; NULL: beside the manifest */
	const char *report;      /* run, attach --report: the HTML page; NULL: none */
	const char *specs[UM_MAX_SPECS];
	size_t n_specs;
	bool as_root;
	bool quiet;
	bool json;       /* summary, project --json: JSON on stdout instead of the table */
	bool by_task;    /* summary --by-task: one line per task */
	bool lookup_at_exec; /* bare SYMBOL specs: look in each program exec'd, not the current one */
	bool owner_set;      /* --owner: hand the output files to owner_uid:owner_gid */
	uid_t owner_uid;
	gid_t owner_gid;
	int ready_fd; /* attach --ready-fd: "ok\n" once probes are attached; -1 none */
	struct slurm_ids slurm; /* attach --slurm-job: the SLURM task it traces (the SPANK plugin) */
	pid_t pid;
	bool no_children;   /* attach --no-children: -p PID without what it forked before */
	const char *cgroup; /* attach --cgroup: a cgroup directory; NULL: none */
	char job[64];       /* attach --job: the job ("123", "123_4"); "": none */
	char job_step[16];  /* its step; "": the whole job */
	double duration_s; /* attach --duration; 0: until the process exits */
	unsigned long ring_kib;
	char **command_argv; /* run: CMD [ARG...] */
	char **inputs;       /* summary: files; project, report: files, a list to free */
	int n_inputs;
	struct project_options project;
	const char *tmp_dir; /* run, attach --tmp-dir; NULL: $TMPDIR, else /tmp */
};

/*
 * unitmeter's own exit statuses (the man page's EXIT STATUS). run exits with its command's
 * status, so its own failures take 125, as env(1) and timeout(1) do, a status programs rarely
 * use; 126 and 127 are a command that cannot be run or was not found. The other commands: 2.
 */
#define UM_STATUS_RUN_FAILED 125
#define UM_STATUS_FAILED 2

static inline int um_exit_failed(enum um_command command)
{
	return command == UM_CMD_RUN ? UM_STATUS_RUN_FAILED : UM_STATUS_FAILED;
}

/*
 * Fill opts from argv. Returns 0 to go on, or an exit status to leave with at once (0 after
 * --help, um_exit_failed() after a usage error, which has been printed as one line).
 */
int um_parse_args(int argc, char **argv, struct um_options *opts);


#endif
