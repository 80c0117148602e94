// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory held through the CUDA driver API: uprobes on the allocation entry points that
 * libcuda.so.1 exports (the loader attaches them to the library's file, so only processes that
 * map it ever hit them), one entry program per signature and one return program for all. The
 * entry saves the arguments by tid; the return, on CUDA_SUCCESS (0), reads the out-parameter
 * and changes the live bytes of the process, of the group and of the open units whose scope
 * holds it, raising their peaks as an RSS change does (model.bpf.h).
 *
 * The device of an allocation is that of the calling thread's current context, as the context
 * calls seen made it (cuDevicePrimaryCtxRetain or cuCtxCreate name the device, cuCtxSetCurrent
 * or cuCtxCreate make it current), or, for cuMemCreate, its prop's location. A context made
 * current any other way (cuCtxPushCurrent, one made before tracing began) leaves the device
 * unknown: UM_GPU_UNKNOWN_DEVICE, null in the outputs.
 *
 * Every run of the node's one set attaches probes of its own to its driver library, its group
 * in the cookie's high half: an entry probe saves a call only for a process of its own group,
 * so a call is counted once however many runs probe the library; its return is taken by the
 * first return probe that finds it saved. The group's figures are in its um_group.
 */
#include "gpu.bpf.h"

/* CUmemLocationType's CU_MEM_LOCATION_TYPE_DEVICE (cuda.h) */
#define UM_CU_LOCATION_DEVICE 1

/* Save a call of a process of the probe's group (UM_ANY_GROUP: the only one) for its return. */
static __always_inline int gpu_call_save(__u32 group, struct um_gpu_call_args *args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 tgid = current_tgid();
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc || (group != UM_ANY_GROUP && proc->group != group))
		return 0;
	/* a nested call of the same thread (none in the driver's API) would replace it */
	if (bpf_map_update_elem(&gpu_calls, &tid, args, BPF_ANY))
		__sync_fetch_and_add(&map_full, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gpu_alloc_enter, __u64 dptr, __u64 bytes)
{
	struct um_gpu_call_args args = { .call = UM_GPU_ALLOC, .out = dptr, .bytes = bytes };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_managed_enter, __u64 dptr, __u64 bytes)
{
	struct um_gpu_call_args args = { .call = UM_GPU_MANAGED, .out = dptr, .bytes = bytes };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_pitch_enter, __u64 dptr, __u64 pitch, __u64 width, __u64 height)
{
	struct um_gpu_call_args args = { .call = UM_GPU_PITCH, .out = dptr, .bytes = height,
					 .pitch_out = pitch };

	return gpu_call_save(um_probe_group(ctx), &args);
}

/* cuMemCreate: only a device-located allocation is device memory (prop->location, offset 8) */
SEC("uprobe")
int BPF_KPROBE(gpu_create_enter, __u64 handle, __u64 bytes, __u64 prop)
{
	struct um_gpu_call_args args = { .call = UM_GPU_CREATE, .out = handle, .bytes = bytes };
	__s32 location[2] = {}; /* CUmemLocation: type, id */

	if (bpf_probe_read_user(location, sizeof(location), (void *)(prop + 8)) ||
	    location[0] != UM_CU_LOCATION_DEVICE)
		return 0;
	args.device = location[1] >= 0 && location[1] < UM_GPU_DEVICES ? location[1] :
		      UM_GPU_UNKNOWN_DEVICE;
	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_free_enter, __u64 dptr)
{
	struct um_gpu_call_args args = { .call = UM_GPU_FREE, .out = dptr };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_release_enter, __u64 handle)
{
	struct um_gpu_call_args args = { .call = UM_GPU_RELEASE, .out = handle };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_ctx_retain_enter, __u64 context, __s32 device)
{
	struct um_gpu_call_args args = { .call = UM_GPU_CTX_RETAIN, .out = context, .device = device };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_ctx_create_enter, __u64 context, __u32 flags, __s32 device)
{
	struct um_gpu_call_args args = { .call = UM_GPU_CTX_CREATE, .out = context, .device = device };

	return gpu_call_save(um_probe_group(ctx), &args);
}

SEC("uprobe")
int BPF_KPROBE(gpu_ctx_set_enter, __u64 context)
{
	struct um_gpu_call_args args = { .call = UM_GPU_CTX_SET, .out = context };

	return gpu_call_save(um_probe_group(ctx), &args);
}

/* An open unit's figures, its owner given an entry first (the unit's start is read from it). */
static __always_inline struct um_gpu_unit *gpu_unit_started_locked(__u64 id)
{
	struct um_unit *unit = unit_get(id);
	struct um_gpu_live none = {};
	__u32 owner;

	if (!unit)
		return NULL;
	owner = unit->pid;
	if (!bpf_map_lookup_elem(&gpu_procs, &owner))
		map_insert(&gpu_procs, &owner, &none);
	return gpu_unit_locked(id);
}

/* A change of a process's device bytes: its own, its group's and its open units'. */
static __always_inline void gpu_change_locked(__u32 tgid, __u32 slot, __s64 bytes)
{
	struct um_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct um_gpu_unit *units[UM_SCOPE_DEPTH] = {};
	struct um_gpu_live none = {}, *live;
	struct um_group *g;

	if (!proc)
		return;
	g = group_get(proc->group);
	/* the units' start is the owner's figure before this change */
	units[0] = gpu_unit_started_locked(proc->units[0]);
	units[1] = gpu_unit_started_locked(proc->units[1]);
	live = bpf_map_lookup_elem(&gpu_procs, &tgid);
	if (!live) {
		map_insert(&gpu_procs, &tgid, &none);
		live = bpf_map_lookup_elem(&gpu_procs, &tgid);
		if (!live)
			return;
	}
	gpu_live_apply(live, NULL, NULL, NULL, slot, bytes);
	if (g)
		gpu_live_apply(&g->gpu_live, g->gpu_peak_device, &g->gpu_peak_total,
			       &g->gpu_peak_managed, slot, bytes);
	for (int i = 0; i < UM_SCOPE_DEPTH; i++)
		if (units[i])
			gpu_live_apply(&units[i]->live, units[i]->peak_device,
				       &units[i]->peak_total, &units[i]->peak_managed, slot, bytes);
}

/* The device slot of the calling thread's current context. */
static __always_inline __u32 gpu_thread_slot(__u32 tid)
{
	__u32 *slot = bpf_map_lookup_elem(&gpu_threads, &tid);

	return slot ? *slot : UM_GPU_UNKNOWN_DEVICE;
}

static __always_inline __u32 gpu_device_slot(__s32 device)
{
	return device >= 0 && device < UM_GPU_DEVICES ? device : UM_GPU_UNKNOWN_DEVICE;
}

/* A successful allocation of `bytes` at the address or handle written to args->out. */
static __always_inline void gpu_allocated_locked(__u32 tgid, __u32 tid,
						 struct um_gpu_call_args *args, __u64 bytes)
{
	struct um_gpu_key key = { .tgid = tgid, .kind = args->call == UM_GPU_CREATE };
	struct um_gpu_alloc alloc = { .bytes = bytes };

	if (bpf_probe_read_user(&key.id, sizeof(key.id), (void *)args->out))
		return;
	if (args->call == UM_GPU_MANAGED)
		alloc.slot = UM_GPU_SLOTS;
	else if (args->call == UM_GPU_CREATE)
		alloc.slot = args->device;
	else
		alloc.slot = gpu_thread_slot(tid);
	if (bpf_map_update_elem(&gpu_allocs, &key, &alloc, BPF_ANY)) {
		__sync_fetch_and_add(&map_full, 1);
		return; /* its free would find nothing to take off: leave it out of the sums too */
	}
	gpu_change_locked(tgid, alloc.slot, bytes);
}

static __always_inline void gpu_freed_locked(__u32 tgid, struct um_gpu_call_args *args,
					     struct um_group *g)
{
	struct um_gpu_key key = { .tgid = tgid, .kind = args->call == UM_GPU_RELEASE,
				  .id = args->out };
	struct um_gpu_alloc *alloc = bpf_map_lookup_elem(&gpu_allocs, &key);
	__u64 bytes;
	__u32 slot;

	if (!alloc) {
		/* freeing 0 is a no-op the API allows */
		if (args->out && g)
			__sync_fetch_and_add(&g->gpu_unknown_frees, 1);
		return;
	}
	bytes = alloc->bytes;
	slot = alloc->slot;
	bpf_map_delete_elem(&gpu_allocs, &key);
	gpu_change_locked(tgid, slot, -(__s64)bytes);
}

static __always_inline void gpu_context_locked(__u32 tgid, __u32 tid, struct um_gpu_call_args *args)
{
	struct um_gpu_key key = { .tgid = tgid };
	__u32 slot = gpu_device_slot(args->device), *known;

	if (args->call == UM_GPU_CTX_SET) {
		key.id = args->out;
		known = bpf_map_lookup_elem(&gpu_ctxs, &key);
		slot = known ? *known : UM_GPU_UNKNOWN_DEVICE;
		bpf_map_update_elem(&gpu_threads, &tid, &slot, BPF_ANY);
		return;
	}
	if (bpf_probe_read_user(&key.id, sizeof(key.id), (void *)args->out))
		return;
	bpf_map_update_elem(&gpu_ctxs, &key, &slot, BPF_ANY);
	/* a context created is made current on the creating thread; a primary one is not */
	if (args->call == UM_GPU_CTX_CREATE)
		bpf_map_update_elem(&gpu_threads, &tid, &slot, BPF_ANY);
}

SEC("uretprobe")
int BPF_KRETPROBE(gpu_return, __s32 rc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), tgid = current_tgid();
	struct um_gpu_call_args args, *saved = bpf_map_lookup_elem(&gpu_calls, &tid);
	struct um_proc *proc;
	struct um_group *g;
	__u64 pitch = 0;
	bool held;

	/* saved by an entry probe of the process's group; taken by the first return that sees it */
	if (!saved)
		return 0;
	args = *saved;
	bpf_map_delete_elem(&gpu_calls, &tid);
	proc = bpf_map_lookup_elem(&procs, &tgid);
	g = proc ? group_get(proc->group) : NULL;
	if (g)
		__sync_fetch_and_add(&g->gpu_calls_seen, 1);
	if (rc != 0) { /* CUDA_SUCCESS: anything else allocated or freed nothing */
		if (g)
			__sync_fetch_and_add(&g->gpu_calls_failed, 1);
		return 0;
	}
	held = um_lock();
	switch (args.call) {
	case UM_GPU_ALLOC:
	case UM_GPU_MANAGED:
	case UM_GPU_CREATE:
		gpu_allocated_locked(tgid, tid, &args, args.bytes);
		break;
	case UM_GPU_PITCH:
		/* the pitch the driver chose, times the height: the bytes it reserved */
		if (!bpf_probe_read_user(&pitch, sizeof(pitch), (void *)args.pitch_out))
			gpu_allocated_locked(tgid, tid, &args, pitch * args.bytes);
		break;
	case UM_GPU_FREE:
	case UM_GPU_RELEASE:
		gpu_freed_locked(tgid, &args, g);
		break;
	default:
		gpu_context_locked(tgid, tid, &args);
		break;
	}
	um_unlock(held);
	return 0;
}
