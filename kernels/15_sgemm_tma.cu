/* 15_sgemm_tma — FP32 on the CUDA cores (exact FP32, no TF32), 07's warp
 * tiles fed by the Tensor Memory Accelerator into an mbarrier ring as 10
 * does for FP64, and A read along k so that it needs no transposing copy.
 *
 * What it changes, against 07 (issue-bound: ncu found its FMA pipe at 66%
 * with issue slots at 77%; per 1024 FFMA a thread also issued ~10 cp.async,
 * their address arithmetic, a cp.async wait and a block barrier):
 *  - copies: per stage one TMA box of A (128 rows × 32 k) and one of B (32
 *    k-rows × 128 columns) into a 6-stage ring, 4 tiles ahead, issued by
 *    lane 0 of each warp in turn; full/empty mbarriers, no block barrier in
 *    the main loop, edges zero-filled by the TMA.
 *  - A stays k-contiguous (07 transposed it element by element on the way
 *    in): a lane reads 4 k of one of its rows with one 16-byte load, so 8
 *    loads give its 8 rows for 4 k steps.  The rows of a lane are m = lm +
 *    4i (lm its row lane, i = 0..7) and the TMA's 128-byte swizzle stores
 *    16-byte chunk c of row r at c ^ (r mod 8): the 4 row lanes of a warp
 *    read 4 different chunks, one wavefront.  B as in 07: one 128-byte
 *    wavefront per k.
 *  - one block of 256 threads per SM (up to 255 registers): 64
 *    accumulators, A's fragments of the next 4 k and B's of the next k
 *    loaded while this one's FFMAs issue.
 *  - C: 07's epilogue on this lane layout (rows lm + 4i, columns as 07).
 * Needs compute capability 9.x and A, B with 16-byte aligned bases and
 * leading dimensions a multiple of 4; otherwise it runs 07.
 *
 * Measured: see kernels/README.md (the ladder) and docs/results. */
#include "gemm_common.cuh"
#include "ladder.h"
#include "tma.cuh"

namespace
{

constexpr int BM = 128, BN = 128, BK = 32, THREADS = 256;
constexpr int WARPS_M = 4, WM = BM / WARPS_M, WN = 64; /* warp tile 32 × 64 */
constexpr int LANES_N = 8;
constexpr int GROUP_M = 8;
constexpr int A_BYTES = BM * BK * 4, B_BYTES = BK * BN * 4, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int smem_bytes(int stages)
{
    return stages * STAGE_BYTES + 2 * stages * 8 + 1024;
}
static_assert(BK * 4 == 128, "A's box row is one 128-byte swizzle span");

/* MINB blocks per SM (1: up to 255 registers, 2: 128); PA: A's fragments
 * of the next 4 k loaded during this group's FFMAs (else at its start). */
template <bool VEC, int STAGES, int AHEAD, int MINB, bool PA>
__global__ void __launch_bounds__(THREADS, MINB)
    k15(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, int M,
        int N, int K, int beta, float *__restrict__ C, int64_t ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using namespace dd_tma;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *ring = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    uint64_t *full = (uint64_t *)(ring + STAGES * STAGE_BYTES), *empty = full + STAGES;
    int bm, bn;
    dd::raster_grouped<GROUP_M>((M + BM - 1) / BM, (N + BN - 1) / BN, &bm, &bn);
    const int m0 = bm * BM, n0 = bn * BN, tiles = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], THREADS / 32);
        }
        bar_init_fence();
    }
    __syncthreads();
    auto issue = [&](int v) { /* k-tile v into slot v mod STAGES, once free */
                              const int s = v % STAGES;
                              if (v >= STAGES)
                                  bar_wait(&empty[s], ((v / STAGES) - 1) & 1);
                              bar_expect(&full[s], STAGE_BYTES);
                              unsigned char *st = ring + s * STAGE_BYTES;
                              load_2d(st, &ta, &full[s], v * BK, m0);
                              load_2d(st + A_BYTES, &tb, &full[s], n0, v * BK);
    };
    if (threadIdx.x == 0)
        for (int v = 0; v < AHEAD && v < tiles; ++v)
            issue(v);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp % WARPS_M, wn = warp / WARPS_M, lm = lane / LANES_N, ln = lane % LANES_N;
    /* A: row wm·32 + lm + 4i at byte (row)·128, chunk q ^ (row mod 8); the
     * row mod 8 is lm + 4 (i mod 2). */
    const int a_row = (wm * WM + lm) * 128;
    /* B: k-row k at byte A_BYTES + 512k, columns wn·64 + 4ln + 32g */
    const int b_col = A_BYTES + (wn * WN + 4 * ln) * 4;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.f;
    float a[PA ? 2 : 1][8][4], b[2][8];
    auto load_a = [&](const unsigned char *st, int q, float(&x)[8][4]) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int sw = (lm + 4 * (i & 1)) & 7;
            const float4 v =
                *reinterpret_cast<const float4 *>(st + a_row + i * 4 * 128 + ((q ^ sw) << 4));
            x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
        }
    };
    auto load_b = [&](const unsigned char *st, int k, float(&x)[8]) {
#pragma unroll
        for (int g = 0; g < 2; ++g) {
            const float4 v = *reinterpret_cast<const float4 *>(st + b_col + k * 512 + g * 128);
            x[4 * g] = v.x, x[4 * g + 1] = v.y, x[4 * g + 2] = v.z, x[4 * g + 3] = v.w;
        }
    };
    for (int kt = 0; kt < tiles; ++kt) {
        const int s = kt % STAGES;
        if (lane == 0 && warp == kt % (THREADS / 32) && kt + AHEAD < tiles)
            issue(kt + AHEAD);
        const unsigned char *st = ring + s * STAGE_BYTES;
        bar_wait(&full[s], (kt / STAGES) & 1);
        if (PA)
            load_a(st, 0, a[0]);
        load_b(st, 0, b[0]);
#pragma unroll
        for (int q = 0; q < BK / 4; ++q) {
            if (!PA)
                load_a(st, q, a[0]);
            else if (q + 1 < BK / 4)
                load_a(st, q + 1, a[(q + 1) & (PA ? 1 : 0)]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                const int k = 4 * q + kk;
                if (k + 1 < BK)
                    load_b(st, k + 1, b[(k + 1) & 1]);
                if (k + 1 == BK) { /* every fragment of the stage is in registers */
                    __syncwarp();
                    if (lane == 0)
                        bar_arrive(&empty[s]);
                }
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        acc[i][j] = fmaf(a[PA ? q & 1 : 0][i][kk], b[k & 1][j], acc[i][j]);
            }
        }
    }

    /* C: row m0 + wm·32 + lm + 4i, columns n0 + wn·64 + 4ln + 32g + e */
    const int row0 = m0 + wm * WM + lm, col0 = n0 + wn * WN + 4 * ln;
    if (VEC && m0 + BM <= M && n0 + BN <= N) {
        /* whole tile: for beta 1 the loads of four rows issued before the
         * first add, as 07 */
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float4 old[4][2];
            if (beta)
#pragma unroll
                for (int ii = 0; ii < 4; ++ii)
#pragma unroll
                    for (int g = 0; g < 2; ++g)
                        old[ii][g] = *reinterpret_cast<const float4 *>(
                            C + (int64_t)(row0 + 4 * (4 * half + ii)) * ldc + col0 + 32 * g);
#pragma unroll
            for (int ii = 0; ii < 4; ++ii)
#pragma unroll
                for (int g = 0; g < 2; ++g) {
                    const float *v = &acc[4 * half + ii][4 * g];
                    float4 o = make_float4(v[0], v[1], v[2], v[3]);
                    if (beta)
                        o.x += old[ii][g].x, o.y += old[ii][g].y, o.z += old[ii][g].z,
                            o.w += old[ii][g].w;
                    *reinterpret_cast<float4 *>(C + (int64_t)(row0 + 4 * (4 * half + ii)) * ldc +
                                                col0 + 32 * g) = o;
                }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + 4 * i;
        if (row >= M)
            continue;
#pragma unroll
        for (int g = 0; g < 2; ++g)
            dd::store_row_group<float, 4, VEC>(C + (int64_t)row * ldc, col0 + 32 * g, N,
                                               &acc[i][4 * g], beta);
    }
#else
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)beta, (void)C, (void)ldc;
    __trap();
#endif
}

template <int STAGES, int AHEAD, int MINB, bool PA> int launch15(DD_LAUNCHER_ARGS(float))
{
    static_assert(AHEAD >= 1 && AHEAD < STAGES, "the issuer must never wait on its own tile");
    constexpr int SMEM = smem_bytes(STAGES);
    static unsigned long long smem_set[2];
    static signed char sm90[64];
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    if (m > INT_MAX - BM || n > INT_MAX - BN || k > INT_MAX - BK)
        return cudaErrorInvalidValue;
    int dev = 0, major = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess)
        return e;
    /* no TMA before Hopper nor without sm_90 code; TMA strides are
     * multiples of 16 bytes */
    if (major != 9 || !dd_tma::has_sm90_code(k15<true, STAGES, AHEAD, MINB, PA>, dev, sm90) ||
        !dd::vec16_ok<float>(A, lda) || !dd::vec16_ok<float>(B, ldb))
        return dd_k07_sgemm(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);
    const long long blocks = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    CUtensorMap ta, tb;
    const cuuint64_t adim[2] = {(cuuint64_t)k, (cuuint64_t)m}, astr[1] = {(cuuint64_t)lda * 4};
    const cuuint64_t bdim[2] = {(cuuint64_t)n, (cuuint64_t)k}, bstr[1] = {(cuuint64_t)ldb * 4};
    const cuuint32_t abox[2] = {BK, BM}, bbox[2] = {BN, BK};
    if ((e = dd_tma::map_sw128(&ta, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, A, adim, astr, abox)) ||
        (e = dd_tma::map_tiled(&tb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, B, bdim, bstr, bbox,
                               CU_TENSOR_MAP_SWIZZLE_NONE)))
        return e;
    const bool vec = dd::vec16_ok<float>(C, ldc);
    auto kern = vec ? k15<true, STAGES, AHEAD, MINB, PA> : k15<false, STAGES, AHEAD, MINB, PA>;
    if ((e = dd::allow_smem(kern, SMEM, &smem_set[vec])) != cudaSuccess)
        return e;
    kern<<<(unsigned)blocks, THREADS, SMEM, s>>>(ta, tb, (int)m, (int)n, (int)k, beta, C, ldc);
    return dd::launch_status();
}

} // namespace

DD_LAUNCHER(dd_k15_sgemm, float, launch15<6, 4, 1, true>)
DD_LAUNCHER(dd_k15b_sgemm, float, launch15<3, 2, 2, false>)
