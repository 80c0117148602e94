/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a trace produced, as it arrives: the process table and every finished unit (a progress
 * line, progress.h; a line of the units stream, units_stream.h, flushed at once so a killed run
 * keeps it). At the end the report is written out as the manifest (manifest.h) and the human
 * tables (tables.h).
 */
#ifndef UM_REPORT_H
#define UM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/spec.h"
#include "trace/tracer.h"

struct report;

struct report_config {
	const char *mode; /* "run" or "attach" */
	char *const *command;
	const struct unit_spec *specs;
	size_t n_specs;
	const char *units_jsonl; /* NULL: no stream */
	bool quiet;              /* no per-unit progress line */
	uid_t owner_uid;         /* files are handed to this user (the sudo caller) */
	gid_t owner_gid;
};

struct report *report__new(const struct report_config *cfg, char *err, size_t errlen);
/* The clock origin of start_ns and wall figures: when the command was released (CLOCK_MONOTONIC). */
void report__set_origin(struct report *r, uint64_t t0_ns);
/* The run's memory timeline (tracer__timeline), borrowed until the manifest is written. */
void report__set_timeline(struct report *r, const struct memory_timeline *t);
/* When tracing stopped: the end of the wall time of a root that is still running (attach). */
void report__set_stop(struct report *r, uint64_t stop_ns);
void report__add_root(struct report *r, pid_t pid, pid_t ppid, const char *comm);
/* tracer_record_fn: one ring-buffer record. */
int report__on_record(void *ctx, void *data, size_t size);
bool report__proc_finished(const struct report *r, pid_t pid);
/* Processes tracing stopped before they ended. */
void report__add_live(void *ctx, const struct tracer_live_proc *p);
/* The command's wait status, when unitmeter reaped it. */
void report__set_exit(struct report *r, int wait_status);
void report__set_hardware(struct report *r, json_t *hw);
/* The hardware record, to complete with what the target reports of itself (borrowed). */
json_t *report__hardware(struct report *r);
struct memcg;
/* The memory cgroup whose charge was read (copied). */
void report__set_memcg(struct report *r, const struct memcg *m);
void report__set_counters(struct report *r, const struct tracer_counters *c);
/*
 * Push the units stream to the file: after each batch of records, so a kill loses nothing; and
 * count the progress lines the batch did not show. Returns report__stream_error.
 */
int report__flush(struct report *r);
/* Any JSONL write error so far (0 or a negative errno). */
int report__stream_error(const struct report *r);
void report__free(struct report *r);

#endif
