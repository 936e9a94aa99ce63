/* ozaki2_mod.cuh — the modular arithmetic of the GPU's Ozaki-II kernels,
 * shared by the FP64 scheme (ozaki2_dev.cuh) and the FP32 one
 * (ozaki2_s_dev.cuh): four slices' residues packed into one word for the
 * slicing kernels (pack4) and the tiled pass that slices B's columns
 * (slice_col_tiles), and one entry of C from its N symmetric
 * residues for the CRT kernels (entry; entries reads them for four
 * columns or one).  Both keep the GPU's conversion
 * pipe (rint and int/float conversions, a quarter of the FMA pipe's rate)
 * out of the per-element work, where it used to take most of the time:
 *
 *   - residues from base-2^15 digits in FP32 and Garner's digits from
 *     prefix sums (ozaki2.h: oz2_digits_symmod, oz2_garner_digits, with
 *     their proofs of exactness), rounding by adding 1.5·2^23;
 *   - INT8 residues to FP32 and back through their bits (i8_to_f32, pack4);
 *   - Garner's digits combined three at a time in FP32 before the FP64
 *     sum: w = v_i + m_i·(v_{i+1} + m_{i+1}·v_{i+2}) is an integer of
 *     magnitude at most 128 + 256·(127 + 255·127) < 2^23 (symmetric
 *     residues, |v| ≤ 128, moduli ≤ 256), exact in FP32, so FP64 sees
 *     ⌈N/3⌉ terms of radix m_i·m_{i+1}·m_{i+2} < 2^24 (exact doubles)
 *     instead of N: fewer conversions and fewer FP64 roundings than
 *     oz2_garner, whose result it matches within them. */
#ifndef DD_OZAKI2_MOD_CUH
#define DD_OZAKI2_MOD_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "ozaki2.h"

namespace ozcrt
{

constexpr float ROUND_BIAS = 12582912.0f; /* 1.5·2^23: its FP32 ulp is 1 */

/* A residue in [-128, 127] (an int, sign-extended) as an exact float:
 * 1.5·2^23 + b has the bits 0x4B400000 + b. */
__device__ inline float i8_to_f32(int b)
{
    return __int_as_float(0x4B400000 + b) - ROUND_BIAS;
}

/* Byte q of w, sign-extended. */
__device__ inline int byte_s(uint32_t w, int q)
{
    return (int)(w << (24 - 8 * q)) >> 24;
}

/* Modulus q's residues of four scaled integers (their ND digits each,
 * oz2_digits15) as four INT8 bytes of one word, element e in byte e: the
 * residue r in [-128, 127] plus 1.5·2^23 has r's two's complement in its
 * low byte. */
template <int ND>
__device__ inline uint32_t pack4(const oz2_params &p, int q, const float (&d)[4][ND])
{
    uint32_t b[4];
#pragma unroll
    for (int e = 0; e < 4; ++e)
        b[e] = __float_as_uint(oz2_digits_symmod(d[e], ND, p.pw15[q], p.mf[q], p.rinvf[q]) +
                               ROUND_BIAS);
    return __byte_perm(__byte_perm(b[0], b[1], 0x0040), __byte_perm(b[2], b[3], 0x0040), 0x5410);
}

/* The slices of B's columns j0 .. j0+31 (B^T's rows: slice q, column
 * j0 + c at out + q·stride + (j0 + c)·kp, k contiguous), the part of
 * slice_cols (FP64 and FP32) after the scales: tiles of 64 rows of k
 * staged through shared memory (read row by row, coalesced: lane =
 * column, 8 warps), then thread (column c = t/16 and c + 16, group g =
 * t%16) slices the tile's elements 4g..4g+3 of its columns and writes one
 * 32-bit word per modulus, so that 16 threads write a column's 64 bytes
 * together.  scaled(v, c, &lossy) is the scaled integer of column c's
 * value v (as a double); bad[c] skips a column; the counts of lossy and
 * nonzero values per column land in lossy_out / nnz_out (after a barrier).
 * nm moduli; 256 threads, every one of them calls it. */
template <int ND, typename T, typename Scaled>
__device__ inline void slice_col_tiles(const T *B, int64_t ldb, int n, int k, int kp, int j0,
                                       const oz2_params &p, int nm, int8_t *out, int64_t stride,
                                       T (*tile)[33], const int *bad, Scaled scaled,
                                       int *lossy_out, int *nnz_out)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, j = j0 + lane;
    const bool ok = j < n;
    const int g = threadIdx.x & 15, c = threadIdx.x >> 4;
    int lossy[2] = {0, 0}, nnz[2] = {0, 0};
    for (int t0 = 0; t0 < kp; t0 += 64) {
        __syncthreads(); /* the caller's per-column values written, or the last tile consumed */
#pragma unroll
        for (int r = warp; r < 64; r += 8)
            tile[r][lane] = ok && t0 + r < k ? B[(int64_t)(t0 + r) * ldb + j] : T(0);
        __syncthreads();
        const int l0 = t0 + 4 * g;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int cc = c + 16 * h;
            if (bad[cc] || l0 >= kp)
                continue;
            float d[4][ND];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                int lo = 0;
                const T v = tile[4 * g + q][cc];
                oz2_digits15(scaled(v, cc, &lo), ND, d[q]);
                lossy[h] += lo;
                nnz[h] += v != T(0);
            }
            int8_t *dst = out + (int64_t)(j0 + cc) * kp + l0;
#pragma unroll
            for (int q = 0; q < nm; ++q)
                *reinterpret_cast<uint32_t *>(dst + q * stride) = pack4(p, q, d);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        for (int o = 8; o > 0; o >>= 1) { /* the 16 threads of a column: one half-warp */
            lossy[h] += __shfl_xor_sync(0xffffffffu, lossy[h], o);
            nnz[h] += __shfl_xor_sync(0xffffffffu, nnz[h], o);
        }
        if (g == 0)
            lossy_out[c + 16 * h] = lossy[h], nnz_out[c + 16 * h] = nnz[h];
    }
    __syncthreads();
}

/* The integer X, |X| < M/2, with X ≡ v_i (mod m_i) for the N symmetric
 * residues v (FP32 integers, overwritten by Garner's digits), as a double. */
template <int N> __device__ inline double entry(const oz2_params &p, float (&v)[N])
{
    oz2_garner_digits(&p, N, v); /* ozaki2.h: i FMAs and two reductions for digit i */
    constexpr int G = (N + 2) / 3; /* groups of three digits, the last one shorter */
    float w[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int i = 3 * g;
        float x = v[i];
        if (i + 2 < N)
            x = fmaf(p.mf[i], fmaf(p.mf[i + 1], v[i + 2], v[i + 1]), x);
        else if (i + 1 < N)
            x = fmaf(p.mf[i], v[i + 1], x);
        w[g] = x;
    }
    double x = (double)w[G - 1];
#pragma unroll
    for (int g = G - 2; g >= 0; --g) {
        const int i = 3 * g;
        x = fma(p.m[i] * p.m[i + 1] * p.m[i + 2], x, (double)w[g]);
    }
    return x;
}

/* The CRT's integers for V adjacent entries of C from their N products,
 * product i at src + i·cstride: V = 4 for INT8 residues (the own GEMM's
 * output, one 32-bit load per product for four columns), V = 1 for INT32
 * products (their symmetric residues taken first), each handed to
 * put(q, integer) as soon as it is known, for the caller to scale back and
 * store (one column's value live at a time, as in a loop of its own). */
template <int N, int V, typename R, typename Put>
__device__ inline void entries(const oz2_params &p, const R *src, int64_t cstride, Put &&put)
{
    if constexpr (V == 4) {
        uint32_t wv[N];
#pragma unroll
        for (int i = 0; i < N; ++i)
            wv[i] = *reinterpret_cast<const uint32_t *>(src + i * cstride);
#pragma unroll
        for (int q = 0; q < V; ++q) {
            float v[N];
#pragma unroll
            for (int i = 0; i < N; ++i)
                v[i] = i8_to_f32(byte_s(wv[i], q));
            put(q, entry<N>(p, v));
        }
    } else {
        float v[N];
#pragma unroll
        for (int i = 0; i < N; ++i)
            v[i] = (float)oz2_symmod((double)src[i * cstride], p.m[i], p.rinv[i]);
        put(0, entry<N>(p, v));
    }
}

} // namespace ozcrt

#endif
