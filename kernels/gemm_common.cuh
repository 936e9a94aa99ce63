/* gemm_common.cuh — what the production kernels share: argument checks and
 * trivial cases (real and complex), alignment tests, the launch status and
 * shared-memory limit, cp.async wrappers, the tile rasterisation and
 * guarded stores.
 * (The ladder has its own copies: kernels/ladder/ includes nothing of
 * production.)
 *
 * Conventions (see kernel.h): row-major, C(m×n, ldc) = A(m×k, lda)·B(k×n, ldb)
 * + beta·C with beta ∈ {0, 1}; complex matrices as (re, im) pairs.
 * Dimensions fit in int (checked at launch); element offsets are computed
 * in int64_t because m·lda can pass 2^31. */
#ifndef DD_GEMM_COMMON_CUH
#define DD_GEMM_COMMON_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

#include "kernel.h"
#include "launchers.h"

/* Return the first nonzero (CUDA or cuBLAS) status of a call: the ozaki2
 * launchers' (FP64 and FP32) error path. */
#define OZ_TRY(call)                                                                               \
    do {                                                                                           \
        int oz_e_ = (int)(call);                                                                   \
        if (oz_e_ != 0)                                                                            \
            return oz_e_;                                                                          \
    } while (0)

namespace dd
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

/* The same for the complex kernels (kernel.h: (re, im) pairs of T,
 * leading dimensions in complex elements), done in the real view of C (m ×
 * 2n, 2k deep, every leading dimension doubled: a row-major complex matrix
 * is a real one of twice the columns).  Also refused: n or k past what int
 * tile arithmetic takes once doubled. */
template <typename T>
static inline int gemm_prologue_cx(int64_t m, int64_t n, int64_t k, const T *A, int64_t lda,
                                   const T *B, int64_t ldb, int beta, T *C, int64_t ldc,
                                   cudaStream_t s, bool *launch)
{
    *launch = false;
    const int64_t big = INT64_MAX / 4;
    if (m < 0 || n < 0 || k < 0 || n > big || k > big || lda < 0 || ldb < 0 || ldc < 0 ||
        lda > big || ldb > big || ldc > big)
        return cudaErrorInvalidValue;
    int e = gemm_prologue<T>(m, 2 * n, 2 * k, A, 2 * lda, B, 2 * ldb, beta, C, 2 * ldc, s, launch);
    if (e != cudaSuccess || !*launch)
        return e;
    if (m > INT_MAX - 256 || 2 * n > INT_MAX - 256 || 2 * k > INT_MAX - 256) {
        *launch = false;
        return cudaErrorInvalidValue;
    }
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

/* ---- device helpers -------------------------------------------------------- */

/* 16 bytes of T: float4 or double2. */
template <typename T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
    static const int n = 4;
};
template <> struct vec16<double> {
    typedef double2 type;
    static const int n = 2;
};

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* cp.async: global -> shared without passing through registers.  src_bytes
 * below the copy size zero-fills the rest (0 reads nothing: edge tiles).
 * Before sm_80 there is no cp.async: the same copy is done synchronously,
 * which keeps the kernels correct (the barriers order it) if slower. */
template <int BYTES>
__device__ __forceinline__ void cp_async(void *smem, const void *gmem, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                     "l"(gmem), "r"(src_bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)),
                     "l"(gmem), "n"(BYTES), "r"(src_bytes)
                     : "memory");
#else
    unsigned char *d = static_cast<unsigned char *>(smem);
    const unsigned char *s = static_cast<const unsigned char *>(gmem);
    for (int i = 0; i < BYTES; ++i)
        d[i] = i < src_bytes ? s[i] : 0;
#endif
}
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    cp_async<16>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async8(void *smem, const void *gmem, int src_bytes)
{
    cp_async<8>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async4(void *smem, const void *gmem, int src_bytes)
{
    cp_async<4>(smem, gmem, src_bytes);
}
/* One element, whichever width T has. */
template <typename T>
__device__ __forceinline__ void cp_async_elem(T *smem, const T *gmem, bool valid)
{
    if (sizeof(T) == 8)
        cp_async8(smem, gmem, valid ? 8 : 0);
    else
        cp_async4(smem, gmem, valid ? 4 : 0);
}
__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* Grouped rasterisation: consecutive block ids walk down GROUP block-rows
 * before moving right, so the blocks resident at one time share A row
 * panels and B column panels in L2 (plain row order streams all of B once
 * per block-row).  bid: the tile's place in that order (default: this
 * block's id). */
template <int GROUP>
__device__ __forceinline__ void raster_grouped(int grid_m, int grid_n, int *bm, int *bn,
                                               int bid = blockIdx.x)
{
    int per_group = GROUP * grid_n;
    int group = bid / per_group;
    int first_m = group * GROUP;
    int rows = min(grid_m - first_m, GROUP);
    int in_group = bid - group * per_group;
    *bm = first_m + in_group % rows;
    *bn = in_group / rows;
}

/* Store (or accumulate) G contiguous elements of one C row: 16-byte stores
 * when the whole group is inside and C allows vectors, else scalars with a
 * guard per element. */
template <typename T, int G, bool VEC>
__device__ __forceinline__ void store_row_group(T *crow, int col, int N, const T *v, int beta)
{
    constexpr int W = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    if (VEC && G % W == 0 && col + G <= N) {
        typedef typename vec16<T>::type V;
#pragma unroll
        for (int q = 0; q < G / W; ++q) {
            V *p = reinterpret_cast<V *>(crow + col + q * W);
            V out;
            T *o = reinterpret_cast<T *>(&out);
            if (beta)
                out = *p;
#pragma unroll
            for (int e = 0; e < W; ++e)
                o[e] = beta ? o[e] + v[q * W + e] : v[q * W + e];
            *p = out;
        }
    } else {
#pragma unroll
        for (int e = 0; e < G; ++e) {
            if (col + e < N) {
                T x = v[e];
                if (beta)
                    x += crow[col + e];
                crow[col + e] = x;
            }
        }
    }
}

} // namespace dd

#endif
