// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The SPANK plugin on a real one-node SLURM (tools/slurm/slurm-up.sh, cgroup mode): a calibration
 * run of the demo, its projected #SBATCH request, a job array submitted by an unprivileged user
 * with --unitmeter, traced in every task; a job whose --mem is too small; a job whose tracer
 * cannot start; a Python job; a Python pool of two workers, calibrated, projected and run as an
 * array; an array whose tasks end three ways under one --time and --mem: completed, killed for
 * time, killed for memory; an array started without the plugin, one task attached by id
 * (attach --job). Truths from outside the tool: SLURM's own job states and times, the
 * owner and size of the files the demo wrote, the pids the pool's fits reported, the calibration
 * runs, the memory limit read from the job's cgroup while it ran, and the workloads' own sizes.
 *
 * One test, because one node can run one cluster: slurmd's cgroups and ports are per node, and
 * the suite's .init runs in each test's own process (Criterion runs two at once under --jobs 2),
 * so a second test would start a second cluster on the same ports and cgroups, and its .fini
 * would stop the munged the first one uses.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define DEMO_FITS 8 /* fits per run of the demo: the units of one array task */
#define TASKS 3
/* Below the demo's 96 MiB scratch buffer (fit 3) and above SLURM's 30 MB floor (MinRAMSpace) */
#define SMALL_MEM_MIB 64
/* task/cgroup raises a smaller --mem to this (cgroup.conf MinRAMSpace, in MB, default 30) */
#define MIN_RAM_SPACE_MIB 30
#define SPIKE_FIT 3
/* Jobs of a few seconds; SLURM's own scheduling adds about a second each */
#define JOB_WAIT_S 60
/* g. the pool: py_units.py's executor pool of two workers, fits of 0.3 s of CPU each; a task
 * runs three times the calibration's units, so the projection extrapolates */
#define POOL_WORKERS 2
#define POOL_CALIB_UNITS 8
#define POOL_TASK_UNITS 24
#define POOL_TASKS 3
/* The tracer writes the manifest, its last output, once the task's process has exited: just
 * after SLURM sees the task end (seconds later in an emulated guest, make vmtest-slurm) */
#define MANIFEST_WAIT_S 30
/*
 * h. The limits array: LIMITS_TASKS tasks under --time=1 (SLURM's least, a minute) and
 * --mem=LIMITS_MEM_MIB, each running `units --mode spikes` fits of UNIT_MIB; task TIME_TASK's
 * last fit sleeps past the limit, task OOM_TASK's last fit touches OOM_MIB.
 */
#define LIMITS_TASKS 4
#define LIMITS_MEM_MIB 64
#define LIMITS_TIME "1:00"
#define TIME_TASK 1
#define OOM_TASK 2
#define UNIT_MIB 8
#define OOM_MIB 200
/*
 * slurmctld checks time limits every 30 s (PERIODIC_TIMEOUT, fixed in its source), so a
 * 1-minute task gets SIGTERM 60 to 90 s after it starts, SIGKILL KillWait (5 s) later; in an
 * emulated guest each task's tracer also takes half a minute to load
 */
#define LIMITS_WAIT_S 240
/*
 * i. The array attached by id: ATTACH_TASKS tasks of the pool, ATTACH_WORKERS workers each
 * running ATTACH_UNITS fits of UNIT_MIB and ATTACH_CPU_MS; task ATTACH_TASK is attached. Its
 * --time and --mem are what `summary --by-task` must print: 0:05:00 and 200.0M.
 */
#define ATTACH_TASKS 2
#define ATTACH_TASK 0
#define ATTACH_WORKERS 2
#define ATTACH_UNITS 3
#define ATTACH_CPU_MS 50
#define ATTACH_TIME_MIN 5
#define ATTACH_MEM_MIB 200

static char top[64];       /* private temp dir of the whole test */
static char state_dir[96]; /* SLURM_TEST_DIR */
static bool cluster_up;
static pid_t teardown_guard; /* see start_teardown_guard */

static const char *env_dir(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

/* Run a shell command built with printf; its exit status, or -1. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

/*
 * A process that tears the cluster down should this one die without its .fini: Criterion kills
 * a test past its timeout, and its slurmctld and slurmd then held the ports the next run's
 * slurm-up.sh needs. The guard waits for the end of a pipe whose write end only this process
 * holds (close-on-exec: no daemon inherits it), with none of the test's other files open.
 */
static void start_teardown_guard(const char *tools)
{
	int ends[2];
	pid_t pid;

	cr_assert_eq(pipe2(ends, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		char byte;

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(1);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != ends[0])
				close(fd);
		setsid(); /* a Ctrl-C of the test run reaches the test, not its guard */
		for (ssize_t got = 1; got > 0 || (got < 0 && errno == EINTR);)
			got = read(ends[0], &byte, 1);
		execl("/bin/sh", "sh", "-c",
		      "SLURM_TEST_DIR=\"$1/cluster\" timeout 60 \"$0/slurm-down.sh\"; rm -rf \"$1\"",
		      tools, top, (char *)NULL);
		_exit(127);
	}
	close(ends[0]);
	teardown_guard = pid; /* ends[1] stays open in this process alone until it ends */
}

static void slurm_up(void)
{
	const char *plugin = env_dir("SPANK_PLUGIN", ".output/unitmeter_spank.so");
	const char *tools = env_dir("SLURM_TOOLS", "tools/slurm");
	char um[4096], path[160];
	FILE *f;

	require_tracing();
	if (sh("command -v slurmctld slurmd sbatch munged >/dev/null"))
		cr_skip_test("SLURM is not installed (make deps installs slurm-wlm and munge)");
	if (access(plugin, R_OK))
		cr_skip_test("no SPANK plugin at %s (make build-test builds it)", plugin);
	cr_assert_not_null(realpath(unitmeter_bin(), um), "no unitmeter at %s", unitmeter_bin());

	snprintf(top, sizeof(top), "/tmp/um-slurm-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
	/* the job user must reach its files and the plugin (sbatch loads it as that user) */
	chmod(top, 0755);
	start_teardown_guard(tools);
	snprintf(state_dir, sizeof(state_dir), "%s/cluster", top);
	cr_assert_eq(sh("mkdir -p %s/bin %s/jobs && cp %s %s/bin/unitmeter_spank.so && "
			"chmod -R a+rX %s/bin %s/jobs", top, top, plugin, top, top, top), 0);
	snprintf(path, sizeof(path), "%s/plugstack.conf", top);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	/* SPANK_READY_TIMEOUT: the tracer's start bound for an emulated guest (make vmtest-slurm) */
	fprintf(f, "required %s/bin/unitmeter_spank.so unitmeter=%s%s%s\n", top, um,
		getenv("SPANK_READY_TIMEOUT") ? " ready_timeout=" : "",
		getenv("SPANK_READY_TIMEOUT") ? getenv("SPANK_READY_TIMEOUT") : "");
	cr_assert_eq(fclose(f), 0);

	setenv("SLURM_TEST_DIR", state_dir, 1);
	setenv("SLURM_TEST_PLUGSTACK", path, 1);
	/* the test is about cgroup mode: the tracer leaves the job's cgroups, --mem is the kernel's */
	setenv("SLURM_TEST_CGROUP", "yes", 1);
	snprintf(path, sizeof(path), "%s/etc/slurm.conf", state_dir);
	setenv("SLURM_CONF", path, 1);
	cluster_up = true; /* from here on, tear down whatever part came up */
	cr_assert_eq(sh("timeout 60 %s/slurm-up.sh 2>%s/up.err", tools, top), 0,
		     "slurm-up.sh failed; see %s/up.err and %s/log", top, state_dir);
}

static void slurm_down(void)
{
	const char *tools = env_dir("SLURM_TOOLS", "tools/slurm");

	if (teardown_guard > 0) { /* torn down here, as the guard would */
		kill(teardown_guard, SIGKILL);
		waitpid(teardown_guard, NULL, 0);
		teardown_guard = 0;
	}
	if (cluster_up && sh("timeout 60 %s/slurm-down.sh 2>/dev/null", tools))
		cr_log_warn("slurm-down.sh failed; state left in %s", state_dir);
	cluster_up = false;
	if (top[0] && sh("rm -rf '%s'", top))
		cr_log_warn("could not remove %s", top);
	top[0] = '\0';
}

/* h's time-killed task alone takes 60 to 95 s, the others running beside it; an emulated
 * guest (make vmtest-slurm) adds its tracers' slow start */
TestSuite(slurm, .init = slurm_up, .fini = slurm_down, .timeout = 400);

/* ------------------------------------------------------------------------------- helpers */

/* [D-]HH:MM:SS or MM:SS, as scontrol prints times, in seconds. */
static long slurm_seconds(const char *s)
{
	long d = 0, a = 0, b = 0, c = 0;
	const char *dash = strchr(s, '-');

	if (dash) {
		d = strtol(s, NULL, 10);
		s = dash + 1;
	}
	if (sscanf(s, "%ld:%ld:%ld", &a, &b, &c) == 3)
		return d * 86400 + a * 3600 + b * 60 + c;
	if (sscanf(s, "%ld:%ld", &a, &b) == 2)
		return d * 86400 + a * 60 + b;
	cr_assert_fail("not a SLURM time: %s", s);
	return -1;
}

/* The value of KEY=... in one `scontrol show job -o` line. */
static void field(const char *line, const char *key, char *buf, size_t size)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p && !strncmp(line, pat + 1, strlen(pat) - 1))
		p = line - 1;
	cr_assert_not_null(p, "no %s in: %s", key, line);
	p += strlen(pat);
	n = strcspn(p, " \n");
	cr_assert_lt(n, size);
	memcpy(buf, p, n);
	buf[n] = '\0';
}

static bool job_finished(const char *state)
{
	static const char *const busy[] = { "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
					    "SUSPENDED", "REQUEUED", "RESIZING" };

	for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++)
		if (!strcmp(state, busy[i]))
			return false;
	return true;
}

/*
 * Poll `scontrol show job -o ID` every 0.2 s (sbatch --wait backs off to 32 s between its polls)
 * until every line (one per array task) is in a final state; the last output.
 */
static char *wait_job_for(const char *id, int expect_lines, int wait_s)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	time_t until = time(NULL) + wait_s;
	char *out = NULL;

	for (;;) {
		int status, lines = 0;
		bool done = true;
		char state[64];

		free(out);
		out = sh_out(&status, "scontrol show job -o %s 2>&1", id);
		for (char *l = out; *l; l = strchr(l, '\n') + 1) {
			if (strncmp(l, "JobId=", 6))
				break;
			lines++;
			field(l, "JobState", state, sizeof(state));
			done &= job_finished(state);
			if (!strchr(l, '\n'))
				break;
		}
		if (status == 0 && lines == expect_lines && done)
			return out;
		cr_assert(time(NULL) < until, "job %s not finished after %d s:\n%s", id, wait_s, out);
		nanosleep(&pause, NULL);
	}
}

static char *wait_job(const char *id, int expect_lines)
{
	return wait_job_for(id, expect_lines, JOB_WAIT_S);
}

/* Every line of a units stream, each checked to be one complete JSON object. */
static json_t *read_jsonl(const char *path)
{
	json_t *arr = json_array();
	char line[65536];
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "no units stream %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		json_error_t e;
		json_t *v = json_loads(line, 0, &e);

		cr_assert(v && json_is_object(v), "%s: a line is not a JSON object (%s): %s", path,
			  e.text, line);
		json_array_append_new(arr, v);
	}
	fclose(f);
	return arr;
}

static void wait_for_file(const char *path)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	time_t until = time(NULL) + MANIFEST_WAIT_S;

	while (access(path, F_OK)) {
		cr_assert(time(NULL) < until, "%s not written %d s after the job ended", path,
			  MANIFEST_WAIT_S);
		nanosleep(&pause, NULL);
	}
}

static void expect_owner(const char *path, uid_t uid)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_expect_eq(st.st_uid, uid, "%s belongs to uid %u, not the job's user %u", path,
		     (unsigned)st.st_uid, (unsigned)uid);
}

/*
 * Write the batch script jobs/NAME (printf-style) and submit it as the unprivileged job user
 * from its working directory; the job id into id.
 */
static void submit_job(const char *name, const char *cwd, char *id, size_t size, const char *fmt,
		       ...) __attribute__((format(printf, 5, 6)));
static void submit_job(const char *name, const char *cwd, char *id, size_t size, const char *fmt,
		       ...)
{
	char script[256];
	va_list ap;
	int status;
	char *out;
	FILE *f;

	snprintf(script, sizeof(script), "%s/jobs/%s", top, name);
	f = fopen(script, "w");
	cr_assert_not_null(f, "%s: %s", script, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	cr_assert_eq(fclose(f), 0);
	chmod(script, 0644);
	out = sh_out(&status, "cd %s && runuser -u nobody -- sbatch --parsable %s 2>&1", cwd, script);
	cr_assert_eq(status, 0, "sbatch %s failed: %s", script, out);
	cr_assert_gt(snprintf(id, size, "%ld", strtol(out, NULL, 10)), 0);
	free(out);
}

/* What follows "#SBATCH NAME" (e.g. "--mem=") in a projected header, to the line's end. */
static const char *directive(const char *header, const char *name)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\n#SBATCH %s", name);
	p = strstr(header, pat);
	cr_assert_not_null(p, "no #SBATCH %s in the projection:\n%s", name, header);
	return p + strlen(pat);
}

/*
 * g. The pool's calibration (one run of POOL_CALIB_UNITS fits on POOL_WORKERS workers) and the
 * array projected from it, POOL_TASKS tasks of POOL_TASK_UNITS fits: its header, checked for
 * the pool's cores and for a time model that counts the workers and the warm-up.
 */
static char *pool_projection(const char *py_units)
{
	char calib[200], want[64], time_line[1024];
	const char *line;
	char *header;
	json_t *run;
	int status;

	snprintf(calib, sizeof(calib), "%s/pool-calib.json", top);
	/*
	 * --cpus-per-task is the workers x a unit's CPU utilisation, so the pool must keep its two
	 * cores against whatever else this machine runs (other tests, a build), as a task does on
	 * cores SLURM gave it alone. With sched autogroup (Debian's default) nice counts only
	 * within a session, so the run gets a session of its own whose autogroup is at nice -20;
	 * plain nice -20 where there is no autogroup. Beside a build, at nice 0, the units got a
	 * third of a core each and the projection asked for one core.
	 */
	cr_assert_eq(sh("setsid --wait sh -c 'echo -20 >/proc/self/autogroup 2>/dev/null; "
			"exec nice -n -20 \"$@\"' sh %s run -q --unit python:pool_fit -o %s -- "
			"/usr/bin/python3 %s --mode pool --start executor --units %d "
			">%s/pool-calib.out 2>&1", unitmeter_bin(), calib, py_units,
			POOL_CALIB_UNITS, top), 0,
		     "pool calibration failed; see %s/pool-calib.out", top);
	run = json_load_file(calib, 0, NULL);
	cr_assert_not_null(run, "%s is not JSON", calib);
	cr_assert_eq(jnum(jget(run, "summary"), "n_units"), POOL_CALIB_UNITS);
	json_decref(run);
	header = sh_out(&status, "%s project %s --units %d --units-per-task %d --format sbatch",
			unitmeter_bin(), calib, POOL_TASKS * POOL_TASK_UNITS, POOL_TASK_UNITS);
	cr_assert_eq(status, 0, "unitmeter project failed: %s", header);
	/* each worker keeps a core busy: the pool needs two, which the 2-CPU node has */
	snprintf(want, sizeof(want), "%d\n", POOL_WORKERS);
	cr_assert_eq(strncmp(directive(header, "--cpus-per-task="), want, strlen(want)), 0,
		     "a pool of %d workers:\n%s", POOL_WORKERS, header);
	cr_assert_eq(strncmp(directive(header, "--array="), "0-2\n", 4), 0, "pool:\n%s", header);
	line = strstr(header, "\n# --time: ");
	cr_assert_not_null(line, "no --time comment in the pool's projection:\n%s", header);
	snprintf(time_line, sizeof(time_line), "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
	snprintf(want, sizeof(want), "over %d workers", POOL_WORKERS);
	cr_assert(strstr(time_line, want) && strstr(time_line, "warm-up"),
		  "the --time comment does not count the workers and the warm-up: %s", time_line);
	cr_log_info("pool projection:\n%s", header);
	return header;
}

/*
 * g. One task of the pool's array: its stream holds its POOL_TASK_UNITS fits, complete, each
 * run by one of the workers whose pids the fits themselves reported in the job's output; the
 * memory charge the tracer saw stayed under the projected --mem.
 */
static void check_pool_task(const char *out_dir, const char *id, int task, double mem_limit)
{
	char path[300], line[65536];
	long long pids[POOL_TASK_UNITS];
	json_t *report = NULL, *list, *u, *manifest_json, *charge;
	size_t n_pids = 0, i, j;
	FILE *f;

	/* the last line py_units.py prints: its fits, each with the pid of the worker that ran
	 * it */
	snprintf(path, sizeof(path), "%s/pool-%s_%d.out", out_dir, id, task);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "{\"mode\": \"pool\"", 15)) {
			json_decref(report);
			report = json_loads(line, 0, NULL);
		}
	fclose(f);
	cr_assert_not_null(report, "no report of py_units.py in %s", path);
	cr_assert_eq(json_array_size(jget(report, "fits")), POOL_TASK_UNITS, "%s", path);
	json_array_foreach(jget(report, "fits"), i, u) {
		long long pid = (long long)jnum(u, "pid");

		for (j = 0; j < n_pids && pids[j] != pid; j++)
			;
		if (j == n_pids)
			pids[n_pids++] = pid;
	}
	cr_expect_eq(n_pids, POOL_WORKERS, "%s: fits ran in %zu processes", path, n_pids);

	snprintf(path, sizeof(path), "%s/pool-um/%s_%d.batch.0.json", out_dir, id, task);
	wait_for_file(path);
	manifest_json = json_load_file(path, 0, NULL);
	cr_assert_not_null(manifest_json, "%s is not JSON", path);
	/* SLURM's state is the truth for --mem (not OUT_OF_MEMORY, checked by the caller); the
	 * charge the tracer read from the task's memory cgroup, which the kernel holds to --mem,
	 * is below it too when the tracer has one */
	charge = json_object_get(jget(manifest_json, "run"), "peak_charge_bytes");
	if (json_is_number(charge)) {
		cr_expect_leq(json_number_value(charge), mem_limit,
			      "%s: charge %.1f MiB, --mem %.1f MiB", path,
			      json_number_value(charge) / MIB_F, mem_limit / MIB_F);
	} else {
		char *why = json_dumps(json_object_get(jget(manifest_json, "run"), "charge"),
				       JSON_COMPACT);

		/* info: a logged warning would fail the suite's exit status with every test passed */
		cr_log_info("%s: no memory charge: %s", path, why);
		free(why);
	}
	/* the limits it ran under: the pool's two cores, and the memory limit task/cgroup
	 * enforced, which is the --mem it asked, raised to cgroup.conf's MinRAMSpace (30 MiB by
	 * default) below that: what was enforced, not what was asked */
	{
		const json_t *limits = jget(jget(manifest_json, "run"), "limits");
		double enforced = mem_limit > MIN_RAM_SPACE_MIB * MIB_F ? mem_limit
									: MIN_RAM_SPACE_MIB * MIB_F;

		cr_expect_eq(jnum(limits, "cpus"), POOL_WORKERS, "%s", path);
		cr_expect_eq(jnum(limits, "memory_limit_bytes"), enforced,
			     "%s: memory limit %.1f MiB, --mem %.1f MiB", path,
			     jnum(limits, "memory_limit_bytes") / MIB_F, mem_limit / MIB_F);
		cr_expect_eq(jnum(limits, "slurm_array_task_id"), task);
	}
	snprintf(path, sizeof(path), "%s/pool-um/%s_%d.batch.0.units.jsonl", out_dir, id, task);
	list = read_jsonl(path);
	cr_expect_eq(json_array_size(list), POOL_TASK_UNITS, "%s: %zu units", path,
		     json_array_size(list));
	json_array_foreach(list, i, u) {
		long long pid = (long long)jnum(u, "pid");

		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete", "%s: unit %zu",
				 path, i);
		cr_expect_str_eq(json_string_value(jget(u, "spec")), "python:pool_fit");
		for (j = 0; j < n_pids && pids[j] != pid; j++)
			;
		cr_expect_lt(j, n_pids, "%s: unit %zu in pid %lld, which ran no fit", path, i, pid);
	}
	cr_log_info("pool task %d: %zu units in %zu workers, charge %.1f MiB of %.1f", task,
		    json_array_size(list), n_pids,
		    json_is_number(charge) ? json_number_value(charge) / MIB_F : -1,
		    mem_limit / MIB_F);
	json_decref(list);
	json_decref(manifest_json);
	json_decref(report);
}

/* The line of task TASK of an array in `scontrol show job -o` output. */
static const char *array_task_line(const char *states, int task)
{
	char pat[32];
	const char *l;

	snprintf(pat, sizeof(pat), " ArrayTaskId=%d ", task);
	l = strstr(states, pat);
	cr_assert_not_null(l, "no array task %d in:\n%s", task, states);
	while (l > states && l[-1] != '\n')
		l--;
	return l;
}

/*
 * run.limits of an array task's manifest: what SLURM says the task ran under (its ids, its time
 * limit, its --mem as the limit enforced on its memory cgroup, set on the job's by task/cgroup,
 * its CPUs, the node), and the request it was submitted with.
 */
static void check_task_limits(const json_t *manifest, const char *line, int task,
			      const char *time_req, double mem_limit)
{
	const json_t *limits = jget(jget(manifest, "run"), "limits");
	char job[32], array_job[32], limit[32], cpus[32], node[256], host[256], want[64];
	const char *cgroup;

	field(line, "JobId", job, sizeof(job));
	field(line, "ArrayJobId", array_job, sizeof(array_job));
	field(line, "TimeLimit", limit, sizeof(limit));
	field(line, "NumCPUs", cpus, sizeof(cpus));
	field(line, "NodeList", node, sizeof(node));
	cr_expect_eq(jnum(limits, "slurm_job_id"), strtod(job, NULL), "task %d", task);
	cr_expect_eq(jnum(limits, "slurm_array_job_id"), strtod(array_job, NULL), "task %d", task);
	cr_expect_eq(jnum(limits, "slurm_array_task_id"), task);
	cr_expect_str_eq(json_string_value(jget(limits, "slurm_step_id")), "batch");
	cr_expect_eq(jnum(limits, "time_limit_s"), slurm_seconds(limit), "TimeLimit=%s", limit);
	cr_expect_eq(jnum(limits, "time_limit_s"), slurm_seconds(time_req), "--time=%s", time_req);
	cr_expect_eq(jnum(limits, "memory_limit_bytes"), mem_limit, "task %d: limit %.0f, --mem %.0f",
		     task, jnum(limits, "memory_limit_bytes"), mem_limit);
	cgroup = json_string_value(jget(limits, "memory_limit_cgroup"));
	snprintf(want, sizeof(want), "/job_%s", job);
	cr_expect(cgroup && strstr(cgroup, want), "the limit's cgroup %s is not the job's (%s)",
		  cgroup, want);
	cr_expect_eq(jnum(limits, "cpus"), strtod(cpus, NULL), "NumCPUs=%s", cpus);
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	cr_expect_str_eq(json_string_value(jget(limits, "node")), host);
	cr_expect_str_eq(node, host, "SLURM's node is this host");
	cr_log_info("task %d limits: job %.0f (array %.0f_%.0f), time %.0f s, memory %.0f MiB on %s, "
		    "%.0f cpus, node %s", task, jnum(limits, "slurm_job_id"),
		    jnum(limits, "slurm_array_job_id"), jnum(limits, "slurm_array_task_id"),
		    jnum(limits, "time_limit_s"), jnum(limits, "memory_limit_bytes") / MIB_F, cgroup,
		    jnum(limits, "cpus"), json_string_value(jget(limits, "node")));
}

/*
 * h. The limits array: one script, each task's fits chosen by its index. Task TIME_TASK runs two
 * fits, then execs a third that sleeps past --time (SLURM's SIGTERM then ends the traced root
 * itself); task OOM_TASK's third fit touches more than --mem (the memory cgroup's OOM killer
 * ends it, and the batch shell returns 128 + SIGKILL); the others run three fits and exit 0.
 */
static void submit_limits_array(const char *out_dir, char *id, size_t size)
{
	cr_assert_eq(sh("cp %s %s/bin/units && chmod 755 %s/bin/units", workload("units"), top, top),
		     0);
	submit_job("limits.sh", out_dir, id, size,
		   "#!/bin/bash\n#SBATCH --job-name=um-limits\n#SBATCH --array=0-%d\n"
		   "#SBATCH --time=%s\n#SBATCH --mem=%dM\n#SBATCH --cpus-per-task=1\n"
		   "#SBATCH --chdir=%s\n#SBATCH --output=%s/limits-%%A_%%a.out\n"
		   "#SBATCH --unitmeter=%s/bin/units:fit_unit\n#SBATCH --unitmeter-out=%s/limits-um\n"
		   "u=%s/bin/units\ncase $SLURM_ARRAY_TASK_ID in\n"
		   "%d) $u --mode spikes --sizes %d,%d && exec $u --mode spikes --sizes %d "
		   "--hold-ms 600000 ;;\n"
		   "%d) $u --mode spikes --sizes %d,%d,%d ;;\n"
		   "*) $u --mode spikes --sizes %d,%d,%d ;;\nesac\n",
		   LIMITS_TASKS - 1, LIMITS_TIME, LIMITS_MEM_MIB, out_dir, out_dir, top, out_dir, top,
		   TIME_TASK, UNIT_MIB, UNIT_MIB, UNIT_MIB, OOM_TASK, UNIT_MIB, UNIT_MIB, OOM_MIB,
		   UNIT_MIB, UNIT_MIB, UNIT_MIB);
}

/*
 * h. The memory limit the kernel enforces on the job of the limits array's task TIME_TASK, read
 * from its job cgroup while it runs (it sleeps there for a minute): memory.limit_in_bytes under
 * cgroup v1's memory hierarchy, memory.max under v2. task/cgroup sets the same on every task of
 * the array, as each asked the same --mem.
 */
static double enforced_memory_limit(const char *array_id)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	time_t until = time(NULL) + JOB_WAIT_S;
	char job[32] = "", state[64];
	char *out, *end;
	double limit;
	int status;

	for (;;) {
		out = sh_out(&status, "scontrol show job -o %s_%d 2>&1", array_id, TIME_TASK);
		if (status == 0 && !strncmp(out, "JobId=", 6)) {
			field(out, "JobState", state, sizeof(state));
			if (!strcmp(state, "RUNNING"))
				field(out, "JobId", job, sizeof(job));
		}
		free(out);
		cr_assert(time(NULL) < until, "the limits array's task %d did not start", TIME_TASK);
		if (job[0])
			break;
		nanosleep(&pause, NULL);
	}
	/* the job's cgroup appears as its step starts */
	for (;;) {
		out = sh_out(&status, "if [ \"$(stat -fc %%T /sys/fs/cgroup)\" = cgroup2fs ]; then "
			     "r=/sys/fs/cgroup f=memory.max; else r=/sys/fs/cgroup/memory "
			     "f=memory.limit_in_bytes; fi; d=$(find $r -maxdepth 8 -type d "
			     "-name job_%s 2>/dev/null | head -1); [ -n \"$d\" ] && cat $d/$f", job);
		if (status == 0)
			break;
		free(out);
		cr_assert(time(NULL) < until, "no cgroup job_%s (task %d of the array %s)", job,
			  TIME_TASK, array_id);
		nanosleep(&pause, NULL);
	}
	limit = strtod(out, &end);
	cr_assert(end != out, "job_%s's memory limit is not a number: %s", job, out);
	free(out);
	return limit;
}

/* A number for a log line: -1 for null. */
static double or_minus_one(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : -1;
}

/*
 * Wait for BASE.json, the manifest a task's tracer writes last; when it does not come, say what
 * the tracer logged (BASE.log) and what the job printed (its output file OUT).
 */
static void wait_for_manifest(const char *base, const char *out)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	time_t until = time(NULL) + MANIFEST_WAIT_S;
	char path[300], *log, *job_out;
	int status;

	snprintf(path, sizeof(path), "%s.json", base);
	while (access(path, F_OK)) {
		if (time(NULL) >= until) {
			log = sh_out(&status, "tail -c 3000 %s.log 2>&1", base);
			job_out = sh_out(&status, "tail -c 2000 %s 2>&1", out);
			cr_assert_fail("%s not written %d s after the job ended; the tracer's log:\n%s\n"
				       "the job's output:\n%s", path, MANIFEST_WAIT_S, log, job_out);
		}
		nanosleep(&pause, NULL);
	}
}

/* The unit-th line of a units stream (index order), or NULL. */
static json_t *unit_at(json_t *list, int index)
{
	json_t *u;
	size_t i;

	json_array_foreach(list, i, u)
		if (jnum(u, "index") == index)
			return u;
	return NULL;
}

/*
 * h. One task of the limits array, read back: SLURM's state says how it ended; its manifest
 * carries its limits, says the same end (its exit, and the memory cgroup's OOM kills), and holds
 * every unit its stream holds, none lost; the fits before the kill complete, each its UNIT_MIB.
 */
/* A manifest's traced span, in seconds since the epoch: run.started_at and run.wall_s. */
static void traced_span(const json_t *run, double *from, double *to)
{
	const char *at = json_string_value(jget(run, "started_at"));
	struct tm tm = { 0 };
	const char *rest = at ? strptime(at, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;

	cr_assert_not_null(rest, "run.started_at: %s", at ? at : "none");
	*from = (double)timegm(&tm) + (*rest == '.' ? strtod(rest, NULL) : 0);
	*to = *from + jnum(run, "wall_s");
}

static void check_limits_task(const char *out_dir, const char *states, const char *array_id,
			      int task, double enforced, double span[2])
{
	const char *line = array_task_line(states, task);
	char state[64], job[32], base[256], path[300];
	json_t *manifest, *list, *run, *u;
	int complete = 0, incomplete = 0;
	double charge;
	const char *want_state = task == TIME_TASK ? "TIMEOUT" :
				 task == OOM_TASK ? "OUT_OF_MEMORY" : "COMPLETED";
	size_t i;

	field(line, "JobState", state, sizeof(state));
	field(line, "JobId", job, sizeof(job));
	cr_expect_str_eq(state, want_state, "limits array task %d: %s", task, line);
	snprintf(base, sizeof(base), "%s/limits-um/%s_%d.batch.0", out_dir, array_id, task);
	snprintf(path, sizeof(path), "%s/limits-%s_%d.out", out_dir, array_id, task);
	wait_for_manifest(base, path);
	snprintf(path, sizeof(path), "%s.json", base);
	manifest = json_load_file(path, 0, NULL);
	cr_assert_not_null(manifest, "%s is not JSON", path);
	run = jget(manifest, "run");
	check_task_limits(manifest, line, task, LIMITS_TIME, LIMITS_MEM_MIB * MIB_F);
	cr_expect_eq(jnum(jget(run, "limits"), "memory_limit_bytes"), enforced,
		     "task %d: the manifest's limit %.0f, the job cgroup's %.0f", task,
		     jnum(jget(run, "limits"), "memory_limit_bytes"), enforced);
	cr_expect_eq(jnum(jget(run, "limits"), "cpus"), 1, "task %d", task);
	cr_expect_eq(jnum(run, "lost_events"), 0, "task %d", task);
	/* the plugin's tracer: a group of the node's one set of programs (issue #34) */
	cr_expect_str_eq(json_string_value(jget(jget(run, "tracing"), "programs")), "node",
			 "task %d", task);
	traced_span(run, &span[0], &span[1]);
	/* the charge, read from the task's memory cgroup: at least a fit's pages, at most the limit
	 * the kernel holds it to; the OOM-killed task reached the limit, and its victim, once
	 * chosen, may charge past it while it exits (try_charge lets a dying task force a charge) */
	charge = jnum(run, "peak_charge_bytes");
	if (task == OOM_TASK)
		cr_expect(within(charge, enforced, 0, 2 * MIB_F), "task %d: charge %.3f MiB at the OOM "
			  "kill, limit %.3f MiB", task, charge / MIB_F, enforced / MIB_F);
	else
		cr_expect(charge >= UNIT_MIB * MIB_F && charge <= enforced, "task %d: charge %.3f MiB, "
			  "limit %.3f MiB", task, charge / MIB_F, enforced / MIB_F);

	snprintf(path, sizeof(path), "%s.units.jsonl", base);
	list = read_jsonl(path);
	cr_expect_eq(json_array_size(list), json_array_size(jget(manifest, "units")),
		     "task %d: %zu units in the stream, %zu in the manifest", task,
		     json_array_size(list), json_array_size(jget(manifest, "units")));
	json_array_foreach(list, i, u) {
		const char *st = json_string_value(jget(u, "status"));

		if (!strcmp(st, "complete")) {
			complete++;
			cr_expect(within(jnum(u, "peak_rss_delta_bytes"), UNIT_MIB * MIB_F, 0.02, MIB_F),
				  "task %d unit %zu: delta %.0f, touched %d MiB", task, i,
				  jnum(u, "peak_rss_delta_bytes"), UNIT_MIB);
		} else {
			incomplete++;
			cr_expect_str_eq(st, "incomplete", "task %d unit %zu", task, i);
		}
	}
	/* the kills end the third fit: two complete before it, it incomplete */
	cr_expect_eq(complete, task == TIME_TASK || task == OOM_TASK ? 2 : 3, "task %d", task);
	cr_expect_eq(incomplete, task == TIME_TASK || task == OOM_TASK ? 1 : 0, "task %d", task);

	/* how it ended, as the manifest says it */
	if (task == TIME_TASK) {
		/* the traced root is the exec'd fit itself: SLURM's SIGTERM, or KillWait's SIGKILL */
		cr_expect(json_is_null(jget(run, "exit_status")), "task %d", task);
		cr_expect(jnum(run, "exit_signal") == SIGTERM || jnum(run, "exit_signal") == SIGKILL,
			  "task %d: exit signal %.0f", task, jnum(run, "exit_signal"));
		cr_expect_eq(jnum(run, "oom_kills"), 0, "task %d", task);
	} else if (task == OOM_TASK) {
		/* the fit that overran --mem died of the OOM killer's SIGKILL, the shell after it */
		json_t *victim;

		u = unit_at(list, 2);
		cr_assert_not_null(u, "task %d: no third unit", task);
		victim = proc_record(manifest, (long)jnum(u, "pid"));
		cr_expect_eq(jnum(victim, "exit_signal"), SIGKILL);
		cr_expect(json_is_true(jget(victim, "oom_killed")), "task %d: the fit that overran "
			  "--mem is not marked as the OOM killer's", task);
		cr_expect_eq(jnum(run, "exit_status"), 128 + SIGKILL, "task %d", task);
		cr_expect_eq(jnum(run, "oom_kills"), 1, "task %d", task);
	} else {
		cr_expect_eq(jnum(run, "exit_status"), 0, "task %d", task);
		cr_expect_eq(jnum(run, "oom_kills"), 0, "task %d", task);
	}
	cr_log_info("limits array task %d (job %s): %s, %d units complete, %d incomplete, exit "
		    "status %.0f signal %.0f (-1: null), %.0f OOM kills, charge %.1f MiB", task, job,
		    state, complete, incomplete, or_minus_one(jget(run, "exit_status")),
		    or_minus_one(jget(run, "exit_signal")), or_minus_one(jget(run, "oom_kills")),
		    charge / MIB_F);
	json_decref(list);
	json_decref(manifest);
}

/*
 * h. Where later checks read the limits array back as a user would (`unitmeter summary --by-task
 * DIR`, `unitmeter report DIR`): the array's directory of manifests and streams, and a copy of it
 * in $UNITMETER_SLURM_ARRAY_DIR when that is set, since the test's own directory goes at its end.
 */
static void keep_limits_array(const char *dir)
{
	const char *keep = getenv("UNITMETER_SLURM_ARRAY_DIR");

	if (!keep || !*keep)
		return;
	cr_expect_eq(sh("mkdir -p '%s' && cp -a %s/. '%s/'", keep, dir, keep), 0,
		     "cannot copy %s to UNITMETER_SLURM_ARRAY_DIR=%s", dir, keep);
	cr_log_info("the limits array's manifests and streams: %s", keep);
}

/*
 * h. The array read back as a user would after it ran: `summary --by-task` names how each task
 * ended, from the manifests alone (the kernel's OOM mark, the signal, the limits), and the
 * array's page is titled by the job and flags the two killed tasks.
 */
static void read_limits_array_back(const char *dir, const char *id)
{
	static const char *const ended[LIMITS_TASKS] = { "COMPLETED", "TIMEOUT", "OUT_OF_MEMORY",
								    "COMPLETED" };
	char *out, *html, title[64], task[16];
	const json_t *tasks;
	json_t *j;
	int status;

	out = sh_out(&status, "%s summary --by-task --json %s", unitmeter_bin(), dir);
	cr_assert_eq(status, 0, "summary --by-task %s: %s", dir, out);
	j = json_loads(out, 0, NULL);
	cr_assert_not_null(j, "summary --by-task --json printed no JSON: %s", out);
	tasks = json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "tasks");
	cr_assert_eq(json_array_size(tasks), LIMITS_TASKS, "%s", out);
	for (int k = 0; k < LIMITS_TASKS; k++) {
		const json_t *t = NULL;

		snprintf(task, sizeof(task), "%d", k);
		for (size_t i = 0; i < json_array_size(tasks); i++)
			if (!strcmp(json_string_value(json_object_get(json_array_get(tasks, i),
								      "task")), task))
				t = json_array_get(tasks, i);
		cr_assert_not_null(t, "no row for task %d: %s", k, out);
		cr_expect_str_eq(json_string_value(json_object_get(t, "exit")), ended[k],
				 "task %d: %s", k, out);
	}
	json_decref(j);
	free(out);
	html = sh_out(&status, "%s report %s -o %s/array.html >/dev/null && cat %s/array.html",
		      unitmeter_bin(), dir, dir, dir);
	cr_assert_eq(status, 0, "report %s failed", dir);
	snprintf(title, sizeof(title), "job %s array, %d tasks", id, LIMITS_TASKS);
	cr_expect(strstr(html, title), "the array page is not titled '%s'", title);
	cr_expect(strstr(html, "TIMEOUT") && strstr(html, "OUT_OF_MEMORY"),
		  "the array page does not flag the killed tasks");
	free(html);
}

/*
 * h. Once every task of the limits array has ended (the time-killed one a minute or more after
 * it started), each is checked against SLURM and the kernel; the array's files are kept for
 * later checks.
 */
static void finish_limits_array(const char *out_dir, const char *id, double enforced)
{
	char dir[200], *states = wait_job_for(id, LIMITS_TASKS, LIMITS_WAIT_S);
	double spans[LIMITS_TASKS][2] = { { 0 } };
	int beside = 0;

	for (int task = 0; task < LIMITS_TASKS; task++)
		check_limits_task(out_dir, states, id, task, enforced, spans[task]);
	/* tasks traced at the same time on the node (two cores, a CPU each), each figure above its
	 * own task's: the time-limited task's minute overlaps the others' */
	for (int a = 0; a < LIMITS_TASKS; a++)
		for (int b = a + 1; b < LIMITS_TASKS; b++)
			beside += spans[a][0] < spans[b][1] && spans[b][0] < spans[a][1];
	cr_expect_gt(beside, 0, "no two of the %d tasks were traced at the same time", LIMITS_TASKS);
	snprintf(dir, sizeof(dir), "%s/limits-um", out_dir);
	read_limits_array_back(dir, id);
	keep_limits_array(dir);
	free(states);
}

/*
 * i. A job started without the plugin, attached by id (`unitmeter attach --job A_T`): an array
 * of ATTACH_TASKS tasks, each running the pool (two workers, waiting for a go file of its own).
 * The others' go files are there from the start: they run at once, untraced, beside it.
 */
static void submit_attach_array(const char *out_dir, char *id, size_t size)
{
	cr_assert_eq(sh("cp %s %s/bin/pool && chmod 755 %s/bin/pool", workload("pool"), top, top),
		     0);
	for (int t = 0; t < ATTACH_TASKS; t++)
		cr_assert_eq(t == ATTACH_TASK ? 0 : sh("touch %s/go-%d", out_dir, t), 0);
	submit_job("attach.sh", out_dir, id, size,
		   "#!/bin/bash\n#SBATCH --job-name=um-attach\n#SBATCH --array=0-%d\n"
		   "#SBATCH --time=%d\n#SBATCH --mem=%dM\n#SBATCH --cpus-per-task=1\n"
		   "#SBATCH --chdir=%s\n#SBATCH --output=%s/attach-%%A_%%a.out\n"
		   "%s/bin/pool workers --go %s/go-$SLURM_ARRAY_TASK_ID --workers %d --units %d "
		   "--unit-mib %d --cpu-ms %d\n",
		   ATTACH_TASKS - 1, ATTACH_TIME_MIN, ATTACH_MEM_MIB, out_dir, out_dir, top, out_dir,
		   ATTACH_WORKERS, ATTACH_UNITS, UNIT_MIB, ATTACH_CPU_MS);
}

/*
 * i. Task ATTACH_TASK of the array submit_attach_array started, once its workers are up, is
 * attached, and told to go only once attach says its probes are in (--ready-fd), so every unit
 * runs traced. Truths: the workers' own report (pids, units, their thread clocks), SLURM's ids
 * and the --time and --mem it was submitted with.
 */
static void attach_by_job_id(const char *out_dir, const char *id)
{
	char task_id[48], go[256], out[256], manifest[256], err[256], spec[256];
	char fd_text[16], line[4096] = "", last[4096] = "", state[64], job[32];
	const json_t *limits;
	json_t *m, *truth, *w, *units;
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	time_t until;
	char *states, *text, *row, *row_text;
	struct timespec t0, t1;
	int ends[2], status;
	pid_t pid;
	size_t i;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(task_id, sizeof(task_id), "%s_%d", id, ATTACH_TASK);
	snprintf(out, sizeof(out), "%s/attach-%s.out", out_dir, task_id);
	/* its workers are up (SLURM's start, then the pool's "ready") before the attach; it
	 * starts once h's tasks but the time-killed one are done (each tracer's start takes half a
	 * minute in an emulated guest) */
	until = time(NULL) + LIMITS_WAIT_S;
	for (;;) {
		text = slurp_file(out);
		if (text && strstr(text, "ready\n"))
			break;
		free(text);
		cr_assert(time(NULL) < until, "array task %s did not start its pool", task_id);
		nanosleep(&pause, NULL);
	}
	free(text);

	snprintf(manifest, sizeof(manifest), "%s/attach-um.json", top);
	snprintf(err, sizeof(err), "%s/attach-um.err", top);
	snprintf(spec, sizeof(spec), "%s/bin/pool:fit_unit", top);
	cr_assert_eq(pipe(ends), 0);
	snprintf(fd_text, sizeof(fd_text), "%d", ends[1]);
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(99);
		close(ends[0]);
		execl(unitmeter_bin(), "unitmeter", "attach", "-q", "--job", task_id, "--unit", spec,
		      "-o", manifest, "--ready-fd", fd_text, (char *)NULL);
		_exit(99);
	}
	close(ends[1]);
	/* "ok", or the end of a unitmeter that failed before saying it */
	{
		char ok[8] = "";
		ssize_t n = read(ends[0], ok, sizeof(ok) - 1);

		close(ends[0]);
		if (n <= 0 || strcmp(ok, "ok\n")) {
			waitpid(pid, &status, 0);
			text = slurp_file(err);
			cr_assert_fail("attach --job %s did not say ready (status %d): %s", task_id,
				       status, text ? text : "");
		}
	}
	snprintf(go, sizeof(go), "%s/go-%d", out_dir, ATTACH_TASK);
	f = fopen(go, "w");
	cr_assert_not_null(f, "%s: %s", go, strerror(errno));
	fclose(f);
	/* attach ends by itself once the job's cgroup is gone, when its task has ended */
	until = time(NULL) + JOB_WAIT_S + MANIFEST_WAIT_S;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) >= until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			cr_assert_fail("attach --job %s still running after the task's end", task_id);
		}
		nanosleep(&pause, NULL);
	}
	text = slurp_file(err);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attach --job %s: status %d: %s",
		  task_id, status, text ? text : "");
	free(text);

	/* SLURM's view: the tasks completed; the attached one's job id */
	states = wait_job(id, ATTACH_TASKS);
	field(array_task_line(states, ATTACH_TASK), "JobState", state, sizeof(state));
	field(array_task_line(states, ATTACH_TASK), "JobId", job, sizeof(job));
	cr_expect_str_eq(state, "COMPLETED", "attached task: %s", states);

	/* the workers' own report, the task's last line */
	f = fopen(out, "r");
	cr_assert_not_null(f, "%s: %s", out, strerror(errno));
	while (fgets(line, sizeof(line), f))
		snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	truth = json_loads(last, 0, NULL);
	cr_assert_not_null(truth, "no report of the pool in %s: %s", out, last);
	m = json_load_file(manifest, 0, NULL);
	cr_assert_not_null(m, "%s is not JSON", manifest);
	units = jget(m, "units");
	cr_expect_eq(json_array_size(units), ATTACH_WORKERS * ATTACH_UNITS, "%zu units",
		     json_array_size(units));
	cr_expect_eq(json_array_size(jget(truth, "workers")), ATTACH_WORKERS);
	json_array_foreach(jget(truth, "workers"), i, w) {
		long wpid = (long)jnum(w, "pid");
		double cpu_s = 0, truth_cpu = jnum(w, "cpu_ns") / 1e9;
		size_t k, n = 0;
		json_t *u;

		json_array_foreach(units, k, u)
			if ((long)jnum(u, "pid") == wpid) {
				n++;
				cpu_s += jnum(u, "cpu_s");
				cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
			}
		cr_expect_eq(n, jnum(w, "units"), "worker %ld: %zu units traced, it ran %.0f", wpid,
			     n, jnum(w, "units"));
		cr_expect(within(cpu_s, truth_cpu, 0.10, 0.02), "worker %ld: cpu %.4f s, its clock "
			  "%.4f", wpid, cpu_s, truth_cpu);
	}

	/* run.limits as the plugin fills them: SLURM's ids, the job's --time and --mem */
	limits = jget(jget(m, "run"), "limits");
	cr_expect_eq(jnum(limits, "slurm_job_id"), strtod(job, NULL), "JobId=%s", job);
	cr_expect_eq(jnum(limits, "slurm_array_job_id"), strtod(id, NULL));
	cr_expect_eq(jnum(limits, "slurm_array_task_id"), ATTACH_TASK);
	cr_expect_eq(jnum(limits, "time_limit_s"), ATTACH_TIME_MIN * 60);
	cr_expect_eq(jnum(limits, "memory_limit_bytes"), ATTACH_MEM_MIB * MIB_F);
	cr_expect_eq(jnum(limits, "cpus"), 1);
	{
		const char *cgroup = json_string_value(jget(limits, "memory_limit_cgroup"));
		char want[48];

		snprintf(want, sizeof(want), "/job_%s", job);
		cr_expect(cgroup && strstr(cgroup, want), "the limit's cgroup %s is not the job's (%s)",
			  cgroup, want);
	}

	/* summary --by-task: the task's row with its limits, and how it ended */
	row_text = text = sh_out(&status, "%s summary --by-task %s 2>&1", unitmeter_bin(),
				 manifest);
	cr_assert_eq(status, 0, "summary --by-task: %s", text);
	snprintf(line, sizeof(line), "job %s array, 1 task", id);
	cr_expect(strstr(text, line), "no heading '%s':\n%s", line, text);
	snprintf(line, sizeof(line), "\n%d ", ATTACH_TASK);
	row = strstr(text, line);
	cr_assert_not_null(row, "no row for task %d:\n%s", ATTACH_TASK, text);
	row++;
	row[strcspn(row, "\n")] = '\0';
	cr_expect(strstr(row, " COMPLETED ") && strstr(row, " 0:05:00 ") && strstr(row, " 200.0M "),
		  "the task's row lacks COMPLETED, TIMELIMIT 0:05:00 or MEMLIMIT 200.0M: %s", row);

	/* a job with no cgroup here (this one, now ended): refused in one line */
	text = sh_out(&status, "%s attach --job %s --unit %s 2>&1", unitmeter_bin(), job, spec);
	cr_expect_neq(status, 0, "attach --job %s of an ended job: %s", job, text);
	cr_expect(strstr(text, "has no cgroup on this node") && strchr(text, '\n') &&
			  !strchr(text, '\n')[1], "not one line saying there is no cgroup: %s", text);
	free(text);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_log_info("attach --job %s (job %s): %zu units, in %.1f s; its row: %s", task_id, job,
		    json_array_size(units), (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
		    row);
	free(row_text);
	free(states);
	json_decref(truth);
	json_decref(m);
}

/* ---------------------------------------------------------------------------------- test */

Test(slurm, traced_array_oom_job_python_job_pool_array_a_tracer_that_fails_limits_array_attach_by_id)
{
	const struct passwd *pw = getpwnam("nobody");
	char calib_dir[160], calib[200], out_dir[160], path[512], id[32], small_id[32];
	char *header, *states, *small, *untraced, *summary_out, untraced_id[32], py_id[32], *py;
	char *pool_header, *pool_states, pool_id[32], pool_time_req[32];
	char limits_id[32], attach_id[32];
	const char *py_units = env_dir("PY_UNITS", "tools/workloads/python/py_units.py");
	json_t *calib_run, *calib_sum, *sum;
	struct timespec t0, t1;
	double mem_limit, pool_mem_limit, pool_projected_s = 0, limits_enforced;
	char time_req[32];
	int status;
	size_t i;

	cr_assert_not_null(pw, "no user 'nobody' to submit as");
	clock_gettime(CLOCK_MONOTONIC, &t0);

	/* the jobs' working directory, the unprivileged user's */
	snprintf(out_dir, sizeof(out_dir), "%s/work", top);
	cr_assert_eq(sh("mkdir %s && chown %u:%u %s", out_dir, (unsigned)pw->pw_uid,
			(unsigned)pw->pw_gid, out_dir), 0);
	/* h. first, as its time-killed task runs a minute or more, while the rest goes on beside
	 * it (its fits sleep or last milliseconds: the calibrations keep their CPUs); first also
	 * because the time kill comes at slurmctld's check, every 30 s from its start: a task
	 * started later may be killed at 60 s, its wall (from its tracer's start, half a minute
	 * later in an emulated guest) then under 90% of the limit, not told as a time kill */
	submit_limits_array(out_dir, limits_id, sizeof(limits_id));
	/* h. (while its time-killed task sleeps) the memory limit its job's cgroup holds */
	limits_enforced = enforced_memory_limit(limits_id);
	cr_log_info("limits array: job cgroup's memory limit %.1f MiB, --mem %d MiB",
		    limits_enforced / MIB_F, LIMITS_MEM_MIB);
	/* i. on the core h's other tasks leave (in the kernel matrix's cell too, where the job
	 * cgroup's layout is v2's) */
	submit_attach_array(out_dir, attach_id, sizeof(attach_id));
	attach_by_job_id(out_dir, attach_id);
	/* the kernel matrix's SLURM cell (make vmtest-slurm): h and i alone, the cgroup layout's
	 * tests; a-g calibrate CPU figures that an emulated guest's shared vCPUs cannot hold */
	if (getenv("SLURM_LIMITS_ONLY")) {
		finish_limits_array(out_dir, limits_id, limits_enforced);
		return;
	}

	/* a. calibration: one run of the demo (8 fits), and the request projected from it */
	snprintf(calib_dir, sizeof(calib_dir), "%s/calib", top);
	snprintf(calib, sizeof(calib), "%s/calib.json", top);
	cr_assert_eq(sh("%s run -q --unit fit_unit -o %s -- %s %s >%s/calib.out 2>&1",
			unitmeter_bin(), calib, env_dir("DEMO", ".output/demo/fit_demo"), calib_dir, top),
		     0, "calibration run failed; see %s/calib.out", top);
	calib_run = json_load_file(calib, 0, NULL);
	cr_assert_not_null(calib_run);
	calib_sum = jget(calib_run, "summary");
	cr_assert_eq(jnum(calib_sum, "n_units"), DEMO_FITS);
	header = sh_out(&status, "%s project %s --units %d --units-per-task %d --format sbatch",
			unitmeter_bin(), calib, TASKS * DEMO_FITS, DEMO_FITS);
	cr_assert_eq(status, 0, "unitmeter project failed: %s", header);
	cr_assert_eq(strncmp(directive(header, "--array="), "0-2\n", 4), 0, "projection:\n%s",
		     header);
	mem_limit = strtod(directive(header, "--mem="), NULL) * MIB_F;
	cr_assert_eq(sscanf(directive(header, "--time="), "%31s", time_req), 1);

	/* g. (calibrated now, while no job shares the CPUs with it) the pool */
	pool_header = pool_projection(py_units);
	pool_mem_limit = strtod(directive(pool_header, "--mem="), NULL) * MIB_F;
	cr_assert_eq(sscanf(directive(pool_header, "--time="), "%31s", pool_time_req), 1);
	{
		/* the --time comment ends "= 52.5 s, in whole minutes": the limit before rounding */
		const char *end = strstr(pool_header, " s, in whole minutes"), *eq = end;

		while (eq && eq > pool_header && strncmp(eq, "= ", 2))
			eq--;
		if (eq && eq > pool_header)
			pool_projected_s = strtod(eq + 2, NULL);
	}

	/* b. the job array, submitted by an unprivileged user: the demo in a dir only root writes,
	 * outputs in a dir of the user's; --unitmeter in the script, its outputs in the default
	 * place (unitmeter-out in the job's working directory) */
	cr_assert_eq(sh("cp %s %s/bin/fit_demo && chmod 755 %s/bin/fit_demo",
			env_dir("DEMO", ".output/demo/fit_demo"), top, top), 0);
	/* the projection (#!/bin/bash, then #SBATCH lines and comments), then ours; the demo runs
	 * as a child of the batch shell, which execs it: --lookup-at-exec's case */
	submit_job("array.sh", out_dir, id, sizeof(id),
		   "%s#SBATCH --job-name=um-array\n#SBATCH --chdir=%s\n"
		   "#SBATCH --output=%s/%%A_%%a.out\n#SBATCH --unitmeter=fit_unit\n"
		   "%s/bin/fit_demo fits-$SLURM_ARRAY_TASK_ID\necho done\n",
		   header, out_dir, out_dir, top);

	/* d. (submitted now, so both run at once) the demo under a --mem below its 96 MiB fit */
	submit_job("small.sh", out_dir, small_id, sizeof(small_id),
		   "#!/bin/bash\n#SBATCH --job-name=um-small\n#SBATCH --time=1\n#SBATCH --mem=%dM\n"
		   "#SBATCH --chdir=%s\n#SBATCH --output=%s/small.out\n#SBATCH --unitmeter=fit_unit\n"
		   "#SBATCH --unitmeter-out=%s/small-um\n%s/bin/fit_demo small-fits\necho done\n",
		   SMALL_MEM_MIB, out_dir, out_dir, out_dir, top);

	/* e. (also now) a tracer that cannot start: one line in the job's stderr, job untraced */
	submit_job("untraced.sh", out_dir, untraced_id, sizeof(untraced_id),
		   "#!/bin/bash\n#SBATCH --job-name=um-untraced\n#SBATCH --time=1\n#SBATCH --mem=%dM\n"
		   "#SBATCH --chdir=%s\n#SBATCH --output=%s/untraced.out\n"
		   "#SBATCH --unitmeter=%s/no-such-lib.so:fit_unit\n%s/bin/fit_demo untraced-fits\n",
		   SMALL_MEM_MIB * 4, out_dir, out_dir, top, top);

	/* f. (also now) python: units in a Python job: the tracer hands the task the bootstrap's
	 * environment before the interpreter starts */
	cr_assert_eq(sh("cp %s %s/bin/py_units.py && chmod 644 %s/bin/py_units.py",
			py_units, top, top), 0);
	submit_job("python.sh", out_dir, py_id, sizeof(py_id),
		   "#!/bin/bash\n#SBATCH --job-name=um-python\n#SBATCH --time=1\n#SBATCH --mem=%dM\n"
		   "#SBATCH --chdir=%s\n#SBATCH --output=%s/python.out\n"
		   "#SBATCH --unitmeter=python:fit_gfmm\n#SBATCH --unitmeter-out=%s/python-um\n"
		   "/usr/bin/python3 %s/bin/py_units.py --mode alloc --sizes 16,32,8\n",
		   SMALL_MEM_MIB * 4, out_dir, out_dir, out_dir, top);

	/* g. (last, so it starts once the node has two free cores) the pool, as an array of
	 * the projected header; each task runs its share of the units */
	submit_job("pool.sh", out_dir, pool_id, sizeof(pool_id),
		   "%s#SBATCH --job-name=um-pool\n#SBATCH --chdir=%s\n"
		   "#SBATCH --output=%s/pool-%%A_%%a.out\n#SBATCH --unitmeter=python:pool_fit\n"
		   "#SBATCH --unitmeter-out=%s/pool-um\n"
		   "/usr/bin/python3 %s/bin/py_units.py --mode pool --start executor "
		   "--units %d\n",
		   pool_header, out_dir, out_dir, out_dir, top, POOL_TASK_UNITS);

	/* c. every array task completed within its own limits, as SLURM saw it */
	states = wait_job(id, TASKS);
	{
		char *l = states;

		for (int task = 0; task < TASKS; task++, l = strchr(l, '\n') + 1) {
			char state[64], run[32], limit[32], mem[32], exit_code[32];

			field(l, "JobState", state, sizeof(state));
			field(l, "RunTime", run, sizeof(run));
			field(l, "TimeLimit", limit, sizeof(limit));
			field(l, "MinMemoryNode", mem, sizeof(mem));
			field(l, "ExitCode", exit_code, sizeof(exit_code));
			cr_expect_str_eq(state, "COMPLETED", "array task: %s", l);
			cr_expect_str_eq(exit_code, "0:0");
			cr_expect_leq(slurm_seconds(run), slurm_seconds(limit), "ran %s, limit %s", run,
				      limit);
			/* SLURM holds the task to the projected request */
			cr_expect_eq(slurm_seconds(limit), slurm_seconds(time_req), "limit %s, asked %s",
				     limit, time_req);
			cr_expect_eq(strtod(mem, NULL) * MIB_F, mem_limit, "mem %s", mem);
			cr_log_info("array task: %s, ran %s of %s, mem %s", state, run, limit, mem);
		}
	}

	/* each task's stream: its 8 fits, complete, with the bytes the demo's files hold */
	for (int task = 0; task < TASKS; task++) {
		char base[256], manifest[300], stream[300];
		json_t *list, *u, *manifest_json;

		snprintf(base, sizeof(base), "%s/unitmeter-out/%s_%d.batch.0", out_dir, id, task);
		snprintf(manifest, sizeof(manifest), "%s.json", base);
		snprintf(stream, sizeof(stream), "%s.units.jsonl", base);
		/* the tracer may still be writing the last unit when SLURM sees the task end: read
		 * the stream once the manifest, its last output, is there */
		wait_for_file(manifest);
		list = read_jsonl(stream);
		cr_expect_eq(json_array_size(list), DEMO_FITS, "%s: %zu units", stream,
			     json_array_size(list));
		json_array_foreach(list, i, u) {
			struct stat st;

			cr_expect_str_eq(json_string_value(jget(u, "status")), "complete");
			snprintf(path, sizeof(path), "%s/fits-%d/fit-%02zu.txt", out_dir, task, i);
			cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
			cr_expect_eq(jnum(u, "output_bytes"), st.st_size, "%s: unit %zu wrote %.0f, file %lld",
				     stream, i, jnum(u, "output_bytes"), (long long)st.st_size);
		}
		manifest_json = json_load_file(manifest, 0, NULL);
		cr_assert_not_null(manifest_json, "%s is not JSON", manifest);
		cr_expect_str_eq(json_string_value(jget(jget(jget(manifest_json, "run"), "tracing"),
						       "programs")),
				 "node", "%s: the tasks' tracers share the node's programs", manifest);
		/* the traced group (batch shell and demo) stayed under the task's --mem */
		cr_expect_leq(jnum(jget(manifest_json, "run"), "peak_rss_bytes"), mem_limit);
		check_task_limits(manifest_json, array_task_line(states, task), task, time_req,
				  mem_limit);
		snprintf(path, sizeof(path), "%s.log", base);
		expect_owner(manifest, pw->pw_uid);
		expect_owner(stream, pw->pw_uid);
		expect_owner(path, pw->pw_uid);
		json_decref(manifest_json);
		json_decref(list);
	}
	snprintf(path, sizeof(path), "%s/unitmeter-out", out_dir);
	expect_owner(path, pw->pw_uid);

	/* the tasks together agree with the calibration: the same fits, three times over */
	summary_out = sh_out(&status, "%s summary --json %s/unitmeter-out/%s_*.units.jsonl", unitmeter_bin(),
			     out_dir, id);
	cr_assert_eq(status, 0, "unitmeter summary: %s", summary_out);
	sum = json_loads(summary_out, 0, NULL);
	cr_assert_not_null(sum, "summary is not JSON: %s", summary_out);
	cr_expect_eq(jnum(sum, "n_units"), TASKS * DEMO_FITS);
	cr_expect(within(jnum(sum, "peak_rss_bytes_max"), jnum(calib_sum, "peak_rss_bytes_max"), 0.03, 0),
		  "peak max %.0f, calibration %.0f", jnum(sum, "peak_rss_bytes_max"),
		  jnum(calib_sum, "peak_rss_bytes_max"));
	cr_expect(within(jnum(sum, "peak_rss_bytes_median"), jnum(calib_sum, "peak_rss_bytes_median"),
			 0.1, MIB_F), "peak median %.0f, calibration %.0f",
		  jnum(sum, "peak_rss_bytes_median"), jnum(calib_sum, "peak_rss_bytes_median"));
	cr_expect_eq(jnum(sum, "total_output_bytes"), TASKS * jnum(calib_sum, "total_output_bytes"));
	cr_log_info("tasks: %.0f units, peak max %.1f MiB (calibration %.1f), median %.1f MiB "
		    "(%.1f), wall median %.3f s (%.3f)", jnum(sum, "n_units"),
		    jnum(sum, "peak_rss_bytes_max") / MIB_F, jnum(calib_sum, "peak_rss_bytes_max") / MIB_F,
		    jnum(sum, "peak_rss_bytes_median") / MIB_F,
		    jnum(calib_sum, "peak_rss_bytes_median") / MIB_F, jnum(sum, "wall_s_median"),
		    jnum(calib_sum, "wall_s_median"));

	/* d. the job under too small a --mem: killed for memory by the kernel's memory cgroup, and
	 * its stream still holds the fits before the big one, every line whole */
	small = wait_job(small_id, 1);
	{
		char state[64], base[256];
		json_t *list, *u;
		int complete = 0;

		field(small, "JobState", state, sizeof(state));
		cr_expect_str_eq(state, "OUT_OF_MEMORY", "the small job: %s", small);
		snprintf(base, sizeof(base), "%s/small-um/%s.batch.0", out_dir, small_id);
		/* the tracer was outside the job's cgroup: neither charged nor killed with it, so
		 * it writes its manifest after the job's end */
		snprintf(path, sizeof(path), "%s.json", base);
		wait_for_file(path);
		/* no array: its ids null; the --time=1 and --mem it was submitted with */
		{
			json_t *m = json_load_file(path, 0, NULL);
			const json_t *limits;

			cr_assert_not_null(m, "%s is not JSON", path);
			limits = jget(jget(m, "run"), "limits");
			cr_expect_eq(jnum(limits, "slurm_job_id"), strtod(small_id, NULL));
			cr_expect(json_is_null(jget(limits, "slurm_array_job_id")));
			cr_expect(json_is_null(jget(limits, "slurm_array_task_id")));
			cr_expect_str_eq(json_string_value(jget(limits, "slurm_step_id")), "batch");
			cr_expect_eq(jnum(limits, "time_limit_s"), 60);
			cr_expect_eq(jnum(limits, "memory_limit_bytes"), SMALL_MEM_MIB * MIB_F);
			json_decref(m);
		}
		snprintf(path, sizeof(path), "%s.units.jsonl", base);
		list = read_jsonl(path);
		json_array_foreach(list, i, u) {
			const char *st = json_string_value(jget(u, "status"));

			if (!strcmp(st, "complete"))
				complete++;
			else
				cr_expect_str_eq(st, "incomplete", "unit %zu", i);
		}
		cr_expect_eq(complete, SPIKE_FIT, "%d complete units before the kill, want %d", complete,
			     SPIKE_FIT);
		cr_log_info("small job: %s, %d units complete, %zu lines", state, complete,
			    json_array_size(list));
		json_decref(list);
	}

	/* e. the job ran its 8 fits untraced, and its stderr says why in one line */
	untraced = wait_job(untraced_id, 1);
	{
		char state[64], *out, *why;

		field(untraced, "JobState", state, sizeof(state));
		cr_expect_str_eq(state, "COMPLETED", "the job with a tracer that failed: %s", untraced);
		snprintf(path, sizeof(path), "cat %s/untraced.out", out_dir);
		out = sh_out(&status, "%s", path);
		why = strstr(out, "runs untraced: ");
		cr_expect_not_null(why, "no report of the failed tracer in the job's output:\n%s", out);
		cr_expect_not_null(strstr(out, "fit 7:"), "the job did not run its fits:\n%s", out);
		if (why)
			cr_log_info("untraced job's stderr: %.*s", (int)strcspn(why, "\n"), why);
		free(out);
	}

	/* f. the Python job's three fits, each within 2 MiB of the bytearray it held */
	py = wait_job(py_id, 1);
	{
		static const double sizes_mib[] = { 16, 32, 8 };
		char state[64], base[256];
		json_t *list, *u, *manifest_json;

		field(py, "JobState", state, sizeof(state));
		cr_expect_str_eq(state, "COMPLETED", "the Python job: %s", py);
		snprintf(base, sizeof(base), "%s/python-um/%s.batch.0", out_dir, py_id);
		snprintf(path, sizeof(path), "%s.json", base);
		wait_for_file(path);
		manifest_json = json_load_file(path, 0, NULL);
		cr_assert_not_null(manifest_json, "%s is not JSON", path);
		{
			char *version = sh_out(&status, "/usr/bin/python3 -c "
					       "'import platform; print(platform.python_version())'");

			version[strcspn(version, "\n")] = '\0';
			cr_expect_str_eq(json_string_value(jget(jget(manifest_json, "hardware"),
								"python_version")), version,
					 "the interpreter reported itself through the bootstrap");
			free(version);
		}
		snprintf(path, sizeof(path), "%s.units.jsonl", base);
		list = read_jsonl(path);
		cr_expect_eq(json_array_size(list), 3, "%s: %zu units", path, json_array_size(list));
		json_array_foreach(list, i, u) {
			if (i >= 3)
				break;
			cr_expect(within(jnum(u, "peak_rss_delta_bytes"), sizes_mib[i] * MIB_F, 0.02,
					 2 * MIB_F), "python unit %zu: delta %.0f, held %.0f MiB", i,
				  jnum(u, "peak_rss_delta_bytes"), sizes_mib[i]);
			cr_expect_str_eq(json_string_value(jget(u, "spec")), "python:fit_gfmm");
		}
		cr_log_info("python job: %s, %zu units", state, json_array_size(list));
		json_decref(list);
		json_decref(manifest_json);
	}

	/* g. every task of the pool completed within the projected --time, --mem and cores, and
	 * its stream holds its units */
	/* its tasks want both cores: they start once h's time-killed task has left one */
	pool_states = wait_job_for(pool_id, POOL_TASKS, LIMITS_WAIT_S);
	{
		char *l = pool_states;

		for (int task = 0; task < POOL_TASKS; task++, l = strchr(l, '\n') + 1) {
			char state[64], run[32], limit[32], mem[32], exit_code[32], cpus[32];

			field(l, "JobState", state, sizeof(state));
			field(l, "RunTime", run, sizeof(run));
			field(l, "TimeLimit", limit, sizeof(limit));
			field(l, "MinMemoryNode", mem, sizeof(mem));
			field(l, "ExitCode", exit_code, sizeof(exit_code));
			field(l, "CPUs/Task", cpus, sizeof(cpus));
			cr_expect_str_eq(state, "COMPLETED", "pool task: %s", l);
			cr_expect_str_eq(exit_code, "0:0");
			cr_expect_leq(slurm_seconds(run), slurm_seconds(limit), "ran %s, limit %s",
				      run, limit);
			cr_expect_eq(slurm_seconds(limit), slurm_seconds(pool_time_req),
				     "limit %s, asked %s", limit, pool_time_req);
			cr_expect_eq(strtod(mem, NULL) * MIB_F, pool_mem_limit, "mem %s", mem);
			cr_expect_eq(strtol(cpus, NULL, 10), POOL_WORKERS, "CPUs/Task=%s", cpus);
			cr_log_info("pool task: %s, ran %s of %s (projected %.1f s before "
				    "rounding), mem %s, %s cpus", state, run, limit,
				    pool_projected_s, mem, cpus);
		}
	}
	for (int task = 0; task < POOL_TASKS; task++)
		check_pool_task(out_dir, pool_id, task, pool_mem_limit);

	/* h. the limits array: two tasks completed, one killed for time, one for memory */
	finish_limits_array(out_dir, limits_id, limits_enforced);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_log_info("calibration, jobs and checks took %.1f s",
		    (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(small);
	free(py);
	free(untraced);
	free(states);
	free(pool_states);
	free(summary_out);
	free(header);
	free(pool_header);
	json_decref(sum);
	json_decref(calib_run);
}
