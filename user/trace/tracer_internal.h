/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tracer's own state, shared by the files that make it up, each a job: tracer.c (open,
 * attach, poll, end, release), load.c (the programs: built, chosen, loaded or joined),
 * track.c (the tracked processes), probes.c (the unit and GPU probes), counters.c (what the
 * programs counted, read at the end). Nothing outside user/trace/ includes it.
 */
#ifndef UM_TRACER_INTERNAL_H
#define UM_TRACER_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "trace/gpu_probes.h"
#include "trace/kernel.h"
#include "trace/node_programs.h"
#include "trace/run_group.h"
#include "trace/slice_claims.h"
#include "trace/spec.h"
#include "trace/tracer.h"
#include "trace/uprobe_link.h"
#include "unitmeter.h"
#include "unitmeter.skel.h"

/* The unit probes' programs, which a run of the node's set attaches by their pins' descriptors
 * (a node's set has cookies: the Python markers enter through unit_enter too). */
enum { UNIT_ENTER, UNIT_RETURN, UNIT_PROGRAMS };
extern const char *const unit_program_names[UNIT_PROGRAMS];

/* The node-wide counters (state.bpf.h) a run of a shared set reports as their change. */
struct node_counts {
	__u64 map_full, scope_overflows, thread_collisions, orphan_slices, switch_in_misses;
	__u64 handover_timeouts, switch_in_misses_exact, late_switch_ins, lock_timeouts;
};

/* A process stopped at its exec (--lookup-at-exec), waiting for tracer__service_held. */
struct held_exec {
	__u32 pid;
	struct um_program_id program;
};

struct tracer {
	struct unitmeter_bpf *skel;
	struct ring_buffer *rb;
	/* this run's group of the programs (run_group.h): its slot, ring and timeline */
	struct run_group group;
	/* the node's set of programs (node_programs.h), when this run is a group of it */
	bool node_shared;
	bool group_released; /* given back (group_release, once: before a detached release) */
	struct node_programs node;
	int unit_prog_fd[UNIT_PROGRAMS];
	struct node_counts node_base; /* the node-wide counters when this run registered */
	struct uprobe_link *unit_links; /* entry and return probe per target and program */
	size_t n_unit_links, cap_unit_links;
	bool uprobe_multi; /* the uprobes as multi-uprobe links (uprobe_link.h), else perf events */
	const struct tracer_config *cfg;
	tracer_record_fn record_fn;
	void *record_ctx;
	char *found_path[UM_MAX_SPECS]; /* per cookie: where a path-less target was found */
	bool marks_failed; /* a tracked thread could not be marked: the BPF side must not trust marks */
	struct kernel_features kernel;
	struct tracer_timing timing;
	struct memory_timeline *timeline; /* handed over by tracer__end */
	uint64_t timeline_drained_ns; /* the last drain of the BPF timeline ring */
	uint64_t claims_swept_ns; /* the last sweep of the baseline's handover keys */
	struct claims_sweep claims_sweep;
	/* held at their exec, queued by the ring's callback in record order for the caller's loop */
	struct held_exec *held;
	size_t n_held, cap_held;
	char gpu_library[PATH_MAX]; /* the libcuda.so.1 probed; "" when none */
	/* read-only: the context and pools each unit's process holds, beside the API's bytes;
	 * NULL: absent or failed, nvml_why says why */
	struct nvml *nvml;
	char nvml_why[160];
	/* attach --cgroup: processes the programs saw enter the cgroup, for tracer__joined */
	pid_t *joined;
	size_t n_joined, cap_joined;
};

/* load.c */
/* The node's set of programs joined or loaded (or this run's own), this run a group of it. */
int load_programs(struct tracer *t);
/* Open the build's skeleton and choose its programs (node: any run of the node's); load it. */
int skel_prepare(struct tracer *t, bool node);
int skel_load(struct tracer *t);
/* Join the node's set of programs or load it, and register this run's group in it. */
int open_node_programs(struct tracer *t);
/* Whether the uprobes are multi-uprobe links (UNITMETER_UPROBE_LINK=perf says no). */
bool use_uprobe_multi(const struct kernel_features *k);
/* Give this run's group back (a node's set), once. */
void group_release(struct tracer *t);
/* The node-wide counters as they stand. */
void node_counts_read(const struct unitmeter_bpf *skel, struct node_counts *c);
/* The entry program of spec index n on kernels without attach cookies. */
struct bpf_program *spec_entry_program(struct tracer *t, uint32_t n);

/* track.c */
/* A thread's CPU time as the scheduler has it (/proc/PID/task/TID/schedstat). */
int task_runtime_ns(pid_t pid, pid_t tid, __u64 *ns);

/* probes.c */
/* Whether a target is looked up at each exec (--lookup-at-exec). */
bool has_exec_targets(const struct tracer_config *cfg);
/* A held process's program, searched for the targets without a path; continued after. */
void exec_lookup(struct tracer *t, __u32 pid, const struct um_program_id *program);
/* Queue a process held at its exec for tracer__service_held; 0: served at once instead. */
int hold_queue(struct tracer *t, __u32 pid, const struct um_program_id *program);
/* The probes of one unit target in the file at path. */
int attach_unit_target(struct tracer *t, const struct unit_target *target, const char *path);
/* The CUDA driver's entry points, where a driver library was found. */
int attach_gpu_probes(struct tracer *t);
/* Said once: a uretprobe under a seccomp filter that refuses uretprobe's syscall. */
void warn_uretprobe_seccomp(void);
/* Close every probe's link, in threads: each waits for the kernel's grace period. */
void destroy_links_in_parallel(struct uprobe_link *links, size_t n);

/* counters.c */
/* What the programs counted for this run (the node's change, in a set), into c. */
void read_counters(struct tracer *t, struct tracer_counters *c);
/* The tracked processes still alive, with their slices closed now, into end. */
void read_live_procs(struct tracer *t, struct trace_end *end);

#endif
