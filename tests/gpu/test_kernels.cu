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
                  const char *name, layout l)
{
    CK(cudaMemcpy2DAsync(D, p.ldc * sizeof(T), p.C, p.ldc * sizeof(T), p.n * sizeof(T), p.m,
                         cudaMemcpyDeviceToDevice, st));
    ddcheck::prepare_c(p, p.C, st);
    const int e = fn(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, (void *)st);
    if (e != 0)
        (void)cudaGetLastError(); /* reported below, not left for the next check */
    const ddcheck::reduce_out d = ddcheck::max_diff<T>(red, p.C, p.ldc, D, p.ldc, p.m, p.n, st);
    char what[200];
    snprintf(what, sizeof what, "%-20s %s %lldx%lldx%lld %-6s beta=%d: repeat %s, max diff %.3g",
             name, ddcheck::type_info<T>::name(), (long long)p.m, (long long)p.n, (long long)p.k,
             LAYOUT_NAME[l], p.beta, cudaGetErrorString((cudaError_t)e),
             ddcheck::bits_to_double(d.maxbits));
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
                repeat_check<T>(fn, p, Db + off, red, st, d->name, l);
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

} // namespace

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("kernel-test: no CUDA device present: skipped\n");
        return 77;
    }
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

    red.release();
    CK(cudaStreamDestroy(st));
    kernel_cublas_shutdown();
    printf("kernel-test: %d cases skipped (slow kernels on shapes above %lld)\n", skipped,
           (long long)SLOW_LIMIT);
    printf("%d passed, %d failed\n", passed, g_fail);
    return g_fail ? 1 : 0;
}
