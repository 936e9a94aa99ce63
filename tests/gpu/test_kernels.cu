/* kernel-test — every kernel of kernels/ against cuBLAS on odd shapes.
 *
 * For each type, shape, memory layout and beta: fresh uniform [-1,1) data,
 * cuBLAS computes the reference, and every kernel runs on a C poisoned with
 * NaN (beta 0) or holding a random C0 (beta 1), with the padding between n
 * and ldc poisoned too.  A case passes when err ≤ 16 (gemm_check.cuh), no
 * element of the m×n block is left unwritten and no padding element is
 * touched.
 *
 *   shapes   1×1×1, 17×33×65, 1000×1001×999, 4097×4095×4099,
 *            1500×2100×3000 and 130×260×20000 (dgemm_dmma's stream-K: a
 *            tail of whole and edge tiles, and 6 tiles each shared by up to
 *            22 CTAs), 2100×4000×700 (whole waves and stream-K in one
 *            launch, edge tiles in both); the last four skipped for the
 *            slow kernels 01-03
 *   layouts  tight    lda = k, ldb = n, ldc = n
 *            padded   ld a multiple of 4 elements larger than the width
 *                     (16-byte rows: the vector paths, with edge tiles)
 *            oddld    lda = k+3, ldb = n+5, ldc = n+7 (a SUMMA sub-block
 *                     whose rows are not 16-byte aligned)
 *            offset   padded ld, but every base pointer one element past
 *                     a 16-byte boundary
 *            oddc     A and B padded, ldc odd: only C unfit for 16-byte
 *                     stores (the TMA kernels' scalar epilogue)
 * Repeatability: on shapes of a million multiply-adds or more each kernel
 * runs a second time on the same inputs and must give the same values
 * (stream-K's split tiles are summed in a fixed order, whichever CTA
 * finishes last).
 * Also: the cuBLAS wrapper itself against a host reference (small shapes),
 * k = 0 (C zeroed for beta 0, kept for beta 1), m = 0 / n = 0 (no-op) and
 * invalid arguments (an error code, no launch).
 *
 * The complex kernels (zgemm / cgemm entries) the same way against cuBLAS
 * ZGEMM / CGEMM (test_complex): shapes of 1, 3, 17, 129 and 1000 complex
 * elements and two stream-K ones (CX_SHAPES), layouts tight, padded, odd
 * leading dimensions, every base one component past an aligned one
 * (offset) or only C's (offc), beta 0 (C poisoned with NaN) and 1, k = 0
 * and bad arguments; the cuBLAS wrapper against a host loop.  On compute
 * 9.x kernel_note() must stay empty (the tensor-core paths ran).  With
 * --cx-fallback only these cases run, and every zgemm_dmma / cgemm_dmma
 * multiply must have run its CUDA-core fallback (ctest sets
 * DD_FAULT=cx-no-workspace:*).
 *
 *   kernel-test [--cx-fallback] [name-prefix]
 * Exit: 0 all passed, 1 any failed, 77 no GPU (ctest: skipped). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "dd_check.h"
#include "gemm_check.cuh"
#include "kernel.h"

namespace
{

struct shape {
    int64_t m, n, k;
};
const shape SHAPES[] = {{1, 1, 1},          {17, 33, 65},       {1000, 1001, 999},
                        {4097, 4095, 4099}, {1500, 2100, 3000}, {130, 260, 20000},
                        {2100, 4000, 700}};
const int64_t SLOW_LIMIT = 2048; /* slow kernels skip shapes with a dimension above this */

enum layout { TIGHT, PADDED, ODDLD, OFFSET, ODDC, LAYOUTS };
const char *LAYOUT_NAME[] = {"tight", "padded", "oddld", "offset", "oddc"};

int passed = 0, skipped = 0;

/* One case's verdict: a failure counts in g_fail (dd_check.h). */
void report(bool ok, const char *what)
{
    passed += ok;
    CHECK(ok, "%s", what);
}

int64_t round4(int64_t x)
{
    return (x + 3) / 4 * 4;
}

/* Leading dimensions and element offsets of a layout. */
void layout_dims(layout l, shape s, int64_t *lda, int64_t *ldb, int64_t *ldc, int64_t *off)
{
    switch (l) {
    case TIGHT:
        *lda = s.k, *ldb = s.n, *ldc = s.n, *off = 0;
        break;
    case PADDED:
        *lda = round4(s.k + 1), *ldb = round4(s.n + 1), *ldc = round4(s.n + 1), *off = 0;
        break;
    case ODDLD:
        *lda = s.k + 3, *ldb = s.n + 5, *ldc = s.n + 7, *off = 0;
        break;
    case ODDC: /* A and B fit the 16-byte and TMA paths, C does not */
        *lda = round4(s.k + 1), *ldb = round4(s.n + 1), *ldc = round4(s.n + 1) + 1, *off = 0;
        break;
    default:
        *lda = round4(s.k + 1), *ldb = round4(s.n + 1), *ldc = round4(s.n + 1), *off = 1;
        break;
    }
}

/* The kernel once more on the same A, B (and C0): the same values as its
 * first result, which p.C holds (the largest difference is exactly 0; a +0
 * against a -0 would pass). */
template <typename T, typename Fn>
void repeat_check(Fn fn, const ddcheck::problem<T> &p, T *D, ddcheck::reducer &red, cudaStream_t st,
                  const char *name, const char *tname, const char *lname)
{
    const int64_t ldc = p.ldc * p.w, n = p.n * p.w; /* in components */
    CK(cudaMemcpy2DAsync(D, ldc * sizeof(T), p.C, ldc * sizeof(T), n * sizeof(T), p.m,
                         cudaMemcpyDeviceToDevice, st));
    ddcheck::prepare_c(p, p.C, st);
    const int e = fn(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, (void *)st);
    if (e != 0)
        (void)cudaGetLastError(); /* reported below, not left for the next check */
    const ddcheck::reduce_out d = ddcheck::max_diff<T>(red, p.C, ldc, D, ldc, p.m, n, st);
    char what[200];
    snprintf(what, sizeof what, "%-20s %s %lldx%lldx%lld %-6s beta=%d: repeat %s, max diff %.3g",
             name, tname, (long long)p.m, (long long)p.n, (long long)p.k, lname, p.beta,
             cudaGetErrorString((cudaError_t)e), ddcheck::bits_to_double(d.maxbits));
    report(e == 0 && d.maxbits == 0 && d.nonfinite == 0, what);
}

template <typename T>
void test_shape(const std::vector<const kernel_desc *> &list, const kernel_desc *cublas, shape s,
                layout l, int beta, uint64_t seed, ddcheck::reducer &red, cudaStream_t st)
{
    typedef ddcheck::type_info<T> TI;
    int64_t lda, ldb, ldc, off;
    layout_dims(l, s, &lda, &ldb, &ldc, &off);
    T *Ab, *Bb, *Cb, *Rb, *C0b, *Db;
    CK(cudaMalloc(&Ab, sizeof(T) * (s.m * lda + off)));
    CK(cudaMalloc(&Bb, sizeof(T) * (s.k * ldb + off)));
    CK(cudaMalloc(&Cb, sizeof(T) * (s.m * ldc + off)));
    CK(cudaMalloc(&Rb, sizeof(T) * (s.m * ldc + off)));
    CK(cudaMalloc(&C0b, sizeof(T) * (s.m * ldc + off)));
    CK(cudaMalloc(&Db, sizeof(T) * (s.m * ldc + off)));
    ddcheck::problem<T> p = {};
    p.m = s.m, p.n = s.n, p.k = s.k, p.lda = lda, p.ldb = ldb, p.ldc = ldc, p.beta = beta;
    T *A = Ab + off, *B = Bb + off, *C0 = C0b + off;
    /* The padding of A and B holds NaN: a kernel that reads past the
     * logical width poisons its own result. */
    ddcheck::poison(Ab, s.m * lda + off, st);
    ddcheck::poison(Bb, s.k * ldb + off, st);
    ddcheck::fill_uniform<T>(A, s.m, s.k, lda, seed * 3 + 0, st);
    ddcheck::fill_uniform<T>(B, s.k, s.n, ldb, seed * 3 + 1, st);
    ddcheck::fill_uniform<T>(C0, s.m, s.n, ldc, seed * 3 + 2, st);
    p.A = A, p.B = B, p.C = Cb + off, p.R = Rb + off, p.C0 = C0;
    p.maxA = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, A, lda, (const T *)nullptr, 0, s.m, s.k, st).maxbits);
    p.maxB = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, B, ldb, (const T *)nullptr, 0, s.k, s.n, st).maxbits);
    p.maxC0 = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, C0, ldc, (const T *)nullptr, 0, s.m, s.n, st).maxbits);

    ddcheck::prepare_c(p, p.R, st);
    int e = TI::fn(cublas)(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, beta, p.R, p.ldc, (void *)st);
    char what[256];
    snprintf(what, sizeof what, "cublas reference %s %lldx%lldx%lld %s beta=%d: %s", TI::name(),
             (long long)s.m, (long long)s.n, (long long)s.k, LAYOUT_NAME[l], beta,
             cudaGetErrorString((cudaError_t)e));
    if (e || ddcheck::max_diff<T>(red, p.R, ldc, (const T *)nullptr, 0, s.m, s.n, st).nonfinite) {
        report(false, what);
    } else {
        for (const kernel_desc *d : list) {
            auto fn = TI::fn(d);
            if (!fn || d == cublas)
                continue;
            if (d->slow && (s.m > SLOW_LIMIT || s.n > SLOW_LIMIT || s.k > SLOW_LIMIT)) {
                ++skipped;
                continue;
            }
            ddcheck::verdict v = ddcheck::run_and_check<T>(fn, p, red, st);
            snprintf(what, sizeof what,
                     "%-20s %s %lldx%lldx%lld %-6s beta=%d: launch=%s err=%.3g unwritten=%llu "
                     "outside=%llu",
                     d->name, TI::name(), (long long)s.m, (long long)s.n, (long long)s.k,
                     LAYOUT_NAME[l], beta, cudaGetErrorString((cudaError_t)v.launch_error), v.err,
                     v.unwritten, v.outside);
            report(v.launch_error == 0 && v.passed, what);
            if (v.launch_error == 0 && v.passed && s.m * s.n * s.k >= 1000000)
                repeat_check<T>(fn, p, Db + off, red, st, d->name, TI::name(), LAYOUT_NAME[l]);
        }
    }
    CK(cudaFree(Ab));
    CK(cudaFree(Bb));
    CK(cudaFree(Cb));
    CK(cudaFree(Rb));
    CK(cudaFree(C0b));
    CK(cudaFree(Db));
}

/* The row-major trick of the cuBLAS wrapper, against a plain host loop. */
template <typename T>
void test_cublas_host(const kernel_desc *cublas, shape s, int beta, cudaStream_t st)
{
    typedef ddcheck::type_info<T> TI;
    int64_t lda = s.k + 1, ldb = s.n + 2, ldc = s.n + 3;
    std::vector<T> hA(s.m * lda), hB(s.k * ldb), hC(s.m * ldc);
    srand(12345 + (int)s.k);
    for (auto &x : hA)
        x = (T)(rand() / (double)RAND_MAX * 2 - 1);
    for (auto &x : hB)
        x = (T)(rand() / (double)RAND_MAX * 2 - 1);
    for (auto &x : hC)
        x = (T)(rand() / (double)RAND_MAX * 2 - 1);
    T *A, *B, *C;
    CK(cudaMalloc(&A, sizeof(T) * hA.size()));
    CK(cudaMalloc(&B, sizeof(T) * hB.size()));
    CK(cudaMalloc(&C, sizeof(T) * hC.size()));
    CK(cudaMemcpy(A, hA.data(), sizeof(T) * hA.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), sizeof(T) * hB.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(C, hC.data(), sizeof(T) * hC.size(), cudaMemcpyHostToDevice));
    int e = TI::fn(cublas)(s.m, s.n, s.k, A, lda, B, ldb, beta, C, ldc, (void *)st);
    CK(cudaStreamSynchronize(st));
    std::vector<T> out(hC.size());
    CK(cudaMemcpy(out.data(), C, sizeof(T) * out.size(), cudaMemcpyDeviceToHost));
    double worst = 0;
    bool pad_ok = true;
    for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
            double ref = beta ? (double)hC[i * ldc + j] : 0.0;
            for (int64_t p = 0; p < s.k; ++p)
                ref += (double)hA[i * lda + p] * (double)hB[p * ldb + j];
            double d = fabs(ref - (double)out[i * ldc + j]);
            worst = d > worst || d != d ? d : worst;
        }
        for (int64_t j = s.n; j < ldc; ++j)
            pad_ok = pad_ok && memcmp(&out[i * ldc + j], &hC[i * ldc + j], sizeof(T)) == 0;
    }
    double err = worst / (TI::eps() * ((double)s.k + beta));
    char what[200];
    snprintf(what, sizeof what,
             "cublas vs host %s %lldx%lldx%lld beta=%d: launch=%d err=%.3g pad_ok=%d", TI::name(),
             (long long)s.m, (long long)s.n, (long long)s.k, beta, e, err, (int)pad_ok);
    report(e == 0 && err <= DD_CHECK_THRESHOLD && pad_ok, what);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
}

/* k = 0, m = 0, n = 0 and bad arguments, for one kernel. */
template <typename T>
void test_degenerate(const kernel_desc *d, ddcheck::reducer &red, cudaStream_t st)
{
    typedef ddcheck::type_info<T> TI;
    auto fn = TI::fn(d);
    if (!fn)
        return;
    const int64_t m = 37, n = 29, ld = 31;
    T *A, *B, *C;
    CK(cudaMalloc(&A, sizeof(T) * m * ld));
    CK(cudaMalloc(&B, sizeof(T) * m * ld));
    CK(cudaMalloc(&C, sizeof(T) * m * ld));
    char what[160];

    /* k = 0, beta 0: C becomes exactly zero (max|C| = 0, nothing NaN). */
    ddcheck::poison(C, m * ld, st);
    int e = fn(m, n, 0, A, 1, B, n, 0, C, ld, (void *)st);
    ddcheck::reduce_out r = ddcheck::max_diff<T>(red, C, ld, (const T *)nullptr, 0, m, n, st);
    unsigned long long pad = ddcheck::touched<T>(red, C, ld, m, n, ld, st);
    snprintf(what, sizeof what, "%s %s k=0 beta=0 zeroes C", d->name, TI::name());
    report(e == 0 && r.maxbits == 0 && r.nonfinite == 0 && pad == 0, what);

    /* k = 0, beta 1: C unchanged. */
    ddcheck::fill_uniform<T>(C, m, ld, ld, 99, st);
    CK(cudaMemcpyAsync(B, C, sizeof(T) * m * ld, cudaMemcpyDeviceToDevice, st));
    e = fn(m, n, 0, A, 1, A, n, 1, C, ld, (void *)st);
    r = ddcheck::max_diff<T>(red, C, ld, B, ld, m, ld, st);
    snprintf(what, sizeof what, "%s %s k=0 beta=1 keeps C", d->name, TI::name());
    report(e == 0 && r.maxbits == 0 && r.nonfinite == 0, what);

    /* m = 0 and n = 0: nothing written. */
    ddcheck::poison(C, m * ld, st);
    int e1 = fn(0, n, 5, A, 5, B, n, 0, C, ld, (void *)st);
    int e2 = fn(m, 0, 5, A, 5, B, 1, 0, C, ld, (void *)st);
    pad = ddcheck::touched<T>(red, C, ld, m, 0, ld, st);
    snprintf(what, sizeof what, "%s %s m=0 / n=0 write nothing", d->name, TI::name());
    report(e1 == 0 && e2 == 0 && pad == 0, what);

    /* ldc < n, lda < k, beta 2, negative m: an error, and no launch. */
    int b1 = fn(m, n, 5, A, 5, B, n, 0, C, n - 1, (void *)st);
    int b2 = fn(m, n, 5, A, 4, B, n, 0, C, ld, (void *)st);
    int b3 = fn(m, n, 5, A, 5, B, n, 2, C, ld, (void *)st);
    int b4 = fn(-1, n, 5, A, 5, B, n, 0, C, ld, (void *)st);
    pad = ddcheck::touched<T>(red, C, ld, m, 0, ld, st);
    snprintf(what, sizeof what, "%s %s bad arguments rejected (%d %d %d %d)", d->name, TI::name(),
             b1, b2, b3, b4);
    report(b1 != 0 && b2 != 0 && b3 != 0 && b4 != 0 && pad == 0, what);

    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
}

/* ---- the complex kernels (kernel_desc.zgemm / .cgemm) ------------------

 * Shapes in complex elements: 1, 3, 17, 129 and 1000 alone and mixed, a
 * real view of 6 tiles 10000 deep (stream-K shares every tile) and one of
 * 136 tiles (a whole wave and a stream-K tail). */
const shape CX_SHAPES[] = {{1, 1, 1},       {3, 3, 3},          {17, 3, 129},   {3, 129, 17},
                           {129, 129, 129}, {1000, 1001, 999},  {1, 1000, 3},   {1000, 1, 17},
                           {130, 130, 5000}, {1000, 1050, 1500}};

/* Complex layouts (leading dimensions in complex elements; the offsets in
 * components, so one component past an aligned base is a complex array at
 * an 8-byte (z) or 4-byte (c) boundary, unfit for 16-byte and TMA access). */
enum cx_layout { CX_TIGHT, CX_PADDED, CX_ODDLD, CX_OFFSET, CX_OFFSET_C, CX_LAYOUTS };
const char *CX_LAYOUT_NAME[] = {"tight", "padded", "oddld", "offset", "offc"};

void cx_layout_dims(cx_layout l, shape s, int64_t *lda, int64_t *ldb, int64_t *ldc, int64_t *offab,
                    int64_t *offc)
{
    *offab = *offc = 0;
    switch (l) {
    case CX_TIGHT:
        *lda = s.k, *ldb = s.n, *ldc = s.n;
        break;
    case CX_ODDLD: /* not multiples of anything: odd real row pitches for c */
        *lda = s.k + 3, *ldb = s.n + 5, *ldc = s.n + 7;
        break;
    default: /* padded; offset: every base one component off; offc: only C */
        *lda = round4(s.k + 1), *ldb = round4(s.n + 1), *ldc = round4(s.n + 1);
        *offab = l == CX_OFFSET, *offc = l == CX_OFFSET || l == CX_OFFSET_C;
        break;
    }
}

/* Whether kernel_note() must say that the fallback ran (fallback mode:
 * DD_FAULT=cx-no-workspace:*) or must be empty (a compute 9.x GPU, where
 * both complex tensor-core paths run), for a kernel of this name. */
struct note_rule {
    bool fallback; /* kernel-test --cx-fallback */
    bool sm90;
};

void check_note(const note_rule &nr, const char *name, const char *what)
{
    const char *note = kernel_note();
    if (strcmp(name, "zgemm_dmma") && strcmp(name, "cgemm_dmma"))
        return;
    char buf[400];
    if (nr.fallback) {
        snprintf(buf, sizeof buf, "%s: note says the fallback ran (\"%s\")", what, note);
        report(strstr(note, name) && strstr(note, "CUDA-core fallback"), buf);
    } else if (nr.sm90) {
        snprintf(buf, sizeof buf, "%s: no fallback on compute 9.x (note \"%s\")", what, note);
        report(note[0] == '\0', buf);
    }
}

template <typename E>
void test_shape_cx(const std::vector<const kernel_desc *> &list, const kernel_desc *cublas, shape s,
                   cx_layout l, int beta, uint64_t seed, ddcheck::reducer &red, cudaStream_t st,
                   const note_rule &nr)
{
    typedef ddcheck::type_info<E> TI;
    typedef typename TI::real T;
    int64_t lda, ldb, ldc, offab, offc;
    cx_layout_dims(l, s, &lda, &ldb, &ldc, &offab, &offc);
    /* sizes in components; the kernels' buffers at the layout's offsets,
     * cuBLAS's (which needs aligned complex pointers) at none */
    const size_t na = (size_t)(s.m * lda * 2), nb = (size_t)(s.k * ldb * 2),
                 nc = (size_t)(s.m * ldc * 2);
    T *Ab, *Bb, *Cb, *Db, *Ar, *Br, *R, *C0;
    CK(cudaMalloc(&Ab, sizeof(T) * (na + 1)));
    CK(cudaMalloc(&Bb, sizeof(T) * (nb + 1)));
    CK(cudaMalloc(&Cb, sizeof(T) * (nc + 1)));
    CK(cudaMalloc(&Db, sizeof(T) * (nc + 1)));
    CK(cudaMalloc(&Ar, sizeof(T) * na));
    CK(cudaMalloc(&Br, sizeof(T) * nb));
    CK(cudaMalloc(&R, sizeof(T) * nc));
    CK(cudaMalloc(&C0, sizeof(T) * nc));
    T *A = Ab + offab, *B = Bb + offab, *C = Cb + offc;
    /* NaN in the padding: a kernel that reads past k or n poisons its result */
    ddcheck::poison(Ab, na + 1, st);
    ddcheck::poison(Bb, nb + 1, st);
    ddcheck::fill_uniform<T>(A, s.m, 2 * s.k, 2 * lda, seed * 3 + 0, st);
    ddcheck::fill_uniform<T>(B, s.k, 2 * s.n, 2 * ldb, seed * 3 + 1, st);
    ddcheck::fill_uniform<T>(Ar, s.m, 2 * s.k, 2 * lda, seed * 3 + 0, st);
    ddcheck::fill_uniform<T>(Br, s.k, 2 * s.n, 2 * ldb, seed * 3 + 1, st);
    ddcheck::fill_uniform<T>(C0, s.m, 2 * s.n, 2 * ldc, seed * 3 + 2, st);
    ddcheck::problem<T> p = {};
    p.m = s.m, p.n = s.n, p.k = s.k, p.lda = lda, p.ldb = ldb, p.ldc = ldc, p.beta = beta, p.w = 2;
    p.A = Ar, p.B = Br, p.C = C, p.R = R, p.C0 = C0;
    p.maxA = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, Ar, 2 * lda, (const T *)nullptr, 0, s.m, 2 * s.k, st).maxbits);
    p.maxB = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, Br, 2 * ldb, (const T *)nullptr, 0, s.k, 2 * s.n, st).maxbits);
    p.maxC0 = ddcheck::bits_to_double(
        ddcheck::max_diff<T>(red, C0, 2 * ldc, (const T *)nullptr, 0, s.m, 2 * s.n, st).maxbits);

    ddcheck::prepare_c(p, R, st);
    int e = TI::fn(cublas)(p.m, p.n, p.k, Ar, lda, Br, ldb, beta, R, ldc, (void *)st);
    char what[256];
    snprintf(what, sizeof what, "cublas reference %s %lldx%lldx%lld %s beta=%d: %s", TI::name(),
             (long long)s.m, (long long)s.n, (long long)s.k, CX_LAYOUT_NAME[l], beta,
             cudaGetErrorString((cudaError_t)e));
    if (e || ddcheck::max_diff<T>(red, R, 2 * ldc, (const T *)nullptr, 0, s.m, 2 * s.n, st)
                 .nonfinite) {
        report(false, what);
    } else {
        p.A = A, p.B = B; /* the kernels read the layout's own */
        for (const kernel_desc *d : list) {
            auto fn = TI::fn(d);
            if (!fn || d == cublas)
                continue;
            ddcheck::verdict v = ddcheck::run_and_check<T>(fn, p, red, st);
            snprintf(what, sizeof what,
                     "%-20s %s %lldx%lldx%lld %-6s beta=%d: launch=%s err=%.3g unwritten=%llu "
                     "outside=%llu",
                     d->name, TI::name(), (long long)s.m, (long long)s.n, (long long)s.k,
                     CX_LAYOUT_NAME[l], beta, cudaGetErrorString((cudaError_t)v.launch_error),
                     v.err, v.unwritten, v.outside);
            report(v.launch_error == 0 && v.passed, what);
            check_note(nr, d->name, what);
            if (v.launch_error == 0 && v.passed && s.m * s.n * s.k >= 1000000) {
                repeat_check<T>(fn, p, Db + offc, red, st, d->name, TI::name(), CX_LAYOUT_NAME[l]);
                (void)kernel_note();
            }
        }
    }
    for (T *x : {Ab, Bb, Cb, Db, Ar, Br, R, C0})
        CK(cudaFree(x));
}

/* cuBLAS's complex wrapper (the operand swap, no conjugation) against a
 * host loop in complex double. */
template <typename E>
void test_cublas_host_cx(const kernel_desc *cublas, shape s, int beta, cudaStream_t st)
{
    typedef ddcheck::type_info<E> TI;
    typedef typename TI::real T;
    const int64_t lda = s.k + 1, ldb = s.n + 2, ldc = s.n + 3;
    std::vector<T> hA(2 * s.m * lda), hB(2 * s.k * ldb), hC(2 * s.m * ldc);
    srand(4321 + (int)s.k);
    for (auto *v : {&hA, &hB, &hC})
        for (auto &x : *v)
            x = (T)(rand() / (double)RAND_MAX * 2 - 1);
    T *A, *B, *C;
    CK(cudaMalloc(&A, sizeof(T) * hA.size()));
    CK(cudaMalloc(&B, sizeof(T) * hB.size()));
    CK(cudaMalloc(&C, sizeof(T) * hC.size()));
    CK(cudaMemcpy(A, hA.data(), sizeof(T) * hA.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB.data(), sizeof(T) * hB.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(C, hC.data(), sizeof(T) * hC.size(), cudaMemcpyHostToDevice));
    int e = TI::fn(cublas)(s.m, s.n, s.k, A, lda, B, ldb, beta, C, ldc, (void *)st);
    CK(cudaStreamSynchronize(st));
    std::vector<T> out(hC.size());
    CK(cudaMemcpy(out.data(), C, sizeof(T) * out.size(), cudaMemcpyDeviceToHost));
    double worst = 0;
    bool pad_ok = true;
    for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
            double re = beta ? (double)hC[2 * (i * ldc + j)] : 0.0;
            double im = beta ? (double)hC[2 * (i * ldc + j) + 1] : 0.0;
            for (int64_t q = 0; q < s.k; ++q) {
                const double ar = hA[2 * (i * lda + q)], ai = hA[2 * (i * lda + q) + 1];
                const double br = hB[2 * (q * ldb + j)], bi = hB[2 * (q * ldb + j) + 1];
                re += ar * br - ai * bi;
                im += ar * bi + ai * br;
            }
            const double d = fmax(fabs(re - (double)out[2 * (i * ldc + j)]),
                                  fabs(im - (double)out[2 * (i * ldc + j) + 1]));
            worst = d > worst || d != d ? d : worst;
        }
        for (int64_t j = 2 * s.n; j < 2 * ldc; ++j)
            pad_ok = pad_ok && memcmp(&out[2 * i * ldc + j], &hC[2 * i * ldc + j], sizeof(T)) == 0;
    }
    const double err = worst / (TI::eps() * (2.0 * (double)s.k + beta));
    char what[200];
    snprintf(what, sizeof what,
             "cublas vs host %s %lldx%lldx%lld beta=%d: launch=%d err=%.3g pad_ok=%d", TI::name(),
             (long long)s.m, (long long)s.n, (long long)s.k, beta, e, err, (int)pad_ok);
    report(e == 0 && err <= DD_CHECK_THRESHOLD && pad_ok, what);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
}

/* k = 0, m = 0, n = 0 and bad arguments, for one complex kernel. */
template <typename E>
void test_degenerate_cx(const kernel_desc *d, ddcheck::reducer &red, cudaStream_t st)
{
    typedef ddcheck::type_info<E> TI;
    typedef typename TI::real T;
    auto fn = TI::fn(d);
    if (!fn)
        return;
    const int64_t m = 37, n = 29, ld = 31, comps = 2 * m * ld; /* complex elements of ld */
    T *A, *B, *C;
    CK(cudaMalloc(&A, sizeof(T) * comps));
    CK(cudaMalloc(&B, sizeof(T) * comps));
    CK(cudaMalloc(&C, sizeof(T) * comps));
    char what[160];

    /* k = 0, beta 0: C becomes exactly zero, both components; padding kept */
    ddcheck::poison(C, comps, st);
    int e = fn(m, n, 0, A, 1, B, n, 0, C, ld, (void *)st);
    ddcheck::reduce_out r = ddcheck::max_diff<T>(red, C, 2 * ld, (const T *)nullptr, 0, m, 2 * n, st);
    unsigned long long pad = ddcheck::touched<T>(red, C, 2 * ld, m, 2 * n, 2 * ld, st);
    snprintf(what, sizeof what, "%s %s k=0 beta=0 zeroes C", d->name, TI::name());
    report(e == 0 && r.maxbits == 0 && r.nonfinite == 0 && pad == 0, what);

    /* k = 0, beta 1: C unchanged */
    ddcheck::fill_uniform<T>(C, m, 2 * ld, 2 * ld, 98, st);
    CK(cudaMemcpyAsync(B, C, sizeof(T) * comps, cudaMemcpyDeviceToDevice, st));
    e = fn(m, n, 0, A, 1, A, n, 1, C, ld, (void *)st);
    r = ddcheck::max_diff<T>(red, C, 2 * ld, B, 2 * ld, m, 2 * ld, st);
    snprintf(what, sizeof what, "%s %s k=0 beta=1 keeps C", d->name, TI::name());
    report(e == 0 && r.maxbits == 0 && r.nonfinite == 0, what);

    /* m = 0 and n = 0: nothing written */
    ddcheck::poison(C, comps, st);
    int e1 = fn(0, n, 5, A, 5, B, n, 0, C, ld, (void *)st);
    int e2 = fn(m, 0, 5, A, 5, B, 1, 0, C, ld, (void *)st);
    pad = ddcheck::touched<T>(red, C, 2 * ld, m, 0, 2 * ld, st);
    snprintf(what, sizeof what, "%s %s m=0 / n=0 write nothing", d->name, TI::name());
    report(e1 == 0 && e2 == 0 && pad == 0, what);

    /* ldc < n, lda < k, beta 2, negative m, negative ldb: an error, no launch */
    int b1 = fn(m, n, 5, A, 5, B, n, 0, C, n - 1, (void *)st);
    int b2 = fn(m, n, 5, A, 4, B, n, 0, C, ld, (void *)st);
    int b3 = fn(m, n, 5, A, 5, B, n, 2, C, ld, (void *)st);
    int b4 = fn(-1, n, 5, A, 5, B, n, 0, C, ld, (void *)st);
    int b5 = fn(m, n, 5, A, 5, B, -n, 0, C, ld, (void *)st);
    pad = ddcheck::touched<T>(red, C, 2 * ld, m, 0, 2 * ld, st);
    snprintf(what, sizeof what, "%s %s bad arguments rejected (%d %d %d %d %d)", d->name,
             TI::name(), b1, b2, b3, b4, b5);
    report(b1 != 0 && b2 != 0 && b3 != 0 && b4 != 0 && b5 != 0 && pad == 0, what);

    /* cuBLAS's complex types want whole-element alignment: a pointer one
     * component off is refused before cuBLAS sees it, C untouched */
    if (!strcmp(d->name, "cublas")) {
        ddcheck::poison(C, comps, st);
        int a1 = fn(m, n, 5, A + 1, 5, B, n, 0, C, ld, (void *)st);
        int a2 = fn(m, n, 5, A, 5, B, n, 0, C + 1, ld, (void *)st);
        pad = ddcheck::touched<T>(red, C, 2 * ld, m, 0, 2 * ld, st);
        snprintf(what, sizeof what, "%s %s misaligned complex pointers refused (%d %d)", d->name,
                 TI::name(), a1, a2);
        report(a1 != 0 && a2 != 0 && pad == 0, what);
    }

    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
}

/* Every complex case: the registry's complex entries, the cuBLAS wrapper
 * against the host, the degenerate cases, the shapes and layouts. */
void test_complex(const std::vector<const kernel_desc *> &list, const kernel_desc *cublas,
                  ddcheck::reducer &red, cudaStream_t st, const note_rule &nr)
{
    const kernel_desc *z = kernel_find(DD_KERNEL_DEFAULT_C128), *c = kernel_find(DD_KERNEL_DEFAULT_C64);
    report(z && z->zgemm && !z->cgemm && !z->dgemm && !z->sgemm,
           "the complex double default (zgemm_dmma) offers complex double only");
    report(c && c->cgemm && !c->zgemm && !c->dgemm && !c->sgemm,
           "the complex float default (cgemm_dmma) offers complex float only");
    report(cublas->zgemm && cublas->cgemm, "cublas offers both complex types");
    for (int beta = 0; beta <= 1; ++beta) {
        test_cublas_host_cx<ddcheck::cx<double>>(cublas, {1, 1, 1}, beta, st);
        test_cublas_host_cx<ddcheck::cx<double>>(cublas, {17, 33, 65}, beta, st);
        test_cublas_host_cx<ddcheck::cx<float>>(cublas, {1, 1, 1}, beta, st);
        test_cublas_host_cx<ddcheck::cx<float>>(cublas, {17, 33, 65}, beta, st);
    }
    for (const kernel_desc *d : list) {
        test_degenerate_cx<ddcheck::cx<double>>(d, red, st);
        test_degenerate_cx<ddcheck::cx<float>>(d, red, st);
    }
    (void)kernel_note(); /* from here on, a note is the complex cases' */
    uint64_t seed = 31337;
    for (const shape &s : CX_SHAPES) {
        for (int l = 0; l < CX_LAYOUTS; ++l)
            for (int beta = 0; beta <= 1; ++beta) {
                test_shape_cx<ddcheck::cx<double>>(list, cublas, s, (cx_layout)l, beta, ++seed, red,
                                                   st, nr);
                test_shape_cx<ddcheck::cx<float>>(list, cublas, s, (cx_layout)l, beta, ++seed, red,
                                                  st, nr);
            }
        printf("kernel-test: complex %lldx%lldx%lld done (%d passed, %d failed so far)\n",
               (long long)s.m, (long long)s.n, (long long)s.k, passed, g_fail);
        fflush(stdout);
    }
}

} // namespace

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("kernel-test: no CUDA device present: skipped\n");
        return 77;
    }
    /* --cx-fallback: only the complex cases, each zgemm_dmma / cgemm_dmma
     * multiply required to have run its fallback (the ctest entry sets
     * DD_FAULT=cx-no-workspace:*) */
    const bool cx_fallback = argc > 1 && !strcmp(argv[1], "--cx-fallback");
    if (cx_fallback)
        --argc, ++argv;
    const char *only = argc > 1 ? argv[1] : nullptr; /* optional kernel-name prefix */
    CK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("kernel-test: %s (cc %d.%d), cuBLAS %s\n", prop.name, prop.major, prop.minor,
           kernel_cublas_version());

    const kernel_desc *cublas = kernel_find("cublas");
    if (!cublas) {
        printf("FAIL kernel_find(\"cublas\") returned NULL\n");
        return 1;
    }
    std::vector<const kernel_desc *> list;
    int n = 0;
    const kernel_desc *all = kernel_list(&n);
    report(n > 0 && !strcmp(all[n - 1].name, "cublas"), "kernel_list ends with cublas");
    report(kernel_find(kernel_default(1)) && kernel_find(kernel_default(1))->dgemm,
           "kernel_default(f64) names an FP64 kernel");
    report(kernel_find(kernel_default(0)) && kernel_find(kernel_default(0))->sgemm,
           "kernel_default(f32) names an FP32 kernel");
    report(kernel_find("no-such-kernel") == nullptr, "kernel_find of an unknown name is NULL");
    /* every earlier name finds its kernel, reported by the kernel's name */
    int aliases = 0;
    const kernel_desc *to = nullptr;
    for (const char *old; (old = kernel_alias(aliases, &to)) != nullptr; ++aliases) {
        char what[200];
        snprintf(what, sizeof what, "alias %s finds %s", old, to ? to->name : "(none)");
        report(to && kernel_find(old) == to && strcmp(to->name, old) != 0, what);
    }
    report(aliases >= 3 && kernel_find("23_dmma_pipe") == kernel_find("dgemm_dmma") &&
               kernel_find("24_sgemm_dmma") == kernel_find("sgemm_dmma") &&
               kernel_find("19_sgemm_lean") == kernel_find("sgemm_simt"),
           "the production kernels' earlier names are aliases");
    for (int i = 0; i < n; ++i)
        if (!only || !strncmp(all[i].name, only, strlen(only)))
            list.push_back(&all[i]);

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ddcheck::reducer red;
    red.init();

    const note_rule nr = {cx_fallback, prop.major == 9};
    if (cx_fallback) {
        test_complex(list, cublas, red, st, nr);
        red.release();
        CK(cudaStreamDestroy(st));
        kernel_cublas_shutdown();
        printf("%d passed, %d failed\n", passed, g_fail);
        return g_fail ? 1 : 0;
    }
    for (int beta = 0; beta <= 1; ++beta) {
        test_cublas_host<double>(cublas, {1, 1, 1}, beta, st);
        test_cublas_host<double>(cublas, {17, 33, 65}, beta, st);
        test_cublas_host<float>(cublas, {1, 1, 1}, beta, st);
        test_cublas_host<float>(cublas, {17, 33, 65}, beta, st);
    }
    for (const kernel_desc *d : list) {
        test_degenerate<double>(d, red, st);
        test_degenerate<float>(d, red, st);
    }

    uint64_t seed = 777;
    for (const shape &s : SHAPES) {
        for (int l = 0; l < LAYOUTS; ++l) {
            for (int beta = 0; beta <= 1; ++beta) {
                test_shape<double>(list, cublas, s, (layout)l, beta, ++seed, red, st);
                test_shape<float>(list, cublas, s, (layout)l, beta, ++seed, red, st);
            }
        }
        printf("kernel-test: %lldx%lldx%lld done (%d passed, %d failed so far)\n", (long long)s.m,
               (long long)s.n, (long long)s.k, passed, g_fail);
        fflush(stdout);
    }
    test_complex(list, cublas, red, st, nr);

    red.release();
    CK(cudaStreamDestroy(st));
    kernel_cublas_shutdown();
    printf("kernel-test: %d cases skipped (slow kernels on shapes above %lld)\n", skipped,
           (long long)SLOW_LIMIT);
    printf("%d passed, %d failed\n", passed, g_fail);
    return g_fail ? 1 : 0;
}
