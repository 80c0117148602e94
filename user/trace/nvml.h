/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * NVIDIA's management library, libnvidia-ml.so.1, loaded at run time where it is present (no
 * build dependency: the few prototypes and structs are declared from NVML's documented ABI).
 * Read-only calls only: no device setting is ever changed. What it gives is read, not traced:
 * a point reading of what each process holds on the devices, the CUDA context and pools included.
 */
#ifndef UM_NVML_H
#define UM_NVML_H

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

#endif
