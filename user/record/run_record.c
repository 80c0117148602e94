// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow.h"
#include "common/log.h"
#include "record/manifest.h"
#include "record/run_record_internal.h"
#include "record/tables.h"
#include "record/unit_record.h"

struct run_record *run_record__new(const struct run_record_config *cfg, char *err, size_t errlen)
{
	struct run_record *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->cfg = cfg;
	r->limits.cpus = -1;
	r->progress.quiet = cfg->quiet;
	for (size_t i = 0; i < cfg->n_specs && i < UM_MAX_SPECS; i++) {
		json_t *text = json_string(cfg->specs[i].text);

		r->spec_json[i] = text ? json_dumps(text, JSON_ENCODE_ANY) : NULL;
		json_decref(text);
		if (!r->spec_json[i]) {
			snprintf(err, errlen, "out of memory");
			run_record__free(r);
			return NULL;
		}
	}
	if (cfg->units_jsonl) {
		r->stream = units_stream__open(cfg->units_jsonl, cfg->owner_uid, cfg->owner_gid, err,
					       errlen);
		if (!r->stream) {
			run_record__free(r);
			return NULL;
		}
	}
	return r;
}

void run_record__set_origin(struct run_record *r, uint64_t t0_ns)
{
	struct timespec mono, real;

	r->t0_ns = t0_ns;
	/* the wall clock of the same instant, for a person reading when the run was */
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	{
		int64_t since = (int64_t)mono.tv_sec * 1000000000LL + mono.tv_nsec - (int64_t)t0_ns;
		int64_t at = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec - since;

		r->t0_realtime.tv_sec = at / 1000000000LL;
		r->t0_realtime.tv_nsec = at % 1000000000LL;
	}
}

static struct proc_row *proc_find(const struct run_record *r, pid_t pid)
{
	/* newest first: a recycled pid belongs to the latest process */
	for (size_t i = r->n_procs; i-- > 0;)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static struct proc_row *proc_add(struct run_record *r, pid_t pid, pid_t ppid)
{
	struct proc_row *row;

	row = um_grow(r->procs, &r->cap_procs, r->n_procs + 1, sizeof(*row), 64);
	if (!row)
		return NULL;
	r->procs = row;
	row = &r->procs[r->n_procs++];
	memset(row, 0, sizeof(*row));
	row->pid = pid;
	row->ppid = ppid;
	return row;
}

void run_record__add_root(struct run_record *r, pid_t pid, pid_t ppid, const char *comm)
{
	struct proc_row *row = proc_add(r, pid, ppid);

	if (!row)
		return;
	row->is_root = true;
	row->start_ns = r->t0_ns;
	snprintf(row->comm, sizeof(row->comm), "%s", comm);
}

/* Keep pid's context as read last; a process out of room is left out of the run's sum. */
static void keep_context(struct run_record *r, pid_t pid, uint64_t bytes)
{
	struct nvml_context *c;

	for (size_t i = 0; i < r->n_contexts; i++)
		if (r->contexts[i].pid == pid) {
			r->contexts[i].bytes = bytes;
			return;
		}
	c = um_grow(r->contexts, &r->cap_contexts, r->n_contexts + 1, sizeof(*c), 16);
	if (!c)
		return;
	r->contexts = c;
	r->contexts[r->n_contexts++] = (struct nvml_context){ .pid = pid, .bytes = bytes };
}

/* A unit, with NVML's reading of its process at its end (the tracer's, as the record came). */
static void on_unit(struct run_record *r, const struct um_unit_record *u,
		    const struct gpu_nvml_unit *nvml_read)
{
	char line[UNIT_LINE_MAX];
	size_t n;

	struct um_unit_record *units = um_grow(r->units, &r->cap_units, r->n_units + 1,
					       sizeof(*units), 256);
	struct gpu_nvml_unit *nvml = units ? um_grow(r->nvml_units, &r->cap_nvml_units,
						     r->n_units + 1, sizeof(*nvml), 256) : NULL;

	if (units)
		r->units = units;
	if (nvml)
		r->nvml_units = nvml;
	if (!units || !nvml) {
		um_err("out of memory keeping unit %zu", r->n_units);
		return;
	}
	r->nvml_units[r->n_units] = *nvml_read;
	if (nvml_read->state == GPU_NVML_READ)
		keep_context(r, (pid_t)u->pid, nvml_read->context_bytes);
	n = run_record__unit_line(r, u, r->n_units, line, sizeof(line) - 1);
	line[n++] = '\n';
	units_stream__append(r->stream, line, n);
	progress__unit(&r->progress, r->n_units, u, run_record__unit_spec(r, u));
	r->units[r->n_units++] = *u;
}

int run_record__on_record(void *ctx, void *data, size_t size, const struct gpu_nvml_unit *nvml)
{
	struct run_record *r = ctx;
	__u32 type;
	struct proc_row *row;

	if (size < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case UM_REC_PROC_START: {
		const struct um_proc_start *s = data;

		row = proc_add(r, s->pid, s->ppid);
		if (row) {
			row->start_ns = s->ts_ns;
			memcpy(row->comm, s->comm, sizeof(row->comm));
			row->comm[UM_COMM_LEN - 1] = '\0';
		}
		break;
	}
	case UM_REC_PROC_EXEC: {
		const struct um_proc_exec *e = data;

		row = proc_find(r, e->pid);
		if (row) {
			memcpy(row->comm, e->comm, sizeof(row->comm));
			row->comm[UM_COMM_LEN - 1] = '\0';
		}
		break;
	}
	case UM_REC_PROC_EXIT: {
		const struct um_proc_exit *x = data;

		row = proc_find(r, x->pid);
		if (!row)
			row = proc_add(r, x->pid, 0);
		if (row) {
			row->finished = true;
			row->end_ns = x->ts_ns;
			row->cpu_ns = x->cpu_ns;
			row->peak_rss_bytes = x->peak_rss_bytes;
			row->page_alloc_bytes = x->page_alloc_bytes;
			row->output_bytes = x->output_bytes;
			row->tmp_output_bytes = x->tmp_output_bytes;
			row->exit_code = x->exit_code;
			row->threads = x->threads;
			row->oom_killed = x->oom_victim;
		}
		break;
	}
	case UM_REC_UNIT:
		if (size >= sizeof(struct um_unit_record) && nvml)
			on_unit(r, data, nvml);
		break;
	default:
		break;
	}
	return 0;
}

bool run_record__proc_finished(const struct run_record *r, pid_t pid)
{
	const struct proc_row *row = proc_find(r, pid);

	return row && row->finished;
}

/* A process tracing stopped before it ended. */
static void add_live(struct run_record *r, const struct tracer_live_proc *p)
{
	struct proc_row *row = proc_find(r, p->pid);

	if (!row)
		row = proc_add(r, p->pid, p->ppid);
	if (!row || row->finished)
		return;
	row->alive_at_end = true;
	row->cpu_ns = p->cpu_ns;
	row->peak_rss_bytes = p->peak_rss_bytes;
	row->page_alloc_bytes = p->page_alloc_bytes;
	row->output_bytes = p->output_bytes;
	row->tmp_output_bytes = p->tmp_output_bytes;
	row->threads = p->threads;
}

void run_record__set_hardware(struct run_record *r, json_t *hw)
{
	json_decref(r->hardware);
	r->hardware = hw;
}

int run_record__flush(struct run_record *r)
{
	units_stream__flush(r->stream);
	progress__flush(&r->progress);
	return units_stream__error(r->stream);
}

size_t run_record__units_of_spec(const struct run_record *r, size_t spec)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_units; i++)
		n += r->units[i].spec == spec;
	return n;
}

int run_record__stream_error(const struct run_record *r)
{
	return units_stream__error(r->stream);
}

int run_record__close(struct run_record *r, struct run_end *end)
{
	const struct tracer_counters *c = &r->trace.counters;
	int err;

	run_record__flush(r);
	trace_end__free(&r->trace);
	r->trace = end->trace;
	memset(&end->trace, 0, sizeof(end->trace));
	for (size_t i = 0; i < r->cfg->n_specs && i < UM_MAX_SPECS; i++) {
		const struct unit_spec *sp = &r->cfg->specs[i];

		if (!sp->python && !sp->path && !r->trace.found_path[i])
			um_warn("unit %s was not found in any program the traced processes exec'd",
				sp->symbol);
	}
	if (end->memcg)
		r->memcg = *end->memcg;
	if (end->limits)
		r->limits = *end->limits;
	for (size_t i = 0; i < r->trace.n_live; i++)
		add_live(r, &r->trace.live[i]);
	r->have_exit = end->have_exit;
	r->wait_status = end->wait_status;
	if (end->target_facts) {
		/* the facts replace hw_capture's placeholders where they stand */
		json_object_update(r->hardware, end->target_facts);
		json_decref(end->target_facts);
		end->target_facts = NULL;
	}
	r->python_specs = end->python_specs;
	end->python_specs = NULL;
	err = run_record__write_manifest(r, end->manifest);
	run_record__print_tables(r, stderr);
	if (c->lost_records || c->map_full)
		um_warn("%llu ring-buffer records lost and %llu map-full events: some processes or "
			"units are missing from the figures (lost_events in the manifest)",
			(unsigned long long)c->lost_records, (unsigned long long)c->map_full);
	if (c->lock_timeouts)
		um_warn("%llu updates of shared counters ran without the baseline lock (a CPU "
			"waited too long): a peak they touched may be off by one change "
			"(run.tracing in the manifest)", (unsigned long long)c->lock_timeouts);
	return err;
}

void run_record__free(struct run_record *r)
{
	if (!r)
		return;
	units_stream__free(r->stream);
	trace_end__free(&r->trace);
	json_decref(r->summary);
	free(r->units);
	free(r->nvml_units);
	free(r->contexts);
	for (size_t i = 0; i < UM_MAX_SPECS; i++)
		free(r->spec_json[i]);
	json_decref(r->hardware);
	json_decref(r->python_specs);
	free(r->procs);
	free(r);
}
