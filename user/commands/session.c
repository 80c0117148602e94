// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/fileio.h"
#include "trace/adopt.h"
#include "trace/hw.h"
#include "page/html.h"
#include "trace/launch.h"
#include "trace/limits.h"
#include "common/log.h"
#include "record/run_record.h"
#include "trace/python.h"
#include "trace/slurm_job.h"
#include "commands/attach_target.h"
#include "commands/session.h"
#include "trace/memcg.h"
#include "trace/spec.h"
#include "trace/tmp_dir.h"
#include "trace/tracer.h"

/* After the root is reaped, how long its final records may take to arrive. */
#define DRAIN_TIMEOUT_NS (2ULL * 1000000000ULL)

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stop_from_user; /* sent with kill(2), not typed at the terminal */
static volatile sig_atomic_t child_changed;

static void on_stop(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	stop_signal = sig;
	/* Ctrl-C already reached the command through the terminal; kill(1) reached only us */
	stop_from_user = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
}

static void on_child(int sig)
{
	(void)sig;
	child_changed = 1;
}

/*
 * From the start of a session, so that a signal during set-up (the load takes ~70 ms, more
 * under a sanitizer or in a slow VM) is acted on, not fatal with nothing cleaned up. The command
 * gets the default actions back in launch.c.
 */
static void install_signals(void)
{
	struct sigaction stop = { 0 }, child = { 0 }, ignore = { 0 };

	/* one-shot: a second Ctrl-C takes the default action and ends unitmeter at once */
	stop.sa_sigaction = on_stop;
	stop.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&stop.sa_mask);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &stop, NULL);
	child.sa_handler = on_child;
	sigemptyset(&child.sa_mask);
	sigaction(SIGCHLD, &child, NULL);
	/* a command that dies while held must give launch__release an error, not end unitmeter */
	ignore.sa_handler = SIG_IGN;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGPIPE, &ignore, NULL);
}

struct session {
	const struct um_options *opts;
	struct unit_spec specs[UM_MAX_SPECS];
	struct unit_target targets[UM_MAX_SPECS + 1];
	size_t n_specs, n_targets;
	struct python_units python;
	bool have_python;
	size_t python_errors; /* python: specs that matched nothing: the run fails with them */
	struct tracer_config tcfg;
	struct run_record_config rcfg;
	struct tracer *tracer;
	struct run_record *record;
	struct memcg memcg; /* whose charge is read */
	struct run_limits limits; /* what the command or target runs under */
	struct tmp_dir tmp_dir;   /* whose writes count toward tmp_output_bytes */
	/* phase ends (CLOCK_MONOTONIC), for -v: where the fixed cost goes */
	uint64_t t_begin, t_released, t_ended, t_drained, t_written;
	struct tracer_timing timing;
	char *units_path;
	const char *manifest;
	size_t n_taken; /* attach: processes taken besides the target (forked before, a cgroup's) */
};

/*
 * The ring buffer is read whenever it holds something, and in a storm of tiny units it always
 * does: the reader would go round for every dozen records, a flush and a wait4 each time. After
 * a small batch, pause briefly so the next read takes hundreds: units reach the stream a
 * couple of milliseconds later, and unitmeter's own CPU drops.
 */
#define SMALL_BATCH 256

/*
 * One turn of a tracing loop: read what the ring holds (each record to the run record), continue
 * the processes held at their exec among them once their programs are looked up, push the units
 * out, pace. Returns the records read or a negative errno, -EINTR for a signal; a failure is said
 * here.
 */
static int read_records(struct session *s)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	int n = tracer__poll(s->tracer, 100 /* ms */);

	/* a held process is stopped until this: before the flush and the pause */
	tracer__service_held(s->tracer);
	run_record__flush(s->record);
	/* once the command has ended there is nothing to batch: the last records are awaited */
	if (n > 0 && n < SMALL_BATCH && !s->t_ended)
		nanosleep(&pause, NULL);
	if (n < 0 && n != -EINTR)
		um_err("reading the ring buffer failed: %s", strerror(-n));
	return n;
}

/* Every --unit spec resolved (its file, symbol and offset, or python:), and the targets to probe. */
static int resolve_specs(struct session *s, const struct um_options *o, const char *default_exe,
			 pid_t target)
{
	char why[1024];

	for (size_t i = 0; i < o->n_specs; i++) {
		int err;

		if (o->lookup_at_exec && !strchr(o->specs[i], ':')) {
			/* found (or not) in the programs exec'd later: trace/probes.c looks at each */
			s->specs[i] = (struct unit_spec){ .text = o->specs[i],
							   .symbol = strdup(o->specs[i]) };
			if (!s->specs[i].symbol)
				return -ENOMEM;
			s->targets[s->n_targets++] = (struct unit_target){
				.symbol = s->specs[i].symbol, .cookie = (uint32_t)i,
			};
			s->n_specs++;
			continue;
		}
		err = unit_spec_resolve(&s->specs[i], o->specs[i], default_exe, target, why,
					sizeof(why));

		if (err) {
			um_err("%s", why);
			return err;
		}
		s->n_specs++;
		if (s->specs[i].python) {
			s->have_python = true;
			continue;
		}
		s->targets[s->n_targets++] = (struct unit_target){
			.path = s->specs[i].path, .symbol = s->specs[i].symbol,
			.offset = s->specs[i].offset, .cookie = (uint32_t)i,
		};
	}
	return 0;
}

/* python: units: the interpreter checked, the bootstrap's environment made, the marker pair
 * added to the targets (one pair serves every python: spec; the index is the argument). */
static int prepare_python(struct session *s, const struct um_options *o, char *const *command,
			  const char *command_path, uid_t uid, gid_t gid)
{
	char why[1024];
	int err;

	/* attach: only a launcher that execs the interpreter after we are ready (--ready-fd)
	 * can hand it the bootstrap's environment; its interpreter is not known yet */
	if (o->command == UM_CMD_ATTACH && o->ready_fd < 0) {
		um_err("python: units need the interpreter to start under 'unitmeter run', which "
		       "loads the bootstrap into it; a running interpreter cannot be given one");
		return -ENOTSUP;
	}
	err = python_units__prepare(&s->python, s->specs, s->n_specs, command_path, command,
				    o->owner_set ? o->owner_uid : uid,
				    o->owner_set ? o->owner_gid : gid, why, sizeof(why));
	if (err) {
		um_err("%s", why);
		return err;
	}
	/* one marker pair serves every python: spec; the spec index is the argument */
	s->targets[s->n_targets++] = (struct unit_target){
		.path = s->python.marker_lib, .symbol = "unitmeter_unit_begin",
		.end_symbol = "unitmeter_unit_end", .spec_from_arg = true,
	};
	return 0;
}

static int session_prepare(struct session *s, const struct um_options *o, const char *default_exe,
			   pid_t target, char *const *command, const char *command_path)
{
	uid_t uid;
	gid_t gid;
	int err;

	s->opts = o;
	s->manifest = o->output ? o->output : "unitmeter-run.json";
	s->units_path = o->units_jsonl ? strdup(o->units_jsonl) : um_default_units_path(s->manifest);
	if (!s->units_path)
		return -ENOMEM;
	if (um_output_path_check("manifest", s->manifest) ||
	    um_output_path_check("units stream", s->units_path))
		return -ENOENT;
	if (um_same_output(s->manifest, s->units_path)) {
		um_err("the manifest and the units stream are both %s: name two files", s->manifest);
		return -EINVAL;
	}
	err = resolve_specs(s, o, default_exe, target);
	if (err)
		return err;
	if (o->lookup_at_exec && s->n_targets == 0) {
		um_err("--lookup-at-exec looks for bare SYMBOL specs: name one with --unit SYMBOL");
		return -EINVAL;
	}
	if (launch_target_ids(o->as_root, &uid, &gid)) {
		um_err("SUDO_UID/SUDO_GID are not numbers: use --as-root");
		return -EINVAL;
	}
	if (s->have_python) {
		err = prepare_python(s, o, command, command_path, uid, gid);
		if (err)
			return err;
	}
	/* as the traced process sees it: attach's target may have a private /tmp */
	tmp_dir_resolve(&s->tmp_dir, o->tmp_dir, o->command == UM_CMD_ATTACH ? target : 0);
	if (!s->tmp_dir.ino)
		um_warn("%s (tmp_output_bytes will be null; --tmp-dir DIR names another)",
			s->tmp_dir.reason);
	um_info("writes under %s (from %s) count toward tmp_output_bytes", s->tmp_dir.path,
		s->tmp_dir.source);
	s->tcfg.tmp_dir_dev = s->tmp_dir.kernel_dev;
	s->tcfg.tmp_dir_ino = s->tmp_dir.ino;
	s->rcfg.tmp_dir = &s->tmp_dir;
	s->tcfg.ring_bytes = o->ring_kib * 1024;
	s->tcfg.targets = s->targets;
	s->tcfg.n_targets = s->n_targets;
	s->rcfg.mode = o->command == UM_CMD_RUN ? "run" : "attach";
	s->rcfg.command = command;
	s->rcfg.specs = s->specs;
	s->rcfg.n_specs = s->n_specs;
	s->rcfg.units_jsonl = s->units_path;
	s->rcfg.quiet = o->quiet;
	s->rcfg.owner_uid = o->owner_set ? o->owner_uid : uid;
	s->rcfg.owner_gid = o->owner_set ? o->owner_gid : gid;
	return 0;
}

/*
 * Who a session traces, where run and attach differ. run: the command, started here held
 * before its exec, in a memory cgroup made for it; tracked from its exec; times count from its
 * release. attach: a process already running, in the cgroup it is in; tracked as it is now
 * (/proc); times count from just before it is read.
 */
struct session_root {
	struct launch *launch; /* run: the command, started here; NULL: attach */
	const char *exe;       /* the program: where a spec without a path is looked up */
	char *const *command;  /* the manifest's command */
	pid_t pid;             /* attach: the process; run: the command's, once started */
	const char *comm;      /* the root's name in the process table */
	bool children;         /* attach -p: take what pid forked before, too */
	/* attach --cgroup, --job: the cgroup, whose members are all taken and none is the root
	 * (pid: one of them, where specs are looked up); NULL: none */
	const struct cgroup_target *cgroup;
	const struct slurm_ids *slurm; /* --job: the job's ids; NULL: the options' (--slurm-job) */
};

/*
 * run: the command's own memory cgroup made, the command started (held before its exec);
 * attach: the target's memory cgroup found. 0, or the exit status to end with.
 */
static int start_root(struct session *s, const struct um_options *o, struct session_root *root)
{
	struct launch *l = root->launch;
	int err;

	if (l) {
		char procs[PATH_MAX + 16];

		if (!s->record)
			return um_exit_failed(o->command);
		if (s->have_python && python_units__export_env(&s->python)) {
			um_err("cannot set the environment for the python bootstrap: %s",
			       strerror(errno));
			return um_exit_failed(o->command);
		}
		/* the command's own memory cgroup, which it enters before its exec: the charge is
		 * its alone */
		memcg_make_for_run(&s->memcg);
		memcg_procs_file(&s->memcg, procs, sizeof(procs));
		err = launch__start(l, root->exe, o->command_argv, o->as_root,
				    s->memcg.id ? procs : NULL);
		if (err) {
			um_err("cannot start %s: %s", root->exe, strerror(-err));
			return um_exit_failed(o->command);
		}
		root->pid = l->pid;
	} else {
		/* said even when the record failed above, before giving up */
		if (root->cgroup)
			memcg_of_cgroup(&s->memcg, root->cgroup->dir, root->cgroup->name);
		else
			memcg_of_pid(&s->memcg, root->pid);
		if (!s->memcg.id)
			um_warn("memory (cgroup) is not measured: %s (peak_charge_bytes will be "
				"null)", s->memcg.reason);
		if (!s->record)
			return um_exit_failed(o->command);
	}
	return 0;
}

/*
 * The programs loaded, the root tracked (a cgroup's members walked) and the probes attached;
 * the limits read meanwhile. 0, or the exit status to end with.
 */
static int trace_root(struct session *s, const struct um_options *o, struct session_root *root)
{
	struct launch *l = root->launch;
	int err;

	s->tcfg.charge_cgroup_id = s->memcg.id;
	s->tcfg.gpu_mapped_by = l ? 0 : root->pid;
	if (root->cgroup) {
		s->tcfg.join_cgroup_id = root->cgroup->id;
		s->tcfg.join_hierarchy_id = root->cgroup->hierarchy_id;
	}
	err = tracer__open(&s->tracer, &s->tcfg, run_record__on_record, s->record);
	if (l) {
		/* the command said meanwhile whether it entered its cgroup */
		if (s->memcg.id) {
			int entered = launch__cgroup_result(l);

			if (entered)
				memcg_entry_failed(&s->memcg, entered);
		}
		if (!s->memcg.id)
			um_warn("memory (cgroup) is not measured: %s (peak_charge_bytes will be "
				"null)", s->memcg.reason);
	}
	/* read now: run's cgroup goes at the end, and a target's affinity with its process */
	run_limits_capture(&s->limits, root->pid, &s->memcg, root->slurm ? root->slurm : &o->slurm);
	if (!err && !l)
		run_record__set_origin(s->record, um_monotonic_ns());
	/* a cgroup's members: walked once before the attach, and again after (adopt.h) */
	if (!err && root->cgroup) {
		int taken = adopt_walk(s->tracer, true, root->cgroup);

		err = taken < 0 ? taken : 0;
		s->n_taken = taken > 0 ? (size_t)taken : 0;
		if (err)
			um_err("cannot walk the processes in /proc: %s", strerror(-err));
	}
	else if (!err)
		err = tracer__track(s->tracer, root->pid, l ? getpid() : 0, l != NULL);
	if (!err)
		err = tracer__attach(s->tracer);
	if (err) {
		if (l)
			launch__abort(l);
		return um_exit_failed(o->command);
	}
	return 0;
}

/* A signal came during set-up: nothing was measured, and the command was not started. */
static int stopped_in_set_up(const struct session_root *root)
{
	if (root->launch) {
		/* stopped before the command ran: it is not started at all */
		um_err("signal %d during set-up: %s was not started, nothing was measured",
		       stop_signal, root->exe);
		launch__abort(root->launch);
	} else {
		um_err("signal %d during set-up: process %d was not traced, nothing was "
		       "measured", stop_signal, root->pid);
	}
	return 128 + stop_signal;
}

/*
 * The one start of run and attach: prepare the specs and outputs, open the run record, find the
 * memory cgroup, load the programs, track the root, attach, and add the root to the record.
 * Returns 0, ready to release the command (run) or to trace (attach), or the exit status to end
 * with, one line said: um_exit_failed(), or 128+N for signal N during set-up (nothing was
 * measured).
 */
static int session_start(struct session *s, const struct um_options *o, struct session_root *root)
{
	struct launch *l = root->launch;
	char why_buf[1024];
	const char *why;
	int err;

	err = session_prepare(s, o, root->exe, root->pid, root->command, l ? root->exe : NULL);
	if (err)
		return um_exit_failed(o->command);
	/* a run without --unit is legitimate (time -v's figures, exact), but never by surprise */
	if (!o->n_specs)
		um_note("no --unit given: the whole command is measured, no units (--unit FUNCTION "
			"makes each call of FUNCTION a unit)");
	why = tracer_precheck();
	if (why) {
		um_err("%s", why);
		return um_exit_failed(o->command);
	}
	s->record = run_record__new(&s->rcfg, why_buf, sizeof(why_buf));
	if (!s->record)
		um_err("%s", why_buf);
	else
		run_record__set_hardware(s->record, hw_capture(""));
	err = start_root(s, o, root);
	if (err)
		return err;
	err = trace_root(s, o, root);
	if (err)
		return err;
	if (stop_signal)
		return stopped_in_set_up(root);
	s->t_released = um_monotonic_ns();
	if (l)
		run_record__set_origin(s->record, s->t_released);
	if (!root->cgroup)
		run_record__add_root(s->record, root->pid, l ? getpid() : 0, root->comm);
	if (root->children || root->cgroup) {
		/* the fork program follows every tracked process from the attach on: what was
		 * forked before it, or entered the cgroup, is taken now, walk after walk */
		int taken = adopt_walk(s->tracer, root->children, root->cgroup);

		if (taken < 0) {
			um_err("cannot walk the processes in /proc: %s", strerror(-taken));
			return um_exit_failed(o->command);
		}
		s->n_taken += (size_t)taken;
	}
	return 0;
}

/* Each python: spec judged once, from every process's report and the units the kernel saw. */
static json_t *judge_python_specs(const struct session *s)
{
	size_t units[UM_MAX_SPECS] = { 0 };

	for (size_t i = 0; i < s->n_specs && i < UM_MAX_SPECS; i++)
		units[i] = run_record__units_of_spec(s->record, i);
	return python_units__verdicts(&s->python, s->specs, s->n_specs, units);
}

/*
 * Everything measured goes out, one way: the tracer ends and hands over what it holds, and the
 * record is closed with it (the manifest and the tables written); then the report. wait_status:
 * the command's, when unitmeter reaped it (run); NULL for attach.
 */
static int session_finish(struct session *s, const int *wait_status)
{
	struct run_end end = { .memcg = &s->memcg, .limits = &s->limits, .have_exit = wait_status != NULL,
			       .wait_status = wait_status ? *wait_status : 0,
			       .manifest = s->manifest };
	json_t *python_verdicts = NULL;
	int err;

	tracer__end(s->tracer, &end.trace);
	/* what the python processes wrote of themselves (each at the end of its first unit) */
	if (s->have_python) {
		end.target_facts = python_units__facts(&s->python);
		python_verdicts = judge_python_specs(s);
		end.python_specs = json_incref(python_verdicts);
	}
	err = run_record__close(s->record, &end);
	/* last, below the tables: once for the run, whichever processes reported */
	s->python_errors = python_units__say(python_verdicts);
	json_decref(python_verdicts);
	s->t_written = um_monotonic_ns();
	if (err) {
		um_err("cannot write the manifest %s: %s", s->manifest, strerror(-err));
		return err;
	}
	fprintf(stderr, "manifest: %s\nunits:    %s\n", s->manifest, s->units_path);
	if (s->opts->report) {
		const char *files[] = { s->manifest };
		struct html_request req = { .files = files, .n_files = 1, .output = s->opts->report,
					    .owner_uid = s->rcfg.owner_uid,
					    .owner_gid = s->rcfg.owner_gid };
		char why[1024];

		/* the measurements are safe in the manifest: a page that fails is said, not fatal */
		if (html_report_write(&req, why, sizeof(why)))
			um_warn("%s (unitmeter report %s -o %s makes it again)", why, s->manifest,
				s->opts->report);
		else
			fprintf(stderr, "report:   %s\n", s->opts->report);
	}
	if (run_record__stream_error(s->record))
		return run_record__stream_error(s->record);
	return 0;
}

/* -v: each phase's time; the kernel's release of the programs runs on in a child. */
static void say_phases(const struct session *s, uint64_t detach_ns)
{
	const struct tracer_timing *t = &s->timing;
	uint64_t setup = s->t_begin && s->t_released > s->t_begin
				 ? s->t_released - s->t_begin - t->open_ns - t->load_ns - t->attach_ns
				 : 0;

	if (!s->t_released || !s->t_written)
		return;
	um_info("phases (ms): set-up %.1f, open %.1f, load %.1f, attach %.1f, the command %.1f, "
		"drain %.1f, write %.1f, detach %.1f (the kernel's release of the programs goes on "
		"in a child process nobody waits for)", setup / 1e6, t->open_ns / 1e6,
		t->load_ns / 1e6, t->attach_ns / 1e6, (s->t_ended - s->t_released) / 1e6,
		(s->t_drained - s->t_ended) / 1e6, (s->t_written - s->t_drained) / 1e6,
		detach_ns / 1e6);
}

static void session_cleanup(struct session *s)
{
	uint64_t t0 = um_monotonic_ns();

	tracer__timing(s->tracer, &s->timing);
	tracer__destroy_detached(s->tracer);
	say_phases(s, um_monotonic_ns() - t0);
	memcg_remove(&s->memcg);
	run_record__free(s->record);
	for (size_t i = 0; i < s->n_specs; i++)
		unit_spec_free(&s->specs[i]);
	if (s->have_python)
		python_units__cleanup(&s->python);
	free(s->units_path);
}

/* Poll until the command is reaped and its last records are in; forward signals meanwhile. */
static int run_loop(struct session *s, struct launch *l, int *wait_status)
{
	bool reaped = false, forwarded = false;
	uint64_t reaped_at = 0;

	for (;;) {
		int err = read_records(s);

		if (err < 0 && err != -EINTR)
			return err;
		if (stop_signal && !forwarded) {
			forwarded = true;
			if (stop_from_user)
				kill(l->pid, stop_signal);
			um_info("signal %d: waiting for the command to end, then writing the manifest "
				"(again to quit at once)", stop_signal);
		}
		/* SIGCHLD says when; the 100 ms timeout (no records) covers one that came early */
		if (!reaped && (child_changed || err == 0)) {
			child_changed = 0;
			if (waitpid(l->pid, wait_status, WNOHANG) == l->pid) {
				reaped = true;
				reaped_at = um_monotonic_ns();
				s->t_ended = reaped_at;
			}
		}
		/* the exit record comes at the final context switch, which may follow the reaping */
		if (reaped && (run_record__proc_finished(s->record, l->pid) ||
			       um_monotonic_ns() - reaped_at > DRAIN_TIMEOUT_NS))
			return 0;
	}
}

int session_run(const struct um_options *o)
{
	struct session s = { 0 };
	struct launch l = { .pid = -1, .release_fd = -1, .cgroup_fd = -1 };
	struct session_root root = { .launch = &l, .command = o->command_argv,
				     .comm = o->command_argv[0] };
	int wait_status = 0, err, status;
	char *path;

	s.t_begin = um_monotonic_ns();
	install_signals();
	path = launch_resolve(o->command_argv[0]);
	if (!path) {
		um_err("command not found: %s", o->command_argv[0]);
		return 127;
	}
	root.exe = path;
	status = session_start(&s, o, &root);
	if (status)
		goto out;
	status = um_exit_failed(o->command); /* until the command's own is known */
	um_info("probes attached; starting %s", path);
	if (launch__release(&l)) {
		um_err("the command %s did not wait to be started", path);
		goto out;
	}
	err = run_loop(&s, &l, &wait_status);
	s.t_drained = um_monotonic_ns();
	if (session_finish(&s, &wait_status) || err)
		goto out;
	status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
	/* the command's own failure comes first: it may be why a spec saw nothing */
	if (status == 0 && s.python_errors)
		status = um_exit_failed(o->command);
out:
	session_cleanup(&s);
	free(path);
	return status;
}

/*
 * Tell the launcher waiting on fd that the probes are attached: "ok" as the last line, after
 * the environment its program must be started with for python: units ("env NAME=VALUE", and
 * "env-prepend NAME=VALUE" for a search path), one per line.
 */
static void say_ready(const struct session *s, int fd)
{
	char *text = NULL;
	int n;

	if (s->have_python)
		n = asprintf(&text, "env-prepend PYTHONPATH=%s\nenv UNITMETER_PY_UNITS=%s\n"
			     "env UNITMETER_MARKER_LIB=%s\nenv UNITMETER_PY_REPORT=%s\nok\n",
			     s->python.boot_dir, s->python.specs_env, s->python.marker_lib,
			     s->python.facts_dir);
	else
		n = asprintf(&text, "ok\n");
	if (n < 0 || write(fd, text, n) != n)
		um_warn("cannot say ready on fd %d: %s", fd, strerror(errno));
	free(text);
	close(fd);
}

/* attach --cgroup: whether the cgroup is gone or holds nobody; members missed are taken. */
static bool cgroup_over(struct session *s, const struct cgroup_target *cg)
{
	pid_t *pids;
	size_t n;
	int err = cgroup_target_pids(cg, &pids, &n);

	if (err == -ENOENT) {
		um_info("the cgroup %s was removed", cg->dir);
		return true;
	}
	for (size_t i = 0; !err && i < n; i++)
		if (!tracer__tracked(s->tracer, pids[i]) && tracer__adopt(s->tracer, pids[i], 0) > 0)
			um_warn("process %d was found in the cgroup, not told by the kernel: its figures "
				"start now", pids[i]);
	free(pids);
	return !err && n == 0;
}

/*
 * attach's loop: the records read until the process ends (the cgroup is empty or gone), Ctrl-C,
 * or --duration, which counts from the moment every probe is attached: tracing, not loading.
 */
static void attach_loop(struct session *s, const struct um_options *o,
			const struct session_root *root)
{
	uint64_t deadline, next_check = 0;
	int err;

	deadline = o->duration_s > 0 ? s->t_released + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	while (!stop_signal && um_monotonic_ns() < deadline) {
		pid_t *joined;

		err = read_records(s);
		if (err < 0 && err != -EINTR)
			break;
		if (root->cgroup) {
			/* the kernel told of newcomers: each is taken, with what it forked meanwhile */
			if (tracer__joined(s->tracer, &joined) &&
			    adopt_walk(s->tracer, true, root->cgroup) < 0)
				break;
			if (um_monotonic_ns() >= next_check) {
				next_check = um_monotonic_ns() + 500 * 1000000ULL /* ns */;
				if (cgroup_over(s, root->cgroup))
					break;
			}
			continue;
		}
		if (run_record__proc_finished(s->record, o->pid))
			break;
		/* exit record lost (counted): stop when the process is gone all the same */
		if (kill(o->pid, 0) && errno == ESRCH &&
		    !run_record__proc_finished(s->record, o->pid)) {
			tracer__poll(s->tracer, 200 /* ms */);
			tracer__service_held(s->tracer);
			break;
		}
	}
	/* a cgroup's last processes: their exit records come at their last context switch */
	if (root->cgroup) {
		tracer__poll(s->tracer, 200 /* ms */);
		tracer__service_held(s->tracer);
	}
}

int session_attach(const struct um_options *o)
{
	struct session s = { 0 };
	struct cgroup_target cg;
	struct slurm_ids ids = { 0 };
	char exe[PATH_MAX], target[PATH_MAX + 16], comm[UM_COMM_LEN] = "";
	char *command[] = { target, NULL };
	struct session_root root = { .exe = exe, .command = command, .pid = o->pid, .comm = comm,
				     .children = o->pid && !o->no_children };
	int status;

	s.t_begin = um_monotonic_ns();
	install_signals();
	snprintf(target, sizeof(target), "%d", o->pid);
	if (o->cgroup || o->job[0]) {
		status = attach_target_cgroup(o, &cg, &ids, &root.pid);
		if (status)
			return status;
		root.cgroup = &cg;
		if (o->job[0]) {
			root.slurm = &ids;
			snprintf(target, sizeof(target), "--job %s%s%s", o->job, o->job_step[0] ? "." : "",
				 o->job_step);
		} else {
			snprintf(target, sizeof(target), "--cgroup %s", cg.dir);
		}
	}
	if (attach_target_check(root.pid, exe, sizeof(exe), comm, sizeof(comm)))
		return um_exit_failed(o->command);
	status = session_start(&s, o, &root);
	if (status)
		goto out;
	/* loading takes seconds in a slow guest: a process that ended meanwhile was not seen */
	if (!root.cgroup) {
		unsigned long flags;
		char state = attach_target_state(o->pid, &flags, NULL, 0);

		if (state == 'Z' || !state)
			um_warn("process %d ended while the probes were being attached: no unit of it "
				"was seen", o->pid);
	}
	status = um_exit_failed(o->command); /* until the manifest is written */
	if (o->ready_fd >= 0)
		say_ready(&s, o->ready_fd);
	if (root.cgroup)
		fprintf(stderr, "unitmeter: tracing the %zu processes of the cgroup %s%s; Ctrl-C stops\n",
			s.n_taken, cg.dir,
			o->duration_s > 0 ? " for the given duration" : " until none is left");
	else
		fprintf(stderr, "unitmeter: tracing process %d and the %zu it had forked%s; Ctrl-C "
			"stops\n", o->pid, s.n_taken,
			o->duration_s > 0 ? " for the given duration" : " until it exits");
	attach_loop(&s, o, &root);
	s.t_ended = s.t_drained = um_monotonic_ns();
	if (!session_finish(&s, NULL))
		status = s.python_errors ? um_exit_failed(o->command) : 0;
out:
	session_cleanup(&s);
	return status;
}
