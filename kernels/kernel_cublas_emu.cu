/* kernel_cublas_emu — cuBLAS 13's own FP64 emulation on the integer tensor
 * cores, as a reference row for ozaki2: cublasGemmEx with
 * CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT on a handle whose emulation
 * strategy is EAGER (the default, PERFORMANT, runs native FP64 where cuBLAS
 * expects no gain, which on an H200 is everywhere).  Mantissa control is
 * cuBLAS's default (dynamic: as many bits as the inputs need for FP64
 * accuracy).  Row-major as kernel_cublas.cu: the operands swap. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gemm_common.cuh"
#include "ladder.h"

namespace
{

constexpr int MAX_DEVICES = 64;
cublasHandle_t handles[MAX_DEVICES];

int status_to_cuda(cublasStatus_t st)
{
    return st == CUBLAS_STATUS_SUCCESS          ? (int)cudaSuccess
           : st == CUBLAS_STATUS_NOT_SUPPORTED ? (int)cudaErrorNotSupported
           : st == CUBLAS_STATUS_INVALID_VALUE ? (int)cudaErrorInvalidValue
           : st == CUBLAS_STATUS_ALLOC_FAILED  ? (int)cudaErrorMemoryAllocation
                                               : (int)cudaErrorUnknown;
}

int emu_handle(cublasHandle_t *h)
{
    int dev = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess)
        return ce;
    if (dev < 0 || dev >= MAX_DEVICES)
        return cudaErrorInvalidDevice;
    if (!handles[dev]) {
        cublasHandle_t nh;
        int e = status_to_cuda(cublasCreate(&nh));
        if (e)
            return e;
        if ((e = status_to_cuda(cublasSetMathMode(nh, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH))) ||
            (e = status_to_cuda(cublasSetEmulationStrategy(nh, CUBLAS_EMULATION_STRATEGY_EAGER)))) {
            cublasDestroy(nh);
            return e;
        }
        handles[dev] = nh;
    }
    *h = handles[dev];
    return cudaSuccess;
}

int emu_gemm(DD_LAUNCHER_ARGS(double))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    cublasHandle_t h;
    if ((e = emu_handle(&h)) || (e = status_to_cuda(cublasSetStream(h, s))))
        return e;
    const double one = 1.0, b = beta ? 1.0 : 0.0;
    return status_to_cuda(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, CUDA_R_64F,
                                          ldb, A, CUDA_R_64F, lda, &b, C, CUDA_R_64F, ldc,
                                          CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
                                          CUBLAS_GEMM_DEFAULT));
}

} // namespace

DD_LAUNCHER(dd_emu_cublas_dgemm, double, emu_gemm)

extern "C" void dd_emu_cublas_shutdown(void)
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
