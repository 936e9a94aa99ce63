/* dmma_core.cuh — the FP64 tensor-core GEMM of 08_dmma as a template
 * (block and warp tiles, BK, stages, fragment pipelining), so that rungs
 * which change only its configuration (09_dmma_occ) share its code.  The
 * design and its measurements: kernels/08_dmma.cu's header. */
#ifndef DD_DMMA_CORE_CUH
#define DD_DMMA_CORE_CUH

#include "gemm_common.cuh"
#include "ladder.h"

namespace dd_dmma
{

constexpr int GROUP_M = 8;

/* Block = WARPS_M × WARPS_N warp tiles of WM × WN (rows × columns of C);
 * production: 2 × 4 warps of 64 × 32, a 128×128 block. */
template <int BK_, int STAGES_, int WARPS_M_ = 2, int WARPS_N_ = 4, bool PIPE_ = false,
          int WM_ = 64, int WN_ = 32>
struct Cfg {
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int MT = WM / 8,
                         NT = WN / 16; /* mma tiles per warp: along m (mma n), along n (mma m) */
    static constexpr int BK = BK_, STAGES = STAGES_;
    static constexpr bool PIPE = PIPE_; /* fragments double-buffered across k steps */
    static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int BM = WM * WARPS_M, BN = WN * WARPS_N;
    /* Registers: 8 per mma tile of accumulators, plus fragments and addresses. */
    static constexpr int MIN_BLOCKS = (MT * NT * 8 + 64) * THREADS > 65536
                                          ? 1
                                          : 65536 / ((MT * NT * 8 + 64) * THREADS);
    static constexpr int SA = BK + 8; /* doubles; 2·SA ≡ 16 (mod 32) banks */
    static constexpr int SB = BN + 2; /* doubles; 2·SB ≡ 4 (mod 16) banks */
    static constexpr int A_ELEMS = BM * SA, B_ELEMS = BK * SB;
    static constexpr int STAGE = A_ELEMS + B_ELEMS;
    static constexpr int SMEM = STAGES * STAGE * 8;
    static_assert(BK % 16 == 0, "padding arithmetic assumes BK multiple of 16");
    static_assert((A_ELEMS * 8) % 16 == 0 && (STAGE * 8) % 16 == 0, "16-byte aligned regions");
};

/* D = A·B + D for one 16×8×8 FP64 tile.  sm_90 has the shape natively;
 * sm_80 gets the same fragments through four m8n8k4 (its native DMMA: the
 * register layouts nest exactly); earlier GPUs have no FP64 mma (the
 * launcher refuses them). */
__device__ __forceinline__ void dmma_16x8x8(double (&c)[4], const double (&a)[4],
                                            const double (&b)[2])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DD_MMA884(c0, c1, a, b)                                                                    \
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"          \
        : "+d"(c0), "+d"(c1)                                                                       \
        : "d"(a), "d"(b))
    DD_MMA884(c[0], c[1], a[0], b[0]); /* rows g,   k t   */
    DD_MMA884(c[0], c[1], a[2], b[1]); /* rows g,   k t+4 */
    DD_MMA884(c[2], c[3], a[1], b[0]); /* rows g+8, k t   */
    DD_MMA884(c[2], c[3], a[3], b[1]); /* rows g+8, k t+4 */
#undef DD_MMA884
#elif defined(__CUDA_ARCH__)
    (void)c, (void)a, (void)b;
    __trap();
#endif
}

/* Global -> shared copies of one thread, tile after tile.  Everything that
 * does not change along K (row pointers, which rows and columns exist) is
 * worked out once; per tile there remain a K test and pointer increments. */
template <typename L, bool VEC> struct Copier {
    static constexpr int W = VEC ? 2 : 1;         /* doubles per copy */
    static constexpr int ACPR = L::BK / W;        /* copies per row of the A tile */
    static constexpr int BCPR = L::BN / W;        /* copies per row of the B tile */
    static constexpr int ARS = L::THREADS / ACPR; /* A rows per pass */
    static constexpr int BRS = L::THREADS / BCPR; /* B rows per pass */
    static constexpr int APASS = L::BM / ARS, BPASS = L::BK / BRS;
    static_assert(L::THREADS % ACPR == 0 && L::THREADS % BCPR == 0, "copy mapping");
    static_assert(APASS <= 32, "row mask");

    const double *a, *b; /* this thread's first element of the next tile */
    unsigned a_rows;     /* bit p: the row of pass p exists */
    int a_col, b_row;    /* column of A / row of B within the tile */
    int b_bytes;         /* bytes of this thread's B piece inside N */
    int k0;              /* K index of the next tile */
    /* Shared offsets are recomputed from threadIdx at each copy, and the
     * pointer strides from lda/ldb (kernel parameters, in the constant
     * bank): registers are the scarce resource of this kernel. */

    __device__ __forceinline__ Copier(const double *A, int64_t lda, const double *B, int64_t ldb,
                                      int M, int N, int m0, int n0)
    {
        const int tid = threadIdx.x;
        a_col = (tid % ACPR) * W;
        const int ar = tid / ACPR;
        a = A + (int64_t)(m0 + ar) * lda + a_col;
        a_rows = 0;
#pragma unroll
        for (int p = 0; p < APASS; ++p)
            a_rows |= (m0 + ar + p * ARS < M ? 1u : 0u) << p;
        const int bc = (tid % BCPR) * W;
        b_row = tid / BCPR;
        b = B + (int64_t)b_row * ldb + n0 + bc;
        int nb = (N - n0 - bc) * 8;
        b_bytes = nb < 0 ? 0 : (nb > W * 8 ? W * 8 : nb);
        k0 = 0;
    }

    /* Issue the copies of the next tile into stage st, and move on. */
    __device__ __forceinline__ void copy(double *st, int K, int64_t lda, int64_t ldb)
    {
        const int tid = threadIdx.x;
        double *sa = st + (tid / ACPR) * L::SA + (tid % ACPR) * W;
        double *sb = st + L::A_ELEMS + (tid / BCPR) * L::SB + (tid % BCPR) * W;
        int kb = (K - k0 - a_col) * 8;
        kb = kb < 0 ? 0 : (kb > W * 8 ? W * 8 : kb);
#pragma unroll
        for (int p = 0; p < APASS; ++p) {
            const int bytes = (a_rows >> p) & 1 ? kb : 0;
            if (VEC)
                dd::cp_async16(sa + p * ARS * L::SA, a + p * ARS * lda, bytes);
            else
                dd::cp_async8(sa + p * ARS * L::SA, a + p * ARS * lda, bytes);
        }
        const int rows_left = K - k0 - b_row; /* rows of this thread's first B copy that exist */
#pragma unroll
        for (int p = 0; p < BPASS; ++p) {
            const int bytes = p * BRS < rows_left ? b_bytes : 0;
            if (VEC)
                dd::cp_async16(sb + p * BRS * L::SB, b + p * BRS * ldb, bytes);
            else
                dd::cp_async8(sb + p * BRS * L::SB, b + p * BRS * ldb, bytes);
        }
        a += L::BK;
        b += L::BK * ldb;
        k0 += L::BK;
    }
};

/* One k8 step's fragments of a warp.  The mma computes C^T = B^T·A^T
 * (see the header): its A operand is B^T (one per 16 columns of C), read
 * from sB; its B operand is A^T (one per 8 rows of C), read from sA.  Each
 * 16-byte load lands in operand order, so no register moves are needed. */
template <typename L>
__device__ __forceinline__ void load_frags(const double *st, int fa_off, int fb_off, int kk,
                                           double (&fa)[L::NT][4], double (&fb)[L::MT][2])
{
#pragma unroll
    for (int i = 0; i < L::NT; ++i) {
        /* (a0, a1): k row 2t, columns 2g, 2g+1 (rows g, g+8 of the mma);
         * (a2, a3): k row 2t+1 (logical k t+4). */
        const double *p = st + fa_off + 8 * kk * L::SB + 16 * i;
        double2 lo = *reinterpret_cast<const double2 *>(p);
        double2 hi = *reinterpret_cast<const double2 *>(p + L::SB);
        fa[i][0] = lo.x, fa[i][1] = lo.y, fa[i][2] = hi.x, fa[i][3] = hi.y;
    }
#pragma unroll
    for (int j = 0; j < L::MT; ++j) {
        /* (b0, b1): row g of this 8-row slice of A, k 2t and 2t+1 (logical t, t+4) */
        double2 v = *reinterpret_cast<const double2 *>(st + fb_off + 8 * j * L::SA + 8 * kk);
        fb[j][0] = v.x, fb[j][1] = v.y;
    }
}

/* A warp's accumulators, [8-row slice][16-column slice][mma register]. */
template <typename L> __device__ __forceinline__ void zero_acc(double (&acc)[L::MT][L::NT][4])
{
#pragma unroll
    for (int j = 0; j < L::MT; ++j)
#pragma unroll
        for (int i = 0; i < L::NT; ++i)
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
 * of FP64 or (24) FP32, each value rounded once.  acc[j][i] is the mma
 * tile D = C^T for C rows 8j + (0..7) and C columns 16i + (0..15) of the
 * warp tile: c0 = D[g][2t] is C column 2g of the row crow0 + 8j (crow0
 * carries the lane's row), c1 the row HSTEP further; c2, c3 column 2g+1.
 * So (c0, c2) and (c1, c3) are pairs of adjacent columns: one vector store
 * each (VEC: C's rows pair-aligned).  08 takes HSTEP 1 (rows 2t, 2t+1), 10
 * HSTEP 4 (rows t, t+4: its shared-memory row order, see 10_dmma_tma.cu). */
template <typename L, bool VEC, int HSTEP, typename TC = double>
__device__ __forceinline__ void store_acc(const double (&acc)[L::MT][L::NT][4], TC *__restrict__ C,
                                          int64_t ldc, int M, int N, int m0, int n0, int crow0,
                                          int ccol0, int beta)
{
    constexpr int BM = L::BM, BN = L::BN, MT = L::MT, NT = L::NT;
    typedef typename pair_of<TC>::type P;
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 all loads of C
         * issued before the first add (in two halves, to bound registers),
         * so the block waits for global memory once per half, not per row. */
        TC *cb = C + (int64_t)crow0 * ldc + ccol0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            /* FP32 C (24) reads old as beta ? C : 0 and FP64 C under if
             * (beta): at 255 registers each form keeps its kernel's spills
             * as measured, the other form adds 200-500 bytes of them. */
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

template <typename L, bool VEC>
__global__ void __launch_bounds__(L::THREADS, L::MIN_BLOCKS)
    dmma_kernel(int M, int N, int K, const double *__restrict__ A, int64_t lda,
                const double *__restrict__ B, int64_t ldb, int beta, double *__restrict__ C,
                int64_t ldc)
{
    constexpr int BK = L::BK, STAGES = L::STAGES, BM = L::BM, BN = L::BN, KK = BK / 8;
    constexpr int WARPS_M = L::WARPS_M, WM = L::WM, WN = L::WN, MT = L::MT, NT = L::NT;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    double *smem = reinterpret_cast<double *>(smem_raw);

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    int bm, bn;
    dd::raster_grouped<GROUP_M>(grid_m, grid_n, &bm, &bn);
    const int m0 = bm * BM, n0 = bn * BN;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int g = lane / 4, t = lane % 4; /* mma "groupID" and "threadID_in_group" */

    /* Per-lane offsets (doubles) inside a stage for the fragment loads. */
    const int fa_off = L::A_ELEMS + (2 * t) * L::SB + wn * WN + 2 * g; /* + 8kk·SB + 16i (sB) */
    const int fb_off = (wm * WM + g) * L::SA + 2 * t;                  /* + 8j·SA + 8kk (sA) */

    double acc[MT][NT][4]; /* [8-row slice j][16-column slice i] */
    zero_acc<L>(acc);

    Copier<L, VEC> cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles)
            cp.copy(smem + s * L::STAGE, K, lda, ldb);
        dd::cp_async_commit();
    }
    dd::cp_async_wait<STAGES - 2>();
    __syncthreads();

    int rs = 0, ws = STAGES - 1; /* stage read, stage written next */
    if (L::PIPE) {
        /* Software pipeline: the fragments of step kk+1 are read while the
         * mma of step kk run, across the stage boundary too (the barrier for
         * the next stage sits before the last step's mma, as in CUTLASS). */
        double fa[2][NT][4], fb[2][MT][2];
        load_frags<L>(smem, fa_off, fb_off, 0, fa[0], fb[0]);
        for (int kt = 0; kt < tiles; ++kt) {
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                if (kk == KK - 1) {
                    dd::cp_async_wait<STAGES - 2>(); /* tile kt+1 has landed ... */
                    __syncthreads();                 /* ... for everyone; stage kt-1 is free */
                    rs = rs + 1 == STAGES ? 0 : rs + 1;
                }
                load_frags<L>(smem + rs * L::STAGE, fa_off, fb_off, (kk + 1) % KK, fa[(kk + 1) & 1],
                              fb[(kk + 1) & 1]);
                if (kk == 0) {
                    if (kt + STAGES - 1 < tiles)
                        cp.copy(smem + ws * L::STAGE, K, lda, ldb);
                    dd::cp_async_commit();
                    ws = ws + 1 == STAGES ? 0 : ws + 1;
                }
#pragma unroll
                for (int j = 0; j < MT; ++j)
#pragma unroll
                    for (int i = 0; i < NT; ++i)
                        dmma_16x8x8(acc[j][i], fa[kk & 1][i], fb[kk & 1][j]);
            }
        }
    } else {
        /* One barrier per tile, at its start; fragments loaded just before use. */
        for (int kt = 0; kt < tiles; ++kt) {
            if (kt > 0) {
                dd::cp_async_wait<STAGES - 2>();
                __syncthreads();
            }
            if (kt + STAGES - 1 < tiles)
                cp.copy(smem + ws * L::STAGE, K, lda, ldb);
            dd::cp_async_commit();
            ws = ws + 1 == STAGES ? 0 : ws + 1;
            const double *st = smem + rs * L::STAGE;
            rs = rs + 1 == STAGES ? 0 : rs + 1;
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                double fa[NT][4], fb[MT][2];
                load_frags<L>(st, fa_off, fb_off, kk, fa, fb);
#pragma unroll
                for (int j = 0; j < MT; ++j)
#pragma unroll
                    for (int i = 0; i < NT; ++i)
                        dmma_16x8x8(acc[j][i], fa[i], fb[j]);
            }
        }
    }
    dd::cp_async_wait<0>();

    store_acc<L, VEC, 1>(acc, C, ldc, M, N, m0, n0, m0 + wm * WM + 2 * t, n0 + wn * WN + 2 * g,
                         beta);
}

template <typename L> int launch_cfg(DD_LAUNCHER_ARGS(double))
{
    constexpr int BM = L::BM, BN = L::BN;
    static unsigned long long smem_set[2];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    int dev = 0, major = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess)
        return e;
    if (major < 8) /* no FP64 tensor cores */
        return cudaErrorNotSupported;
    const bool vec = dd::vec16_ok<double>(A, lda) && dd::vec16_ok<double>(B, ldb) &&
                     dd::vec16_ok<double>(C, ldc);
    auto kern = vec ? dmma_kernel<L, true> : dmma_kernel<L, false>;
    if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, L::THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta,
                                                       C, ldc);
    return dd::launch_status();
}

} // namespace dd_dmma

#endif
