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

#include "cublas_handles.cuh"
#include "gemm_common.cuh"
#include "launchers.h"

namespace
{

dd::cublas_handles handles;

int handle_for_current_device(cublasHandle_t *h)
{
    return handles.get(h, [](cublasHandle_t nh) { return cublasSetMathMode(nh, CUBLAS_DEFAULT_MATH); });
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
    if ((e = dd::from_cublas(cublasSetStream(h, s))) != cudaSuccess)
        return e;
    return dd::from_cublas(gemm_call(h, m, n, k, A, lda, B, ldb, beta, C, ldc));
}

} // namespace

DD_LAUNCHER(dd_cublas_f64, double, cublas_gemm<double>)
DD_LAUNCHER(dd_cublas_f32, float, cublas_gemm<float>)

/* Destroys the handles of every device that has one; each on its own
 * device, restoring the caller's current device afterwards. */
extern "C" void kernel_cublas_shutdown(void)
{
    handles.shutdown();
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
