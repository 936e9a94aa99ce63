/* sgemm_simt_general.cu — sgemm_simt's general kernel: the lean kernel's
 * tiles, warps and data path (kernels/sgemm_simt.cu, whose head says why
 * they are so) with edge predicates, and element-wise copies of B where its
 * rows are not 16-byte aligned; the mbarrier ring on compute 9.x, one block
 * barrier per tile before it.  sgemm_simt hands it the multiplies the lean
 * kernel cannot take. */
#include "gemm_common.cuh"
#include "sgemm_simt_tile.cuh"
#include "tma.cuh"

namespace simt
{

namespace general
{

/* BK 16, 3 stages; sA's rows (one k each) padded by a vector. */
struct Cfg {
    static constexpr int BK = 16, STAGES = 3;
    static constexpr int SA = BM + G;               /* sA row (one k), padded by a vector */
    static constexpr int SB = BN;                   /* sB row (one k) */
    static constexpr int STAGE = BK * SA + BK * SB; /* elements per stage */
    static constexpr int SMEM = STAGES * STAGE * (int)sizeof(float);
    static_assert(BK % 8 == 0, "A copy covers 8 k per pass");
};
using L = Cfg;

/* Global -> shared copies of one thread, tile after tile.  What does not
 * change along K (row pointers, which rows and columns exist, shared
 * offsets) is worked out once; per tile there remain a K test, the copies
 * and two pointer increments.
 * A is transposed on the way (sA[k][m]): 8 lanes along k read a 32-byte
 * row segment, 32 rows per pass; with the padded sA row the 32 element
 * writes of a warp hit distinct banks.  B is copied in 16-byte pieces
 * (VEC) or element by element. */
template <bool VEC> struct Copier {
    static constexpr int APASS = BM / 32, AKP = L::BK / 8; /* A: row passes, k passes */
    static constexpr int BW = VEC ? G : 1;                 /* B elements per copy */
    static constexpr int BCPR = BN / BW;                   /* B copies per row */
    static constexpr int BRS = THREADS / BCPR;             /* B rows per pass */
    static constexpr int BPASS = L::BK / BRS;
    static_assert(THREADS % BCPR == 0 && L::BK % BRS == 0, "B copy mapping");

    const float *a, *b;
    int64_t a_pass, b_pass, b_tile;
    unsigned a_rows; /* bit p: row of pass p exists */
    int a_k;         /* k of this thread's first A element within a tile */
    int b_row;       /* row of this thread's first B copy within a tile */
    int b_bytes;     /* bytes of its B piece inside N */
    int sa, sb;      /* shared offsets (elements) of the first copies */
    int k0;

    __device__ __forceinline__ Copier(const float *A, int64_t lda, const float *B, int64_t ldb,
                                      int M, int N, int m0, int n0)
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
        int nb = (N - n0 - bc) * (int)sizeof(float);
        b_bytes = nb < 0 ? 0 : (nb > BW * (int)sizeof(float) ? BW * (int)sizeof(float) : nb);
        sa = a_k * L::SA + ar;
        sb = L::BK * L::SA + b_row * L::SB + bc;
        k0 = 0;
    }

    __device__ __forceinline__ void copy(float *st, int K)
    {
        const int kleft = K - k0 - a_k; /* A columns left from this thread's first */
#pragma unroll
        for (int kp = 0; kp < AKP; ++kp)
#pragma unroll
            for (int p = 0; p < APASS; ++p) {
                const bool ok = ((a_rows >> p) & 1) && kp * 8 < kleft;
                dd::cp_async_elem<float>(st + sa + kp * 8 * L::SA + 32 * p,
                                         a + p * a_pass + kp * 8, ok);
            }
        const int rleft = K - k0 - b_row;
#pragma unroll
        for (int p = 0; p < BPASS; ++p) {
            const int bytes = p * BRS < rleft ? b_bytes : 0;
            if (VEC)
                dd::cp_async16(st + sb + p * BRS * L::SB, b + p * b_pass, bytes);
            else
                dd::cp_async4(st + sb + p * BRS * L::SB, b + p * b_pass, bytes);
        }
        a += L::BK;
        b += b_tile;
        k0 += L::BK;
    }
};

/* One k of a lane's fragments: 8 values of A (its rows), 8 of B (its columns). */
__device__ __forceinline__ void load_frag(const float *sA, const float *sB, int p, int arow,
                                          int bcol, float (&a)[8], float (&b)[8])
{
    typedef float4 V;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
        V va = *reinterpret_cast<const V *>(sA + p * L::SA + arow + g * GSM);
        V vb = *reinterpret_cast<const V *>(sB + p * L::SB + bcol + g * GSN);
#pragma unroll
        for (int e = 0; e < G; ++e) {
            a[g * G + e] = reinterpret_cast<const float *>(&va)[e];
            b[g * G + e] = reinterpret_cast<const float *>(&vb)[e];
        }
    }
}

/* Before compute 9.0: one block barrier per tile. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
    barrier_kernel(int M, int N, int K, const float *__restrict__ A, int64_t lda,
                   const float *__restrict__ B, int64_t ldb, int beta, float *__restrict__ C,
                   int64_t ldc)
{
    constexpr int BK = L::BK, STAGES = L::STAGES;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float *smem = reinterpret_cast<float *>(smem_raw);

    const Place at(M, N);
    const int m0 = at.m0, n0 = at.n0, arow = at.arow, bcol = at.bcol;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    Copier<VEC> cp(A, lda, B, ldb, M, N, m0, n0);
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
    float a[2][8], b[2][8];
    load_frag(smem, smem + BK * L::SA, 0, arow, bcol, a[0], b[0]);
    for (int t = 0; t < tiles; ++t) {
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            if (p == BK - 1) {
                dd::cp_async_wait<STAGES - 2>(); /* tile t+1 has landed ... */
                __syncthreads();                 /* ... for everyone; stage t-1 is free */
                rs = rs + 1 == STAGES ? 0 : rs + 1;
            }
            const float *st = smem + rs * L::STAGE;
            load_frag(st, st + BK * L::SA, (p + 1) % BK, arow, bcol, a[(p + 1) & 1],
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

    store_tile<VEC>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
}

/* Compute 9.x: mbarriers in place of the block barrier per tile.  Each
 * thread's copies of a stage arrive on the stage's "full" barrier when they
 * land (cp.async.mbarrier.arrive); each warp releases a stage on its
 * "empty" barrier once its fragments are loaded, and a stage is refilled
 * once all 8 warps released it.  A warp may run a tile ahead of the
 * slowest one.  Same data path, tiles and registers as barrier_kernel. */
template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
    mbar_kernel(int M, int N, int K, const float *__restrict__ A, int64_t lda,
                const float *__restrict__ B, int64_t ldb, int beta, float *__restrict__ C,
                int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    constexpr int BK = L::BK, STAGES = L::STAGES;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float *smem = reinterpret_cast<float *>(smem_raw);
    uint64_t *full = (uint64_t *)(smem_raw + L::SMEM), *empty = full + STAGES;
    const Place at(M, N);
    const int m0 = at.m0, n0 = at.n0, arow = at.arow, bcol = at.bcol, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], THREADS);
            bar_init(&empty[s], THREADS / 32);
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
    Copier<VEC> cp(A, lda, B, ldb, M, N, m0, n0);
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
    float a[2][8], b[2][8];
    if (tiles > 0) {
        bar_wait(&full[0], 0);
        load_frag(smem, smem + BK * L::SA, 0, arow, bcol, a[0], b[0]);
    }
    for (int t = 0; t < tiles; ++t) {
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            if (p == BK - 1) {
                if (t + 1 < tiles)
                    bar_wait(&full[(t + 1) % STAGES], ((t + 1) / STAGES) & 1);
                rs = rs + 1 == STAGES ? 0 : rs + 1;
            }
            const float *st = smem + rs * L::STAGE;
            load_frag(st, st + BK * L::SA, (p + 1) % BK, arow, bcol, a[(p + 1) & 1],
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
    store_tile<VEC>(acc, C, ldc, M, N, m0, n0, arow, bcol, beta);
#else
    (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C,
        (void)ldc;
    __trap();
#endif
}

/* mbar_kernel where the GPU is compute 9.x and the build has its sm_90
 * code (for mbarrier try_wait); barrier_kernel elsewhere.  B is copied in
 * 16-byte pieces and C stored in 16-byte pieces only when both allow it;
 * A is copied element-wise (transposed) either way. */
int launch(DD_LAUNCHER_ARGS(float))
{
    static unsigned long long smem_set[4];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    const bool vec = dd::vec16_ok<float>(B, ldb) && dd::vec16_ok<float>(C, ldc);
    auto kern = vec ? barrier_kernel<true> : barrier_kernel<false>;
    int smem = L::SMEM;
    static signed char sm90[64];
    const bool mbar = dd_tma::on_sm90(mbar_kernel<true>, sm90, &e);
    if (e != cudaSuccess)
        return e;
    if (mbar) {
        kern = vec ? mbar_kernel<true> : mbar_kernel<false>;
        smem = L::SMEM + 2 * L::STAGES * 8; /* and the stages' full and empty barriers */
    }
    if ((e = dd::allow_smem(kern, smem, &smem_set[2 * mbar + vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, smem, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C,
                                                 ldc);
    return dd::launch_status();
}

} // namespace general

} // namespace simt
