/* sgemm_simt_tile.cuh — what sgemm_simt's two kernels share: the block
 * and warp tiling, a lane's place in its block and the store of its 8×8
 * tile into C.  The lean kernel is kernels/sgemm_simt.cu's, the general one
 * kernels/sgemm_simt_general.cu's (sgemm_simt.cu's head says why the
 * kernel is shaped so). */
#ifndef DD_SGEMM_SIMT_TILE_CUH
#define DD_SGEMM_SIMT_TILE_CUH

#include "gemm_common.cuh"

namespace simt
{

/* ---- the warp tiling both kernels share -------------------------------- */

constexpr int BM = 128, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 32 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */

/* A lane's 8×8 thread tile: GROUPS groups of G floats (one 16-byte vector)
 * a side, GSM rows and GSN columns apart. */
struct Lane {
    static constexpr int G = 4;             /* floats per 16-byte vector */
    static constexpr int GROUPS = 8 / G;    /* vector groups per thread-tile side */
    static constexpr int GSM = WM / GROUPS; /* distance between a lane's row groups */
    static constexpr int GSN = WN / GROUPS; /* ... and column groups */
    static_assert(LANES_M * G * GROUPS == WM && LANES_N * G * GROUPS == WN, "thread tile");
};
constexpr int G = Lane::G, GROUPS = Lane::GROUPS, GSM = Lane::GSM, GSN = Lane::GSN;

/* Where a block and a lane work: the block's tile origin (grouped block
 * order) and the first of the lane's rows and columns in it. */
struct Place {
    int m0, n0, arow, bcol;
    __device__ __forceinline__ Place(int M, int N)
    {
        int bm, bn;
        dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
        m0 = bm * BM, n0 = bn * BN;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int lm = lane / LANES_N, ln = lane % LANES_N;
        arow = (warp % WARPS_M) * WM + lm * G;
        bcol = (warp / WARPS_M) * WN + ln * G;
    }
};

/* The lane's 8×8 accumulators into C (beta 0: C = acc; beta 1: C += acc). */
template <bool VEC>
__device__ __forceinline__ void store_tile(const float (&acc)[8][8], float *__restrict__ C,
                                           int64_t ldc, int M, int N, int m0, int n0, int arow,
                                           int bcol, int beta)
{
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 the loads of C for
         * four rows are all issued before the first add (instead of one
         * round trip to memory per 16-byte group). */
        typedef float4 V;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            V old[4][GROUPS];
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                const float *crow =
                    C + (int64_t)(m0 + arow + (i / G) * GSM + (i % G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GROUPS; ++g)
                    if (beta)
                        old[ii][g] = *reinterpret_cast<const V *>(crow + g * GSN);
            }
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                float *crow = C + (int64_t)(m0 + arow + (i / G) * GSM + (i % G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GROUPS; ++g) {
                    V v;
                    float *vs = reinterpret_cast<float *>(&v);
                    const float *os = reinterpret_cast<const float *>(&old[ii][g]);
#pragma unroll
                    for (int e = 0; e < G; ++e)
                        vs[e] = beta ? acc[i][g * G + e] + os[e] : acc[i][g * G + e];
                    *reinterpret_cast<V *>(crow + g * GSN) = v;
                }
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + arow + (i / G) * GSM + (i % G);
        if (row >= M)
            continue;
        float *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < GROUPS; ++g)
            dd::store_row_group<float, G, VEC>(crow, n0 + bcol + g * GSN, N, &acc[i][g * G], beta);
    }
}

namespace general
{
/* The general kernel's launcher (kernels/sgemm_simt_general.cu): any
 * alignment of B and C, any compute capability the build has code for. */
int launch(DD_LAUNCHER_ARGS(float));
} // namespace general

} // namespace simt

#endif
