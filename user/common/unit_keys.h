/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The keys of a unit's JSON object (one line of a units stream, one element of a manifest's
 * "units"), in the order the writer puts them (record/unit_record.c), and the values of its
 * status. The writer and every reader (files/, project/, page/) name them from here, so a key
 * renamed or added is renamed or added once. String literals, not a table of pointers: the
 * writer pastes them into the literals of its line at compile time.
 */
#ifndef UM_UNIT_KEYS_H
#define UM_UNIT_KEYS_H

#define UM_KEY_INDEX                "index"
#define UM_KEY_SPEC                 "spec"
#define UM_KEY_PID                  "pid"
#define UM_KEY_START_NS             "start_ns"
#define UM_KEY_WALL_S               "wall_s"
#define UM_KEY_CPU_S                "cpu_s"
#define UM_KEY_CPU_UTILISATION      "cpu_utilisation"
#define UM_KEY_PEAK_RSS_BYTES       "peak_rss_bytes"
#define UM_KEY_PEAK_RSS_DELTA_BYTES "peak_rss_delta_bytes"
#define UM_KEY_START_RSS_BYTES      "start_rss_bytes"
#define UM_KEY_N_SAMPLES            "n_samples"
#define UM_KEY_OUTPUT_BYTES         "output_bytes"
/* of output_bytes, those written under the node-local tmp dir (--tmp); null: no dir known, or
 * a file that predates the figure */
#define UM_KEY_TMP_OUTPUT_BYTES     "tmp_output_bytes"
#define UM_KEY_PAGE_ALLOC_BYTES     "page_alloc_bytes"
#define UM_KEY_START_CHARGE_BYTES   "start_charge_bytes"
#define UM_KEY_PEAK_CHARGE_BYTES    "peak_charge_bytes"
/* device memory through the CUDA driver API; null when the unit's scope made no such call */
#define UM_KEY_PEAK_GPU_BYTES       "peak_gpu_bytes"
#define UM_KEY_PEAK_GPU_MANAGED_BYTES "peak_gpu_managed_bytes"
#define UM_KEY_GPU_DEVICES          "gpu_devices"
/* [{"device": N or null (not known), "peak_bytes": N}], the devices that held any */
#define UM_KEY_PEAK_GPU_BY_DEVICE   "peak_gpu_bytes_by_device"
#define UM_KEY_DEVICE               "device"
#define UM_KEY_PEAK_BYTES           "peak_bytes"
/* read from NVML (usedGpuMemory of the unit's process at its end), not traced; null when not read */
#define UM_KEY_PEAK_GPU_TOTAL_BYTES "peak_gpu_total_bytes"
#define UM_KEY_GPU_CONTEXT_BYTES    "gpu_context_bytes"
/* how those two were got, or why they are null */
#define UM_KEY_GPU_NVML             "gpu_nvml"
#define UM_KEY_PROCESSES            "processes"
#define UM_KEY_THREADS              "threads"
#define UM_KEY_STATUS               "status"
#define UM_KEY_INCOMPLETE_REASON    "incomplete_reason"

/* UM_KEY_STATUS's values; a unit without the key (an older file) is complete. */
#define UM_STATUS_COMPLETE   "complete"
#define UM_STATUS_INCOMPLETE "incomplete"

#endif
