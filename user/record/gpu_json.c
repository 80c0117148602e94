// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "files/unit_keys.h"
#include "record/gpu_json.h"

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

void gpu_run_json(const struct gpu_counters *g, json_t *run)
{
	const char *reason = NULL;
	int known = 0;

	if (!g->library[0])
		reason = "no libcuda.so.1 was found where the loader looks (LD_LIBRARY_PATH, "
			 "ldconfig's cache, the default directories): device memory was not traced";
	else if (!g->seen)
		reason = "no traced process called a probed entry point of the CUDA driver";
	if (reason) {
		json_object_set_new(run, UM_KEY_PEAK_GPU_BYTES, json_null());
		json_object_set_new(run, UM_KEY_PEAK_GPU_MANAGED_BYTES, json_null());
		json_object_set_new(run, UM_KEY_GPU_DEVICES, json_null());
		json_object_set_new(run, UM_KEY_PEAK_GPU_BY_DEVICE, json_null());
	} else {
		for (int i = 0; i < UM_GPU_DEVICES; i++)
			known += g->peak_device_bytes[i] > 0;
		json_object_set_new(run, UM_KEY_PEAK_GPU_BYTES, json_integer((json_int_t)g->peak_bytes));
		json_object_set_new(run, UM_KEY_PEAK_GPU_MANAGED_BYTES,
				    json_integer((json_int_t)g->peak_managed_bytes));
		json_object_set_new(run, UM_KEY_GPU_DEVICES,
				    g->peak_device_bytes[UM_GPU_UNKNOWN_DEVICE] ? json_null() :
										  json_integer(known));
		json_object_set_new(run, UM_KEY_PEAK_GPU_BY_DEVICE, by_device(g));
	}
	json_object_set_new(run, "gpu",
			    json_pack("{s:s?, s:I, s:I, s:I, s:s, s:s?}", "library",
				      g->library[0] ? g->library : NULL, "calls", (json_int_t)g->calls,
				      "failed_calls", (json_int_t)g->failed_calls, "unknown_frees",
				      (json_int_t)g->unknown_frees, "figures",
				      "bytes held through the driver API (API-exact); the context and "
				      "pools the driver keeps are not in them",
				      "reason", reason));
}
