/* dgemm_dmma — the FP64 production kernel: C = A·B (+ C) on the FP64 tensor
 * cores (DMMA through mma.sync; Hopper has no FP64 wgmma), fed by the
 * Tensor Memory Accelerator, with a software-pipelined main loop, a beta-1
 * epilogue done at L2, and stream-K for the last wave.  The kernel itself
 * is dmma_gemm.cuh's (sgemm_dmma.cu runs it too, with an FP32 C).
 *
 * Why each piece (kernels/README.md has the measurements):
 *  - tensor cores: per SM they do twice the FP64 work of the FMA units, so
 *    the kernel is bound by feeding them, not by arithmetic.
 *  - tiles: a 128×128 block of C per CTA, 8 warps of 64×32, 64
 *    accumulators a lane (dmma_tile.cuh): 16 flop per byte of L2 traffic,
 *    and 255 registers a thread, so one CTA of 8 warps per SM.  Latency is
 *    hidden inside each warp: an SM's independent mma are set by its
 *    accumulators, not by its number of warps.
 *  - operand order: the mma computes C^T = B^T·A^T, its A operand (16×8)
 *    from B and its B operand (8×8) from A, with k permuted inside each k8
 *    step (the mma's logical k = t + 4v lives in shared column 2t + v, for
 *    A and B alike: a bijection, the product is unchanged) and the mma's
 *    rows (C columns) permuted to 2g + h.  Then every operand is one
 *    16-byte shared load that lands in the registers in the order the
 *    instruction reads them; computing C = A·B directly needs register
 *    moves between the loads and the mma.
 *  - m16n8k16 (sm_90): one instruction for two k8 steps, half the mma
 *    instructions to issue.
 *  - the TMA: per k-tile of 16 one box of A and eight of B into a 6-stage
 *    ring, 4 k-tiles ahead, mbarriers with transaction counts saying when a
 *    stage has landed (full) and when the 8 warps are done with it (empty):
 *    no block barrier in the main loop, no copy addressing and no edge
 *    masks (the TMA zero-fills past M, N and K).  No dedicated producer
 *    warp: with 9 warps ptxas caps a thread at 168 registers (setmaxnreg,
 *    which would move them, exists only in sm_90a); lane 0 of each warp in
 *    turn issues a k-tile's copies instead, so that no one warp lags the
 *    others (the whole tile waits for the slowest warp).
 *  - layout: the TMA's 128-byte swizzle (16-byte chunk c of row r stored at
 *    c ^ (r mod 8)) instead of padding.  B's fragment loads (k rows 2t and
 *    2t+1, columns 2g, 2g+1) then hit 8 different chunks per quarter warp;
 *    A's would hit rows g = 0, 1 with the same chunk sets, so mma column g
 *    reads shared row σ(g) = (g >> 1) | (g & 1) << 2: rows 0 and 4 in one
 *    quarter warp, XOR patterns apart in bit 2, conflict-free.  The C rows
 *    follow: c0/c2 are row t of an 8-row slice, c1/c3 row t + 4.
 *  - the main loop (dmma_gemm.cuh's mainloop) pipelined across stages in one
 *    set of fragment registers: each fragment of the next stage is reloaded
 *    6 mma after its last read, so no warp stops its mma for a stage-wide
 *    reload, and the two warps sharing an SM sub-partition's DMMA pipe do
 *    not stall together.
 *  - the beta-1 epilogue (SUMMA's panels after the first) stages the tile
 *    in the free ring and adds it to C with one bulk FP64 reduction per row:
 *    the read-modify-write of C happens at L2 and the SM waits for no load
 *    of C.
 *  - stream-K (sk_plan.h): 128×128 tiles on 132 SMs leave the last wave
 *    part-empty (4096 tiles at n = 8192: 32 waves for 31.03 waves of work).
 *    Whole tiles run in full waves and the k-tiles of the rest are shared
 *    evenly by every SM; the last contributor to a split tile adds the
 *    partials in CTA order, so the result does not depend on timing (it
 *    does on the plan: the same GPU model and shape give the same bits).
 *    Where the workspace cannot be had, whole tiles.
 *  - grouped tile order (8 tile rows at a time): the A and B panels of the
 *    CTAs resident together stay in L2, which saves DRAM traffic and so
 *    energy under the power cap.
 *
 * Where the TMA cannot be used (a GPU that is not compute 9.x, a build
 * without sm_90 code, or A or B with a base or a row pitch that is not a
 * multiple of 16 bytes, as SUMMA's sub-blocks of odd leading dimension),
 * the same block tile and operand order run fed by cp.async (cpasync::
 * below, sm_80 and later). */
#include "dmma_gemm.cuh"

namespace
{

/* The cp.async path: block 128×128 of 8 warps 64×32 as above, m16n8k8 (4×
 * m8n8k4 on sm_80), BK 32, 3 stages of cp.async in flight (72.5 KB a stage,
 * 217 KB in all), fragments of k step s+1 loaded while the mma of step s
 * issue, across the stage boundary too (the barrier for the next stage
 * comes before the last step's mma).  Padding instead of swizzling: A rows
 * are BK+8 doubles (row stride ≡ 16 banks, so the two rows of a
 * quarter-warp's 16-byte loads take disjoint halves of the banks), B rows
 * BN+2 (the four k rows a quarter warp reads land in four different 8-bank
 * groups).  Edges: cp.async with src-size 0 / 8 zero-fills rows and
 * columns beyond M, N, K, so the main loop has no special case; edge tiles
 * take guarded stores.  A, B or C not fit for 16-byte access selects the
 * instantiation with 8-byte copies and scalar stores. */
namespace cpasync
{

struct Cfg : dd_dmma::Tile {
    static constexpr int BK = 32, STAGES = 3;
    static constexpr int SA = BK + 8; /* doubles; 2·SA ≡ 16 (mod 32) banks */
    static constexpr int SB = BN + 2; /* doubles; 2·SB ≡ 4 (mod 16) banks */
    static constexpr int A_ELEMS = BM * SA, B_ELEMS = BK * SB;
    static constexpr int STAGE = A_ELEMS + B_ELEMS;
    static constexpr int SMEM = STAGES * STAGE * 8;
    static_assert(BK % 16 == 0, "padding arithmetic assumes BK multiple of 16");
    static_assert((A_ELEMS * 8) % 16 == 0 && (STAGE * 8) % 16 == 0, "16-byte aligned regions");
};
using L = Cfg; /* this path's configuration (the outer L is the TMA path's tile) */

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
template <bool VEC> struct Copier {
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

/* One k8 step's fragments of a warp.  The mma computes C^T = B^T·A^T: its
 * A operand is B^T (one per 16 columns of C), read from sB; its B operand
 * is A^T (one per 8 rows of C), read from sA.  Each 16-byte load lands in
 * operand order, so no register moves are needed. */
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

template <bool VEC>
__global__ void __launch_bounds__(L::THREADS, 1)
    dmma_cpasync_kernel(int M, int N, int K, const double *__restrict__ A, int64_t lda,
                        const double *__restrict__ B, int64_t ldb, int beta,
                        double *__restrict__ C, int64_t ldc)
{
    constexpr int BK = L::BK, STAGES = L::STAGES, BM = L::BM, BN = L::BN, KK = BK / 8;
    constexpr int WARPS_M = L::WARPS_M, WM = L::WM, WN = L::WN, MT = L::MT, NT = L::NT;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    double *smem = reinterpret_cast<double *>(smem_raw);

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    int bm, bn;
    dd::raster_grouped<dd_dmma::GROUP_M>(grid_m, grid_n, &bm, &bn);
    const int m0 = bm * BM, n0 = bn * BN;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int g = lane / 4, t = lane % 4; /* mma "groupID" and "threadID_in_group" */

    /* Per-lane offsets (doubles) inside a stage for the fragment loads. */
    const int fa_off = L::A_ELEMS + (2 * t) * L::SB + wn * WN + 2 * g; /* + 8kk·SB + 16i (sB) */
    const int fb_off = (wm * WM + g) * L::SA + 2 * t;                  /* + 8j·SA + 8kk (sA) */

    double acc[MT][NT][4]; /* [8-row slice j][16-column slice i] */
    dd_dmma::zero_acc(acc);

    Copier<VEC> cp(A, lda, B, ldb, M, N, m0, n0);
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
    /* Software pipeline: the fragments of step kk+1 are read while the mma
     * of step kk run, across the stage boundary too (the barrier for the
     * next stage sits before the last step's mma, as in CUTLASS). */
    double fa[2][NT][4], fb[2][MT][2];
    load_frags(smem, fa_off, fb_off, 0, fa[0], fb[0]);
    for (int kt = 0; kt < tiles; ++kt) {
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            if (kk == KK - 1) {
                dd::cp_async_wait<STAGES - 2>(); /* tile kt+1 has landed ... */
                __syncthreads();                 /* ... for everyone; stage kt-1 is free */
                rs = rs + 1 == STAGES ? 0 : rs + 1;
            }
            load_frags(smem + rs * L::STAGE, fa_off, fb_off, (kk + 1) % KK, fa[(kk + 1) & 1],
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

    dd_dmma::store_acc<VEC, 1>(acc, C, ldc, M, N, m0, n0, m0 + wm * WM + 2 * t,
                               n0 + wn * WN + 2 * g, beta);
}

int launch(DD_LAUNCHER_ARGS(double))
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
    auto kern = vec ? dmma_cpasync_kernel<true> : dmma_cpasync_kernel<false>;
    if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, L::THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta,
                                                       C, ldc);
    return dd::launch_status();
}

} // namespace cpasync

/* The checks and tensor maps of a TMA launch.  Returns a cudaError_t; *go
 * says whether the caller launches (false: the prologue did the trivial
 * case, or the cp.async path ran instead), and then *tiles and *dev (the
 * current device) are set.  gate: see dgemm_dmma. */
int prepare(DD_LAUNCHER_ARGS(double), const unsigned int *gate, CUtensorMap *ta, CUtensorMap *tb,
            long long *tiles, int *dev_out, bool *go)
{
    int e =
        dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, (cudaStream_t)stream, go);
    if (e != cudaSuccess || !*go)
        return e;
    *go = false;
    bool ok;
    if ((e = tma_target<double>(m, n, k, dev_out, tiles, &ok)) != cudaSuccess)
        return e;
    /* TMA strides are multiples of 16 bytes */
    if (!ok || !dd::vec16_ok<double>(A, lda) || !dd::vec16_ok<double>(B, ldb))
        return gate ? cudaErrorNotSupported
                    : cpasync::launch(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    if (*tiles > INT_MAX)
        return cudaErrorInvalidConfiguration;
    if ((e = make_maps(m, n, k, A, lda, B, ldb, ta, tb)) != cudaSuccess)
        return e;
    *go = true;
    return cudaSuccess;
}

/* dgemm_dmma over the whole grid.  gate: NULL, or a device word the kernel
 * reads first: it multiplies only where that is nonzero (dgemm_dmma gated
 * is ozaki2's native fallback, decided on the GPU).  Gated calls never take
 * the cp.async path: cudaErrorNotSupported instead. */
int dgemm_dmma(DD_LAUNCHER_ARGS(double), const unsigned int *gate = nullptr)
{
    CUtensorMap ta, tb;
    long long tiles = 0;
    int dev = 0;
    bool go;
    int e =
        prepare(m, n, k, A, lda, B, ldb, beta, C, ldc, stream, gate, &ta, &tb, &tiles, &dev, &go);
    if (e != cudaSuccess || !go)
        return e;
    return run_dmma_gemm<double>(ta, tb, m, n, k, beta, C, ldc, tiles, dev,
                                 dd::vec16_ok<double>(C, ldc), (cudaStream_t)stream, gate);
}

} // namespace

DD_LAUNCHER(dd_dgemm_dmma, double, dgemm_dmma)

extern "C" int dd_dgemm_dmma_gated(DD_LAUNCHER_ARGS(double), const unsigned int *gate)
{
    return dgemm_dmma(m, n, k, A, lda, B, ldb, beta, C, ldc, stream, gate);
}
