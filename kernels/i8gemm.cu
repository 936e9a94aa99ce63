/* i8gemm.cu — the project's own INT8 GEMM for Hopper (sm_90a), the product
 * at the heart of ozaki2: a batch of
 *     C_q(m×n) = A_q(m×k) · B_q(n×k)^T        (INT8 in, INT32 exact)
 * with A_q and B_q both k-contiguous ("TN", the layout ozaki2's slices
 * already have), written either as INT32 (I8_OUT_S32) or, fused, as the
 * symmetric residue of each entry modulo the batch's modulus (I8_OUT_MOD:
 * one byte instead of four, what the CRT step reads).
 *
 * How: a 128×256 tile per CTA, k in steps of 128 bytes.  One producer warp
 * group moves tiles of A and B into shared memory with the Tensor Memory
 * Accelerator (TMA: 128-byte swizzle, out-of-range rows and k zero-filled)
 * through a 4-stage ring of mbarriers; two consumer warp groups each
 * multiply 64×256 with wgmma.m64n256k32 (accumulators in registers: 128 a
 * thread), reading both operands from shared memory through descriptors,
 * one wgmma group kept in flight.  setmaxnreg gives the registers to the
 * consumers.  Tiles are walked in groups of 8 tile rows (L2 reuse of B).
 *
 * Built only for sm_90a (wgmma and setmaxnreg are not in sm_90); elsewhere
 * the entry points say "unsupported" and ozaki2 uses cuBLAS. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "gemm_common.cuh"
#include "i8gemm.h"
#include "tma.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define I8_DEVICE_OK 1
#endif

namespace
{

constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4, CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int A_TILE = BM * BK, B_TILE = BN * BK; /* bytes */
/* the ring, its barriers, and slack to align the ring to 1024 bytes (the
 * 128-byte swizzle's period) */
constexpr size_t SMEM = (size_t)STAGES * (A_TILE + B_TILE) + 2 * STAGES * 8 + 1024;

enum out_kind { OUT_S32, OUT_MOD };

struct epilogue {
    void *out;
    int64_t ld, stride; /* elements */
    int m, n, nk;
    int vec8;                 /* residues: output base, ld and stride multiples of 8 bytes */
    const unsigned int *skip; /* nonzero there: nothing to do */
    int mod[DD_I8GEMM_MAX_MOD];
    float rinv[DD_I8GEMM_MAX_MOD];
};

#ifdef I8_DEVICE_OK
using namespace dd_tma;

/* The shared-memory descriptor of a k-major operand in the 128-byte swizzle
 * the TMA wrote: rows of 128 bytes, 8-row atoms 1024 bytes apart (stride
 * byte offset), leading byte offset unused (encoded 1). */
__device__ __forceinline__ uint64_t desc_sw128(const void *p)
{
    const uint64_t a = smem_addr(p);
    return ((a & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

// clang-format off
#define I8_WGMMA_M64N256K32(d, da, db, scale)                                                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                    \
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"                           \
                 "%0, %1, %2, %3, %4, %5, %6, %7, "                                                \
                 "%8, %9, %10, %11, %12, %13, %14, %15, "                                          \
                 "%16, %17, %18, %19, %20, %21, %22, %23, "                                        \
                 "%24, %25, %26, %27, %28, %29, %30, %31, "                                        \
                 "%32, %33, %34, %35, %36, %37, %38, %39, "                                        \
                 "%40, %41, %42, %43, %44, %45, %46, %47, "                                        \
                 "%48, %49, %50, %51, %52, %53, %54, %55, "                                        \
                 "%56, %57, %58, %59, %60, %61, %62, %63, "                                        \
                 "%64, %65, %66, %67, %68, %69, %70, %71, "                                        \
                 "%72, %73, %74, %75, %76, %77, %78, %79, "                                        \
                 "%80, %81, %82, %83, %84, %85, %86, %87, "                                        \
                 "%88, %89, %90, %91, %92, %93, %94, %95, "                                        \
                 "%96, %97, %98, %99, %100, %101, %102, %103, "                                    \
                 "%104, %105, %106, %107, %108, %109, %110, %111, "                                \
                 "%112, %113, %114, %115, %116, %117, %118, %119, "                                \
                 "%120, %121, %122, %123, %124, %125, %126, %127"                                  \
                 "}, %128, %129, p;\n}\n"                                                          \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),                                 \
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),                                 \
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),                               \
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),                             \
                   "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]),                             \
                   "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),                             \
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),                             \
                   "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),                             \
                   "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),                             \
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),                             \
                   "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]),                             \
                   "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),                             \
                   "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]),                             \
                   "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),                             \
                   "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]),                             \
                   "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),                             \
                   "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]),                             \
                   "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]),                             \
                   "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]),                             \
                   "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),                             \
                   "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]),                             \
                   "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]),                             \
                   "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]),                             \
                   "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]),                             \
                   "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]),                             \
                   "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),                         \
                   "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]),                         \
                   "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),                         \
                   "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]),                         \
                   "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]),                         \
                   "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]),                         \
                   "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])                         \
                 : "l"(da), "l"(db), "r"(scale))
// clang-format on

/* The symmetric residue of an exact INT32 product entry (|c| ≤ 2^31):
 * for 256 its low byte; for odd m ≥ 129 one FP32 quotient (three roundings
 * of 2^-24 on |c/m| < 2^24: off by at most one) and one correction each
 * way.  A host replica of this arithmetic run over every INT32 value was
 * exact for each m from 129 up and wrong for some m ≤ 127 (large |c|), so
 * the host refuses moduli below 129 (ozaki2's are 167 .. 256). */
__device__ __forceinline__ int8_t residue(int c, int m, float rinv)
{
    if (m == 256)
        return (int8_t)c;
    int r = c - __float2int_rn((float)c * rinv) * m;
    const int h = m >> 1;
    r += r < -h ? m : 0;
    r -= r > h ? m : 0;
    return (int8_t)r;
}

/* INT32 out: each lane's pairs of columns as 8-byte stores. */
__device__ __forceinline__ void store_s32(const epilogue &e, int q, int row, int col, const int *d)
{
#pragma unroll
    for (int j = 0; j < 32; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = row + 8 * h, c = col + 8 * j;
            if (r >= e.m || c >= e.n)
                continue;
            int32_t *p = (int32_t *)e.out + q * e.stride + (int64_t)r * e.ld + c;
            if (c + 1 < e.n)
                *reinterpret_cast<int2 *>(p) = make_int2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            else
                *p = d[4 * j + 2 * h];
        }
}

/* Residues out.  A quad of lanes holds 8 consecutive columns of a row per
 * 8-column block (2 each); over 4 blocks the quad exchanges its 16-bit
 * pairs (4 shuffles) so that lane t owns block j0 + t whole: one 8-byte
 * store per lane where byte stores would take 8. */
__device__ __forceinline__ void store_mod(const epilogue &e, int q, int row, int col0, int t4,
                                          const int *d)
{
    const int m = e.mod[q];
    const float rinv = e.rinv[q];
    const unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j0 = 0; j0 < 32; j0 += 4) {
            uint64_t pairs = 0;
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const int *v = d + 4 * (j0 + jj) + 2 * h;
                const uint32_t pr = (uint8_t)residue(v[0], m, rinv) |
                                    (uint32_t)(uint8_t)residue(v[1], m, rinv) << 8;
                pairs |= (uint64_t)pr << (16 * jj);
            }
            uint64_t out = 0;
#pragma unroll
            for (int r = 0; r < 4; ++r) { /* lane s sends its pair of block j0 + ((s + r) & 3) */
                const int from = (t4 - r) & 3;
                uint32_t v = (uint32_t)(pairs >> (16 * ((t4 + r) & 3))) & 0xffffu;
                v = __shfl_sync(0xffffffffu, v, (lane & ~3u) | (unsigned)from);
                out |= (uint64_t)v << (16 * from);
            }
            const int r = row + 8 * h, c = col0 + 8 * (j0 + t4);
            if (r >= e.m || c >= e.n)
                continue;
            int8_t *p = (int8_t *)e.out + q * e.stride + (int64_t)r * e.ld + c;
            if (e.vec8 && c + 8 <= e.n) {
                *reinterpret_cast<uint64_t *>(p) = out;
            } else {
                for (int b = 0; b < 8 && c + b < e.n; ++b)
                    p[b] = (int8_t)(out >> (8 * b));
            }
        }
}
#endif

template <out_kind K>
__global__ void __launch_bounds__(THREADS, 1)
    i8gemm_tn(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
              const __grid_constant__ epilogue e)
{
#ifdef I8_DEVICE_OK
    if (e.skip && *(volatile const unsigned int *)e.skip)
        return;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *ring = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    int8_t *sa = (int8_t *)ring, *sb = (int8_t *)(ring + (size_t)STAGES * A_TILE);
    uint64_t *full = (uint64_t *)(ring + (size_t)STAGES * (A_TILE + B_TILE)),
             *empty = full + STAGES;

    /* tile of this CTA: groups of GROUP_M tile rows, column-major inside */
    constexpr int GROUP_M = 8;
    const int tiles_m = (e.m + BM - 1) / BM, tiles_n = (e.n + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n, g = blockIdx.x / per_group;
    const int first = g * GROUP_M, rows = min(tiles_m - first, GROUP_M);
    const int tm = first + (blockIdx.x % per_group) % rows, tn = (blockIdx.x % per_group) / rows;
    const int q = blockIdx.y, m0 = tm * BM, n0 = tn * BN;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], 128 * CONSUMERS);
        }
        bar_init_fence();
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg == 0) { /* producer */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < e.nk; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES)
                    bar_wait(&empty[s], ((kt / STAGES) - 1) & 1);
                bar_expect(&full[s], A_TILE + B_TILE);
                load_3d(sa + (size_t)s * A_TILE, &ta, &full[s], kt * BK, m0, q);
                load_3d(sb + (size_t)s * B_TILE, &tb, &full[s], kt * BK, n0, q);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const int c = wg - 1; /* rows c·64 .. c·64+63 of the tile */
    int d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i)
        d[i] = 0;
    const int one = 1;
    for (int kt = 0; kt < e.nk; ++kt) {
        const int s = kt % STAGES;
        bar_wait(&full[s], (kt / STAGES) & 1);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        const uint64_t da = desc_sw128(sa + (size_t)s * A_TILE + c * 64 * BK);
        const uint64_t db = desc_sw128(sb + (size_t)s * B_TILE);
#pragma unroll
        for (int kk = 0; kk < BK / 32; ++kk) /* 32 bytes along k: +2 in 16-byte units */
            I8_WGMMA_M64N256K32(d, da + 2 * kk, db + 2 * kk, one);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        /* the group before this one is done: its stage goes back */
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        /* every thread arrives (one arrival a warp would need a
         * __syncwarp first, which is slower) */
        if (kt > 0)
            bar_arrive(&empty[(kt - 1) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < 128; ++i)
        asm volatile("" : "+r"(d[i])::"memory");

    const int t = threadIdx.x % 128, w = t / 32, lane = t % 32;
    const int row = m0 + c * 64 + w * 16 + lane / 4;
    if (K == OUT_S32)
        store_s32(e, q, row, n0 + 2 * (lane % 4), d);
    else
        store_mod(e, q, row, n0, lane % 4, d);
#else
    (void)ta, (void)tb, (void)e;
    __trap();
#endif
}

/* The map of one operand: k (bytes) × rows × batch, boxes of 128 × box_rows. */
int make_map(CUtensorMap *map, const int8_t *p, int64_t k, int64_t rows, int64_t ld, int64_t stride,
             int batch, int box_rows)
{
    cuuint64_t dims[3] = {(cuuint64_t)k, (cuuint64_t)rows, (cuuint64_t)batch};
    /* one product: a stride past the matrix, which the map needs even so */
    if (batch == 1)
        stride = (ld * rows + 15) / 16 * 16;
    cuuint64_t strides[2] = {(cuuint64_t)ld, (cuuint64_t)stride};
    cuuint32_t box[3] = {BK, (cuuint32_t)box_rows, 1};
    return dd_tma::map_sw128(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p, dims, strides, box);
}

/* TMA: a 16-byte aligned base, row and batch strides multiples of 16 bytes
 * (the batch stride only where there is more than one product). */
bool tma_ok(const int8_t *p, int64_t ld, int64_t stride, int batch)
{
    return dd::vec16_ok<int8_t>(p, ld) && (batch == 1 || stride % 16 == 0);
}

template <out_kind K>
int launch(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A, int64_t lda, int64_t sa,
           const int8_t *B, int64_t ldb, int64_t sb, epilogue &e, cudaStream_t s)
{
    if (!dd_i8gemm_available())
        return cudaErrorNotSupported;
    /* m, n: tile origins (int) stay below 2^31 */
    if (batch < 1 || batch > 65535 || m < 1 || n < 1 || k < 1 || k > 131071 || m > INT32_MAX - BN ||
        n > INT32_MAX - BN || lda < k || ldb < k || !tma_ok(A, lda, sa, batch) ||
        !tma_ok(B, ldb, sb, batch) || (batch > 1 && (sa < m * lda || sb < n * ldb)))
        return cudaErrorInvalidValue;
    int rc;
    CUtensorMap ta, tb;
    if ((rc = make_map(&ta, A, k, m, lda, sa, batch, BM)) != cudaSuccess ||
        (rc = make_map(&tb, B, k, n, ldb, sb, batch, BN)) != cudaSuccess)
        return rc;
    e.m = (int)m, e.n = (int)n, e.nk = (int)((k + BK - 1) / BK);
    static unsigned long long smem_set;
    if ((rc = dd::allow_smem(i8gemm_tn<K>, (int)SMEM, &smem_set)) != cudaSuccess)
        return rc;
    const int64_t tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
    if (tiles > INT32_MAX)
        return cudaErrorInvalidValue;
    i8gemm_tn<K><<<dim3((unsigned)tiles, (unsigned)batch), THREADS, SMEM, s>>>(ta, tb, e);
    return cudaGetLastError();
}

} // namespace

extern "C" int dd_i8gemm_available(void)
{
#ifdef DD_I8_SM90A
    int dev, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    return major == 9 && minor == 0;
#else
    return 0;
#endif
}

extern "C" int dd_i8gemm_s32(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A,
                             int64_t lda, int64_t sa, const int8_t *B, int64_t ldb, int64_t sb,
                             int32_t *C, int64_t ldc, int64_t sc, void *stream)
{
    if ((uintptr_t)C % 8 || ldc % 2 || (batch > 1 && sc % 2) || ldc < n ||
        (batch > 1 && sc < m * ldc))
        return cudaErrorInvalidValue;
    epilogue e = {};
    e.out = C, e.ld = ldc, e.stride = sc;
    return launch<OUT_S32>(batch, m, n, k, A, lda, sa, B, ldb, sb, e, (cudaStream_t)stream);
}

extern "C" int dd_i8gemm_mod(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A,
                             int64_t lda, int64_t sa, const int8_t *B, int64_t ldb, int64_t sb,
                             const int *mod, int8_t *R, int64_t ldr, int64_t sr,
                             const unsigned int *skip, void *stream)
{
    if (!R || !mod || batch < 1 || batch > DD_I8GEMM_MAX_MOD || ldr < n ||
        (batch > 1 && sr < m * ldr))
        return cudaErrorInvalidValue;
    epilogue e = {};
    e.out = R, e.ld = ldr, e.stride = sr, e.skip = skip;
    e.vec8 = (uintptr_t)R % 8 == 0 && ldr % 8 == 0 && (batch == 1 || sr % 8 == 0);
    for (int q = 0; q < batch; ++q) {
        if (mod[q] < 129 || mod[q] > 256 || (mod[q] != 256 && mod[q] % 2 == 0))
            return cudaErrorInvalidValue;
        e.mod[q] = mod[q], e.rinv[q] = 1.0f / (float)mod[q];
    }
    return launch<OUT_MOD>(batch, m, n, k, A, lda, sa, B, ldb, sb, e, (cudaStream_t)stream);
}
