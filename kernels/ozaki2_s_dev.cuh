/* ozaki2_s_dev.cuh — the device side of kernels/ozaki2_s.cu (the FP32
 * scheme): the moduli's parameters in constant memory, the flagging of a
 * multiply, block reductions, the scaling + slicing kernels (A by rows, B
 * by columns), the CRT kernel and the gated native fallback.  Private to
 * ozaki2_s.cu, whose head describes the steps. */
#ifndef DD_OZAKI2_S_DEV_CUH
#define DD_OZAKI2_S_DEV_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ozaki2_mod.cuh"
#include "ozaki2_s.h"

namespace oz2s
{

/* One multiply's verdict (reset before each chunk): flag 0 fine, else the
 * first reason found, with its row/column and counts. */
enum { REASON_NONE, REASON_A_NONFINITE, REASON_B_NONFINITE, REASON_A_RANGE, REASON_B_RANGE };
struct status {
    unsigned int flag;
    int index, lossy, nnz;
};
/* Kept across multiplies, read and cleared by the host (kernel_note). */
struct stats {
    unsigned long long fallbacks;
    unsigned int reason;
    int index, lossy, nnz, moduli;
};

/* The parameters of every number of moduli, index n - OZ2S_MIN_MODULI. */
__constant__ oz2_params c_par[OZ2S_MAX_MODULI - OZ2S_MIN_MODULI + 1];

__device__ inline void flag(status *st, unsigned int why, int index, int lossy, int nnz)
{
    if (atomicCAS(&st->flag, 0u, why) == 0u) {
        st->index = index, st->lossy = lossy, st->nnz = nnz;
    }
}

/* Block-wide sum / max over 256 threads (8 warps); every thread gets it. */
template <typename T, bool MAX> __device__ inline T block_reduce(T v, T *red)
{
    for (int o = 16; o > 0; o >>= 1) {
        T w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? (w > v ? w : v) : v + w;
    }
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < 8; ++w)
        v = MAX ? (red[w] > v ? red[w] : v) : v + red[w];
    return v;
}

/* Row i of A (k floats) -> sa[i] and N INT8 slices, slice q at out +
 * q·stride + i·kp, zero past k up to kp (a multiple of 32).  256 threads,
 * one block per row; the row is read three times (max, norm, slices: the
 * second and third from cache). */
template <int N, int ND>
__global__ void __launch_bounds__(256) slice_rows(int k, int kp, const float *A, int64_t lda,
                                                  int *sa, int8_t *out, int64_t stride, status *st)
{
    __shared__ double redd[8];
    __shared__ int redi[8];
    const oz2_params &p = c_par[N - OZ2S_MIN_MODULI];
    const int i = blockIdx.x;
    const float *a = A + (int64_t)i * lda;
    float amax = 0;
    int bad = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        float v = fabsf(a[l]);
        bad |= !isfinite(v);
        amax = fmaxf(amax, v);
    }
    if (block_reduce<int, false>(bad, redi)) {
        if (threadIdx.x == 0)
            flag(st, REASON_A_NONFINITE, i, 0, 0);
        return;
    }
    const double amaxd = block_reduce<double, true>((double)amax, redd);
    int e = 0;
    if (amaxd > 0)
        (void)frexp(amaxd, &e);
    const double down = ldexp(1.0, -e); /* exact scaling: FP32 values are far from FP64's limits */
    double ss = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        double v = (double)a[l] * down;
        ss += v * v;
    }
    ss = block_reduce<double, false>(ss, redd);
    const int s = oz2_shift(amaxd, ss, p.half_bits);
    const double pw = ldexp(1.0, s);
    if (threadIdx.x == 0)
        sa[i] = s;
    int lossy = 0, nnz = 0;
    int8_t *row = out + (int64_t)i * kp;
    for (int l0 = 4 * threadIdx.x; l0 < kp; l0 += 1024) {
        float d[4][ND];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            int lo = 0, l = l0 + q;
            const float v = l < k ? a[l] : 0.0f;
            oz2_digits15((double)oz2s_scaled_f(v, pw, &lo), ND, d[q]);
            lossy += lo;
            nnz += v != 0;
        }
#pragma unroll
        for (int q = 0; q < N; ++q)
            *reinterpret_cast<uint32_t *>(row + q * stride + l0) = ozcrt::pack4(p, q, d);
    }
    lossy = block_reduce<int, false>(lossy, redi);
    nnz = block_reduce<int, false>(nnz, redi);
    if (threadIdx.x == 0 && oz2s_out_of_range(lossy, nnz))
        flag(st, REASON_A_RANGE, i, lossy, nnz);
}

/* Columns of B, 32 per block -> sb[j] and the slices of B^T: slice q,
 * column j at out + q·stride + j·kp (k contiguous: the "T" operand of the
 * INT8 GEMM).  The max and the norm: lane = column, 8 warps share k; the
 * slices: ozaki2_mod.cuh's slice_col_tiles, as ozaki2_dev.cuh's
 * slice_cols. */
template <int N, int ND>
__global__ void __launch_bounds__(256) slice_cols(int n, int k, int kp, const float *B,
                                                  int64_t ldb, int *sb, int8_t *out,
                                                  int64_t stride, status *st)
{
    __shared__ double redd[8][32];
    __shared__ int redi[8][32];
    __shared__ float tile[64][33];
    __shared__ int col_bad[32], col_lossy[32], col_nnz[32];
    __shared__ double col_pw[32];
    const oz2_params &p = c_par[N - OZ2S_MIN_MODULI];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int j0 = blockIdx.x * 32, j = j0 + lane;
    const bool ok = j < n;
    float amax = 0;
    int bad = 0;
    if (ok) {
#pragma unroll 4
        for (int l = warp; l < k; l += 8) {
            float v = fabsf(B[(int64_t)l * ldb + j]);
            bad |= !isfinite(v);
            amax = fmaxf(amax, v);
        }
    }
    redd[warp][lane] = amax, redi[warp][lane] = bad;
    __syncthreads();
    double amaxd = amax;
    for (int w = 0; w < 8; ++w)
        amaxd = fmax(amaxd, redd[w][lane]), bad |= redi[w][lane];
    __syncthreads();
    if (bad && warp == 0)
        flag(st, REASON_B_NONFINITE, j, 0, 0);
    int e = 0;
    if (amaxd > 0)
        (void)frexp(amaxd, &e);
    const double down = ldexp(1.0, -e);
    double ss = 0;
    if (ok && !bad) {
#pragma unroll 4
        for (int l = warp; l < k; l += 8) {
            double v = (double)B[(int64_t)l * ldb + j] * down;
            ss += v * v;
        }
    }
    redd[warp][lane] = ss;
    __syncthreads();
    ss = 0;
    for (int w = 0; w < 8; ++w)
        ss += redd[w][lane];
    const int s = oz2_shift(amaxd, ss, p.half_bits);
    if (warp == 0) {
        if (ok)
            sb[j] = s;
        col_pw[lane] = ldexp(1.0, s), col_bad[lane] = bad || !ok;
    }
    ozcrt::slice_col_tiles<ND>(
        B, ldb, n, k, kp, j0, p, N, out, stride, tile, col_bad,
        [&](float v, int cc, int *lo) { return (double)oz2s_scaled_f(v, col_pw[cc], lo); },
        col_lossy, col_nnz);
    if (warp == 0 && !col_bad[lane] && oz2s_out_of_range(col_lossy[lane], col_nnz[lane]))
        flag(st, REASON_B_RANGE, j, col_lossy[lane], col_nnz[lane]);
}

/* 2^e as a double from its exponent bits, for |e| ≤ 1022 (the scales of
 * FP32 rows and columns: |s| < 2^9); ldexp's range handling is not needed. */
__device__ inline double pow2(int e)
{
    return __longlong_as_double((long long)(1023 + e) << 52);
}

/* rows×n entries of C from the N products (product q at c + q·cstride, ld
 * nc: INT8 residues from the own GEMM, or INT32 products from cuBLAS):
 * residues, the CRT (ozaki2_mod.cuh: Garner in FP32, the digits summed in
 * FP64), unscale, beta, FP32 out.  Nothing when the range check flagged
 * this multiply.  Columns along x, V per thread (4 for INT8 residues: one
 * 32-bit load per product; nc and the product stride are multiples of
 * 16), rows along y (striding by gridDim.y). */
template <int N, typename R>
__global__ void __launch_bounds__(256) crt(int rows, int n, const R *c, int64_t cstride, int nc,
                                           const int *sa, const int *sb, int beta, float *C,
                                           int64_t ldc, const status *st)
{
    if (*(volatile const unsigned int *)&st->flag)
        return;
    constexpr int V = sizeof(R) == 1 ? 4 : 1;
    const oz2_params &p = c_par[N - OZ2S_MIN_MODULI]; /* compile-time index: constant operands */
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= n)
        return;
    double pb[V];
#pragma unroll
    for (int q = 0; q < V; ++q)
        pb[q] = c0 + q < n ? pow2(-sb[c0 + q]) : 0.0;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const R *src = c + (int64_t)r * nc + c0;
        float *dst = C + (int64_t)r * ldc + c0;
        const double pa = pow2(-sa[r]);
        ozcrt::entries<N, V>(p, src, cstride, [&](int q, double x) {
            const double y = x * pa * pb[q]; /* exact: no under- or overflow */
            if (c0 + q < n)
                dst[q] = (float)(beta ? (double)dst[q] + y : y);
        });
    }
}

/* The native product when the range check flagged this multiply (else
 * every block returns at once), FP32 in, FP64 products and sums (what
 * sgemm_dmma computes), one rounding: 64×64 tiles, 4×4 per thread, blocks
 * striding over the tiles.  compute 0: sgemm_dmma, gated on the same
 * flag, multiplies; this only records.  Block 0 records the fallback. */
__global__ void __launch_bounds__(256) fallback(int m, int n, int k, const float *A, int64_t lda,
                                                const float *B, int64_t ldb, int beta, float *C,
                                                int64_t ldc, const status *st, stats *sx,
                                                int moduli, int compute)
{
    const unsigned int why = *(volatile const unsigned int *)&st->flag;
    if (!why)
        return;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        sx->fallbacks++;
        sx->reason = why, sx->index = st->index, sx->lossy = st->lossy, sx->nnz = st->nnz;
        sx->moduli = moduli;
    }
    if (!compute)
        return;
    __shared__ double As[16][65], Bs[16][64];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int tn = (n + 63) / 64, tiles = tn * ((m + 63) / 64);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int r0 = (t / tn) * 64, c0 = (t % tn) * 64;
        double acc[4][4] = {};
        for (int l0 = 0; l0 < k; l0 += 16) {
            for (int q = threadIdx.x; q < 1024; q += 256) {
                int rr = q / 16, ll = q % 16, lb = q / 64, cc = q % 64;
                As[ll][rr] = (r0 + rr < m && l0 + ll < k) ? A[(int64_t)(r0 + rr) * lda + l0 + ll] : 0;
                Bs[lb][cc] = (l0 + lb < k && c0 + cc < n) ? B[(int64_t)(l0 + lb) * ldb + c0 + cc] : 0;
            }
            __syncthreads();
#pragma unroll
            for (int ll = 0; ll < 16; ++ll)
#pragma unroll
                for (int a = 0; a < 4; ++a)
#pragma unroll
                    for (int b = 0; b < 4; ++b)
                        acc[a][b] = fma(As[ll][ty + 16 * a], Bs[ll][tx + 16 * b], acc[a][b]);
            __syncthreads();
        }
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) {
                int r = r0 + ty + 16 * a, cc = c0 + tx + 16 * b;
                if (r < m && cc < n) {
                    float *dst = C + (int64_t)r * ldc + cc;
                    *dst = (float)(beta ? (double)*dst + acc[a][b] : acc[a][b]);
                }
            }
    }
}

} // namespace oz2s

#endif
