/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory's arithmetic on a scope's figures (a process's, the group's, an open unit's):
 * no map, no helper, so a host compiler takes it too (tests/bpf/test_gpu_model.c). Needs
 * model_pure.bpf.h (peak_raise) and um_fetch_add from its includer.
 */
#ifndef UNITMETER_GPU_PURE_BPF_H
#define UNITMETER_GPU_PURE_BPF_H

#include "model_pure.bpf.h"

/*
 * A change of `bytes` in slot (a device slot; UM_GPU_SLOTS: managed memory) of one scope's
 * live figures, raising its peaks when it keeps them (NULL: a process, whose own peak nothing
 * reports).
 */
static __always_inline void gpu_live_apply(struct um_gpu_live *live, __u64 *peak_device,
					   __u64 *peak_total, __u64 *peak_managed, __u32 slot,
					   __s64 bytes)
{
	__u64 *device_peak;
	__s64 now, *device;

	if (slot >= UM_GPU_SLOTS) {
		now = um_fetch_add(&live->managed, bytes) + bytes;
		if (peak_managed)
			peak_raise(peak_managed, now);
		return;
	}
	/*
	 * 6.1's verifier forgets a checked bound when the compiler spills the value and reloads it
	 * for the access (seen with four scopes inlined in one program): the check made again, on
	 * a value hidden from the compiler, right where both addresses are taken (CPU_SLOT's way).
	 */
	asm volatile("" : "+r"(slot));
	if (slot >= UM_GPU_SLOTS)
		return;
	device = &live->device[slot];
	device_peak = peak_device ? &peak_device[slot] : NULL;
	now = um_fetch_add(device, bytes) + bytes;
	if (device_peak)
		peak_raise(device_peak, now);
	now = um_fetch_add(&live->total, bytes) + bytes;
	if (peak_total)
		peak_raise(peak_total, now);
}

/* A unit's figures start from its owner's live ones: held at entry, they count in its peaks. */
static __always_inline void gpu_unit_start(struct um_gpu_unit *gu, const struct um_gpu_live *start,
					   __u64 id)
{
	gu->live = *start;
	for (int i = 0; i < UM_GPU_SLOTS; i++)
		gu->peak_device[i] = start->device[i] > 0 ? start->device[i] : 0;
	gu->peak_total = start->total > 0 ? start->total : 0;
	gu->peak_managed = start->managed > 0 ? start->managed : 0;
	gu->id = id;
}

#endif /* UNITMETER_GPU_PURE_BPF_H */
