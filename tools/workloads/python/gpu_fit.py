# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Ground truth for device memory from Python: fit_gpu(mib) holds mib MiB of device memory of
the CUDA driver API that ctypes loads (libcuda.so.1, the fake one in the tests), as a framework
reaches it, then frees it. Prints {"sizes_mib": [...]} as the last line of stdout.
"""
import ctypes
import json
import sys

cuda = ctypes.CDLL("libcuda.so.1")


def check(rc):
    if rc != 0:
        raise RuntimeError("CUDA driver call failed: %d" % rc)


def fit_gpu(mib):
    """The unit: one allocation of mib MiB, held, then freed."""
    ptr = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(mib << 20)))
    check(cuda.cuMemFree_v2(ctypes.c_uint64(ptr.value)))


def main():
    sizes = [int(s) for s in sys.argv[1].split(",")]
    ctx = ctypes.c_void_p()
    check(cuda.cuInit(0))
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0))
    check(cuda.cuCtxSetCurrent(ctx))
    for mib in sizes:
        fit_gpu(mib)
    print(json.dumps({"sizes_mib": sizes}))


if __name__ == "__main__":
    main()
