/* 05_vectorized — 128×128 block tiles, 8×8 thread tiles, 16-byte loads, and
 * a shared-memory layout without bank conflicts.
 *
 * What it changes (the pieces live in simt_tile.cuh, shared with 06):
 *  - global loads of A and B are 16-byte vectors (float4 / double2), one
 *    instruction per 4 floats or 2 doubles instead of one per element;
 *  - A is stored transposed in shared memory (sA[k][m]) so that a thread's
 *    8 values of A for one k are read as two (FP32) or four (FP64) 16-byte
 *    loads, like its 8 values of B;
 *  - a thread's 8×8 tile is split into groups of 4 (FP32) / 2 (FP64)
 *    consecutive rows and columns, spaced apart, so that the 16 threads of a
 *    half-warp read 16 consecutive vectors: conflict-free, and the A reads
 *    of a warp are broadcasts;
 *  - the transposed rows of sA are padded by one vector, which makes the
 *    transposing stores conflict-free (without it two threads of a warp
 *    land in each bank).
 * Vector loads need 16-byte aligned rows; a sub-block with an odd ld gets
 * the scalar-load instantiation of the same kernel (chosen at launch).
 *
 * Why it should help: per k a thread issues 4 (FP32) or 8 (FP64) shared
 * loads for 64 FMAs, against 8 loads per 16 FMAs in 04; the 128×128 tile
 * halves global traffic per flop again.  The loop still waits at each
 * __syncthreads for the global loads of the next tile: 06 overlaps them.
 *
 * Measured on H200 (docs/results/h200-gemm-bench-2026-11-29.txt, n = 4096):
 * FP64 15.01 TFLOP/s (24.4% of cuBLAS), FP32 37.05 (75.6%).  At n = 1024
 * it is slower than 04: 64 blocks of 128×128 for 132 SMs.
 */
#include "ladder.h"
#include "simt_tile.cuh"

namespace
{

using namespace dd::simt;

template <typename T, bool VEC>
__global__ void __launch_bounds__(THREADS)
    vectorized_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                      const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C,
                      int64_t ldc)
{
    typedef Tile<T> L;
    __shared__ __align__(16) T sA[BK * L::SA];
    __shared__ __align__(16) T sB[BK * BN];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    T ra[L::A_CHUNKS][L::G], rb[L::B_CHUNKS][L::G];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<T, VEC>(A, lda, B, ldb, M, N, K, m0, n0, k0, ra, rb);
        store_tiles<T>(sA, sB, ra, rb);
        __syncthreads();
        compute_tile<T>(sA, sB, ty, tx, acc);
        __syncthreads();
    }
    store_c<T, VEC>(C, ldc, M, N, m0, n0, ty, tx, beta, acc);
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    bool vec = dd::vec16_ok<T>(A, lda) && dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    return dd::launch_tiled<T>(vec ? vectorized_kernel<T, true> : vectorized_kernel<T, false>,
                               dim3(THREADS), BM, BN, m, n, k, A, lda, B, ldb, beta, C, ldc,
                               stream);
}

} // namespace

DD_LAUNCHER(dd_k05_dgemm, double, launch<double>)
DD_LAUNCHER(dd_k05_sgemm, float, launch<float>)
