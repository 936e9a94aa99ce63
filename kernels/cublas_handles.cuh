/* cublas_handles.cuh — what the cuBLAS-based kernels share (kernel_cublas,
 * kernel_cublas_emu, ozaki2): a cuBLAS status as the CUDA error code the
 * launchers return, and one handle per device, made on first use on the
 * current device (with the caller's settings) and destroyed at shutdown. */
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace dd
{

inline int from_cublas(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_SUCCESS:
        return cudaSuccess;
    case CUBLAS_STATUS_ALLOC_FAILED:
        return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE:
        return cudaErrorInvalidValue;
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return cudaErrorInvalidDeviceFunction;
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return cudaErrorNotSupported;
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return cudaErrorLaunchFailure;
    default:
        return cudaErrorUnknown;
    }
}

constexpr int CUBLAS_MAX_DEVICES = 64;

struct cublas_handles {
    cublasHandle_t h[CUBLAS_MAX_DEVICES];

    /* The current device's handle; made on first use, then setup(handle)
     * (returning a cuBLAS status) applies the kernel's settings. */
    template <typename Setup> int get(cublasHandle_t *out, Setup setup)
    {
        int dev = 0;
        cudaError_t ce = cudaGetDevice(&dev);
        if (ce != cudaSuccess)
            return ce;
        if (dev < 0 || dev >= CUBLAS_MAX_DEVICES)
            return cudaErrorInvalidDevice;
        if (!h[dev]) {
            cublasHandle_t nh;
            int e = from_cublas(cublasCreate(&nh));
            if (e != cudaSuccess)
                return e;
            if ((e = from_cublas(setup(nh))) != cudaSuccess) {
                cublasDestroy(nh);
                return e;
            }
            h[dev] = nh;
        }
        *out = h[dev];
        return cudaSuccess;
    }

    /* Every device's handle destroyed, each on its own device; the caller's
     * current device restored. */
    void shutdown()
    {
        int cur = -1;
        if (cudaGetDevice(&cur) != cudaSuccess)
            cur = -1;
        for (int d = 0; d < CUBLAS_MAX_DEVICES; ++d) {
            if (!h[d])
                continue;
            if (cudaSetDevice(d) == cudaSuccess)
                cublasDestroy(h[d]);
            h[d] = NULL;
        }
        if (cur >= 0)
            (void)cudaSetDevice(cur);
    }
};

} // namespace dd
