/* dmma_gemm.cuh — the kernel of dgemm_dmma (FP64 C) and sgemm_dmma (FP32 C
 * from FP64 operands): FP64 mma.sync m16n8k16 on the tensor cores, fed by
 * the Tensor Memory Accelerator, on compute 9.x.  dgemm_dmma.cu says why
 * each piece is there; this header is the machinery: the shared-memory
 * ring, the main loop, the epilogues, stream-K, the kernel and the host
 * side of a launch (tensor maps, the stream-K plan).  Everything is in an
 * anonymous namespace, one copy per translation unit.
 *
 * Per CTA: one 128×128 tile of C (dmma_tile.cuh), 8 warps of 64×32, 256
 * threads at up to 255 registers.  Per k-tile of 16: one TMA box of A (128
 * rows × 16 doubles) and eight of B (16 k-rows × 16 columns) into a
 * 6-stage ring, 4 k-tiles ahead; each stage has a "full" mbarrier (the TMA's
 * transaction count) and an "empty" one (one arrival a warp). */
#pragma once

#include "dmma_tile.cuh"
#include "sk.cuh"
#include "tma.cuh"

namespace
{

using L = dd_dmma::Tile;
constexpr int BK = 16, THREADS = L::THREADS;
constexpr int STAGES = 6; /* ring stages */
constexpr int AHEAD = 4;  /* k-tiles in flight ahead of the one computed */
constexpr int RELOAD = 6; /* the main loop's reload distance D (mainloop) */
static_assert(AHEAD >= 1 && AHEAD < STAGES, "the issuer must never wait on its own tile");
constexpr int A_BYTES = L::BM * BK * 8; /* 128 rows × 128 bytes */
constexpr int B_BOX = BK * 16 * 8;      /* 16 k-rows × 16 columns */
constexpr int B_BYTES = (L::BN / 16) * B_BOX;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM = STAGES * STAGE_BYTES + 2 * STAGES * 8 + 16 + 1024;
static_assert(L::BM == 128 && L::BN == 128 && L::MT == 8 && L::NT == 2, "the block tile");
/* The row pitch (doubles) of C staged in the ring by the beta-1 epilogue:
 * 4 past BN, so the 8 lanes of a quarter warp (rows t = 0..3 of the 8-row
 * slice, columns 2g, g = 0, 1) write 16-byte chunks 2t + g, 8 different
 * ones; at BN (1024 bytes) rows t fell on the same chunks, 4 lanes each. */
constexpr int EPI_PITCH = L::BN + 4;

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

/* The shared-memory ring: STAGES stages of A and B, a full and an empty
 * mbarrier per stage, and a word for stream-K's last-arrival flag. */
struct Ring {
    unsigned char *st;
    uint64_t *full, *empty;
    unsigned *flag;
};

/* Per-thread byte offsets of the mma fragments in a stage: A row wm·64 +
 * 8j + σ(g), chunk (4kk + t) ^ σ(g); B box wn·2 + i, k row 8kk + 2t + h,
 * chunk g ^ (2t + h).  σ(g) = (g >> 1) | (g & 1) << 2 is the shared row of
 * mma column g. */
struct Frag {
    int a_off, a_c0, a_c1, b_off, b_h0, b_h1;
    int wm, wn, g, t, warp, lane;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ Ring ring_init(unsigned char *smem_raw)
{
    using namespace dd_tma;
    Ring r;
    /* Aligned by an offset from the shared array itself (not through an
     * integer), so the compiler keeps the shared state space: fragment
     * loads are LDS with 32-bit addresses, not generic LD with 64-bit
     * address arithmetic on the long scoreboard. */
    r.st = smem_raw + ((0u - smem_addr(smem_raw)) & 1023u);
    r.full = (uint64_t *)(r.st + STAGES * STAGE_BYTES);
    r.empty = r.full + STAGES;
    r.flag = (unsigned *)(r.empty + STAGES);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&r.full[s], 1);
            bar_init(&r.empty[s], THREADS / 32);
        }
        bar_init_fence();
    }
    __syncthreads();
    return r;
}

__device__ __forceinline__ Frag frag_offsets()
{
    Frag f;
    f.warp = threadIdx.x / 32, f.lane = threadIdx.x % 32;
    f.wm = f.warp % L::WARPS_M, f.wn = f.warp / L::WARPS_M, f.g = f.lane / 4, f.t = f.lane % 4;
    const int sg = (f.g >> 1) | ((f.g & 1) << 2);
    f.a_off = (f.wm * L::WM + sg) * 128, f.a_c0 = (f.t ^ sg) * 16, f.a_c1 = ((4 + f.t) ^ sg) * 16;
    f.b_off = A_BYTES + f.wn * 2 * B_BOX;
    f.b_h0 = 2 * f.t * 128 + (f.g ^ (2 * f.t)) * 16;
    f.b_h1 = (2 * f.t + 1) * 128 + (f.g ^ (2 * f.t + 1)) * 16;
    return f;
}

/* The copies of k-tile kt into the ring's v-th use (slot v mod STAGES),
 * once the slot's previous use (v - STAGES) is released by all 8 warps. */
__device__ __forceinline__ void issue(const Ring &r, const CUtensorMap *ta, const CUtensorMap *tb,
                                      unsigned v, int kt, int m0, int n0)
{
    using namespace dd_tma;
    const unsigned s = v % STAGES;
    if (v >= STAGES)
        bar_wait(&r.empty[s], ((v / STAGES) - 1) & 1);
    bar_expect(&r.full[s], STAGE_BYTES);
    unsigned char *st = r.st + s * STAGE_BYTES;
    load_2d(st, ta, &r.full[s], kt * BK, m0);
#pragma unroll
    for (int nb = 0; nb < L::BN / 16; ++nb)
        load_2d(st + A_BYTES + nb * B_BOX, tb, &r.full[s], n0 + 16 * nb, kt * BK);
}

/* The warp's reads of slot s are done: one arrival a warp, after
 * __syncwarp. */
__device__ __forceinline__ void release(const Ring &r, const Frag &f, unsigned s)
{
    __syncwarp();
    if (f.lane == 0)
        dd_tma::bar_arrive(&r.empty[s]);
}

/* The main loop: acc += the product over k-tiles kt0 .. kt0 + nkt - 1 of the
 * tile at (m0, n0), through ring uses v0 .. v0 + nkt - 1.  Lane 0 of each
 * warp in turn (so that no one warp lags) refills the slot of the use
 * AHEAD - STAGES back, released long ago by the other warps.
 *
 * One set of fragment registers (a stage's: two k8 steps of 2 B pieces and
 * 8 A pairs; there are no registers for a second set), software-pipelined
 * across the stage boundary.  A stage's 16 m16n8k16 run B-piece-major
 * (position p = 8 i2 + j: acc[j][i2] from B piece i2 and A pair j), so B
 * piece 0 is last read at p = 7, A pair j at 8 + j, B piece 1 at 15.  Each
 * fragment of the next stage is reloaded D positions after its last read
 * (by then the mma has read the register: a load sooner waits for it) and
 * first read 8 - D or more positions later: B piece 0 at p = 7 + D, A pair
 * j at 8 + j + D, in this stage while <= 15; the rest (A pairs 8 - D .. 7,
 * B piece 1) at positions 0 .. D - 1 of the next stage, which releases its
 * slot after them.  So no warp stops its mma for a stage-wide reload. */
__device__ __forceinline__ void mainloop(const Ring &r, const Frag &f, const CUtensorMap *ta,
                                         const CUtensorMap *tb, int m0, int n0, int kt0, int nkt,
                                         unsigned v0, double (&acc)[L::MT][L::NT][4])
{
    constexpr int D = RELOAD;
    static_assert(D >= 1 && D <= 7, "reload distance");
    if (threadIdx.x == 0)
        for (int i = 0; i < AHEAD && i < nkt; ++i)
            issue(r, ta, tb, v0 + i, kt0 + i, m0, n0);
    double fa[2][L::NT][4], fb[2][L::MT][2];
    auto load_b = [&](const unsigned char *st, int i2) {
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            const unsigned char *p = st + f.b_off + i2 * B_BOX + kk * 1024;
            const double2 lo = *reinterpret_cast<const double2 *>(p + f.b_h0);
            const double2 hi = *reinterpret_cast<const double2 *>(p + f.b_h1);
            fa[kk][i2][0] = lo.x, fa[kk][i2][1] = lo.y, fa[kk][i2][2] = hi.x, fa[kk][i2][3] = hi.y;
        }
    };
    auto load_a = [&](const unsigned char *st, int j) {
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            const double2 x =
                *reinterpret_cast<const double2 *>(st + f.a_off + j * 1024 + (kk ? f.a_c1 : f.a_c0));
            fb[kk][j][0] = x.x, fb[kk][j][1] = x.y;
        }
    };
    if (nkt > 0) { /* the early fragments of the first stage */
        dd_tma::bar_wait(&r.full[v0 % STAGES], (v0 / STAGES) & 1);
        const unsigned char *st = r.st + (v0 % STAGES) * STAGE_BYTES;
        load_b(st, 0);
#pragma unroll
        for (int j = 0; j + D < 8; ++j)
            load_a(st, j);
    }
    for (int i = 0; i < nkt; ++i) {
        const unsigned v = v0 + i, s = v % STAGES;
        const unsigned char *st = r.st + s * STAGE_BYTES;
        const bool more = i + 1 < nkt;
        const unsigned char *nx = r.st + ((v + 1) % STAGES) * STAGE_BYTES;
#pragma unroll
        for (int p = 0; p < 16; ++p) {
            const int i2 = p / 8, j = p % 8;
            dmma_16x8x16(acc[j][i2], fa[0][i2], fa[1][i2], fb[0][j], fb[1][j]);
            if (p < D) { /* this stage's late fragments */
                load_a(st, 8 + p - D);
                if (p == D - 1) {
                    load_b(st, 1);
                    release(r, f, s);
                    if (f.lane == 0 && f.warp == i % (THREADS / 32) && i + AHEAD < nkt)
                        issue(r, ta, tb, v + AHEAD, kt0 + i + AHEAD, m0, n0);
                }
            }
            if (more && p == 7 + D) {
                dd_tma::bar_wait(&r.full[(v + 1) % STAGES], ((v + 1) / STAGES) & 1);
                load_b(nx, 0);
            }
            if (more && p >= 8 + D)
                load_a(nx, p - 8 - D);
        }
    }
}
#endif

using SkArgs = dd_sk::Args;            /* ctas = 0: whole tiles only */
constexpr int ACC = L::MT * L::NT * 4; /* accumulators a thread */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* The epilogue, FP64 C.  For beta 1, a whole tile with 16-byte aligned rows
 * goes through shared memory (the free ring) and leaves by one bulk FP64
 * add per row (cp.reduce.async.bulk: C's read-modify-write done at L2, no
 * load of C into the SM, which would wait for DRAM before its adds); the
 * CTA waits only until shared memory has been read.  Beta 0 and edge
 * tiles: store_acc (plain stores need no wait; a staged bulk copy is
 * slower for beta 0). */
template <bool VEC>
__device__ __forceinline__ void epilogue(const double (&acc)[L::MT][L::NT][4], const Ring &r,
                                         const Frag &f, double *C, int64_t ldc, int M, int N,
                                         int m0, int n0, int beta)
{
    if (!VEC || !beta || m0 + L::BM > M || n0 + L::BN > N) {
        dd_dmma::store_acc<VEC, 4>(acc, C, ldc, M, N, m0, n0, m0 + f.wm * L::WM + f.t,
                                   n0 + f.wn * L::WN + 2 * f.g, beta);
        return;
    }
    __syncthreads(); /* every warp is done with the ring */
    double *tile = (double *)r.st;
    const int row0 = f.wm * L::WM + f.t, col0 = f.wn * L::WN + 2 * f.g;
#pragma unroll
    for (int j = 0; j < L::MT; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < L::NT; ++i)
                *reinterpret_cast<double2 *>(tile + (row0 + 8 * j + 4 * h) * EPI_PITCH + col0 +
                                             16 * i) = make_double2(acc[j][i][h], acc[j][i][2 + h]);
    dd_tma::fence_async_smem();
    __syncthreads();
    if (threadIdx.x < L::BM) {
        double *dst = C + (int64_t)(m0 + threadIdx.x) * ldc + n0;
        const double *src = tile + threadIdx.x * EPI_PITCH;
        dd_tma::bulk_add_f64(dst, src, L::BN * 8);
        dd_tma::bulk_wait_read();
    }
    __syncthreads(); /* the ring may be refilled */
}

/* The epilogue, FP32 C (sgemm_dmma): store_acc with a float C, each value
 * rounded once from the FP64 accumulator plus, for beta 1, C's old value. */
template <bool VEC>
__device__ __forceinline__ void epilogue(const double (&acc)[L::MT][L::NT][4], const Ring &,
                                         const Frag &f, float *C, int64_t ldc, int M, int N, int m0,
                                         int n0, int beta)
{
    dd_dmma::store_acc<VEC, 4, float>(acc, C, ldc, M, N, m0, n0, m0 + f.wm * L::WM + f.t,
                                      n0 + f.wn * L::WN + 2 * f.g, beta);
}

/* A partial tile of stream-K CTA c (part of tail tile j's k-tiles): into
 * its slot (dd_sk_slot), then an arrival.  The last
 * contributor returns true with acc = the sum of every contributor's
 * partial, added in CTA order (the same sum whichever arrives last). */
__device__ __forceinline__ bool sk_combine(double (&acc)[L::MT][L::NT][4], const Ring &r,
                                           const SkArgs &sk, int64_t U, int KT, int c, int j)
{
    const int64_t t0 = (int64_t)j * KT;
    const size_t elems = (size_t)THREADS * ACC;
    double2 *w = (double2 *)dd_sk::slot_ptr<double>(sk, dd_sk_slot(U, sk.ctas, c, t0), elems);
    int q = 0;
#pragma unroll
    for (int a = 0; a < L::MT; ++a)
#pragma unroll
        for (int i = 0; i < L::NT; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                w[(q++) * THREADS + threadIdx.x] = make_double2(acc[a][i][h], acc[a][i][2 + h]);
    if (!dd_sk::arrive(sk, U, t0, KT, j, r.flag))
        return false;
    dd_dmma::zero_acc(acc);
    const int lo = (int)dd_sk_owner(U, sk.ctas, t0), hi = (int)dd_sk_owner(U, sk.ctas, t0 + KT - 1);
    for (int p = lo; p <= hi; ++p) {
        const double2 *wp =
            (const double2 *)dd_sk::slot_ptr<double>(sk, dd_sk_slot(U, sk.ctas, p, t0), elems);
        q = 0;
#pragma unroll
        for (int a = 0; a < L::MT; ++a)
#pragma unroll
            for (int i = 0; i < L::NT; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const double2 x = __ldcg(wp + (q++) * THREADS + threadIdx.x);
                    acc[a][i][h] += x.x, acc[a][i][2 + h] += x.y;
                }
    }
    return true;
}
#endif

/* The kernel: CTAs [0, sk.dp) each compute a whole tile (grouped order);
 * the sk.ctas CTAs after them share the k-tiles of the last sk.tail tiles
 * (stream-K, sk_plan.h).  C of FP64 or FP32 (TC).  gate: NULL, or a device
 * word read first; the CTA multiplies only where it is nonzero. */
template <bool VEC, typename TC>
__global__ void __launch_bounds__(THREADS, 1)
    dmma_gemm_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                     int M, int N, int K, int beta, TC *__restrict__ C, int64_t ldc,
                     const SkArgs sk, const unsigned int *gate)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (gate && !*(volatile const unsigned int *)gate) /* gated (ozaki2's fallback): off */
        return;
    static_assert(STAGES * STAGE_BYTES >= L::BM * EPI_PITCH * 8,
                  "the epilogue stages C in the ring");
    extern __shared__ unsigned char smem_raw[];
    const Ring r = ring_init(smem_raw);
    const int gm = (M + L::BM - 1) / L::BM, gn = (N + L::BN - 1) / L::BN, KT = (K + BK - 1) / BK;
    const Frag f = frag_offsets();
    double acc[L::MT][L::NT][4];
    int bm, bn;
    if ((int)blockIdx.x < sk.dp) { /* a whole tile */
        dd::raster_grouped<dd_dmma::GROUP_M>(gm, gn, &bm, &bn);
        dd_dmma::zero_acc(acc);
        mainloop(r, f, &ta, &tb, bm * L::BM, bn * L::BN, 0, KT, 0, acc);
        epilogue<VEC>(acc, r, f, C, ldc, M, N, bm * L::BM, bn * L::BN, beta);
        return;
    }
    /* stream-K CTA c: k-tiles [u, u1) of the tail, tile-major */
    const int c = blockIdx.x - sk.dp;
    const int64_t U = (int64_t)sk.tail * KT, u1 = dd_sk_begin(U, sk.ctas, c + 1);
    unsigned v = 0; /* ring uses so far */
    for (int64_t u = dd_sk_begin(U, sk.ctas, c); u < u1;) {
        const int j = (int)(u / KT), kb = (int)(u - (int64_t)j * KT);
        const int ke = (int)min((int64_t)KT, u1 - (int64_t)j * KT);
        dd::raster_grouped<dd_dmma::GROUP_M>(gm, gn, &bm, &bn, sk.dp + j);
        dd_dmma::zero_acc(acc);
        mainloop(r, f, &ta, &tb, bm * L::BM, bn * L::BN, kb, ke - kb, v, acc);
        v += ke - kb;
        if ((kb == 0 && ke == KT) || sk_combine(acc, r, sk, U, KT, c, j))
            epilogue<VEC>(acc, r, f, C, ldc, M, N, bm * L::BM, bn * L::BN, beta);
        u = (int64_t)(j + 1) * KT;
    }
#else
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)beta, (void)C, (void)ldc, (void)sk,
        (void)gate;
    __trap();
#endif
}

/* Whether this device runs the kernel's sm_90 code (see tma.cuh), asked
 * of the instantiation for C of type TC (the translation unit's own). */
template <typename TC> bool has_sm90_code(int dev)
{
    static signed char known[64];
    return dd_tma::has_sm90_code(dmma_gemm_kernel<true, TC>, dev, known);
}

/* The tensor maps of A (m × k, boxes of BM rows × BK) and B (k × n, boxes
 * of BK rows × 16), both FP64 with the 128-byte swizzle. */
int make_maps(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
              int64_t ldb, CUtensorMap *ta, CUtensorMap *tb)
{
    const cuuint64_t adim[2] = {(cuuint64_t)k, (cuuint64_t)m}, astr[1] = {(cuuint64_t)lda * 8};
    const cuuint64_t bdim[2] = {(cuuint64_t)n, (cuuint64_t)k}, bstr[1] = {(cuuint64_t)ldb * 8};
    const cuuint32_t abox[2] = {BK, (cuuint32_t)L::BM}, bbox[2] = {16, BK};
    int e = dd_tma::map_sw128(ta, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, A, adim, astr, abox);
    return e ? e : dd_tma::map_sw128(tb, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, B, bdim, bstr, bbox);
}

/* Whether a multiply of m × n tiles and depth k can take the kernel here:
 * returns cudaErrorInvalidValue where tile counts or origins would
 * overflow int, a CUDA query's error, else cudaSuccess with *dev (the
 * current device), *tiles and *ok (compute 9.x and a build with sm_90
 * code: before Hopper there is no TMA, and without sm_90 code the kernel
 * is a trap, e.g. compute_80 PTX JIT-compiled on an H200).  TC: the type
 * of C the caller launches the kernel for. */
template <typename TC>
int tma_target(int64_t m, int64_t n, int64_t k, int *dev, long long *tiles, bool *ok)
{
    *ok = false;
    if (m > INT_MAX - L::BM || n > INT_MAX - L::BN || k > INT_MAX - BK)
        return cudaErrorInvalidValue;
    int major = 0, e;
    if ((e = cudaGetDevice(dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, *dev)) != cudaSuccess)
        return e;
    *tiles = ((m + L::BM - 1) / L::BM) * ((n + L::BN - 1) / L::BN);
    *ok = major == 9 && has_sm90_code<TC>(*dev);
    return cudaSuccess;
}

/* The kernel on prepared tensor maps (tiles output tiles on device dev),
 * with stream-K for the last wave where sk_plan.h finds it gains (where
 * its workspace cannot be had, whole tiles).  vec: C allows vector access
 * (16-byte for FP64, 8-byte for FP32).  gate: see dmma_gemm_kernel. */
template <typename TC>
int run_dmma_gemm(const CUtensorMap &ta, const CUtensorMap &tb, int64_t m, int64_t n, int64_t k,
                  int beta, TC *C, int64_t ldc, long long tiles, int dev, bool vec, cudaStream_t s,
                  const unsigned int *gate = nullptr)
{
    static unsigned long long smem_set[2];
    static int sms[64];
    int e = cudaSuccess;
    if (dev < 64 && !sms[dev])
        e = cudaDeviceGetAttribute(&sms[dev], cudaDevAttrMultiProcessorCount, dev);
    SkArgs sk = {(int)tiles, 0, 0, nullptr, nullptr};
    if (e == cudaSuccess && dev < 64)
        e = dd_sk::setup(tiles, sms[dev], (k + BK - 1) / BK, (size_t)THREADS * ACC * sizeof(double),
                         dev, s, &sk);
    if (e != cudaSuccess)
        return e;
    auto kern = vec ? dmma_gemm_kernel<true, TC> : dmma_gemm_kernel<false, TC>;
    if ((e = dd::allow_smem(kern, SMEM, &smem_set[vec])) == cudaSuccess) {
        kern<<<(unsigned)(sk.dp + sk.ctas), THREADS, SMEM, s>>>(ta, tb, (int)m, (int)n, (int)k,
                                                                beta, C, ldc, sk, gate);
        e = dd::launch_status();
    }
    const int fe = dd_sk::release(sk, s);
    return e ? e : fe;
}

} // namespace
