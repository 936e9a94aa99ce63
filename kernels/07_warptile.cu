/* 07_warptile — warp tiling over a multi-stage cp.async pipeline (exact
 * FP32 on the CUDA cores, no TF32); with mbarriers in place of the block
 * barrier it is 17_warptile_mbar (below), the FP32 production kernel until
 * 19_sgemm_lean.
 *
 * What it changes, against 06:
 *  - warp tiling: the 128×128 block tile is cut into 8 warp tiles of 32×64
 *    (4 warps down, 2 across); a warp's 32 lanes form a 4×8 grid, and each
 *    lane owns an 8×8 thread tile made of 16-byte groups spread over the
 *    warp tile.  Per k a warp then reads 4 distinct vectors of A (a
 *    broadcast) and 8 of B (one 128-byte wavefront): the shared-memory
 *    traffic per FMA is the lowest a SIMT 8×8 tile allows, and the lanes
 *    that share data are in one warp, which the hardware serves at once.
 *  - cp.async: tiles go from global to shared memory without passing
 *    through registers (no staging registers, no stores to issue); A is
 *    transposed on the way by element-wise async copies (k-major in shared
 *    memory), B is copied in 16-byte pieces.  Out-of-range elements are
 *    zero-filled by the copy itself (src-size 0).
 *  - STAGES-deep pipeline (3): the copies for tile t+STAGES-1 are in
 *    flight while tile t is computed; one barrier per tile.  Each thread's
 *    copy addresses and edge masks are worked out once (the first version
 *    recomputed them per tile: 200 integer instructions per 1024 FMAs).
 *  - fragment double buffering: the registers for k+1 are loaded from
 *    shared memory while the FMAs of k run, across the stage boundary too
 *    (the barrier for the next stage comes before the last k's FMAs).
 *  - BK = 16 (twice 06) halves the barriers per flop; grouped block order
 *    (8 block-rows at a time) keeps the A and B panels of resident blocks in
 *    L2.
 * FP32 uses 2 blocks per SM (≤ 128 registers per thread, 50 KB of shared
 * memory each); the FP64 instantiation of the same kernel (8×8 doubles =
 * 128 accumulator registers) runs 1 block per SM.  Misaligned B or C (odd ld
 * of a sub-block) selects an instantiation with element-wise copies and
 * scalar stores.
 *
 * Why it should help: 06 still spends issue slots on global->register->
 * shared copies and waits for them at every tile; here the copies are
 * fire-and-forget and hidden STAGES-1 tiles ahead, and the inner loop is
 * FMAs plus 4 (FP32) shared loads per 64 FMAs.
 *
 * Measured on H200 (docs/results/h200-gemm-bench-2026-11-29.txt): FP32
 * 44.8 / 45.3 / 46.6 TFLOP/s at n = 4096 / 8192 / 16384 = 91.4 / 89.4 /
 * 86.6% of cuBLAS SGEMM (no TF32) in the same run; SUMMA panels
 * 8192²×1024 and 16384²×1024 (beta 1): 98.2% and 93.3%.  FP64 (SIMT, not
 * the production path): 23.2 TFLOP/s at 4096 (37.6%).
 * Tuning history: docs/results/h200-kernel-tuning-2026-11-29.md.
 */
#include "gemm_common.cuh"
#include "ladder.h"
#include "tma.cuh"
#include "warptile.cuh"

namespace
{

using namespace dd_wt;

template <typename T, int BK_, int STAGES_> struct Cfg : Lane<T> {
    static constexpr int BK = BK_, STAGES = STAGES_;
    static constexpr int SA = BM + Lane<T>::G;      /* sA row (one k), padded by a vector */
    static constexpr int SB = BN;                   /* sB row (one k) */
    static constexpr int STAGE = BK * SA + BK * SB; /* elements per stage */
    static constexpr int SMEM = STAGES * STAGE * (int)sizeof(T);
    static_assert(BK % 8 == 0, "A copy covers 8 k per pass");
};

/* Global -> shared copies of one thread, tile after tile.  What does not
 * change along K (row pointers, which rows and columns exist, shared
 * offsets) is worked out once; per tile there remain a K test, the copies
 * and two pointer increments.
 * A is transposed on the way (sA[k][m]): 8 lanes along k read a 32-byte
 * (FP32) row segment, 32 rows per pass; with the padded sA row the 32
 * element writes of a warp hit distinct banks (FP32).  B is copied in
 * 16-byte pieces (VEC) or element by element. */
template <typename T, typename L, bool VEC> struct Copier {
    static constexpr int APASS = BM / 32, AKP = L::BK / 8; /* A: row passes, k passes */
    static constexpr int BW = VEC ? L::G : 1;              /* B elements per copy */
    static constexpr int BCPR = BN / BW;                   /* B copies per row */
    static constexpr int BRS = THREADS / BCPR;             /* B rows per pass */
    static constexpr int BPASS = L::BK / BRS;
    static_assert(THREADS % BCPR == 0 && L::BK % BRS == 0, "B copy mapping");

    const T *a, *b;
    int64_t a_pass, b_pass, b_tile;
    unsigned a_rows; /* bit p: row of pass p exists */
    int a_k;         /* k of this thread's first A element within a tile */
    int b_row;       /* row of this thread's first B copy within a tile */
    int b_bytes;     /* bytes of its B piece inside N */
    int sa, sb;      /* shared offsets (elements) of the first copies */
    int k0;

    __device__ __forceinline__ Copier(const T *A, int64_t lda, const T *B, int64_t ldb, int M,
                                      int N, int m0, int n0)
    {
        const int tid = threadIdx.x;
        a_k = tid % 8;
        const int ar = tid / 8;
        a = A + (int64_t)(m0 + ar) * lda + a_k;
        a_pass = 32 * lda;
        a_rows = 0;
#pragma unroll
        for (int p = 0; p < APASS; ++p)
            a_rows |= (m0 + ar + 32 * p < M ? 1u : 0u) << p;
        const int bc = (tid % BCPR) * BW;
        b_row = tid / BCPR;
        b = B + (int64_t)b_row * ldb + n0 + bc;
        b_pass = BRS * ldb;
        b_tile = L::BK * ldb;
        int nb = (N - n0 - bc) * (int)sizeof(T);
        b_bytes = nb < 0 ? 0 : (nb > BW * (int)sizeof(T) ? BW * (int)sizeof(T) : nb);
        sa = a_k * L::SA + ar;
        sb = L::BK * L::SA + b_row * L::SB + bc;
        k0 = 0;
    }

    __device__ __forceinline__ void copy(T *st, int K)
    {
        const int kleft = K - k0 - a_k; /* A columns left from this thread's first */
#pragma unroll
        for (int kp = 0; kp < AKP; ++kp)
#pragma unroll
            for (int p = 0; p < APASS; ++p) {
                const bool ok = ((a_rows >> p) & 1) && kp * 8 < kleft;
                dd::cp_async_elem<T>(st + sa + kp * 8 * L::SA + 32 * p, a + p * a_pass + kp * 8,
                                     ok);
            }
        const int rleft = K - k0 - b_row;
#pragma unroll
        for (int p = 0; p < BPASS; ++p) {
            const int bytes = p * BRS < rleft ? b_bytes : 0;
            if (VEC)
                dd::cp_async16(st + sb + p * BRS * L::SB, b + p * b_pass, bytes);
            else if (sizeof(T) == 8)
                dd::cp_async8(st + sb + p * BRS * L::SB, b + p * b_pass, bytes);
            else
                dd::cp_async4(st + sb + p * BRS * L::SB, b + p * b_pass, bytes);
        }
        a += L::BK;
        b += b_tile;
        k0 += L::BK;
    }
};

/* One k of a lane's fragments: 8 values of A (its rows), 8 of B (its columns). */
template <typename T, typename C>
__device__ __forceinline__ void load_frag(const T *sA, const T *sB, int p, int arow, int bcol,
                                          T (&a)[8], T (&b)[8])
{
    typedef typename dd::vec16<T>::type V;
#pragma unroll
    for (int g = 0; g < C::GROUPS; ++g) {
        V va = *reinterpret_cast<const V *>(sA + p * C::SA + arow + g * C::GSM);
        V vb = *reinterpret_cast<const V *>(sB + p * C::SB + bcol + g * C::GSN);
#pragma unroll
        for (int e = 0; e < C::G; ++e) {
            a[g * C::G + e] = reinterpret_cast<const T *>(&va)[e];
            b[g * C::G + e] = reinterpret_cast<const T *>(&vb)[e];
        }
    }
}

template <typename T, int BK, int STAGES, bool VEC>
__global__ void __launch_bounds__(THREADS, sizeof(T) == 4 ? 2 : 1)
    warptile_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                    const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C, int64_t ldc)
{
    typedef Cfg<T, BK, STAGES> L;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *smem = reinterpret_cast<T *>(smem_raw);

    const Place<L> at(M, N);
    const int m0 = at.m0, n0 = at.n0, arow = at.arow, bcol = at.bcol;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    Copier<T, L, VEC> cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles)
            cp.copy(smem + s * L::STAGE, K);
        dd::cp_async_commit();
    }
    dd::cp_async_wait<STAGES - 2>();
    __syncthreads();

    /* Fragments of k+1 are read while the FMAs of k run, across the stage
     * boundary too: the barrier for the next stage comes before the last
     * k of this one (its fragments are already in registers), and the
     * stage freed by that barrier is refilled at the next tile's first k. */
    int rs = 0, ws = STAGES - 1; /* stage read, stage written next */
    T a[2][8], b[2][8];
    load_frag<T, L>(smem, smem + BK * L::SA, 0, arow, bcol, a[0], b[0]);
    for (int t = 0; t < tiles; ++t) {
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            if (p == BK - 1) {
                dd::cp_async_wait<STAGES - 2>(); /* tile t+1 has landed ... */
                __syncthreads();                 /* ... for everyone; stage t-1 is free */
                rs = rs + 1 == STAGES ? 0 : rs + 1;
            }
            const T *st = smem + rs * L::STAGE;
            load_frag<T, L>(st, st + BK * L::SA, (p + 1) % BK, arow, bcol, a[(p + 1) & 1],
                            b[(p + 1) & 1]);
            if (p == 0) {
                if (t + STAGES - 1 < tiles)
                    cp.copy(smem + ws * L::STAGE, K);
                dd::cp_async_commit();
                ws = ws + 1 == STAGES ? 0 : ws + 1;
            }
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] += a[p & 1][i] * b[p & 1][j];
        }
    }
    dd::cp_async_wait<0>();

    store_tile<T, L, VEC>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
}

/* 17_warptile_mbar: 07 with mbarriers in place of the block barrier per
 * tile (Nsight Compute on 07 at 8192: no eligible warp in 18.7% of the
 * scheduler cycles, all 8 warps of a block meeting at every tile's
 * barrier).  Each thread's copies of a stage arrive on the stage's "full"
 * barrier when they land (cp.async.mbarrier.arrive); each warp releases a
 * stage on its "empty" barrier once its fragments are loaded, and a stage
 * is refilled once all 8 warps released it.  A warp may run a tile ahead
 * of the slowest one.  Same data path, tiles and registers as 07. */
template <typename T, int BK, int STAGES, bool VEC>
__global__ void __launch_bounds__(THREADS, sizeof(T) == 4 ? 2 : 1)
    mbar_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                int64_t ldb, int beta, T *__restrict__ C, int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    typedef Cfg<T, BK, STAGES> L;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *smem = reinterpret_cast<T *>(smem_raw);
    uint64_t *full = (uint64_t *)(smem_raw + L::SMEM), *empty = full + STAGES;
    const Place<L> at(M, N);
    const int m0 = at.m0, n0 = at.n0, arow = at.arow, bcol = at.bcol, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], THREADS);
            bar_init(&empty[s], THREADS / 32);
        }
        bar_init_fence();
    }
    __syncthreads();

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;
    Copier<T, L, VEC> cp(A, lda, B, ldb, M, N, m0, n0);
    const int tiles = (K + BK - 1) / BK;
    /* this thread's copies of tile v into its slot; they arrive on full */
    auto fill = [&](int v) {
        const int s = v % STAGES;
        cp.copy(smem + s * L::STAGE, K);
        cp_async_arrive(&full[s]);
    };
    for (int v = 0; v < STAGES - 1 && v < tiles; ++v)
        fill(v);
    int rs = 0;
    T a[2][8], b[2][8];
    if (tiles > 0) {
        bar_wait(&full[0], 0);
        load_frag<T, L>(smem, smem + BK * L::SA, 0, arow, bcol, a[0], b[0]);
    }
    for (int t = 0; t < tiles; ++t) {
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            if (p == BK - 1) {
                if (t + 1 < tiles)
                    bar_wait(&full[(t + 1) % STAGES], ((t + 1) / STAGES) & 1);
                rs = rs + 1 == STAGES ? 0 : rs + 1;
            }
            const T *st = smem + rs * L::STAGE;
            load_frag<T, L>(st, st + BK * L::SA, (p + 1) % BK, arow, bcol, a[(p + 1) & 1],
                            b[(p + 1) & 1]);
            if (p == BK - 1) { /* tile t's fragments are all loaded */
                __syncwarp();
                if (lane == 0)
                    bar_arrive(&empty[t % STAGES]);
            }
            if (p == 0 && t + STAGES - 1 < tiles) {
                /* refill the slot of tile t-1 once every warp released it */
                const int v = t + STAGES - 1;
                if (v >= STAGES)
                    bar_wait(&empty[v % STAGES], ((v / STAGES) - 1) & 1);
                fill(v);
            }
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] += a[p & 1][i] * b[p & 1][j];
        }
    }
    store_tile<T, L, VEC>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    __trap();
#endif
}

/* 07 (MBAR false) and 17 (MBAR: 17's kernel where the GPU is compute 9.x
 * and the build has its sm_90 code, for mbarrier try_wait; 07's
 * elsewhere). */
template <typename T, int BK, int STAGES, bool MBAR = false> int launch_cfg(DD_LAUNCHER_ARGS(T))
{
    typedef Cfg<T, BK, STAGES> L;
    static unsigned long long smem_set[4];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<T>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    /* B is copied in 16-byte pieces and C stored in 16-byte pieces only when
     * both allow it; A is copied element-wise (transposed) either way. */
    const bool vec = dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    auto kern = vec ? warptile_kernel<T, BK, STAGES, true> : warptile_kernel<T, BK, STAGES, false>;
    int smem = L::SMEM;
    bool mbar = false;
    if constexpr (MBAR) {
        static signed char sm90[64];
        mbar = dd_tma::on_sm90(mbar_kernel<T, BK, STAGES, true>, sm90, &e);
        if (e != cudaSuccess)
            return e;
        if (mbar) {
            kern = vec ? mbar_kernel<T, BK, STAGES, true> : mbar_kernel<T, BK, STAGES, false>;
            smem = L::SMEM + 2 * STAGES * 8; /* and the stages' full and empty barriers */
        }
    }
    if ((e = dd::allow_smem(kern, smem, &smem_set[2 * mbar + vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, smem, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C,
                                                 ldc);
    return dd::launch_status();
}

} // namespace

/* Production FP32: BK 16, 3 stages (50 KB a block, 2 blocks per SM);
 * chosen on the H200 against BK 16 with 4 stages, BK 8 with 4 and BK 32
 * with 3 (docs/results/h200-kernel-tuning-2026-11-29.md). */
DD_LAUNCHER(dd_k07_sgemm, float, launch_cfg<float, 16, 3>)
DD_LAUNCHER(dd_k07_dgemm, double, launch_cfg<double, 16, 3>)
/* 17 (the FP32 production kernel): 07's configuration; 4 stages measured
 * no better (docs/results/h200-2026-12-01-f32-mbar). */
DD_LAUNCHER(dd_k17_sgemm, float, launch_cfg<float, 16, 3, true>)
