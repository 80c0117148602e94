// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `unitmeter run` on the ground-truth workloads: whole-group figures against what the workloads
 * measured of themselves (VmRSS, CPU clocks, file sizes).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

TestSuite(run, .init = require_tracing, .timeout = UM_SUITE_TIMEOUT_S);

Test(run, spike_held_2ms_is_the_group_peak)
{
	struct um_result r;
	const char *args[] = { "run", workload("spike"), "--mib", "96", "--hold-ms", "2",
			       "--repeat", "3", NULL };
	double peak, truth;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth, "the workload printed no truth: %s", r.out);
	peak = jnum(jget(r.manifest, "run"), "peak_rss_bytes");
	truth = jnum(r.truth, "peak_rss_bytes");
	cr_expect(within(peak, truth, 0.01, MIB_F), "group peak %.0f, truth %.0f", peak, truth);
	cr_expect_eq(jnum(jget(r.manifest, "run"), "lost_events"), 0);
	um_result_free(&r);
}

/*
 * A non-leader thread touches memory and execs (the leader gone): the pages are its process's,
 * counted per CPU under its old tid and charged when it switches out under the new one.
 */
Test(run, pages_of_a_thread_that_execs_stay_with_its_process)
{
	struct um_result r;
	const char *args[] = { "run", workload("threads"), "--exec-mib", "64", NULL };
	double pages, truth;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth, "the workload printed no truth: %s", r.out);
	pages = jnum(jget(r.manifest, "run"), "page_alloc_bytes");
	truth = jnum(r.truth, "touched_bytes");
	cr_expect(pages >= truth && pages <= truth * 1.05 + 8 * MIB_F,
		  "page_alloc_bytes %.0f, the thread touched %.0f", pages, truth);
	um_result_free(&r);
}

/* Children hold memory at the same time; the parent's pages are inherited by each child. */
Test(run, forked_children_counted_from_their_first_page)
{
	struct um_result r;
	const char *args[] = { "run", workload("forker"), "--parent-mib", "64", "--children", "3",
			       "--child-mib", "32", "--cpu-ms", "300", NULL };
	json_t *children, *child;
	size_t i;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth, "no truth: %s", r.out);
	cr_expect(within(jnum(jget(r.manifest, "run"), "peak_rss_bytes"),
			 jnum(r.truth, "group_peak_truth_bytes"), 0.01, MIB_F),
		  "group peak %.0f, truth %.0f", jnum(jget(r.manifest, "run"), "peak_rss_bytes"),
		  jnum(r.truth, "group_peak_truth_bytes"));
	cr_expect_eq(jnum(jget(r.manifest, "run"), "processes"), 4);
	children = jget(r.truth, "children");
	cr_assert_eq(json_array_size(children), 3);
	json_array_foreach(children, i, child) {
		json_t *rec = proc_record(r.manifest, (long)jnum(child, "pid"));
		double peak = jnum(rec, "peak_rss_bytes"), hold = jnum(child, "rss_at_hold_bytes");
		double cpu = jnum(rec, "cpu_s"), cpu_truth = jnum(child, "rusage_cpu_ns") / 1e9;

		cr_expect(within(peak, hold, 0.01, MIB_F), "child %d peak %.0f, its own RSS %.0f",
			  (int)jnum(child, "pid"), peak, hold);
		cr_expect(within(cpu, cpu_truth, 0.02, 0), "child cpu %.4f s, wait4 rusage %.4f s", cpu,
			  cpu_truth);
		cr_expect(cpu >= jnum(child, "cpu_ns") / 1e9, "less than the child's own clock read before exit");
	}
	um_result_free(&r);
}

/* A child that allocates nothing after fork: its whole RSS is what fork gave it. */
Test(run, child_rss_at_fork_matches_its_own_reading)
{
	struct um_result r;
	const char *args[] = { "run", workload("forker"), "--parent-mib", "128", "--children", "2",
			       "--child-mib", "0", "--cpu-ms", "10", NULL };
	json_t *child;
	size_t i;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth);
	json_array_foreach(jget(r.truth, "children"), i, child) {
		double peak = jnum(proc_record(r.manifest, (long)jnum(child, "pid")), "peak_rss_bytes");
		double at_fork = jnum(child, "rss_at_fork_bytes");

		cr_expect(within(peak, at_fork, 0.01, MIB_F), "child peak %.0f, RSS it read after fork %.0f",
			  peak, at_fork);
	}
	um_result_free(&r);
}

/*
 * A process of four threads, in a child of the workload. Its CPU lies between its own process
 * clock read at the end of main and what wait4 reports for it, its exit included (the figure
 * unitmeter counts to the last thread's last switch-out). On real hardware the exit takes
 * microseconds; in the matrix's emulated guests ~50 ms (3% of this process), which the clock
 * alone counted as error.
 */
Test(run, cpu_of_threads_matches_their_clocks)
{
	struct um_result r;
	const char *args[] = { "run", workload("threads"), "--threads", "3", "--cpu-ms", "500",
			       "--in-child", NULL };
	double cpu, clock, rusage;
	json_t *child;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth);
	child = proc_record(r.manifest, (long)jnum(r.truth, "pid"));
	cpu = jnum(child, "cpu_s");
	clock = jnum(r.truth, "process_cpu_ns") / 1e9;
	rusage = jnum(r.truth, "rusage_cpu_ns") / 1e9;
	cr_expect(clock <= rusage + 1e-5, "the clock %.4f above wait4's %.4f", clock, rusage);
	cr_expect(cpu >= clock * 0.98 && cpu <= rusage * 1.02,
		  "cpu_s %.4f, CLOCK_PROCESS_CPUTIME_ID at the end of main %.4f, wait4 %.4f", cpu,
		  clock, rusage);
	cr_expect(cpu >= jnum(r.truth, "threads_cpu_ns") / 1e9);
	cr_expect(jnum(jget(r.manifest, "run"), "cpu_s") >= cpu);
	/* the main thread and three workers */
	cr_expect_eq(jnum(child, "threads"), 4);
	um_result_free(&r);
}

Test(run, output_bytes_are_the_file_size)
{
	struct um_result r;
	char file[160];
	const char *args[] = { "run", workload("writer"), "--bytes", "3000017", "--file", file, NULL };

	snprintf(file, sizeof(file), "/tmp/um-writer-%d.out", getpid());
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	cr_assert_not_null(r.truth);
	/* stdout (a pipe here) and /dev/null are written too, and must not count */
	cr_expect_eq(jnum(jget(r.manifest, "run"), "output_bytes"), jnum(r.truth, "file_size"));
	cr_expect_eq(jnum(r.truth, "file_size"), 3000017);
	unlink(file);
	um_result_free(&r);
}

Test(run, exit_status_passes_through)
{
	struct um_result r;
	const char *args[] = { "run", "/bin/sh", "-c", "exit 7", NULL };

	um_run(&r, true, args);
	cr_expect_eq(r.status, 7, "status %d: %s", r.status, r.err);
	cr_expect_eq(jnum(jget(r.manifest, "run"), "exit_status"), 7);
	cr_expect(json_is_null(jget(jget(r.manifest, "run"), "exit_signal")));
	um_result_free(&r);
}

Test(run, killed_command_reports_its_signal)
{
	struct um_result r;
	const char *args[] = { "run", "/bin/sh", "-c", "kill -TERM $$", NULL };

	um_run(&r, true, args);
	cr_expect_eq(r.status, 128 + SIGTERM, "status %d: %s", r.status, r.err);
	cr_expect_eq(jnum(jget(r.manifest, "run"), "exit_signal"), SIGTERM);
	um_result_free(&r);
}

Test(run, shell_pipeline_counts_every_process)
{
	struct um_result r;
	/* sh, two children of the pipeline, and one grandchild through a subshell */
	const char *args[] = { "run", "/bin/sh", "-c", "/bin/true | /bin/cat; (/bin/true)", NULL };

	const char *comms[] = { "sh", "true", "cat" };
	size_t want[] = { 1, 2, 1 }, seen[3] = { 0 }, i;
	json_t *procs, *p;
	long sh_pid;

	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "unitmeter failed: %s", r.err);
	/* exactly those four: Debian's sh (dash) forks the two sides of the pipe and the subshell,
	 * which execs its last command without forking again */
	cr_expect_eq(jnum(jget(r.manifest, "run"), "processes"), 4);
	procs = jget(jget(r.manifest, "run"), "per_process");
	cr_assert_eq(json_array_size(procs), 4);
	sh_pid = (long)jnum(json_array_get(procs, 0), "pid");
	json_array_foreach(procs, i, p) {
		const char *comm = json_string_value(jget(p, "comm"));

		for (size_t c = 0; c < 3; c++)
			seen[c] += comm && !strcmp(comm, comms[c]);
		if (i > 0)
			cr_expect_eq((long)jnum(p, "ppid"), sh_pid, "%s's parent", comm);
		cr_expect_eq(jnum(p, "exit_status"), 0);
	}
	for (size_t c = 0; c < 3; c++)
		cr_expect_eq(seen[c], want[c], "%s seen %zu times", comms[c], seen[c]);
	cr_expect_eq(jnum(jget(r.manifest, "run"), "lost_events"), 0);
	um_result_free(&r);
}

Test(run, missing_command_exits_127_with_one_line)
{
	struct um_result r;
	const char *args[] = { "run", "no-such-command-unitmeter", NULL };

	um_run(&r, true, args);
	cr_expect_eq(r.status, 127);
	cr_expect_not_null(strstr(r.err, "command not found: no-such-command-unitmeter"), "%s", r.err);
	cr_expect_eq(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err), "more than one line: %s", r.err);
	cr_expect_null(r.manifest);
	um_result_free(&r);
}

/* Without root or CAP_BPF+CAP_PERFMON: one line that says so, exit 125, nothing started. */
Test(run, unprivileged_user_is_told_what_is_needed)
{
	struct passwd *nobody = getpwnam("nobody");
	int pipefd[2], status;
	char buf[1024] = "";
	ssize_t n;
	pid_t pid;

	char dir[] = "/tmp/um-bin-XXXXXX", bin[PATH_MAX], cmd[2 * PATH_MAX];

	cr_assert_not_null(nobody);
	/* a copy nobody can run: the build may be in a home only its owner can enter (/root) */
	cr_assert_not_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/unitmeter", dir);
	snprintf(cmd, sizeof(cmd), "chmod 755 %s && cp %s %s", dir, unitmeter_bin(), bin);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 2);
		if (chdir("/tmp") || setgid(nobody->pw_gid) || setuid(nobody->pw_uid))
			_exit(98);
		execl(bin, "unitmeter", "run", "/bin/true", (char *)NULL);
		_exit(99);
	}
	close(pipefd[1]);
	for (size_t got = 0; (n = read(pipefd[0], buf + got, sizeof(buf) - 1 - got)) > 0;)
		got += n, buf[got] = '\0';
	waitpid(pid, &status, 0);
	cr_expect_eq(WEXITSTATUS(status), RUN_FAILED, "status %d: %s", WEXITSTATUS(status), buf);
	cr_expect_not_null(strstr(buf, "root, or CAP_BPF and CAP_PERFMON"), "%s", buf);
	unlink(bin);
	rmdir(dir);
}

/* Under sudo the command runs as the caller, and the files unitmeter writes belong to the caller. */
Test(run, command_runs_as_the_sudo_caller)
{
	struct passwd *nobody = getpwnam("nobody");
	struct um_result r;
	const char *args[] = { "run", "/bin/sh", "-c", "echo \"{\\\"uid\\\": $(id -u)}\"", NULL };
	struct stat st;
	char uid[16], gid[16];

	cr_assert_not_null(nobody);
	snprintf(uid, sizeof(uid), "%u", nobody->pw_uid);
	snprintf(gid, sizeof(gid), "%u", nobody->pw_gid);
	setenv("SUDO_UID", uid, 1);
	setenv("SUDO_GID", gid, 1);
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not_null(r.truth, "%s", r.out);
	cr_expect_eq(jnum(r.truth, "uid"), nobody->pw_uid);
	cr_assert_eq(stat(r.manifest_path, &st), 0);
	cr_expect_eq(st.st_uid, nobody->pw_uid, "manifest owned by %u", st.st_uid);
	cr_assert_eq(stat(r.units_path, &st), 0);
	cr_expect_eq(st.st_uid, nobody->pw_uid, "units stream owned by %u", st.st_uid);
	um_result_free(&r);
}

Test(run, as_root_keeps_root)
{
	struct um_result r;
	const char *args[] = { "run", "--as-root", "/bin/sh", "-c", "echo \"{\\\"uid\\\": $(id -u)}\"", NULL };

	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(jnum(r.truth, "uid"), 0);
	um_result_free(&r);
}

/*
 * The demo (make demo): eight fits, each a complete unit that wrote exactly its file; the spike
 * fit holds its 96 MiB scratch copy; the helper fit has its forked helper in scope.
 */
Test(run, demo_fits_wrote_their_files_and_held_their_spike)
{
	const char *demo = getenv("DEMO") && *getenv("DEMO") ? getenv("DEMO") : ".output/demo/fit_demo";
	char fits[128], path[160];
	const char *args[] = { "run", "-q", "--unit", "fit_unit", "--", demo, fits, NULL };
	struct um_result r;
	json_t *units;
	struct stat st;

	snprintf(fits, sizeof(fits), "/tmp/um-demo-fits-%d", getpid());
	um_run(&r, true, args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	units = jget(r.manifest, "units");
	cr_assert_eq(json_array_size(units), 8, "%s", r.err);
	for (size_t i = 0; i < 8; i++) {
		json_t *u = json_array_get(units, i);

		snprintf(path, sizeof(path), "%s/fit-%02zu.txt", fits, i);
		cr_assert_eq(stat(path, &st), 0, "%s", path);
		cr_expect_str_eq(json_string_value(jget(u, "status")), "complete", "fit %zu", i);
		cr_expect_eq(jnum(u, "output_bytes"), (double)st.st_size, "fit %zu: %.0f bytes, file %lld",
			     i, jnum(u, "output_bytes"), (long long)st.st_size);
		cr_expect_eq(jnum(u, "processes"), i == 5 ? 2 : 1, "fit %zu", i);
	}
	/* 96 MiB touched page by page, on top of a ~1 MiB working set */
	cr_expect(jnum(json_array_get(units, 3), "peak_rss_delta_bytes") >= 96 * MIB_F,
		  "spike fit delta %.0f", jnum(json_array_get(units, 3), "peak_rss_delta_bytes"));
	cr_expect(jnum(json_array_get(units, 3), "peak_rss_delta_bytes") < 100 * MIB_F,
		  "spike fit delta %.0f", jnum(json_array_get(units, 3), "peak_rss_delta_bytes"));
	cr_expect_eq(jnum(jget(r.manifest, "run"), "lost_events"), 0);
	snprintf(path, sizeof(path), "rm -rf %s", fits);
	cr_expect_eq(system(path), 0);
	um_result_free(&r);
}

/* kill -TERM to unitmeter: forwarded to the command; the manifest is written all the same. */
Test(run, sigterm_is_forwarded_and_the_manifest_written)
{
	char dir[] = "/tmp/um-term-XXXXXX", manifest[96];
	json_t *m;
	int status;
	pid_t pid;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(manifest, sizeof(manifest), "%s/run.json", dir);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl(unitmeter_bin(), "unitmeter", "run", "-o", manifest, "/bin/sleep", "30", (char *)NULL);
		_exit(99);
	}
	/* the command runs once the BPF programs are attached: then the signal */
	cr_assert_neq(wait_for_child_running(pid, "sleep", 120), 0, "sleep never started");
	kill(pid, SIGTERM);
	status = -1;
	for (int i = 0; i < 1200 && waitpid(pid, &status, WNOHANG) != pid; i++) {
		struct timespec ts = { 0, 50000000L };

		nanosleep(&ts, NULL);
	}
	cr_assert(status != -1 && WIFEXITED(status), "unitmeter did not end on SIGTERM");
	cr_expect_eq(WEXITSTATUS(status), 128 + SIGTERM, "status %d", WEXITSTATUS(status));
	m = json_load_file(manifest, 0, NULL);
	cr_assert_not_null(m, "no manifest after SIGTERM");
	cr_expect_eq(jnum(jget(m, "run"), "exit_signal"), SIGTERM, "sleep died of the forwarded SIGTERM");
	json_decref(m);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		cr_expect_eq(system(cmd), 0);
	}
}

static char run_cwd[128];

/* um_run_with's child_setup: unitmeter, and so the command, starts in run_cwd. */
static void enter_run_cwd(void)
{
	if (chdir(run_cwd))
		_exit(125);
}

/*
 * A run whose unit writes 1 KiB to its working directory (not node-local scratch): project
 * asks no --tmp. Before tmp_output_bytes, any byte written made a --tmp line, and a cluster
 * without node-local scratch never starts such a job.
 */
Test(run, tmp_writes_to_the_working_directory_ask_no_tmp)
{
	struct um_result r, p;
	char cmd[200];

	snprintf(run_cwd, sizeof(run_cwd), "/var/tmp/um-cwd-%d", getpid());
	cr_assert(!mkdir(run_cwd, 0755) || errno == EEXIST);
	um_run_with(&r, true, (const char *[]){ "run", "--unit", "fit_unit", workload("units"),
						"--mode", "write", "--paths", "out.bin", "--bytes",
						"1024", NULL }, enter_run_cwd);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(jnum(json_array_get(jget(r.truth, "files"), 0), "file_size"), 1024, "%s",
		     r.out);
	cr_expect_eq(jnum(json_array_get(jget(r.manifest, "units"), 0), "output_bytes"), 1024);
	cr_expect_eq(jnum(json_array_get(jget(r.manifest, "units"), 0), "tmp_output_bytes"), 0);
	um_run(&p, false, (const char *[]){ "project", r.manifest_path, "--units", "100000", NULL });
	cr_expect_eq(p.status, 0, "%s", p.err);
	cr_expect_null(strstr(p.out, "#SBATCH --tmp"), "%s", p.out);
	cr_expect_not_null(strstr(p.out, "# no --tmp: a unit wrote at most 0 bytes under "), "%s",
			   p.out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run_cwd);
	cr_expect_eq(system(cmd), 0);
	um_result_free(&p);
	um_result_free(&r);
}

/* Write a whole file (the feature record, as a test would have it). */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fputs(text, f) >= 0 && fclose(f) == 0, true, "%s: %s", path, strerror(errno));
}

/* `unitmeter run -q -- true`: its exit status; its stderr in err when asked. */
static int run_true(char **err)
{
	const char *args[] = { "run", "-q", "--", "/bin/true", NULL };
	struct um_result r;
	int status;

	um_run(&r, true, args);
	status = r.status;
	if (err)
		*err = strdup(r.err ? r.err : "");
	um_result_free(&r);
	return status;
}

/*
 * What the probes and the kernel's BTF said is kept per boot (user/trace/kernel.c): written by a
 * run, read by the next instead of probing (a tampered record shows it is read), and trusted
 * only when root owns it and no one else may write it; a record of another boot or format is
 * probed again and rewritten.
 */
Test(run, kernel_features_kept_per_boot_and_trusted_only_from_root)
{
	char dir[] = "/tmp/um-features-XXXXXX", path[64], head[256], *boot, *record, *now, *err;
	struct utsname u;
	struct stat st;
	const char *bits;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kernel-features", dir);
	setenv("UNITMETER_FEATURE_CACHE", path, 1);
	cr_assert_eq(uname(&u), 0);
	boot = slurp_file("/proc/sys/kernel/random/boot_id");
	cr_assert_not_null(boot);
	boot[strcspn(boot, "\n")] = '\0';

	cr_assert_eq(run_true(NULL), 0, "a traced run failed");
	record = slurp_file(path);
	cr_assert_not_null(record, "no feature record at %s", path);
	snprintf(head, sizeof(head), "unitmeter-kernel-features 5 %s %s ", boot, u.release);
	cr_assert_eq(strncmp(record, head, strlen(head)), 0, "record '%s', expected '%s...'", record,
		     head);
	/* thirteen features, then the fault hook, one digit each */
	bits = record + strlen(head);
	cr_expect_geq(strspn(bits, "01"), 13, "record '%s'", record);
	cr_expect(bits[13] >= '0' && bits[13] <= '2' && !strcmp(bits + 14, "\n"), "record '%s'",
		  record);
	cr_expect_eq(bits[0], '1', "the ring buffer, which the run used, recorded absent");
	cr_assert_eq(stat(path, &st), 0);
	/* root's, and no one else may write it (what the reader asks; the umask may take more) */
	cr_expect(st.st_uid == 0 && !(st.st_mode & 022), "record owned by %u, mode %o",
		  (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));

	/* the record is what the next run believes: one saying no ring buffer refuses the run */
	now = strdup(record);
	now[strlen(head)] = '0';
	write_text(path, now);
	chmod(path, 0644);
	cr_expect_neq(run_true(&err), 0, "a run believing the kernel has no ring buffer ran");
	cr_expect(strstr(err, "no BPF ring buffer"), "refusal: %s", err);
	free(err);

	/* the same record writable by others is not believed: probed again, rewritten */
	chmod(path, 0666);
	cr_expect_eq(run_true(NULL), 0, "a record others may write was believed");
	free(now);
	now = slurp_file(path);
	cr_expect_str_eq(now, record, "the record rewritten");
	cr_assert_eq(stat(path, &st), 0);
	cr_expect(!(st.st_mode & 022), "rewritten with mode %o", (unsigned)(st.st_mode & 0777));

	/* a record of another format, whatever its digits, is probed again and rewritten: the
	 * tampered features under format 4's head */
	free(now);
	snprintf(head, sizeof(head), "unitmeter-kernel-features 4 %s %s 0%s", boot, u.release,
		 bits + 1);
	write_text(path, head);
	chmod(path, 0644);
	cr_expect_eq(run_true(NULL), 0, "an old record was believed");
	now = slurp_file(path);
	cr_expect_str_eq(now, record, "the old record rewritten");

	free(now);
	free(record);
	free(boot);
	unlink(path);
	rmdir(dir);
	unsetenv("UNITMETER_FEATURE_CACHE");
}
