// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory's arithmetic (bpf/gpu_pure.bpf.h), compiled on the host from the header the
 * BPF programs include, against figures worked out by hand. No BPF, no root.
 */
#include <criterion/criterion.h>
#include "host_model.h"
#include "gpu_pure.bpf.h"

#define MIB (1LL << 20)

static void unit_change(struct um_gpu_unit *gu, __u32 slot, __s64 bytes)
{
	gpu_live_apply(&gu->live, gu->peak_device, &gu->peak_total, &gu->peak_managed, slot, bytes);
}

/* 4 and 2 held at once on device 0, then 1 on device 1: the total's peak is 6 and then 6 still */
Test(bpf_gpu_model, peaks_per_device_and_of_the_total)
{
	struct um_gpu_unit gu = {};

	unit_change(&gu, 0, 4 * MIB);
	unit_change(&gu, 0, 2 * MIB);
	unit_change(&gu, 0, -4 * MIB);
	unit_change(&gu, 1, 1 * MIB);
	cr_expect_eq(gu.peak_total, 6 * MIB);
	cr_expect_eq(gu.peak_device[0], 6 * MIB);
	cr_expect_eq(gu.peak_device[1], 1 * MIB);
	cr_expect_eq(gu.live.total, 3 * MIB);
	cr_expect_eq(gu.live.device[0], 2 * MIB);
}

Test(bpf_gpu_model, managed_memory_is_apart_from_the_devices)
{
	struct um_gpu_unit gu = {};

	unit_change(&gu, UM_GPU_SLOTS, 3 * MIB);
	unit_change(&gu, 0, 1 * MIB);
	unit_change(&gu, UM_GPU_SLOTS, -3 * MIB);
	cr_expect_eq(gu.peak_managed, 3 * MIB);
	cr_expect_eq(gu.peak_total, 1 * MIB);
	cr_expect_eq(gu.live.managed, 0);
}

/* a process keeps live figures only: no peak to raise, nothing written through NULL */
Test(bpf_gpu_model, a_process_keeps_live_bytes_only)
{
	struct um_gpu_live live = {};

	gpu_live_apply(&live, NULL, NULL, NULL, 2, 5 * MIB);
	gpu_live_apply(&live, NULL, NULL, NULL, UM_GPU_SLOTS, MIB);
	cr_expect_eq(live.device[2], 5 * MIB);
	cr_expect_eq(live.total, 5 * MIB);
	cr_expect_eq(live.managed, MIB);
}

/* bytes held at the unit's start count in its peaks; freed inside, the peak stays */
Test(bpf_gpu_model, a_unit_starts_from_its_owners_live_bytes)
{
	struct um_gpu_live owner = { .device = { [0] = 5 * MIB }, .total = 5 * MIB };
	struct um_gpu_unit gu = { .id = 7, .peak_total = 99 * MIB };

	gpu_unit_start(&gu, &owner, 8);
	unit_change(&gu, 0, -5 * MIB);
	unit_change(&gu, 0, 1 * MIB);
	cr_expect_eq(gu.id, 8);
	cr_expect_eq(gu.peak_total, 5 * MIB, "the last unit's peak was kept: %llu",
		     (unsigned long long)gu.peak_total);
	cr_expect_eq(gu.peak_device[0], 5 * MIB);
	cr_expect_eq(gu.live.total, 1 * MIB);
}

/* a free of more than the scope held (a process that joined with bytes) never raises a peak */
Test(bpf_gpu_model, a_sum_below_zero_raises_nothing)
{
	struct um_gpu_unit gu = {};

	unit_change(&gu, 0, -2 * MIB);
	unit_change(&gu, 0, 1 * MIB);
	cr_expect_eq(gu.peak_total, 0);
	cr_expect_eq(gu.peak_device[0], 0);
}
