/* kernel_cublas_emu — cuBLAS 13's own FP64 emulation on the integer tensor
 * cores, as a reference row for ozaki2: cublasGemmEx with
 * CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT on a handle whose emulation
 * strategy is EAGER (the default, PERFORMANT, runs native FP64 where cuBLAS
 * expects no gain, which on an H200 is everywhere).  Mantissa control is
 * cuBLAS's default (dynamic: as many bits as the inputs need for FP64
 * accuracy).  Row-major as kernel_cublas.cu: the operands swap. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cublas_handles.cuh"
#include "gemm_common.cuh"
#include "launchers.h"

namespace
{

dd::cublas_handles handles;

int emu_handle(cublasHandle_t *h)
{
    return handles.get(h, [](cublasHandle_t nh) {
        cublasStatus_t st = cublasSetMathMode(nh, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH);
        return st != CUBLAS_STATUS_SUCCESS
                   ? st
                   : cublasSetEmulationStrategy(nh, CUBLAS_EMULATION_STRATEGY_EAGER);
    });
}

int emu_gemm(DD_LAUNCHER_ARGS(double))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    cublasHandle_t h;
    if ((e = emu_handle(&h)) || (e = dd::from_cublas(cublasSetStream(h, s))))
        return e;
    const double one = 1.0, b = beta ? 1.0 : 0.0;
    return dd::from_cublas(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, CUDA_R_64F,
                                          ldb, A, CUDA_R_64F, lda, &b, C, CUDA_R_64F, ldc,
                                          CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
                                          CUBLAS_GEMM_DEFAULT));
}

} // namespace

DD_LAUNCHER(dd_emu_cublas, double, emu_gemm)

extern "C" void dd_emu_cublas_shutdown(void)
{
    handles.shutdown();
}
