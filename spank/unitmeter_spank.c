// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unitmeter_spank: a SLURM SPANK plugin that traces the tasks of a job with unitmeter.
 *
 *   plugstack.conf:  required /usr/local/lib/unitmeter_spank.so unitmeter=/usr/local/bin/unitmeter
 *   sbatch --unitmeter=fit_unit[,SPEC...] [--unitmeter-out=DIR] job.sh
 *
 * Without --unitmeter every callback returns at once. With it, slurm_spank_task_init_privileged,
 * which runs as root in the task's own process after fork and before setuid+exec, starts
 * `unitmeter attach -p <this pid> --lookup-at-exec --slurm-job <ids> ...` outside the job's
 * cgroups (the ids and the job's time limit go to the manifest's run.limits), and returns
 * once the tracer's probes are attached, so the task's program is traced from its first
 * instruction. Outputs, per task, in DIR (default: unitmeter-out in the job's working directory):
 *
 *   JOB.STEP.TASK.json          the run manifest, written when the task ends
 *   JOB.STEP.TASK.units.jsonl   one line per finished unit, written as each unit ends
 *   JOB.STEP.TASK.log           the tracer's own stderr and closing tables
 *
 * JOB is the job id, or ARRAYJOB_ARRAYTASK for an array task (as squeue shows it); STEP is the
 * step number or "batch"/"extern"/"interactive"; TASK is the task's global rank. DIR and the
 * log are created as the job's user; the tracer hands the manifest and stream to that user.
 *
 * A tracer that cannot start is reported with one slurm_error line, and the job runs untraced:
 * a measurement tool must not be the reason a user's job fails.
 */
#include <stdint.h> /* spank.h uses uint32_t without including it */
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <slurm/spank.h>
#include <slurm/slurm.h> /* SLURM_BATCH_SCRIPT and the other special step ids */

SPANK_PLUGIN(unitmeter, 1);

#define DEFAULT_TRACER "/usr/local/bin/unitmeter"
#define DEFAULT_OUT_DIR "unitmeter-out"
/* unitmeter attach takes one --unit per spec; a handful is plenty for one job */
#define MAX_SPECS 16
/* Attaching takes well under a second here; a tracer that needs more than this is stuck, and
 * the user's task must not wait on it much longer. plugstack.conf's ready_timeout=SECONDS
 * changes it for slower nodes (an emulated one loads BPF programs in tens of seconds). */
#define READY_TIMEOUT_S 15
#define READY_TIMEOUT_MAX_S 600
/* The tracer's ready pipe, as the tracer sees it: the first fd after stdio. */
#define TRACER_READY_FD 3

static char *opt_specs; /* --unitmeter value, validated */
static char *opt_out;   /* --unitmeter-out value */
static char tracer_path[PATH_MAX] = DEFAULT_TRACER;
static int ready_timeout_s = READY_TIMEOUT_S;

/* ----------------------------------------------------------------------------- options */

/* Each comma-separated spec non-empty and free of blanks (they would be one argv word anyway,
 * but a blank is almost always a quoting mistake), at most MAX_SPECS of them. */
static int check_specs(const char *arg)
{
	int n = 1;

	if (!arg || !*arg) {
		slurm_error("unitmeter: --unitmeter needs a unit spec, e.g. --unitmeter=fit_unit");
		return -1;
	}
	for (const char *p = arg; *p; p++) {
		if (*p == ',')
			n++;
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			slurm_error("unitmeter: --unitmeter=%s: a spec has a blank in it", arg);
			return -1;
		}
	}
	if (arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")) {
		slurm_error("unitmeter: --unitmeter=%s: an empty spec between commas", arg);
		return -1;
	}
	if (n > MAX_SPECS) {
		slurm_error("unitmeter: --unitmeter=%s: %d specs, at most %d", arg, n, MAX_SPECS);
		return -1;
	}
	return 0;
}

/* Option callbacks run in srun/sbatch (so a bad value is refused at submit) and again in
 * slurmstepd, where SLURM passes the value through the job's environment. */
static int on_unitmeter(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (check_specs(arg))
		return -1;
	free(opt_specs);
	opt_specs = strdup(arg);
	return opt_specs ? 0 : -1;
}

static int on_unitmeter_out(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	if (!arg || !*arg) {
		slurm_error("unitmeter: --unitmeter-out needs a directory");
		return -1;
	}
	free(opt_out);
	opt_out = strdup(arg);
	return opt_out ? 0 : -1;
}

static struct spank_option unitmeter_option = {
	"unitmeter", "SPEC[,SPEC...]",
	"Measure every call of each unit function SPEC (SYMBOL or PATH:SYMBOL, as 'unitmeter "
	"attach --unit' takes it) in every task: wall, CPU, peak RSS, bytes written, per call",
	1, 0, on_unitmeter,
};

static struct spank_option out_option = {
	"unitmeter-out", "DIR",
	"Directory for unitmeter's per-task files (default: unitmeter-out in the job's working "
	"directory); created as the job's user",
	1, 0, on_unitmeter_out,
};

/* plugstack.conf arguments: unitmeter=ABSOLUTE_PATH, ready_timeout=SECONDS. A bad one is reported and ignored rather
 * than failing init: with `required`, a failed init fails every job on the node, including
 * the ones that never asked for tracing. */
static void parse_plugin_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "unitmeter=", 10)) {
			const char *path = av[i] + 10;

			if (path[0] != '/' || strlen(path) >= sizeof(tracer_path))
				slurm_error("unitmeter: plugstack.conf: '%s' must be an absolute path; using %s",
					    av[i], tracer_path);
			else
				snprintf(tracer_path, sizeof(tracer_path), "%s", path);
		} else if (!strncmp(av[i], "ready_timeout=", 14)) {
			char *end;
			long s = strtol(av[i] + 14, &end, 10);

			if (end == av[i] + 14 || *end || s < 1 || s > READY_TIMEOUT_MAX_S)
				slurm_error("unitmeter: plugstack.conf: '%s' must be 1 to %d seconds; "
					    "using %d", av[i], READY_TIMEOUT_MAX_S, ready_timeout_s);
			else
				ready_timeout_s = (int)s;
		} else {
			slurm_error("unitmeter: plugstack.conf: unknown argument '%s' (known: "
				    "unitmeter=PATH, ready_timeout=SECONDS)", av[i]);
		}
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	/* options exist only where a user gives them (srun, sbatch/salloc) or where the job
	 * runs (slurmstepd); a static spank_options table does not register under sbatch in
	 * 22.05, so register them here */
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
		return 0;
	parse_plugin_args(ac, av);
	if (spank_option_register(sp, &unitmeter_option) != ESPANK_SUCCESS ||
	    spank_option_register(sp, &out_option) != ESPANK_SUCCESS) {
		slurm_error("unitmeter: cannot register --unitmeter/--unitmeter-out (another plugin has them?)");
		return -1;
	}
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	free(opt_specs);
	free(opt_out);
	opt_specs = opt_out = NULL;
	return 0;
}

/* --------------------------------------------------------------------- the job's identity */

struct task_ids {
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* the job's supplementary groups; owned by SLURM */
	int ngroups;
	char job[32];  /* JOB or ARRAYJOB_ARRAYTASK */
	char step[16]; /* N, batch, extern, interactive */
	uint32_t task;
	mode_t umask;  /* the job's, from SLURM_UMASK */
	/* for the manifest's run.limits: attach --slurm-job JOB,ARRAY_JOB,ARRAY_TASK,STEP,TIME */
	char slurm_job[96];
	/* the job's TMPDIR, "" when unset: attach --tmp-dir, the node-local scratch whose
	 * writes count toward --tmp (the job's own /tmp otherwise, seen through its root) */
	char tmpdir[4096];
};

/*
 * The job's time limit in seconds, as slurmctld holds it when the task starts, into buf; "-"
 * when unlimited or not known. No SPANK item and no job variable carries it in 22.05, so ask
 * slurmctld (one RPC, as squeue makes) with slurm_load_job from the libslurmfull that
 * slurmstepd has loaded: looked up at run time, so srun and sbatch, which load this plugin
 * too, need no libslurm.
 */
static void job_time_limit(uint32_t job, char *buf, size_t size)
{
	int (*load)(job_info_msg_t **, uint32_t, uint16_t) =
		(int (*)(job_info_msg_t **, uint32_t, uint16_t))dlsym(RTLD_DEFAULT, "slurm_load_job");
	void (*release)(job_info_msg_t *) =
		(void (*)(job_info_msg_t *))dlsym(RTLD_DEFAULT, "slurm_free_job_info_msg");
	job_info_msg_t *msg = NULL;

	snprintf(buf, size, "-");
	if (!load || !release || load(&msg, job, 0) || !msg)
		return;
	/* minutes; INFINITE: no limit, NO_VAL: none set (the partition's applies) */
	if (msg->record_count >= 1 && msg->job_array[0].job_id == job &&
	    msg->job_array[0].time_limit != INFINITE && msg->job_array[0].time_limit != NO_VAL)
		snprintf(buf, size, "%llu", (unsigned long long)msg->job_array[0].time_limit * 60);
	release(msg);
}

static int get_ids(spank_t sp, struct task_ids *t)
{
	uint32_t job = 0, step = 0, array_job = 0, array_task = 0;
	char mask[16], limit[24];
	bool in_array;

	memset(t, 0, sizeof(*t));
	if (spank_get_item(sp, S_JOB_UID, &t->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &t->gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &t->task) != ESPANK_SUCCESS)
		return -1;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &t->groups, &t->ngroups) != ESPANK_SUCCESS) {
		t->groups = NULL;
		t->ngroups = 0;
	}
	/* for a job that is no array task, 22.05 gives S_JOB_ARRAY_ID = the job id (or 0) and
	 * S_JOB_ARRAY_TASK_ID = NO_VAL (seen here) */
	in_array = spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) == ESPANK_SUCCESS && array_job &&
		   spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) == ESPANK_SUCCESS &&
		   array_task != NO_VAL;
	if (in_array)
		snprintf(t->job, sizeof(t->job), "%u_%u", array_job, array_task);
	else
		snprintf(t->job, sizeof(t->job), "%u", job);
	switch (step) {
	case SLURM_BATCH_SCRIPT:
		snprintf(t->step, sizeof(t->step), "batch");
		break;
	case SLURM_EXTERN_CONT:
		snprintf(t->step, sizeof(t->step), "extern");
		break;
	case SLURM_INTERACTIVE_STEP:
		snprintf(t->step, sizeof(t->step), "interactive");
		break;
	default:
		snprintf(t->step, sizeof(t->step), "%u", step);
	}
	job_time_limit(job, limit, sizeof(limit));
	if (in_array)
		snprintf(t->slurm_job, sizeof(t->slurm_job), "%u,%u,%u,%s,%s", job, array_job,
			 array_task, t->step, limit);
	else
		snprintf(t->slurm_job, sizeof(t->slurm_job), "%u,-,-,%s,%s", job, t->step, limit);
	/* srun and sbatch pass the submitter's umask; files we make for the user follow it */
	t->umask = 022;
	if (spank_getenv(sp, "SLURM_UMASK", mask, sizeof(mask)) == ESPANK_SUCCESS)
		t->umask = (mode_t)strtoul(mask, NULL, 8) & 0777;
	if (spank_getenv(sp, "TMPDIR", t->tmpdir, sizeof(t->tmpdir)) != ESPANK_SUCCESS)
		t->tmpdir[0] = '\0';
	return 0;
}

/* ------------------------------------------------------------------ acting as the job user */

struct saved_creds {
	gid_t egid;
	gid_t groups[NGROUPS_MAX];
	int ngroups;
	mode_t umask;
};

/* Take the job user's effective ids (and groups, so group-writable dirs behave as they will for
 * the job), keeping the real and saved ids 0 so become_root() can return. Anything created in
 * the meantime is the user's, and no path the user controls is followed with root's rights. */
static int become_user(const struct task_ids *t, struct saved_creds *s)
{
	s->egid = getegid();
	s->ngroups = getgroups(NGROUPS_MAX, s->groups);
	if (s->ngroups < 0)
		return -1;
	if (setgroups(t->ngroups > 0 ? (size_t)t->ngroups : 1, t->ngroups > 0 ? t->groups : &t->gid))
		return -1;
	if (setegid(t->gid))
		goto undo_groups;
	if (seteuid(t->uid))
		goto undo_gid;
	s->umask = umask(t->umask);
	return 0;
undo_gid:
	if (setegid(s->egid)) {}
undo_groups:
	if (setgroups(s->ngroups, s->groups)) {}
	return -1;
}

static int become_root(const struct saved_creds *s)
{
	umask(s->umask);
	if (seteuid(0) || setegid(s->egid) || setgroups(s->ngroups, s->groups))
		return -1;
	return 0;
}

/* mkdir -p, with the caller's credentials. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = c;
		if (!c)
			break;
	}
	if (stat(buf, &st))
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------------- the tracer */

struct outputs {
	char dir[PATH_MAX];
	char manifest[PATH_MAX];
	char stream[PATH_MAX];
	char log[PATH_MAX];
};

static int output_paths(const struct task_ids *t, struct outputs *o)
{
	const char *dir = opt_out ? opt_out : DEFAULT_OUT_DIR;
	char cwd[PATH_MAX], base[PATH_MAX];

	/* slurmstepd has already chdir'ed to the job's working directory (--chdir, or the
	 * submit directory) when it forks the task: a relative DIR is relative to that */
	if (dir[0] == '/') {
		if (snprintf(o->dir, sizeof(o->dir), "%s", dir) >= (int)sizeof(o->dir))
			return -1;
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		if (snprintf(o->dir, sizeof(o->dir), "%s/%s", cwd, dir) >= (int)sizeof(o->dir))
			return -1;
	}
	if (snprintf(base, sizeof(base), "%s/%s.%s.%u", o->dir, t->job, t->step, t->task) >=
	    (int)sizeof(base))
		return -1;
	if (snprintf(o->manifest, sizeof(o->manifest), "%s.json", base) >= (int)sizeof(o->manifest) ||
	    snprintf(o->stream, sizeof(o->stream), "%s.units.jsonl", base) >= (int)sizeof(o->stream) ||
	    snprintf(o->log, sizeof(o->log), "%s.log", base) >= (int)sizeof(o->log))
		return -1;
	return 0;
}

/* Leave every cgroup SLURM put the task in: the root of each v1 hierarchy under /sys/fs/cgroup
 * and of the v2 one (at /sys/fs/cgroup/unified in hybrid mode, or /sys/fs/cgroup itself).
 * Inside the job's cgroups the tracer would be charged to the job's --mem, bound to its CPUs,
 * and killed by proctrack/cgroup as soon as the task ends, before it writes the manifest. */
static void leave_job_cgroups(void)
{
	static const char *const roots[] = {
		"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct",
		"/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/devices",
		"/sys/fs/cgroup/freezer", "/sys/fs/cgroup/blkio", "/sys/fs/cgroup/pids",
		"/sys/fs/cgroup/net_cls", "/sys/fs/cgroup/net_prio", "/sys/fs/cgroup/net_cls,net_prio",
		"/sys/fs/cgroup/perf_event", "/sys/fs/cgroup/hugetlb", "/sys/fs/cgroup/rdma",
		"/sys/fs/cgroup/misc", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified",
		"/sys/fs/cgroup",
	};
	char path[128], pid[24];
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/cgroup.procs", roots[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* not mounted here */
		if (write(fd, pid, len) != len)
			dprintf(STDERR_FILENO, "unitmeter_spank: cannot leave the job's cgroup in %s: %s\n",
				roots[i], strerror(errno));
		close(fd);
	}
}

/* The grandchild: detach from the task completely, then become the tracer. Never returns. */
static void exec_tracer(const struct task_ids *t, const struct outputs *o, int ready_fd,
			int log_fd, pid_t task)
{
	char *specs = strdup(opt_specs), *save = NULL, pid_arg[24], owner[48], ready_arg[8];
	char *argv[22 + 2 * MAX_SPECS]; /* 19 fixed words and the NULL, 2 per spec */
	/* a clean environment: the tracer runs as root and must not take the user's LD_PRELOAD,
	 * PYTHONPATH or the like, nor slurmstepd's */
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	int n = 0, null_fd;
	sigset_t none;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	/* its own session: no signal for the job's process group or terminal reaches it */
	setsid();
	leave_job_cgroups();

	/* stdin from /dev/null, stdout and stderr to the log, the ready pipe as fd 3, nothing else:
	 * slurmstepd's sockets and the task's pipes must not stay open in a process that outlives
	 * them. Move the fds above the stdio range first, so no dup2 overwrites another. */
	null_fd = open("/dev/null", O_RDONLY);
	ready_fd = fcntl(ready_fd, F_DUPFD, 10);
	log_fd = fcntl(log_fd, F_DUPFD, 10);
	null_fd = fcntl(null_fd, F_DUPFD, 10);
	if (ready_fd < 0 || log_fd < 0 || null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 ||
	    dup2(log_fd, STDOUT_FILENO) < 0 || dup2(log_fd, STDERR_FILENO) < 0 ||
	    dup2(ready_fd, TRACER_READY_FD) < 0)
		_exit(126);
	close_range(TRACER_READY_FD + 1, ~0U, 0);

	/* slurmstepd blocks and ignores signals its tasks get back only at their exec; the
	 * tracer needs SIGINT/SIGTERM to finish its manifest, so start it from the defaults */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL); /* fails harmlessly for SIGKILL, SIGSTOP, RT gaps */

	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)task);
	snprintf(owner, sizeof(owner), "%u:%u", (unsigned)t->uid, (unsigned)t->gid);
	snprintf(ready_arg, sizeof(ready_arg), "%d", TRACER_READY_FD);
	argv[n++] = tracer_path;
	argv[n++] = "attach";
	argv[n++] = "-p";
	argv[n++] = pid_arg;
	bool bare = false;

	for (char *s = specs ? strtok_r(specs, ",", &save) : NULL; s; s = strtok_r(NULL, ",", &save)) {
		argv[n++] = "--unit";
		argv[n++] = s;
		bare |= !strchr(s, ':');
	}
	/* a bare SYMBOL is in the program the task (or its job script) execs later, not in
	 * slurmstepd, which the task still is */
	if (bare)
		argv[n++] = "--lookup-at-exec";
	argv[n++] = "--owner";
	argv[n++] = owner;
	argv[n++] = "--slurm-job";
	argv[n++] = (char *)t->slurm_job;
	if (t->tmpdir[0]) {
		argv[n++] = "--tmp-dir";
		argv[n++] = (char *)t->tmpdir;
	}
	argv[n++] = "--ready-fd";
	argv[n++] = ready_arg;
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = (char *)o->manifest;
	argv[n++] = "--units-jsonl";
	argv[n++] = (char *)o->stream;
	argv[n] = NULL;
	execve(tracer_path, argv, envp);
	dprintf(STDERR_FILENO, "unitmeter_spank: cannot run %s: %s (set unitmeter=PATH in plugstack.conf)\n",
		tracer_path, strerror(errno));
	_exit(127);
}

/* The last non-empty line the tracer wrote to its log, for the one-line report. */
static void last_log_line(int log_fd, char *buf, size_t size)
{
	char tail[512];
	off_t end = lseek(log_fd, 0, SEEK_END), from = end > (off_t)sizeof(tail) - 1 ? end - (off_t)sizeof(tail) + 1 : 0;
	ssize_t n = end > 0 ? pread(log_fd, tail, sizeof(tail) - 1, from) : 0;
	char *line;

	snprintf(buf, size, "no message");
	if (n <= 0)
		return;
	tail[n] = '\0';
	while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
		tail[--n] = '\0';
	line = strrchr(tail, '\n');
	line = line ? line + 1 : tail;
	/* a longer line is cut: the report is one line of slurmd.log, the log has it whole */
	if (snprintf(buf, size, "%s", line) >= (int)size)
		buf[size - 1] = '\0';
}

/*
 * Wait for the tracer to say its probes are attached: it writes the environment the task's
 * program needs (python: units) as "env NAME=VALUE" / "env-prepend NAME=VALUE" lines, then
 * "ok", and closes the pipe. True when the last line is "ok"; false when it closed the pipe
 * without it (it failed) or the timeout passed (*timed_out). The lines are left in buf.
 */
static bool wait_ready(int fd, char *buf, size_t size, bool *timed_out)
{
	struct timespec now, until;
	size_t got = 0;

	*timed_out = false;
	buf[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ready_timeout_s;
	for (;;) {
		long left_ms;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left_ms = (until.tv_sec - now.tv_sec) * 1000 + (until.tv_nsec - now.tv_nsec) / 1000000;
		if (left_ms <= 0) {
			*timed_out = true;
			return false;
		}
		if (poll(&p, 1, (int)left_ms) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (!p.revents)
			continue;
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		got += n;
		buf[got] = '\0';
		if (n == 0 || got == size - 1)
			break;
	}
	return got >= 3 && !strcmp(buf + got - 3, "ok\n") && (got == 3 || buf[got - 4] == '\n');
}

/*
 * Give the task's program the environment the tracer asked for (python: units: the bootstrap
 * on PYTHONPATH, the unit specs, the marker library, the report directory). Returns 0, or -1
 * with the variable that could not be set in *bad.
 */
static int apply_tracer_env(spank_t sp, char *lines, const char **bad)
{
	for (char *line = strtok(lines, "\n"); line; line = strtok(NULL, "\n")) {
		bool prepend = !strncmp(line, "env-prepend ", 12);
		char *name, *eq, old[8192], joined[16384];
		const char *value;

		if (!prepend && strncmp(line, "env ", 4))
			continue; /* "ok" */
		name = line + (prepend ? 12 : 4);
		eq = strchr(name, '=');
		if (!eq)
			continue;
		*eq = '\0';
		value = eq + 1;
		if (prepend && spank_getenv(sp, name, old, sizeof(old)) == ESPANK_SUCCESS && *old) {
			snprintf(joined, sizeof(joined), "%s:%s", value, old);
			value = joined;
		}
		if (spank_setenv(sp, name, value, 1) != ESPANK_SUCCESS) {
			*bad = name;
			return -1;
		}
	}
	return 0;
}

/*
 * Fork twice, so that the tracer is no child of the task (whose program would inherit it) nor
 * of slurmstepd (which would wait for it); the middle child reports the tracer's pid and exits.
 * Returns the tracer's pid, or -1 with errno.
 */
static pid_t spawn_tracer(const struct task_ids *t, const struct outputs *o, int log_fd,
			  int *ready_rd)
{
	int ready[2], pid_pipe[2], status;
	/* task_init_privileged runs in the task's own process: this pid is the task's */
	pid_t task = getpid(), middle, tracer = -1;

	if (pipe2(ready, O_CLOEXEC))
		return -1;
	if (pipe2(pid_pipe, O_CLOEXEC)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	middle = fork();
	if (middle == 0) {
		pid_t g = fork();

		if (g == 0)
			exec_tracer(t, o, ready[1], log_fd, task);
		if (write(pid_pipe[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		_exit(g < 0);
	}
	close(ready[1]);
	close(pid_pipe[1]);
	if (middle > 0) {
		while (waitpid(middle, &status, 0) < 0 && errno == EINTR)
			;
		if (read(pid_pipe[0], &tracer, sizeof(tracer)) != sizeof(tracer))
			tracer = -1;
	}
	close(pid_pipe[0]);
	if (tracer <= 0) {
		close(ready[0]);
		errno = middle < 0 ? errno : EAGAIN;
		return -1;
	}
	*ready_rd = ready[0];
	return tracer;
}

/* ------------------------------------------------------------------------------ the hook */

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	struct task_ids t;
	struct saved_creds saved;
	struct outputs o;
	char why[PATH_MAX + 64];
	const char *failed = NULL;
	int log_fd = -1, ready_rd = -1, err = 0;
	static char ready_text[16384];
	const char *bad_env = NULL;
	bool timed_out;
	pid_t tracer;

	(void)ac;
	(void)av;
	/* without --unitmeter: nothing, at no cost */
	if (!opt_specs || !spank_remote(sp))
		return 0;
	if (get_ids(sp, &t)) {
		slurm_error("unitmeter: task runs untraced: SLURM did not give the job's ids");
		return 0;
	}
	if (output_paths(&t, &o)) {
		slurm_error("unitmeter: job %s task %u runs untraced: output path too long or no working directory",
			    t.job, t.task);
		return 0;
	}
	if (become_user(&t, &saved)) {
		slurm_error("unitmeter: job %s task %u runs untraced: cannot take uid %u: %s", t.job, t.task,
			    (unsigned)t.uid, strerror(errno));
		return 0;
	}
	if (make_dirs(o.dir)) {
		err = errno;
		failed = o.dir;
	} else if ((log_fd = open(o.log, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0) {
		err = errno;
		failed = o.log;
	}
	if (become_root(&saved)) {
		/* the task would go on with the user's euid and root's real uid: stop it instead */
		slurm_error("unitmeter: cannot return to root after creating %s: %s", o.dir, strerror(errno));
		if (log_fd >= 0)
			close(log_fd);
		return -1;
	}
	if (err) {
		slurm_error("unitmeter: job %s task %u runs untraced: cannot create %s as uid %u: %s "
			    "(choose another --unitmeter-out)", t.job, t.task, failed, (unsigned)t.uid,
			    strerror(err));
		return 0;
	}

	tracer = spawn_tracer(&t, &o, log_fd, &ready_rd);
	if (tracer < 0) {
		slurm_error("unitmeter: job %s task %u runs untraced: cannot fork the tracer: %s",
			    t.job, t.task, strerror(errno));
		close(log_fd);
		return 0;
	}
	if (wait_ready(ready_rd, ready_text, sizeof(ready_text), &timed_out)) {
		if (apply_tracer_env(sp, ready_text, &bad_env))
			slurm_error("unitmeter: job %s task %u: cannot set %s for its python: units; "
				    "they will not be measured", t.job, t.task, bad_env);
	} else {
		if (timed_out) {
			/* it lives in its own session: stop it and anything it started */
			kill(-tracer, SIGKILL);
			snprintf(why, sizeof(why), "%s not ready after %d s", tracer_path,
				 ready_timeout_s);
		} else {
			last_log_line(log_fd, why, sizeof(why));
		}
		slurm_error("unitmeter: job %s task %u runs untraced: %s (log: %s)", t.job, t.task, why,
			    o.log);
	}
	close(ready_rd);
	close(log_fd);
	return 0;
}
