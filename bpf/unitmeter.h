/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF programs and the loader: ring-buffer records and the map values the
 * loader seeds (attach) or reads back (threads still running at the end). Fixed-width types only,
 * with a size assert per record, so both sides agree on the layout.
 */
#ifndef UNITMETER_H
#define UNITMETER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define UM_COMM_LEN 16
/* Unit specs one run may carry; the cookie of each uprobe is its index. */
#define UM_MAX_SPECS 32
/* A unit entry probe's cookie whose low half is this takes the spec index from the probed
 * function's first argument: the Python markers' begin function (bpf/units.bpf.c, unit_enter). */
#define UM_SPEC_FROM_ARG 0xffffffffU
/* Longest --unit SPEC text: a path and a (possibly mangled) symbol name. */
#define UM_SPEC_TEXT_MAX 8192
/*
 * How many open units one process can belong to at once: its own, and the one its parent was in
 * when it forked (a pool worker running fits inside a fit of the main process). Deeper nesting
 * keeps the innermost two and is counted in scope_overflows.
 */
#define UM_SCOPE_DEPTH 2
/*
 * Open units live in an array of this many slots (a power of two); a unit's id is its opening
 * sequence number times UM_UNIT_SLOTS plus its slot, so the slot is found without hashing.
 */
#define UM_UNIT_SLOTS 4096
/* um_unit.id of a slot being filled: taken, but not yet a unit anyone may charge */
#define UM_UNIT_CLAIMING 1
/*
 * Units whose window the memory charge is watched in at once (charge.bpf.h): each read raises
 * every open one's peak. More open units at a time: their charge peak is null.
 */
#define UM_CHARGE_WATCHERS 64
/*
 * The node-local scratch directory (SLURM's --tmp): a write counts toward tmp_output_bytes when
 * the file lies at most this many directories below it (syscalls.bpf.c walks up this far).
 */
#define UM_TMP_DIR_DEPTH 16
/* pending_write values: a write on a regular file, and one under the tmp dir */
#define UM_WRITE_REGULAR 1
#define UM_WRITE_TMP_DIR 2
/* tmp_output_bytes of a run without a tmp dir (the loader found none): null in the outputs */
#define UM_TMP_UNKNOWN (~0ULL)
/* A charge figure that could not be read (no memory cgroup known): null in the outputs. */
#define UM_CHARGE_UNKNOWN (~0ULL)
/* Possible CPUs whose share of an mm counter is summed (rss.bpf.c); more: refused at start. */
#define UM_MAX_CPUS 1024
/*
 * Runs one loaded set of programs serves at once (docs/ARCHITECTURE.md, "One tracer per node"):
 * each run is a group, a slot of the groups map. A run with programs of its own has one group.
 */
#define UM_MAX_GROUPS 256

/*
 * The memory timeline (timeline.bpf.c): the group's RSS and charge, as their lowest and highest
 * value in each bucket of 2^UM_TIMELINE_SHIFT ns (~1 ms) since timeline_start_ns, in a ring of
 * UM_TIMELINE_SLOTS buckets (~4.3 s) that the loader empties as time passes and merges into a
 * bounded timeline of its own (user/trace/timeline.c).
 */
#define UM_TIMELINE_SHIFT 20
#define UM_TIMELINE_SLOTS 4096

/*
 * Device memory held through the CUDA driver API (gpu.bpf.c): per device for devices 0 to
 * UM_GPU_DEVICES - 1, and one slot more for bytes whose device is not known (a thread whose
 * current context was not seen made, or a device number past the table): null in the outputs.
 */
#define UM_GPU_DEVICES 8
#define UM_GPU_SLOTS (UM_GPU_DEVICES + 1)
#define UM_GPU_UNKNOWN_DEVICE UM_GPU_DEVICES

/* One figure over one bucket. */
struct um_timeline_range {
	__u64 max_bytes;
	/* the lowest value as its complement: 0 is "none yet", and lowering it is a raise */
	__u64 min_complement;
	__u64 last_bytes;
};

struct um_timeline_bucket {
	/* the bucket's number since timeline_start_ns, plus one; 0: free (the loader took it) */
	__u64 index;
	struct um_timeline_range rss, charge;
	__u64 pad;
};
_Static_assert(sizeof(struct um_timeline_bucket) == 64, "um_timeline_bucket layout");

/* A CPU's last reading of the clock for the timeline (timeline.bpf.c); a cache line each. */
struct um_timeline_clock {
	__u64 jiffies;
	__u64 now_ns;
	__u32 reused;
	__u32 pad;
	__u64 pad2[5];
};
_Static_assert(sizeof(struct um_timeline_clock) == 64, "um_timeline_clock layout");

/* kernel mm counters (include/linux/mm_types_task.h); MM_SWAPENTS is not resident. */
enum um_rss_member {
	UM_MM_FILEPAGES = 0,
	UM_MM_ANONPAGES = 1,
	UM_MM_SWAPENTS = 2,
	UM_MM_SHMEMPAGES = 3,
	UM_MM_NR_MEMBERS = 4,
};

enum um_record_type {
	UM_REC_PROC_START = 1,
	UM_REC_PROC_EXEC = 2,
	UM_REC_PROC_EXIT = 3,
	UM_REC_UNIT = 4,
	UM_REC_CGROUP_JOIN = 5,
};

enum um_unit_status {
	UM_UNIT_COMPLETE = 0,
	UM_UNIT_INCOMPLETE_EXIT = 1, /* the process died inside the unit */
	UM_UNIT_INCOMPLETE_EXEC = 2, /* the process exec'd inside the unit: no return can come */
};

/* um_proc.flags */
enum um_proc_flags {
	/* The root of `run` before its exec: its memory is unitmeter's own copy, not the command's. */
	UM_PROC_AWAIT_EXEC = 1,
	/* The OOM killer chose it (signal->oom_mm was set when it exited): a memory cgroup's limit
	 * or the machine's memory ran out, not a signal someone sent. */
	UM_PROC_OOM_VICTIM = 2,
};

struct um_proc_start {
	__u32 type; /* UM_REC_PROC_START */
	__u32 pid;
	__u32 ppid;
	__u32 is_root;
	__u64 ts_ns;
	char comm[UM_COMM_LEN];
};
_Static_assert(sizeof(struct um_proc_start) == 40, "um_proc_start layout");

/*
 * attach --cgroup: a process not tracked yet entered the watched cgroup (or a cgroup below it),
 * by a write to cgroup.procs or born there by clone3(CLONE_INTO_CGROUP); the loader tracks it.
 */
struct um_cgroup_join {
	__u32 type; /* UM_REC_CGROUP_JOIN */
	__u32 pid;
	__u64 ts_ns;
};
_Static_assert(sizeof(struct um_cgroup_join) == 16, "um_cgroup_join layout");

/* The program an exec loaded, as the kernel names it: the key of exec_programs. */
struct um_program_id {
	__u64 dev; /* the superblock's s_dev, in the kernel's encoding */
	__u64 ino;
};

struct um_proc_exec {
	__u32 type; /* UM_REC_PROC_EXEC */
	__u32 pid;
	__u64 ts_ns;
	char comm[UM_COMM_LEN];
	struct um_program_id program;
	/* 1: the process was stopped at its exec, for the loader to look for unit symbols in a
	 * program it has not seen (lookup_at_exec); the loader continues it */
	__u32 held;
	__u32 pad;
};
_Static_assert(sizeof(struct um_proc_exec) == 56, "um_proc_exec layout");

struct um_proc_exit {
	__u32 type; /* UM_REC_PROC_EXIT */
	__u32 pid;
	__u64 ts_ns;
	__u64 cpu_ns;
	__u64 peak_rss_bytes;
	__u64 page_alloc_bytes;
	__u64 output_bytes;
	__s32 exit_code; /* wait(2) status: exit status << 8, or the signal number */
	__u32 threads;   /* threads the process ever had */
	__u32 oom_victim; /* 1: the OOM killer ended it (UM_PROC_OOM_VICTIM) */
	__u32 pad;
	__u64 tmp_output_bytes; /* of output_bytes, those written under the node-local tmp dir */
};
_Static_assert(sizeof(struct um_proc_exit) == 72, "um_proc_exit layout");

struct um_unit_record {
	__u32 type; /* UM_REC_UNIT */
	__u32 pid;
	__u32 spec;
	__u32 status; /* enum um_unit_status */
	__u64 id;
	__u64 start_ns;
	__u64 end_ns;
	__u64 cpu_ns;
	__u64 start_rss_bytes;
	__u64 peak_rss_bytes;
	__u64 n_rss_changes;
	__u64 page_alloc_bytes;
	__u64 output_bytes;
	__u32 processes;
	__u32 threads;
	/* the memory cgroup's charge at entry and its peak in the window; UM_CHARGE_UNKNOWN: none */
	__u64 start_charge_bytes;
	__u64 peak_charge_bytes;
	/* device memory through the driver API: the scope's high-water marks in the window, of
	 * all devices together, per device slot, and of managed memory; gpu_seen 0: the scope
	 * never called an allocation entry point (the figures are null) */
	__u64 peak_gpu_bytes;
	__u64 peak_gpu_device_bytes[UM_GPU_SLOTS];
	__u64 peak_gpu_managed_bytes;
	__u32 gpu_seen;
	__u32 gpu_pad;
	__u64 tmp_output_bytes; /* of output_bytes, those written under the node-local tmp dir */
};
_Static_assert(sizeof(struct um_unit_record) == 216, "um_unit_record layout");

/* procs map value, keyed by tgid. */
struct um_proc {
	__u32 ppid;
	__u32 flags;        /* enum um_proc_flags */
	__u32 live_threads; /* threads not yet switched out dead */
	/* of those, the ones that have not entered exit: a thread the program has joined may
	 * run on in the kernel's exit path for a while, and a unit opening then must not count it */
	__u32 active_threads;
	__u32 threads_seen;
	__s32 exit_code;
	__u32 unit_depth; /* nesting of unit-function calls in this process */
	__u32 group;      /* the run tracking it: its slot in the groups map */
	__u64 mm;         /* kernel address of its current mm_struct (the mms key), 0 until bound */
	__u64 own_unit; /* id of the unit this process opened, 0 when none */
	__u64 units[UM_SCOPE_DEPTH]; /* open units whose scope holds this process, newest first */
	__u64 start_ns;
	__u64 cpu_ns;
	__u64 peak_rss_bytes; /* of mms this process no longer uses */
	__u64 page_alloc_bytes;
	__u64 output_bytes;
	__u64 tmp_output_bytes; /* of output_bytes, those under the node-local tmp dir */
	/* attach: the counters read from /proc, used until the kernel reports each one */
	__u64 initial_member_bytes[UM_MM_NR_MEMBERS];
};

/* mms map value, keyed by the kernel address of the mm_struct. */
struct um_mm {
	__u32 tgid; /* 0 while fork or exec is still building this mm */
	__u32 group; /* the run whose process builds or uses it */
	__u64 member_bytes[UM_MM_NR_MEMBERS];
	__s64 rss_bytes; /* file + anon + shmem */
	__u64 peak_rss_bytes;
	/* copy of the owner's units, so an RSS change needs no second lookup */
	__u64 units[UM_SCOPE_DEPTH];
};

/* threads map value, keyed by tid. */
struct um_thread {
	__u32 tgid;
	__u32 slice_seq;       /* switch-ins seen: the running slice's number in `slice` */
	__u64 slice;           /* the running slice's handover word (model_pure.bpf.h): 0 off CPU */
	__u64 on_cpu_since_ns; /* bpf_ktime_get_ns() at switch-in */
	__u64 in_rq_clock_ns;  /* its runqueue's clock (the scheduler's) at that switch-in */
	__u64 runtime_seen_ns; /* se.sum_exec_runtime already accounted */
	__u64 steal_at_in_ns;  /* the CPU's cumulative steal time at switch-in */
	__u64 last_out_ns;     /* bpf_ktime_get_ns() at the last switch-out */
	__u32 cpu;             /* where it was switched in */
	__u32 exit_called;     /* it entered exit or exit_group: no longer one of active_threads */
	/* before 6.2: the thread's RSS cache (task->rss_stat.count) as last applied, in pages */
	__s32 rss_cache_pages[UM_MM_NR_MEMBERS];
	__u32 group; /* its process's */
	__u32 pad;
};

/*
 * The baseline build's handover of a running slice (no exchange on 5.10: model.bpf.h,
 * slice_key_claim): a key inserted, never replaced, by the close of unit_id or by the thread's
 * switch-out of slice seq, whichever comes first; the value says which. Inserted only while the
 * unit closes, and removed by the loader a sweep after it saw the unit closed (user/trace/
 * slice_claims.c).
 * With tid 0 and seq an edge (UM_EDGE_START, UM_EDGE_END), the key fixes that edge's instant
 * (its value) instead: model.bpf.h, unit_edge_settle.
 */
struct um_slice_claim {
	__u32 tid;
	__u32 seq;
	__u64 unit_id;
};
/* a unit's edges, as the key's seq where tid is 0 */
#define UM_EDGE_START 0
#define UM_EDGE_END 1
#define UM_CLAIM_BY_CLOSE 1
#define UM_CLAIM_BY_SWITCH_OUT 2
/* Keys at once: a close adds one for each scope thread on a CPU, and the loader sweeps 10 times
 * a second (thousands of closes a second fit) */
#define UM_SLICE_CLAIMS 8192

/*
 * Bytes of pages that the tracked thread a CPU runs allocated there, not yet charged: the
 * page-alloc program adds here instead of looking the process up for every page. They are charged
 * to the thread's process and units when it switches out and before its units change (a unit
 * opening or closing); the loader adds them to a live process's figure when tracing ends. A
 * cache line per CPU, so CPUs share none.
 */
struct cpu_pending_alloc {
	__u64 bytes;
	__u64 fences; /* the baseline's locked adds on this CPU's own line (um_exchange_fence) */
	__u64 pad[6];
};
_Static_assert(sizeof(struct cpu_pending_alloc) == 64, "cpu_pending_alloc layout");

/*
 * An entry of cpu_running (maps.bpf.c): what a CPU runs, as sched_switch last saw it. The
 * thread's tid, and whether it is tracked in the low bit.
 */
static inline __u64 um_cpu_running_entry(__u32 tid, int tracked)
{
	return (__u64)tid << 1 | (tracked ? 1 : 0);
}

/*
 * Switch-ins not seen (units.bpf.c): the untracked thread a CPU had last been seen switching to
 * when a unit's closer was found running there unseen, with how often; UM_UNSEEN_SLOTS threads.
 */
#define UM_UNSEEN_SLOTS 8

/* units map value, in slot id % UM_UNIT_SLOTS. */
struct um_unit {
	__u64 id; /* 0: a free slot */
	__u32 pid;
	__u32 spec;
	__u64 start_ns;
	__s64 rss_bytes; /* current scope RSS */
	__u64 peak_rss_bytes;
	__u64 start_rss_bytes;
	__u64 cpu_ns;
	__u64 n_rss_changes;
	__u64 page_alloc_bytes;
	__u64 output_bytes;
	__u64 tmp_output_bytes; /* of output_bytes, those under the node-local tmp dir */
	__u32 processes;
	__u32 threads;
	__u64 start_steal_ns; /* the opening CPU's cumulative steal time at entry */
	__u32 start_cpu;
	__u32 charge_watcher; /* its index in charge_watchers + 1; 0: none */
	__u64 start_charge_bytes;
	__u64 peak_charge_bytes;
	__u64 start_charge_watermark; /* the kernel's high-water mark of the charge at entry */
	/* the close's instant, set when it begins: no slice is counted past it; 0: open */
	__u64 end_ns;
	__u32 group; /* the run of its process */
	__u32 pad;
};

/* Live device bytes of a scope: a process (gpu_procs), an open unit (gpu_units) or a group. */
struct um_gpu_live {
	__s64 device[UM_GPU_SLOTS];
	__s64 total;
	__s64 managed;
};

/*
 * A run: one group of tracked processes, a slot of the groups map (maps.bpf.c). Its processes,
 * threads, mms and units carry its tag; its records go to its own ring and its memory timeline
 * to its own buckets (group_rings, group_timelines: maps the run makes and puts at its slot).
 * The loader fills the configuration before the tag; the programs keep the figures.
 */
struct um_group {
	/* slot | generation << 8, set last by the loader; 0: free. An entry whose tag is not its
	 * slot's (a run ended, the slot taken again) belongs to no group. */
	__u32 tag;
	__u32 hold_at_exec; /* --lookup-at-exec: stop at the exec of a program not looked up */
	/* the registering process and its start (/proc/PID/stat, in clock ticks since boot):
	 * a slot whose owner is gone is taken back (user space only) */
	__u32 owner_pid;
	__u32 join_hierarchy_id; /* attach --cgroup: the watched cgroup's hierarchy */
	__u64 owner_start_ticks;
	__u64 join_cgroup_id; /* its kernfs id; 0: none watched */
	/* the node-local tmp dir: its superblock's s_dev (MKDEV encoding) and inode; 0: none */
	__u64 tmp_dir_dev;
	__u64 tmp_dir_ino;
	/* the memory cgroup whose charge is read, by its kernfs id; 0: none */
	__u64 charge_cgroup_id;
	/* the memory timeline's origin (bpf_ktime_get_ns at attach); 0: off */
	__u64 timeline_start_ns;

	/* the figures */
	__s64 rss_bytes; /* of every mm of the group */
	__u64 peak_rss_bytes;
	__u64 lost_records;      /* its ring was full */
	__u64 timeline_overruns; /* values whose bucket was still unread */
	/* the charge (charge.bpf.h): the memcg learned, the last value read, the peak, the
	 * kernel's watermark when learned and as last read, units with no watcher left */
	__u64 charge_memcg;
	__u64 charge_seen_bytes;
	__u64 peak_charge_bytes;
	__u64 charge_watermark_start_bytes;
	__u64 charge_watermark_last_bytes;
	__u64 charge_unwatched;
	/* device memory through the CUDA driver API (gpu.bpf.c): the group's live bytes and their
	 * peaks; the driver calls seen return, those that failed, frees of what was not seen */
	struct um_gpu_live gpu_live;
	__u64 gpu_peak_device[UM_GPU_SLOTS];
	__u64 gpu_peak_total;
	__u64 gpu_peak_managed;
	__u64 gpu_calls_seen;
	__u64 gpu_calls_failed;
	__u64 gpu_unknown_frees;
	__u64 charge_watchers[UM_CHARGE_WATCHERS];
	__u32 charge_watchers_used;
	/* user space only: the slot's runs so far (the tag's high bits), and when the last one
	 * gave it back (CLOCK_MONOTONIC ns; 0: never) */
	__u32 generation;
	__u64 released_ns;
	__u32 pad[6];
};
_Static_assert(sizeof(struct um_group) % 64 == 0, "um_group: whole cache lines");

#define UM_GROUP_SLOT(tag) ((tag) & (UM_MAX_GROUPS - 1))

/* exec_programs key: a program one run has looked up unit symbols in */
struct um_exec_key {
	struct um_program_id program;
	__u32 group;
	__u32 pad;
};

/* --- device memory through the CUDA driver API (gpu.bpf.c, gpu.bpf.h) --------------------- */

/* What an entry probe saved for its return (gpu_calls, keyed by tid). */
enum um_gpu_call {
	UM_GPU_ALLOC = 1,   /* (CUdeviceptr *dptr, size_t bytes, ...) */
	UM_GPU_MANAGED,     /* cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, flags) */
	UM_GPU_PITCH,       /* cuMemAllocPitch_v2(dptr*, size_t *pitch, W, H, elem): pitch x H */
	UM_GPU_CREATE,      /* cuMemCreate(handle*, size, const prop*, flags) */
	UM_GPU_FREE,        /* (CUdeviceptr dptr, ...) */
	UM_GPU_RELEASE,     /* cuMemRelease(handle) */
	UM_GPU_CTX_RETAIN,  /* cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) */
	UM_GPU_CTX_CREATE,  /* cuCtxCreate_v2(CUcontext *ctx, flags, CUdevice dev) */
	UM_GPU_CTX_SET,     /* cuCtxSetCurrent(CUcontext ctx) */
};

struct um_gpu_call_args {
	__u32 call; /* enum um_gpu_call */
	__u32 device; /* CREATE: the prop's device; CTX_*: the device argument */
	__u64 out;  /* the out-parameter's address, or the pointer/handle/context freed or set */
	__u64 bytes; /* the size asked for; PITCH: the height */
	__u64 pitch_out; /* PITCH: where the pitch is written */
};

/* gpu_allocs key: an address (kind 0) or a VMM handle (kind 1) of one process. */
struct um_gpu_key {
	__u32 tgid;
	__u32 kind;
	__u64 id;
};

struct um_gpu_alloc {
	__u64 bytes;
	__u32 slot; /* a device slot, or UM_GPU_SLOTS for managed memory */
	__u32 pad;
};


struct um_gpu_unit {
	__u64 id; /* the unit these figures are of; another id: not started yet */
	struct um_gpu_live live;
	__u64 peak_device[UM_GPU_SLOTS];
	__u64 peak_total;
	__u64 peak_managed;
};

#endif /* UNITMETER_H */
