/* dmma_tile.cuh — the block tile of the FP64 tensor-core kernels
 * (dgemm_dmma.cu's two paths, and sgemm_dmma.cu through dmma_gemm.cuh): a
 * 128×128 block of C computed by 8 warps of 64×32 (2 down, 4 across) with
 * mma.sync on C^T = B^T·A^T, the warp's accumulators, and their store into
 * C. */
#ifndef DD_DMMA_TILE_CUH
#define DD_DMMA_TILE_CUH

#include "gemm_common.cuh"

namespace dd_dmma
{

constexpr int GROUP_M = 8; /* rasterisation: block-rows walked together */

/* The block: WARPS_M × WARPS_N warp tiles of WM × WN (rows × columns of C).
 * A warp holds MT × NT mma tiles of accumulators: MT slices of 8 rows
 * (the mma's n) by NT slices of 16 columns (the mma's m), 64 doubles a
 * lane. */
struct Tile {
    static constexpr int WM = 64, WN = 32;
    static constexpr int MT = WM / 8, NT = WN / 16;
    static constexpr int WARPS_M = 2, WARPS_N = 4;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int BM = WM * WARPS_M, BN = WN * WARPS_N;
};

/* A warp's accumulators, [8-row slice][16-column slice][mma register]. */
__device__ __forceinline__ void zero_acc(double (&acc)[Tile::MT][Tile::NT][4])
{
#pragma unroll
    for (int j = 0; j < Tile::MT; ++j)
#pragma unroll
        for (int i = 0; i < Tile::NT; ++i)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[j][i][r] = 0.0;
}

/* Two adjacent C values as one vector (16 bytes of FP64, 8 of FP32). */
template <typename TC> struct pair_of;
template <> struct pair_of<double> {
    typedef double2 type;
};
template <> struct pair_of<float> {
    typedef float2 type;
};

/* The warp's accumulators into C (beta 0: C = acc; beta 1: C += acc), C
 * of FP64 or (sgemm_dmma) FP32, each value rounded once.  acc[j][i] is the
 * mma tile D = C^T for C rows 8j + (0..7) and C columns 16i + (0..15) of
 * the warp tile: c0 = D[g][2t] is C column 2g of the row crow0 + 8j (crow0
 * carries the lane's row), c1 the row HSTEP further; c2, c3 column 2g+1.
 * So (c0, c2) and (c1, c3) are pairs of adjacent columns: one vector store
 * each (VEC: C's rows pair-aligned).  The cp.async path takes HSTEP 1
 * (rows 2t, 2t+1), the TMA path HSTEP 4 (rows t, t+4: its shared-memory
 * row order, see dmma_gemm.cuh). */
template <bool VEC, int HSTEP, typename TC = double>
__device__ __forceinline__ void store_acc(const double (&acc)[Tile::MT][Tile::NT][4],
                                          TC *__restrict__ C, int64_t ldc, int M, int N, int m0,
                                          int n0, int crow0, int ccol0, int beta)
{
    constexpr int BM = Tile::BM, BN = Tile::BN, MT = Tile::MT, NT = Tile::NT;
    typedef typename pair_of<TC>::type P;
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 all loads of C
         * issued before the first add (in two halves, to bound registers),
         * so the block waits for global memory once per half, not per row. */
        TC *cb = C + (int64_t)crow0 * ldc + ccol0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            /* FP32 C reads old as beta ? C : 0 and FP64 C under if (beta):
             * at 255 registers each form keeps its kernel free of extra
             * spills, the other form adds 200-500 bytes of them. */
            constexpr bool SELECT = sizeof(TC) == 4;
            P old[MT / 2][2][NT];
#pragma unroll
            for (int jj = 0; jj < MT / 2; ++jj)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int i = 0; i < NT; ++i) {
                        const P *p = reinterpret_cast<const P *>(
                            cb + (int64_t)(8 * (half * MT / 2 + jj) + HSTEP * h) * ldc + 16 * i);
                        if (SELECT)
                            old[jj][h][i] = beta ? *p : P{};
                        else if (beta)
                            old[jj][h][i] = *p;
                    }
#pragma unroll
            for (int jj = 0; jj < MT / 2; ++jj)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int i = 0; i < NT; ++i) {
                        const int j = half * MT / 2 + jj;
                        double x = acc[j][i][h], y = acc[j][i][2 + h];
                        if (beta)
                            x += (double)old[jj][h][i].x, y += (double)old[jj][h][i].y;
                        P v;
                        v.x = (TC)x, v.y = (TC)y;
                        *reinterpret_cast<P *>(cb + (int64_t)(8 * j + HSTEP * h) * ldc + 16 * i) =
                            v;
                    }
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = crow0 + 8 * j + HSTEP * h;
            if (row >= M)
                continue;
            TC *crow = C + (int64_t)row * ldc;
#pragma unroll
            for (int i = 0; i < NT; ++i) {
                const int col = ccol0 + 16 * i;
                if (VEC && col + 2 <= N) {
                    P *p = reinterpret_cast<P *>(crow + col), v;
                    double x = acc[j][i][h], y = acc[j][i][2 + h];
                    if (beta)
                        v = *p, x += (double)v.x, y += (double)v.y;
                    v.x = (TC)x, v.y = (TC)y;
                    *p = v;
                } else {
#pragma unroll
                    for (int q = 0; q < 2; ++q)
                        if (col + q < N) {
                            double x = acc[j][i][2 * q + h];
                            if (beta)
                                x += (double)crow[col + q];
                            crow[col + q] = (TC)x;
                        }
                }
            }
        }
}

} // namespace dd_dmma

#endif
