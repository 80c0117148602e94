// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <argp.h>
#include <stdarg.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "commands/cli.h"
#include "commands/exact_options.h"
#include "trace/slurm_job.h"
#include "common/log.h"

const char *argp_program_version = "unitmeter 0.1.0";
const char *argp_program_bug_address = NULL;

enum {
	OPT_UNITS_JSONL = 0x100,
	OPT_AS_ROOT,
	OPT_DURATION,
	OPT_RING_KIB,
	OPT_JSON,
	OPT_LOOKUP_AT_EXEC,
	OPT_OWNER,
	OPT_READY_FD,
	OPT_UNITS,
	OPT_TASKS,
	OPT_UNITS_PER_TASK,
	OPT_MARGIN,
	OPT_TIME_STAT,
	OPT_MAX_TIME,
	OPT_PARTITION,
	OPT_FORMAT,
	OPT_REPORT,
	OPT_WORKERS,
	OPT_SLURM_JOB,
	OPT_BY_TASK,
	OPT_TMP_DIR,
	OPT_EXPLAIN,
	OPT_NO_CHILDREN,
	OPT_CGROUP,
	OPT_JOB,
};

static const char usage_text[] =
	"usage: unitmeter COMMAND [OPTION...]\n"
	"\n"
	"Measure what each unit of work (one call of a fit function) costs, from the kernel:\n"
	"wall time, CPU time and cores, exact peak memory, bytes written.\n"
	"\n"
	"commands:\n"
	"  run      trace a command, its threads and every process it forks\n"
	"  attach   trace a running process and the processes it forks from now on\n"
	"  hw       print the hardware record\n"
	"  check    say whether this kernel can be traced, and exactly: its features, the programs\n"
	"           chosen, a trial load and attach\n"
	"  summary  summarise the units of one or more runs (manifests or .units.jsonl)\n"
	"  project  project a SLURM request (#SBATCH header) for the full run from a calibration\n"
	"  report   one HTML page of runs: the units' spread, processes and memory over time\n"
	"\n"
	"'unitmeter help COMMAND' (or 'unitmeter COMMAND -h') explains each one.\n"
	"\n"
	"exit status: run exits with its command's status, 125 when unitmeter itself fails, 126\n"
	"or 127 when the command cannot be run or is not found; the other commands exit 2 on an\n"
	"error.\n";

/* The options run and attach share. */
#define TRACE_OPTIONS                                                                           \
	{ "unit", 'u', "SPEC", 0,                                                              \
	  "A unit function: SYMBOL (in the command's executable), LIB:SYMBOL (LIB a path to an " \
	  "executable or shared library, also one loaded later with dlopen, or a soname such "  \
	  "as liblzma.so.5, found as the loader finds it), LIB:SYMBOL@VERSION (one version of " \
	  "a versioned symbol), or python:[MODULE:]QUALNAME or python:MODULE.QUALNAME (a "     \
	  "CPython function; MODULE may be one that re-exports it). Repeatable.",                \
	  0 },                                                                                   \
	{ "output", 'o', "FILE", 0, "Run manifest (JSON). Default: unitmeter-run.json", 0 },   \
	{ "units-jsonl", OPT_UNITS_JSONL, "FILE", 0,                                           \
	  "Units stream, one JSON object per finished unit, flushed at once. Default: beside " \
	  "the manifest, run.json -> run.units.jsonl", 0 },                                     \
	{ "quiet", 'q', NULL, 0, "No progress line per finished unit", 0 },                    \
	{ "report", OPT_REPORT, "FILE", 0,                                                     \
	  "Also write the HTML report of the run to FILE (as unitmeter report does)", 0 },     \
	{ "verbose", 'v', NULL, 0, "Say what is being done, and at the end each phase's time "   \
	  "(set-up, open, load, attach, the command, drain, write, detach); twice: libbpf's "   \
	  "debug output too; three times: the verifier's statistics of every program", 0 },    \
	{ "lookup-at-exec", OPT_LOOKUP_AT_EXEC, NULL, 0,                                       \
	  "Look for each bare SYMBOL in every program the traced processes exec (each held at " \
	  "its exec until its probes are attached), not in the command's executable: for a "    \
	  "shell or job script that runs the program with the unit function", 0 },               \
	{ "tmp-dir", OPT_TMP_DIR, "DIR", 0,                                                    \
	  "The node-local scratch directory (SLURM's --tmp): bytes written under it are "       \
	  "tmp_output_bytes. Default: the traced process's $TMPDIR, else /tmp", 0 },            \
	{ "ring-buffer-kib", OPT_RING_KIB, "KIB", OPTION_HIDDEN,                               \
	  "Ring buffer size (power of two)", 0 }

static const struct argp_option run_options[] = {
	TRACE_OPTIONS,
	{ "as-root", OPT_AS_ROOT, NULL, 0,
	  "Run the command as root. By default, under sudo it runs as the invoking user", 0 },
	{ 0 },
};

static const struct argp_option attach_options[] = {
	TRACE_OPTIONS,
	{ "pid", 'p', "PID", 0,
	  "The process to trace, with the processes it has forked (all their threads); the ones "
	  "forked from now on are traced whichever is given", 0 },
	{ "no-children", OPT_NO_CHILDREN, NULL, 0,
	  "With -p: leave out the processes PID forked before tracing started", 0 },
	{ "cgroup", OPT_CGROUP, "DIR", 0,
	  "Trace every process in this cgroup (v1 or v2; its directory) and below it, and those "
	  "that enter it later, until it is empty or removed; the memory charge is the cgroup's", 0 },
	{ "job", OPT_JOB, "JOBID[.STEP]", 0,
	  "On a SLURM node: trace the job's (or step's) cgroup here, as --cgroup, with the job's "
	  "ids and time limit (scontrol) in run.limits; JOBID may be an array task, 123_4", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0,
	  "Stop after this long (default: when the process exits, or at Ctrl-C)", 0 },
	{ "owner", OPT_OWNER, "UID:GID", 0,
	  "Hand the output files to this user and group (default: the sudo caller, else root)", 0 },
	{ "ready-fd", OPT_READY_FD, "FD", 0,
	  "Write \"ok\" to this open file descriptor and close it once the probes are attached "
	  "(closed without a word on failure): for a launcher that must not let the process run "
	  "untraced", 0 },
	{ "slurm-job", OPT_SLURM_JOB, "JOB,ARRAY_JOB,ARRAY_TASK,STEP,TIME_LIMIT_S", 0,
	  "The SLURM job, array job and task (\"-,-\" outside an array), step and time limit in "
	  "seconds (\"-\": none or unknown) of the process, recorded in the manifest's "
	  "run.limits (the SPANK plugin passes them)", 0 },
	{ 0 },
};

static const struct argp_option hw_options[] = {
	{ "output", 'o', "FILE", 0, "Write the record to FILE instead of standard output", 0 },
	{ 0 },
};

static const struct argp_option summary_options[] = {
	{ "json", OPT_JSON, NULL, 0, "Print the summary as JSON (the seed's keys) instead of the "
	  "table (with --by-task: the task table as JSON)", 0 },
	{ "by-task", OPT_BY_TASK, NULL, 0, "One line per task instead: its units, wall against its "
	  "time limit (TIME%), memory (cgroup) against its memory limit (MEM%), CPUs used against "
	  "given, and its SLURM state; nearest a limit first, a heading per job", 0 },
	{ 0 },
};

static const struct argp_option project_options[] = {
	{ "units", OPT_UNITS, "N", 0, "Units (fits) in the full run. Required", 0 },
	{ "tasks", OPT_TASKS, "K", 0, "Spread them over K array tasks", 0 },
	{ "units-per-task", OPT_UNITS_PER_TASK, "M", 0,
	  "Or: M units per array task (default: all in one task)", 0 },
	{ "margin", OPT_MARGIN, "F", 0,
	  "Multiply the memory and disk figures by F >= 1 (default 1.25), and the expected "
	  "time unless the p90 of the units' sum is larger", 0 },
	{ "time-stat", OPT_TIME_STAT, "p90|max", 0,
	  "p90 (default): --time from N x the mean unit, or the p90 of the sum of a task's units "
	  "(every task of the array within it 9 times in 10) when larger than the margin over it, "
	  "and the cores from the p90 unit's; max: every unit as slow and busy as the "
	  "slowest (the bound). Memory always uses the max", 0 },
	{ "workers", OPT_WORKERS, "W", 0,
	  "Units a task runs at once (a pool of W workers). Default: as many as ran at once in "
	  "the calibration. Sets --cpus-per-task to W x a unit's cores and spreads the units over "
	  "W; above the calibration's, each added worker's memory is added to --mem", 0 },
	{ "max-time", OPT_MAX_TIME, "D-HH:MM:SS", 0,
	  "The longest --time a task may ask (the partition's limit): more tasks when it would pass "
	  "it. Any SLURM time form: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS", 0 },
	{ "partition", OPT_PARTITION, "P", 0, "Add #SBATCH --partition=P", 0 },
	{ "json", OPT_JSON, NULL, 0,
	  "The same figures with their inputs and derivation as JSON, instead of the #SBATCH header",
	  0 },
	{ "explain", OPT_EXPLAIN, NULL, 0, "Under each #SBATCH line, the whole derivation of its "
	  "figure (the time model's parts, the memory basis), not a line or two", 0 },
	{ "format", OPT_FORMAT, "sbatch|json", OPTION_HIDDEN, "--format json is --json", 0 },
	{ 0 },
};

/* project's options without --units being required, and -o for the page */
static const struct argp_option report_options[] = {
	{ "output", 'o', "FILE", 0, "The page. Default: unitmeter-report.html", 0 },
	{ "units", OPT_UNITS, "N", 0,
	  "Add the SLURM request of a full run of N units, as unitmeter project computes it", 0 },
	{ "tasks", OPT_TASKS, "K", 0, "With --units: spread them over K array tasks", 0 },
	{ "units-per-task", OPT_UNITS_PER_TASK, "M", 0, "With --units: or M units per array task", 0 },
	{ "margin", OPT_MARGIN, "F", 0, "With --units: the margin (default 1.25)", 0 },
	{ "time-stat", OPT_TIME_STAT, "p90|max", 0, "With --units: as for project", 0 },
	{ "workers", OPT_WORKERS, "W", 0, "With --units: as for project", 0 },
	{ "max-time", OPT_MAX_TIME, "D-HH:MM:SS", 0, "With --units: as for project", 0 },
	{ "partition", OPT_PARTITION, "P", 0, "With --units: add #SBATCH --partition=P", 0 },
	{ 0 },
};

/*
 * A usage error as one line, "unitmeter run: what was wrong", exit 2. argp_error would add a
 * second line pointing at --help; the message already says what to write instead.
 */
static void cli_fail(const struct argp_state *state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void cli_fail(const struct argp_state *state, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s: ", state->name);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
	exit(um_exit_failed(((const struct um_options *)state->input)->command));
}

/*
 * getopt names an unknown option in one line of its own; argp then adds the --help hint on
 * its error stream, which goes nowhere instead. --help and --usage write to stdout, unchanged.
 */
static void quiet_argp_hints(struct argp_state *state)
{
	static FILE *null_stream;

	if (!null_stream)
		null_stream = fopen("/dev/null", "we");
	if (null_stream)
		state->err_stream = null_stream;
}

static int parse_double(const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	return (errno || end == text || *end || !isfinite(*out)) ? -1 : 0;
}

static int parse_ulong(const char *text, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	if (*text == '-')
		return -1;
	*out = strtoul(text, &end, 10);
	return (errno || end == text || *end || *out > max) ? -1 : 0;
}

/*
 * The options of what is traced and how long: attach's target, its outputs' owner, the SLURM
 * job, --ready-fd, --duration.
 */
/* run's command (from its first non-option on) and the checks once every option is read. */
static error_t parse_trace_args(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;

	switch (key) {
	case ARGP_KEY_ARG:
		if (o->command != UM_CMD_RUN)
			cli_fail(state, "unexpected argument '%s'", arg);
		/* the command starts at the first non-option, as with time(1) and strace(1) */
		o->command_argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_NO_ARGS:
		if (o->command == UM_CMD_RUN)
			cli_fail(state, "no command to run: unitmeter run [OPTION...] -- CMD [ARG...]");
		break;
	case ARGP_KEY_END:
		if (o->command == UM_CMD_ATTACH &&
		    (!!o->pid + !!o->cgroup + !!o->job[0]) != 1)
			cli_fail(state, "attach needs one of -p PID, --cgroup DIR or --job JOBID");
		if (o->no_children && !o->pid)
			cli_fail(state, "--no-children goes with -p PID");
		if (o->job[0] && o->slurm.set)
			cli_fail(state, "--job reads the job's ids itself: leave out --slurm-job");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_target_opt(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;
	unsigned long v;
	double d;

	switch (key) {
	case 'p':
		if (parse_ulong(arg, INT32_MAX, &v) || v == 0)
			cli_fail(state, "-p needs a process id (a positive number), not '%s'", arg);
		o->pid = (pid_t)v;
		break;
	case OPT_LOOKUP_AT_EXEC:
		o->lookup_at_exec = true;
		break;
	case OPT_NO_CHILDREN:
		o->no_children = true;
		break;
	case OPT_CGROUP:
		if (!*arg)
			cli_fail(state, "--cgroup needs a cgroup directory");
		o->cgroup = arg;
		break;
	case OPT_JOB:
		if (slurm_job_parse(arg, o->job, sizeof(o->job), o->job_step, sizeof(o->job_step)))
			cli_fail(state, "--job needs JOBID, JOBID.STEP or ARRAYJOB_TASK[.STEP] (STEP a "
				 "number, batch, extern or interactive), not '%s'", arg);
		break;
	case OPT_OWNER: {
		unsigned long uid, gid;
		char *colon = strchr(arg, ':');

		if (!colon)
			cli_fail(state, "--owner needs UID:GID (numbers), not '%s'", arg);
		*colon = '\0';
		if (parse_ulong(arg, UINT32_MAX - 1, &uid) || parse_ulong(colon + 1, UINT32_MAX - 1, &gid))
			cli_fail(state, "--owner needs UID:GID (numbers), not '%s:%s'", arg, colon + 1);
		o->owner_set = true;
		o->owner_uid = (uid_t)uid;
		o->owner_gid = (gid_t)gid;
		break;
	}
	case OPT_READY_FD:
		if (parse_ulong(arg, INT32_MAX, &v) || v < 3)
			cli_fail(state, "--ready-fd needs a file descriptor above 2, not '%s'", arg);
		if (fcntl((int)v, F_GETFD) < 0)
			cli_fail(state, "--ready-fd %lu is not an open file descriptor", v);
		o->ready_fd = (int)v;
		break;
	case OPT_SLURM_JOB:
		if (slurm_ids_parse(&o->slurm, arg))
			cli_fail(state, "--slurm-job needs JOB,ARRAY_JOB,ARRAY_TASK,STEP,TIME_LIMIT_S "
				 "(-,- outside an array; - for no time limit), not '%s'", arg);
		break;
	case OPT_DURATION:
		if (parse_double(arg, &d) || d <= 0 || d > 1e7)
			cli_fail(state, "--duration needs a positive number of seconds, not '%s'", arg);
		o->duration_s = d;
		break;
	default:
		return parse_trace_args(key, arg, state);
	}
	return 0;
}

/* run's and attach's options: the specs, the outputs, the ring; the rest parse_target_opt's */
static error_t parse_trace_opt(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;
	unsigned long v;

	switch (key) {
	case ARGP_KEY_INIT:
		quiet_argp_hints(state);
		break;
	case 'u':
		if (o->n_specs == UM_MAX_SPECS)
			cli_fail(state, "at most %d --unit specs", UM_MAX_SPECS);
		if (!*arg)
			cli_fail(state, "--unit needs a SPEC: SYMBOL, LIB:SYMBOL or python:QUALNAME");
		if (strlen(arg) > UM_SPEC_TEXT_MAX)
			cli_fail(state, "--unit SPEC is longer than %d bytes", UM_SPEC_TEXT_MAX);
		o->specs[o->n_specs++] = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_UNITS_JSONL:
		o->units_jsonl = arg;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_REPORT:
		o->report = arg;
		break;
	case 'v':
		um_verbosity++;
		break;
	case OPT_RING_KIB:
		if (parse_ulong(arg, 1UL << 20, &v) || v < 4 || (v & (v - 1)))
			cli_fail(state, "--ring-buffer-kib must be a power of two from 4 to 1048576");
		o->ring_kib = v;
		break;
	case OPT_AS_ROOT:
		o->as_root = true;
		break;
	case OPT_TMP_DIR:
		if (!*arg)
			cli_fail(state, "--tmp-dir needs a directory");
		o->tmp_dir = arg;
		break;
	default:
		return parse_target_opt(key, arg, state);
	}
	return 0;
}

/* hw and check: no arguments; each command's table admits only its own options */
static error_t parse_hw_opt(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		quiet_argp_hints(state);
		break;
	case 'o':
		o->output = arg;
		break;
	case 'v': /* check */
		um_verbosity++;
		break;
	case ARGP_KEY_ARG:
		cli_fail(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_summary_opt(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;

	(void)arg;
	switch (key) {
	case ARGP_KEY_INIT:
		quiet_argp_hints(state);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_BY_TASK:
		o->by_task = true;
		break;
	case ARGP_KEY_ARGS:
		o->inputs = &state->argv[state->next];
		o->n_inputs = state->argc - state->next;
		state->next = state->argc;
		break;
	case ARGP_KEY_NO_ARGS:
		cli_fail(state, "name at least one run manifest, .units.jsonl file or directory of "
			   "them");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static long long parse_count(struct argp_state *state, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(arg, 1000000000000UL, &v) || v == 0)
		cli_fail(state, "%s needs a positive whole number, not '%s'", opt, arg);
	return (long long)v;
}

/* project's, summary's and report's files, and the checks once every option is read. */
static error_t parse_project_args(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;
	struct project_options *p = &o->project;

	switch (key) {
	case ARGP_KEY_ARG:
		/* files and options in any order: "calib.json --units 500" reads naturally */
		if (!o->inputs)
			o->inputs = calloc(state->argc + 1, sizeof(*o->inputs));
		if (!o->inputs)
			cli_fail(state, "out of memory keeping the file names");
		o->inputs[o->n_inputs++] = arg;
		break;
	case ARGP_KEY_NO_ARGS:
		cli_fail(state, "name at least one run manifest, .units.jsonl file or directory of "
			   "them");
		break;
	case ARGP_KEY_END:
		if (!p->units_total && o->command == UM_CMD_REPORT &&
		    (p->tasks || p->units_per_task || p->max_time_s || p->partition || p->workers))
			cli_fail(state, "--tasks, --units-per-task, --max-time, --workers and "
				   "--partition shape the request of --units N: give --units too");
		if (!p->units_total && o->command == UM_CMD_PROJECT)
			cli_fail(state, "--units N is required: how many units the full run has");
		if (p->tasks && p->units_per_task)
			cli_fail(state, "--tasks and --units-per-task both set the split: give one");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_project_opt(int key, char *arg, struct argp_state *state)
{
	struct um_options *o = state->input;
	struct project_options *p = &o->project;

	switch (key) {
	case ARGP_KEY_INIT:
		quiet_argp_hints(state);
		break;
	case 'o': /* report */
		o->output = arg;
		break;
	case OPT_UNITS:
		p->units_total = parse_count(state, "--units", arg);
		break;
	case OPT_TASKS:
		p->tasks = parse_count(state, "--tasks", arg);
		break;
	case OPT_UNITS_PER_TASK:
		p->units_per_task = parse_count(state, "--units-per-task", arg);
		break;
	case OPT_MARGIN:
		if (parse_double(arg, &p->margin) || p->margin < 1 || p->margin > 100)
			cli_fail(state, "--margin needs a factor from 1 to 100 (1.25 adds a "
				   "quarter), not '%s'", arg);
		break;
	case OPT_TIME_STAT:
		if (strcmp(arg, "p90") && strcmp(arg, "max"))
			cli_fail(state, "--time-stat is p90 or max, not '%s'", arg);
		p->time_max = !strcmp(arg, "max");
		break;
	case OPT_WORKERS:
		p->workers = parse_count(state, "--workers", arg);
		if (p->workers > 100000)
			cli_fail(state, "--workers is units a task runs at once, at most 100000, not "
				   "'%s'", arg);
		break;
	case OPT_MAX_TIME:
		p->max_time_s = um_parse_slurm_time(arg);
		if (p->max_time_s < 60)
			cli_fail(state, "--max-time needs a SLURM time of at least a minute "
				   "(MM, HH:MM:SS, D-HH:MM:SS), not '%s'", arg);
		break;
	case OPT_PARTITION:
		if (!*arg || strpbrk(arg, " \t\n#"))
			cli_fail(state, "--partition needs a partition name, not '%s'", arg);
		p->partition = arg;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_FORMAT:
		if (strcmp(arg, "sbatch") && strcmp(arg, "json"))
			cli_fail(state, "--format is sbatch or json, not '%s'", arg);
		o->json = !strcmp(arg, "json");
		break;
	case OPT_EXPLAIN:
		p->explain = true;
		break;
	default:
		return parse_project_args(key, arg, state);
	}
	return 0;
}

/* -h and --help on every command, and nothing else: argp's -? and --usage are off */
static const struct argp_option help_options[] = {
	{ "help", 'h', NULL, 0, "Give this help and exit", -1 },
	{ 0 },
};

static error_t parse_help_opt(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	if (key != 'h')
		return ARGP_ERR_UNKNOWN;
	argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
	return 0;
}

static const struct argp help_argp = { help_options, parse_help_opt, 0, 0, 0, 0, 0 };
static const struct argp_child help_child[] = { { &help_argp, 0, NULL, 0 }, { 0 } };

static const struct argp run_argp = {
	run_options, parse_trace_opt, "-- CMD [ARG...]",
	"Run CMD and measure it: every thread and every process it forks, every RSS change, every "
	"CPU slice, and each call of the --unit functions as one unit. CMD runs in a memory cgroup "
	"of its own, whose charge (what SLURM's --mem is enforced on: a page shared by forked "
	"processes once, page cache too) is measured beside RSS. Exit status is CMD's own; "
	"unitmeter's own failures exit 2.\v"
	"EXAMPLES:\n"
	"  sudo unitmeter run -- ./simulate --seed 1\n"
	"      whole-command figures, as /usr/bin/time -v but exact\n"
	"  sudo unitmeter run --unit fit_unit -o calib.json -- ./fit_demo\n"
	"      one unit per call of fit_unit(); units stream in calib.units.jsonl\n"
	"  sudo unitmeter run --unit /usr/lib/libfit.so:fit -- ./driver\n"
	"      a function in a shared library\n"
	"  sudo unitmeter run --unit fit_unit --lookup-at-exec -- sh job.sh\n"
	"      fit_unit in whichever program job.sh runs\n",
	help_child, 0, 0,
};

static const struct argp attach_argp = {
	attach_options, parse_trace_opt, "-p PID | --cgroup DIR | --job JOBID[.STEP]",
	"Trace a running process with the processes it has forked and forks from now on, until it "
	"exits, the duration ends, or Ctrl-C; or every process of a cgroup or of a SLURM job on "
	"this node, until none is left. Each process's figures start when it is taken. Units "
	"already open when tracing starts are not reported.\v"
	"EXAMPLES:\n"
	"  sudo unitmeter attach -p 4242 --unit fit_unit --duration 60\n"
	"  sudo unitmeter attach -p 4242 --unit liblzma.so.5:lzma_code\n"
	"      a shell and the xz it runs now, each call of lzma_code a unit\n"
	"  sudo unitmeter attach --job 1234_7 --unit fit_unit -o task7.json\n"
	"      a running array task on this node, with its limits\n"
	"  sudo unitmeter attach --cgroup /sys/fs/cgroup/system.slice/fits.service\n"
	"  sudo unitmeter attach -p $$ --unit fit_unit --lookup-at-exec -o job.json\n"
	"      a shell: fit_unit is looked up in the programs it runs from now on\n",
	help_child, 0, 0,
};

static const struct argp hw_argp = {
	hw_options, parse_hw_opt, "[-o FILE]",
	"Print the hardware record: CPU, cores, frequency, memory, platform, kernel, BTF.\v"
	"EXAMPLES:\n  unitmeter hw\n  unitmeter hw -o hardware.json\n",
	help_child, 0, 0,
};

static const struct argp_option check_options[] = {
	{ "verbose", 'v', NULL, 0, "Say more; twice: libbpf's own log, with the verifier's", 0 },
	{ 0 },
};

static const struct argp check_argp = {
	check_options, parse_hw_opt, "",
	"Will unitmeter work here, and exactly? Prints what the running kernel offers (BTF, "
	"tracefs, lockdown, its memory counters, the BPF features used), which build of the "
	"programs it takes, then loads and attaches them once and detaches them. Exit status 0 "
	"when tracing works here, 2 when it does not, with the reason on one line. Run it on a "
	"cluster node before a long job.\v"
	"EXAMPLES:\n  sudo unitmeter check\n  srun -N1 sudo unitmeter check\n",
	help_child, 0, 0,
};

static const struct argp summary_argp = {
	summary_options, parse_summary_opt, "FILE|DIR...",
	"Summarise the units of run manifests or units streams; several files (the tasks of one job "
	"array) are merged. Prints the summary JSON (the seed's keys) and a table. A directory "
	"(the SPANK plugin's unitmeter-out/) stands for its manifests and the streams without one. "
	"With --tasks, prints instead one line per task against the limits it ran under (seff-"
	"style, nearest a limit first): '-' where a figure is not known.\v"
	"EXAMPLES:\n"
	"  unitmeter summary calib.json\n"
	"  unitmeter summary --json out/task-*.units.jsonl\n"
	"  unitmeter summary --tasks unitmeter-out/\n"
	"      every task of a job array: which came close to its --time or --mem, which was "
	"killed\n",
	help_child, 0, 0,
};

static const struct argp project_argp = {
	project_options, parse_project_opt, "FILE|DIR... --units N",
	"Project the SLURM request of the full run from a calibration run (manifests or units "
	"streams; several are merged). --time = fixed + warm-up + units / workers + tail: the "
	"run's time before its first unit and after its last, once per task; each worker's first "
	"units when markedly slower than its later ones, once; the p90 of the sum of the task's "
	"units (each its wall plus the gap to its process's next), spread over the workers (as "
	"many as ran at once, or --workers); the last units ending one by one. --mem from the "
	"peak memory charge of the run's cgroup (peak RSS where no charge was measured); "
	"--cpus-per-task from the workers x a unit's CPU utilisation, --tmp from the bytes they "
	"wrote, and --array from the split; --gres=gpu:N from the most devices a unit held "
	"device memory on, with a comment giving the device memory per GPU one unit needs (its "
	"peak on one device x the margin, traced through the CUDA driver API; SLURM has no "
	"request for it: choose a GPU type). Each #SBATCH line follows comments saying how it was "
	"derived; notes at the end say what the calibration cannot tell (JAX's preallocated "
	"block among them).\v"
	"EXAMPLES:\n"
	"  unitmeter project calib.json --units 5000 --tasks 50\n"
	"  unitmeter project calib.json --units 5000 --units-per-task 100 --max-time 4:00:00 \\\n"
	"      --partition short > job.sh; cat body.sh >> job.sh; sbatch job.sh\n"
	"  unitmeter project calib.units.jsonl --units 200 --format json\n"
	"  unitmeter project pool-of-2.json --units 2000 --tasks 10 --workers 16\n"
	"      calibrated with 2 workers on a laptop, run with 16 on a node\n",
	help_child, 0, 0,
};

static const struct argp report_argp = {
	report_options, parse_project_opt, "FILE|DIR...",
	"Write one HTML page of run manifests and units streams (several are merged, as summary "
	"does): each run (command, hardware, totals, warnings), how the units' wall, CPU, cores, "
	"peak RSS and peak charge spread (median and p90 marked), one lane per process with its "
	"units over time, the group's memory over time (every change, so no spike is missed), the "
	"per-unit table (click a column to sort) and, with --units, the projected SLURM request. "
	"The page fetches nothing: copy it off the node and open it anywhere. The tasks of a SLURM "
	"job array (a directory such as unitmeter-out/, or their files) make the array's page "
	"instead: every task against its time and memory limits, the killed ones flagged, and the "
	"request the next array should ask beside the one it ran under.\v"
	"EXAMPLES:\n"
	"  unitmeter report calib.json -o calib.html\n"
	"  unitmeter report calib.json --units 5000 --tasks 50 -o calib.html\n"
	"      with the request of a 5000-fit job array in 50 tasks\n"
	"  unitmeter report out/task-*.units.jsonl\n"
	"  unitmeter report unitmeter-out/ -o array.html\n"
	"      a job array's tasks, each against its limits\n"
	"      units streams alone: no timeline (it is in the run manifest)\n"
	"  sudo unitmeter run --unit fit_unit -o calib.json --report calib.html -- ./fit_demo\n",
	help_child, 0, 0,
};

/* summary's --tasks was a switch where project's and report's is a count */
static const char *const summary_renamed[] = { "tasks", "by-task", NULL };

static const struct {
	const char *name;
	enum um_command command;
	const struct argp *argp;
	const char *const *renamed;
} commands[] = {
	{ "run", UM_CMD_RUN, &run_argp, NULL },
	{ "attach", UM_CMD_ATTACH, &attach_argp, NULL },
	{ "hw", UM_CMD_HW, &hw_argp, NULL },
	{ "check", UM_CMD_CHECK, &check_argp, NULL },
	{ "summary", UM_CMD_SUMMARY, &summary_argp, summary_renamed },
	{ "project", UM_CMD_PROJECT, &project_argp, NULL },
	{ "report", UM_CMD_REPORT, &report_argp, NULL },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int command_index(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return (int)i;
	return -1;
}

static int unknown_command(const char *name)
{
	um_err("unknown command '%s': use run, attach, hw, check, summary, project or report "
	       "(unitmeter --help)", name);
	return 2;
}

int um_parse_args(int argc, char **argv, struct um_options *o)
{
	char *help_argv[4], name[64], why[256];
	const char *cmd;
	int idx, c;

	memset(o, 0, sizeof(*o));
	o->ready_fd = -1;
	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || (!strcmp(cmd, "help") && argc == 2)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		puts(argp_program_version);
		return 0;
	}
	/* `unitmeter help CMD` is `unitmeter CMD --help` */
	if (!strcmp(cmd, "help")) {
		if (command_index(argv[2]) < 0)
			return unknown_command(argv[2]);
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = "--help";
		help_argv[3] = NULL;
		argv = help_argv;
		argc = 3;
		cmd = argv[1];
	}
	c = command_index(cmd);
	if (c < 0)
		return unknown_command(cmd);
	o->command = commands[c].command;
	o->project.margin = 1.25;
	if (exact_options_check(commands[c].argp, commands[c].renamed, argc - 2, argv + 2,
				o->command == UM_CMD_RUN, why, sizeof(why))) {
		fprintf(stderr, "unitmeter %s: %s\n", cmd, why);
		return um_exit_failed(o->command);
	}
	/* argp names the program in its messages: "unitmeter run: ..." */
	snprintf(name, sizeof(name), "unitmeter %s", cmd);
	program_invocation_short_name = name;
	program_invocation_name = name;
	argv[1] = name;
	argp_err_exit_status = um_exit_failed(o->command);
	/* argp exits by itself after --help (0) or a usage error */
	argp_parse(commands[c].argp, argc - 1, argv + 1, ARGP_IN_ORDER | ARGP_NO_HELP, &idx, o);
	argv[1] = (char *)cmd;
	program_invocation_short_name = "unitmeter";
	program_invocation_name = "unitmeter";
	return -1;
}
