/* warptile.cuh — the SIMT warp tiling that the FP32 kernels 07/17
 * (07_warptile.cu) and 19 (19_sgemm_lean.cu) share: a 128×128 block of
 * 4 × 2 warps of 32×64, each lane an 8×8 thread tile made of 16-byte
 * groups spread over the warp tile; where a block and a lane work, and the
 * lane's accumulators into C. */
#pragma once

#include "gemm_common.cuh"

namespace dd_wt
{

constexpr int BM = 128, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 32 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */

/* A lane's 8×8 thread tile of T: GROUPS groups of G elements (one 16-byte
 * vector) a side, GSM rows and GSN columns apart. */
template <typename T> struct Lane {
    static constexpr int G = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    static constexpr int GROUPS = 8 / G;          /* vector groups per thread-tile side */
    static constexpr int GSM = WM / GROUPS;       /* distance between a lane's row groups */
    static constexpr int GSN = WN / GROUPS;       /* ... and column groups */
    static_assert(LANES_M * G * GROUPS == WM && LANES_N * G * GROUPS == WN, "thread tile");
};

/* Where a block and a lane work: the block's tile origin (grouped block
 * order) and the first of the lane's rows and columns in it. */
template <typename L> struct Place {
    int m0, n0, arow, bcol;
    __device__ __forceinline__ Place(int M, int N)
    {
        int bm, bn;
        dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
        m0 = bm * BM, n0 = bn * BN;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int lm = lane / LANES_N, ln = lane % LANES_N;
        arow = (warp % WARPS_M) * WM + lm * L::G;
        bcol = (warp / WARPS_M) * WN + ln * L::G;
    }
};

/* The lane's 8×8 accumulators into C (beta 0: C = acc; beta 1: C += acc). */
template <typename T, typename L, bool VEC>
__device__ __forceinline__ void store_tile(const T (&acc)[8][8], T *__restrict__ C, int64_t ldc,
                                           int M, int N, int m0, int n0, int arow, int bcol,
                                           int beta)
{
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 the loads of C for
         * four rows are all issued before the first add (instead of one
         * round trip to memory per 16-byte group). */
        typedef typename dd::vec16<T>::type V;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            V old[4][L::GROUPS];
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                const T *crow =
                    C + (int64_t)(m0 + arow + (i / L::G) * L::GSM + (i % L::G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < L::GROUPS; ++g)
                    if (beta)
                        old[ii][g] = *reinterpret_cast<const V *>(crow + g * L::GSN);
            }
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                T *crow =
                    C + (int64_t)(m0 + arow + (i / L::G) * L::GSM + (i % L::G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < L::GROUPS; ++g) {
                    V v;
                    T *vs = reinterpret_cast<T *>(&v);
                    const T *os = reinterpret_cast<const T *>(&old[ii][g]);
#pragma unroll
                    for (int e = 0; e < L::G; ++e)
                        vs[e] = beta ? acc[i][g * L::G + e] + os[e] : acc[i][g * L::G + e];
                    *reinterpret_cast<V *>(crow + g * L::GSN) = v;
                }
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + arow + (i / L::G) * L::GSM + (i % L::G);
        if (row >= M)
            continue;
        T *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < L::GROUPS; ++g)
            dd::store_row_group<T, L::G, VEC>(crow, n0 + bcol + g * L::GSN, N, &acc[i][g * L::G],
                                              beta);
    }
}

} // namespace dd_wt
