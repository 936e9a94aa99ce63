/* sgemm_simt — FP32 C = A·B (+ C) in FP32 arithmetic on the CUDA cores
 * (exact FP32 FFMA, no TF32): sgemm_dmma's fallback, and the kernel to name
 * (--kernel sgemm_simt) where FP32 arithmetic is wanted rather than
 * sgemm_dmma's FP64 products.
 *
 * Why its shape: FP32 FFMA on an H200 is issue-bound (one warp instruction
 * per scheduler and cycle), so the kernel is built to issue as few
 * instructions besides the FFMA as it can.
 *  - warp tiling: a 128×128 block of 8 warps of 32×64 (4 down, 2 across);
 *    a warp's 32 lanes form a 4×8 grid, and each lane owns an 8×8 thread
 *    tile made of 16-byte groups spread over the warp tile.  Per k a warp
 *    reads 4 distinct vectors of A (a broadcast) and 8 of B (one 128-byte
 *    wavefront): the least shared-memory traffic per FMA an 8×8 SIMT tile
 *    allows.  2 blocks per SM at 128 registers a thread: FP32 on the CUDA
 *    cores needs those 16 warps to keep the FFMA stream going.
 *  - cp.async: tiles go from global to shared memory without passing
 *    through registers; A is transposed on the way by element-wise copies
 *    (k-major in shared memory, rows padded so a warp's writes take
 *    distinct banks), B is copied in 16-byte pieces.
 *  - a 3-stage ring of k-tiles of 16, guarded by mbarriers instead of a
 *    block barrier per tile: each thread's copies arrive on a stage's
 *    "full" barrier as they land (cp.async.mbarrier.arrive), each thread
 *    releases a stage on its "empty" barrier once its fragments are
 *    loaded, so no 8 warps meet at a barrier every tile and a warp may run
 *    a tile ahead of the slowest one.
 *  - fragment double buffering: the registers for k+1 are loaded from
 *    shared memory while the FFMAs of k run, across the stage boundary too.
 *  - a lean main loop: whole k-tiles are copied without edge predicates
 *    (rows of A past M are read from row M-1, clamped once; their products
 *    land in accumulator rows that are never stored; blocks on the N edge
 *    take a per-thread byte count fixed for the whole loop), only the
 *    k-tile where K ends is predicated; one 64-bit pointer per copied row
 *    advanced by a constant; the ring walked by counters instead of
 *    divisions; every thread releasing a stage itself (no warp vote or lane
 *    test).  Per k-tile the steady loop issues 1024 FFMA, 64 LDS.128 and
 *    about 70 others.
 *  - grouped block order (8 block-rows at a time) keeps the A and B panels
 *    of resident blocks in L2.
 *
 * The lean kernel needs B and C fit for 16-byte access and sm_90 code
 * (mbarrier try_wait) on a compute 9.x GPU.  Elsewhere the general kernel
 * (kernels/sgemm_simt_general.cu) runs: the same tiles, warps and data path with edge
 * predicates and element-wise copies of B where its rows are not 16-byte
 * aligned, with the mbarrier ring on compute 9.x and one block barrier per
 * tile before it.  What both share (tiling, a lane's place, the store of
 * its tile): kernels/sgemm_simt_tile.cuh. */
#include "gemm_common.cuh"
#include "sgemm_simt_tile.cuh"
#include "tma.cuh"

namespace simt
{

/* ---- the lean kernel ----------------------------------------------------- */

/* BK 16, 3 stages (50 KB a block, 2 blocks per SM); AKL: lanes along k in
 * A's transposing copy (8: 32 rows a pass, 4 passes, four rows a thread).
 * The padding of sA's rows keeps the 32 element writes of a warp on
 * distinct banks: AKL k-rows × (32/AKL) consecutive m, k-rows SA apart, so
 * SA ≡ 32/AKL (mod 32). */
struct Cfg {
    static constexpr int BK = 16, STAGES = 3, AKL = 8;
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
 * APASS+1 pointer increments. */
struct Copier {
    using L = Cfg;
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* One tile t of the main loop: fragments of k+1 loaded during the FFMAs
 * of k, across the stage boundary (the next stage's full barrier waited for
 * at the last k); each thread releases the stage once its fragments are
 * loaded (256 arrivals: no warp vote, no lane test); the slot of tile t-1
 * (stage ps, its empty-barrier phase that of tile t-1: parity pph; for
 * t = 0 parity 1 of a fresh barrier, which passes at once) is refilled at
 * the first k.  fa / fb: this lane's fragment addresses in stage rs,
 * na / nb in stage ns (the next tile's). */
template <typename Fill>
__device__ __forceinline__ void
tile_step(float (&acc)[8][8], float (&a)[2][8], float (&b)[2][8], const float *fa, const float *fb,
          const float *na, const float *nb, uint64_t *full, uint64_t *empty, int rs, int ns, int ps,
          unsigned nph, unsigned pph, bool next, bool refill, Fill &fill)
{
    using namespace dd_tma;
    using L = Cfg;
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

/* The ring walked with counters at run time, the fragment addresses moved
 * by one uniform step per tile. */
__global__ void __launch_bounds__(THREADS, 2)
    lean_kernel(int M, int N, int K, const float *__restrict__ A, int64_t lda,
                const float *__restrict__ B, int64_t ldb, int beta, float *__restrict__ C,
                int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    typedef Cfg L;
    constexpr int BK = L::BK, STAGES = L::STAGES;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    float *smem = reinterpret_cast<float *>(smem_raw);
    uint64_t *full = (uint64_t *)(smem_raw + L::SMEM), *empty = full + STAGES;

    const Place at(M, N);
    const int m0 = at.m0, n0 = at.n0, arow = at.arow, bcol = at.bcol;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], THREADS);
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
    Copier cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK, whole = K / BK;
    const bool inside_n = n0 + BN <= N;
    /* this thread's copies of a whole tile into stage s; they arrive on full[s] */
    auto fill_whole = [&](int s) {
        if (inside_n)
            cp.copy<0>(smem + s * L::STAGE, 0);
        else
            cp.copy<1>(smem + s * L::STAGE, 0);
        cp_async_arrive(&full[s]);
    };
    /* ... of tile v, whole or not */
    auto fill_any = [&](int s, int v) {
        if (v < whole)
            fill_whole(s);
        else {
            cp.copy<2>(smem + s * L::STAGE, K - v * BK);
            cp_async_arrive(&full[s]);
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
        tile_step(acc, a, b, fa, fb, na, nb, full, empty, rs, ns, ps, nph, pph, next, refill,
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
    store_tile<true>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    __trap();
#endif
}

/* B and C allowing 16-byte access and a compute 9.x GPU with this build's
 * sm_90 code: the lean kernel; anything else: the general kernel. */
int sgemm_simt(DD_LAUNCHER_ARGS(float))
{
    typedef Cfg L;
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
    auto kern = lean_kernel;
    const bool sm90_ok = dd_tma::on_sm90(kern, sm90, &e);
    if (e != cudaSuccess)
        return e;
    if (!sm90_ok || !dd::vec16_ok<float>(B, ldb) || !dd::vec16_ok<float>(C, ldc))
        return general::launch(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    if ((e = dd::allow_smem(kern, SMEM, &smem_set)) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C,
                                                 ldc);
    return dd::launch_status();
}

} // namespace simt

DD_LAUNCHER(dd_sgemm_simt, float, simt::sgemm_simt)
