// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "trace/bpf_words.h"
#include "trace/gpu_probes.h"
#include "trace/libfind.h"
#include "trace/uprobe_link.h"
#include "unitmeter.skel.h"

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

enum gpu_entry { ALLOC, MANAGED, PITCH, CREATE, FREE, RELEASE, CTX_RETAIN, CTX_CREATE, CTX_SET };

/* Every exported name that allocates or frees device memory, or names a thread's device. */
static const struct {
	const char *symbol;
	enum gpu_entry entry;
} entry_points[] = {
	{ "cuMemAlloc_v2", ALLOC },
	{ "cuMemAlloc", ALLOC },
	{ "cuMemAllocAsync", ALLOC },
	{ "cuMemAllocAsync_ptsz", ALLOC },
	{ "cuMemAllocFromPoolAsync", ALLOC },
	{ "cuMemAllocFromPoolAsync_ptsz", ALLOC },
	{ "cuMemAllocManaged", MANAGED },
	{ "cuMemAllocPitch_v2", PITCH },
	{ "cuMemCreate", CREATE },
	{ "cuMemFree_v2", FREE },
	{ "cuMemFree", FREE },
	{ "cuMemFreeAsync", FREE },
	{ "cuMemFreeAsync_ptsz", FREE },
	{ "cuMemRelease", RELEASE },
	{ "cuDevicePrimaryCtxRetain", CTX_RETAIN },
	{ "cuCtxCreate_v2", CTX_CREATE },
	{ "cuCtxSetCurrent", CTX_SET },
};

static struct bpf_program *entry_program(struct unitmeter_bpf *skel, enum gpu_entry entry)
{
	switch (entry) {
	case ALLOC:
		return skel->progs.gpu_alloc_enter;
	case MANAGED:
		return skel->progs.gpu_managed_enter;
	case PITCH:
		return skel->progs.gpu_pitch_enter;
	case CREATE:
		return skel->progs.gpu_create_enter;
	case FREE:
		return skel->progs.gpu_free_enter;
	case RELEASE:
		return skel->progs.gpu_release_enter;
	case CTX_RETAIN:
		return skel->progs.gpu_ctx_retain_enter;
	case CTX_CREATE:
		return skel->progs.gpu_ctx_create_enter;
	case CTX_SET:
		return skel->progs.gpu_ctx_set_enter;
	}
	return NULL;
}

int gpu_probes_attach(struct unitmeter_bpf *skel, const char *path, bool multi,
		      int (*keep)(void *ctx, struct uprobe_link *link), void *ctx)
{
	int probed = 0;

	for (size_t i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
		struct bpf_words words;
		struct uprobe_link link;
		uint64_t offset;
		int err = uprobe_link_offset(path, entry_points[i].symbol, multi, &offset);

		/* the return first: an entry whose return is not probed would leave its arguments
		 * behind (as for units, tracer.c) */
		for (int ret = 1; ret >= 0; ret--) {
			/* every process: the BPF side filters; a lookup's error is handled as an
			 * attach's */
			if (!err)
				err = uprobe_link_attach(&link, ret ? skel->progs.gpu_return
								    : entry_program(skel, entry_points[i].entry),
							 path, entry_points[i].symbol, offset, ret, 0, multi);
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

void gpu_counters_read(const struct unitmeter_bpf *skel, struct gpu_counters *out)
{
	out->seen = skel->bss->gpu_calls_seen > 0;
	for (int i = 0; i < UM_GPU_SLOTS; i++)
		out->peak_device_bytes[i] = skel->bss->gpu_group_peak_device[i];
	out->peak_bytes = skel->bss->gpu_group_peak_total;
	out->peak_managed_bytes = skel->bss->gpu_group_peak_managed;
	out->calls = skel->bss->gpu_calls_seen;
	out->failed_calls = skel->bss->gpu_calls_failed;
	out->unknown_frees = skel->bss->gpu_unknown_frees;
}
