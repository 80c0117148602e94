// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A fake libnvidia-ml.so.1 for the tests (no GPU in CI): NVML's names, argument lists, structs
 * and SONAME as documented, for the read-only calls unitmeter makes. One device, FAKE_NVML_NAME
 * with FAKE_NVML_MEMORY_BYTES; its compute processes are those the fake libcuda.so.1 published
 * in FAKE_CUDA_STATE_DIR that are still alive, each using what it holds through the driver
 * API plus FAKE_NVML_CONTEXT_BYTES (the context the real driver keeps outside that API).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cuda.h"

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef struct nvml_device *nvmlDevice_t;
/* nvmlProcessInfo_v2_t, what _v3 fills */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

static int initialised;
static struct nvml_device {
	int index;
} device0;

int nvmlInit_v2(void)
{
	initialised++;
	return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	initialised--;
	return NVML_SUCCESS;
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	*count = 1;
	return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (index != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &device0;
	return NVML_SUCCESS;
}

int nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (device != &device0 || length < sizeof(FAKE_NVML_NAME))
		return NVML_ERROR_INVALID_ARGUMENT;
	memcpy(name, FAKE_NVML_NAME, sizeof(FAKE_NVML_NAME));
	return NVML_SUCCESS;
}

int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (device != &device0)
		return NVML_ERROR_INVALID_ARGUMENT;
	memory->total = FAKE_NVML_MEMORY_BYTES;
	memory->used = 0;
	memory->free = FAKE_NVML_MEMORY_BYTES;
	return NVML_SUCCESS;
}

/* One published process: 1 and its figures, or 0 (not a pid, gone, unreadable). */
static int read_process(const char *dir, const char *name, nvmlProcessInfo_t *p)
{
	char path[4096], *end;
	unsigned long long bytes;
	long pid = strtol(name, &end, 10);
	FILE *f;
	int ok;

	if (*end || pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fscanf(f, "%llu", &bytes) == 1;
	fclose(f);
	if (!ok)
		return 0;
	*p = (nvmlProcessInfo_t){ .pid = (unsigned int)pid,
				  .usedGpuMemory = bytes + FAKE_NVML_CONTEXT_BYTES };
	return 1;
}

int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
					    nvmlProcessInfo_t *infos)
{
	const char *dir = getenv(FAKE_CUDA_STATE_ENV);
	unsigned int n = 0;
	nvmlProcessInfo_t p;
	struct dirent *e;
	DIR *d;

	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (device != &device0 || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	d = dir ? opendir(dir) : NULL;
	while (d && (e = readdir(d)))
		if (read_process(dir, e->d_name, &p)) {
			if (n < *count && infos)
				infos[n] = p;
			n++;
		}
	if (d)
		closedir(d);
	if (n > *count) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	return NVML_SUCCESS;
}
