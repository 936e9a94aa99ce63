/* kernel_cublas — cuBLAS as the reference "kernel", row-major.
 *
 * cuBLAS is column-major.  A row-major M×N matrix with leading dimension ld
 * is, read column-major, its N×M transpose with the same ld.  So row-major
 * C = A·B is column-major C^T = B^T·A^T: call gemm(N, N) with the operands
 * swapped and m and n exchanged; no data moves.
 *
 * One handle per device, created on first use on that device (the handle
 * belongs to the device current at creation), its stream set on every call
 * (SUMMA alternates streams).  FP32 stays exact FP32: the handle's math
 * mode is CUBLAS_DEFAULT_MATH, which allows neither TF32 tensor-core math
 * nor the FP32/FP64 emulation modes of cuBLAS 13. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "gemm_common.cuh"
#include "ladder.h"

namespace
{

constexpr int MAX_DEVICES = 64;
cublasHandle_t handles[MAX_DEVICES];

/* cuBLAS status -> a CUDA error code for the int the launchers return. */
int from_cublas(cublasStatus_t st)
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

int handle_for_current_device(cublasHandle_t *h)
{
    int dev = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess)
        return ce;
    if (dev < 0 || dev >= MAX_DEVICES)
        return cudaErrorInvalidDevice;
    if (!handles[dev]) {
        cublasHandle_t nh;
        int e = from_cublas(cublasCreate(&nh));
        if (e != cudaSuccess)
            return e;
        e = from_cublas(cublasSetMathMode(nh, CUBLAS_DEFAULT_MATH));
        if (e != cudaSuccess) {
            cublasDestroy(nh);
            return e;
        }
        handles[dev] = nh;
    }
    *h = handles[dev];
    return cudaSuccess;
}

} // namespace

namespace
{

/* The 64-bit API: lda·M may pass 2^31 elements.  Row-major C = A·B is
 * column-major C^T = B^T·A^T, so the operands swap. */
cublasStatus_t gemm_call(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const double *A,
                         int64_t lda, const double *B, int64_t ldb, int beta, double *C,
                         int64_t ldc)
{
    const double one = 1.0, b = beta ? 1.0 : 0.0;
    return cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, ldb, A, lda, &b, C, ldc);
}

cublasStatus_t gemm_call(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const float *A,
                         int64_t lda, const float *B, int64_t ldb, int beta, float *C, int64_t ldc)
{
    const float one = 1.0f, b = beta ? 1.0f : 0.0f;
    return cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, ldb, A, lda, &b, C, ldc);
}

template <typename T> int cublas_gemm(DD_LAUNCHER_ARGS(T))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<T>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    cublasHandle_t h;
    if ((e = handle_for_current_device(&h)) != cudaSuccess)
        return e;
    if ((e = from_cublas(cublasSetStream(h, s))) != cudaSuccess)
        return e;
    return from_cublas(gemm_call(h, m, n, k, A, lda, B, ldb, beta, C, ldc));
}

} // namespace

DD_LAUNCHER(dd_cublas_dgemm, double, cublas_gemm<double>)
DD_LAUNCHER(dd_cublas_sgemm, float, cublas_gemm<float>)

/* Destroys the handles of every device that has one; each on its own
 * device, restoring the caller's current device afterwards. */
extern "C" void kernel_cublas_shutdown(void)
{
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        cur = -1;
    for (int d = 0; d < MAX_DEVICES; ++d) {
        if (!handles[d])
            continue;
        if (cudaSetDevice(d) == cudaSuccess)
            cublasDestroy(handles[d]);
        handles[d] = NULL;
    }
    if (cur >= 0)
        (void)cudaSetDevice(cur);
}

extern "C" const char *kernel_cublas_version(void)
{
    static char buf[32];
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
        return "unknown";
    snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
    return buf;
}
