/* ozaki2_dev.cuh — the device side of kernels/ozaki2.cu: the moduli's
 * parameters in constant memory, the flagging of a multiply, block
 * reductions, the scaling + slicing kernels (A by rows, B by columns), the
 * CRT kernel (mod reduction, ozaki2_mod.cuh's Garner, unscale, beta) and the gated native
 * fallback.  Private to ozaki2.cu (the status words are ozaki2_ws.cuh's:
 * ozaki2_slices.cu reads them too). */
#ifndef DD_OZAKI2_DEV_CUH
#define DD_OZAKI2_DEV_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ozaki2.h"
#include "ozaki2_mod.cuh"
#include "ozaki2_ws.cuh" /* status, stats */

namespace oz2
{

/* The parameters of every number of moduli, index n - OZ2_MIN_MODULI. */
__constant__ oz2_params c_par[OZ2_MAX_MODULI - OZ2_MIN_MODULI + 1];

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

/* Row i of A (k values) -> sa[i] and n INT8 slices, slice q at
 * out + q·stride + i·kp, zero past k up to kp (a multiple of 32).  256
 * threads, one block per row.  range 0: no range check (ozaki2-auto, whose
 * guard has bounded the error).  ND = the parameters' digits: each scaled
 * integer is split once into base-2^15 digits and its residues come from
 * them in FP32 (ozaki2.h: oz2_digits_symmod). */
template <int ND>
__global__ void __launch_bounds__(256) slice_rows(int pi, int k, int kp, const double *A,
                                                  int64_t lda, int *sa, int8_t *out,
                                                  int64_t stride, status *st, int range)
{
    __shared__ double redd[8];
    __shared__ int redi[8];
    const oz2_params &p = c_par[pi];
    const int i = blockIdx.x;
    const double *a = A + (int64_t)i * lda;
    double amax = 0;
    int bad = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        double v = fabs(a[l]);
        bad |= !isfinite(v);
        amax = fmax(amax, v);
    }
    if (block_reduce<int, false>(bad, redi)) {
        if (threadIdx.x == 0)
            flag(st, REASON_A_NONFINITE, i, 0, 0);
        return;
    }
    amax = block_reduce<double, true>(amax, redd);
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    double ss = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        double v = ldexp(a[l], -e);
        ss += v * v;
    }
    ss = block_reduce<double, false>(ss, redd);
    const int s = oz2_shift(amax, ss, p.half_bits);
    if (threadIdx.x == 0)
        sa[i] = s;
    int lossy = 0, nnz = 0;
    int8_t *row = out + (int64_t)i * kp;
    for (int l0 = 4 * threadIdx.x; l0 < kp; l0 += 1024) {
        float d[4][ND];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            int lo = 0, l = l0 + q;
            oz2_digits15(l < k ? oz2_scaled(a[l], s, &lo) : 0.0, ND, d[q]);
            lossy += lo;
            nnz += l < k && a[l] != 0;
        }
        for (int q = 0; q < p.n; ++q)
            *reinterpret_cast<uint32_t *>(row + q * stride + l0) = ozcrt::pack4(p, q, d);
    }
    lossy = block_reduce<int, false>(lossy, redi);
    nnz = block_reduce<int, false>(nnz, redi);
    if (threadIdx.x == 0 && range && (int64_t)lossy * OZ2_LOSSY_DEN > nnz)
        flag(st, REASON_A_RANGE, i, lossy, nnz);
}

/* Columns of B, 32 per block -> sb[j] and the slices of B^T: slice q,
 * column j at out + q·stride + j·kp (k contiguous: the "T" operand of the
 * INT8 GEMM).  The max and the norm: lane = column, 8 warps share k; the
 * slices: ozaki2_mod.cuh's slice_col_tiles.  ND as slice_rows'. */
template <int ND>
__global__ void __launch_bounds__(256) slice_cols(int pi, int n, int k, int kp, const double *B,
                                                  int64_t ldb, int *sb, int8_t *out,
                                                  int64_t stride, status *st, int range)
{
    __shared__ double redd[8][32];
    __shared__ int redi[8][32];
    __shared__ double tile[64][33];
    __shared__ int col_s[32], col_bad[32], col_lossy[32], col_nnz[32];
    const oz2_params &p = c_par[pi];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int j0 = blockIdx.x * 32, j = j0 + lane;
    const bool ok = j < n;
    double amax = 0;
    int bad = 0;
    if (ok) {
#pragma unroll 4
        for (int l = warp; l < k; l += 8) {
            double v = fabs(B[(int64_t)l * ldb + j]);
            bad |= !isfinite(v);
            amax = fmax(amax, v);
        }
    }
    redd[warp][lane] = amax, redi[warp][lane] = bad;
    __syncthreads();
    for (int w = 0; w < 8; ++w)
        amax = fmax(amax, redd[w][lane]), bad |= redi[w][lane];
    __syncthreads();
    if (bad && warp == 0)
        flag(st, REASON_B_NONFINITE, j, 0, 0);
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    double ss = 0;
    if (ok && !bad) {
#pragma unroll 4
        for (int l = warp; l < k; l += 8) {
            double v = ldexp(B[(int64_t)l * ldb + j], -e);
            ss += v * v;
        }
    }
    redd[warp][lane] = ss;
    __syncthreads();
    ss = 0;
    for (int w = 0; w < 8; ++w)
        ss += redd[w][lane];
    const int s = oz2_shift(amax, ss, p.half_bits);
    if (warp == 0) {
        if (ok)
            sb[j] = s;
        col_s[lane] = s, col_bad[lane] = bad || !ok;
    }
    ozcrt::slice_col_tiles<ND>(
        B, ldb, n, k, kp, j0, p, p.n, out, stride, tile, col_bad,
        [&](double v, int cc, int *lo) { return oz2_scaled(v, col_s[cc], lo); }, col_lossy,
        col_nnz);
    if (warp == 0 && !col_bad[lane] && range &&
        (int64_t)col_lossy[lane] * OZ2_LOSSY_DEN > col_nnz[lane])
        flag(st, REASON_B_RANGE, j, col_lossy[lane], col_nnz[lane]);
}

/* ---- ozaki2-auto's guard (ozaki2.h): summaries, histograms, the pair maxima ---- */

/* Row i of A -> va[i] and its histogram ha[i·OZ2_HIST_BINS ..] (the host
 * reference's guard_vector); a non-finite value flags the multiply.  256
 * threads, one block per row. */
__global__ void __launch_bounds__(256) guard_rows(int k, const double *A, int64_t lda,
                                                  oz2_vsum *va, int *ha, status *st)
{
    __shared__ double redd[8];
    __shared__ int redi[8];
    __shared__ int hist[OZ2_HIST_BINS];
    const int i = blockIdx.x;
    const double *a = A + (int64_t)i * lda;
    for (int d = threadIdx.x; d < OZ2_HIST_BINS; d += 256)
        hist[d] = 0;
    double amax = 0;
    int bad = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        double v = fabs(a[l]);
        bad |= !isfinite(v);
        amax = fmax(amax, v);
    }
    if (block_reduce<int, false>(bad, redi)) { /* also orders hist's zeroing */
        if (threadIdx.x == 0)
            flag(st, REASON_A_NONFINITE, i, 0, 0);
        return;
    }
    amax = block_reduce<double, true>(amax, redd);
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    double ss = 0, n1 = 0;
    int zeros = 0;
    for (int l = threadIdx.x; l < k; l += 256) {
        const double x = a[l], v = ldexp(fabs(x), -e);
        ss += v * v, n1 += v;
        const int d = oz2_hist_bin(x, e);
        if (d < 0)
            ++zeros;
        else
            atomicAdd(&hist[d], 1);
    }
    ss = block_reduce<double, false>(ss, redd);
    n1 = block_reduce<double, false>(n1, redd);
    zeros = block_reduce<int, false>(zeros, redi); /* its barriers order hist's atomics */
    for (int d = threadIdx.x; d < OZ2_HIST_BINS; d += 256)
        ha[(int64_t)i * OZ2_HIST_BINS + d] = hist[d];
    if (threadIdx.x == 0) {
        oz2_vsum v;
        v.emax = e, v.enorm = oz2_shift_base(amax, ss), v.n1 = n1, v.zeros = zeros;
        v.last = oz2_hist_last(hist);
        va[i] = v;
    }
}

/* Columns of B, 32 per block (lane = column, 8 warps share k) -> vb[j],
 * hb[j·OZ2_HIST_BINS ..]. */
__global__ void __launch_bounds__(256) guard_cols(int n, int k, const double *B, int64_t ldb,
                                                  oz2_vsum *vb, int *hb, status *st)
{
    __shared__ double redd[8][32], redn[8][32];
    __shared__ int redi[8][32];
    __shared__ int hist[32][OZ2_HIST_BINS + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int j = blockIdx.x * 32 + lane;
    const bool ok = j < n;
    for (int d = warp; d < OZ2_HIST_BINS; d += 8)
        hist[lane][d] = 0;
    double amax = 0;
    int bad = 0;
    for (int l = warp; ok && l < k; l += 8) {
        double v = fabs(B[(int64_t)l * ldb + j]);
        bad |= !isfinite(v);
        amax = fmax(amax, v);
    }
    redd[warp][lane] = amax, redi[warp][lane] = bad;
    __syncthreads();
    for (int w = 0; w < 8; ++w)
        amax = fmax(amax, redd[w][lane]), bad |= redi[w][lane];
    __syncthreads();
    if (bad && warp == 0)
        flag(st, REASON_B_NONFINITE, j, 0, 0);
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    double ss = 0, n1 = 0;
    int zeros = 0;
    for (int l = warp; ok && !bad && l < k; l += 8) {
        const double x = B[(int64_t)l * ldb + j], v = ldexp(fabs(x), -e);
        ss += v * v, n1 += v;
        const int d = oz2_hist_bin(x, e);
        if (d < 0)
            ++zeros;
        else
            atomicAdd(&hist[lane][d], 1);
    }
    redd[warp][lane] = ss, redn[warp][lane] = n1, redi[warp][lane] = zeros;
    __syncthreads();
    for (int d = warp; ok && !bad && d < OZ2_HIST_BINS; d += 8)
        hb[(int64_t)j * OZ2_HIST_BINS + d] = hist[lane][d];
    if (warp == 0 && ok && !bad) {
        ss = 0, n1 = 0, zeros = 0;
        for (int w = 0; w < 8; ++w)
            ss += redd[w][lane], n1 += redn[w][lane], zeros += redi[w][lane];
        oz2_vsum v;
        v.emax = e, v.enorm = oz2_shift_base(amax, ss), v.n1 = n1, v.zeros = zeros;
        v.last = oz2_hist_last(hist[lane]);
        vb[j] = v;
    }
}

/* The maxima of r and q over every entry of C (oz2_guard_entry) into
 * st->rbits / qbits: tiles of 32×32 entries, their 64 histograms staged in
 * shared memory (B's padded: a warp reads 32 columns' bin d at once),
 * blocks striding over the tiles.  Nothing when the multiply is flagged
 * (non-finite). */
__global__ void __launch_bounds__(256) guard_pairs(int m, int n, int k, const oz2_vsum *va,
                                                   const int *ha, const oz2_vsum *vb,
                                                   const int *hb, status *st)
{
    if (*(volatile const unsigned int *)&st->flag)
        return;
    __shared__ int sha[32][OZ2_HIST_BINS], shb[32][OZ2_HIST_BINS + 1];
    __shared__ oz2_vsum sva[32], svb[32];
    __shared__ double redd[8];
    const int64_t tm = (m + 31) / 32, tn = (n + 31) / 32;
    double rmax = 0, qmax = 0;
    for (int64_t t = blockIdx.x; t < tm * tn; t += gridDim.x) {
        const int r0 = (int)(t / tn) * 32, c0 = (int)(t % tn) * 32;
        __syncthreads(); /* the previous tile's readers are done */
        for (int q = threadIdx.x; q < 32 * OZ2_HIST_BINS; q += 256) {
            const int x = q / OZ2_HIST_BINS, d = q % OZ2_HIST_BINS;
            sha[x][d] = r0 + x < m ? ha[(int64_t)(r0 + x) * OZ2_HIST_BINS + d] : 0;
            shb[x][d] = c0 + x < n ? hb[(int64_t)(c0 + x) * OZ2_HIST_BINS + d] : 0;
        }
        if (threadIdx.x < 32 && r0 + (int)threadIdx.x < m)
            sva[threadIdx.x] = va[r0 + threadIdx.x];
        else if (threadIdx.x >= 32 && threadIdx.x < 64 && c0 + (int)threadIdx.x - 32 < n)
            svb[threadIdx.x - 32] = vb[c0 + threadIdx.x - 32];
        __syncthreads();
        for (int q = threadIdx.x; q < 1024; q += 256) {
            const int x = q / 32, y = q % 32;
            if (r0 + x >= m || c0 + y >= n)
                continue;
            double r, qq;
            oz2_guard_entry(&sva[x], sha[x], &svb[y], shb[y], k, &r, &qq);
            rmax = fmax(rmax, r), qmax = fmax(qmax, qq);
        }
    }
    rmax = block_reduce<double, true>(rmax, redd);
    qmax = block_reduce<double, true>(qmax, redd);
    if (threadIdx.x == 0) {
        atomicMax(&st->rbits, (unsigned long long)__double_as_longlong(rmax));
        atomicMax(&st->qbits, (unsigned long long)__double_as_longlong(qmax));
    }
}

/* Flags the multiply from the host's verdict (ozaki2-auto's fallbacks). */
__global__ void set_flag(status *st, unsigned int why, int index, int lossy)
{
    flag(st, why, index, lossy, 0);
}

/* rows×n entries of C from the N products (product q at c32 + q·cstride,
 * ld n4: INT32 products, or INT8 residues written by the own GEMM):
 * symmetric residues, the CRT (ozaki2_mod.cuh), unscale, beta.  Nothing
 * when the range check flagged this multiply.  Columns along x, V per
 * thread (4 for INT8 residues: one 32-bit load per product; the ld and
 * the product stride are multiples of 16), rows along y (striding by
 * gridDim.y): no 64-bit division per entry. */
template <int N, typename R>
__global__ void __launch_bounds__(256) crt(int pi, int rows, int n, const R *c32,
                                           int64_t cstride, int n4, const int *sa, const int *sb,
                                           int beta, double *C, int64_t ldc, const status *st)
{
    if (*(volatile const unsigned int *)&st->flag)
        return;
    (void)pi;
    constexpr int V = sizeof(R) == 1 ? 4 : 1;
    const oz2_params &p = c_par[N - OZ2_MIN_MODULI]; /* compile-time: constant-bank operands */
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= n)
        return;
    int sbc[V];
#pragma unroll
    for (int q = 0; q < V; ++q)
        sbc[q] = c0 + q < n ? sb[c0 + q] : 0;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const R *src = c32 + (int64_t)r * n4 + c0;
        double *dst = C + (int64_t)r * ldc + c0;
        const int sar = sa[r];
        ozcrt::entries<N, V>(p, src, cstride, [&](int q, double x) {
            const double y = ldexp(x, -(sar + sbc[q]));
            if (c0 + q < n)
                dst[q] = beta ? dst[q] + y : y;
        });
    }
}

/* The native product when the range check flagged this multiply (else
 * every block returns at once): 64×64 tiles, 4×4 per thread, FP64 FMA,
 * blocks striding over the tiles.  Block 0 records the fallback. */
__global__ void __launch_bounds__(256) fallback(int m, int n, int k, const double *A, int64_t lda,
                                                const double *B, int64_t ldb, int beta, double *C,
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
    if (!compute) /* the production kernel, gated on the same flag, multiplies */
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
                int r = r0 + ty + 16 * a, c = c0 + tx + 16 * b;
                if (r < m && c < n) {
                    double *dst = C + (int64_t)r * ldc + c;
                    *dst = beta ? *dst + acc[a][b] : acc[a][b];
                }
            }
    }
}

} // namespace oz2

#endif
