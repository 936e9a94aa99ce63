/* 01_naive — one thread per element of C, straight from global memory.
 *
 * What it changes: nothing yet; this is the article's first kernel, the
 * baseline of the ladder.  Each thread walks a row of A and a column of B
 * and writes one element of C.
 *
 * Why it is slow: the thread index that varies fastest inside a warp
 * (threadIdx.x) walks down the rows of C.  Neighbouring threads then read A
 * at addresses lda elements apart and write C ldc apart: every load of A and
 * every store of C is a separate 32-byte sector for 4 or 8 useful bytes.
 * B is read at one address per warp (a broadcast).  Nothing is reused from
 * on-chip memory except what L1/L2 happen to keep. */
#include "ladder.cuh"

namespace
{

constexpr int ROWS = 32; /* threadIdx.x: rows of C (the uncoalesced choice) */
constexpr int COLS = 8;  /* threadIdx.y: columns of C */

template <typename T>
__global__ void naive_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                             const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C,
                             int64_t ldc)
{
    int row = blockIdx.x * ROWS + threadIdx.x;
    int col = blockIdx.y * COLS + threadIdx.y;
    if (row >= M || col >= N)
        return;
    const T *a = A + (int64_t)row * lda;
    T acc = 0;
    for (int p = 0; p < K; ++p)
        acc += a[p] * B[(int64_t)p * ldb + col];
    T *c = C + (int64_t)row * ldc + col;
    *c = beta ? *c + acc : acc;
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<T>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    dim3 block(ROWS, COLS);
    dim3 grid((unsigned)((m + ROWS - 1) / ROWS), (unsigned)((n + COLS - 1) / COLS));
    if (grid.y > 65535)
        return cudaErrorInvalidConfiguration;
    naive_kernel<T><<<grid, block, 0, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    return dd::launch_status();
}

} // namespace

DD_LAUNCHER(dd_01_naive_f64, double, launch<double>)
DD_LAUNCHER(dd_01_naive_f32, float, launch<float>)
