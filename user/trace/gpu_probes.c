// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "common/log.h"
#include "trace/bpf_words.h"
#include "trace/gpu_probes.h"
#include "trace/libfind.h"
#include "trace/uprobe_link.h"

#define GPU_LIBRARY "libcuda.so.1"

/* A toolkit's stubs/libcuda.so only links programs: it has no driver behind it. */
static bool usable(const char *path)
{
	return !strstr(path, "/stubs/");
}

bool gpu_library_find(pid_t mapped_by, char *path, size_t len)
{
	return library_find(GPU_LIBRARY, mapped_by, usable, path, len, NULL, 0);
}

const char *const gpu_program_names[GPU_PROGRAMS] = {
	[GPU_ALLOC_ENTER] = "gpu_alloc_enter",
	[GPU_MANAGED_ENTER] = "gpu_managed_enter",
	[GPU_PITCH_ENTER] = "gpu_pitch_enter",
	[GPU_CREATE_ENTER] = "gpu_create_enter",
	[GPU_FREE_ENTER] = "gpu_free_enter",
	[GPU_RELEASE_ENTER] = "gpu_release_enter",
	[GPU_CTX_RETAIN_ENTER] = "gpu_ctx_retain_enter",
	[GPU_CTX_CREATE_ENTER] = "gpu_ctx_create_enter",
	[GPU_CTX_SET_ENTER] = "gpu_ctx_set_enter",
	[GPU_RETURN] = "gpu_return",
};

/* Every exported name that allocates or frees device memory, or names a thread's device. */
static const struct {
	const char *symbol;
	enum gpu_program entry;
} entry_points[] = {
	{ "cuMemAlloc_v2", GPU_ALLOC_ENTER },
	{ "cuMemAlloc", GPU_ALLOC_ENTER },
	{ "cuMemAllocAsync", GPU_ALLOC_ENTER },
	{ "cuMemAllocAsync_ptsz", GPU_ALLOC_ENTER },
	{ "cuMemAllocFromPoolAsync", GPU_ALLOC_ENTER },
	{ "cuMemAllocFromPoolAsync_ptsz", GPU_ALLOC_ENTER },
	{ "cuMemAllocManaged", GPU_MANAGED_ENTER },
	{ "cuMemAllocPitch_v2", GPU_PITCH_ENTER },
	{ "cuMemCreate", GPU_CREATE_ENTER },
	{ "cuMemFree_v2", GPU_FREE_ENTER },
	{ "cuMemFree", GPU_FREE_ENTER },
	{ "cuMemFreeAsync", GPU_FREE_ENTER },
	{ "cuMemFreeAsync_ptsz", GPU_FREE_ENTER },
	{ "cuMemRelease", GPU_RELEASE_ENTER },
	{ "cuDevicePrimaryCtxRetain", GPU_CTX_RETAIN_ENTER },
	{ "cuCtxCreate_v2", GPU_CTX_CREATE_ENTER },
	{ "cuCtxSetCurrent", GPU_CTX_SET_ENTER },
};

int gpu_probes_attach(const char *path, bool multi, gpu_attach_fn attach,
		      int (*keep)(void *ctx, struct uprobe_link *link), void *ctx)
{
	int probed = 0;

	for (size_t i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
		struct bpf_words words;
		struct uprobe_link link;
		uint64_t offset;
		int err = uprobe_link_offset(path, entry_points[i].symbol, multi, &offset);

		/* the return first: an entry whose return is not probed would leave its arguments
		 * behind (as for units, probes.c) */
		for (int ret = 1; ret >= 0; ret--) {
			/* every process: the BPF side filters; a lookup's error is handled as an
			 * attach's */
			if (!err)
				err = attach(ctx, &link, ret ? GPU_RETURN : entry_points[i].entry, path,
					     entry_points[i].symbol, offset, ret);
			if (err) {
				/* an older driver lacks the newer names: probe those it has */
				if (err == -ENOENT || err == -ESRCH)
					break;
				um_err("cannot attach a probe to %s in %s: %s", entry_points[i].symbol,
				       path, bpf_words(err, &words));
				return err;
			}
			err = keep(ctx, &link);
			if (err)
				return err;
			if (!ret)
				probed++;
		}
	}
	return probed;
}

void gpu_counters_read(const struct um_group *group, struct gpu_counters *out)
{
	out->seen = group->gpu_calls_seen > 0;
	for (int i = 0; i < UM_GPU_SLOTS; i++)
		out->peak_device_bytes[i] = group->gpu_peak_device[i];
	out->peak_bytes = group->gpu_peak_total;
	out->peak_managed_bytes = group->gpu_peak_managed;
	out->calls = group->gpu_calls_seen;
	out->failed_calls = group->gpu_calls_failed;
	out->unknown_frees = group->gpu_unknown_frees;
}
