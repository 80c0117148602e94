// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "trace/nvml.h"

/*
 * NVML's ABI, from nvml.h as documented (docs.nvidia.com nvml-api): every call returns an
 * nvmlReturn_t; the device is an opaque pointer.
 */
typedef int nvml_return;
typedef struct nvml_device *nvml_device;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
/* usedGpuMemory when the driver has no figure (Windows WDDM; MIG without privileges) */
#define NVML_VALUE_NOT_AVAILABLE 0xffffffffffffffffULL
#define NVML_DEVICE_NAME_BUFFER 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */

/* nvmlProcessInfo_v1_t: the unversioned call's */
struct nvml_process_v1 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
};
/* nvmlProcessInfo_v2_t (nvmlProcessInfo_t): the _v2 and _v3 calls' */
struct nvml_process_v2 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};
_Static_assert(sizeof(struct nvml_process_v1) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(struct nvml_process_v2) == 24, "nvmlProcessInfo_v2_t");

/* nvmlMemory_t */
struct nvml_memory {
	unsigned long long total, free, used;
};

struct nvml {
	void *lib;
	nvml_return (*shutdown)(void);
	nvml_return (*count)(unsigned int *);
	nvml_return (*handle)(unsigned int, nvml_device *);
	nvml_return (*processes)(nvml_device, unsigned int *, void *);
	size_t process_size; /* the struct the processes call fills */
	nvml_return (*name)(nvml_device, char *, unsigned int);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
};

/* What nvmlInit_v2's refusals mean to a user (nvml.h's nvmlReturn_t), or "". */
static const char *nvml_error_words(nvml_return rc)
{
	switch (rc) {
	case 4: /* NVML_ERROR_NO_PERMISSION */
		return ": no permission to the driver's device files";
	case 9: /* NVML_ERROR_DRIVER_NOT_LOADED */
		return ": the NVIDIA driver is not loaded (no GPU, or its kernel module is absent)";
	case 17: /* NVML_ERROR_OPERATING_SYSTEM */
		return ": the operating system refused";
	case 18: /* NVML_ERROR_LIB_RM_VERSION_MISMATCH */
		return ": libnvidia-ml.so.1 and the loaded driver are of different versions";
	default:
		return "";
	}
}

struct nvml *nvml__open(char *why, size_t len)
{
	struct nvml *n = calloc(1, sizeof(*n));
	nvml_return (*init)(void);
	nvml_return rc;

	if (!n) {
		snprintf(why, len, "out of memory loading NVML");
		return NULL;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, len, "libnvidia-ml.so.1 was not found (no NVIDIA driver)");
		free(n);
		return NULL;
	}
	init = (nvml_return(*)(void))dlsym(n->lib, "nvmlInit_v2");
	n->shutdown = (nvml_return(*)(void))dlsym(n->lib, "nvmlShutdown");
	n->count = (nvml_return(*)(unsigned int *))dlsym(n->lib, "nvmlDeviceGetCount_v2");
	n->handle = (nvml_return(*)(unsigned int, nvml_device *))dlsym(
		n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->name = (nvml_return(*)(nvml_device, char *, unsigned int))dlsym(n->lib,
									  "nvmlDeviceGetName");
	n->memory = (nvml_return(*)(nvml_device, struct nvml_memory *))dlsym(
		n->lib, "nvmlDeviceGetMemoryInfo");
	/* the newest the library has: _v3 and _v2 fill the v2 struct, the unversioned one v1 */
	n->process_size = sizeof(struct nvml_process_v2);
	n->processes = (nvml_return(*)(nvml_device, unsigned int *, void *))dlsym(
		n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->processes)
		n->processes = (nvml_return(*)(nvml_device, unsigned int *, void *))dlsym(
			n->lib, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->processes) {
		n->process_size = sizeof(struct nvml_process_v1);
		n->processes = (nvml_return(*)(nvml_device, unsigned int *, void *))dlsym(
			n->lib, "nvmlDeviceGetComputeRunningProcesses");
	}
	if (!init || !n->shutdown || !n->count || !n->handle || !n->name || !n->memory ||
	    !n->processes) {
		snprintf(why, len, "libnvidia-ml.so.1 lacks an entry point unitmeter reads");
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	rc = init();
	if (rc != NVML_SUCCESS) {
		snprintf(why, len, "nvmlInit_v2 failed%s (NVML error %d)", nvml_error_words(rc), rc);
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	return n;
}

/* Device i's processes into *list (malloc'd, n->process_size each); their number, or -EIO. */
static int device_processes(struct nvml *n, unsigned int i, void **list)
{
	nvml_device dev;
	unsigned int count = 16;
	nvml_return rc;

	*list = NULL;
	if (n->handle(i, &dev) != NVML_SUCCESS)
		return -EIO;
	/* the list may grow between the sizing call and the next: a few tries */
	for (int tries = 0; tries < 4; tries++) {
		void *bigger = realloc(*list, (size_t)count * n->process_size + 1);

		if (!bigger)
			break;
		*list = bigger;
		rc = n->processes(dev, &count, *list);
		if (rc == NVML_SUCCESS)
			return (int)count;
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
		count += 16;
	}
	free(*list);
	*list = NULL;
	return -EIO;
}

int nvml__process_bytes(struct nvml *n, pid_t pid, uint64_t *bytes)
{
	unsigned int devices;
	bool listed = false, unknown = false;

	*bytes = 0;
	if (n->count(&devices) != NVML_SUCCESS)
		return -EIO;
	for (unsigned int i = 0; i < devices; i++) {
		void *list;
		int k = device_processes(n, i, &list);

		if (k < 0)
			return k;
		for (int j = 0; j < k; j++) {
			const char *p = (const char *)list + (size_t)j * n->process_size;
			struct nvml_process_v1 head; /* pid and usedGpuMemory lead both layouts */

			memcpy(&head, p, sizeof(head));
			if (head.pid != (unsigned int)pid)
				continue;
			listed = true;
			if (head.used_gpu_memory == NVML_VALUE_NOT_AVAILABLE)
				unknown = true;
			else
				*bytes += head.used_gpu_memory;
		}
		free(list);
	}
	if (!listed)
		return -ENOENT;
	return unknown ? -ENODATA : 0;
}

json_t *nvml__devices(struct nvml *n)
{
	unsigned int devices;
	json_t *list;

	if (n->count(&devices) != NVML_SUCCESS)
		return NULL;
	list = json_array();
	for (unsigned int i = 0; i < devices; i++) {
		char name[NVML_DEVICE_NAME_BUFFER] = "";
		struct nvml_memory mem;
		nvml_device dev;

		if (n->handle(i, &dev) != NVML_SUCCESS ||
		    n->name(dev, name, sizeof(name)) != NVML_SUCCESS ||
		    n->memory(dev, &mem) != NVML_SUCCESS) {
			json_decref(list);
			return NULL;
		}
		name[sizeof(name) - 1] = '\0';
		json_array_append_new(list, json_pack("{s:I, s:s, s:I}", UM_HW_GPU_INDEX, (json_int_t)i,
						      UM_HW_GPU_NAME, name, UM_HW_GPU_MEMORY_TOTAL_BYTES,
						      (json_int_t)mem.total));
	}
	return list;
}

void nvml__close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}

void gpu_nvml_read(struct nvml *n, pid_t pid, bool traced, uint64_t api_live,
		   struct gpu_nvml_unit *out)
{
	uint64_t used;
	int err;

	out->context_bytes = 0;
	if (!n) {
		out->state = GPU_NVML_ABSENT;
		return;
	}
	if (!traced) {
		out->state = GPU_NVML_NOTHING_TRACED;
		return;
	}
	err = nvml__process_bytes(n, pid, &used);
	if (err == -ENOENT)
		out->state = GPU_NVML_NOT_LISTED;
	else if (err == -ENODATA)
		out->state = GPU_NVML_NO_FIGURE;
	else if (err)
		out->state = GPU_NVML_FAILED;
	else if (used < api_live)
		out->state = GPU_NVML_BELOW_TRACED;
	else {
		out->state = GPU_NVML_READ;
		out->context_bytes = used - api_live;
	}
}
