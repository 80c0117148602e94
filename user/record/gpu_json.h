/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The run's device memory through the CUDA driver API, as the manifest's run keys. */
#ifndef UM_GPU_JSON_H
#define UM_GPU_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "trace/gpu_probes.h"
#include "trace/nvml.h"

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
 * (the units' keys, common/unit_keys.h; null when no traced process made a probed call), and
 * "gpu": the library probed, the calls seen, and the reason when the figures are null. With
 * nv, peak_gpu_total_bytes and gpu_context_bytes: the API peak plus the contexts NVML gave (null
 * when none was read), and "gpu.nvml", how they were read or why not.
 */
void gpu_run_json(const struct gpu_counters *g, const struct gpu_nvml_run *nv, json_t *run);

#endif
