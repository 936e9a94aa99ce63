/* 10_dmma_tma — 08's FP64 tensor-core multiply fed by the Tensor Memory
 * Accelerator from a producer warp, the consumer warps doing nothing but
 * shared-memory fragment loads and mma.
 *
 * What it changes, against 08 (which ncu found with its DMMA pipe at 89%,
 * 255 registers a thread and spills, every warp also computing cp.async
 * addresses and waiting at a block barrier per tile):
 *  - copies: per stage one TMA box of A (128 rows × 16
 *    doubles) and eight of B (16 k-rows × 16 columns each) into a 6-stage
 *    ring, 4 tiles ahead; mbarriers with transaction counts say when a
 *    stage has landed (full) and when the 8 warps are done with it (empty).
 *    No block barrier in the main loop, no copy addressing and no edge
 *    masks (the TMA zero-fills past M, N and K).  A dedicated producer warp
 *    would cost registers: with 9 warps an SM sub-partition holds 3 of
 *    them and ptxas caps a thread at 168 registers (setmaxnreg, which
 *    would move them, exists only in sm_90a); so lane 0 of each of the 8
 *    warps in turn issues a tile's copies, refilling the slot of the tile
 *    two steps back (thread 0 alone made its warp lag the others: 83-90%
 *    of cuBLAS).  Each warp releases a stage with one arrival (lane 0 after
 *    __syncwarp; one per thread measured the same).
 *  - layout: the TMA's 128-byte swizzle instead of padding (16-byte chunk
 *    c of row r stored at c ^ (r mod 8)).  B's fragment loads (k rows 2t
 *    and 2t+1, columns 2g, 2g+1) then hit 8 different chunks per quarter
 *    warp.  A's would hit rows g = 0, 1 with the same chunk sets, so mma
 *    column g reads shared row σ(g) = (g >> 1) | (g & 1) << 2: rows 0 and 4
 *    in one quarter warp, XOR patterns apart in bit 2, conflict-free.  The
 *    C rows follow: c0/c2 are row t of an 8-row slice, c1/c3 row t + 4.
 *  - the rest is 08's: block 128×128, 8 warps of 64×32, mma.m16n8k8 on
 *    C^T = B^T·A^T with k permuted so every operand is one 16-byte load in
 *    register order, grouped block order, the same epilogue (store_acc).
 *  - 256 threads, up to 255 registers a thread, as 08.
 * Needs compute capability 9.x and A, B with 16-byte aligned bases and even
 * leading dimensions (TMA strides are multiples of 16 bytes); otherwise it
 * runs 08.
 *
 * Measured: see kernels/README.md (the ladder) and docs/results. */
#include "dmma_core.cuh"
#include "tma.cuh"

namespace
{

using L = dd_dmma::Cfg<16, 6, 2, 4, false, 64, 32>; /* tile shapes for store_acc */
constexpr int BK = 16, THREADS = 256;
/* Stages and tiles ahead are template parameters; production 6 and 4:
 * 7/5, 5/3 and 6/3 measured no better (docs/results/h200-2026-12-01-rung10,
 * k11-stages-sweep.txt). */
constexpr int A_BYTES = L::BM * BK * 8; /* 128 rows × 128 bytes */
constexpr int B_BOX = BK * 16 * 8;      /* 16 k-rows × 16 columns */
constexpr int B_BYTES = (L::BN / 16) * B_BOX;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int smem_bytes(int stages)
{
    return stages * STAGE_BYTES + 2 * stages * 8 + 1024;
}
static_assert(L::BM == 128 && L::BN == 128 && L::MT == 8 && L::NT == 2, "08's tiles");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* D = A·B + D for a 16×8×16 FP64 tile (sm_90): the fragments of two k8
 * steps, in the order of two m16n8k8 (A: rows g, g+8 at k t + 4v; B: k
 * t + 4v at column g, v = 0..3). */
__device__ __forceinline__ void dmma_16x8x16(double (&c)[4], const double (&a0)[4],
                                             const double (&a1)[4], const double (&b0)[2],
                                             const double (&b1)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a0[0]), "d"(a0[1]), "d"(a0[2]), "d"(a0[3]), "d"(a1[0]), "d"(a1[1]), "d"(a1[2]),
          "d"(a1[3]), "d"(b0[0]), "d"(b0[1]), "d"(b1[0]), "d"(b1[1]));
}
#endif

template <bool VEC, bool K16, int STAGES, int AHEAD>
__global__ void __launch_bounds__(THREADS, 1)
    k10(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, int M,
        int N, int K, int beta, double *__restrict__ C, int64_t ldc, const unsigned int *gate)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    if (gate && !*(volatile const unsigned int *)gate) /* gated (ozaki2's fallback): off */
        return;
    constexpr int MT = L::MT, NT = L::NT;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *ring = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    uint64_t *full = (uint64_t *)(ring + STAGES * STAGE_BYTES), *empty = full + STAGES;

    int bm, bn;
    dd::raster_grouped<dd_dmma::GROUP_M>((M + L::BM - 1) / L::BM, (N + L::BN - 1) / L::BN, &bm,
                                         &bn);
    const int m0 = bm * L::BM, n0 = bn * L::BN, tiles = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], THREADS / 32);
        }
        bar_init_fence();
    }
    __syncthreads();
    /* The copies of tile v into slot v mod STAGES, once the slot's previous
     * tile (v - STAGES) is released by all 8 warps. */
    auto issue = [&](int v) {
        const int s = v % STAGES;
        if (v >= STAGES)
            bar_wait(&empty[s], ((v / STAGES) - 1) & 1);
        bar_expect(&full[s], STAGE_BYTES);
        unsigned char *st = ring + s * STAGE_BYTES;
        load_2d(st, &ta, &full[s], v * BK, m0);
#pragma unroll
        for (int nb = 0; nb < L::BN / 16; ++nb)
            load_2d(st + A_BYTES + nb * B_BOX, &tb, &full[s], n0 + 16 * nb, v * BK);
    };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0)
        for (int v = 0; v < AHEAD && v < tiles; ++v)
            issue(v);
    /* The warp's reads of slot s are done: one arrival a warp, after
     * __syncwarp. */
    auto release = [&](int s) {
        __syncwarp();
        if (lane == 0)
            bar_arrive(&empty[s]);
    };
    const int wm = warp % L::WARPS_M, wn = warp / L::WARPS_M, g = lane / 4, t = lane % 4;
    const int sg = (g >> 1) | ((g & 1) << 2); /* σ(g): the shared row of mma column g */
    /* byte offsets in a stage: A row wm·64 + 8j + σ(g), chunk (4kk + t) ^ σ(g);
     * B box wn·2 + i, k row 8kk + 2t + h, chunk g ^ (2t + h) */
    const int a_off = (wm * L::WM + sg) * 128, a_c0 = (t ^ sg) * 16, a_c1 = ((4 + t) ^ sg) * 16;
    const int b_off = A_BYTES + wn * 2 * B_BOX;
    const int b_h0 = 2 * t * 128 + (g ^ (2 * t)) * 16,
              b_h1 = (2 * t + 1) * 128 + (g ^ (2 * t + 1)) * 16;

    double acc[MT][NT][4];
    dd_dmma::zero_acc<L>(acc);
    /* Fragments of step kk+1 are loaded while the mma of step kk issue,
     * across the stage boundary too: the wait for the next stage comes
     * before the last step's mma, and this stage is released as soon as
     * its last fragments are in registers. */
    constexpr int KK = BK / 8;
    double fa[2][NT][4], fb[2][MT][2];
    auto load = [&](const unsigned char *st, int kk, double(&xa)[NT][4], double(&xb)[MT][2]) {
#pragma unroll
        for (int i = 0; i < NT; ++i) {
            const unsigned char *p = st + b_off + i * B_BOX + kk * 1024;
            const double2 lo = *reinterpret_cast<const double2 *>(p + b_h0);
            const double2 hi = *reinterpret_cast<const double2 *>(p + b_h1);
            xa[i][0] = lo.x, xa[i][1] = lo.y, xa[i][2] = hi.x, xa[i][3] = hi.y;
        }
#pragma unroll
        for (int j = 0; j < MT; ++j) {
            const double2 v =
                *reinterpret_cast<const double2 *>(st + a_off + j * 1024 + (kk ? a_c1 : a_c0));
            xb[j][0] = v.x, xb[j][1] = v.y;
        }
    };
    if (K16) { /* 11: one m16n8k16 per tile pair and stage, fragments of a stage at once */
        for (int kt = 0; kt < tiles; ++kt) {
            const int s = kt % STAGES;
            if (lane == 0 && warp == kt % (THREADS / 32) && kt + AHEAD < tiles)
                issue(kt + AHEAD); /* as below */
            const unsigned char *st = ring + s * STAGE_BYTES;
            bar_wait(&full[s], (kt / STAGES) & 1);
            load(st, 0, fa[0], fb[0]);
            load(st, 1, fa[1], fb[1]);
            release(s);
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int i = 0; i < NT; ++i)
                    dmma_16x8x16(acc[j][i], fa[0][i], fa[1][i], fb[0][j], fb[1][j]);
        }
    }
    if (!K16 && tiles > 0) {
        bar_wait(&full[0], 0);
        load(ring, 0, fa[0], fb[0]);
    }
    for (int kt = 0; !K16 && kt < tiles; ++kt) {
        const int s = kt % STAGES;
        /* lane 0 of each warp in turn (no one warp lags) refills the slot of
         * tile kt - 2, released long ago by the other warps, so the issuer
         * seldom waits for it (written out in both loops: a lambda for it
         * changed the generated code of the measured kernel) */
        if (lane == 0 && warp == kt % (THREADS / 32) && kt + AHEAD < tiles)
            issue(kt + AHEAD);
        const unsigned char *st = ring + s * STAGE_BYTES;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            if (kk + 1 < KK) {
                load(st, kk + 1, fa[(kk + 1) & 1], fb[(kk + 1) & 1]);
            } else {
                if (kt + 1 < tiles) {
                    const int s1 = (kt + 1) % STAGES;
                    bar_wait(&full[s1], ((kt + 1) / STAGES) & 1);
                    load(ring + s1 * STAGE_BYTES, 0, fa[(kk + 1) & 1], fb[(kk + 1) & 1]);
                }
                release(s);
            }
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int i = 0; i < NT; ++i)
                    dd_dmma::dmma_16x8x8(acc[j][i], fa[kk & 1][i], fb[kk & 1][j]);
        }
    }
    dd_dmma::store_acc<L, VEC, 4>(acc, C, ldc, M, N, m0, n0, m0 + wm * L::WM + t,
                                  n0 + wn * L::WN + 2 * g, beta);
#else
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)beta, (void)C, (void)ldc, (void)gate;
    __trap();
#endif
}

/* Whether the kernel this device runs was compiled for sm_90 or newer (its
 * PTX version), once per device. */
bool has_sm90_code(int dev)
{
    static signed char known[64]; /* 0 unknown, 1 yes, -1 no */
    if (dev < 0 || dev >= 64)
        return false;
    if (!known[dev]) {
        cudaFuncAttributes fa;
        bool ok =
            cudaFuncGetAttributes(&fa, k10<true, true, 6, 4>) == cudaSuccess && fa.ptxVersion >= 90;
        (void)cudaGetLastError();
        known[dev] = ok ? 1 : -1;
    }
    return known[dev] > 0;
}

/* gate: NULL, or a device word the kernel reads first: it multiplies only
 * where that is nonzero (ozaki2's native fallback, decided on the GPU).
 * Gated calls never fall back to 08: cudaErrorNotSupported instead. */
template <bool K16, int STAGES = 6, int AHEAD = STAGES - 2>
int launch10(DD_LAUNCHER_ARGS(double), const unsigned int *gate = nullptr)
{
    constexpr int SMEM = smem_bytes(STAGES);
    static unsigned long long smem_set[2];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    static_assert(AHEAD >= 1 && AHEAD < STAGES, "the issuer must never wait on its own tile");
    /* tile counts and origins in int */
    if (m > INT_MAX - L::BM || n > INT_MAX - L::BN || k > INT_MAX - BK)
        return cudaErrorInvalidValue;
    int dev = 0, major = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess)
        return e;
    /* no TMA before Hopper, nor in a build without sm_90 code (the kernel is
     * then a trap: e.g. compute_80 PTX JIT-compiled on an H200); TMA strides
     * are multiples of 16 bytes */
    if (major != 9 || !has_sm90_code(dev) || !dd::vec16_ok<double>(A, lda) ||
        !dd::vec16_ok<double>(B, ldb))
        return gate ? cudaErrorNotSupported
                    : dd_k08_dgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    const long long blocks = ((m + L::BM - 1) / L::BM) * ((n + L::BN - 1) / L::BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    CUtensorMap ta, tb;
    const cuuint64_t adim[2] = {(cuuint64_t)k, (cuuint64_t)m}, astr[1] = {(cuuint64_t)lda * 8};
    const cuuint64_t bdim[2] = {(cuuint64_t)n, (cuuint64_t)k}, bstr[1] = {(cuuint64_t)ldb * 8};
    const cuuint32_t abox[2] = {BK, (cuuint32_t)L::BM}, bbox[2] = {16, BK};
    if ((e = dd_tma::map_sw128(&ta, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, A, adim, astr, abox)) ||
        (e = dd_tma::map_sw128(&tb, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, B, bdim, bstr, bbox)))
        return e;
    if (dd::vec16_ok<double>(C, ldc)) {
        if ((e = dd::allow_smem(k10<true, K16, STAGES, AHEAD>, SMEM, &smem_set[1])) != cudaSuccess)
            return e;
        k10<true, K16, STAGES, AHEAD><<<(unsigned)blocks, THREADS, SMEM, s>>>(
            ta, tb, (int)m, (int)n, (int)k, beta, C, ldc, gate);
    } else {
        if ((e = dd::allow_smem(k10<false, K16, STAGES, AHEAD>, SMEM, &smem_set[0])) != cudaSuccess)
            return e;
        k10<false, K16, STAGES, AHEAD><<<(unsigned)blocks, THREADS, SMEM, s>>>(
            ta, tb, (int)m, (int)n, (int)k, beta, C, ldc, gate);
    }
    return dd::launch_status();
}

} // namespace

DD_LAUNCHER(dd_k10_dgemm, double, launch10<false>)
DD_LAUNCHER(dd_k11_dgemm, double, launch10<true>)

extern "C" int dd_k11_dgemm_gated(DD_LAUNCHER_ARGS(double), const unsigned int *gate)
{
    return launch10<true>(m, n, k, A, lda, B, ldb, beta, C, ldc, stream, gate);
}
