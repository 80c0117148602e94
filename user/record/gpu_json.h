/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The run's device memory through the CUDA driver API, as the manifest's run keys. */
#ifndef UM_GPU_JSON_H
#define UM_GPU_JSON_H

#include <jansson.h>
#include "trace/gpu_probes.h"

/*
 * Set peak_gpu_bytes, peak_gpu_managed_bytes, gpu_devices and peak_gpu_bytes_by_device in run
 * (the units' keys, files/unit_keys.h; null when no traced process made a probed call), and
 * "gpu": the library probed, the calls seen, and the reason when the figures are null.
 */
void gpu_run_json(const struct gpu_counters *g, json_t *run);

#endif
