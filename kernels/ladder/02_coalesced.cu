/* 02_coalesced — the same one-thread-per-element kernel, with the thread
 * index turned so that global accesses coalesce.
 *
 * What it changes: threadIdx.x now walks along a row of C (consecutive
 * columns) instead of down a column.
 *
 * Why it should help: in row-major storage consecutive columns are
 * consecutive addresses.  A warp's 32 loads of B (p, col..col+31) become one
 * or two 128-byte transactions instead of 32 sectors, its stores of C
 * likewise, and its loads of A are one address for the whole warp (a
 * broadcast).  Traffic per useful byte drops by up to 8x (FP32) / 4x (FP64);
 * the kernel is still bound by L1/L2 bandwidth, as nothing is reused
 * deliberately. */
#include "ladder.cuh"

namespace
{

constexpr int COLS = 32; /* threadIdx.x: columns of C (coalesced) */
constexpr int ROWS = 8;  /* threadIdx.y: rows of C */

template <typename T>
__global__ void coalesced_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                                 const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C,
                                 int64_t ldc)
{
    int col = blockIdx.x * COLS + threadIdx.x;
    int row = blockIdx.y * ROWS + threadIdx.y;
    if (row >= M || col >= N)
        return;
    const T *a = A + (int64_t)row * lda;
    const T *b = B + col;
    T acc = 0;
    for (int p = 0; p < K; ++p)
        acc += a[p] * b[(int64_t)p * ldb];
    T *c = C + (int64_t)row * ldc + col;
    *c = beta ? *c + acc : acc;
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    return dd::launch_tiled<T>(coalesced_kernel<T>, dim3(COLS, ROWS), ROWS, COLS, m, n, k, A, lda,
                               B, ldb, beta, C, ldc, stream);
}

} // namespace

DD_LAUNCHER(dd_02_coalesced_f64, double, launch<double>)
DD_LAUNCHER(dd_02_coalesced_f32, float, launch<float>)
