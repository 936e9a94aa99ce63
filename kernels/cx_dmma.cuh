/* cx_dmma.cuh — what the complex production kernels share (zgemm_dmma.cu,
 * cgemm_dmma.cu): the complex product as one real GEMM of twice the size,
 * the expansion of B that makes it so, its workspace, a CUDA-core
 * fallback, and the count of the calls that took it.  (The arguments'
 * checks in the real view are gemm_common.cuh's gemm_prologue_cx.)
 *
 * The real view.  A row-major complex matrix with (re, im) pairs is a real
 * row-major matrix of twice the columns: A (m × k complex, lda) is the real
 * Ar (m × 2k, 2·lda), Ar[i][2p] = Re A(i,p), Ar[i][2p+1] = Im A(i,p); C
 * likewise.  B (k × n) expands into the real B' (2k × 2n) of 2 × 2 blocks
 *     B'[2p][2j]   =  Re B(p,j)    B'[2p][2j+1]   = Im B(p,j)
 *     B'[2p+1][2j] = -Im B(p,j)    B'[2p+1][2j+1] = Re B(p,j)
 * so that (Ar·B')[i][2j]   = Σp Re A·Re B - Im A·Im B = Re C(i,j) and
 *         (Ar·B')[i][2j+1] = Σp Re A·Im B + Im A·Re B = Im C(i,j):
 * C's real view is Ar·B', a real GEMM of m × 2n × 2k, 8·m·n·k flops (the
 * complex count), with the same terms as the complex definition (a
 * negation is exact) and beta 0/1 as for a real C.  B' is 4·k·n values,
 * made by one pass (expand_b) into a workspace from stream-K's
 * stream-ordered pool and given back after the multiply. */
#pragma once

#include <atomic>
#include <stdint.h>
#include <stdio.h>

#include "gemm_common.cuh"
#include "sk.cuh"

extern "C" { /* a C header without its own guard */
#include "dd_fault.h"
}

namespace dd_cx
{

/* B' (2k × 2n, leading dimension ldx doubles, even) from B (k × n complex,
 * ldb complex elements) of type TS (double, or float widened exactly): a
 * block per row of B in turn; each complex element becomes two 16-byte
 * stores, (re, im) into row 2p and (-im, re) into row 2p + 1. */
template <typename TS>
__global__ void expand_b(const TS *__restrict__ B, int64_t ldb, double *__restrict__ X,
                         int64_t ldx, int rows, int cols)
{
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const TS *b = B + 2 * (int64_t)r * ldb;
        double2 *x0 = reinterpret_cast<double2 *>(X + 2 * (int64_t)r * ldx);
        double2 *x1 = reinterpret_cast<double2 *>(X + (2 * (int64_t)r + 1) * ldx);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            const double re = (double)b[2 * c], im = (double)b[2 * c + 1];
            x0[c] = make_double2(re, im);
            x1[c] = make_double2(-im, re);
        }
    }
}

template <typename TS>
int expand_b_async(const TS *B, int64_t ldb, double *X, int64_t ldx, int64_t k, int64_t n, int sms,
                   cudaStream_t s)
{
    const int64_t cap = 16LL * sms;
    expand_b<TS><<<(unsigned)(k < cap ? k : cap), 256, 0, s>>>(B, ldb, X, ldx, (int)k, (int)n);
    return dd::launch_status();
}

/* The workspace of one call (bytes) from the pool of device dev, in stream
 * order; false where it cannot be had (the device's free memory, or the
 * fault point cx-no-workspace for the tests), which only means the
 * fallback: an error of the caller's pending before is kept, ours cleared. */
inline bool workspace(int dev, size_t bytes, cudaStream_t s, void **ws)
{
    *ws = nullptr;
    if (dd_fault("cx-no-workspace"))
        return false;
    const bool pending = cudaPeekAtLastError() != cudaSuccess;
    if (dd_sk::pool_alloc(dev, bytes, s, ws) == cudaSuccess)
        return true;
    if (!pending)
        (void)cudaGetLastError();
    *ws = nullptr;
    return false;
}

/* The fallback on the CUDA cores, in T's arithmetic: 32 × 32 complex tiles
 * of C per block of 256 threads, each thread 2 × 2 elements (rows ty and
 * ty + 16, columns tx and tx + 16), k in steps of 16 through shared
 * memory, components loaded one by one (any alignment), guards at the
 * edges.  Simple rather than fast: it runs where the tensor-core path
 * cannot (no workspace, no FP64 tensor cores or no sm_90 code for
 * cgemm_dmma). */
constexpr int FB_TILE = 32, FB_K = 16;

template <typename T>
__global__ void __launch_bounds__(256)
    fallback_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                    const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C, int64_t ldc,
                    long long tiles_n, long long tiles)
{
    __shared__ T ar[FB_TILE][FB_K + 1], ai[FB_TILE][FB_K + 1];
    __shared__ T br[FB_K][FB_TILE + 1], bi[FB_K][FB_TILE + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int m0 = (int)(t / tiles_n) * FB_TILE, n0 = (int)(t % tiles_n) * FB_TILE;
        T cr[2][2] = {}, ci[2][2] = {};
        for (int k0 = 0; k0 < K; k0 += FB_K) {
            for (int q = threadIdx.x; q < FB_TILE * FB_K; q += blockDim.x) {
                const int r = q / FB_K, c = q % FB_K; /* A tile: row r, k c */
                const bool in = m0 + r < M && k0 + c < K;
                const T *pa = A + 2 * ((int64_t)(m0 + r) * lda + k0 + c);
                ar[r][c] = in ? pa[0] : T(0);
                ai[r][c] = in ? pa[1] : T(0);
                const int kr = q / FB_TILE, nc = q % FB_TILE; /* B tile: k kr, column nc */
                const bool inb = k0 + kr < K && n0 + nc < N;
                const T *pb = B + 2 * ((int64_t)(k0 + kr) * ldb + n0 + nc);
                br[kr][nc] = inb ? pb[0] : T(0);
                bi[kr][nc] = inb ? pb[1] : T(0);
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < FB_K; ++kk)
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const T xr = ar[ty + 16 * i][kk], xi = ai[ty + 16 * i][kk];
                        const T yr = br[kk][tx + 16 * j], yi = bi[kk][tx + 16 * j];
                        cr[i][j] += xr * yr - xi * yi;
                        ci[i][j] += xr * yi + xi * yr;
                    }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int r = m0 + ty + 16 * i, c = n0 + tx + 16 * j;
                if (r < M && c < N) {
                    T *pc = C + 2 * ((int64_t)r * ldc + c);
                    pc[0] = beta ? pc[0] + cr[i][j] : cr[i][j];
                    pc[1] = beta ? pc[1] + ci[i][j] : ci[i][j];
                }
            }
    }
}

/* The fallback on the prologue's checked arguments (k > 0). */
template <typename T>
int fallback(int64_t m, int64_t n, int64_t k, const T *A, int64_t lda, const T *B, int64_t ldb,
             int beta, T *C, int64_t ldc, int sms, cudaStream_t s)
{
    const long long tn = (n + FB_TILE - 1) / FB_TILE, tiles = ((m + FB_TILE - 1) / FB_TILE) * tn;
    const long long cap = 8LL * (sms > 0 ? sms : 1);
    fallback_kernel<T><<<(unsigned)(tiles < cap ? tiles : cap), 256, 0, s>>>(
        (int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc, tn, tiles);
    return dd::launch_status();
}

/* The calls of one kernel since the last note, and those that ran the
 * fallback, by reason. */
struct counts {
    std::atomic<unsigned long long> calls{0}, no_space{0}, no_path{0};
};

/* The note (kernel.h's kernel_note) of a kernel: the calls since the last
 * one that ran the fallback, and why; "" when none did.  path_why: the
 * reason no_path counts. */
inline const char *note(counts &c, char *buf, size_t size, const char *name, const char *path_why)
{
    const unsigned long long calls = c.calls.exchange(0), space = c.no_space.exchange(0),
                             path = c.no_path.exchange(0);
    buf[0] = '\0';
    if (space + path)
        snprintf(buf, size, "%llu of %llu %s multiplies ran on its CUDA-core fallback (%s)",
                 space + path, calls, name,
                 path ? path_why
                      : "no GPU memory for the expanded B in the device's free memory");
    return buf;
}

} // namespace dd_cx
