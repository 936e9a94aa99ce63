/* 06_double_buffer — 05 with two shared-memory buffers, so that the global
 * loads of the next tile overlap the arithmetic on this one.
 *
 * What it changes: the main loop.  Before computing tile t from buffer
 * t%2, each thread issues the global loads of tile t+1 into registers; after
 * computing, it stores them into the other buffer; one __syncthreads per
 * tile then separates "everyone finished reading buffer t%2" from "someone
 * overwrites it" (two tiles later) and "tile t+1 is complete" from its use.
 * This is the article's double-buffering step (its sketch swaps buffers at
 * the last inner k; here the swap is per tile, which needs one barrier
 * instead of two).
 *
 * Why it should help: in 05 every tile pays the full global-memory latency
 * (hundreds of cycles) between the two barriers with nothing to do.  Here
 * the loads are in flight while the 64·BK FMAs of the current tile run, so
 * the latency is hidden as long as the arithmetic of one tile outlasts it.
 * Cost: the registers holding the next tile, and twice the shared memory.
 *
 * Measured on H200 (docs/results/h200-gemm-bench-2026-11-29.txt, n = 4096):
 * FP64 20.87 TFLOP/s (33.9% of cuBLAS), FP32 39.86 (81.3%).
 */
#include "ladder.h"
#include "simt_tile.cuh"

namespace
{

using namespace dd::simt;

template <typename T, bool VEC>
__global__ void __launch_bounds__(THREADS)
    double_buffer_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                         const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C,
                         int64_t ldc)
{
    typedef Tile<T> L;
    __shared__ __align__(16) T sA[2][BK * L::SA];
    __shared__ __align__(16) T sB[2][BK * BN];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    T ra[L::A_CHUNKS][L::G], rb[L::B_CHUNKS][L::G];
    load_tiles<T, VEC>(A, lda, B, ldb, M, N, K, m0, n0, 0, ra, rb);
    store_tiles<T>(sA[0], sB[0], ra, rb);
    __syncthreads();

    const int tiles = (K + BK - 1) / BK;
    for (int t = 0; t < tiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < tiles;
        if (more) /* in flight during compute_tile */
            load_tiles<T, VEC>(A, lda, B, ldb, M, N, K, m0, n0, (t + 1) * BK, ra, rb);
        compute_tile<T>(sA[cur], sB[cur], ty, tx, acc);
        if (more)
            store_tiles<T>(sA[cur ^ 1], sB[cur ^ 1], ra, rb);
        __syncthreads();
    }
    store_c<T, VEC>(C, ldc, M, N, m0, n0, ty, tx, beta, acc);
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    bool vec = dd::vec16_ok<T>(A, lda) && dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    return dd::launch_tiled<T>(vec ? double_buffer_kernel<T, true> : double_buffer_kernel<T, false>,
                               dim3(THREADS), BM, BN, m, n, k, A, lda, B, ldb, beta, C, ldc,
                               stream);
}

} // namespace

DD_LAUNCHER(dd_k06_dgemm, double, launch<double>)
DD_LAUNCHER(dd_k06_sgemm, float, launch<float>)
