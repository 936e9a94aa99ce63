/* ladder.cuh — the harness of the ladder's rungs (kernels/ladder/NN_name.cu):
 * what every rung's launcher needs and no rung's kernel is about.  The
 * kernel signature and DD_LAUNCHER come from launchers.h (the registry's
 * glue); here are the argument checks and trivial cases of kernel.h's
 * contract, the alignment test, the launch status, the shared-memory limit
 * and the launch of a plain tiled grid.  Everything a rung's kernel does is
 * in its own file: a rung includes nothing of the production kernels, and
 * they include nothing of the ladder.
 *
 * Conventions (see kernel.h): row-major, C(m×n, ldc) = A(m×k, lda)·B(k×n, ldb)
 * + beta·C with beta ∈ {0, 1}.  Dimensions fit in int (checked at launch);
 * element offsets are computed in int64_t because m·lda can pass 2^31. */
#ifndef DD_LADDER_CUH
#define DD_LADDER_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

#include "kernel.h"
#include "launchers.h"

namespace dd
{
namespace /* one copy per rung */
{

/* Checks the arguments and does the cases that need no kernel: m or n zero
 * (nothing), k zero (C = 0 for beta 0, nothing for beta 1).  Returns a CUDA
 * error code; *launch tells the caller whether a kernel is still needed. */
template <typename T>
static inline int gemm_prologue(int64_t m, int64_t n, int64_t k, const T *A, int64_t lda,
                                const T *B, int64_t ldb, int beta, T *C, int64_t ldc,
                                cudaStream_t s, bool *launch)
{
    *launch = false;
    if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return cudaErrorInvalidValue;
    if (beta != 0 && beta != 1)
        return cudaErrorInvalidValue;
    if (m == 0 || n == 0)
        return cudaSuccess;
    if (C == nullptr || ldc < n)
        return cudaErrorInvalidValue;
    if (k == 0) {
        if (beta)
            return cudaSuccess;
        /* All-zero bytes are +0.0 in IEEE 754, for float and double alike. */
        return cudaMemset2DAsync(C, (size_t)ldc * sizeof(T), 0, (size_t)n * sizeof(T), (size_t)m,
                                 s);
    }
    if (A == nullptr || B == nullptr || lda < k || ldb < n)
        return cudaErrorInvalidValue;
    *launch = true;
    return cudaSuccess;
}

/* A matrix can be read in 16-byte vectors when its base is 16-byte aligned
 * and every row starts on a 16-byte boundary (ld a multiple of the vector
 * width).  SUMMA hands out sub-blocks, so this is a run-time question. */
template <typename T> static inline bool vec16_ok(const void *p, int64_t ld)
{
    return ((uintptr_t)p % 16 == 0) && ((ld * (int64_t)sizeof(T)) % 16 == 0);
}

/* The launch result: launch-configuration errors surface here; errors of
 * the kernel itself surface at the caller's next synchronisation. */
static inline int launch_status(void)
{
    return (int)cudaGetLastError();
}

/* The launch of a tiled kernel: the shared argument checks and trivial
 * cases, then a grid of ceil(n/bn) × ceil(m/bm) blocks (x along C's
 * columns) of `block` threads on stream s.  All ladder kernels take the
 * same arguments. */
template <typename T>
using ladder_kernel_t = void (*)(int, int, int, const T *, int64_t, const T *, int64_t, int, T *,
                                 int64_t);

template <typename T>
static inline int launch_tiled(ladder_kernel_t<T> kernel, dim3 block, int bm, int bn, int64_t m,
                               int64_t n, int64_t k, const T *A, int64_t lda, const T *B,
                               int64_t ldb, int beta, T *C, int64_t ldc, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = gemm_prologue<T>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    dim3 grid((unsigned)((n + bn - 1) / bn), (unsigned)((m + bm - 1) / bm));
    if (grid.y > 65535)
        return cudaErrorInvalidConfiguration;
    kernel<<<grid, block, 0, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    return launch_status();
}

/* Raise a kernel's dynamic shared-memory limit once per device.  The flag
 * array is per instantiation; a race between two host threads only repeats
 * an idempotent call. */
template <typename Kernel>
static inline cudaError_t allow_smem(Kernel kern, int bytes, unsigned long long *done_mask)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    unsigned long long bit = (dev < 64) ? (1ull << dev) : 0;
    if (bit && (*done_mask & bit))
        return cudaSuccess;
    e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess)
        *done_mask |= bit;
    return e;
}

} // namespace
} // namespace dd

#endif
