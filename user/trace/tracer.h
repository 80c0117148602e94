/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF side as one handle: open the skeleton, size its maps, load, seed the processes to
 * track, attach every program (and a uprobe pair per unit target), poll the ring buffer, and
 * destroy it all on every path.
 */
#ifndef UM_TRACER_H
#define UM_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "trace/timeline.h"
#include "trace/gpu_probes.h"
#include "trace/nvml.h"
#include "unitmeter.h"

struct tracer;

/*
 * Where units begin and end: a function's entry and return (end_symbol NULL), or two marker
 * functions whose first argument is the spec index (spec_from_arg). A target without a path is
 * looked up in each program a tracked process execs (lookup_at_exec). cookie: the spec index.
 */
struct unit_target {
	const char *path;
	const char *symbol;
	uint64_t offset; /* symbol's offset in path, found by elf_function_offset; 0: by name */
	const char *end_symbol;
	uint32_t cookie;
	bool spec_from_arg;
};

struct tracer_config {
	size_t ring_bytes; /* power of two, multiple of the page size */
	const struct unit_target *targets;
	size_t n_targets;
	uint64_t charge_cgroup_id; /* the memory cgroup whose charge is read (memcg.h); 0: none */
	/* the node-local tmp dir (tmp_dir.h): kernel-encoded device and inode; ino 0: none */
	uint64_t tmp_dir_dev, tmp_dir_ino;
	/* attach --cgroup: the cgroup whose new members are reported (tracer__joined), its
	 * kernfs id and hierarchy id (v1: /proc/cgroups' number; v2: 0); id 0: none */
	uint64_t join_cgroup_id;
	uint32_t join_hierarchy_id;
	/* attach: the process whose mapped libcuda.so.1 is probed; 0 (run): the one the loader
	 * would find for a command started now */
	pid_t gpu_mapped_by;
	/* load programs of this run's own, never the node's (check's trial) */
	bool own_programs;
};

/* Called for every ring-buffer record; a non-zero return stops the poll with that value. */
/*
 * One ring-buffer record, as the tracer hands it on. A unit's comes complete: with NVML's reading
 * of its process at the unit's end, as the record arrived (nvml; NULL for every other record).
 */
typedef int (*tracer_record_fn)(void *ctx, void *data, size_t size,
				const struct gpu_nvml_unit *nvml);

/*
 * A loaded program's runs the kernel skipped (bpf_prog_info.recursion_misses, since 5.12): a
 * tracepoint or probe that fired while the same program was already running on that CPU.
 */
struct tracer_prog_misses {
	char name[64];
	bool known; /* the kernel reports the figure */
	uint64_t recursion_misses;
};

/* Programs a skeleton holds (44 today), with room to grow. */
#define TRACER_MAX_PROGS 96

struct tracer_counters {
	/*
	 * The programs were the node's (node_programs.h): the counters from map_full to
	 * lock_timeouts are then the node's, their change while this run traced.
	 */
	bool programs_shared;
	uint64_t group_peak_rss_bytes;
	int64_t group_rss_bytes;
	uint64_t lost_records;
	uint64_t map_full;
	uint64_t scope_overflows;
	uint64_t thread_collisions;
	uint64_t orphan_slices;
	uint64_t switch_in_misses;
	uint64_t handover_timeouts; /* closes that could not settle a running slice in time */
	uint64_t switch_in_misses_exact; /* of switch_in_misses, slices taken to the ns */
	uint64_t late_switch_ins;        /* unseen switch-ins made at the thread's next syscall */
	/* the untracked threads CPUs had last been seen switching to at those misses */
	struct tracer_unseen_after {
		uint32_t tid;
		uint64_t count;
		int pid;       /* its process, -1 when gone */
		char comm[16]; /* "" when gone */
	} unseen_after[UM_UNSEEN_SLOTS];
	uint64_t lock_timeouts; /* baseline build: updates that ran without the lock */
	/* the memory cgroup's charge: its peak as read, and the kernel's high-water mark when the
	 * cgroup was first seen and at the end (charge_known: it was seen at all) */
	bool charge_known;
	uint64_t group_peak_charge_bytes;
	uint64_t charge_watermark_start_bytes;
	uint64_t charge_watermark_last_bytes;
	uint64_t charge_unwatched; /* units open while every watcher was taken: charge null */
	const char *build;      /* the programs loaded: "per-cpu", "thread-cache" or "baseline" */
	const char *uprobe_links; /* how the uprobes were attached: "multi" or "perf" (uprobe_link.h) */
	const char *syscall_hooks; /* where writes, forks, exits are seen: syscall_hooks_name() */
	bool thread_rss_caches; /* the kernel's threads cache RSS changes, read at each fault's end */
	struct gpu_counters gpu; /* device memory through the CUDA driver API */
	size_t n_progs;
	struct tracer_prog_misses progs[TRACER_MAX_PROGS];
};

/* A tracked process still alive when tracing stops, with its slices closed at that moment. */
struct tracer_live_proc {
	pid_t pid;
	pid_t ppid;
	uint64_t cpu_ns;
	uint64_t peak_rss_bytes;
	uint64_t page_alloc_bytes;
	uint64_t output_bytes;
	uint64_t tmp_output_bytes; /* UM_TMP_UNKNOWN: no tmp dir */
	uint32_t threads;
};

/* Fails with one line already printed and a negative errno. */
int tracer__open(struct tracer **out, const struct tracer_config *cfg, tracer_record_fn fn,
		 void *ctx);
/* Track pid from its next exec (run) or as it is now (attach: RSS and threads read from /proc). */
int tracer__track(struct tracer *t, pid_t pid, pid_t ppid, bool from_exec);
int tracer__attach(struct tracer *t);
/*
 * Track a process already running, as tracer__track does attach's target, once the programs may
 * be attached: what they took meanwhile is left as they have it. Its figures start now. Sends the
 * process-start record the fork program would have. 1: tracked now; 0: it already was; a
 * negative errno (-ENOENT, -ESRCH: it is gone).
 */
int tracer__adopt(struct tracer *t, pid_t pid, pid_t ppid);
/* Whether pid is a tracked process now. */
bool tracer__tracked(const struct tracer *t, pid_t pid);
/*
 * The processes the programs saw enter the watched cgroup since the last call (join_cgroup_id),
 * in record order, some perhaps twice or already tracked; valid until the next tracer__poll.
 */
size_t tracer__joined(struct tracer *t, pid_t **pids);
/*
 * Records consumed, or a negative errno; -EINTR when a signal arrived. A process the programs
 * held at its exec (--lookup-at-exec) is only queued here: tracer__service_held serves it.
 */
int tracer__poll(struct tracer *t, int timeout_ms);
/*
 * Serve the processes held at their exec since the last call, in the order they were held: look
 * for the path-less targets in the program each exec'd, attach the probes found, then continue
 * it (SIGCONT): no unit can start before its probes are in. Call right after each tracer__poll:
 * a held process waits for it. Returns how many were served.
 */
int tracer__service_held(struct tracer *t);

/*
 * What the tracer hands over when tracing is over, filled by tracer__end in the order its
 * members are listed (each read after the one above it), owned by the caller (trace_end__free).
 */
struct trace_end {
	struct tracer_counters counters;
	struct tracer_live_proc *live; /* the tracked processes that had not finished */
	size_t n_live;
	uint64_t stop_ns; /* when tracing stopped (CLOCK_MONOTONIC): a live process's end */
	struct memory_timeline *timeline; /* every bucket of the BPF ring taken */
	/* per spec index (the target's cookie): the first program a path-less target was found in
	 * at an exec (--lookup-at-exec); NULL: none */
	char *found_path[UM_MAX_SPECS];
	/* NVML, which read each unit's process at its end: loaded, or why not */
	bool nvml_loaded;
	char nvml_why[160];
};

/*
 * End tracing: hold no process at its exec any more and read every record still in the ring,
 * continuing each held process; then hand over what the tracer holds, into end. Once per run;
 * the programs stay attached until tracer__destroy, and nothing they see after is wanted.
 */
void tracer__end(struct tracer *t, struct trace_end *end);
void trace_end__free(struct trace_end *end);
void tracer__destroy(struct tracer *t);
/*
 * The same, without making the caller wait for the kernel: closing the last reference to a
 * uprobe or tracepoint link waits for RCU grace periods (~100 ms each here). A child process
 * keeps a reference to every BPF object until this process exits, so this process's closes are
 * quick and the kernel's release runs in the child, which nobody waits for. Every record was
 * read before (the caller drains the ring first): nothing the programs see after is wanted.
 */
void tracer__destroy_detached(struct tracer *t);
/* How long opening (the object and the kernel's BTF), loading and attaching took, in ns. */
struct tracer_timing {
	uint64_t open_ns, load_ns, attach_ns;
};
void tracer__timing(const struct tracer *t, struct tracer_timing *out);
/*
 * The skeleton itself, its .bss and maps, for the white-box tests (tests/bpf/), which assert on
 * the BPF side's state; nothing else reads it. Borrowed; valid until destroy.
 */
struct unitmeter_bpf;
struct unitmeter_bpf *tracer__skel(struct tracer *t);
/* This run's group as the programs keep it (struct um_group): its figures, live. */
const struct um_group *tracer__group(const struct tracer *t);
/* What the kernel offers and the build loaded (see kernel.h). */
const struct kernel_features *tracer__kernel(const struct tracer *t);

/* The one-line reason this machine or user cannot trace, or NULL when it can. */
const char *tracer_precheck(void);

#endif
