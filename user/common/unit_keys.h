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

/*
 * The figures the readers take of a unit (files/units_file.h), one line each, from which the
 * field enum, both readers' key tables (units_file.c's jansson, fastjson.cc's simdjson) and
 * the checks a unit must pass are made: X(FIELD, key, max, need), where a unit's figure must be
 * a number from 0 to max (max 0: not checked) and need says whether it may be absent or null
 * (UM_FIGURE_OPTIONAL) or not (UM_FIGURE_REQUIRED). Adding a figure a reader takes is one line
 * here; the key's name itself is its UM_KEY_ above.
 */
#define UM_FIGURE_OPTIONAL 0
#define UM_FIGURE_REQUIRED 1
#define UM_UNIT_FIGURES(X)                                                                 \
	X(INDEX, UM_KEY_INDEX, 0, UM_FIGURE_OPTIONAL)                                      \
	X(PID, UM_KEY_PID, 0, UM_FIGURE_OPTIONAL)                                          \
	X(START_NS, UM_KEY_START_NS, 0, UM_FIGURE_OPTIONAL)                                \
	X(WALL_S, UM_KEY_WALL_S, 1e9 /* thirty years */, UM_FIGURE_REQUIRED)               \
	X(CPU_S, UM_KEY_CPU_S, 1e12, UM_FIGURE_REQUIRED)                                   \
	X(PEAK_RSS_BYTES, UM_KEY_PEAK_RSS_BYTES, 4e18, UM_FIGURE_REQUIRED)                 \
	X(OUTPUT_BYTES, UM_KEY_OUTPUT_BYTES, 4e18, UM_FIGURE_OPTIONAL)                     \
	X(TMP_OUTPUT_BYTES, UM_KEY_TMP_OUTPUT_BYTES, 4e18, UM_FIGURE_OPTIONAL)             \
	X(CPU_UTILISATION, UM_KEY_CPU_UTILISATION, 1e6, UM_FIGURE_OPTIONAL)                \
	X(PEAK_RSS_DELTA_BYTES, UM_KEY_PEAK_RSS_DELTA_BYTES, 0, UM_FIGURE_OPTIONAL)        \
	X(PEAK_CHARGE_BYTES, UM_KEY_PEAK_CHARGE_BYTES, 0, UM_FIGURE_OPTIONAL)              \
	X(START_RSS_BYTES, UM_KEY_START_RSS_BYTES, 0, UM_FIGURE_OPTIONAL)                  \
	X(PEAK_GPU_BYTES, UM_KEY_PEAK_GPU_BYTES, 0, UM_FIGURE_OPTIONAL)                    \
	X(GPU_DEVICES, UM_KEY_GPU_DEVICES, 0, UM_FIGURE_OPTIONAL)                          \
	X(GPU_CONTEXT_BYTES, UM_KEY_GPU_CONTEXT_BYTES, 0, UM_FIGURE_OPTIONAL)

/* UM_KEY_STATUS's values; a unit without the key (an older file) is complete. */
#define UM_STATUS_COMPLETE   "complete"
#define UM_STATUS_INCOMPLETE "incomplete"

#endif
