/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a trace produced, as it arrives: the process table and every finished unit (a progress
 * line, progress.h; a line of the units stream, units_stream.h, flushed at once so a killed run
 * keeps it). At the end the record is written out as the manifest (manifest.h) and the human
 * tables (tables.h).
 */
#ifndef UM_RUN_RECORD_H
#define UM_RUN_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/spec.h"
#include "trace/tracer.h"

struct run_record;

struct run_record_config {
	const char *mode; /* "run" or "attach" */
	char *const *command;
	const struct unit_spec *specs;
	size_t n_specs;
	const char *units_jsonl; /* NULL: no stream */
	bool quiet;              /* no per-unit progress line */
	uid_t owner_uid;         /* files are handed to this user (the sudo caller) */
	gid_t owner_gid;
	const struct tmp_dir *tmp_dir; /* whose writes tmp_output_bytes counts; NULL: none */
};

struct run_record *run_record__new(const struct run_record_config *cfg, char *err, size_t errlen);
/* The clock origin of start_ns and wall figures: when the command was released (CLOCK_MONOTONIC). */
void run_record__set_origin(struct run_record *r, uint64_t t0_ns);
void run_record__add_root(struct run_record *r, pid_t pid, pid_t ppid, const char *comm);
/* tracer_record_fn: one ring-buffer record (a unit's with NVML's reading of its process). */
int run_record__on_record(void *ctx, void *data, size_t size, const struct gpu_nvml_unit *nvml);
bool run_record__proc_finished(const struct run_record *r, pid_t pid);
void run_record__set_hardware(struct run_record *r, json_t *hw);

struct memcg;
struct run_limits;

/* How a run ended: all run_record__close needs that the records did not bring. */
struct run_end {
	struct trace_end trace;    /* tracer__end's: counters, live processes, timeline, paths */
	const struct memcg *memcg; /* whose charge was read */
	const struct run_limits *limits; /* what the run ran under; NULL: all unknown */
	bool have_exit;            /* unitmeter reaped the command (run): its wait status */
	int wait_status;
	json_t *target_facts; /* what the targets say of themselves (python_units__facts), merged
			       * into the hardware record; NULL: none */
	json_t *python_specs; /* what became of each python: spec (python_units__verdicts), as
			       * run.python; NULL: no python: spec */
	const char *manifest; /* the manifest's path */
};

/*
 * Close the record with how the run ended, in this order: push out the units still buffered;
 * warn of each bare unit symbol no exec'd program had; take the processes still alive; write the
 * manifest; print the tables; warn of records or updates lost. Takes end's trace and
 * target_facts and python_specs (freed with the record). Returns 0 or the manifest's write error (a negative
 * errno), which the caller says.
 */
int run_record__close(struct run_record *r, struct run_end *end);
/*
 * Push the units stream to the file: after each batch of records, so a kill loses nothing; and
 * count the progress lines the batch did not show. Returns run_record__stream_error.
 */
int run_record__flush(struct run_record *r);
/* How many units of spec index `spec` the run has finished. */
size_t run_record__units_of_spec(const struct run_record *r, size_t spec);
/* Any JSONL write error so far (0 or a negative errno). */
int run_record__stream_error(const struct run_record *r);
void run_record__free(struct run_record *r);

#endif
