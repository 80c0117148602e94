/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The run's device memory through the CUDA driver API, as the manifest's run keys. */
#ifndef UM_GPU_JSON_H
#define UM_GPU_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/gpu_probes.h"

struct nvml;

/* What NVML said of a unit's process at the unit's end, as the loader saw it (its record came). */
enum gpu_nvml_state {
	GPU_NVML_READ,           /* context_bytes holds the context and pool part */
	GPU_NVML_ABSENT,         /* no NVML: the run's reason says why */
	GPU_NVML_NOTHING_TRACED, /* the unit held no device memory through the API */
	GPU_NVML_NOT_LISTED,     /* no device listed the process (it had ended, or no context) */
	GPU_NVML_NO_FIGURE,      /* NVML has no figure for it (WDDM; MIG without privileges) */
	GPU_NVML_BELOW_TRACED,   /* NVML read less than the probes saw held: no difference to give */
	GPU_NVML_FAILED,         /* an NVML call failed */
};

struct gpu_nvml_unit {
	enum gpu_nvml_state state;
	uint64_t context_bytes; /* GPU_NVML_READ: usedGpuMemory less the bytes the probes saw */
};

/*
 * Read process pid's usedGpuMemory now (n NULL: no NVML) and take off api_live, the device
 * bytes the probes see it hold now: the context and pools, read, not traced.
 */
void gpu_nvml_read(struct nvml *n, pid_t pid, bool traced, uint64_t api_live,
		   struct gpu_nvml_unit *out);
/* The unit's gpu_nvml note: how its NVML figures were got, or why they are null. */
const char *gpu_nvml_note(enum gpu_nvml_state state);

/* The NVML part of the run: each process's context as last read, summed; why none was read. */
struct gpu_nvml_run {
	bool loaded;             /* NVML was loaded */
	const char *why;         /* !loaded: why not */
	size_t processes;        /* the processes whose context was read */
	uint64_t context_bytes;  /* their contexts, each as last read, summed */
};

/*
 * Set peak_gpu_bytes, peak_gpu_managed_bytes, gpu_devices and peak_gpu_bytes_by_device in run
 * (the units' keys, files/unit_keys.h; null when no traced process made a probed call), and
 * "gpu": the library probed, the calls seen, and the reason when the figures are null. With
 * nv, peak_gpu_total_bytes and gpu_context_bytes: the API peak plus the contexts NVML gave (null
 * when none was read), and "gpu.nvml", how they were read or why not.
 */
void gpu_run_json(const struct gpu_counters *g, const struct gpu_nvml_run *nv, json_t *run);

#endif
