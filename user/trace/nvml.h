/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * NVIDIA's management library, libnvidia-ml.so.1, loaded at run time where it is present (no
 * build dependency: the few prototypes and structs are declared from NVML's documented ABI).
 * Read-only calls only: no device setting is ever changed. What it gives is read, not traced:
 * a point reading of what each process holds on the devices, the CUDA context and pools included.
 */
#ifndef UM_NVML_H
#define UM_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

struct nvml;

/*
 * Load libnvidia-ml.so.1 the way dlopen finds it (LD_LIBRARY_PATH, the loader's cache, the
 * default directories) and initialise it. NULL when it is absent or fails, with why in why.
 */
struct nvml *nvml__open(char *why, size_t len);

/*
 * What process pid holds on all devices together now (NVML's usedGpuMemory, summed over the
 * devices that list it). 0; -ENOENT: no device lists it (it holds no context, or has ended);
 * -ENODATA: NVML has no figure for it (WDDM, MIG without privileges); -EIO: a call failed.
 */
int nvml__process_bytes(struct nvml *n, pid_t pid, uint64_t *bytes);

/* The devices: [{"index": N, "name": S, "memory_total_bytes": N}]; NULL when a call failed. */
json_t *nvml__devices(struct nvml *n);

void nvml__close(struct nvml *n);

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

#endif
