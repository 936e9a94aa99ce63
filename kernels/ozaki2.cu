/* ozaki2 — FP64 GEMM on the INT8 tensor cores: the Ozaki scheme II
 * (kernels/ozaki2.h says how and why it is exact; kernels/ozaki2_ref.c is
 * the host reference).  Per multiply, on the caller's stream:
 *
 *   1. slice_rows / slice_cols (ozaki2_dev.cuh): one pass per row of A and
 *      per column of B: the power-of-two scale from the max and the 2-norm,
 *      the range check, and N INT8 slices (A row-major, B transposed: both
 *      k-contiguous, k padded to 32 with zeros);
 *   2. the N INT8 products: on compute 9.0 the project's own INT8 GEMM
 *      (i8gemm.cu: TMA and wgmma, each product's residues modulo its
 *      modulus written by its epilogue); elsewhere, or with
 *      DD_OZAKI2_INT8=cublas, one cublasGemmStridedBatchedEx over the N
 *      slices (CUBLAS_COMPUTE_32I, INT32 out, the "TN" form cuBLAS's IMMA
 *      kernels take; leading dimensions multiples of 32 / 4).  Both run
 *      over row tiles of C so that the products stay within
 *      DD_OZAKI2_TILE_MB (default 8192 MiB, or a quarter of the free
 *      device memory when less);
 *   3. crt: residues, Garner, Horner, unscale and beta into C, fused.
 *   k above OZ2_KCHUNK (exactness of INT32) is done in chunks, C
 *   accumulating.
 *
 * Fallback.  When the scaling step finds a non-finite value or a row or
 * column of too wide a range for the moduli (ozaki2.h), a device flag
 * turns the INT8 products and the CRT kernel off and the FP64 production
 * kernel (dgemm_dmma, gated on the same flag; a simple FMA kernel where
 * the TMA cannot be used) on: the decision
 * stays on the GPU, the launcher never synchronises.  kernel_note() (a
 * synchronising call, kernel.h; ozaki2_note.cu) reports how many multiplies
 * fell back and why; dgemm-dist prints it at teardown, gemm-bench in its row.
 *
 * The number of moduli: "ozaki2" picks it from k (oz2_auto_moduli: 15-16
 * for k from 256 to 16384), "ozaki2-N" fixes it (kernels.def lists the
 * variants), "ozaki2-auto" takes it per multiply from the operands: the
 * guard of ozaki2.h (summaries and histograms of A's rows and B's columns,
 * the maxima of its bound over every entry of C) runs first and its
 * maxima come back to the host (one stream synchronisation per multiply:
 * the count sizes the launches that follow), then the chunk runs at that
 * count without the range check, or natively, the reason recorded.
 *
 * Workspace (ozaki2_ws.cuh): one per device, grown as needed (never shrunk
 * until kernel_shutdown), about N·(m + n)·k bytes of slices plus the tile
 * of products; calls on different streams of one device are ordered by an
 * event (they share it).  kernel.h's sliced operands (ozaki2_slices.cu)
 * slice into blobs with slice() and multiply from them with products(),
 * the very kernels of a chunk. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cublas_handles.cuh"
#include "gemm_common.cuh"
#include "i8gemm.h"
#include "launchers.h"
#include "ozaki2.h"
#include "ozaki2_dev.cuh"
#include "ozaki2_ws.cuh"
#include "dd_knobs.h"

namespace
{

using dd::from_cublas;
using oz2::layout;
using oz2::up;
using oz2::workspace;

using oz2::MAX_DEVICES;
workspace g_ws[MAX_DEVICES];

/* The INT8 product: the project's own (i8gemm.cu: wgmma, residues written
 * as bytes by the GEMM itself) where the device runs it, else cuBLAS's with
 * INT32 out; DD_OZAKI2_INT8=cublas chooses cuBLAS's (for comparison). */
bool own_int8()
{
    return dd_i8gemm_available() && dd_knob_int(DDK_OZAKI2_INT8) == 0; /* 0: auto, 1: cublas */
}

/* The products held at once (INT32, or INT8 residues): DD_OZAKI2_TILE_MB, else 8 GiB or a
 * quarter of the device's free memory when that is less (at least 256
 * MiB), decided once per device at its first multiply: fewer, larger
 * tiles of INT8 products amortise each call's fixed costs (the figures
 * are in kernels/README.md). */
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

} // namespace

int oz2::device_ws(workspace **out, int *dev_out)
{
    int dev = 0;
    OZ_TRY(cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAX_DEVICES)
        return cudaErrorInvalidDevice;
    workspace *w = &g_ws[dev];
    if (!w->ready) {
        oz2_params par[OZ2_MAX_MODULI - OZ2_MIN_MODULI + 1];
        for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; ++n)
            oz2_params_init(&par[n - OZ2_MIN_MODULI], n);
        OZ_TRY(cudaMemcpyToSymbol(oz2::c_par, par, sizeof par));
        OZ_TRY(cudaDeviceGetAttribute(&w->sms, cudaDevAttrMultiProcessorCount, dev));
        OZ_TRY(cudaMalloc(&w->st, sizeof(oz2::status)));
        OZ_TRY(cudaMalloc(&w->sx, sizeof(oz2::stats)));
        OZ_TRY(cudaMemset(w->sx, 0, sizeof(oz2::stats)));
        OZ_TRY(cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming));
        OZ_TRY(from_cublas(cublasCreate(&w->h)));
        w->tile_mb = tile_mb();
        w->own_i8 = own_int8();
        w->ready = true;
    }
    *out = w;
    *dev_out = dev;
    return cudaSuccess;
}

layout oz2::plan(int nm, int64_t m, int64_t n, int64_t k, double mb, int csize)
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
    L.tile = up((int64_t)nm * L.mt * L.nc * csize, 256);
    L.off_c = o, o += L.tile;
    L.bytes = o;
    return L;
}

int oz2::grow(workspace *w, size_t bytes)
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

int oz2::slice(int nm, int side, int64_t vectors, int64_t k, const double *X, int64_t ld,
               int *scales, int8_t *out, int64_t stride, status *st, int range, cudaStream_t s)
{
    const int pi = nm - OZ2_MIN_MODULI, kp = (int)up(k, 32);
    if (vectors == 0)
        return cudaSuccess;
    /* the digits the scaled integers need: 3 at 8 moduli .. 6 at 20 */
    const int digits = oz2_digits_needed((oz2_log2_product(nm) - 2) / 2);
    const unsigned rows = (unsigned)vectors, cols = (unsigned)((vectors + 31) / 32);
#define OZ_SLICE(ND)                                                                               \
    case ND:                                                                                       \
        if (side == 0)                                                                             \
            oz2::slice_rows<ND><<<rows, 256, 0, s>>>(pi, (int)k, kp, X, ld, scales, out, stride,   \
                                                     st, range);                                   \
        else                                                                                       \
            oz2::slice_cols<ND><<<cols, 256, 0, s>>>(pi, (int)vectors, (int)k, kp, X, ld, scales,  \
                                                     out, stride, st, range);                      \
        break;
    switch (digits) {
        OZ_SLICE(3) OZ_SLICE(4) OZ_SLICE(5) OZ_SLICE(6)
    default:
        return cudaErrorInvalidValue;
    }
#undef OZ_SLICE
    return (int)cudaGetLastError();
}

namespace
{

template <int N, typename R>
int launch_crt(int pi, int rows, int n, const R *c32, int64_t cs, int n4, const int *sa,
               const int *sb, int beta, double *C, int64_t ldc, const oz2::status *st, int sms,
               cudaStream_t s)
{
    /* columns in blocks of 256 threads along x (4 columns a thread for
     * INT8 residues); rows along y, enough of them to give every SM 16
     * blocks, at most 65535 */
    const int64_t per = sizeof(R) == 1 ? 1024 : 256;
    int64_t xb = ((int64_t)n + per - 1) / per, want = (16LL * sms + xb - 1) / xb;
    int yb = (int)(want < rows ? want : rows);
    yb = yb < 1 ? 1 : yb > 65535 ? 65535 : yb;
    dim3 grid((unsigned)xb, (unsigned)yb);
    oz2::crt<N, R><<<grid, 256, 0, s>>>(pi, rows, n, c32, cs, n4, sa, sb, beta, C, ldc, st);
    return (int)cudaGetLastError();
}

/* c32: the products, INT32 (cuBLAS) or INT8 residues (the own GEMM) */
template <typename R>
int crt_dispatch(int nm, int rows, int n, const R *c32, int64_t cs, int n4, const int *sa,
                 const int *sb, int beta, double *C, int64_t ldc, const oz2::status *st, int sms,
                 cudaStream_t s)
{
    const int pi = nm - OZ2_MIN_MODULI;
#define OZ_CASE(N)                                                                                 \
    case N:                                                                                        \
        return launch_crt<N, R>(pi, rows, n, c32, cs, n4, sa, sb, beta, C, ldc, st, sms, s);
    switch (nm) {
        OZ_CASE(8) OZ_CASE(9) OZ_CASE(10) OZ_CASE(11) OZ_CASE(12) OZ_CASE(13) OZ_CASE(14)
        OZ_CASE(15) OZ_CASE(16) OZ_CASE(17) OZ_CASE(18) OZ_CASE(19) OZ_CASE(20)
    default:
        return cudaErrorInvalidValue;
    }
#undef OZ_CASE
}

/* Rows r0 .. r0+rows-1 of C from the slices: the INT8 products into the
 * tile, then the CRT.  cuBLAS: INT32 products, column-major C^T(n4 ×
 * rows4) = (B^T)^T·A^T, both stored k-contiguous.  Own: the same products
 * with each entry's residue written by the GEMM (i8gemm.h). */
int product_cublas(workspace *w, const layout &L, int nm, int64_t r0, int64_t rows, int64_t n,
                   const int8_t *a8, const int8_t *b8, void *cbuf, const int *sa, const int *sb,
                   int beta, double *C, int64_t ldc, cudaStream_t s)
{
    const int32_t one = 1, zero = 0;
    int32_t *c32 = static_cast<int32_t *>(cbuf);
    OZ_TRY(from_cublas(cublasGemmStridedBatchedEx(
        w->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)L.n4, (int)up(rows, 4), (int)L.kp, &one, b8,
        CUDA_R_8I, (int)L.kp, L.n4 * L.kp, a8 + r0 * L.kp, CUDA_R_8I, (int)L.kp, L.m4 * L.kp,
        &zero, c32, CUDA_R_32I, (int)L.n4, L.mt * L.n4, nm, CUBLAS_COMPUTE_32I,
        CUBLAS_GEMM_DEFAULT)));
    return crt_dispatch(nm, (int)rows, (int)n, (const int32_t *)c32, L.mt * L.n4, (int)L.n4,
                        sa + r0, sb, beta, C + r0 * ldc, ldc, w->st, w->sms, s);
}

int product_own(workspace *w, const layout &L, int nm, int64_t r0, int64_t rows, int64_t n,
                const int8_t *a8, const int8_t *b8, void *cbuf, const int *sa, const int *sb,
                int beta, double *C, int64_t ldc, cudaStream_t s)
{
    static const int moduli[] = OZ2_MODULI_INIT;
    int8_t *r8 = static_cast<int8_t *>(cbuf);
    OZ_TRY(dd_i8gemm_mod(nm, rows, n, L.kp, a8 + r0 * L.kp, L.kp, L.m4 * L.kp, b8, L.kp,
                         L.n4 * L.kp, moduli, r8, L.nc, L.mt * L.nc, &w->st->flag, s));
    return crt_dispatch(nm, (int)rows, (int)n, (const int8_t *)r8, L.mt * L.nc, (int)L.nc,
                        sa + r0, sb, beta, C + r0 * ldc, ldc, w->st, w->sms, s);
}

} // namespace

int oz2::products(workspace *w, const layout &L, int nm, int64_t m, int64_t n, const int8_t *a8,
                  const int8_t *b8, const int *sa, const int *sb, void *cbuf, int beta, double *C,
                  int64_t ldc, cudaStream_t s)
{
    for (int64_t r0 = 0; r0 < m; r0 += L.mt) {
        const int64_t rows = m - r0 < L.mt ? m - r0 : L.mt;
        OZ_TRY(w->own_i8 ? product_own(w, L, nm, r0, rows, n, a8, b8, cbuf, sa, sb, beta, C, ldc, s)
                         : product_cublas(w, L, nm, r0, rows, n, a8, b8, cbuf, sa, sb, beta, C,
                                          ldc, s));
    }
    return cudaSuccess;
}

namespace
{

/* The native product where the multiply is flagged (range check, non-finite
 * value, or ozaki2-auto's guard): the FP64 production kernel gated on the
 * flag, else (no TMA here) the simple kernel; the fallback kernel's block 0
 * records the fallback. */
int native_tail(workspace *w, int nm, int64_t m, int64_t n, int64_t k, const double *A,
                int64_t lda, const double *B, int64_t ldb, int beta, double *C, int64_t ldc,
                cudaStream_t s)
{
    int gated = dd_dgemm_dmma_gated(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &w->st->flag);
    if (gated != cudaSuccess && gated != cudaErrorNotSupported)
        return gated;
    const int64_t tiles = ((m + 63) / 64) * ((n + 63) / 64);
    const int grid = gated == cudaSuccess ? 1 : (int)(tiles < 2LL * w->sms ? tiles : 2LL * w->sms);
    oz2::fallback<<<grid, 256, 0, s>>>((int)m, (int)n, (int)k, A, lda, B, ldb, beta, C, ldc, w->st,
                                       w->sx, nm, gated != cudaSuccess);
    return (int)cudaGetLastError();
}

/* One chunk: k ≤ OZ2_KCHUNK.  range 0: no range check (ozaki2-auto). */
int chunk(workspace *w, int nm, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
          const double *B, int64_t ldb, int beta, double *C, int64_t ldc, cudaStream_t s,
          int range)
{
    const layout L = oz2::plan(nm, m, n, k, w->tile_mb, w->own_i8 ? 1 : 4);
    OZ_TRY(oz2::grow(w, L.bytes));
    char *base = static_cast<char *>(w->buf);
    int *sa = reinterpret_cast<int *>(base + L.off_sa), *sb = reinterpret_cast<int *>(base + L.off_sb);
    int8_t *a8 = reinterpret_cast<int8_t *>(base + L.off_a), *b8 = reinterpret_cast<int8_t *>(base + L.off_b);
    OZ_TRY(cudaMemsetAsync(w->st, 0, sizeof(oz2::status), s));
    OZ_TRY(oz2::slice(nm, 0, m, k, A, lda, sa, a8, L.m4 * L.kp, w->st, range, s));
    OZ_TRY(oz2::slice(nm, 1, n, k, B, ldb, sb, b8, L.n4 * L.kp, w->st, range, s));
    OZ_TRY(oz2::products(w, L, nm, m, n, a8, b8, sa, sb, base + L.off_c, beta, C, ldc, s));
    return native_tail(w, nm, m, n, k, A, lda, B, ldb, beta, C, ldc, s);
}

/* ozaki2-auto, one chunk: the guard's passes (summaries and histograms of
 * A's rows and B's columns, then the maxima of r and q over every entry of
 * C), the maxima read back (the one host synchronisation, per chunk), the
 * count from them (oz2_guard_moduli), and the chunk at that count; native
 * where the guard asks for more than OZ2_MAX_MODULI, finds an entry
 * without a lower bound, or the count would be slower than native at this
 * k (oz2_emulation_pays), or a value is non-finite. */
int chunk_auto(workspace *w, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
               const double *B, int64_t ldb, int beta, double *C, int64_t ldc, cudaStream_t s)
{
    const size_t bins = sizeof(int) * OZ2_HIST_BINS;
    const size_t off_vb = (size_t)up((int64_t)(sizeof(oz2_vsum) * m), 256);
    const size_t off_ha = off_vb + (size_t)up((int64_t)(sizeof(oz2_vsum) * n), 256);
    const size_t off_hb = off_ha + (size_t)up((int64_t)(bins * m), 256);
    const size_t bytes = off_hb + (size_t)up((int64_t)(bins * n), 256);
    if (bytes > w->gcap) {
        if (w->gbuf) {
            OZ_TRY(cudaFree(w->gbuf)); /* synchronises: queued work no longer reads it */
            w->gbuf = nullptr, w->gcap = 0;
        }
        OZ_TRY(cudaMalloc(&w->gbuf, bytes));
        w->gcap = bytes;
    }
    char *g = static_cast<char *>(w->gbuf);
    oz2_vsum *va = reinterpret_cast<oz2_vsum *>(g), *vb = reinterpret_cast<oz2_vsum *>(g + off_vb);
    int *ha = reinterpret_cast<int *>(g + off_ha), *hb = reinterpret_cast<int *>(g + off_hb);
    OZ_TRY(cudaMemsetAsync(w->st, 0, sizeof(oz2::status), s));
    oz2::guard_rows<<<(unsigned)m, 256, 0, s>>>((int)k, A, lda, va, ha, w->st);
    OZ_TRY(cudaGetLastError());
    oz2::guard_cols<<<(unsigned)((n + 31) / 32), 256, 0, s>>>((int)n, (int)k, B, ldb, vb, hb, w->st);
    OZ_TRY(cudaGetLastError());
    const int64_t tiles = ((m + 31) / 32) * ((n + 31) / 32);
    const int grid = (int)(tiles < 8LL * w->sms ? tiles : 8LL * w->sms);
    oz2::guard_pairs<<<grid, 256, 0, s>>>((int)m, (int)n, (int)k, va, ha, vb, hb, w->st);
    OZ_TRY(cudaGetLastError());
    oz2::status h;
    OZ_TRY(cudaMemcpyAsync(&h, w->st, sizeof h, cudaMemcpyDeviceToHost, s));
    OZ_TRY(cudaStreamSynchronize(s));
    unsigned int why = h.flag;
    int nm = 0;
    if (!why) {
        double r, q;
        memcpy(&r, &h.rbits, sizeof r), memcpy(&q, &h.qbits, sizeof q);
        nm = oz2_guard_moduli(r, q);
        why = nm ? (oz2_emulation_pays(nm, k) ? 0u : (unsigned)oz2::REASON_GUARD_SLOW)
                 : (unsigned)(isinf(r) ? oz2::REASON_GUARD_NOBOUND : oz2::REASON_GUARD_NEED);
    }
    ++w->auto_chunks;
    if (!why) {
        oz2::tally_add(&w->auto_emul, nm);
        return chunk(w, nm, m, n, k, A, lda, B, ldb, beta, C, ldc, s, 0);
    }
    if (!h.flag) {
        oz2::set_flag<<<1, 1, 0, s>>>(w->st, why, nm, (int)k);
        OZ_TRY(cudaGetLastError());
    }
    return native_tail(w, nm, m, n, k, A, lda, B, ldb, beta, C, ldc, s);
}

int ozaki2_gemm(int nm, DD_LAUNCHER_ARGS(double))
{
    cudaStream_t s = (cudaStream_t)stream;
    bool go;
    int e = dd::gemm_prologue<double>(m, n, k, A, lda, B, ldb, beta, C, ldc, s, &go);
    if (e != cudaSuccess || !go)
        return e;
    if (m > (int64_t)INT32_MAX / 4 || n > (int64_t)INT32_MAX / 4)
        return cudaErrorInvalidValue;
    workspace *w;
    int dev;
    OZ_TRY(oz2::device_ws(&w, &dev));
    if (w->recorded)
        OZ_TRY(cudaStreamWaitEvent(s, w->done, 0));
    OZ_TRY(from_cublas(cublasSetStream(w->h, s)));
    const int64_t kc = OZ2_KCHUNK;
    if (nm == 0)
        nm = oz2_auto_moduli(k < kc ? k : kc);
    if (nm > 0)
        oz2::tally_add(&w->fixed, nm);
    for (int64_t l0 = 0; l0 < k; l0 += kc) {
        const int64_t kk = k - l0 < kc ? k - l0 : kc;
        const int b = l0 ? 1 : beta;
        OZ_TRY(nm < 0 ? chunk_auto(w, m, n, kk, A + l0, lda, B + l0 * ldb, ldb, b, C, ldc, s)
                      : chunk(w, nm, m, n, kk, A + l0, lda, B + l0 * ldb, ldb, b, C, ldc, s, 1));
    }
    OZ_TRY(cudaEventRecord(w->done, s));
    w->recorded = true;
    ++w->calls;
    return cudaSuccess;
}

} // namespace

oz2::workspace *oz2::device_ws_at(int d)
{
    return d >= 0 && d < MAX_DEVICES ? &g_ws[d] : nullptr;
}

#define OZ_LAUNCHER(id, N)                                                                         \
    extern "C" int dd_##id(DD_LAUNCHER_ARGS(double))                                               \
    {                                                                                              \
        return ozaki2_gemm(N, m, n, k, A, lda, B, ldb, beta, C, ldc, stream);                      \
    }
OZ_LAUNCHER(ozaki2, 0)
OZ_LAUNCHER(ozaki2_auto, -1) /* the guard (ozaki2.h) picks the count per multiply */
OZ_LAUNCHER(ozaki2_14, 14)
OZ_LAUNCHER(ozaki2_15, 15)
OZ_LAUNCHER(ozaki2_16, 16)
OZ_LAUNCHER(ozaki2_18, 18)

extern "C" void dd_ozaki2_shutdown(void)
{
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        cur = -1;
    for (int d = 0; d < MAX_DEVICES; ++d) {
        workspace *w = &g_ws[d];
        if (!w->ready || cudaSetDevice(d) != cudaSuccess)
            continue;
        cudaFree(w->buf);
        cudaFree(w->gbuf);
        cudaFree(w->st);
        cudaFree(w->sx);
        cudaEventDestroy(w->done);
        cublasDestroy(w->h);
        *w = workspace();
    }
    if (cur >= 0)
        (void)cudaSetDevice(cur);
}
