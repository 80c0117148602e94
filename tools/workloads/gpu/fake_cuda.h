/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slice of the CUDA driver API (cuda.h) the fake libcuda.so.1 exports and the GPU workload
 * calls: the names, argument lists and result codes of the real driver, written from its
 * documentation (no NVIDIA header). CUmemAllocationProp keeps the real layout: location.type
 * at offset 8, which the probes read.
 */
#ifndef UM_FAKE_CUDA_H
#define UM_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

/*
 * The fake NVML's view (fake_nvml.c): with FAKE_CUDA_STATE_DIR set, the fake driver keeps the
 * bytes each process holds in DIR/<pid> (decimal), replaced whole at every change; the fake NVML
 * reports a live process's usedGpuMemory as those bytes plus a fixed context.
 */
#define FAKE_CUDA_STATE_ENV "FAKE_CUDA_STATE_DIR"
#define FAKE_NVML_CONTEXT_BYTES (300ULL << 20)
#define FAKE_NVML_NAME "Fake GPU 80GB"
#define FAKE_NVML_MEMORY_BYTES (80ULL << 30)

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef uint64_t CUmemGenericAllocationHandle;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_FOUND 500

/* CUmemLocationType */
#define CU_MEM_LOCATION_TYPE_DEVICE 1
#define CU_MEM_LOCATION_TYPE_HOST 2
/* CUdriverProcAddress_flags */
#define CU_GET_PROC_ADDRESS_DEFAULT 0
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1 << 1)

typedef struct {
	int type;                 /* CUmemAllocationType: 1, pinned */
	int requestedHandleTypes;
	struct {
		int type;         /* CUmemLocationType */
		int id;           /* the device, when type is DEVICE */
	} location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType, gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
_Static_assert(offsetof(CUmemAllocationProp, location) == 8, "cuda.h's layout");

CUresult cuInit(unsigned flags);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned element_bytes);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				      CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t bytes,
		     const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, uint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
			     int *status);

#endif
