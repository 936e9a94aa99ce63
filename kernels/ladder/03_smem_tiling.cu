/* 03_smem_tiling — 32×32 tiles of A and B staged through shared memory.
 *
 * What it changes: a block of 32×32 threads computes a 32×32 tile of C.
 * For each step of 32 along K it loads a 32×32 tile of A and of B into
 * shared memory (one coalesced element per thread each), synchronises, and
 * every thread then reads its row of the A tile and column of the B tile
 * from shared memory.
 *
 * Why it should help: each element fetched from global memory is used 32
 * times from shared memory instead of once, so global (L2) traffic falls by
 * 32x.  The reads of the A tile are broadcasts (one address per warp) and
 * those of the B tile are consecutive words: no bank conflicts.  What is
 * left is one shared-memory load per multiply-add, so shared-memory
 * bandwidth and load latency now bound the kernel. */
#include "ladder.cuh"

namespace dd
{
namespace
{

/* Guarded scalar read: zero outside the matrix. */
template <typename T> __device__ __forceinline__ T load_or_zero(const T *p, bool valid)
{
    return valid ? *p : T(0);
}

} // namespace
} // namespace dd

namespace
{

constexpr int TILE = 32;

template <typename T>
__global__ void __launch_bounds__(TILE *TILE)
    smem_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                int64_t ldb, int beta, T *__restrict__ C, int64_t ldc)
{
    __shared__ T sA[TILE][TILE];
    __shared__ T sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    const T *a = A + (int64_t)row * lda;
    T acc = 0;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        /* Zero-filled edges: the multiply below needs no guard. */
        sA[ty][tx] = dd::load_or_zero(a + k0 + tx, row < M && k0 + tx < K);
        sB[ty][tx] = dd::load_or_zero(B + (int64_t)(k0 + ty) * ldb + col, k0 + ty < K && col < N);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; ++p)
            acc += sA[ty][p] * sB[p][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        T *c = C + (int64_t)row * ldc + col;
        *c = beta ? *c + acc : acc;
    }
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    return dd::launch_tiled<T>(smem_kernel<T>, dim3(TILE, TILE), TILE, TILE, m, n, k, A, lda, B,
                               ldb, beta, C, ldc, stream);
}

} // namespace

DD_LAUNCHER(dd_03_smem_tiling_f64, double, launch<double>)
DD_LAUNCHER(dd_03_smem_tiling_f32, float, launch<float>)
