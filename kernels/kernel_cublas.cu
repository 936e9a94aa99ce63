/* kernel_cublas — cuBLAS as the reference "kernel", row-major: DGEMM,
 * SGEMM, and ZGEMM / CGEMM for the complex types.
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

/* The complex ones (no conjugation; (re, im) pairs are cuBLAS's complex
 * types, which the pointers' alignment must fit: cublas_gemm_cx checks). */
cublasStatus_t gemm_call_cx(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const double *A,
                            int64_t lda, const double *B, int64_t ldb, int beta, double *C,
                            int64_t ldc)
{
    const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0),
                          b = make_cuDoubleComplex(beta ? 1.0 : 0.0, 0.0);
    return cublasZgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const cuDoubleComplex *)B,
                          ldb, (const cuDoubleComplex *)A, lda, &b, (cuDoubleComplex *)C, ldc);
}

cublasStatus_t gemm_call_cx(cublasHandle_t h, int64_t m, int64_t n, int64_t k, const float *A,
                            int64_t lda, const float *B, int64_t ldb, int beta, float *C,
                            int64_t ldc)
{
    const cuComplex one = make_cuComplex(1.0f, 0.0f), b = make_cuComplex(beta ? 1.0f : 0.0f, 0.0f);
    return cublasCgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const cuComplex *)B, ldb,
                          (const cuComplex *)A, lda, &b, (cuComplex *)C, ldc);
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

/* Complex: a pointer must be aligned to the whole complex element (16
 * bytes for complex double, 8 for complex float), as cuBLAS's complex
 * types are; another is refused (cudaErrorInvalidValue) before cuBLAS
 * could fault on it. */
template <typename T> int cublas_gemm_cx(DD_LAUNCHER_ARGS(T))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue_cx<T>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    const uintptr_t align = 2 * sizeof(T);
    if ((uintptr_t)A % align || (uintptr_t)B % align || (uintptr_t)C % align)
        return cudaErrorInvalidValue;
    cublasHandle_t h;
    if ((e = handle_for_current_device(&h)) != cudaSuccess)
        return e;
    if ((e = dd::from_cublas(cublasSetStream(h, s))) != cudaSuccess)
        return e;
    return dd::from_cublas(gemm_call_cx(h, m, n, k, A, lda, B, ldb, beta, C, ldc));
}

} // namespace

DD_LAUNCHER(dd_cublas_f64, double, cublas_gemm<double>)
DD_LAUNCHER(dd_cublas_f32, float, cublas_gemm<float>)
DD_LAUNCHER(dd_cublas_z, double, cublas_gemm_cx<double>)
DD_LAUNCHER(dd_cublas_c, float, cublas_gemm_cx<float>)

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
