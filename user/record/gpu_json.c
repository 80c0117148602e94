// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "common/manifest_keys.h"
#include "common/unit_keys.h"
#include "record/gpu_json.h"

const char *gpu_nvml_note(enum gpu_nvml_state state)
{
	switch (state) {
	case GPU_NVML_READ:
		return "read by NVML at the unit's end, not traced";
	case GPU_NVML_ABSENT:
		return "no NVML (run.gpu.nvml says why)";
	case GPU_NVML_NOTHING_TRACED:
		return "no device memory traced in the unit";
	case GPU_NVML_NOT_LISTED:
		return "NVML did not list the process at the unit's end";
	case GPU_NVML_NO_FIGURE:
		return "NVML has no figure for the process";
	case GPU_NVML_BELOW_TRACED:
		return "NVML read less than the bytes traced";
	case GPU_NVML_FAILED:
	default:
		return "an NVML call failed";
	}
}

/* The devices that held any bytes, each with its peak; device null: not known. */
static json_t *by_device(const struct gpu_counters *g)
{
	json_t *list = json_array();

	for (int i = 0; i < UM_GPU_SLOTS; i++)
		if (g->peak_device_bytes[i])
			json_array_append_new(
				list, json_pack("{s:o, s:I}", UM_KEY_DEVICE,
						i == UM_GPU_UNKNOWN_DEVICE ? json_null() : json_integer(i),
						UM_KEY_PEAK_BYTES, (json_int_t)g->peak_device_bytes[i]));
	return list;
}

void gpu_run_json(const struct gpu_counters *g, const struct gpu_nvml_run *nv, json_t *run)
{
	const char *nvml_note, *reason = NULL, *no_bytes = NULL;
	bool nvml_read;
	int known = 0;

	if (!g->library[0])
		reason = "no libcuda.so.1 was found where the loader looks (LD_LIBRARY_PATH, "
			 "the loader's cache, the default directories): device memory was not traced";
	else if (!g->seen)
		reason = "no traced process called a probed entry point of the CUDA driver";
	if (reason) {
		json_object_set_new(run, UM_RUN_PEAK_GPU_BYTES, json_null());
		json_object_set_new(run, UM_RUN_PEAK_GPU_MANAGED_BYTES, json_null());
		json_object_set_new(run, UM_RUN_GPU_DEVICES, json_null());
		json_object_set_new(run, UM_RUN_PEAK_GPU_BY_DEVICE, json_null());
	} else {
		for (int i = 0; i < UM_GPU_DEVICES; i++)
			known += g->peak_device_bytes[i] > 0;
		json_object_set_new(run, UM_RUN_PEAK_GPU_BYTES, json_integer((json_int_t)g->peak_bytes));
		json_object_set_new(run, UM_RUN_PEAK_GPU_MANAGED_BYTES,
				    json_integer((json_int_t)g->peak_managed_bytes));
		json_object_set_new(run, UM_RUN_GPU_DEVICES,
				    g->peak_device_bytes[UM_GPU_UNKNOWN_DEVICE] ? json_null() :
										  json_integer(known));
		json_object_set_new(run, UM_RUN_PEAK_GPU_BY_DEVICE, by_device(g));
		/* traced and exact, but 0: the driver refused every call (no GPU, no driver loaded) */
		if (g->calls && g->failed_calls == g->calls)
			no_bytes = "every probed call to the CUDA driver failed: no device memory was "
				   "allocated (no usable GPU, or its driver is not loaded: see nvml)";
	}
	if (!nv->loaded)
		nvml_note = nv->why;
	else if (reason)
		nvml_note = "loaded, but no device memory was traced";
	else if (!nv->processes)
		nvml_note = "loaded, but no traced process was listed at a unit's end";
	else
		nvml_note = "read, not traced: each process's usedGpuMemory at its units' ends, "
			    "less the bytes the probes saw it hold then; gpu_context_bytes is the "
			    "processes' last such reading, summed, and peak_gpu_total_bytes "
			    "peak_gpu_bytes plus it";
	nvml_read = nv->loaded && !reason && nv->processes;
	json_object_set_new(run, UM_RUN_PEAK_GPU_TOTAL_BYTES,
			    nvml_read ? json_integer((json_int_t)(g->peak_bytes + nv->context_bytes)) :
					json_null());
	json_object_set_new(run, UM_RUN_GPU_CONTEXT_BYTES,
			    nvml_read ? json_integer((json_int_t)nv->context_bytes) : json_null());
	json_object_set_new(run, UM_RUN_GPU,
			    json_pack("{s:s?, s:I, s:I, s:I, s:s, s:s?, s:s}", UM_GPU_LIBRARY,
				      g->library[0] ? g->library : NULL, UM_GPU_CALLS, (json_int_t)g->calls,
				      UM_GPU_FAILED_CALLS, (json_int_t)g->failed_calls, UM_GPU_UNKNOWN_FREES,
				      (json_int_t)g->unknown_frees, UM_GPU_FIGURES,
				      "bytes held through the driver API (API-exact); the context and "
				      "pools the driver keeps are not in them",
				      UM_GPU_REASON, reason ? reason : no_bytes, UM_GPU_NVML, nvml_note));
}
