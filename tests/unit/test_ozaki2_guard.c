/* test_ozaki2_guard — the accuracy guard of ozaki2-auto (kernels/ozaki2.h)
 * in the host reference (kernels/ozaki2_ref.c, opts.guard):
 *  - the anti-sorted histogram sum equals a brute-force anti-sorted
 *    pairing where every value is a power of two (the rounding down is
 *    then exact), and is never above the true Σ|a||b|;
 *  - per input class (issue 34's and GEMMul8's (rand-0.5)·exp(φ·randn),
 *    φ = 0.5, 1, 2, 3, 4), m = 96, n = 80, k = 256 and 1024, against a
 *    double-double reference: where the guard emulates, every entry's
 *    error is within its bound, τ·u·Σ|a||b| + N·u·|C_ij| (ozaki2.h: the
 *    rounding of the operands plus Horner's roundings in the CRT) — a
 *    deterministic bound, so it can fail only through a wrong guard; the
 *    max and the median of cw = |C - R|/Σ|a||b| are at most native's
 *    (the plain FP64 triple loop), the max with a floor of 2^-53 (one
 *    rounding of the entry; native's max is above it on every class here,
 *    the floor only keeps a lucky native run from failing an exact-enough
 *    emulation); where it falls back the result is native's, bit for bit,
 *    with a reason;
 *  - the chosen count never falls as φ grows, and φ = 4 takes more than
 *    φ = 0.5 (a fallback counting as more than OZ2_MAX_MODULI);
 *  - with opts.speed, a count that would be slower than native at this k
 *    falls back with that reason; non-finite input falls back. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "ozaki2.h"
#include "ozaki2_ref.h"

#define OZ_RNG_SEED 0x2545F4914F6CDD1Dull
#include "oz_rng.h"

static double u01(void) /* (0, 1) */
{
    return ((double)(next_u64() >> 11) + 0.5) * 0x1p-53;
}
static double randn(void) /* Box-Muller */
{
    return sqrt(-2.0 * log(u01())) * cos(6.283185307179586 * u01());
}

/* ---- the anti-sorted histogram sum ---------------------------------------------- */

static int cmp_up(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void test_antisorted(void)
{
    enum { K = 200 };
    double a[K], b[K], sa[K], sb[K];
    int ha[OZ2_HIST_BINS], hb[OZ2_HIST_BINS];
    for (int rep = 0; rep < 200; ++rep) {
        int zeros_a = 0;
        memset(ha, 0, sizeof ha), memset(hb, 0, sizeof hb);
        /* powers of two in 2^[-20, 0] (and 2^-80, below the bins), some zeros */
        for (int l = 0; l < K; ++l) {
            uint64_t h = next_u64();
            a[l] = h % 7 == 0 ? 0 : ldexp(h % 11 ? 1.0 : -1.0, -(int)(h % 21));
            b[l] = h % 5 == 0 ? 0 : ldexp(1.0, (h >> 20) % 13 == 0 ? -80 : -(int)((h >> 8) % 21));
        }
        int ea = 0, eb = 0;
        double ma = 0, mb = 0;
        for (int l = 0; l < K; ++l)
            ma = fmax(ma, fabs(a[l])), mb = fmax(mb, fabs(b[l]));
        (void)frexp(ma, &ea), (void)frexp(mb, &eb);
        for (int l = 0; l < K; ++l) {
            int d = oz2_hist_bin(a[l], ea), e = oz2_hist_bin(b[l], eb);
            d < 0 ? ++zeros_a : ++ha[d];
            if (e >= 0)
                ++hb[e];
            sa[l] = d < 0 ? 0 : fabs(a[l]);
            sb[l] = e < 0 ? 0 : fabs(b[l]);
        }
        qsort(sa, K, sizeof(double), cmp_up), qsort(sb, K, sizeof(double), cmp_up);
        double brute = 0, truth = 0;
        for (int l = 0; l < K; ++l)
            brute += sa[l] * sb[K - 1 - l], truth += fabs(a[l]) * fabs(b[l]);
        double got = ldexp(oz2_antisorted(ha, zeros_a, oz2_hist_last(ha), hb, oz2_hist_last(hb)),
                           ea - 1 + eb - 1);
        CHECK(fabs(got - brute) <= 1e-15 * brute, "rep %d: anti-sorted %.17g, brute %.17g", rep,
              got, brute);
        CHECK(got <= truth, "rep %d: lower bound %.17g above the truth %.17g", rep, got, truth);
    }
}

/* ---- accuracy per class --------------------------------------------------------- */

enum { UNIFORM, ROWCOL30, HALVES, LOGN4, PHI05, PHI1, PHI2, PHI3, PHI4, NCLASS };
static const char *CLASS_NAME[] = {"uniform", "rowcol30", "halves", "lognormal4", "phi0.5",
                                   "phi1",    "phi2",     "phi3",   "phi4"};
static const double PHI[] = {0, 0, 0, 0, 0.5, 1, 2, 3, 4};

static void fill(int cls, int64_t m, int64_t n, int64_t k, double *A, double *B)
{
    int ra[512], cb[512];
    for (int64_t i = 0; i < m; ++i)
        ra[i] = cls == ROWCOL30 ? (int)(next_u64() % 61) - 30 : 0;
    for (int64_t j = 0; j < n; ++j)
        cb[j] = cls == ROWCOL30 ? (int)(next_u64() % 61) - 30 : 0;
    for (int64_t q = 0; q < m * k + k * n; ++q) {
        int is_b = q >= m * k;
        int64_t r = is_b ? (q - m * k) / n : q / k, c = is_b ? (q - m * k) % n : q % k;
        int64_t l = is_b ? r : c; /* the index along k */
        double v;
        if (cls >= PHI05)
            v = (u01() - 0.5) * exp(PHI[cls] * randn());
        else if (cls == LOGN4)
            v = (next_u64() & 1 ? 1.0 : -1.0) * exp(4.0 * randn());
        else if (cls == HALVES) /* A's row: first half 1, second 2^-10; B's column opposite */
            v = ldexp(uni(), (l < k / 2) == !is_b ? 0 : -10);
        else
            v = ldexp(uni(), is_b ? cb[c] : ra[r]);
        (is_b ? B : A)[is_b ? q - m * k : q] = v;
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

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* max and median of |C - R|/Σ|a||b| (entries with Σ|a||b| > 0) */
static void stats(int64_t mn, const double *C, const double *R, const double *AB, double *tmp,
                  double *mx, double *med)
{
    int64_t c = 0;
    for (int64_t q = 0; q < mn; ++q)
        if (AB[q] > 0)
            tmp[c++] = fabs(C[q] - R[q]) / AB[q];
    qsort(tmp, (size_t)c, sizeof(double), cmp_d);
    *mx = c ? tmp[c - 1] : 0, *med = c ? tmp[c / 2] : 0;
}

static void test_classes(int64_t k)
{
    const int64_t m = 96, n = 80;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *R = malloc(sizeof(double) * m * n);
    double *AB = malloc(sizeof(double) * m * n), *N = malloc(sizeof(double) * m * n);
    double *tmp = malloc(sizeof(double) * m * n);
    int prev_phi = 0, first_phi = 0, phi_count = 0;
    printf("guard, m=%lld n=%lld k=%lld, vs double-double; cw = |C-R|/sum|a||b| (units of u = "
           "2^-53), max / median\n",
           (long long)m, (long long)n, (long long)k);
    printf("%-11s %6s %6s %6s %10s %10s %10s %10s  %s\n", "class", "need", "used", "fallbk",
           "native max", "median", "guard max", "median", "reason");
    for (int cls = 0; cls < NCLASS; ++cls) {
        fill(cls, m, n, k, A, B);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
                R[i * n + j] = dd_dot(A + i * k, B + j, n, k, &AB[i * n + j]);
        oz2_ref_native(m, n, k, A, k, B, n, 0, N, n);
        double nmax, nmed, gmax, gmed;
        stats(m * n, N, R, AB, tmp, &nmax, &nmed);
        oz2_ref_opts o = {0, 0, 0, 1, 0};
        oz2_ref_result res;
        CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0, "%s: dgemm",
              CLASS_NAME[cls]);
        stats(m * n, C, R, AB, tmp, &gmax, &gmed);
        printf("%-11s %6d %6d %6s %10.3f %10.3f %10.3f %10.3f  %s\n", CLASS_NAME[cls], res.need,
               res.moduli, res.fallback ? "yes" : "no", nmax * 0x1p53, nmed * 0x1p53,
               gmax * 0x1p53, gmed * 0x1p53, res.reason);
        if (res.fallback) {
            CHECK(memcmp(C, N, sizeof(double) * m * n) == 0, "%s: fallback != native",
                  CLASS_NAME[cls]);
            CHECK(res.reason[0] != '\0', "%s: fallback without a reason", CLASS_NAME[cls]);
        } else {
            CHECK(res.need >= OZ2_MIN_MODULI && res.moduli == res.need, "%s: need %d used %d",
                  CLASS_NAME[cls], res.need, res.moduli);
            int64_t bad = 0;
            for (int64_t q = 0; q < m * n; ++q) {
                double bound = OZ2_GUARD_TAU * 0x1p-53 * AB[q] + res.moduli * 0x1p-53 * fabs(R[q]) +
                               0x1p-100 * AB[q];
                bad += fabs(C[q] - R[q]) > bound;
            }
            CHECK(bad == 0, "%s: %lld entries beyond the guard's bound", CLASS_NAME[cls],
                  (long long)bad);
            CHECK(gmax <= fmax(nmax, 0x1p-53), "%s: max cw %.3g u > native's %.3g u",
                  CLASS_NAME[cls], gmax * 0x1p53, nmax * 0x1p53);
            CHECK(gmed <= nmed, "%s: median cw %.3g u > native's %.3g u", CLASS_NAME[cls],
                  gmed * 0x1p53, nmed * 0x1p53);
        }
        if (cls >= PHI05) {
            int c = res.fallback && res.need == 0 ? OZ2_MAX_MODULI + 1 : res.need;
            CHECK(cls == PHI05 || c >= prev_phi, "%s: count %d below phi's before (%d)",
                  CLASS_NAME[cls], c, prev_phi);
            if (cls == PHI05)
                first_phi = c;
            prev_phi = c, phi_count = c;
        }
        if (cls == UNIFORM || cls == ROWCOL30 || cls == HALVES)
            CHECK(!res.fallback, "%s: the guard fell back (%s)", CLASS_NAME[cls], res.reason);
    }
    CHECK(phi_count > first_phi, "phi 4 takes %d moduli, phi 0.5 %d", phi_count, first_phi);
    free(A), free(B), free(C), free(R), free(AB), free(N), free(tmp);
}

/* ---- speed rule, non-finite ------------------------------------------------------- */

static void test_paths(void)
{
    const int64_t m = 40, n = 36, k = 300;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *N = malloc(sizeof(double) * m * n);
    for (int64_t q = 0; q < m * k; ++q)
        A[q] = uni();
    for (int64_t q = 0; q < k * n; ++q)
        B[q] = uni();
    oz2_ref_native(m, n, k, A, k, B, n, 0, N, n);
    oz2_ref_opts o = {0, 0, 0, 1, 1};
    oz2_ref_result res;
    /* k = 300: no count pays (oz2_emulation_pays: N·(k + 2816) < 24·k needs N < 2.4) */
    CHECK(!oz2_emulation_pays(OZ2_MIN_MODULI, k) && oz2_emulation_pays(14, 4096) &&
              !oz2_emulation_pays(15, 4096) && oz2_emulation_pays(20, 16384),
          "speed rule");
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0 && res.fallback &&
              strstr(res.reason, "slower than native") && res.need >= OZ2_MIN_MODULI &&
              memcmp(C, N, sizeof(double) * m * n) == 0,
          "speed fallback: %d (%s)", res.fallback, res.reason);
    o.speed = 0;
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0 && !res.fallback &&
              res.moduli == res.need,
          "guard without the speed rule: fallback %d (%s)", res.fallback, res.reason);
    /* a zero row and a zero column: those entries are exact, the rest decide */
    for (int64_t l = 0; l < k; ++l)
        A[3 * k + l] = 0, B[l * n + 5] = 0;
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0 && !res.fallback &&
              C[3 * n + 7] == 0 && C[9 * n + 5] == 0,
          "zero row / column: fallback %d (%s)", res.fallback, res.reason);
    /* disjoint supports (A's row nonzero on the first half, B's columns on the second) */
    for (int64_t l = 0; l < k; ++l)
        A[3 * k + l] = l < k / 2 ? 1.0 : 0.0;
    for (int64_t l = 0; l < k / 2 + 1; ++l)
        for (int64_t j = 0; j < n; ++j)
            B[l * n + j] = 0;
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0 && res.fallback &&
              strstr(res.reason, "no lower bound"),
          "disjoint supports: fallback %d (%s)", res.fallback, res.reason);
    A[7] = NAN;
    CHECK(oz2_ref_dgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0 && res.fallback &&
              strstr(res.reason, "non-finite") && isnan(C[0]),
          "non-finite: fallback %d (%s)", res.fallback, res.reason);
    free(A), free(B), free(C), free(N);
}

int main(void)
{
    test_antisorted();
    test_paths();
    test_classes(256);
    test_classes(1024);
    if (g_fail)
        fprintf(stderr, "test_ozaki2_guard: %d failure(s)\n", g_fail);
    else
        printf("test_ozaki2_guard: all passed\n");
    return g_fail ? 1 : 0;
}
