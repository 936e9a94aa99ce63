/* test_ozaki2 — the Ozaki scheme II host reference (kernels/ozaki2_ref.c):
 *  - the modular pipeline (residues, INT8 products, Garner) is exact on
 *    integer matrices, up to the bound |A·B| < M/2, for 8..20 moduli;
 *  - accuracy against a double-double reference, next to the native FP64
 *    triple loop, for 8..20 moduli on five input classes (a table on
 *    stdout): uniform [-1,1); rows and columns scaled by 2^[-30,30];
 *    rows of very different norms (2^[-200,200], columns 2^[-100,100]);
 *    element exponents spread over 2^[-30,30] inside rows and columns;
 *    "blocks" (rows large where columns are small, ratio 2^40);
 *  - error within 2x native from the automatic number of moduli on for
 *    the classes the scaling handles, the range check falling back with a
 *    reason on the others (and on non-finite input), beta 1, chunked k,
 *    k = 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "ozaki2.h"
#include "ozaki2_ref.h"

#define OZ_RNG_SEED 0x9E3779B97F4A7C15ull
#include "oz_rng.h"

/* ---- exactness of the modular pipeline ------------------------------------------ */

static void test_exact(void)
{
    const int64_t m = 9, n = 7, k = 37;
    double A[9 * 37], B[37 * 7], C[9 * 7];
    for (int nm = OZ2_MIN_MODULI; nm <= OZ2_MAX_MODULI; ++nm) {
        /* entries below 2^b with k·2^2b < M/2; b ≤ 50 keeps them exact doubles
         * and the sums inside __int128 */
        int b = (oz2_log2_product(nm) - 1 - 6) / 2;
        b = b > 50 ? 50 : b;
        for (int q = 0; q < m * k; ++q)
            A[q] = (double)(int64_t)(uni() * ldexp(1.0, b));
        for (int q = 0; q < k * n; ++q)
            B[q] = (double)(int64_t)(uni() * ldexp(1.0, b));
        A[0] = ldexp(1.0, b) - 1, B[0] = -(ldexp(1.0, b) - 1); /* extremes */
        CHECK(oz2_ref_int_product(nm, m, n, k, A, B, C) == 0, "int product %d", nm);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                __int128 s = 0;
                for (int64_t l = 0; l < k; ++l)
                    s += (__int128)(int64_t)A[i * k + l] * (__int128)(int64_t)B[l * n + j];
                double ex = (double)s, got = C[i * n + j];
                CHECK(fabs(got - ex) <= 0x1p-50 * fabs(ex), "moduli %d (%lld,%lld): %.17g vs %.17g",
                      nm, (long long)i, (long long)j, got, ex);
            }
    }
    /* one entry near the bound: 8 moduli (M ≈ 2^63.9), k = 1 */
    double a = ldexp(1.0, 31) - 1, bb = -(ldexp(1.0, 31) - 3), c = 0;
    CHECK(oz2_ref_int_product(8, 1, 1, 1, &a, &bb, &c) == 0 && c == a * bb, "bound: %.17g", c);
}

/* ---- accuracy ------------------------------------------------------------------- */

enum { UNIFORM, ROWCOL30, NORMS, ELEM30, BLOCKS, NCLASS };
static const char *CLASS_NAME[] = {"uniform", "rowcol30", "norms", "elem30", "blocks"};

static void fill(int cls, int64_t m, int64_t n, int64_t k, double *A, double *B)
{
    int ra[512], cb[512];
    for (int64_t i = 0; i < m; ++i)
        ra[i] = cls == ROWCOL30 ? irange(-30, 30) : cls == NORMS ? irange(-200, 200) : 0;
    for (int64_t j = 0; j < n; ++j)
        cb[j] = cls == ROWCOL30 ? irange(-30, 30) : cls == NORMS ? irange(-100, 100) : 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l) {
            int e = cls == ELEM30 ? irange(-30, 30) : cls == BLOCKS ? (l < k / 2 ? 0 : -40) : ra[i];
            A[i * k + l] = ldexp(uni(), e);
        }
    for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j) {
            int e = cls == ELEM30 ? irange(-30, 30) : cls == BLOCKS ? (l < k / 2 ? -40 : 0) : cb[j];
            B[l * n + j] = ldexp(uni(), e);
        }
}

/* Double-double dot product (TwoProd by fma, TwoSum): ~106 bits. */
static double dd_dot(const double *a, const double *b, int64_t ldb, int64_t k, double *absdot)
{
    double hi = 0, lo = 0, ab = 0;
    for (int64_t l = 0; l < k; ++l) {
        double p = a[l] * b[l * ldb], pe = fma(a[l], b[l * ldb], -p);
        double s = hi + p, bp = s - hi, se = (hi - (s - bp)) + (p - bp);
        hi = s, lo += se + pe;
        ab += fabs(p);
        double t = hi + lo;
        lo = lo - (t - hi), hi = t;
    }
    *absdot = ab;
    return hi + lo;
}

typedef struct {
    double cw;  /* max |C - R| / Σ|a||b| */
    double rel; /* max |C - R| / |R| */
} errs;

static errs measure(int64_t m, int64_t n, const double *C, const double *R, const double *AB)
{
    errs e = {0, 0};
    for (int64_t q = 0; q < m * n; ++q) {
        double d = fabs(C[q] - R[q]);
        if (AB[q] > 0 && d / AB[q] > e.cw)
            e.cw = d / AB[q];
        if (R[q] != 0 && d / fabs(R[q]) > e.rel)
            e.rel = d / fabs(R[q]);
    }
    return e;
}

static void test_accuracy(void)
{
    const int64_t m = 96, n = 80, k = 256;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *R = malloc(sizeof(double) * m * n);
    double *AB = malloc(sizeof(double) * m * n), *N = malloc(sizeof(double) * m * n);
    const int autom = oz2_auto_moduli(k);
    printf("accuracy, m=%lld n=%lld k=%lld, vs double-double; cw = max|C-R|/sum|a||b|, "
           "rel = max|C-R|/|R|; auto moduli for k: %d\n",
           (long long)m, (long long)n, (long long)k, autom);
    printf("%-9s %-7s %4s %5s %10s %10s %10s %10s  %s\n", "class", "moduli", "H", "fallbk", "cw",
           "cw/native", "rel", "rel/native", "reason");
    for (int cls = 0; cls < NCLASS; ++cls) {
        fill(cls, m, n, k, A, B);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
                R[i * n + j] = dd_dot(A + i * k, B + j, n, k, &AB[i * n + j]);
        oz2_ref_native(m, n, k, A, k, B, n, 0, N, n);
        errs en = measure(m, n, N, R, AB);
        printf("%-9s %-7s %4s %5s %10.2e %10s %10.2e %10s\n", CLASS_NAME[cls], "native", "-", "-",
               en.cw, "1", en.rel, "1");
        for (int nm = OZ2_MIN_MODULI; nm <= OZ2_MAX_MODULI; ++nm) {
            oz2_params p;
            oz2_params_init(&p, nm);
            oz2_ref_opts o = {nm, 0, 0, 0, 0};
            oz2_ref_result res;
            CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0, "dgemm");
            int fb = res.fallback;
            if (fb) { /* the fallback is the native loop, bit for bit */
                CHECK(memcmp(C, N, sizeof(double) * m * n) == 0, "fallback != native");
                o.force = 1; /* and what the emulation would have given */
                CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0, "forced");
            }
            errs e = measure(m, n, C, R, AB);
            printf("%-9s %-7d %4d %5s %10.2e %10.2f %10.2e %10.2f  %s\n", CLASS_NAME[cls], nm,
                   p.half_bits, fb ? "yes" : "no", e.cw, e.cw / en.cw, e.rel, e.rel / en.rel,
                   fb ? res.reason : "");
            int handled = cls == UNIFORM || cls == ROWCOL30 || cls == NORMS;
            if (handled && nm >= autom) {
                CHECK(!fb, "%s, %d moduli: fell back (%s)", CLASS_NAME[cls], nm, res.reason);
                CHECK(e.cw <= 2 * en.cw, "%s, %d moduli: cw %.3g > 2x native %.3g",
                      CLASS_NAME[cls], nm, e.cw, en.cw);
            }
            if (cls == BLOCKS)
                CHECK(fb && strstr(res.reason, "keep <"), "blocks, %d moduli: no fallback", nm);
        }
    }
    free(A), free(B), free(C), free(R), free(AB), free(N);
}

/* ---- beta, chunks, k = 0, non-finite ----------------------------------------------- */

static void test_paths(void)
{
    const int64_t m = 33, n = 29, k = 130, ldc = 31;
    double A[33 * 130], B[130 * 29], C[33 * 31], C2[33 * 31], R[33 * 31];
    for (int q = 0; q < m * k; ++q)
        A[q] = uni();
    for (int q = 0; q < k * n; ++q)
        B[q] = uni();
    for (int q = 0; q < m * ldc; ++q)
        C[q] = C2[q] = R[q] = uni();
    oz2_ref_opts o = {0, 0, 0, 0, 0}, oc = {0, 0, 50, 0, 0};
    oz2_ref_result res;
    oz2_ref_native(m, n, k, A, k, B, n, 1, R, ldc);
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 1, C, ldc, &res) == 0 && !res.fallback, "beta");
    CHECK(oz2_ref_dgemm(&oc, m, n, k, A, k, B, n, 1, C2, ldc, &res) == 0, "chunked");
    double worst = 0, worst2 = 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
            double d = fabs(C[i * ldc + j] - R[i * ldc + j]), d2 = fabs(C2[i * ldc + j] - R[i * ldc + j]);
            if (j >= n) /* outside the block: untouched */
                CHECK(d == 0 && d2 == 0, "padding (%lld,%lld) written", (long long)i, (long long)j);
            worst = d > worst ? d : worst, worst2 = d2 > worst2 ? d2 : worst2;
        }
    CHECK(worst < 1e-13 && worst2 < 1e-13, "beta 1: %.3g, chunked: %.3g", worst, worst2);

    CHECK(oz2_ref_dgemm(&o, m, n, 0, A, k, B, n, 0, C, ldc, &res) == 0 && C[0] == 0 &&
               C[(m - 1) * ldc + n - 1] == 0 && C[n] != 0,
          "k = 0 zeroes the block only");
    A[5 * k + 7] = INFINITY;
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, ldc, &res) == 0 && res.fallback &&
               strstr(res.reason, "non-finite") && isinf(C[5 * ldc]),
          "non-finite: fallback %d (%s)", res.fallback, res.reason);
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k - 1, B, n, 0, C, ldc, &res) == -1, "lda < k refused");
}

int main(void)
{
    test_exact();
    test_paths();
    test_accuracy();
    if (g_fail)
        fprintf(stderr, "test_ozaki2: %d failure(s)\n", g_fail);
    else
        printf("test_ozaki2: all passed\n");
    return g_fail ? 1 : 0;
}
