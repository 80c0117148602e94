// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpu_driver MODE: calls the CUDA driver API's allocation entry points (of the fake
 * libcuda.so.1 in the tests) inside units, fit_unit(i) each, in the schedule MODE names; the
 * device bytes each unit holds at most are the test's expected figures. Built twice: linked
 * against libcuda.so.1 (calls through the PLT, or through dlsym or cuGetProcAddress pointers),
 * and as gpu_driver_late (GPU_LATE_DLOPEN), which maps the library only after tracing began.
 *
 * MODE: calls (MODE=plt|dlsym|procaddr: 6, 8 and 4 MiB units), threads (10 MiB over four
 * threads), failed (an allocation past the fake's limit: 3 MiB), unknown_free (2 MiB), before
 * (5 MiB held before the unit, freed in it; then 0), vmm (2 MiB on device 1; a host-located
 * 4 MiB not device memory), pitch (1024 x 300), managed (1 MiB, managed 3 MiB apart), fork
 * (1 MiB in the parent and 2 in its child: 3), devices (1 MiB on device 0, 2 on device 1),
 * nocontext (1 MiB of a thread with no current context: device unknown), attach GO (the plt
 * schedule once the file GO exists: the test makes it when unitmeter has attached),
 * nodevice (the NVIDIA driver's real libcuda.so.1 on a machine with no GPU, gpu_driver_late
 * only: one unit whose context, allocation and free all fail; their codes are printed).
 * Prints {"mode": MODE, "units": N, "ptsz": bool} (ptsz: cuGetProcAddress gave the _ptsz
 * exports under the per-thread-stream flag, as dlsym names them).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fake_cuda.h"

#define MIB (1024ULL * 1024)

/* The entry points, however they were reached. */
static struct {
	CUresult (*init)(unsigned);
	CUresult (*ctx_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*alloc_unversioned)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
	CUresult (*free_unversioned)(CUdeviceptr);
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*alloc_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			   unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
} cu;

static const char *mode;
static bool ptsz;
static CUcontext ctx0;

#define CHECK(call)                                                                      \
	do {                                                                             \
		CUresult rc_ = (call);                                                   \
		if (rc_ != CUDA_SUCCESS) {                                               \
			fprintf(stderr, "gpu_driver: %s: %d\n", #call, rc_);             \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static void *must_dlsym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "gpu_driver: %s\n", dlerror());
		exit(1);
	}
	return p;
}

#define BIND(field, lib, name) (*(void **)&cu.field = must_dlsym(lib, name))

static void bind_dlsym(void *lib)
{
	BIND(init, lib, "cuInit");
	BIND(ctx_retain, lib, "cuDevicePrimaryCtxRetain");
	BIND(ctx_set, lib, "cuCtxSetCurrent");
	BIND(alloc, lib, "cuMemAlloc_v2");
	BIND(alloc_unversioned, lib, "cuMemAlloc");
	BIND(free, lib, "cuMemFree_v2");
	BIND(free_unversioned, lib, "cuMemFree");
	BIND(pitch, lib, "cuMemAllocPitch_v2");
	BIND(managed, lib, "cuMemAllocManaged");
	BIND(alloc_async, lib, "cuMemAllocAsync");
	BIND(alloc_pool, lib, "cuMemAllocFromPoolAsync");
	BIND(free_async, lib, "cuMemFreeAsync");
	BIND(create, lib, "cuMemCreate");
	BIND(release, lib, "cuMemRelease");
}

/* As cudart 12 does: the base names through cuGetProcAddress_v2, per-thread default stream. */
static void bind_procaddr(void *lib)
{
	CUresult (*get)(const char *, void **, int, uint64_t, int *);
	int status;

	bind_dlsym(lib); /* the unversioned names have no cuGetProcAddress of their own */
	*(void **)&get = must_dlsym(lib, "cuGetProcAddress_v2");
#define PROC(field, name)                                                                \
	CHECK(get(name, (void **)&cu.field, 12000,                                       \
		  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status))
	PROC(alloc, "cuMemAlloc");
	PROC(free, "cuMemFree");
	PROC(alloc_async, "cuMemAllocAsync");
	PROC(alloc_pool, "cuMemAllocFromPoolAsync");
	PROC(free_async, "cuMemFreeAsync");
	PROC(pitch, "cuMemAllocPitch");
#undef PROC
	ptsz = (void *)cu.alloc_async == dlsym(lib, "cuMemAllocAsync_ptsz") &&
	       (void *)cu.alloc_pool == dlsym(lib, "cuMemAllocFromPoolAsync_ptsz") &&
	       (void *)cu.free_async == dlsym(lib, "cuMemFreeAsync_ptsz") &&
	       (void *)cu.alloc == dlsym(lib, "cuMemAlloc_v2");
}

#ifndef GPU_LATE_DLOPEN
static void bind_plt(void)
{
	cu.init = cuInit;
	cu.ctx_retain = cuDevicePrimaryCtxRetain;
	cu.ctx_set = cuCtxSetCurrent;
	cu.alloc = cuMemAlloc_v2;
	cu.alloc_unversioned = cuMemAlloc;
	cu.free = cuMemFree_v2;
	cu.free_unversioned = cuMemFree;
	cu.pitch = cuMemAllocPitch_v2;
	cu.managed = cuMemAllocManaged;
	cu.alloc_async = cuMemAllocAsync;
	cu.alloc_pool = cuMemAllocFromPoolAsync;
	cu.free_async = cuMemFreeAsync;
	cu.create = cuMemCreate;
	cu.release = cuMemRelease;
}
#endif

static CUdeviceptr alloc(size_t bytes)
{
	CUdeviceptr p;

	CHECK(cu.alloc(&p, bytes));
	return p;
}

static pthread_barrier_t all_hold;

static void *thread_holds(void *arg)
{
	size_t mib = (size_t)arg;
	CUdeviceptr p;

	CHECK(cu.ctx_set(ctx0)); /* a thread's current context is its own, as cudart sets it */
	p = alloc(mib * MIB);
	pthread_barrier_wait(&all_hold);
	CHECK(cu.free(p));
	return NULL;
}

static CUdeviceptr before_unit;
/* nodevice: cuInit's code, then the unit's three calls' */
static CUresult nodevice_init_rc, nodevice_rc[3];

/* The unit function the tests trace; one schedule step per call. */
__attribute__((noinline)) int fit_unit(int step)
{
	CUdeviceptr a, b, c;
	CUmemGenericAllocationHandle h1, h2;
	CUmemAllocationProp prop = { .type = 1 };
	CUmemoryPool pool = (CUmemoryPool)(uintptr_t)1;
	pthread_t threads[4];
	size_t pitch;
	CUcontext ctx1;
	pid_t child;
	int status;

	if (!strcmp(mode, "plt") || !strcmp(mode, "dlsym") || !strcmp(mode, "procaddr")) {
		if (step == 0) { /* 4 + 2 held at once: 6 MiB */
			a = alloc(4 * MIB);
			b = alloc(2 * MIB);
			CHECK(cu.free(a));
			c = alloc(1 * MIB);
			CHECK(cu.free(b));
			CHECK(cu.free(c));
		} else if (step == 1) { /* the unversioned names: 8 MiB */
			CHECK(cu.alloc_unversioned(&a, 8 * MIB));
			CHECK(cu.free_unversioned(a));
		} else { /* stream-ordered: 3 + 1 MiB */
			CHECK(cu.alloc_async(&a, 3 * MIB, NULL));
			CHECK(cu.alloc_pool(&b, 1 * MIB, pool, NULL));
			CHECK(cu.free_async(a, NULL));
			CHECK(cu.free_async(b, NULL));
		}
	} else if (!strcmp(mode, "threads")) {
		pthread_barrier_init(&all_hold, NULL, 4);
		for (size_t i = 0; i < 4; i++)
			pthread_create(&threads[i], NULL, thread_holds, (void *)(i + 1));
		for (int i = 0; i < 4; i++)
			pthread_join(threads[i], NULL);
		pthread_barrier_destroy(&all_hold);
	} else if (!strcmp(mode, "failed")) {
		setenv("FAKE_CUDA_LIMIT_BYTES", "33554432", 1);
		if (cu.alloc(&a, 64 * MIB) != CUDA_ERROR_OUT_OF_MEMORY)
			exit(1);
		a = alloc(3 * MIB);
		CHECK(cu.free(a));
	} else if (!strcmp(mode, "unknown_free")) {
		a = alloc(2 * MIB);
		if (cu.free(0xdead00000ULL) != CUDA_ERROR_INVALID_VALUE)
			exit(1);
		CHECK(cu.free(a));
	} else if (!strcmp(mode, "before")) {
		if (step == 0) {
			CHECK(cu.free(before_unit));
			a = alloc(1 * MIB);
			CHECK(cu.free(a));
		}
	} else if (!strcmp(mode, "vmm")) {
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = 1;
		CHECK(cu.create(&h1, 2 * MIB, &prop, 0));
		prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
		prop.location.id = 0;
		CHECK(cu.create(&h2, 4 * MIB, &prop, 0));
		CHECK(cu.release(h1));
		CHECK(cu.release(h2));
	} else if (!strcmp(mode, "pitch")) {
		CHECK(cu.pitch(&a, &pitch, 1000, 300, 4));
		if (pitch != 1024)
			exit(1);
		CHECK(cu.free(a));
	} else if (!strcmp(mode, "managed")) {
		CHECK(cu.managed(&a, 3 * MIB, 1 /* CU_MEM_ATTACH_GLOBAL */));
		b = alloc(1 * MIB);
		CHECK(cu.free(a));
		CHECK(cu.free(b));
	} else if (!strcmp(mode, "fork")) {
		a = alloc(1 * MIB);
		child = fork();
		if (child == 0) {
			/* a CUDA context does not survive fork: the child makes its own current */
			CHECK(cu.ctx_retain(&ctx1, 0));
			CHECK(cu.ctx_set(ctx1));
			b = alloc(2 * MIB);
			CHECK(cu.free(b));
			_exit(0);
		}
		if (waitpid(child, &status, 0) != child || status)
			exit(1);
		CHECK(cu.free(a));
	} else if (!strcmp(mode, "devices")) {
		CHECK(cu.ctx_retain(&ctx1, 1));
		CHECK(cu.ctx_set(ctx0));
		a = alloc(1 * MIB);
		CHECK(cu.ctx_set(ctx1));
		b = alloc(2 * MIB);
		CHECK(cu.free(a));
		CHECK(cu.free(b));
		CHECK(cu.ctx_set(ctx0));
	} else if (!strcmp(mode, "held")) {
		/* held past the units' ends: 2, then 5 MiB at the ends of the first two */
		static CUdeviceptr kept[2];

		if (step < 2)
			kept[step] = alloc((size_t)(2 + step) * MIB);
		else {
			CHECK(cu.free(kept[0]));
			CHECK(cu.free(kept[1]));
		}
	} else if (!strcmp(mode, "nocontext")) {
		a = alloc(1 * MIB);
		CHECK(cu.free(a));
	} else if (!strcmp(mode, "nodevice")) {
		/* what cudart's first allocation calls: three probed calls, each refused */
		a = 0;
		nodevice_rc[0] = cu.ctx_retain(&ctx1, 0);
		nodevice_rc[1] = cu.alloc(&a, 1 * MIB);
		nodevice_rc[2] = cu.free(a);
	}
	return step;
}

static int units_of(const char *m)
{
	if (!strcmp(m, "plt") || !strcmp(m, "dlsym") || !strcmp(m, "procaddr") || !strcmp(m, "held"))
		return 3;
	return !strcmp(m, "before") ? 2 : 1;
}

int main(int argc, char **argv)
{
	void *lib = NULL;
	int units;

	if (argc < 2)
		return 2;
	mode = argv[1];
	if (!strcmp(mode, "attach")) {
		/* the test creates GO once unitmeter says its probes are attached: a probe seen in
		 * this text could be another run's on the same binary (CI's parallel tests) */
		if (argc < 3)
			return 2;
		for (int waited = 0; access(argv[2], F_OK); waited++) {
			if (waited == 6000) /* 60 s */
				return 3;
			usleep(10000);
		}
		mode = "plt";
	}
#ifdef GPU_LATE_DLOPEN
	usleep(50000); /* tracing has begun: the library is mapped only now */
#else
	if (!strcmp(mode, "plt"))
		bind_plt();
	else
#endif
	{
		lib = dlopen("libcuda.so.1", RTLD_NOW);
		if (!lib) {
			fprintf(stderr, "gpu_driver: %s\n", dlerror());
			return 1;
		}
		if (!strcmp(mode, "procaddr"))
			bind_procaddr(lib);
		else
			bind_dlsym(lib);
	}
	if (!strcmp(mode, "nodevice")) {
		nodevice_init_rc = cu.init(0);
		fit_unit(0);
		printf("{\"mode\": \"%s\", \"units\": 1, \"init\": %d, \"ctx_retain\": %d, "
		       "\"alloc\": %d, \"free\": %d}\n",
		       mode, nodevice_init_rc, nodevice_rc[0], nodevice_rc[1], nodevice_rc[2]);
		return 0;
	}
	CHECK(cu.init(0));
	/* as cudart's first call on a thread does: the primary context made current */
	CHECK(cu.ctx_retain(&ctx0, 0));
	if (strcmp(mode, "nocontext"))
		CHECK(cu.ctx_set(ctx0));
	if (!strcmp(mode, "before"))
		before_unit = alloc(5 * MIB);
	units = units_of(mode);
	for (int i = 0; i < units; i++) {
		fit_unit(i);
		/* GPU_DRIVER_PAUSE_MS: still, and alive, while a unit's end is read (NVML's test) */
		if (getenv("GPU_DRIVER_PAUSE_MS"))
			usleep(1000 * (useconds_t)atoi(getenv("GPU_DRIVER_PAUSE_MS")));
	}
	printf("{\"mode\": \"%s\", \"units\": %d, \"ptsz\": %s}\n", mode, units,
	       ptsz ? "true" : "false");
	return 0;
}
