// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one definition of every map and global that the handlers share. The other objects see
 * them through the extern declarations in state.bpf.h; `bpftool gen object` links them.
 * Sizes here are defaults: the loader resizes maps before load.
 */
#include "compat.bpf.h"
#include "gpu.bpf.h"

procs_map_t procs SEC(".maps");
tracked_tasks_map_t tracked_tasks SEC(".maps");
mms_map_t mms SEC(".maps");
threads_map_t threads SEC(".maps");
units_map_t units SEC(".maps");
pending_mm_map_t pending_mm SEC(".maps");
pending_write_map_t pending_write SEC(".maps");
write_kinds_map_t write_kinds SEC(".maps");
groups_map_t groups SEC(".maps");
group_rings_map_t group_rings SEC(".maps");
group_timelines_map_t group_timelines SEC(".maps");
fence_ring_map_t fence_ring SEC(".maps");
baseline_lock_map_t baseline_lock SEC(".maps");
slice_claims_map_t slice_claims SEC(".maps");
gpu_calls_map_t gpu_calls SEC(".maps");
gpu_allocs_map_t gpu_allocs SEC(".maps");
gpu_ctxs_map_t gpu_ctxs SEC(".maps");
gpu_threads_map_t gpu_threads SEC(".maps");
gpu_procs_map_t gpu_procs SEC(".maps");
gpu_units_map_t gpu_units SEC(".maps");

const volatile __u32 nr_possible_cpus = 1;
const volatile __u64 page_size;
const volatile __u32 thread_rss_caches;

__u64 next_unit_id;
__u64 map_full;
__u64 scope_overflows;
__u64 thread_collisions;
__u64 orphan_slices;
__u64 switch_in_misses;
__u64 handover_timeouts;
__u64 switch_in_misses_exact;
__u64 late_switch_ins;
__u32 unseen_after_tid[UM_UNSEEN_SLOTS];
__u64 unseen_after_count[UM_UNSEEN_SLOTS];
__u64 lock_timeouts;
__u32 trust_marks;
__u64 cpu_running[UM_MAX_CPUS];
struct cpu_pending_alloc cpu_pending_alloc[UM_MAX_CPUS];

char LICENSE[] SEC("license") = "Dual BSD/GPL";
