/* 08_dmma — FP64 on the tensor cores: mma.sync m16n8k8 f64, fed by a
 * multi-stage cp.async pipeline through padded shared memory.  The
 * production FP64 kernel (Hopper has no FP64 wgmma; DMMA through mma.sync
 * is its FP64 tensor path, 67 TFLOP/s on the datasheet against 34 for FP64
 * FMA on the CUDA cores).
 *
 * What it changes, against 07:
 *  - the multiply: a warp issues mma.sync.aligned.m16n8k8 (PTX ISA 7.8,
 *    sm_90), each 1024 FP64 multiply-adds, instead of 32 lanes' FMAs.  The
 *    larger sm_90 shapes issue a quarter (k8) of the instructions of the
 *    sm_80 m8n8k4 for the same work.
 *  - tiles: block 128×128, 8 warps of 64×32 (2 down, 4 across); a warp
 *    holds 4×4 mma tiles = 64 accumulators per lane.  BK = 16, 4 stages of
 *    cp.async in flight (41 KB a stage, 161 KB in all, 1 block per SM).
 *  - fragment layout with permuted k: within each k8 step the mma's
 *    logical k = t + 4v (t = lane%4, v = register) is mapped to shared-
 *    memory column 2t + v, for A and B alike (a bijection of the 8 k's, so
 *    the product is unchanged).  A lane's two A values (k t, t+4) of a row
 *    become one 16-byte load; B's columns are likewise permuted inside each
 *    16-column half of the warp tile so that a lane's values for two n8
 *    tiles are one 16-byte load.  Per k8 a warp issues 12 16-byte loads for
 *    16 mma, and in the epilogue each lane holds 4 consecutive columns
 *    (two 16-byte stores, 128 contiguous bytes per row across the 4 lanes
 *    of a group).
 *  - padding instead of swizzling: A rows are BK+8 doubles (row stride ≡ 16
 *    banks, so the two rows of a quarter-warp's 16-byte loads take disjoint
 *    halves of the banks), B rows BN+2 (so the four k rows a warp reads per
 *    register land in four different 8-bank groups: 2 wavefronts for 256
 *    bytes, the minimum).
 *  - grouped block order as in 07.
 * Edges: cp.async with src-size 0 / 8 zero-fills rows and columns beyond
 * M, N, K, so the main loop has no special case; stores are guarded.
 * Misaligned A, B or C (odd ld, or a base not 16-byte aligned) selects the
 * instantiation with 8-byte copies and scalar stores.
 *
 * Why it should help: per SM the tensor cores do 4x the FP64 work per
 * instruction slot of FMA, so the kernel is limited by feeding them:
 * 128×128 tiles cut global (L2) traffic to 16 flop per byte, four stages
 * cover the L2 latency, and the shared-memory loads above use about a third
 * of the bandwidth needed at the DMMA rate.
 *
 * Measured on H200: not yet measured (see kernels/README.md).
 */
#include "gemm_common.cuh"
#include "ladder.h"

namespace {

constexpr int WM = 64, WN = 32;          /* warp tile */
constexpr int MT = WM / 16, NT = WN / 8; /* mma tiles per warp: 4 × 4 */
constexpr int GROUP_M = 8;

/* Block = WARPS_M × WARPS_N warp tiles (production: 2 × 4, 128×128). */
template <int BK_, int STAGES_, int WARPS_M_ = 2, int WARPS_N_ = 4>
struct Cfg {
    static constexpr int BK = BK_, STAGES = STAGES_;
    static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int BM = WM * WARPS_M, BN = WN * WARPS_N;
    static constexpr int MIN_BLOCKS = THREADS >= 256 ? 1 : 2; /* ~240 registers a thread */
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
__device__ __forceinline__ void dmma_16x8x8(double (&c)[4], const double (&a)[4], const double (&b)[2])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DD_MMA884(c0, c1, a, b)                                                                   \
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"        \
        : "+d"(c0), "+d"(c1)                                                                      \
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

/* Global -> shared for the tile at k0, asynchronously, zero-filling
 * whatever lies outside the matrices. */
template <typename L, bool VEC>
__device__ __forceinline__ void copy_tile(double *sA, double *sB, const double *A, int64_t lda,
                                          const double *B, int64_t ldb, int M, int N, int K, int m0,
                                          int n0, int k0)
{
    constexpr int THREADS = L::THREADS, BM = L::BM, BN = L::BN;
    const int tid = threadIdx.x;
    constexpr int W = VEC ? 2 : 1;      /* doubles per copy */
    constexpr int ACPR = L::BK / W;     /* copies per row of the A tile */
    constexpr int BCPR = BN / W;        /* copies per row of the B tile */
    static_assert(THREADS % ACPR == 0 && THREADS % BCPR == 0, "copy mapping");
    {
        const int c = (tid % ACPR) * W, r0 = tid / ACPR;
        int kb = (K - k0 - c) * 8;
        kb = kb < 0 ? 0 : (kb > W * 8 ? W * 8 : kb);
#pragma unroll
        for (int rp = 0; rp < BM / (THREADS / ACPR); ++rp) {
            const int r = r0 + rp * (THREADS / ACPR);
            const bool ok = m0 + r < M && kb > 0;
            const double *src = ok ? A + (int64_t)(m0 + r) * lda + k0 + c : A;
            if (VEC)
                dd::cp_async16(sA + r * L::SA + c, src, ok ? kb : 0);
            else
                dd::cp_async8(sA + r * L::SA + c, src, ok ? 8 : 0);
        }
    }
    {
        const int c = (tid % BCPR) * W, r0 = tid / BCPR;
        int nb = (N - n0 - c) * 8;
        nb = nb < 0 ? 0 : (nb > W * 8 ? W * 8 : nb);
#pragma unroll
        for (int rp = 0; rp < L::BK / (THREADS / BCPR); ++rp) {
            const int r = r0 + rp * (THREADS / BCPR);
            const bool ok = k0 + r < K && nb > 0;
            const double *src = ok ? B + (int64_t)(k0 + r) * ldb + n0 + c : B;
            if (VEC)
                dd::cp_async16(sB + r * L::SB + c, src, ok ? nb : 0);
            else
                dd::cp_async8(sB + r * L::SB + c, src, ok ? 8 : 0);
        }
    }
}

template <typename L, bool VEC>
__global__ void __launch_bounds__(L::THREADS, L::MIN_BLOCKS)
dmma_kernel(int M, int N, int K, const double *__restrict__ A, int64_t lda,
            const double *__restrict__ B, int64_t ldb, int beta, double *__restrict__ C, int64_t ldc)
{
    constexpr int BK = L::BK, STAGES = L::STAGES, BM = L::BM, BN = L::BN;
    constexpr int WARPS_M = L::WARPS_M;
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
    const int a_off = (wm * WM + g) * L::SA + 2 * t;                /* + (16i + 8h)·SA + 8kk */
    const int b_off = L::A_ELEMS + (2 * t) * L::SB + wn * WN + 2 * g; /* + (8kk + v)·SB + 16jj */

    double acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[i][j][r] = 0.0;

    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles)
            copy_tile<L, VEC>(smem + s * L::STAGE, smem + s * L::STAGE + L::A_ELEMS, A, lda, B, ldb,
                              M, N, K, m0, n0, s * BK);
        dd::cp_async_commit();
    }

    for (int kt = 0; kt < tiles; ++kt) {
        dd::cp_async_wait<STAGES - 2>();
        __syncthreads();
        {
            const int tn = kt + STAGES - 1, sn = tn % STAGES;
            if (tn < tiles)
                copy_tile<L, VEC>(smem + sn * L::STAGE, smem + sn * L::STAGE + L::A_ELEMS, A, lda,
                                  B, ldb, M, N, K, m0, n0, tn * BK);
            dd::cp_async_commit();
        }
        const double *st = smem + (kt % STAGES) * L::STAGE;
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) {
            double a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    /* row g (+8): logical k t and t+4 -> registers h and 2+h */
                    double2 v = *reinterpret_cast<const double2 *>(st + a_off + (16 * i + 8 * h) * L::SA + 8 * kk);
                    a[i][h] = v.x;
                    a[i][2 + h] = v.y;
                }
#pragma unroll
            for (int v = 0; v < 2; ++v)
#pragma unroll
                for (int jj = 0; jj < NT / 2; ++jj) {
                    /* k row 2t+v, columns of n8 tiles 2jj and 2jj+1 for this g */
                    double2 w = *reinterpret_cast<const double2 *>(st + b_off + (8 * kk + v) * L::SB + 16 * jj);
                    b[2 * jj][v] = w.x;
                    b[2 * jj + 1][v] = w.y;
                }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    dmma_16x8x8(acc[i][j], a[i], b[j]);
        }
    }
    dd::cp_async_wait<0>();

    /* Tile j, logical column q of the mma maps to warp column
     * 2q + (j&1) + 16(j>>1); so c0/c1 (q = 2t, 2t+1) of tiles 2jj, 2jj+1 are
     * columns 16jj + 4t + {0, 2, 1, 3}. */
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m0 + wm * WM + 16 * i + 8 * h + g;
            if (row >= M)
                continue;
            double *crow = C + (int64_t)row * ldc;
#pragma unroll
            for (int jj = 0; jj < NT / 2; ++jj) {
                const double v[4] = {acc[i][2 * jj][2 * h], acc[i][2 * jj + 1][2 * h],
                                     acc[i][2 * jj][2 * h + 1], acc[i][2 * jj + 1][2 * h + 1]};
                dd::store_row_group<double, 4, VEC>(crow, n0 + wn * WN + 16 * jj + 4 * t, N, v, beta);
            }
        }
}

template <typename L>
int launch_cfg(DD_LAUNCHER_ARGS(double))
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
    bool vec = dd::vec16_ok<double>(A, lda) && dd::vec16_ok<double>(B, ldb) &&
               dd::vec16_ok<double>(C, ldc);
    if (vec) {
        auto kern = dmma_kernel<L, true>;
        if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[1])) != cudaSuccess)
            return e;
        kern<<<(unsigned)blocks, L::THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    } else {
        auto kern = dmma_kernel<L, false>;
        if ((e = dd::allow_smem(kern, L::SMEM, &smem_set[0])) != cudaSuccess)
            return e;
        kern<<<(unsigned)blocks, L::THREADS, L::SMEM, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc);
    }
    return dd::launch_status();
}

} // namespace

extern "C" int dd_k08_dgemm(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<Cfg<16, 4>>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}

#ifdef DD_KERNEL_VARIANTS
extern "C" int dd_k08v_dgemm_bk16s3(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<Cfg<16, 3>>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
extern "C" int dd_k08v_dgemm_bk32s3(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<Cfg<32, 3>>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
extern "C" int dd_k08v_dgemm_bk16s5(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<Cfg<16, 5>>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
/* 128×64 blocks of 4 warps, 2 blocks per SM: barriers of one block overlap
 * the other's work, at 1.5x the L2 traffic per flop. */
extern "C" int dd_k08v_dgemm_128x64(DD_LAUNCHER_ARGS(double))
{
    return launch_cfg<Cfg<16, 3, 2, 2>>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
}
#endif
