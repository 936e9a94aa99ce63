/* 21_sgemm_wide — 19_sgemm_lean's main loop in cuBLAS's FP32 shape (exact
 * FP32 on the CUDA cores, no TF32).
 *
 * Why: at n = 8192 (Nsight Compute, fixed clock) 19 takes 30.16 ms with the
 * issue slots 83.9% busy; cuBLAS's kernel,
 * sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma,
 * takes 27.86 ms with them 90.8% busy.  Its shape: a 256×128 block tile,
 * BK 8, 3 stages, 8 warps as 4 (along M) × 2 (along N) of 64×64 each, 128
 * accumulators a thread (16×8), 254 registers, 67.6 KB of shared memory,
 * one block per SM.  A 16×8 thread tile reads 6 LDS.128 per 128 FFMA where
 * 19's 8×8 reads 4 per 64, and each warp has twice the independent FFMAs
 * to issue; the per-tile overhead of the ring and the copies is shared by
 * twice the block tile.
 *
 * What it changes, against 19 (same lean loop: whole k-tiles copied
 * without edge predicates, rows of A past M clamped, one pointer per copied
 * row, the ring walked by counters, full and empty mbarriers per stage,
 * every thread releasing, fragments double-buffered across k and across
 * the stage boundary, only the K-tail tile predicated, plain FFMA):
 *  - block tile 256×128, 256 threads as 4×2 warps of 64×64, lanes 4 (M) ×
 *    8 (N), thread tile 16 rows × 8 columns: A in 4 groups of 4 rows 16
 *    apart, B in 2 groups of 4 columns 32 apart (a warp's A loads: 4
 *    addresses, broadcast to 8 lanes each; its B loads: 8 consecutive
 *    16-byte pieces; no bank conflict, as in 19);
 *  - BK 8, 3 stages (cuBLAS's choice);
 *  - one block per SM (__launch_bounds__(256, 1): up to 255 registers);
 *  - A copied by 4 lanes along k (64 rows a pass: 4 rows × 2 k a thread, 4
 *    pointers; 8 lanes, 8 pointers, cost 20 more instructions a tile in
 *    ptxas's pointer moves); B one 16-byte piece a thread;
 *  - one steady loop for blocks inside N and one for the N edge, so that
 *    no tile issues both forms of B's copy (ptxas predicates both when
 *    the test is inside the loop: 9 LDGSTS more a tile);
 *  - the epilogue (beta 0 / 1) a group of 4 rows at a time, so that the old
 *    C of beta 1 needs 32 registers, not 128.
 *   ptxas (nvcc 13.0, sm_90): 217 registers, no spill, 37,680 bytes of
 *   shared memory (3 × 12,544 and the barriers).  SASS of the steady loop
 *   (blocks inside N) per tile of 8 k: 1140 instructions, 18.2 KB of code
 *   (19: 1158 per 16 k, ~19 KB): 1024 FFMA (89.8%; 19: 88.4%), 48 LDS.128
 *   (19: 64), 9 LDGSTS + 1 arrive, 3 mbarrier waits / arrivals, 5 ptxas
 *   padding (@!PT LDS, NOP), 3 branches, 47 others (10 pointer
 *   increments, 8 moves of the A pointers between registers, shared
 *   addresses, ring counters).  Compiled and not kept: BK 16
 *   (<16, 3, 4>: 222 registers, 2223 instructions per 16 k, 92.1% FFMA,
 *   but a 35.6 KB loop, where 19b's 55 KB thrashed the instruction cache);
 *   4 stages (<8, 4, 4>: 221 registers, the same loop, 12.5 KB more shared
 *   memory).
 *
 * Not yet measured.
 */
#include "gemm_common.cuh"
#include "ladder.h"
#include "tma.cuh"

namespace
{

constexpr int BM = 256, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 64 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */
constexpr int G = 4;       /* floats per 16-byte vector */
constexpr int GA = 4;      /* vector groups along M (A) */
constexpr int GB = 2;      /* vector groups along N (B) */
constexpr int TM = G * GA; /* thread tile rows: 16 */
constexpr int TN = G * GB; /* thread tile columns: 8 */
constexpr int GSM = WM / GA /* 16 */, GSN = WN / GB /* 32 */;
static_assert(LANES_M * G == GSM && LANES_N * G == GSN, "thread tile");
static_assert(WARPS_M * WARPS_N * 32 == THREADS, "warps");

/* AKL: lanes along k in A's transposing copy.  The padding of sA's rows
 * keeps the 32 element writes of a warp on distinct banks: AKL k-rows ×
 * (32/AKL) consecutive m, k-rows SA apart, so SA ≡ 32/AKL (mod 32). */
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
    static_assert(BPT >= 1 && BPT * BTPR * G == BN && THREADS / BTPR == BK, "B copy mapping");
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

/* Global -> shared copies of one thread (19's Copier).  Per whole k-tile:
 * APASS·AKP element copies of A and BPT 16-byte copies of B, no predicate,
 * and APASS+1 pointer increments. */
template <typename L> struct Copier {
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
        b += b_tile;
    }
};

/* The lane's 16×8 accumulators into C (beta 0: C = acc; beta 1: C += acc);
 * B and C allow 16-byte access.  Whole blocks go a group of 4 rows at a
 * time (the old C of beta 1 in 32 registers), edge blocks row by row with
 * 19's guards. */
__device__ __forceinline__ void store_tile(const float (&acc)[TM][TN], float *__restrict__ C,
                                           int64_t ldc, int M, int N, int m0, int n0, int arow,
                                           int bcol, int beta)
{
    if (m0 + BM <= M && n0 + BN <= N) {
#pragma unroll
        for (int ga = 0; ga < GA; ++ga) {
            float4 old[G][GB];
#pragma unroll
            for (int ii = 0; ii < G; ++ii) {
                const float *crow = C + (int64_t)(m0 + arow + ga * GSM + ii) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GB; ++g)
                    if (beta)
                        old[ii][g] = *reinterpret_cast<const float4 *>(crow + g * GSN);
            }
#pragma unroll
            for (int ii = 0; ii < G; ++ii) {
                const int i = ga * G + ii;
                float *crow = C + (int64_t)(m0 + arow + ga * GSM + ii) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < GB; ++g) {
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
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + arow + (i / G) * GSM + (i % G);
        if (row >= M)
            continue;
        float *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < GB; ++g)
            dd::store_row_group<float, G, true>(crow, n0 + bcol + g * GSN, N, &acc[i][g * G], beta);
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* One tile t of the main loop (19's tile_step with a 16×8 thread tile):
 * fragments of k+1 loaded during the FFMAs of k, across the stage boundary
 * (the next stage's full barrier waited for at the last k); each thread
 * releases the stage once its fragments are loaded; the slot of tile t-1
 * (stage ps, parity pph; for t = 0 parity 1 of a fresh barrier, which
 * passes at once) is refilled at the first k.  fa / fb: this lane's
 * fragment addresses in stage rs, na / nb in stage ns (the next tile's). */
template <typename L, typename Fill>
__device__ __forceinline__ void
tile_step(float (&acc)[TM][TN], float (&a)[2][TM], float (&b)[2][TN], const float *fa,
          const float *fb, const float *na, const float *nb, uint64_t *full, uint64_t *empty,
          int rs, int ns, int ps, unsigned nph, unsigned pph, bool next, bool refill, Fill &fill)
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
        float *x = a[(p + 1) & 1], *y = b[(p + 1) & 1];
#pragma unroll
        for (int g = 0; g < GA; ++g) {
            const float4 va = *reinterpret_cast<const float4 *>(sa + q * L::SA + g * GSM);
            x[g * G + 0] = va.x, x[g * G + 1] = va.y, x[g * G + 2] = va.z, x[g * G + 3] = va.w;
        }
#pragma unroll
        for (int g = 0; g < GB; ++g) {
            const float4 vb = *reinterpret_cast<const float4 *>(sb + q * L::SB + g * GSN);
            y[g * G + 0] = vb.x, y[g * G + 1] = vb.y, y[g * G + 2] = vb.z, y[g * G + 3] = vb.w;
        }
        if (p == L::BK - 1) /* tile t's fragments are all loaded */
            bar_arrive(&empty[rs]);
        if (p == 0 && refill) {
            bar_wait(&empty[ps], pph);
            fill(ps);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = fmaf(a[p & 1][i], b[p & 1][j], acc[i][j]);
    }
}

#endif

/* 19's lean kernel in the 256×128 shape: the ring walked with counters at
 * run time, the fragment addresses moved by one uniform step per tile. */
template <int BK, int STAGES, int AKL>
__global__ void __launch_bounds__(THREADS, 1)
    wide_kernel(int M, int N, int K, const float *__restrict__ A, int64_t lda,
                const float *__restrict__ B, int64_t ldb, int beta, float *__restrict__ C,
                int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    typedef Cfg<BK, STAGES, AKL> L;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    float *smem = reinterpret_cast<float *>(smem_raw);
    uint64_t *full = (uint64_t *)(smem_raw + L::SMEM), *empty = full + STAGES;

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
            bar_init(&full[s], THREADS);
            bar_init(&empty[s], THREADS);
        }
        bar_init_fence();
    }
    __syncthreads();

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0;
    Copier<L> cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK, whole = K / BK;
    const bool inside_n = n0 + BN <= N;
    auto arrive_full = [&](int s) {
        asm volatile(
            "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(&full[s]))
            : "memory");
    };
    /* this thread's copies of a whole tile into stage s; they arrive on full[s] */
    auto fill_whole = [&](int s) {
        if (inside_n)
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
    float a[2][TM], b[2][TN];
    if (tiles > 0) {
        bar_wait(&full[0], 0);
#pragma unroll
        for (int g = 0; g < GA; ++g) {
            const float4 va = *reinterpret_cast<const float4 *>(fa + g * GSM);
            a[0][g * G + 0] = va.x, a[0][g * G + 1] = va.y, a[0][g * G + 2] = va.z;
            a[0][g * G + 3] = va.w;
        }
#pragma unroll
        for (int g = 0; g < GB; ++g) {
            const float4 vb = *reinterpret_cast<const float4 *>(fb + g * GSN);
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
    /* one steady loop per kind of B copy: no per-tile test of inside_n
     * (ptxas would otherwise issue both copies, predicated) */
    if (inside_n) {
        auto fill = [&](int s) {
            cp.template copy<0>(smem + s * L::STAGE, 0);
            arrive_full(s);
        };
        for (; t + STAGES - 1 < whole; ++t)
            step(true, true, fill);
    } else {
        auto fill = [&](int s) {
            cp.template copy<1>(smem + s * L::STAGE, 0);
            arrive_full(s);
        };
        for (; t + STAGES - 1 < whole; ++t)
            step(true, true, fill);
    }
    for (; t < tiles; ++t) {
        const int v = t + STAGES - 1;
        auto fill = [&](int s) { fill_any(s, v); };
        step(t + 1 < tiles, v < tiles, fill);
    }
    store_tile(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    __trap();
#endif
}

/* Whether a compute 9.x GPU runs `kern` as sm_90 code; e: the first error
 * of the queries (19's test). */
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
 * sm_90 code: the wide kernel; anything else: 19's launcher (which falls
 * back to 17, 07 and element-wise copies in turn). */
template <int BK, int STAGES, int AKL> int launch_wide(DD_LAUNCHER_ARGS(float))
{
    typedef Cfg<BK, STAGES, AKL> L;
    constexpr int SMEM = L::SMEM_ALL;
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
    auto kern = wide_kernel<BK, STAGES, AKL>;
    const bool sm90_ok = on_sm90(kern, sm90, &e);
    if (e != cudaSuccess)
        return e;
    if (!sm90_ok || !dd::vec16_ok<float>(B, ldb) || !dd::vec16_ok<float>(C, ldc))
        return dd_k19_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    if ((e = dd::allow_smem(kern, SMEM, &smem_set)) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C,
                                                 ldc);
    return dd::launch_status();
}

} // namespace

/* 21: cuBLAS's BK 8 and 3 stages, A copied by 4 lanes along k (four rows a thread). */
DD_LAUNCHER(dd_k21_sgemm, float, launch_wide<8, 3, 4>)
