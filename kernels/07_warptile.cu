/* 07_warptile — warp tiling over a multi-stage cp.async pipeline: the
 * production FP32 kernel (exact FP32 on the CUDA cores, no TF32).
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
 *  - STAGES-deep pipeline (4 for FP32): the copies for tile t+STAGES-1 are
 *    in flight while tile t is computed; one barrier per tile.
 *  - fragment double buffering: the registers for k+1 are loaded from
 *    shared memory while the FMAs of k run.
 *  - BK = 16 (twice 06) halves the barriers per flop; grouped block order
 *    (8 block-rows at a time) keeps the A and B panels of resident blocks in
 *    L2.
 * FP32 uses 2 blocks per SM (≤ 128 registers per thread); the FP64
 * instantiation of the same kernel (8×8 doubles = 128 accumulator
 * registers) runs 1 block per SM with 3 stages.  Misaligned B or C (odd ld
 * of a sub-block) selects an instantiation with element-wise copies and
 * scalar stores.
 *
 * Why it should help: 06 still spends issue slots on global->register->
 * shared copies and waits for them at every tile; here the copies are
 * fire-and-forget and hidden STAGES-1 tiles ahead, and the inner loop is
 * FMAs plus 4 (FP32) shared loads per 64 FMAs.
 *
 * Measured on H200: not yet measured (see kernels/README.md).
 */
#include "gemm_common.cuh"
#include "ladder.h"

namespace {

constexpr int BM = 128, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 32 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */

template <typename T, int BK_, int STAGES_>
struct Cfg {
    static constexpr int BK = BK_, STAGES = STAGES_;
    static constexpr int G = 16 / (int)sizeof(T);  /* elements per 16-byte vector */
    static constexpr int GROUPS = 8 / G;           /* vector groups per thread-tile side */
    static constexpr int GSM = WM / GROUPS;        /* distance between a lane's row groups */
    static constexpr int GSN = WN / GROUPS;        /* ... and column groups */
    static constexpr int SA = BM + G;              /* sA row (one k), padded by a vector */
    static constexpr int SB = BN;                  /* sB row (one k) */
    static constexpr int STAGE = BK * SA + BK * SB; /* elements per stage */
    static constexpr int SMEM = STAGES * STAGE * (int)sizeof(T);
    static_assert(LANES_M * G * GROUPS == WM && LANES_N * G * GROUPS == WN, "thread tile");
    static_assert(BK % 8 == 0, "A copy covers 8 k per pass");
};

/* Global -> shared, asynchronously, for the tile at k0 into one stage. */
template <typename T, typename C, bool VEC>
__device__ __forceinline__ void copy_tile(T *sA, T *sB, const T *A, int64_t lda, const T *B,
                                          int64_t ldb, int M, int N, int K, int m0, int n0, int k0)
{
    const int tid = threadIdx.x;
    /* A, transposed: 8 lanes along k (a 32- or 64-byte row segment), 32 rows
     * per pass; sA[k][m] with the padded row makes the 32 writes of a warp
     * hit distinct banks (FP32). */
    {
        const int kl = tid % 8, r0 = tid / 8;
#pragma unroll
        for (int kp = 0; kp < C::BK / 8; ++kp) {
            const int k = kp * 8 + kl;
            const bool kok = k0 + k < K;
#pragma unroll
            for (int rp = 0; rp < BM / 32; ++rp) {
                const int r = r0 + rp * 32;
                const bool ok = kok && m0 + r < M;
                const T *src = ok ? A + (int64_t)(m0 + r) * lda + k0 + k : A;
                dd::cp_async_elem<T>(sA + k * C::SA + r, src, ok);
            }
        }
    }
    if (VEC) {
        constexpr int CPR = BN / C::G; /* 16-byte pieces per row of B */
        static_assert(THREADS % CPR == 0, "B copy mapping");
        const int c = (tid % CPR) * C::G, r0 = tid / CPR;
        int nbytes = (N - n0 - c) * (int)sizeof(T);
        nbytes = nbytes < 0 ? 0 : (nbytes > 16 ? 16 : nbytes);
#pragma unroll
        for (int rp = 0; rp < C::BK / (THREADS / CPR); ++rp) {
            const int r = r0 + rp * (THREADS / CPR);
            const bool ok = k0 + r < K && nbytes > 0;
            const T *src = ok ? B + (int64_t)(k0 + r) * ldb + n0 + c : B;
            dd::cp_async16(sB + r * C::SB + c, src, ok ? nbytes : 0);
        }
    } else {
        const int c = tid % BN, r0 = tid / BN;
        const bool nok = n0 + c < N;
#pragma unroll
        for (int rp = 0; rp < C::BK / (THREADS / BN); ++rp) {
            const int r = r0 + rp * (THREADS / BN);
            const bool ok = nok && k0 + r < K;
            const T *src = ok ? B + (int64_t)(k0 + r) * ldb + n0 + c : B;
            dd::cp_async_elem<T>(sB + r * C::SB + c, src, ok);
        }
    }
}

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
warptile_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda, const T *__restrict__ B,
                int64_t ldb, int beta, T *__restrict__ C, int64_t ldc)
{
    typedef Cfg<T, BK, STAGES> L;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *smem = reinterpret_cast<T *>(smem_raw);

    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    int bm, bn;
    dd::raster_grouped<GROUP_M>(grid_m, grid_n, &bm, &bn);
    const int m0 = bm * BM, n0 = bn * BN;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int lm = lane / LANES_N, ln = lane % LANES_N;
    const int arow = wm * WM + lm * L::G; /* first of the lane's rows in the block tile */
    const int bcol = wn * WN + ln * L::G; /* first of its columns */

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles)
            copy_tile<T, L, VEC>(smem + s * L::STAGE, smem + s * L::STAGE + BK * L::SA, A, lda, B,
                                 ldb, M, N, K, m0, n0, s * BK);
        dd::cp_async_commit();
    }

    for (int t = 0; t < tiles; ++t) {
        dd::cp_async_wait<STAGES - 2>(); /* tile t has landed (this thread's part) */
        __syncthreads();                 /* ... everyone's; and tile t-1 is consumed */
        {
            const int tn = t + STAGES - 1, sn = tn % STAGES;
            if (tn < tiles)
                copy_tile<T, L, VEC>(smem + sn * L::STAGE, smem + sn * L::STAGE + BK * L::SA, A,
                                     lda, B, ldb, M, N, K, m0, n0, tn * BK);
            dd::cp_async_commit();
        }
        const T *sA = smem + (t % STAGES) * L::STAGE;
        const T *sB = sA + BK * L::SA;
        T a[2][8], b[2][8];
        load_frag<T, L>(sA, sB, 0, arow, bcol, a[0], b[0]);
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            if (p + 1 < BK)
                load_frag<T, L>(sA, sB, p + 1, arow, bcol, a[(p + 1) & 1], b[(p + 1) & 1]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] += a[p & 1][i] * b[p & 1][j];
        }
    }
    dd::cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + arow + (i / L::G) * L::GSM + (i % L::G);
        if (row >= M)
            continue;
        T *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < L::GROUPS; ++g)
            dd::store_row_group<T, L::G, VEC>(crow, n0 + bcol + g * L::GSN, N, &acc[i][g * L::G], beta);
    }
}

template <typename T, int BK, int STAGES>
int launch_cfg(DD_LAUNCHER_ARGS(T))
{
    typedef Cfg<T, BK, STAGES> L;
    static unsigned long long smem_set[2];
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
    bool vec = dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    if (vec) {
        auto kern = warptile_kernel<T, BK, STAGES, true>;
        if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[1])) != cudaSuccess)
            return e;
        kern<<<(unsigned)blocks, THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    } else {
        auto kern = warptile_kernel<T, BK, STAGES, false>;
        if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[0])) != cudaSuccess)
            return e;
        kern<<<(unsigned)blocks, THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    }
    return dd::launch_status();
}

} // namespace

extern "C" int dd_k07_sgemm(DD_LAUNCHER_ARGS(float))
{
    return launch_cfg<float, 16, 4>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
extern "C" int dd_k07_dgemm(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<double, 16, 3>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}

#ifdef DD_KERNEL_VARIANTS
/* Other pipeline shapes, for gemm-bench --variants. */
extern "C" int dd_k07v_sgemm_bk8s4(DD_LAUNCHER_ARGS(float))
{
    return launch_cfg<float, 8, 4>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
extern "C" int dd_k07v_sgemm_bk16s3(DD_LAUNCHER_ARGS(float))
{
    return launch_cfg<float, 16, 3>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
extern "C" int dd_k07v_sgemm_bk32s3(DD_LAUNCHER_ARGS(float))
{
    return launch_cfg<float, 32, 3>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
#endif
