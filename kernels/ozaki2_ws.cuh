/* ozaki2_ws.cuh — what kernels/ozaki2.cu and kernels/ozaki2_slices.cu (the
 * sliced operands of kernel.h) share, private to them: the status words the
 * scaling kernels leave for the later ones, the per-device workspace, the
 * layout of one chunk's slices and products, and the host functions of
 * ozaki2.cu that the slices API calls.
 *
 * The device code that reads the moduli's parameters (ozaki2_dev.cuh: the
 * slicing, the CRT, the parameters in constant memory) is compiled in
 * ozaki2.cu alone: constant memory belongs to one translation unit, and
 * device_ws() initialises ozaki2.cu's.  ozaki2_slices.cu therefore launches
 * the slicing and the products through the functions declared here. */
#ifndef DD_OZAKI2_WS_CUH
#define DD_OZAKI2_WS_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm_common.cuh" /* OZ_TRY */

namespace oz2
{

/* One multiply's verdict (reset before each chunk): flag 0 fine, else the
 * first reason found (REASON_*), with its row/column and counts; the
 * REASON_GUARD_* are ozaki2-auto's (set by set_flag: index = the count the
 * guard asked for, lossy = k); REASON_SLICES is kernel_slices_gemm's when a
 * blob does not describe the multiply it is given to (index 0: A's, 1:
 * B's).  rbits / qbits: the guard's maxima of r and q (ozaki2.h) as the
 * bits of non-negative doubles, which order like the values (atomicMax). */
enum {
    REASON_NONE,
    REASON_A_NONFINITE,
    REASON_B_NONFINITE,
    REASON_A_RANGE,
    REASON_B_RANGE,
    REASON_GUARD_NEED,
    REASON_GUARD_SLOW,
    REASON_GUARD_NOBOUND,
    REASON_SLICES,
    REASON_COUNT
};
struct status {
    unsigned int flag;
    int index, lossy, nnz;
    unsigned long long rbits, qbits;
};
/* Kept across multiplies, read and cleared by the host (kernel_note). */
struct stats {
    unsigned long long fallbacks;
    unsigned int reason;
    int index, lossy, nnz, moduli;
};

/* One per device, created on first use (device_ws), grown as needed and
 * freed at kernel_shutdown.  The multiplies of every stream of the device
 * share buf and st: each waits for `done`, recorded by the one before. */
/* Multiplies at a count of moduli each, since the last report: how many,
 * and the counts' least, largest and last. */
struct tally {
    unsigned long long n;
    int min, max, last;
};

inline void tally_add(tally *t, int nm)
{
    ++t->n;
    t->min = t->n == 1 || nm < t->min ? nm : t->min;
    t->max = nm > t->max ? nm : t->max;
    t->last = nm;
}

struct workspace {
    bool ready;
    cublasHandle_t h;
    void *buf; /* one chunk's scales, slices and products (layout) */
    size_t cap;
    status *st;
    stats *sx;
    cudaEvent_t done;
    bool recorded;
    unsigned long long calls;
    int sms;
    double tile_mb; /* products held at once (tile_mb(), at the first call) */
    bool own_i8;    /* the own INT8 GEMM with fused residues (own_int8(), first call) */
    void *gbuf;     /* ozaki2-auto's guard: summaries and histograms of A and B */
    size_t gcap;
    /* ozaki2-auto since the last kernel_note: chunks decided, and those
     * emulated with their moduli */
    unsigned long long auto_chunks;
    tally auto_emul;
    /* the counts given (ozaki2 by k, ozaki2-N, the sliced products) since
     * the last kernel_counts: multiplies and their moduli */
    tally fixed;
};

inline int64_t up(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

/* The pieces of one chunk's workspace, 256-byte aligned.  The slices of A
 * are N batches of m4 rows of kp bytes (batch stride m4·kp), those of B N
 * batches of n4 columns (stride n4·kp); the products are done in row tiles
 * of mt rows, `tile` bytes. */
struct layout {
    int64_t kp, m4, n4, mt; /* padded k, rows, columns; rows per tile of products */
    int64_t nc;             /* ld of the products: n4 (INT32), n rounded to 16 (residues) */
    size_t off_sa, off_sb, off_a, off_b, off_c, bytes;
    size_t tile; /* the products of one row tile (at off_c) */
};

/* The workspace of the current device (cuBLAS handle, status words, event,
 * the moduli's parameters in constant memory), created on first use. */
int device_ws(workspace **out, int *dev_out);
/* Device d's workspace as it stands (ready or not; ozaki2_note.cu reads
 * its counters), nullptr past MAX_DEVICES. */
constexpr int MAX_DEVICES = 64;
workspace *device_ws_at(int d);
/* The layout of a chunk of N = nm moduli, m×n×k, products of csize bytes
 * (4: INT32 for cuBLAS's GEMM, 1: the own GEMM's residues) held within
 * mb MiB. */
layout plan(int nm, int64_t m, int64_t n, int64_t k, double mb, int csize);
/* w->buf at least `bytes` (a cudaFree and a cudaMalloc when it grows). */
int grow(workspace *w, size_t bytes);
/* The scales and N slices of `vectors` rows of A (side 0, element l of row
 * v at X[v·ld + l]) or columns of B (side 1, at X[l·ld + v]), k long:
 * scales[v], slice q of vector v at out + q·stride + v·up(k, 32), zero past
 * k; a non-finite value, or with range 1 a row or column of too wide a
 * range, flags *st (the first reason found stays). */
int slice(int nm, int side, int64_t vectors, int64_t k, const double *X, int64_t ld,
          int *scales, int8_t *out, int64_t stride, status *st, int range, cudaStream_t s);
/* C(m×n, ldc) = A·B + beta·C from the slices (a8, sa: A's, b8, sb: B's,
 * batch strides L.m4·L.kp and L.n4·L.kp) row tile by row tile, the
 * products in cbuf (L.tile bytes); the INT8 products (own GEMM) and the CRT
 * do nothing where w->st is flagged. */
int products(workspace *w, const layout &L, int nm, int64_t m, int64_t n, const int8_t *a8,
             const int8_t *b8, const int *sa, const int *sb, void *cbuf, int beta, double *C,
             int64_t ldc, cudaStream_t s);

} // namespace oz2

#endif
