// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The memory charge (run.peak_charge_bytes, each unit's peak_charge_bytes) and what `project`
 * makes of it and of the run's timeline. Truths: a memory cgroup this test makes itself, with
 * the kernel's own high-water mark of it (v1 memory.max_usage_in_bytes, v2 memory.peak); the
 * bytes a workload touches or reads; the workload's own clock.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define TMPFS_MAGIC_NUMBER 0x01021994
#define RAMFS_MAGIC_NUMBER 0x858458f6

/*
 * A memory cgroup of the test's own, beside nothing unitmeter makes: v1, a child of the test's
 * memory cgroup; v2, a child of the root (guests run everything in the root). Its peak file, or
 * "" when the kernel keeps none (v2 before 5.19).
 */
struct truth_cg {
	char dir[512];
	char peak_file[560];
};

static bool truth_cg_make(struct truth_cg *cg)
{
	char *self = slurp_file("/proc/self/cgroup"), *line, *path = NULL;
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;

	if (!self)
		return false;
	for (line = strtok(self, "\n"); line; line = strtok(NULL, "\n")) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		if (v2 ? !strcmp(line, "0:") : !!strstr(a + 1, "memory")) {
			path = b + 1;
			break;
		}
	}
	if (!path) {
		free(self);
		return false;
	}
	if (v2) {
		int fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY);

		if (fd >= 0) {
			(void)!write(fd, "+memory", 7);
			close(fd);
		}
		snprintf(cg->dir, sizeof(cg->dir), "/sys/fs/cgroup/umtruth-%d", getpid());
		snprintf(cg->peak_file, sizeof(cg->peak_file), "%s/memory.peak", cg->dir);
	} else {
		snprintf(cg->dir, sizeof(cg->dir), "/sys/fs/cgroup/memory%s/umtruth-%d",
			 strcmp(path, "/") ? path : "", getpid());
		snprintf(cg->peak_file, sizeof(cg->peak_file), "%s/memory.max_usage_in_bytes",
			 cg->dir);
	}
	free(self);
	if (mkdir(cg->dir, 0755) && errno != EEXIST)
		return false;
	if (access(cg->peak_file, F_OK))
		cg->peak_file[0] = '\0';
	return true;
}

/* Run argv (no unitmeter) inside the test's cgroup; its peak charge, or < 0 when not kept. */
static double truth_peak_of(const char *const *argv)
{
	struct truth_cg cg;
	char procs[600], *text;
	double peak = -1;
	int status;
	pid_t pid;

	cr_assert(truth_cg_make(&cg), "cannot make a memory cgroup for the truth");
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg.dir);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(procs, "w");
		int null = open("/dev/null", O_WRONLY);

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			_exit(98);
		dup2(null, 1);
		execv(argv[0], (char *const *)argv);
		_exit(99);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "truth run status 0x%x", status);
	if (cg.peak_file[0] && (text = slurp_file(cg.peak_file))) {
		peak = strtod(text, NULL);
		free(text);
	}
	rmdir(cg.dir);
	return peak;
}

static void charge_init(void)
{
	require_tracing();
	if (!memory_controller())
		cr_skip_test("no memory controller on this kernel or boot: the charge is null "
			     "(charge::no_memory_controller_is_null_with_its_reason)");
}

static double unit_charge_rise(const json_t *u)
{
	return jnum(u, "peak_charge_bytes") - jnum(u, "start_charge_bytes");
}

TestSuite(charge, .init = charge_init, .timeout = UM_SUITE_TIMEOUT_S);

/* Without a memory controller the run goes on; the charge is null and the manifest says why. */
Test(charge, no_memory_controller_is_null_with_its_reason, .init = require_tracing)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", workload("charge"), "--mode",
			       "retouch", "--mib", "8", "--units", "1", NULL };
	struct um_result r;
	const json_t *run;

	if (memory_controller())
		cr_skip_test("this kernel has a memory controller (the other charge tests)");
	cr_assert_eq(um_run(&r, true, args), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run = jget(r.manifest, "run");
	cr_expect(json_is_null(jget(run, "peak_charge_bytes")));
	cr_expect(strstr(json_string_value(jget(jget(run, "charge"), "note")),
			 "no memory cgroup hierarchy"), "%s",
		  json_string_value(jget(jget(run, "charge"), "note")));
	cr_expect(json_is_null(jget(json_array_get(r.units, 0), "peak_charge_bytes")));
	cr_expect(strstr(r.err, "memory (cgroup) is not measured"), "%s", r.err);
	um_result_free(&r);
}

/*
 * The fork pool: a 512 MiB array built once, each unit forks 4 workers that read all of it. RSS
 * counts it in every worker (2.5 GiB); the cgroup charges it once, as it does for the same
 * command in a cgroup of the test's own. --mem follows the charge.
 */
Test(charge, fork_pool_charge_is_the_cgroups_own_peak)
{
	const char *cmd[] = { workload("charge"), "--mode", "pool", "--mib", "512", "--units", "2",
			      "--workers", "4", NULL };
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", cmd[0], cmd[1], cmd[2],
			       cmd[3], cmd[4], cmd[5], cmd[6], cmd[7], cmd[8], NULL };
	double truth = truth_peak_of(cmd), run_charge, run_rss;
	struct um_result r;
	json_t *u;
	size_t i;

	if (truth < 0) /* v2 before 5.19 keeps no peak: what the pool touched is the truth */
		truth = 512 * MIB_F;
	cr_assert_eq(um_run(&r, true, args), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_charge = jnum(jget(r.manifest, "run"), "peak_charge_bytes");
	run_rss = jnum(jget(r.manifest, "run"), "peak_rss_bytes");
	cr_expect(within(run_charge, truth, 0.05, 0), "run charge %.1f MiB, the cgroup's own %.1f MiB",
		  run_charge / MIB_F, truth / MIB_F);
	cr_expect_gt(run_rss, 1.9 * run_charge, "RSS %.1f MiB counts the array in every worker",
		     run_rss / MIB_F);
	cr_expect(json_is_true(jget(jget(jget(r.manifest, "run"), "charge"), "made_for_run")));
	cr_assert_eq(json_array_size(r.units), 2);
	json_array_foreach(r.units, i, u) {
		cr_expect(within(jnum(u, "peak_charge_bytes"), truth, 0.05, 0),
			  "unit %zu charge %.1f MiB, the cgroup's own %.1f MiB", i,
			  jnum(u, "peak_charge_bytes") / MIB_F, truth / MIB_F);
		/* the array in the parent and in the workers alive at once (all four, unless an
		 * emulated guest is slow to fork them): at least two copies in RSS, one in the charge */
		cr_expect_gt(jnum(u, "peak_rss_bytes"), 1.9 * 512 * MIB_F);
	}

	/* project asks for the charge with its margin, not the RSS */
	{
		const char *proj[] = { "project", "--format", "json", r.manifest_path, "--units",
				       "1000", "--tasks", "10", NULL };
		json_t *j = um_run_json(proj);

		cr_expect_str_eq(json_string_value(jget(jget(j, "per_unit"), "mem_from")), "charge");
		cr_expect(within(jnum(jget(j, "request"), "mem_mib"), 1.25 * truth / MIB_F, 0.06, 0),
			  "--mem %.0f MiB for a %.1f MiB charge", jnum(jget(j, "request"), "mem_mib"),
			  truth / MIB_F);
		json_decref(j);
	}
	um_result_free(&r);
}

/*
 * A unit that reads a 256 MiB file with read(2): its page cache is charged to the cgroup, and
 * nothing of it is in RSS. Needs a file system with a page cache the workload can drop (not
 * tmpfs, where the file's pages stay charged to whoever wrote them).
 */
Test(charge, file_reads_are_charged_not_resident)
{
	const char *base = getenv("UM_TEST_DISK_DIR") ? getenv("UM_TEST_DISK_DIR") : "/var/tmp";
	char path[256], buf[1 << 16];
	struct statfs fs;
	struct um_result r;
	const json_t *u;
	int fd;

	if (statfs(base, &fs) || fs.f_type == TMPFS_MAGIC_NUMBER || fs.f_type == RAMFS_MAGIC_NUMBER ||
	    access(base, W_OK))
		cr_skip_test("%s is not a writable disk file system (set UM_TEST_DISK_DIR)", base);
	snprintf(path, sizeof(path), "%s/unitmeter-charge-%d", base, getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	memset(buf, 'u', sizeof(buf));
	for (int i = 0; i < 256 * 16; i++)
		cr_assert_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	{
		const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", workload("charge"),
				       "--mode", "file", "--file", path, "--units", "1", NULL };

		cr_assert_eq(um_run(&r, true, args), 0);
	}
	unlink(path);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(r.units), 1);
	u = json_array_get(r.units, 0);
	cr_expect(within(unit_charge_rise(u), 256 * MIB_F, 0.05, 0),
		  "the unit's charge rose %.1f MiB reading a 256 MiB file", unit_charge_rise(u) / MIB_F);
	cr_expect_lt(jnum(u, "peak_rss_delta_bytes"), 8 * MIB_F, "RSS rose %.1f MiB",
		     jnum(u, "peak_rss_delta_bytes") / MIB_F);
	um_result_free(&r);
}

/*
 * Units that touch 200 MiB, free it and touch 100 MiB: each one's charge peak is 200 MiB above
 * its start, the later ones too, though only the first raised the cgroup's all-time mark.
 */
Test(charge, units_that_free_and_retouch_each_hold_their_peak)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", workload("charge"), "--mode",
			       "retouch", "--mib", "200", "--units", "3", NULL };
	struct um_result r;
	json_t *u;
	size_t i;

	cr_assert_eq(um_run(&r, true, args), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_array_size(r.units), 3);
	json_array_foreach(r.units, i, u) {
		/* page tables and the kernel's per-CPU charge batches (256 KiB) on top */
		cr_expect(within(unit_charge_rise(u), 200 * MIB_F, 0.03, 0),
			  "unit %zu: charge rose %.2f MiB for 200 MiB touched", i,
			  unit_charge_rise(u) / MIB_F);
		cr_expect_lt(jnum(u, "start_charge_bytes"), 20 * MIB_F,
			     "unit %zu starts with its memory freed", i);
	}
	um_result_free(&r);
}

/* Wall seconds of a command's whole life (fork to reaping), by the test's own clock. */
static double wall_of(const char *const *argv)
{
	struct timespec a, b;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(argv[0], (char *const *)argv);
		_exit(99);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
}

/*
 * A long set-up, then short units: the projection pays the set-up once per task (the fixed
 * part), and each unit its own time, as the workload's own clock measured them. The fixed part's
 * truth: the set-up by the workload's clock, plus the life of the same program doing nothing
 * (exec, loading, exit: ~2 ms here, ~0.2 s in an emulated guest), by the test's clock.
 */
Test(charge, long_setup_is_a_fixed_part_of_each_task)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", workload("charge"), "--mode",
			       "setup", "--setup-ms", "1500", "--units", "6", "--unit-ms", "40",
			       "--gap-ms", "20", NULL };
	const char *idle[] = { workload("charge"), "--mode", "setup", "--units", "0", NULL };
	struct um_result r;
	const char *proj[] = { "project", "--format", "json", NULL, "--units", "1000", "--tasks",
			       "10", "--margin", "1", NULL };
	double setup, fixed, unit_time, life = wall_of(idle);
	json_t *j;

	for (int i = 0; i < 2; i++) {
		double again = wall_of(idle);

		if (again < life)
			life = again;
	}
	cr_assert_eq(um_run(&r, true, args), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(r.truth, "%s", r.out);
	setup = jnum(r.truth, "setup_s");
	proj[3] = r.manifest_path;
	j = um_run_json(proj);
	fixed = jnum(jget(j, "per_unit"), "fixed_s");
	unit_time = jnum(jget(j, "per_unit"), "unit_time_s");
	/* the idle life is itself a measure of exec and exit, and in an emulated guest its parts
	 * move apart (6.12 arm64: 0.415 s idle, 0.12 s in the traced run): within one life of it */
	cr_expect(within(fixed, setup + life, 0.10, life), "fixed %.3f s; set-up %.3f s + the "
		  "program's idle life %.3f s", fixed, setup, life);
	cr_expect_geq(jnum(jget(j, "per_unit"), "fixed_before_first_unit_s"), setup);
	/* a unit: its work and the pause before the next, by the workload's clock (start to start;
	 * the last, its wall), p90 by linear interpolation as the projection takes it */
	{
		const json_t *starts = jget(r.truth, "unit_start_s"), *walls = jget(r.truth, "unit_wall_s");
		double c[6], rank = 0.9 * 5;
		size_t n = json_array_size(starts);

		cr_assert_eq(n, 6);
		for (size_t i = 0; i < n; i++)
			c[i] = i + 1 < n ? json_number_value(json_array_get(starts, i + 1)) -
						   json_number_value(json_array_get(starts, i))
					 : json_number_value(json_array_get(walls, i));
		for (size_t i = 0; i < n; i++) /* sorted, for the percentile */
			for (size_t k = i + 1; k < n; k++)
				if (c[k] < c[i]) {
					double t = c[i];

					c[i] = c[k];
					c[k] = t;
				}
		rank = c[4] + (rank - 4) * (c[5] - c[4]);
		/* an emulated guest's uprobes take milliseconds each: 10% and 5 ms (a unit time that
		 * left out the gaps would be a third short) */
		cr_expect(within(unit_time, rank, 0.10, 0.005),
			  "unit time %.4f s; the workload's own p90 %.4f s", unit_time, rank);
	}
	/* 100 units per task: the p90 of the sum of 100 units (for all 10 tasks at once: z is the
	 * normal's 0.9^(1/10) quantile, 2.3087) + fixed, once (not the set-up spread over 6 units
	 * x 100), from the workload's own unit times: 100 x mean + 2.3087 x sd x 10; margin 1 */
	{
		const json_t *starts = jget(r.truth, "unit_start_s"), *walls = jget(r.truth, "unit_wall_s");
		double c, sum = 0, squares = 0, mean, sd;

		for (size_t i = 0; i < 6; i++)
			sum += i + 1 < 6 ? json_number_value(json_array_get(starts, i + 1)) -
						   json_number_value(json_array_get(starts, i))
					 : json_number_value(json_array_get(walls, i));
		mean = sum / 6;
		for (size_t i = 0; i < 6; i++) {
			c = i + 1 < 6 ? json_number_value(json_array_get(starts, i + 1)) -
						json_number_value(json_array_get(starts, i))
				      : json_number_value(json_array_get(walls, i));
			squares += (c - mean) * (c - mean);
		}
		sd = sqrt(squares / 5);
		cr_expect(within(jnum(jget(jget(j, "time_model"), "units"), "mean_s"), mean, 0.10,
				 0.005), "mean unit %.4f s; the workload's own %.4f s",
			  jnum(jget(jget(j, "time_model"), "units"), "mean_s"), mean);
		cr_expect(within(jnum(jget(j, "request"), "time_s_projected"),
				 100 * mean + 2.3086775 * sd * 10 + fixed, 0.10, 0),
			  "projected %.3f s; the workload's own 100 x %.4f + 2.31 x %.4f x 10 + %.3f",
			  jnum(jget(j, "request"), "time_s_projected"), mean, sd, fixed);
	}
	json_decref(j);
	um_result_free(&r);
}

/* attach reads the target's own cgroup and says it may hold others; the root cgroup: null. */
Test(charge, attach_uses_the_targets_cgroup_or_says_why_not)
{
	const char *args[] = { "attach", "-q", "-p", "1", "--duration", "0.3", NULL };
	struct um_result r;
	const json_t *run, *charge;
	char *cg = slurp_file("/proc/1/cgroup");
	bool root_memcg;

	cr_assert_not_null(cg);
	/* v1: "N:memory:/" ; v2: "0::/" */
	root_memcg = strstr(cg, "memory:/\n") || !strcmp(cg, "0::/\n");
	free(cg);
	cr_assert_eq(um_run(&r, true, args), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run = jget(r.manifest, "run");
	charge = jget(run, "charge");
	cr_expect(!json_is_true(jget(charge, "made_for_run")));
	if (root_memcg) {
		cr_expect(json_is_null(jget(run, "peak_charge_bytes")));
		cr_expect(strstr(json_string_value(jget(charge, "note")), "root memory cgroup"), "%s",
			  json_string_value(jget(charge, "note")));
		cr_expect(strstr(r.err, "memory (cgroup) is not measured"), "%s", r.err);
	} else {
		cr_expect(strstr(json_string_value(jget(charge, "note")), "may hold processes"));
	}
	um_result_free(&r);
}

/* limits_...: the cgroup unitmeter is started in (v2: a leaf under the limited one) */
static char limited_procs[600];

static void enter_limited_cgroup_on_cpu0(void)
{
	FILE *f = fopen(limited_procs, "w");
	cpu_set_t one;

	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		_exit(97);
	/* taskset -c 0 */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		_exit(96);
}

/*
 * run.limits outside SLURM: unitmeter started in a memory cgroup the test made with a limit, on
 * CPU 0 alone. The cgroup run makes for the command has no limit of its own; its ancestor's is
 * the one enforced, and the manifest names that cgroup. The SLURM keys are null.
 */
Test(charge, limits_are_the_enclosing_cgroups_memory_limit_and_the_affinity)
{
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", workload("charge"), "--mode",
			       "retouch", "--mib", "8", "--units", "1", NULL };
	static const char *const slurm_keys[] = { "slurm_job_id", "slurm_array_job_id",
						  "slurm_array_task_id", "slurm_step_id",
						  "time_limit_s" };
	const uint64_t limit = 256ULL << 20;
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;
	const char *mnt = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
	struct truth_cg cg;
	char file[600], leaf[560], host[256];
	const json_t *limits, *charge;
	struct um_result r;
	FILE *f;

	cr_assert(truth_cg_make(&cg), "cannot make a memory cgroup");
	snprintf(file, sizeof(file), "%s/%s", cg.dir, v2 ? "memory.max" : "memory.limit_in_bytes");
	f = fopen(file, "w");
	cr_assert_not_null(f, "%s: %s", file, strerror(errno));
	cr_assert_gt(fprintf(f, "%llu\n", (unsigned long long)limit), 0);
	cr_assert_eq(fclose(f), 0, "%s: %s", file, strerror(errno));
	snprintf(leaf, sizeof(leaf), "%s", cg.dir);
	if (v2) {
		/* v2 gives a cgroup with processes no controller for its children: unitmeter in a
		 * leaf, so the command's cgroup goes beside it, still under the limit */
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", cg.dir);
		f = fopen(file, "w");
		cr_assert(f && fputs("+memory", f) >= 0 && !fclose(f), "%s", file);
		snprintf(leaf, sizeof(leaf), "%s/um", cg.dir);
		cr_assert(!mkdir(leaf, 0755), "%s: %s", leaf, strerror(errno));
	}
	snprintf(limited_procs, sizeof(limited_procs), "%s/cgroup.procs", leaf);
	cr_assert_eq(um_run_with(&r, true, args, enter_limited_cgroup_on_cpu0), 0);
	if (v2)
		rmdir(leaf);
	rmdir(cg.dir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	limits = jget(jget(r.manifest, "run"), "limits");
	charge = jget(jget(r.manifest, "run"), "charge");
	cr_expect_eq(jnum(limits, "memory_limit_bytes"), (double)limit);
	cr_expect_str_eq(json_string_value(jget(limits, "memory_limit_cgroup")),
			 cg.dir + strlen(mnt));
	/* the limit is an ancestor's of the cgroup the command was measured in */
	cr_expect(json_is_true(jget(charge, "made_for_run")));
	cr_expect(!strncmp(json_string_value(jget(charge, "cgroup")), cg.dir + strlen(mnt),
			   strlen(cg.dir + strlen(mnt))), "charge in %s, limit on %s",
		  json_string_value(jget(charge, "cgroup")), cg.dir + strlen(mnt));
	cr_expect_eq(jnum(limits, "cpus"), 1);
	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	cr_expect_str_eq(json_string_value(jget(limits, "node")), host);
	for (size_t i = 0; i < sizeof(slurm_keys) / sizeof(slurm_keys[0]); i++)
		cr_expect(json_is_null(jget(limits, slurm_keys[i])), "%s is not null outside SLURM",
			  slurm_keys[i]);
	um_result_free(&r);
}
