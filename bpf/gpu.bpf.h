/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory held through the CUDA driver API: the maps (defined in maps.bpf.c, so every
 * object links to one definition), and a unit's figures as the probes (gpu.bpf.c) and a unit's
 * close (units.bpf.c) read them. A unit's figures start lazily: at the first change in its scope,
 * or at its close, from its owner's figures then, which no change in the scope has moved since
 * the unit opened (a process forked inside the unit holds no device memory of its parent's).
 */
#ifndef UNITMETER_GPU_BPF_H
#define UNITMETER_GPU_BPF_H

#include "model.bpf.h"
#include "gpu_pure.bpf.h"

/* tid -> the arguments of its driver call in progress */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct um_gpu_call_args);
} gpu_calls_map_t;

/* a live allocation (address or VMM handle) of a process -> its size and device slot */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct um_gpu_key);
	__type(value, struct um_gpu_alloc);
} gpu_allocs_map_t;

/* a context of a process (um_gpu_key, kind 0) -> its device */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct um_gpu_key);
	__type(value, __u32);
} gpu_ctxs_map_t;

/* tid -> the device slot of its current context, as the calls seen made it */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u32);
} gpu_threads_map_t;

/* tgid -> its live device bytes; present once the process made a call that changes them */
typedef struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct um_gpu_live);
} gpu_procs_map_t;

/* a unit's figures, in its slot of the units map */
typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UM_UNIT_SLOTS);
	__type(key, __u32);
	__type(value, struct um_gpu_unit);
} gpu_units_map_t;

extern gpu_calls_map_t gpu_calls SEC(".maps");
extern gpu_allocs_map_t gpu_allocs SEC(".maps");
extern gpu_ctxs_map_t gpu_ctxs SEC(".maps");
extern gpu_threads_map_t gpu_threads SEC(".maps");
extern gpu_procs_map_t gpu_procs SEC(".maps");
extern gpu_units_map_t gpu_units SEC(".maps");

/* The figures of open unit id, started from its owner's when this is their first use. */
static __always_inline struct um_gpu_unit *gpu_unit_locked(__u64 id)
{
	struct um_unit *unit = unit_get(id);
	__u32 slot = unit_slot(id), owner;
	struct um_gpu_live *start;
	struct um_gpu_unit *gu;

	if (!unit)
		return NULL;
	gu = bpf_map_lookup_elem(&gpu_units, &slot);
	if (!gu || gu->id == id)
		return gu;
	owner = unit->pid;
	start = bpf_map_lookup_elem(&gpu_procs, &owner);
	if (!start)
		return NULL; /* nothing held in the scope: the caller makes the owner's entry first */
	gpu_unit_start(gu, start, id);
	return gu;
}

/* A unit closes: its figures into its record (gpu_seen 0 when its scope held or did nothing). */
static __always_inline void gpu_unit_close_locked(__u64 id, struct um_unit_record *rec)
{
	struct um_gpu_unit *gu = gpu_unit_locked(id);

	/* the ring's memory is not zeroed: every field is written */
	rec->gpu_seen = gu != NULL;
	rec->gpu_pad = 0;
	for (int i = 0; i < UM_GPU_SLOTS; i++)
		rec->peak_gpu_device_bytes[i] = gu ? gu->peak_device[i] : 0;
	rec->peak_gpu_bytes = gu ? gu->peak_total : 0;
	rec->peak_gpu_managed_bytes = gu ? gu->peak_managed : 0;
}

#endif /* UNITMETER_GPU_BPF_H */
