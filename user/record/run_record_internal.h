/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The run record's state, for the files that write it out: run_record.c takes the records in,
 * manifest.c and tables.c read what was kept. Nothing else includes this.
 */
#ifndef UM_RUN_RECORD_INTERNAL_H
#define UM_RUN_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/limits.h"
#include "trace/memcg.h"
#include "record/gpu_json.h"
#include "record/progress.h"
#include "record/run_record.h"
#include "trace/tracer.h"
#include "unitmeter.h"
#include "record/units_stream.h"

struct proc_row {
	pid_t pid, ppid;
	char comm[UM_COMM_LEN];
	uint64_t start_ns, end_ns;
	bool finished, is_root, alive_at_end;
	bool oom_killed; /* finished: the OOM killer ended it */
	uint64_t cpu_ns, peak_rss_bytes, page_alloc_bytes, output_bytes;
	uint64_t tmp_output_bytes; /* UM_TMP_UNKNOWN: no tmp dir */
	int32_t exit_code;
	uint32_t threads;
};

struct run_record {
	const struct run_record_config *cfg;
	struct proc_row *procs;
	size_t n_procs, cap_procs;
	/* finished units as the kernel sent them: 112 bytes each, JSON is made when written */
	struct um_unit_record *units;
	size_t n_units, cap_units;
	/* NVML's reading at each unit's end, parallel to units */
	struct gpu_nvml_unit *nvml_units;
	size_t cap_nvml_units;
	/* each process's context as last read */
	struct nvml_context {
		pid_t pid;
		uint64_t bytes;
	} *contexts;
	size_t n_contexts, cap_contexts;
	char *spec_json[UM_MAX_SPECS]; /* each spec as a JSON string, escaped once */
	struct progress progress;
	struct units_stream *stream; /* NULL: no stream */
	uint64_t t0_ns;
	struct timespec t0_realtime; /* the wall clock at t0_ns: the run's started_at */
	bool have_exit;
	int wait_status;
	json_t *hardware;
	json_t *python_specs; /* run.python; NULL: no python: spec */
	json_t *summary; /* computed once, for the manifest and the table: sorting a storm's units is not free */
	/* from run_record__close: what the tracer handed over (trace.stop_ns: when tracing stopped,
	 * the end of a root still running), and the cgroup whose charge was read */
	struct trace_end trace;
	struct memcg memcg;
	struct run_limits limits; /* limits.cpus -1 until run_record__close gives them */
};

/* The text of unit u's spec; NULL when its index is not one of the run's. */
const char *run_record__unit_spec(const struct run_record *r, const struct um_unit_record *u);
/* Unit u, number index, as its JSON line (unit_record.h), without the newline. */
size_t run_record__unit_line(const struct run_record *r, const struct um_unit_record *u,
			     size_t index, char *buf, size_t len);
/* The NVML part of the run's device memory (gpu_json.h). */
void run_record__gpu_nvml(const struct run_record *r, struct gpu_nvml_run *out);
/*
 * The run's memory charge: the highest value read, or the kernel's own high-water mark, exact,
 * when it rose while the group was traced (always, for a cgroup made for the run). false when
 * there is no cgroup, or none of the group's processes was seen in it.
 */
bool run_record__peak_charge(const struct run_record *r, uint64_t *peak);

#endif
