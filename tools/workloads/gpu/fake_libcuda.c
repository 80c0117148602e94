// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A fake libcuda.so.1 for the tests (no GPU in CI): the real driver's exported names, argument
 * lists and SONAME, each export a trampoline that jumps through a table to a private
 * implementation, as the real library's exports do (a uprobe sits on the trampoline), and
 * cuGetProcAddress[_v2] returning the exported addresses (the versioned name for a base name,
 * the _ptsz one under the per-thread-stream flag). Device memory is bookkeeping: addresses from
 * a counter, sizes in a table; an allocation past FAKE_CUDA_LIMIT_BYTES live bytes fails with
 * CUDA_ERROR_OUT_OF_MEMORY, a free of an unknown address with CUDA_ERROR_INVALID_VALUE.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fake_cuda.h"

#define LIVE_MAX 1024
/* the driver's pitch alignment on current GPUs */
#define PITCH_ALIGN 512

static struct {
	pthread_mutex_t lock;
	uint64_t next_address, next_handle, live_bytes;
	struct {
		uint64_t id, bytes;
		int handle; /* a VMM handle, not an address */
	} live[LIVE_MAX];
} state = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_address = 0x7f0000000000ULL,
	    .next_handle = 1 };
static __thread CUcontext current;

static uint64_t limit_bytes(void)
{
	const char *limit = getenv("FAKE_CUDA_LIMIT_BYTES");

	return limit ? strtoull(limit, NULL, 10) : UINT64_MAX;
}

/* The bytes held, where the fake NVML reads them (fake_cuda.h); under state.lock. */
static void publish(void)
{
	const char *dir = getenv(FAKE_CUDA_STATE_ENV);
	char path[4096], tmp[4096 + 8];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%llu\n", (unsigned long long)state.live_bytes);
	/* whole or not at all: the reader never sees a half-written figure */
	if (fclose(f) == 0)
		rename(tmp, path);
}

static CUresult take(uint64_t *out, uint64_t bytes, int handle)
{
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;

	pthread_mutex_lock(&state.lock);
	for (int i = 0; i < LIVE_MAX && bytes && state.live_bytes + bytes <= limit_bytes(); i++) {
		if (state.live[i].id)
			continue;
		*out = handle ? state.next_handle++ : state.next_address;
		if (!handle)
			state.next_address += (bytes + 0xfffff) & ~0xfffffULL; /* 1 MiB granules */
		state.live[i].id = *out;
		state.live[i].bytes = bytes;
		state.live[i].handle = handle;
		state.live_bytes += bytes;
		publish();
		rc = CUDA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&state.lock);
	return rc;
}

static CUresult give_back(uint64_t id, int handle)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&state.lock);
	for (int i = 0; i < LIVE_MAX; i++)
		if (id && state.live[i].id == id && state.live[i].handle == handle) {
			state.live_bytes -= state.live[i].bytes;
			publish();
			state.live[i].id = 0;
			rc = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&state.lock);
	return rc;
}

static CUresult impl_init(unsigned flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	/* listed by the fake NVML from here on, as a process with a context is by the real one */
	pthread_mutex_lock(&state.lock);
	publish();
	pthread_mutex_unlock(&state.lock);
	return CUDA_SUCCESS;
}

static CUresult impl_ctx_retain(CUcontext *ctx, CUdevice dev)
{
	if (dev < 0 || dev >= 8)
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)(uintptr_t)(0xc0de0000 + 16 * dev);
	return CUDA_SUCCESS;
}

static CUresult impl_ctx_create(CUcontext *ctx, unsigned flags, CUdevice dev)
{
	CUresult rc = flags ? CUDA_ERROR_INVALID_VALUE : impl_ctx_retain(ctx, dev);

	if (rc == CUDA_SUCCESS) {
		*ctx = (CUcontext)((uintptr_t)*ctx + 8); /* not the primary one */
		current = *ctx;
	}
	return rc;
}

static CUresult impl_ctx_set(CUcontext ctx)
{
	current = ctx;
	return CUDA_SUCCESS;
}

static CUresult impl_alloc(CUdeviceptr *dptr, size_t bytes)
{
	return take(dptr, bytes, 0);
}

static CUresult impl_free(CUdeviceptr dptr)
{
	return give_back(dptr, 0);
}

static CUresult impl_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			   unsigned element_bytes)
{
	size_t row = (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
	CUresult rc;

	if (element_bytes != 4 && element_bytes != 8 && element_bytes != 16)
		return CUDA_ERROR_INVALID_VALUE;
	rc = take(dptr, row * height, 0);
	if (rc == CUDA_SUCCESS)
		*pitch = row;
	return rc;
}

static CUresult impl_managed(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
	return flags ? take(dptr, bytes, 0) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult impl_alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	(void)stream;
	return take(dptr, bytes, 0);
}

static CUresult impl_alloc_pool(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				CUstream stream)
{
	(void)stream;
	return pool ? take(dptr, bytes, 0) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult impl_free_async(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return give_back(dptr, 0);
}

static CUresult impl_create(CUmemGenericAllocationHandle *handle, size_t bytes,
			    const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!prop || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return take(handle, bytes, 1);
}

static CUresult impl_release(CUmemGenericAllocationHandle handle)
{
	return give_back(handle, 1);
}

static CUresult impl_get_proc(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
			      int *status);

/*
 * The table the trampolines jump through. Volatile: each export loads its target and jumps,
 * instead of the compiler folding the implementation into the export.
 */
static struct {
	CUresult (*volatile init)(unsigned);
	CUresult (*volatile ctx_retain)(CUcontext *, CUdevice);
	CUresult (*volatile ctx_create)(CUcontext *, unsigned, CUdevice);
	CUresult (*volatile ctx_set)(CUcontext);
	CUresult (*volatile alloc)(CUdeviceptr *, size_t);
	CUresult (*volatile free)(CUdeviceptr);
	CUresult (*volatile pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
	CUresult (*volatile managed)(CUdeviceptr *, size_t, unsigned);
	CUresult (*volatile alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*volatile alloc_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*volatile free_async)(CUdeviceptr, CUstream);
	CUresult (*volatile create)(CUmemGenericAllocationHandle *, size_t,
				    const CUmemAllocationProp *, unsigned long long);
	CUresult (*volatile release)(CUmemGenericAllocationHandle);
	CUresult (*volatile get_proc)(const char *, void **, int, uint64_t, int *);
} table = {
	impl_init, impl_ctx_retain, impl_ctx_create, impl_ctx_set, impl_alloc, impl_free,
	impl_pitch, impl_managed, impl_alloc_async, impl_alloc_pool, impl_free_async, impl_create,
	impl_release, impl_get_proc,
};

#define EXPORT __attribute__((visibility("default"), noinline))

EXPORT CUresult cuInit(unsigned flags) { return table.init(flags); }
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { return table.ctx_retain(c, d); }
EXPORT CUresult cuCtxCreate_v2(CUcontext *c, unsigned f, CUdevice d) { return table.ctx_create(c, f, d); }
EXPORT CUresult cuCtxSetCurrent(CUcontext c) { return table.ctx_set(c); }
EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t n) { return table.alloc(p, n); }
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { return table.alloc(p, n); }
EXPORT CUresult cuMemFree(CUdeviceptr p) { return table.free(p); }
EXPORT CUresult cuMemFree_v2(CUdeviceptr p) { return table.free(p); }
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned e)
{
	return table.pitch(p, pitch, w, h, e);
}
EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned f) { return table.managed(p, n, f); }
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) { return table.alloc_async(p, n, s); }
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s) { return table.alloc_async(p, n, s); }
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool m, CUstream s)
{
	return table.alloc_pool(p, n, m, s);
}
EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool m, CUstream s)
{
	return table.alloc_pool(p, n, m, s);
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return table.free_async(p, s); }
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return table.free_async(p, s); }
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *p,
			    unsigned long long f)
{
	return table.create(h, n, p, f);
}
EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h) { return table.release(h); }
EXPORT CUresult cuGetProcAddress(const char *s, void **pfn, int v, uint64_t f)
{
	return table.get_proc(s, pfn, v, f, NULL);
}
EXPORT CUresult cuGetProcAddress_v2(const char *s, void **pfn, int v, uint64_t f, int *status)
{
	return table.get_proc(s, pfn, v, f, status);
}

/* What cuGetProcAddress gives for a name: the export itself (linked -Bsymbolic-functions, so
 * the address is the one dlsym gives), its _v2 for a base name, its _ptsz under the flag. */
static const struct {
	const char *name;
	void *address, *per_thread_stream;
} procs[] = {
	{ "cuInit", cuInit, NULL },
	{ "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, NULL },
	{ "cuCtxCreate", cuCtxCreate_v2, NULL },
	{ "cuCtxSetCurrent", cuCtxSetCurrent, NULL },
	{ "cuMemAlloc", cuMemAlloc_v2, NULL },
	{ "cuMemFree", cuMemFree_v2, NULL },
	{ "cuMemAllocPitch", cuMemAllocPitch_v2, NULL },
	{ "cuMemAllocManaged", cuMemAllocManaged, NULL },
	{ "cuMemAllocAsync", cuMemAllocAsync, cuMemAllocAsync_ptsz },
	{ "cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz },
	{ "cuMemFreeAsync", cuMemFreeAsync, cuMemFreeAsync_ptsz },
	{ "cuMemCreate", cuMemCreate, NULL },
	{ "cuMemRelease", cuMemRelease, NULL },
	{ "cuGetProcAddress", cuGetProcAddress_v2, NULL },
};

static CUresult impl_get_proc(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
			      int *status)
{
	if (!symbol || !pfn || cuda_version < 11030)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (strcmp(symbol, procs[i].name) == 0) {
			*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
					       procs[i].per_thread_stream ?
				       procs[i].per_thread_stream :
				       procs[i].address;
			if (status)
				*status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
			return CUDA_SUCCESS;
		}
	*pfn = NULL;
	if (status)
		*status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
	return CUDA_ERROR_NOT_FOUND;
}
