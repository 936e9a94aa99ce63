/* 07_warptile — warp tiling over a multi-stage cp.async pipeline (exact
 * FP32 on the CUDA cores, no TF32).
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
 *    copy addresses and edge masks are worked out once (recomputed per
 *    tile, they cost about 200 integer instructions per 1024 FMAs).
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
 */
#include "ladder.cuh"

namespace dd
{
namespace
{

/* 16 bytes of T: float4 or double2. */
template <typename T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
};
template <> struct vec16<double> {
    typedef double2 type;
};

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
__device__ __forceinline__ void cp_async4(void *smem, const void *gmem, int src_bytes)
{
    cp_async<4>(smem, gmem, src_bytes);
}
/* One element, whichever width T has. */
template <typename T>
__device__ __forceinline__ void cp_async_elem(T *smem, const T *gmem, bool valid)
{
    if (sizeof(T) == 8)
        cp_async8(smem, gmem, valid ? 8 : 0);
    else
        cp_async4(smem, gmem, valid ? 4 : 0);
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

/* Store (or accumulate) G contiguous elements of one C row: 16-byte stores
 * when the whole group is inside and C allows vectors, else scalars with a
 * guard per element. */
template <typename T, int G, bool VEC>
__device__ __forceinline__ void store_row_group(T *crow, int col, int N, const T *v, int beta)
{
    constexpr int W = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    if (VEC && G % W == 0 && col + G <= N) {
        typedef typename vec16<T>::type V;
#pragma unroll
        for (int q = 0; q < G / W; ++q) {
            V *p = reinterpret_cast<V *>(crow + col + q * W);
            V out;
            T *o = reinterpret_cast<T *>(&out);
            if (beta)
                out = *p;
#pragma unroll
            for (int e = 0; e < W; ++e)
                o[e] = beta ? o[e] + v[q * W + e] : v[q * W + e];
            *p = out;
        }
    } else {
#pragma unroll
        for (int e = 0; e < G; ++e) {
            if (col + e < N) {
                T x = v[e];
                if (beta)
                    x += crow[col + e];
                crow[col + e] = x;
            }
        }
    }
}

} // namespace
} // namespace dd

namespace
{

/* The warp tiling: a 128×128 block of 4 × 2 warps of 32×64, each lane an
 * 8×8 thread tile made of 16-byte groups spread over the warp tile; where
 * a block and a lane work, and the lane's accumulators into C. */
namespace dd_wt
{

constexpr int BM = 128, BN = 128, THREADS = 256;
constexpr int WARPS_M = 4, WARPS_N = 2, WM = BM / WARPS_M, WN = BN / WARPS_N; /* 32 × 64 */
constexpr int LANES_M = 4, LANES_N = 8;
constexpr int GROUP_M = 8; /* rasterisation */

/* A lane's 8×8 thread tile of T: GROUPS groups of G elements (one 16-byte
 * vector) a side, GSM rows and GSN columns apart. */
template <typename T> struct Lane {
    static constexpr int G = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    static constexpr int GROUPS = 8 / G;          /* vector groups per thread-tile side */
    static constexpr int GSM = WM / GROUPS;       /* distance between a lane's row groups */
    static constexpr int GSN = WN / GROUPS;       /* ... and column groups */
    static_assert(LANES_M * G * GROUPS == WM && LANES_N * G * GROUPS == WN, "thread tile");
};

/* Where a block and a lane work: the block's tile origin (grouped block
 * order) and the first of the lane's rows and columns in it. */
template <typename L> struct Place {
    int m0, n0, arow, bcol;
    __device__ __forceinline__ Place(int M, int N)
    {
        int bm, bn;
        dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
        m0 = bm * BM, n0 = bn * BN;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int lm = lane / LANES_N, ln = lane % LANES_N;
        arow = (warp % WARPS_M) * WM + lm * L::G;
        bcol = (warp / WARPS_M) * WN + ln * L::G;
    }
};

/* The lane's 8×8 accumulators into C (beta 0: C = acc; beta 1: C += acc). */
template <typename T, typename L, bool VEC>
__device__ __forceinline__ void store_tile(const T (&acc)[8][8], T *__restrict__ C, int64_t ldc,
                                           int M, int N, int m0, int n0, int arow, int bcol,
                                           int beta)
{
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* Whole tile inside C: no guards, and for beta 1 the loads of C for
         * four rows are all issued before the first add (instead of one
         * round trip to memory per 16-byte group). */
        typedef typename dd::vec16<T>::type V;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            V old[4][L::GROUPS];
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                const T *crow =
                    C + (int64_t)(m0 + arow + (i / L::G) * L::GSM + (i % L::G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < L::GROUPS; ++g)
                    if (beta)
                        old[ii][g] = *reinterpret_cast<const V *>(crow + g * L::GSN);
            }
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * half + ii;
                T *crow =
                    C + (int64_t)(m0 + arow + (i / L::G) * L::GSM + (i % L::G)) * ldc + n0 + bcol;
#pragma unroll
                for (int g = 0; g < L::GROUPS; ++g) {
                    V v;
                    T *vs = reinterpret_cast<T *>(&v);
                    const T *os = reinterpret_cast<const T *>(&old[ii][g]);
#pragma unroll
                    for (int e = 0; e < L::G; ++e)
                        vs[e] = beta ? acc[i][g * L::G + e] + os[e] : acc[i][g * L::G + e];
                    *reinterpret_cast<V *>(crow + g * L::GSN) = v;
                }
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + arow + (i / L::G) * L::GSM + (i % L::G);
        if (row >= M)
            continue;
        T *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < L::GROUPS; ++g)
            dd::store_row_group<T, L::G, VEC>(crow, n0 + bcol + g * L::GSN, N, &acc[i][g * L::G],
                                              beta);
    }
}

} // namespace dd_wt

} // namespace

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

template <typename T, int BK, int STAGES> int launch_cfg(DD_LAUNCHER_ARGS(T))
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
    const bool vec = dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    auto kern = vec ? warptile_kernel<T, BK, STAGES, true> : warptile_kernel<T, BK, STAGES, false>;
    if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta,
                                                    C, ldc);
    return dd::launch_status();
}

} // namespace

/* BK 16, 3 stages: 50 KB a block and 2 blocks per SM in FP32. */
DD_LAUNCHER(dd_07_warptile_f64, double, launch_cfg<double, 16, 3>)
DD_LAUNCHER(dd_07_warptile_f32, float, launch_cfg<float, 16, 3>)
