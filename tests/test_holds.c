// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Does a projection hold? tools/bench/project_holds.py calibrates a workload on a few units,
 * projects a task ~10x larger and runs it untraced, confined as SLURM would (a memory cgroup
 * limited to --mem, taskset to --cpus-per-task, killed at twice the projected time here, since
 * other tests run beside it). The truths are
 * outside unitmeter: the task's own wall clock and the cgroup's own peak. One C workload and one
 * Python pool, one round each; the bounds are loose (the bench's table holds the tight figures)
 * so the suite stays stable on a noisy 2-core machine.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define PYTHON "/usr/bin/python3"

static void holds_init(void)
{
	require_tracing();
	if (!memory_controller())
		cr_skip_test("no memory controller on this kernel or boot: no task to confine");
	if (access(PYTHON, X_OK))
		cr_skip_test(PYTHON " is missing (apt-get install python3-sklearn)");
}

TestSuite(holds, .init = holds_init, .timeout = UM_SUITE_TIMEOUT_S);

/* The script: TOOLS from make test, else beside the workloads' build (.output/workloads). */
static const char *script(void)
{
	static __thread char path[512];
	const char *tools = getenv("TOOLS");

	if (tools && *tools)
		snprintf(path, sizeof(path), "%s/bench/project_holds.py", tools);
	else
		snprintf(path, sizeof(path), "%s/../../tools/bench/project_holds.py",
			 getenv("WORKLOADS") ? getenv("WORKLOADS") : ".output/workloads");
	return path;
}

Test(holds, c_serial_and_python_pool_finish_within_what_was_asked)
{
	char dir[] = "/tmp/um-holds-test-XXXXXX", json_path[64];
	json_t *doc, *rounds, *r;
	json_error_t jerr;
	size_t i;
	int status;
	pid_t pid;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(json_path, sizeof(json_path), "%s/holds.json", dir);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* the script finds unitmeter and the workloads through UNITMETER and WORKLOADS; its
		 * table goes, its stderr (a line per round, what failed) stays */
		setenv("UNITMETER", unitmeter_bin(), 1);
		dup2(null, 1);
		/* the suite runs two tests at once: a neighbour can slow the task more than it did
		 * the calibration, so the task is killed at 2x what was asked, not at 1x */
		execl("/usr/bin/python3", "python3", script(), "--workloads", "c-serial,py-pool",
		      "--rounds", "1", "--quick", "--time-limit", "2", "--json", json_path,
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	doc = json_load_file(json_path, 0, &jerr);
	cr_assert_not_null(doc, "project_holds.py (exit 0x%x) wrote no %s: %s", status, json_path,
			   jerr.text);
	/* a step that crashed: the script lists what failed and why */
	json_array_foreach(jget(doc, "failures"), i, r)
		cr_expect_fail("%s", json_string_value(r));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "project_holds.py exited 0x%x",
		  status);

	rounds = jget(doc, "rounds");
	cr_assert_eq(json_array_size(rounds), 2);
	json_array_foreach(rounds, i, r) {
		const char *name = json_string_value(jget(r, "workload"));
		const char *killed = json_string_value(jget(r, "killed"));
		double took, peak;

		cr_expect(killed && !strcmp(killed, "none"), "%s was killed: %s", name,
			  killed ? killed : "(not run)");
		cr_expect(json_is_true(jget(r, "finished")), "%s: %lld of %lld units, exit %lld",
			  name, json_integer_value(jget(r, "units_done")),
			  json_integer_value(jget(r, "units_task")),
			  json_integer_value(jget(r, "exit_status")));
		took = jnum(r, "time_took_s");
		peak = jnum(r, "mem_peak_mib");
		/* loose: the bound is 1.3x over 5 rounds, in make bench; killed at neither
		 * end: asked under 2x what it took, and it took under 2x what was asked */
		cr_expect_lt(jnum(r, "time_asked_s"), 2.0 * took, "%s: asked %.1f s, took %.1f s",
			     name, jnum(r, "time_asked_s"), took);
		cr_expect_geq(jnum(r, "mem_asked_mib"), peak,
			      "%s: asked %.0f MiB, the cgroup's peak %.1f", name,
			      jnum(r, "mem_asked_mib"), peak);
	}
	json_decref(doc);
	unlink(json_path);
	rmdir(dir);
}
