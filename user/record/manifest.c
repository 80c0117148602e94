// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/fileio.h"
#include "common/manifest_keys.h"
#include "record/gpu_json.h"
#include "record/manifest.h"
#include "common/version.h"
#include "record/run_record_internal.h"
#include "common/summary.h"
#include "record/unit_record.h"
#include "trace/tmp_dir.h"

#define UM_SCHEMA "unitmeter.run/1"

/*
 * wait(2) status -> {"exit_status": n|null, "exit_signal": n|null} members of obj: the run's
 * and each process's (UM_PROCESS_EXIT_STATUS is the same key)
 */
static void set_exit_fields(json_t *obj, bool known, int status)
{
	json_object_set_new(obj, UM_RUN_EXIT_STATUS,
			    known && WIFEXITED(status) ? json_integer(WEXITSTATUS(status)) : json_null());
	json_object_set_new(obj, UM_RUN_EXIT_SIGNAL,
			    known && WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null());
}

/* A tmp_output_bytes figure: null when no tmp dir was found. */
/*
 * The programs as the kernel ran them: each loaded program's runs it skipped (recursion_misses,
 * null before 5.12), the closes that could not settle a running slice's handover, and the
 * switch-ins sched_switch never reported: those made late (at the thread's next system call),
 * those a unit's close still found (its closer running unseen) and how many of them it took to
 * the ns from the scheduler's clocks, and the untracked threads their CPUs had last been seen
 * switching to (the kernel skipped the switch away from them).
 */
static json_t *bpf_json(const struct tracer_counters *c)
{
	json_t *progs = json_object(), *after = json_array();

	for (int i = 0; i < UM_UNSEEN_SLOTS; i++) {
		const struct tracer_unseen_after *u = &c->unseen_after[i];

		if (u->tid)
			json_array_append_new(
				after, json_pack("{s:I, s:o, s:o, s:I}", UM_UNSEEN_AFTER_TID, (json_int_t)u->tid,
						 UM_UNSEEN_AFTER_PID, u->pid >= 0 ? json_integer(u->pid) : json_null(),
						 UM_UNSEEN_AFTER_COMM, u->comm[0] ? json_string(u->comm) : json_null(),
						 UM_UNSEEN_AFTER_COUNT, (json_int_t)u->count));
	}
	for (size_t i = 0; i < c->n_progs; i++)
		json_object_set_new(progs, c->progs[i].name,
				    c->progs[i].known
					    ? json_integer((json_int_t)c->progs[i].recursion_misses)
					    : json_null());
	return json_pack("{s:o, s:I, s:{s:I, s:I, s:I, s:o}}", UM_BPF_RECURSION_MISSES, progs,
			 UM_BPF_HANDOVER_TIMEOUTS, (json_int_t)c->handover_timeouts, UM_BPF_SWITCH_INS_UNSEEN,
			 UM_UNSEEN_MADE_LATE, (json_int_t)c->late_switch_ins, UM_UNSEEN_AT_CLOSE,
			 (json_int_t)c->switch_in_misses, UM_UNSEEN_AT_CLOSE_EXACT,
			 (json_int_t)c->switch_in_misses_exact, UM_UNSEEN_AFTER, after);
}

static json_t *tmp_bytes_json(uint64_t bytes)
{
	return bytes == UM_TMP_UNKNOWN ? json_null() : json_integer((json_int_t)bytes);
}

/* Which directory tmp_output_bytes counts the writes under, and why the figure is null. */
static json_t *tmp_dir_json(const struct tmp_dir *t)
{
	if (!t)
		return json_null();
	return json_pack("{s:s, s:s, s:s?}", UM_TMP_DIR_PATH, t->path, UM_TMP_DIR_SOURCE, t->source,
			 UM_TMP_DIR_NOTE, t->ino ? NULL : t->reason);
}

static json_t *proc_json(const struct run_record *r, const struct proc_row *p)
{
	json_t *o = json_pack("{s:i, s:i, s:s, s:I, s:f, s:I, s:I, s:I, s:i}",
			      UM_PROCESS_PID, (int)p->pid, UM_PROCESS_PPID, (int)p->ppid, UM_PROCESS_COMM, p->comm,
			      UM_PROCESS_START_NS, (json_int_t)(p->start_ns > r->t0_ns ? p->start_ns - r->t0_ns : 0),
			      UM_PROCESS_CPU_S, um_round(um_seconds(p->cpu_ns), 6),
			      UM_PROCESS_PEAK_RSS_BYTES, (json_int_t)p->peak_rss_bytes,
			      UM_PROCESS_PAGE_ALLOC_BYTES, (json_int_t)p->page_alloc_bytes,
			      UM_PROCESS_OUTPUT_BYTES, (json_int_t)p->output_bytes,
			      UM_PROCESS_THREADS, (int)p->threads);

	json_object_set_new(o, UM_PROCESS_TMP_OUTPUT_BYTES, tmp_bytes_json(p->tmp_output_bytes));

	/* which worker did what: its units, their CPU and their highest peak */
	{
		json_int_t n = 0, peak = 0;
		double cpu = 0;

		for (size_t i = 0; i < r->n_units; i++) {
			const struct um_unit_record *u = &r->units[i];

			if ((pid_t)u->pid != p->pid)
				continue;
			n++;
			cpu += um_seconds(u->cpu_ns);
			if ((json_int_t)u->peak_rss_bytes > peak)
				peak = (json_int_t)u->peak_rss_bytes;
		}
		json_object_set_new(o, UM_PROCESS_UNITS, json_integer(n));
		json_object_set_new(o, UM_PROCESS_UNITS_CPU_S, json_real(um_round(cpu, 6)));
		json_object_set_new(o, UM_PROCESS_UNITS_PEAK_RSS_BYTES, n ? json_integer(peak) : json_null());
	}
	/*
	 * A process whose exit record was lost (lost_events) is neither finished nor in the maps at
	 * the end: its figures went with the record, so they are null, not zeros. The root's end is
	 * still known, from wait(2).
	 */
	if (!p->finished && !p->alive_at_end) {
		static const char *const figures[] = {UM_PROCESS_CPU_S,
						      UM_PROCESS_PEAK_RSS_BYTES,
						      UM_PROCESS_PAGE_ALLOC_BYTES,
						      UM_PROCESS_OUTPUT_BYTES,
						      UM_PROCESS_TMP_OUTPUT_BYTES,
						      UM_PROCESS_THREADS};
		bool waited = p->is_root && r->have_exit;

		for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++)
			json_object_set_new(o, figures[k], json_null());
		json_object_set_new(o, UM_PROCESS_STATUS, json_string(waited ? "exited" : "unknown"));
		json_object_set_new(o, UM_PROCESS_END_NS, json_null());
		set_exit_fields(o, waited, r->wait_status);
		json_object_set_new(o, UM_PROCESS_OOM_KILLED, json_null());
		return o;
	}
	json_object_set_new(o, UM_PROCESS_STATUS, json_string(p->finished ? "exited" : "running"));
	json_object_set_new(
	    o, UM_PROCESS_END_NS,
	    p->finished
		? json_integer((json_int_t)(p->end_ns > r->t0_ns ? p->end_ns - r->t0_ns : 0))
		: json_null());
	/* the BPF exit code is wait(2)'s status word, as the kernel keeps it */
	set_exit_fields(o, p->finished, p->exit_code);
	json_object_set_new(o, UM_PROCESS_OOM_KILLED,
			    p->finished ? json_boolean(p->oom_killed) : json_null());
	return o;
}

/*
 * The run's memory charge (run_record__peak_charge), or null with the reason when there is no
 * cgroup, or none of the group's processes was seen in it.
 */
static void charge_json(const struct run_record *r, json_t *run)
{
	const struct memcg *m = &r->memcg;
	const char *note = NULL;
	uint64_t peak;

	if (run_record__peak_charge(r, &peak)) {
		json_object_set_new(run, UM_RUN_PEAK_CHARGE_BYTES, json_integer((json_int_t)peak));
		if (!m->made_for_run)
			note = "the target's own memory cgroup: it may hold processes other than the "
			       "traced ones, whose pages are charged too";
	} else {
		json_object_set_new(run, UM_RUN_PEAK_CHARGE_BYTES, json_null());
		note = m->id ? "no traced process was seen in the memory cgroup" : m->reason;
	}
	json_object_set_new(run, UM_RUN_CHARGE,
			    json_pack("{s:s?, s:o, s:b, s:s?}", UM_CHARGE_CGROUP, m->id ? m->name : NULL,
				      UM_CHARGE_CGROUP_VERSION, m->id ? json_integer(m->version) : json_null(),
				      UM_CHARGE_MADE_FOR_RUN, m->made_for_run, UM_CHARGE_NOTE, note));
}

/*
 * What the run ran under (run_limits_capture): each figure null when it is not known, never a
 * guess; the SLURM keys null outside SLURM.
 */
static json_t *limits_json(const struct run_record *r)
{
	const struct run_limits *l = &r->limits;
	const struct slurm_ids *s = &l->slurm;

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 UM_LIMITS_SLURM_JOB_ID, s->set ? json_integer(s->job) : json_null(),
			 UM_LIMITS_SLURM_ARRAY_JOB_ID, s->set && s->in_array ? json_integer(s->array_job)
								     : json_null(),
			 UM_LIMITS_SLURM_ARRAY_TASK_ID, s->set && s->in_array ? json_integer(s->array_task)
								      : json_null(),
			 UM_LIMITS_SLURM_STEP_ID, s->set && s->step[0] ? json_string(s->step) : json_null(),
			 UM_LIMITS_TIME_LIMIT_S, s->set && s->time_limit_known ?
						 json_integer((json_int_t)s->time_limit_s) : json_null(),
			 UM_LIMITS_CPUS, l->cpus >= 0 ? json_integer(l->cpus) : json_null(),
			 UM_LIMITS_NODE, l->node[0] ? json_string(l->node) : json_null(),
			 UM_LIMITS_MEMORY_LIMIT_BYTES, l->memory_known ? json_integer((json_int_t)l->memory_bytes)
							       : json_null(),
			 UM_LIMITS_MEMORY_LIMIT_CGROUP, l->memory_known ? json_string(l->memory_cgroup)
								: json_null());
}

/* When the command was released, as ISO 8601 UTC to the millisecond; null when not known. */
static json_t *started_at(const struct run_record *r)
{
	char text[64];
	struct tm tm;

	if (!r->t0_realtime.tv_sec || !gmtime_r(&r->t0_realtime.tv_sec, &tm))
		return json_null();
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(text + strlen(text), sizeof(text) - strlen(text), ".%03ldZ",
		 r->t0_realtime.tv_nsec / 1000000);
	return json_string(text);
}

/*
 * The traced processes the OOM killer ended: how a task SLURM killed for --mem is told from one
 * killed by a signal (both die of SIGKILL, and the batch shell may go on to exit 0). Null when
 * a process's exit record was lost, since it may have been one.
 */
static json_t *oom_kills(const struct run_record *r)
{
	json_int_t n = 0;

	for (size_t i = 0; i < r->n_procs; i++) {
		const struct proc_row *p = &r->procs[i];

		if (!p->finished && !p->alive_at_end)
			return json_null();
		n += p->finished && p->oom_killed;
	}
	return json_integer(n);
}

/*
 * The command's end, for its wall time as time(1) gives it (release to the root's end): the
 * root's exit, or the stop while it lives; attach --cgroup has no root: its end is the last
 * exit (last_exit_ns), or the stop if any process lives.
 */
static uint64_t command_end_ns(const struct run_record *r, const struct proc_row *root,
			       uint64_t last_exit_ns)
{
	if (root)
		return root->finished ? root->end_ns : r->trace.stop_ns;
	for (size_t i = 0; i < r->n_procs; i++)
		if (!r->procs[i].finished && r->trace.stop_ns > last_exit_ns)
			return r->trace.stop_ns;
	return last_exit_ns;
}

/*
 * How the kernel was read (user/trace/kernel.h); lock_timeouts > 0: that many baseline updates
 * ran unlocked, and a figure they touched may be off by one change.
 */
static json_t *tracing_json(const struct tracer_counters *c)
{
	return json_pack("{s:s, s:b, s:I, s:s, s:s, s:s}", UM_TRACING_BUILD, c->build ? c->build : "none",
			 UM_TRACING_THREAD_RSS_CACHES, c->thread_rss_caches,
			 UM_TRACING_LOCK_TIMEOUTS, (json_int_t)c->lock_timeouts,
			 UM_TRACING_UPROBE_LINKS, c->uprobe_links ? c->uprobe_links : "none",
			 /* functions: fexit/fentry of the calls; tracepoints: sys_enter and
			  * sys_exit, which every syscall of the node pays while attached */
			 UM_TRACING_SYSCALL_HOOKS, c->syscall_hooks ? c->syscall_hooks : "none",
			 /* node: a group of the node's one set (its counters the node's, their
			  * change while this run traced); run: programs of its own */
			 UM_TRACING_PROGRAMS, c->programs_shared ? "node" : "run");
}

static json_t *run_json(const struct run_record *r)
{
	const struct tracer_counters *c = &r->trace.counters;
	const struct proc_row *root = NULL;
	struct gpu_nvml_run nv;
	uint64_t cpu = 0, alloc = 0, out = 0, tmp_out = 0, end = r->t0_ns;
	bool tmp_known = r->cfg->tmp_dir && r->cfg->tmp_dir->ino;
	json_t *run, *table = json_array();

	for (size_t i = 0; i < r->n_procs; i++) {
		const struct proc_row *p = &r->procs[i];

		if (p->is_root)
			root = p;
		cpu += p->cpu_ns;
		alloc += p->page_alloc_bytes;
		out += p->output_bytes;
		if (p->tmp_output_bytes != UM_TMP_UNKNOWN)
			tmp_out += p->tmp_output_bytes;
		if (p->finished && p->end_ns > end)
			end = p->end_ns;
		json_array_append_new(table, proc_json(r, p));
	}
	end = command_end_ns(r, root, end);
	run = json_pack("{s:f, s:f, s:I, s:I, s:I, s:i, s:I, s:I, s:I}",
			UM_RUN_WALL_S, um_round(end > r->t0_ns ? um_seconds(end - r->t0_ns) : 0, 6),
			UM_RUN_CPU_S, um_round(um_seconds(cpu), 6),
			UM_RUN_PEAK_RSS_BYTES, (json_int_t)c->group_peak_rss_bytes,
			UM_RUN_PAGE_ALLOC_BYTES, (json_int_t)alloc,
			UM_RUN_OUTPUT_BYTES, (json_int_t)out,
			UM_RUN_PROCESSES, (int)r->n_procs,
			UM_RUN_LOST_EVENTS, (json_int_t)c->lost_records,
			UM_RUN_MAP_FULL_EVENTS, (json_int_t)c->map_full,
			UM_RUN_SCOPE_OVERFLOWS, (json_int_t)c->scope_overflows);
	json_object_set_new(run, UM_RUN_TMP_OUTPUT_BYTES, tmp_known ? json_integer((json_int_t)tmp_out)
							       : json_null());
	json_object_set_new(run, UM_RUN_TMP_DIR, tmp_dir_json(r->cfg->tmp_dir));
	/* attach reaps nothing: the target's end as the kernel recorded it, when it was seen */
	if (r->have_exit)
		set_exit_fields(run, true, r->wait_status);
	else
		set_exit_fields(run, root && root->finished, root ? root->exit_code : 0);
	json_object_set_new(run, UM_RUN_OOM_KILLS, oom_kills(r));
	json_object_set_new(run, UM_RUN_THREAD_COLLISIONS,
			    json_integer((json_int_t)c->thread_collisions));
	json_object_set_new(run, UM_RUN_ORPHAN_SLICES, json_integer((json_int_t)c->orphan_slices));
	json_object_set_new(run, UM_RUN_SWITCH_IN_MISSES, json_integer((json_int_t)c->switch_in_misses));
	json_object_set_new(run, UM_RUN_BPF, bpf_json(c));
	json_object_set_new(run, UM_RUN_TRACING, tracing_json(c));
	charge_json(r, run);
	run_record__gpu_nvml(r, &nv);
	gpu_run_json(&c->gpu, &nv, run);
	json_object_set_new(run, UM_RUN_LIMITS, limits_json(r));
	json_object_set_new(run, UM_RUN_STARTED_AT, started_at(r));
	json_object_set_new(run, UM_RUN_MEMORY_TIMELINE,
			    r->trace.timeline ? memory_timeline__json(r->trace.timeline, r->t0_ns,
								      r->trace.stop_ns)
					      : json_null());
	json_object_set_new(run, UM_RUN_PER_PROCESS, table);
	/* each python: spec's fate: matched, never called, or not found with the closest names */
	if (r->python_specs)
		json_object_set(run, UM_RUN_PYTHON, r->python_specs);
	return run;
}

json_t *run_record__manifest(struct run_record *r)
{
	json_t *m = json_object(), *cmd = json_array(), *specs = json_array();

	for (char *const *a = r->cfg->command; a && *a; a++)
		json_array_append_new(cmd, json_string(*a));
	for (size_t i = 0; i < r->cfg->n_specs; i++) {
		const struct unit_spec *sp = &r->cfg->specs[i];

		json_array_append_new(specs, sp->python ?
			json_pack("{s:i, s:s, s:s, s:s?, s:s}", UM_SPEC_INDEX, (int)i, UM_SPEC_SPEC, sp->text,
				  UM_SPEC_KIND, "python", UM_SPEC_MODULE, sp->module, UM_SPEC_QUALNAME, sp->qualname) :
			json_pack("{s:i, s:s, s:s, s:s?, s:s, s:s?}", UM_SPEC_INDEX, (int)i, UM_SPEC_SPEC, sp->text,
				  UM_SPEC_KIND, "native",
				  /* a bare symbol: where --lookup-at-exec found it, if it did */
				  UM_SPEC_PATH, sp->path ? sp->path : r->trace.found_path[i],
				  UM_SPEC_SYMBOL, sp->symbol, UM_SPEC_VERSION, sp->version));
	}
	json_object_set_new(m, UM_MANIFEST_SCHEMA, json_string(UM_SCHEMA));
	json_object_set_new(m, UM_MANIFEST_TOOL,
			    json_pack("{s:s, s:s}", UM_TOOL_NAME, "unitmeter", UM_TOOL_VERSION, UM_VERSION));
	json_object_set_new(m, UM_MANIFEST_MODE, json_string(r->cfg->mode));
	json_object_set_new(m, UM_MANIFEST_COMMAND, cmd);
	json_object_set_new(m, UM_MANIFEST_UNIT_SPECS, specs);
	json_object_set(m, UM_MANIFEST_HARDWARE, r->hardware ? r->hardware : json_null());
	/* "units" is written after the rest, one unit at a time (run_record__write_manifest) */
	if (!r->summary)
		r->summary = um_summarise_records(r->units, r->n_units);
	json_object_set(m, UM_MANIFEST_SUMMARY, r->summary ? r->summary : json_null());
	json_object_set_new(m, UM_MANIFEST_RUN, run_json(r));
	return m;
}

/*
 * The manifest as one JSON object, its "units" array last and written unit by unit, so a run of
 * a million short units never holds a million JSON trees.
 */
static int write_manifest_body(const struct run_record *r, json_t *m, FILE *f)
{
	/* jansson prints %.17g by default; 15 digits keep 0.1 as 0.1 and lose nothing we measure */
	char *head = json_dumps(m, JSON_REAL_PRECISION(15) | JSON_INDENT(2));
	size_t len = head ? strlen(head) : 0;
	int rc = 0;

	/* reopen the object: drop its closing brace */
	if (len < 2 || head[len - 1] != '}') {
		free(head);
		return -1;
	}
	while (len > 1 && (head[len - 2] == '\n' || head[len - 2] == ' '))
		len--;
	if (fwrite(head, 1, len - 1, f) != len - 1 || fprintf(f, ",\n  \"%s\": [", UM_MANIFEST_UNITS) < 0)
		rc = -1;
	free(head);
	for (size_t i = 0; !rc && i < r->n_units; i++) {
		char line[UNIT_LINE_MAX];

		run_record__unit_line(r, &r->units[i], i, line, sizeof(line));
		if (fputs(i ? ",\n    " : "\n    ", f) == EOF || fputs(line, f) == EOF)
			rc = -1;
	}
	if (!rc && fputs(r->n_units ? "\n  ]\n}\n" : "]\n}\n", f) == EOF)
		rc = -1;
	return rc;
}

int run_record__write_manifest(struct run_record *r, const char *path)
{
	struct um_atomic_file af;
	json_t *m = run_record__manifest(r);
	int err = 0;
	FILE *f;
	char *manifest_buf;

	/* written beside the target and renamed: a reader never sees half a manifest */
	if (um_atomic_open(&af, path, 0644, r->cfg->owner_uid, r->cfg->owner_gid)) {
		err = -errno;
		goto out;
	}
	/* 0644 whatever the umask, as the manifest has always been written */
	fchmod(af.fd, 0644);
	f = fdopen(af.fd, "w");
	if (!f) {
		err = -errno;
		close(af.fd);
		um_atomic_abort(&af);
		goto out;
	}
	/* a storm's manifest holds hundreds of MB of units: large writes, not 4 KiB ones */
	manifest_buf = malloc(1 << 20);
	if (manifest_buf)
		setvbuf(f, manifest_buf, _IOFBF, 1 << 20);
	if (write_manifest_body(r, m, f))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	free(manifest_buf);
	if (err)
		um_atomic_abort(&af);
	else if (um_atomic_commit(&af))
		err = -errno;
out:
	json_decref(m);
	return err;
}

