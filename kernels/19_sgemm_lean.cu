/* 19_sgemm_lean — 17_warptile_mbar with a leaner main loop (exact FP32 on
 * the CUDA cores, no TF32): the FP32 production kernel.  19c and 19d feed
 * it by TMA (not yet measured).
 *
 * Why: FP32 FFMA on the H200 is issue-bound (one warp instruction per
 * scheduler and cycle, 1980 MHz below the power cap), so every non-FFMA
 * instruction of the main loop costs an FFMA slot.  17's loop (SASS, nvcc
 * 13.0, sm_90) issues 1227 instructions per tile of 16 k: 1024 FFMA, 64
 * LDS.128 and 139 others, 83.5% FFMA where 94.1% (FFMA and the 64 LDS
 * alone) is the bound of an 8×8 thread tile.  The 139: about 70 for the
 * copies (an edge predicate per element of A and per piece of B recomputed
 * every tile from K, M and N, 64-bit row addresses rebuilt from one
 * pointer, the stage's shared address from a multiply), about 30 for the
 * ring ((t+1) % 3 and (t+1) / 3 by multiplications, barrier addresses and
 * parities, the tests of the next tile and the refill), about 20 to rebuild
 * the fragment addresses from threadIdx (ptxas rematerialises them at 128
 * registers), and the waits, the warp vote and lane test of the release
 * and the loop.
 *
 * What it changes, against 17 (same tiles, warps, 2 blocks per SM, 128
 * registers, 3-stage mbarrier ring, fragments double-buffered, no spill):
 *  - no edge predicate in the copies of a whole k-tile: rows of A past M
 *    are read from row M-1 (clamped once; their products land in rows of
 *    the accumulator that are never stored); blocks inside N copy B without
 *    zero-fill, blocks on the N edge with a per-thread byte count fixed for
 *    the whole loop; only the last k-tile, where K ends inside it, takes
 *    the predicated copy.
 *  - a steady-state loop over the tiles whose refill is a whole tile (no
 *    test of the next tile or of the refill), then the last tiles with
 *    the tests.
 *  - one 64-bit pointer per copied row of A and one for B, advanced by a
 *    constant per tile; a thread's two B pieces lie in one row.
 *  - the ring walked with counters instead of divisions, the fragment
 *    addresses moved by one uniform step per tile; every thread releases
 *    the stage itself (256 arrivals: no __syncwarp, vote or lane test), and
 *    the first refill's wait on a fresh empty barrier (parity 1) passes at
 *    once instead of being tested for.
 *   SASS of the steady state per tile: 1158 instructions (88.4% FFMA): 64
 *   LDS.128, 10 LDGSTS + 1 arrive, 5 ptxas padding (@!PT LDS, NOP), 11
 *   pointer increments, ~8 shared addresses, ~20 ring counters and waits.
 *
 * Measured (H200, gemm-bench, % of cuBLAS SGEMM without TF32, burst
 * medians, 17 in the same call): 2048: 92.3 (17: 88.7); 4096: 92.9
 * (87.9); 8192: 93.8-94.1 (88.7-89.0); 16384: 92.1-92.2 (87.0-87.4);
 * 8192x8192x1024 beta 1: 99.2 (94.1); 16384x16384x1024 beta 1: 98.9
 * (93.8); 16384x16384x4096 beta 1: 96.5 (91.1); 8192 sustained 8 s: 94.0
 * (88.9).  Nsight Compute at 8192 (base clock): 30.17 ms against 17's
 * 31.90, issue slots busy 81.4%, no eligible warp 16.1%, IPC 3.36, FMA
 * pipe 72.1%.
 *
 * Measured and dropped: 19b_sgemm_unrolled, the tile loop unrolled over the
 * 3 stages (stage offsets, barrier addresses and parities compile-time
 * constants, A copied two rows a thread: ~1121 instructions a tile, but a
 * 55 KB steady loop against 19's 19 KB): 89.3/91.3/88.5% of cuBLAS at
 * 4096/8192/16384 against 19's 92.9/93.8/92.1% (Nsight Compute: issue
 * slots busy 76.9%, no eligible warp 21.3%: the instruction cache); code
 * in git history.
 *
 * 19c_sgemm_btma: 19 with B's k-tiles by TMA (one 16×128 box a tile, no
 *   swizzle, sB's layout unchanged), issued by thread 0 after its copies
 *   of A, its arrival on the full barrier (THREADS+1 arrivals) announcing
 *   the box's bytes; rows past K and columns past N zero-filled by the TMA
 *   unit, so no per-thread B copy, pointer or byte count and one copy path
 *   (no inside-N branch).  A as in 19.  Falls back to 19 where B's tensor
 *   map cannot be made.
 * 19d_sgemm_tma: A and B by TMA, thread 0 the only copier, a 4-stage ring
 *   with tile t+2 issued during tile t (the issuer waits for the release
 *   of tile t-2, long done); A's tile kept [m][k] with the 64-byte swizzle
 *   and read 4 k per LDS.128 (see tma_kernel); edges zero-filled by the
 *   TMA unit, so the loop has no copy and no edge code.  Needs A, B and C
 *   16-byte aligned with ld multiples of 4; else 19 (then 17).
 *   SASS per tile (steady loop, warps other than the issuer's): ~1128
 *   instructions (90.8% FFMA): 1024 FFMA, 64 LDS.128, ~40 others (2 waits
 *   with their branches, 1 arrive, ~12 ring offsets and parities, ~13
 *   ring and fragment base addresses rematerialised at 128 registers);
 *   19c: ~1150.
 */
#include "gemm_common.cuh"
#include "ladder.h"
#include "tma.cuh"

#include <string.h>

namespace
{

constexpr int BM = 128, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 32 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */
constexpr int G = 4;       /* floats per 16-byte vector */
constexpr int GROUPS = 2;  /* vector groups per thread-tile side */
constexpr int GSM = WM / GROUPS, GSN = WN / GROUPS;
static_assert(LANES_M * G * GROUPS == WM && LANES_N * G * GROUPS == WN, "thread tile");

/* AKL: lanes along k in A's transposing copy (8: 32 rows a pass, 4 passes;
 * 4: 64 rows a pass, 2 passes).  The padding of sA's rows keeps the 32
 * element writes of a warp on distinct banks: AKL k-rows × (32/AKL)
 * consecutive m, k-rows SA apart, so SA ≡ 32/AKL (mod 32). */
template <int BK_, int STAGES_, int AKL_> struct Cfg {
    static constexpr int BK = BK_, STAGES = STAGES_, AKL = AKL_;
    static constexpr int AROWS = THREADS / AKL;       /* A rows per pass */
    static constexpr int APASS = BM / AROWS;          /* A row passes (pointers) */
    static constexpr int AKP = BK / AKL;              /* A k passes */
    static constexpr int SA = BM + 32 / AKL;          /* sA row (one k) */
    static constexpr int SB = BN;                     /* sB row (one k) */
    static constexpr int BPT = BK * BN / G / THREADS; /* B pieces a thread */
    static constexpr int BTPR = BN / G / BPT;         /* B threads per row */
    static constexpr int STAGE = BK * SA + BK * SB;   /* floats per stage */
    static constexpr int SMEM = STAGES * STAGE * 4;
    static constexpr int SMEM_ALL = SMEM + 2 * STAGES * 8; /* and the full and empty barriers */
    static_assert(BK % AKL == 0 && BM % AROWS == 0 && SA % G == 0, "A copy mapping");
    static_assert(BPT * BTPR * G == BN && THREADS / BTPR == BK, "B copy mapping");
};

__device__ __forceinline__ void cp4(float *dst, const float *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dd::smem_addr(dst)), "l"(src)
                 : "memory");
}
__device__ __forceinline__ void cp16(float *dst, const float *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dd::smem_addr(dst)), "l"(src)
                 : "memory");
}

/* Global -> shared copies of one thread.  Per whole k-tile: APASS·AKP
 * element copies of A and BPT 16-byte copies of B, no predicate, and
 * APASS+1 pointer increments.  BTMA (19c): A only, B comes by TMA. */
template <typename L, bool BTMA> struct Copier {
    const float *a[L::APASS];
    const float *b;
    int64_t b_tile;     /* BK rows of B */
    int bbytes[L::BPT]; /* bytes of each B piece inside N (0..16) */
    int a_k, b_row;     /* the thread's first k in A's copy, its row in B's */
    int sa, sb;         /* shared offsets (floats) of the first copies in a stage */

    __device__ __forceinline__ Copier(const float *A, int64_t lda, const float *B, int64_t ldb,
                                      int M, int N, int m0, int n0)
    {
        const int tid = threadIdx.x;
        a_k = tid % L::AKL;
        const int ar = tid / L::AKL;
#pragma unroll
        for (int p = 0; p < L::APASS; ++p) {
            const int row = min(m0 + ar + p * L::AROWS, M - 1); /* past M: row M-1, unused */
            a[p] = A + (int64_t)row * lda + a_k;
        }
        b_row = tid / L::BTPR;
        const int bc = (tid % L::BTPR) * G;
        b = B + (int64_t)b_row * ldb + n0 + bc;
        b_tile = L::BK * ldb;
#pragma unroll
        for (int q = 0; q < L::BPT; ++q) {
            const int nb = (N - n0 - bc - q * L::BTPR * G) * 4;
            bbytes[q] = nb < 0 ? 0 : (nb > 16 ? 16 : nb);
        }
        sa = a_k * L::SA + ar;
        sb = L::BK * L::SA + b_row * L::SB + bc;
    }

    /* One k-tile into stage st.  MODE 0: whole tile, the block inside N
     * (no zero-fill at all); 1: whole tile, B's pieces past N zero-filled
     * (the byte counts of the constructor); 2: only kleft (< BK) k remain. */
    template <int MODE> __device__ __forceinline__ void copy(float *st, int kleft)
    {
        float *da = st + sa, *db = st + sb;
#pragma unroll
        for (int kp = 0; kp < L::AKP; ++kp)
#pragma unroll
            for (int p = 0; p < L::APASS; ++p) {
                float *d = da + kp * L::AKL * L::SA + p * L::AROWS;
                const float *s = a[p] + kp * L::AKL;
                if (MODE == 2)
                    dd::cp_async4(d, s, a_k + kp * L::AKL < kleft ? 4 : 0);
                else
                    cp4(d, s);
            }
#pragma unroll
        for (int q = 0; q < L::BPT; ++q) {
            if (BTMA)
                break;
            float *d = db + q * L::BTPR * G;
            const float *s = b + q * L::BTPR * G;
            if (MODE == 0)
                cp16(d, s);
            else
                dd::cp_async16(d, s, MODE == 2 && b_row >= kleft ? 0 : bbytes[q]);
        }
#pragma unroll
        for (int p = 0; p < L::APASS; ++p)
            a[p] += L::BK;
        if (!BTMA)
            b += b_tile;
    }
};

/* The lane's 8×8 accumulators into C (beta 0: C = acc; beta 1: C += acc);
 * B and C allow 16-byte access (07's store_tile for VEC).  Row i of the
 * lane's tile is C's row m0 + arow + (i / G) * GSM + (i % G) * RS. */
template <int RS = 1>
__device__ __forceinline__ void store_tile(const float (&acc)[8][8], float *__restrict__ C,
                                           int64_t ldc, int M, int N, int m0, int n0, int arow,
                                           int bcol, int beta)
{
    if (m0 + BM <= M && n0 + BN <= N) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float4 old[4][GROUPS];
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                const float *crow =
                    C + (int64_t)(m0 + arow + (i / G) * GSM + (i % G) * RS) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GROUPS; ++g)
                    if (beta)
                        old[ii][g] = *reinterpret_cast<const float4 *>(crow + g * GSN);
            }
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                float *crow =
                    C + (int64_t)(m0 + arow + (i / G) * GSM + (i % G) * RS) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GROUPS; ++g) {
                    float4 v;
                    float *vs = reinterpret_cast<float *>(&v);
                    const float *os = reinterpret_cast<const float *>(&old[ii][g]);
#pragma unroll
                    for (int e = 0; e < G; ++e)
                        vs[e] = beta ? acc[i][g * G + e] + os[e] : acc[i][g * G + e];
                    *reinterpret_cast<float4 *>(crow + g * GSN) = v;
                }
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + arow + (i / G) * GSM + (i % G) * RS;
        if (row >= M)
            continue;
        float *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < GROUPS; ++g)
            dd::store_row_group<float, G, true>(crow, n0 + bcol + g * GSN, N, &acc[i][g * G], beta);
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* One tile t of 17's main loop: fragments of k+1 loaded during the FFMAs
 * of k, across the stage boundary (the next stage's full barrier waited for
 * at the last k); each thread releases the stage once its fragments are
 * loaded (256 arrivals: no warp vote, no lane test); the slot of tile t-1
 * (stage ps, its empty-barrier phase that of tile t-1: parity pph; for
 * t = 0 parity 1 of a fresh barrier, which passes at once) is refilled at
 * the first k.  fa / fb: this lane's fragment addresses in stage rs,
 * na / nb in stage ns (the next tile's). */
template <typename L, typename Fill>
__device__ __forceinline__ void
tile_step(float (&acc)[8][8], float (&a)[2][8], float (&b)[2][8], const float *fa, const float *fb,
          const float *na, const float *nb, uint64_t *full, uint64_t *empty, int rs, int ns, int ps,
          unsigned nph, unsigned pph, bool next, bool refill, Fill &fill)
{
    using namespace dd_tma;
#pragma unroll
    for (int p = 0; p < L::BK; ++p) {
        const float *sa = fa, *sb = fb;
        if (p == L::BK - 1) {
            if (next)
                bar_wait(&full[ns], nph);
            sa = na, sb = nb;
        }
        const int q = (p + 1) % L::BK;
#pragma unroll
        for (int g = 0; g < GROUPS; ++g) {
            const float4 va = *reinterpret_cast<const float4 *>(sa + q * L::SA + g * GSM);
            const float4 vb = *reinterpret_cast<const float4 *>(sb + q * L::SB + g * GSN);
            float *x = a[(p + 1) & 1], *y = b[(p + 1) & 1];
            x[g * G + 0] = va.x, x[g * G + 1] = va.y, x[g * G + 2] = va.z, x[g * G + 3] = va.w;
            y[g * G + 0] = vb.x, y[g * G + 1] = vb.y, y[g * G + 2] = vb.z, y[g * G + 3] = vb.w;
        }
        if (p == L::BK - 1) /* tile t's fragments are all loaded */
            bar_arrive(&empty[rs]);
        if (p == 0 && refill) {
            bar_wait(&empty[ps], pph);
            fill(ps);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
                acc[i][j] = fmaf(a[p & 1][i], b[p & 1][j], acc[i][j]);
    }
}

#endif

/* 19 (BTMA false) and 19c (BTMA true: B's k-tiles by TMA, one box a tile
 * issued by thread 0, whose arrival on the full barrier announces its
 * bytes; rows past N and K zero-filled by the TMA unit).  The ring walked
 * with counters at run time, the fragment addresses moved by one uniform
 * step per tile.  tb: B's tensor map (19c), unused by 19. */
template <int BK, int STAGES, int AKL, bool BTMA>
__global__ void __launch_bounds__(THREADS, 2)
    lean_kernel(int M, int N, int K, const float *__restrict__ A, int64_t lda,
                const float *__restrict__ B, int64_t ldb, int beta, float *__restrict__ C,
                int64_t ldc, const __grid_constant__ CUtensorMap tb)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    typedef Cfg<BK, STAGES, AKL> L;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    /* TMA boxes land on 128-byte boundaries (stages and sB are multiples) */
    unsigned char *base =
        BTMA ? smem_raw + ((128u - (smem_addr(smem_raw) & 127u)) & 127u) : smem_raw;
    float *smem = reinterpret_cast<float *>(base);
    uint64_t *full = (uint64_t *)(base + L::SMEM), *empty = full + STAGES;
    static_assert(!BTMA || (L::STAGE * 4 % 128 == 0 && L::BK * L::SA * 4 % 128 == 0),
                  "TMA destinations");

    int m0, n0;
    {
        int bm, bn;
        dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
        m0 = bm * BM, n0 = bn * BN;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int arow = (warp % WARPS_M) * WM + (lane / LANES_N) * G;
    const int bcol = (warp / WARPS_M) * WN + (lane % LANES_N) * G;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], THREADS + (BTMA ? 1 : 0));
            bar_init(&empty[s], THREADS);
        }
        bar_init_fence();
    }
    __syncthreads();

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;
    Copier<L, BTMA> cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK, whole = K / BK;
    const bool inside_n = n0 + BN <= N;
    int kb = 0; /* 19c: the k of the next B box */
    auto arrive_full = [&](int s) {
        asm volatile(
            "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&full[s]))
            : "memory");
        if (BTMA) {
            if (threadIdx.x == 0) {
                bar_expect(&full[s], BK * BN * 4);
                load_2d(smem + s * L::STAGE + BK * L::SA, &tb, &full[s], n0, kb);
            }
            kb += BK;
        }
    };
    /* this thread's copies of a whole tile into stage s; they arrive on full[s] */
    auto fill_whole = [&](int s) {
        if (BTMA || inside_n)
            cp.template copy<0>(smem + s * L::STAGE, 0);
        else
            cp.template copy<1>(smem + s * L::STAGE, 0);
        arrive_full(s);
    };
    /* ... of tile v, whole or not */
    auto fill_any = [&](int s, int v) {
        if (v < whole)
            fill_whole(s);
        else {
            cp.template copy<2>(smem + s * L::STAGE, K - v * BK);
            arrive_full(s);
        }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s)
        if (s < tiles)
            fill_any(s, s);

    const float *fa = smem + arow, *fb = smem + BK * L::SA + bcol; /* stage 0's fragments */
    float a[2][8], b[2][8];
    if (tiles > 0) {
        bar_wait(&full[0], 0);
#pragma unroll
        for (int g = 0; g < GROUPS; ++g) {
            const float4 va = *reinterpret_cast<const float4 *>(fa + g * GSM);
            const float4 vb = *reinterpret_cast<const float4 *>(fb + g * GSN);
            a[0][g * G + 0] = va.x, a[0][g * G + 1] = va.y, a[0][g * G + 2] = va.z;
            a[0][g * G + 3] = va.w;
            b[0][g * G + 0] = vb.x, b[0][g * G + 1] = vb.y, b[0][g * G + 2] = vb.z;
            b[0][g * G + 3] = vb.w;
        }
    }
    /* Steady state: tiles whose refill is a whole tile (t + STAGES-1 <
     * whole), so no test of the next tile, of the refill or of the edge
     * inside the loop; then the last STAGES-1 tiles or so with the tests. */
    int t = 0;
    int rs = 0, ps = STAGES - 1; /* stage of tile t, of tile t-1 */
    unsigned ph = 0, pph = 1;    /* their full-barrier parities */
    /* one tile; the ring moves on */
    auto step = [&](bool next, bool refill, auto &fill) {
        const bool wrap = rs == STAGES - 1;
        const int ns = wrap ? 0 : rs + 1;
        const unsigned nph = wrap ? ph ^ 1u : ph;
        const int off = wrap ? -(STAGES - 1) * L::STAGE : L::STAGE;
        const float *na = fa + off, *nb = fb + off;
        tile_step<L>(acc, a, b, fa, fb, na, nb, full, empty, rs, ns, ps, nph, pph, next, refill,
                     fill);
        fa = na, fb = nb;
        ps = rs, pph = ph;
        rs = ns, ph = nph;
    };
    for (; t + STAGES - 1 < whole; ++t)
        step(true, true, fill_whole);
    for (; t < tiles; ++t) {
        const int v = t + STAGES - 1;
        auto fill = [&](int s) { fill_any(s, v); };
        step(t + 1 < tiles, v < tiles, fill);
    }
    store_tile(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc, (void)tb;
    __trap();
#endif
}

/* 19d: A and B both by TMA, thread 0 the only copier; A's tile kept as
 * in global memory, [m][k] (64-byte rows, the TMA's 64-byte swizzle: the
 * 16-byte piece c of row m stored at piece c ^ ((m >> 1) & 3)), B's
 * [k][n] as in 19.  The fragments of A are read 4 k at once: one LDS.128
 * of a row gives its 4 k, so the lane holds af[8][4] (a k-group) and
 * reloads row i of the next group right after the FFMAs of the group's
 * last k with row i; B's fragments double-buffered per k as in 19.  The
 * lane's rows are arow + (i / 4) * 16 + (i % 4) * 4 with arow = the warp's
 * first row + lane / 8, so that the 4 rows a warp reads at once lie on 4
 * distinct bank groups under the swizzle.  A ring of STAGES stages, tile
 * v + AHEAD issued by thread 0 during tile v into the slot of tile
 * v + AHEAD - STAGES (released by every thread after its last fragment
 * loads), so that its wait for the release is of a tile done long ago;
 * edges (M, N, the last k-tile) zero-filled by the TMA unit: no edge code
 * in the loop. */
namespace t4
{
constexpr int BK = 16, A_BYTES = BM * BK * 4, B_BYTES = BK * BN * 4, STAGE = A_BYTES + B_BYTES;
constexpr int KG = BK / G; /* k-groups of a tile */
template <int STAGES> constexpr int smem_bytes()
{
    return 1024 + STAGES * STAGE + 2 * STAGES * 8; /* alignment slack, stages, barriers */
}
} // namespace t4

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* 19d addresses everything in shared memory by its 32-bit shared address
 * (no generic pointer to convert in the loop). */
__device__ __forceinline__ void lds4(float (&x)[4], uint32_t addr)
{
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                 : "r"(addr));
}

__device__ __forceinline__ void wait32(uint32_t bar, unsigned parity)
{
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

__device__ __forceinline__ void arrive32(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* thread 0: tile v's boxes of A (at k, m0) and B (at n0, k) into the stage
 * at st, announced on the full barrier bar */
__device__ __forceinline__ void issue32(const CUtensorMap *ta, const CUtensorMap *tb, uint32_t st,
                                        uint32_t bar, int k, int m0, int n0)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "n"(t4::STAGE)
                 : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];" ::"r"(st),
                 "l"((uint64_t)ta), "r"(bar), "r"(k), "r"(m0)
                 : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];" ::"r"(st + t4::A_BYTES),
                 "l"((uint64_t)tb), "r"(bar), "r"(n0), "r"(k)
                 : "memory");
}

/* Row i's 4 k of group c of the stage at byte offset so: pa0 / pa1 the
 * lane's row-arow addresses for pieces of even / odd swizzled index. */
__device__ __forceinline__ void lds_arow(float (&x)[4], uint32_t pa0, uint32_t pa1, uint32_t so,
                                         int i, int c)
{
    const int X = c ^ ((i & 1) << 1); /* the piece, but for the lane's bit (lane / 16) */
    lds4(x, ((X & 1) ? pa1 : pa0) + so + ((i / G) * GSM + (i % G) * G) * (t4::BK * 4) + X * 16);
}

__device__ __forceinline__ void lds_b(float (&y)[8], uint32_t pb, uint32_t so, int k)
{
    lds4(*reinterpret_cast<float(*)[4]>(&y[0]), pb + so + k * (BN * 4));
    lds4(*reinterpret_cast<float(*)[4]>(&y[G]), pb + so + k * (BN * 4) + GSN * 4);
}
#endif

template <int STAGES, int AHEAD>
__global__ void __launch_bounds__(THREADS, 2)
    tma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
               int M, int N, int K, int beta, float *__restrict__ C, int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace t4;
    static_assert(AHEAD >= 1 && AHEAD < STAGES, "the issuer never waits on a tile it reads");
    extern __shared__ __align__(1024) unsigned char ring_raw[];
    /* the 64-byte swizzle repeats every 512 bytes: stages on 1024 */
    const uint32_t ring = (dd_tma::smem_addr(ring_raw) + 1023u) & ~1023u;
    const uint32_t full = ring + STAGES * STAGE, empty = full + STAGES * 8;

    int m0, n0;
    {
        int bm, bn;
        dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
        m0 = bm * BM, n0 = bn * BN;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int arow = (warp % WARPS_M) * WM + lane / LANES_N;
    const int bcol = (warp / WARPS_M) * WN + (lane % LANES_N) * G;
    const bool issuer = threadIdx.x == 0;
    if (issuer) {
        for (int s = 0; s < STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s),
                         "n"(THREADS));
        }
        dd_tma::bar_init_fence();
    }
    __syncthreads();

    const int tiles = (K + BK - 1) / BK;
    /* tile v into its slot, once the slot's previous tile is released
     * (the first use of a slot: parity 1 of a fresh barrier, at once) */
    auto issue = [&](int v) {
        const uint32_t s = (uint32_t)v % STAGES;
        wait32(empty + 8 * s, ((v / STAGES) & 1) ^ 1);
        issue32(&ta, &tb, ring + s * STAGE, full + 8 * s, v * BK, m0, n0);
    };
    if (issuer)
        for (int v = 0; v < AHEAD && v < tiles; ++v)
            issue(v);

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;
    const uint32_t sw = (lane / LANES_N) >> 1; /* the lane's bit of the swizzle */
    const uint32_t pa0 = ring + arow * (BK * 4) + 16 * sw;
    const uint32_t pa1 = ring + arow * (BK * 4) - 16 * sw;
    const uint32_t pb = ring + A_BYTES + bcol * 4;
    float af[8][4], b[2][8];
    if (tiles > 0) {
        wait32(full, 0);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            lds_arow(af[i], pa0, pa1, 0, i, 0);
        lds_b(b[0], pb, 0, 0);
    }
    /* tile t from stage t % STAGES; next: tile t+1 exists (its stage is
     * waited for and its first fragments loaded at the last k); refill:
     * tile t + AHEAD exists (issued at the first k) */
    auto tile = [&](int t, bool next, bool refill) {
        const uint32_t so = (uint32_t)t % STAGES * STAGE;
        const uint32_t tn = t + 1;
        const uint32_t nso = tn % STAGES * STAGE;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int c = k / G, kk = k % G;
            if (k == BK - 1 && next)
                wait32(full + 8 * (tn % STAGES), (tn / STAGES) & 1);
            if (k == 0 && refill && issuer) /* before b[1] is live: no spill */
                issue(t + AHEAD);
            lds_b(b[(k + 1) & 1], pb, k == BK - 1 ? nso : so, (k + 1) % BK);
            const float *y = b[k & 1];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(af[i][kk], y[j], acc[i][j]);
                if (kk == G - 1) /* row i of the next group */
                    lds_arow(af[i], pa0, pa1, c == KG - 1 ? nso : so, i, (c + 1) % KG);
            }
            if (k == BK - 1) /* tile t's fragments are all loaded */
                arrive32(empty + 8 * ((uint32_t)t % STAGES));
        }
    };
    int t = 0;
    for (; t + AHEAD < tiles; ++t)
        tile(t, true, true);
    for (; t < tiles; ++t)
        tile(t, t + 1 < tiles, false);
    store_tile<G>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)beta, (void)C, (void)ldc;
    __trap();
#endif
}

/* A tiled FP32 map without interleave, edges zero-filled (tma.cuh's
 * map_sw128 with the swizzle chosen).  Returns a cudaError_t. */
int map_f32(CUtensorMap *map, const void *base, cuuint64_t d0, cuuint64_t d1, int64_t ld,
            cuuint32_t b0, cuuint32_t b1, CUtensorMapSwizzle swz)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult got;
#if CUDART_VERSION >= 12050
        cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                         cudaEnableDefault, &got);
#else
        cudaError_t e =
            cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &got);
#endif
        if (e != cudaSuccess)
            return e;
        if (got != cudaDriverEntryPointSuccess || !fn)
            return cudaErrorNotSupported;
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    const cuuint64_t dims[2] = {d0, d1}, strides[1] = {(cuuint64_t)ld * 4};
    const cuuint32_t box[2] = {b0, b1}, step[2] = {1, 1};
    CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<void *>(base), dims,
                        strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, swz,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

/* Whether a compute 9.x GPU runs `kern` as sm_90 code (the checks shared
 * by the launchers); e: the first error of the queries. */
template <typename Kernel> bool on_sm90(Kernel kern, signed char (&known)[64], int *e)
{
    int dev = 0, major = 0;
    if ((*e = cudaGetDevice(&dev)) != cudaSuccess ||
        (*e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) !=
            cudaSuccess)
        return false;
    return major == 9 && dd_tma::has_sm90_code(kern, dev, known);
}

/* B and C allowing 16-byte access and a compute 9.x GPU with this build's
 * sm_90 code: the lean kernel (19c: B's tensor map too, else 19);
 * anything else: 17's launcher (which falls back to 07 and element-wise
 * copies in turn). */
template <int BK, int STAGES, int AKL, bool BTMA> int launch_lean(DD_LAUNCHER_ARGS(float))
{
    typedef Cfg<BK, STAGES, AKL> L;
    constexpr int SMEM = L::SMEM_ALL + (BTMA ? 128 : 0);
    static unsigned long long smem_set;
    static signed char sm90[64];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    auto kern = lean_kernel<BK, STAGES, AKL, BTMA>;
    const bool sm90_ok = on_sm90(kern, sm90, &e);
    if (e != cudaSuccess)
        return e;
    if (!sm90_ok || !dd::vec16_ok<float>(B, ldb) || !dd::vec16_ok<float>(C, ldc))
        return dd_k17_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    CUtensorMap tb;
    memset(&tb, 0, sizeof tb);
    if (BTMA) {
        if (m > INT_MAX - BM || n > INT_MAX - BN || k > INT_MAX - BK ||
            map_f32(&tb, B, (cuuint64_t)n, (cuuint64_t)k, ldb, BN, BK,
                    CU_TENSOR_MAP_SWIZZLE_NONE) != cudaSuccess)
            return dd_k19_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    }
    if ((e = dd::allow_smem(kern, SMEM, &smem_set)) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C,
                                                 ldc, tb);
    return dd::launch_status();
}

/* 19d's launch: A, B and C allowing 16-byte access (the TMA's strides are
 * multiples of 16 bytes) and a compute 9.x GPU with sm_90 code; anything
 * else: 19's launcher (which falls back to 17 in turn). */
template <int STAGES, int AHEAD> int launch_tma(DD_LAUNCHER_ARGS(float))
{
    constexpr int SMEM = t4::smem_bytes<STAGES>();
    static unsigned long long smem_set;
    static signed char sm90[64];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    auto kern = tma_kernel<STAGES, AHEAD>;
    const bool sm90_ok = on_sm90(kern, sm90, &e);
    if (e != cudaSuccess)
        return e;
    CUtensorMap ta, tb;
    if (!sm90_ok || !dd::vec16_ok<float>(A, lda) || !dd::vec16_ok<float>(B, ldb) ||
        !dd::vec16_ok<float>(C, ldc) || m > INT_MAX - BM || n > INT_MAX - BN ||
        k > INT_MAX - t4::BK ||
        map_f32(&ta, A, (cuuint64_t)k, (cuuint64_t)m, lda, t4::BK, BM, CU_TENSOR_MAP_SWIZZLE_64B) !=
            cudaSuccess ||
        map_f32(&tb, B, (cuuint64_t)n, (cuuint64_t)k, ldb, BN, t4::BK,
                CU_TENSOR_MAP_SWIZZLE_NONE) != cudaSuccess)
        return dd_k19_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    if ((e = dd::allow_smem(kern, SMEM, &smem_set)) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, SMEM, s>>>(ta, tb, (int)m, (int)n, (int)k, beta, C, ldc);
    return dd::launch_status();
}

} // namespace

/* 19: 17's BK 16, 3 stages, A copied by 8 lanes along k (four rows a thread). */
DD_LAUNCHER(dd_k19_sgemm, float, launch_lean<16, 3, 8, false>)
/* 19c: 19 with B's tiles by TMA. */
DD_LAUNCHER(dd_k19c_sgemm, float, launch_lean<16, 3, 8, true>)
/* 19d: A and B by TMA, 4 stages, tile v+2 issued during tile v. */
DD_LAUNCHER(dd_k19d_sgemm, float, launch_tma<4, 2>)
