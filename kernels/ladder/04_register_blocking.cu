/* 04_register_blocking — each thread computes a 4×4 block of C in registers.
 *
 * What it changes: a block of 256 threads computes a 64×64 tile of C; each
 * thread owns a 4×4 sub-tile (2-D thread tile).  Per step of 8 along K the
 * block stages a 64×8 tile of A and an 8×64 tile of B in shared memory;
 * for each k a thread loads 4 values of A and 4 of B into registers and
 * does 16 multiply-adds with them.
 *
 * Why it should help: 03 did one shared-memory load per multiply-add.  With
 * a TM×TN thread tile it does TM+TN loads per TM·TN multiply-adds: 8 per
 * 16 here, a 4x cut in shared-memory traffic per flop, and the 16
 * accumulators give the scheduler independent FMAs to overlap with loads.
 * Global traffic also halves again (64-wide tiles instead of 32).
 *
 * What it leaves: scalar loads everywhere, and the B reads of a warp
 * (16 threads 4 words apart) conflict 2-way in the banks.  05 fixes both. */
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

constexpr int BM = 64, BN = 64, BK = 8, TM = 4, TN = 4;
constexpr int THREADS = (BM / TM) * (BN / TN); /* 256 */

template <typename T>
__global__ void __launch_bounds__(THREADS)
    regblock_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                    const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C, int64_t ldc)
{
    __shared__ T sA[BM][BK];
    __shared__ T sB[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0;

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* 512 elements of each tile, 2 per thread; 8 consecutive threads read
         * one 8-element row segment of A, 64 threads one row of B. */
#pragma unroll
        for (int l = 0; l < BM * BK / THREADS; ++l) {
            int e = tid + l * THREADS;
            int r = e / BK, c = e % BK;
            sA[r][c] =
                dd::load_or_zero(A + (int64_t)(m0 + r) * lda + k0 + c, m0 + r < M && k0 + c < K);
        }
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            int e = tid + l * THREADS;
            int r = e / BN, c = e % BN;
            sB[r][c] =
                dd::load_or_zero(B + (int64_t)(k0 + r) * ldb + n0 + c, k0 + r < K && n0 + c < N);
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            T a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = sA[ty * TM + i][p];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = sB[p][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = m0 + ty * TM + i;
        if (row >= M)
            continue;
        T *c = C + (int64_t)row * ldc;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int col = n0 + tx * TN + j;
            if (col < N)
                c[col] = beta ? c[col] + acc[i][j] : acc[i][j];
        }
    }
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    return dd::launch_tiled<T>(regblock_kernel<T>, dim3(THREADS), BM, BN, m, n, k, A, lda, B, ldb,
                               beta, C, ldc, stream);
}

} // namespace

DD_LAUNCHER(dd_04_register_blocking_f64, double, launch<double>)
DD_LAUNCHER(dd_04_register_blocking_f32, float, launch<float>)
