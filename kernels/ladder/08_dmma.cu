/* 08_dmma — FP64 on the tensor cores: mma.sync m16n8k8 f64, fed by a
 * multi-stage cp.async pipeline through padded shared memory (Hopper has
 * no FP64 wgmma; DMMA through mma.sync is its FP64 tensor path, 67 TFLOP/s
 * on the datasheet against 34 for FP64 FMA on the CUDA cores).
 *
 * What it changes, against 07:
 *  - the multiply: a warp issues mma.sync.aligned.m16n8k8 (PTX ISA 7.8,
 *    sm_90), each 1024 FP64 multiply-adds, instead of 32 lanes' FMAs; the
 *    sm_80 m8n8k4 would need 4 instructions for the same work.
 *  - tiles: block 128×128, 8 warps of 64×32 (2 down, 4 across), 16 mma
 *    tiles = 64 accumulators per lane.  BK = 32, 3 stages of cp.async in
 *    flight (72.5 KB a stage, 217 KB in all, 1 block of 256 threads per SM).
 *  - roles swapped: the mma computes C^T = B^T·A^T.  Its A operand (16×8,
 *    four registers a lane) comes from B and its B operand (8×8, two
 *    registers) from A.  With k permuted inside each k8 step (the mma's
 *    logical k = t + 4v, t = lane%4, v = register, lives in shared column
 *    2t + v, for A and B alike: a bijection, the product is unchanged) and
 *    the 16 mma rows (= C columns) permuted to 2g + h, every operand is one
 *    or two 16-byte shared loads that land in the registers in the order
 *    the instruction reads them.  (Computing C = A·B directly needs the two
 *    halves of each 16-byte load in different operand slots: the compiler
 *    then spent ten register moves per mma, the first version's bottleneck.)
 *    Per k8 a warp issues 12 16-byte loads for 16 mma.
 *  - software pipeline: the fragments of k step s+1 are loaded while the
 *    mma of step s issue, across the stage boundary too: the barrier for
 *    the next stage comes before the last step's mma (CUTLASS's order).
 *  - padding instead of swizzling: A rows are BK+8 doubles (row stride ≡ 16
 *    banks, so the two rows of a quarter-warp's 16-byte loads take disjoint
 *    halves of the banks), B rows BN+2 (so the four k rows a quarter-warp
 *    reads land in four different 8-bank groups).
 *  - epilogue: each lane holds pairs of adjacent columns (16-byte stores,
 *    128 contiguous bytes per row across a warp); for a tile wholly inside
 *    C the beta-1 loads of C are all issued before the first add.
 *  - grouped block order as in 07.
 * Edges: cp.async with src-size 0 / 8 zero-fills rows and columns beyond
 * M, N, K, so the main loop has no special case; edge tiles take guarded
 * stores.  Misaligned A, B or C (odd ld, or a base not 16-byte aligned)
 * selects the instantiation with 8-byte copies and scalar stores.
 *
 * Why it should help: per SM the tensor cores do twice the FP64 work of
 * the FMA units, so the kernel is limited by feeding them: 128×128 tiles
 * cut global (L2) traffic to 16 flop per byte, the pipeline covers the L2
 * latency, and the shared-memory loads need about half of the bandwidth
 * the DMMA rate allows.  What is left: with 8 warps per SM (240 registers a
 * thread) the tensor pipe idles while a warp waits at the barrier, and the
 * beta-1 epilogue of a 1024-deep SUMMA panel is not overlapped with work. */
#include "ladder.cuh"

namespace dd
{
namespace
{

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* cp.async: global -> shared without passing through registers.  src_bytes
 * below the copy size zero-fills the rest (0 reads nothing: edge tiles).
 * Before sm_80 there is no cp.async: the same copy is done synchronously,
 * which keeps the kernels correct (the barriers order it) if slower. */
template <int BYTES>
__device__ __forceinline__ void cp_async(void *smem, const void *gmem, int src_bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                     "l"(gmem), "r"(src_bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)),
                     "l"(gmem), "n"(BYTES), "r"(src_bytes)
                     : "memory");
#else
    unsigned char *d = static_cast<unsigned char *>(smem);
    const unsigned char *s = static_cast<const unsigned char *>(gmem);
    for (int i = 0; i < BYTES; ++i)
        d[i] = i < src_bytes ? s[i] : 0;
#endif
}
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    cp_async<16>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async8(void *smem, const void *gmem, int src_bytes)
{
    cp_async<8>(smem, gmem, src_bytes);
}
__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* Grouped rasterisation: consecutive block ids walk down GROUP block-rows
 * before moving right, so the blocks resident at one time share A row
 * panels and B column panels in L2 (plain row order streams all of B once
 * per block-row).  bid: the tile's place in that order (default: this
 * block's id). */
template <int GROUP>
__device__ __forceinline__ void raster_grouped(int grid_m, int grid_n, int *bm, int *bn,
                                               int bid = blockIdx.x)
{
    int per_group = GROUP * grid_n;
    int group = bid / per_group;
    int first_m = group * GROUP;
    int rows = min(grid_m - first_m, GROUP);
    int in_group = bid - group * per_group;
    *bm = first_m + in_group % rows;
    *bn = in_group / rows;
}

} // namespace
} // namespace dd

namespace
{
namespace dd_dmma
{

constexpr int GROUP_M = 8;

/* Block = WARPS_M × WARPS_N warp tiles of WM × WN (rows × columns of C):
 * 2 × 4 warps of 64 × 32, a 128×128 block. */
template <int BK_, int STAGES_, int WARPS_M_ = 2, int WARPS_N_ = 4, int WM_ = 64, int WN_ = 32>
struct Cfg {
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int MT = WM / 8,
                         NT = WN / 16; /* mma tiles per warp: along m (mma n), along n (mma m) */
    static constexpr int BK = BK_, STAGES = STAGES_;
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

/* The warp's accumulators into C (beta 0: C = acc; beta 1: C += acc).
 * acc[j][i] is the mma tile D = C^T for C rows 8j + (0..7) and C columns
 * 16i + (0..15) of the warp tile: c0 = D[g][2t] is C column 2g of the row
 * crow0 + 8j (crow0 carries the lane's row 2t), c1 the row HSTEP = 1
 * further; c2, c3 column 2g+1.  So (c0, c2) and (c1, c3) are pairs of
 * adjacent columns: one 16-byte store each (VEC: C's rows 16-byte aligned). */
template <typename L, bool VEC, int HSTEP>
__device__ __forceinline__ void store_acc(const double (&acc)[L::MT][L::NT][4],
                                          double *__restrict__ C, int64_t ldc, int M, int N, int m0,
                                          int n0, int crow0, int ccol0, int beta)
{
    typedef double TC;
    constexpr int BM = L::BM, BN = L::BN, MT = L::MT, NT = L::NT;
    typedef double2 P;
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 all loads of C
         * issued before the first add (in two halves, to bound registers),
         * so the block waits for global memory once per half, not per row. */
        TC *cb = C + (int64_t)crow0 * ldc + ccol0;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            P old[MT / 2][2][NT];
#pragma unroll
            for (int jj = 0; jj < MT / 2; ++jj)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int i = 0; i < NT; ++i) {
                        const P *p = reinterpret_cast<const P *>(
                            cb + (int64_t)(8 * (half * MT / 2 + jj) + HSTEP * h) * ldc + 16 * i);
                        if (beta)
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
} // namespace

/* BK 32, 3 stages (217 KB of shared memory), fragments double-buffered
 * across k steps. */
DD_LAUNCHER(dd_08_dmma, double, dd_dmma::launch_cfg<dd_dmma::Cfg<32, 3, 2, 4>>)
