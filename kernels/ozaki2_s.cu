/* ozaki2_s — FP32 GEMM on the INT8 tensor cores: the Ozaki scheme II of
 * kernels/ozaki2.cu for FP32 operands, FP32 in and out (issue 34).
 * ozaki2.h has the scheme and its proofs of exactness, ozaki2_s.h the
 * FP32 parameters (moduli, range check), ozaki2_s_ref.c the host
 * reference.  Launchers: the F32 slot of kernels.def's "ozaki2" line
 * (dd_ozaki2_f32: moduli from k, oz2s_auto_moduli) and the fixed counts
 * "ozaki2-s8", "ozaki2-s9", "ozaki2-s10".  Per multiply, on the caller's
 * stream, never synchronising:
 *
 *   1. slice_rows / slice_cols: one pass per row of A and per 32 columns
 *      of B: max and 2-norm (in FP64: FP32 values are exact doubles), the
 *      power-of-two scale with ||row·2^s||_2 ≤ 2^H (oz2_shift), the range
 *      check (non-finite values; more than 1/OZ2_LOSSY_DEN of the nonzeros,
 *      and more than one, keeping fewer than OZ2S_KEEP_BITS bits:
 *      oz2s_out_of_range), and N INT8 slices, the
 *      symmetric residues of the scaled integers, which are FP32 values
 *      (oz2s_scaled_f, ozaki2_s.h proves it), their residues from three
 *      base-2^15 digits each (ozaki2.h's oz2_digits15, ozaki2_mod.cuh's
 *      pack4), A row-major and B transposed: both k-contiguous, k padded
 *      to 32 with zeros;
 *   2. the N INT8 products: on compute 9.0 the project's INT8 GEMM
 *      (i8gemm.h, dd_i8gemm_mod: each entry's residue modulo its modulus
 *      written by the GEMM's epilogue, one byte), elsewhere or with
 *      DD_OZAKI2_INT8=cublas one cublasGemmStridedBatchedEx with INT32
 *      out; row tiles of C within DD_OZAKI2_TILE_MB as ozaki2 does;
 *   3. crt (ozaki2_mod.cuh), one fused pass per entry of C: the N residues, Garner's
 *      mixed-radix digits in FP32 (exact: as ozaki2.h's oz2_symmodf_odd),
 *      the digits summed in FP64, unscale by 2^-(s_i + t_j), beta, one rounding to
 *      FP32.  Horner is not done in FP32: its error bound is relative to
 *      M/2 (the digits are balanced, the partial sums reach M/2 whatever
 *      the entry), N·2^-24·M/2 ≈ N·2^(2H-23), which at H = 30 is 2^38
 *      against the 2^(2H+1-H) = 2^31 the scaled operands are exact to: far
 *      too coarse.  In FP64 it is N·2^(2H-52) ≈ 2^11, 2^-20 of the
 *      operands' own error, then below the final FP32 rounding.
 *   k above OZ2_KCHUNK is done in chunks, C accumulating (one FP32
 *   rounding per chunk).
 *
 * Fallback.  Where the scaling finds a non-finite value or a row or column
 * of too wide a range, a device flag turns the INT8 products and the CRT
 * off and the FP32 production kernel sgemm_dmma (FP64 tensor cores, gated
 * on the same flag: dd_sgemm_dmma_gated) on; where that cannot run (no
 * TMA, no workspace), a simple gated kernel with FP64 sums here does.
 * kernel_note() reports the fallbacks and why.
 *
 * Workspace: one per device, grown as needed, about N·(m + n)·k bytes of
 * slices plus the tile of products; calls on different streams of one
 * device are ordered by an event (they share it).  The kernels:
 * kernels/ozaki2_s_dev.cuh; this file holds the host side. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cublas_handles.cuh"
#include "dd_knobs.h"
#include "gemm_common.cuh"
#include "i8gemm.h"
#include "launchers.h"
#include "ozaki2_s.h"
#include "ozaki2_s_dev.cuh"

namespace
{

constexpr int MAX_DEVICES = 64;

struct workspace {
    bool ready;
    cublasHandle_t h;
    void *buf;
    size_t cap;
    oz2s::status *st;
    oz2s::stats *sx;
    cudaEvent_t done;
    bool recorded;
    unsigned long long calls;
    int sms;
    double tile_mb; /* products held at once (tile_mb(), at the first call) */
    bool own_i8;    /* the own INT8 GEMM with fused residues (first call) */
};
workspace g_ws[MAX_DEVICES];

using dd::from_cublas;

/* The products held at once: DD_OZAKI2_TILE_MB (ozaki2's knob, the same
 * meaning), else 8 GiB or a quarter of the free device memory when less
 * (at least 256 MiB). */
double tile_mb()
{
    long long set = dd_knob_int(DDK_OZAKI2_TILE_MB); /* 1..1048576, 0: auto */
    if (set > 0)
        return (double)set;
    size_t free_b = 0, total = 0;
    double mb = 8192.0;
    if (cudaMemGetInfo(&free_b, &total) == cudaSuccess && free_b / 4 < (size_t)8192 << 20)
        mb = (double)(free_b / 4) / 1048576.0;
    return mb < 256.0 ? 256.0 : mb;
}

/* The workspace of the current device, created on first use. */
int device_ws(workspace **out)
{
    int dev = 0;
    OZ_TRY(cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAX_DEVICES)
        return cudaErrorInvalidDevice;
    workspace *w = &g_ws[dev];
    if (!w->ready) {
        oz2_params par[OZ2S_MAX_MODULI - OZ2S_MIN_MODULI + 1];
        for (int n = OZ2S_MIN_MODULI; n <= OZ2S_MAX_MODULI; ++n)
            oz2_params_init(&par[n - OZ2S_MIN_MODULI], n);
        OZ_TRY(cudaMemcpyToSymbol(oz2s::c_par, par, sizeof par));
        OZ_TRY(cudaDeviceGetAttribute(&w->sms, cudaDevAttrMultiProcessorCount, dev));
        OZ_TRY(cudaMalloc(&w->st, sizeof(oz2s::status)));
        OZ_TRY(cudaMalloc(&w->sx, sizeof(oz2s::stats)));
        OZ_TRY(cudaMemset(w->sx, 0, sizeof(oz2s::stats)));
        OZ_TRY(cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming));
        OZ_TRY(from_cublas(cublasCreate(&w->h)));
        w->tile_mb = tile_mb();
        /* DD_OZAKI2_INT8 (0 auto, 1 cublas) as for ozaki2 */
        w->own_i8 = dd_i8gemm_available() && dd_knob_int(DDK_OZAKI2_INT8) == 0;
        w->ready = true;
    }
    *out = w;
    return cudaSuccess;
}

int64_t up(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

/* The pieces of one chunk's workspace, 256-byte aligned. */
struct layout {
    int64_t kp, m4, n4, mt; /* padded k, rows, columns; rows per tile of products */
    int64_t nc;             /* ld of the products: n4 (INT32), n rounded to 16 (residues) */
    size_t off_sa, off_sb, off_a, off_b, off_c, bytes;
};

layout plan(int nm, int64_t m, int64_t n, int64_t k, double mb, int csize)
{
    layout L;
    L.kp = up(k, 32), L.m4 = up(m, 4), L.n4 = up(n, 4);
    L.nc = csize == 1 ? up(n, 16) : L.n4;
    int64_t rows = (int64_t)(mb * 1048576.0 / ((double)csize * nm * (double)L.nc));
    L.mt = rows < 4 ? 4 : rows / 4 * 4;
    L.mt = L.mt > L.m4 ? L.m4 : L.mt;
    size_t o = 0;
    L.off_sa = o, o += up(4 * L.m4, 256);
    L.off_sb = o, o += up(4 * L.n4, 256);
    L.off_a = o, o += up((int64_t)nm * L.m4 * L.kp, 256);
    L.off_b = o, o += up((int64_t)nm * L.n4 * L.kp, 256);
    L.off_c = o, o += up((int64_t)nm * L.mt * L.nc * csize, 256);
    L.bytes = o;
    return L;
}

int grow(workspace *w, size_t bytes)
{
    if (bytes <= w->cap)
        return cudaSuccess;
    if (w->buf) {
        OZ_TRY(cudaFree(w->buf)); /* synchronises: queued work no longer reads it */
        w->buf = nullptr, w->cap = 0;
    }
    OZ_TRY(cudaMalloc(&w->buf, bytes));
    w->cap = bytes;
    return cudaSuccess;
}

/* One chunk (k ≤ OZ2_KCHUNK) with N moduli. */
template <int N>
int chunk(workspace *w, int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
          const float *B, int64_t ldb, int beta, float *C, int64_t ldc, cudaStream_t s)
{
    static const int moduli[] = OZ2_MODULI_INIT;
    const int csize = w->own_i8 ? 1 : 4;
    const layout L = plan(N, m, n, k, w->tile_mb, csize);
    OZ_TRY(grow(w, L.bytes));
    char *base = static_cast<char *>(w->buf);
    int *sa = reinterpret_cast<int *>(base + L.off_sa), *sb = reinterpret_cast<int *>(base + L.off_sb);
    int8_t *a8 = reinterpret_cast<int8_t *>(base + L.off_a), *b8 = reinterpret_cast<int8_t *>(base + L.off_b);
    void *cbuf = base + L.off_c;
    OZ_TRY(cudaMemsetAsync(w->st, 0, sizeof(oz2s::status), s));
    /* the digits of the scaled integers (|x| ≤ 2^38 at 10 moduli: three) */
    constexpr int ND = 3;
    static_assert(15 * ND >= 38 + 2, "three base-2^15 digits hold the FP32 scheme's integers");
    oz2s::slice_rows<N, ND><<<(unsigned)m, 256, 0, s>>>((int)k, (int)L.kp, A, lda, sa, a8,
                                                        L.m4 * L.kp, w->st);
    OZ_TRY(cudaGetLastError());
    oz2s::slice_cols<N, ND><<<(unsigned)((n + 31) / 32), 256, 0, s>>>(
        (int)n, (int)k, (int)L.kp, B, ldb, sb, b8, L.n4 * L.kp, w->st);
    OZ_TRY(cudaGetLastError());
    for (int64_t r0 = 0; r0 < m; r0 += L.mt) {
        const int64_t rows = m - r0 < L.mt ? m - r0 : L.mt;
        /* columns in blocks of 256 threads along x (4 columns a thread for
         * the own GEMM's residues); rows along y, enough of them to give
         * every SM 16 blocks, at most 65535 */
        const int64_t per = w->own_i8 ? 1024 : 256;
        const int64_t xb = (n + per - 1) / per, want = (16LL * w->sms + xb - 1) / xb;
        int yb = (int)(want < rows ? want : rows);
        yb = yb < 1 ? 1 : yb > 65535 ? 65535 : yb;
        const dim3 grid((unsigned)xb, (unsigned)yb);
        if (w->own_i8) {
            int8_t *r8 = static_cast<int8_t *>(cbuf);
            OZ_TRY(dd_i8gemm_mod(N, rows, n, L.kp, a8 + r0 * L.kp, L.kp, L.m4 * L.kp, b8, L.kp,
                                  L.n4 * L.kp, moduli, r8, L.nc, L.mt * L.nc, &w->st->flag, s));
            oz2s::crt<N, int8_t><<<grid, 256, 0, s>>>((int)rows, (int)n, r8, L.mt * L.nc,
                                                      (int)L.nc, sa + r0, sb, beta, C + r0 * ldc,
                                                      ldc, w->st);
        } else {
            /* column-major C^T (n4 × rows4) = (B^T)^T·A^T, both k-contiguous */
            const int32_t one = 1, zero = 0;
            int32_t *c32 = static_cast<int32_t *>(cbuf);
            OZ_TRY(from_cublas(cublasGemmStridedBatchedEx(
                w->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)L.n4, (int)up(rows, 4), (int)L.kp, &one, b8,
                CUDA_R_8I, (int)L.kp, L.n4 * L.kp, a8 + r0 * L.kp, CUDA_R_8I, (int)L.kp,
                L.m4 * L.kp, &zero, c32, CUDA_R_32I, (int)L.n4, L.mt * L.n4, N,
                CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT)));
            oz2s::crt<N, int32_t><<<grid, 256, 0, s>>>((int)rows, (int)n, c32, L.mt * L.n4,
                                                       (int)L.n4, sa + r0, sb, beta, C + r0 * ldc,
                                                       ldc, w->st);
        }
        OZ_TRY(cudaGetLastError());
    }
    /* The native product where the range check flagged this multiply:
     * sgemm_dmma gated on the flag, else the simple kernel; the simple
     * kernel's block 0 records the fallback either way. */
    int gated = dd_sgemm_dmma_gated(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &w->st->flag);
    if (gated != cudaSuccess && gated != cudaErrorNotSupported)
        return gated;
    const int64_t tiles = ((m + 63) / 64) * ((n + 63) / 64);
    const int grid = gated == cudaSuccess ? 1 : (int)(tiles < 2LL * w->sms ? tiles : 2LL * w->sms);
    oz2s::fallback<<<grid, 256, 0, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc,
                                        w->st, w->sx, N, gated != cudaSuccess);
    return (int)cudaGetLastError();
}

int chunk_dispatch(int nm, workspace *w, int64_t m, int64_t n, int64_t k, const float *A,
                   int64_t lda, const float *B, int64_t ldb, int beta, float *C, int64_t ldc,
                   cudaStream_t s)
{
#define OZS_CASE(N)                                                                                \
    case N:                                                                                        \
        return chunk<N>(w, m, n, k, A, lda, B, ldb, beta, C, ldc, s);
    switch (nm) {
        OZS_CASE(8) OZS_CASE(9) OZS_CASE(10)
    default:
        return cudaErrorInvalidValue;
    }
#undef OZS_CASE
}

/* nm 0: the moduli from k (oz2s_auto_moduli). */
int ozaki2_sgemm(int nm, DD_LAUNCHER_ARGS(float))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<float>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    if (m > (int64_t)INT32_MAX / 4 || n > (int64_t)INT32_MAX / 4)
        return cudaErrorInvalidValue;
    workspace *w;
    OZ_TRY(device_ws(&w));
    if (w->recorded)
        OZ_TRY(cudaStreamWaitEvent(s, w->done, 0));
    OZ_TRY(from_cublas(cublasSetStream(w->h, s)));
    const int64_t kc = OZ2_KCHUNK;
    if (nm == 0)
        nm = oz2s_auto_moduli(k < kc ? k : kc);
    for (int64_t l0 = 0; l0 < k; l0 += kc) {
        const int64_t kk = k - l0 < kc ? k - l0 : kc;
        OZ_TRY(chunk_dispatch(nm, w, m, n, kk, A + l0, lda, B + l0 * ldb, ldb, l0 ? 1 : beta, C,
                               ldc, s));
    }
    OZ_TRY(cudaEventRecord(w->done, s));
    w->recorded = true;
    ++w->calls;
    return cudaSuccess;
}

} // namespace

#define OZS_LAUNCHER(id, N)                                                                        \
    extern "C" int dd_##id(DD_LAUNCHER_ARGS(float))                                                \
    {                                                                                              \
        return ozaki2_sgemm(N, m, n, k, A, lda, B, ldb, beta, C, ldc, stream);                     \
    }
OZS_LAUNCHER(ozaki2_f32, 0)
OZS_LAUNCHER(ozaki2_s8, 8)
OZS_LAUNCHER(ozaki2_s9, 9)
OZS_LAUNCHER(ozaki2_s10, 10)

/* kernel.h: the FP32 fallbacks since the last call, over every device used. */
extern "C" const char *dd_ozaki2_s_note(void)
{
    static char buf[512];
    static const char *what[] = {"", "a row of A holds a non-finite value",
                                 "a column of B holds a non-finite value", "row", "column"};
    buf[0] = '\0';
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        return buf;
    size_t used = 0;
    for (int d = 0; d < MAX_DEVICES; ++d) {
        workspace *w = &g_ws[d];
        oz2s::stats sx;
        if (!w->ready || cudaSetDevice(d) != cudaSuccess ||
            cudaMemcpy(&sx, w->sx, sizeof sx, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemset(w->sx, 0, sizeof sx) != cudaSuccess)
            continue;
        unsigned long long calls = w->calls;
        w->calls = 0;
        if (!sx.fallbacks || used >= sizeof buf)
            continue;
        int r = (int)sx.reason;
        int wr;
        if (r == oz2s::REASON_A_RANGE || r == oz2s::REASON_B_RANGE)
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 f32 (GPU %d): %llu of %llu multiplies fell back to sgemm_dmma; "
                          "last: %s %d of %s: %d of its %d nonzeros keep < %d bits at %d moduli "
                          "(exponent range too wide)",
                          used ? "; " : "", d, sx.fallbacks, calls, what[r], sx.index,
                          r == oz2s::REASON_A_RANGE ? "A" : "B", sx.lossy, sx.nnz, OZ2S_KEEP_BITS,
                          sx.moduli);
        else
            wr = snprintf(buf + used, sizeof buf - used,
                          "%sozaki2 f32 (GPU %d): %llu of %llu multiplies fell back to sgemm_dmma; "
                          "last: %s (index %d)",
                          used ? "; " : "", d, sx.fallbacks, calls, what[r < 5 ? r : 0], sx.index);
        used += wr > 0 ? (size_t)wr : 0;
    }
    (void)cudaSetDevice(cur);
    return buf;
}

extern "C" void dd_ozaki2_s_shutdown(void)
{
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        cur = -1;
    for (int d = 0; d < MAX_DEVICES; ++d) {
        workspace *w = &g_ws[d];
        if (!w->ready || cudaSetDevice(d) != cudaSuccess)
            continue;
        cudaFree(w->buf);
        cudaFree(w->st);
        cudaFree(w->sx);
        cudaEventDestroy(w->done);
        cublasDestroy(w->h);
        *w = workspace();
    }
    if (cur >= 0)
        (void)cudaSetDevice(cur);
}
