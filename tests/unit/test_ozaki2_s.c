/* test_ozaki2_s — the FP32 Ozaki scheme II host reference
 * (kernels/ozaki2_s_ref.c), against an FP64 reference (FP32 products are
 * exact in FP64; a double-double sum), next to SGEMM's arithmetic (the
 * FP32 triple loop):
 *  - the FP32 slicing arithmetic of the GPU kernel (oz2s_scaled_f,
 *    oz2s_symmodf) equals the FP64 one (oz2s_scaled, oz2_symmod) on
 *    every modulus, at the edges of its range and on random values;
 *  - a table on stdout for 6..10 moduli, k = 256, 1024, 4096 (or the k
 *    given as arguments), on the
 *    classes of issue 34: uniform [-1, 1); rows of A and columns of B
 *    scaled by 2^[-30, 30]; "halves" (A at 2^-10 on the second half of k,
 *    B on the first); lognormal exp(4·randn);
 *  - from the automatic number of moduli on, the emulation's max error
 *    (componentwise and relative) is at most the FP32 loop's, or the range
 *    check fell back (then C is the FP64-accumulated fallback, bit for
 *    bit); uniform and rowcol30 must not fall back, halves and lognormal
 *    must where the emulation would be worse;
 *  - beta 1, chunked k, k = 0, non-finite input, bad arguments. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "ozaki2_s.h"
#include "ozaki2_s_ref.h"

#define OZ_RNG_SEED 0x243F6A8885A308D3ull
#include "oz_rng.h"

static double randn(void) /* Box-Muller */
{
    double u = ((double)(next_u64() >> 11) + 0.5) * 0x1p-53, v = (double)(next_u64() >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

enum { UNIFORM, ROWCOL30, HALVES, LOGNORMAL, NCLASS };
static const char *CLASS_NAME[] = {"uniform", "rowcol30", "halves", "lognormal"};

static float value(int cls, int scale_e, int small)
{
    if (cls == LOGNORMAL)
        return (float)exp(4.0 * randn());
    return (float)ldexp(uni(), cls == HALVES ? (small ? -10 : 0) : scale_e);
}

static void fill(int cls, int64_t m, int64_t n, int64_t k, float *A, float *B)
{
    for (int64_t i = 0; i < m; ++i) {
        int e = cls == ROWCOL30 ? irange(-30, 30) : 0;
        for (int64_t l = 0; l < k; ++l)
            A[i * k + l] = value(cls, e, l >= k / 2);
    }
    int cb[512];
    for (int64_t j = 0; j < n; ++j)
        cb[j] = cls == ROWCOL30 ? irange(-30, 30) : 0;
    for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j)
            B[l * n + j] = value(cls, cb[j], l < k / 2);
}

/* The exact products summed in double-double: R and Σ|a||b|. */
static void reference(int64_t m, int64_t n, int64_t k, const float *A, const float *B, double *R,
                      double *AB)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double hi = 0, lo = 0, ab = 0;
            for (int64_t l = 0; l < k; ++l) {
                double p = (double)A[i * k + l] * (double)B[l * n + j]; /* exact */
                double s = hi + p, bp = s - hi;
                lo += (hi - (s - bp)) + (p - bp);
                hi = s, ab += fabs(p);
            }
            R[i * n + j] = hi + lo, AB[i * n + j] = ab;
        }
}

typedef struct {
    double cw;  /* max |C - R| / Σ|a||b| */
    double rel; /* max |C - R| / |R| */
} errs;

static errs measure(int64_t mn, const float *C, const double *R, const double *AB)
{
    errs e = {0, 0};
    for (int64_t q = 0; q < mn; ++q) {
        double d = fabs((double)C[q] - R[q]);
        if (AB[q] > 0 && d / AB[q] > e.cw)
            e.cw = d / AB[q];
        if (R[q] != 0 && d / fabs(R[q]) > e.rel)
            e.rel = d / fabs(R[q]);
    }
    return e;
}

/* The table and its checks for each k of ks (nk of them). */
static void test_accuracy(const int64_t *ks, size_t nk)
{
    const int64_t m = 96, n = 80;
    int64_t kmax = 0;
    for (size_t ki = 0; ki < nk; ++ki)
        kmax = ks[ki] > kmax ? ks[ki] : kmax;
    float *A = malloc(sizeof(float) * m * kmax), *B = malloc(sizeof(float) * kmax * n);
    float *C = malloc(sizeof(float) * m * n), *N = malloc(sizeof(float) * m * n);
    float *W = malloc(sizeof(float) * m * n);
    double *R = malloc(sizeof(double) * m * n), *AB = malloc(sizeof(double) * m * n);
    printf("FP32 accuracy, m=%lld n=%lld, vs FP64; cw = max|C-R|/sum|a||b|, rel = max|C-R|/|R|; "
           "native = FP32 triple loop (SGEMM's arithmetic)\n",
           (long long)m, (long long)n);
    printf("%-9s %5s %-7s %3s %6s %9s %9s %9s %9s  %s\n", "class", "k", "moduli", "H", "fallbk",
           "cw", "cw/nat", "rel", "rel/nat", "reason");
    for (size_t ki = 0; ki < nk; ++ki) {
        const int64_t k = ks[ki];
        const int autom = oz2s_auto_moduli(k);
        for (int cls = 0; cls < NCLASS; ++cls) {
            fill(cls, m, n, k, A, B);
            reference(m, n, k, A, B, R, AB);
            oz2s_ref_native_f32(m, n, k, A, k, B, n, 0, N, n);
            oz2s_ref_native_wide(m, n, k, A, k, B, n, 0, W, n);
            errs en = measure(m * n, N, R, AB);
            printf("%-9s %5lld %-7s %3s %6s %9.2e %9s %9.2e %9s\n", CLASS_NAME[cls], (long long)k,
                   "native", "-", "-", en.cw, "1", en.rel, "1");
            for (int nm = OZ2S_MIN_MODULI; nm <= OZ2S_MAX_MODULI; ++nm) {
                oz2_params p;
                oz2_params_init(&p, nm);
                oz2_ref_opts o = {.moduli = nm};
                oz2_ref_result res;
                CHECK(oz2s_ref_sgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0, "sgemm");
                const int fb = res.fallback;
                if (fb) { /* the fallback is the FP64-accumulated loop, bit for bit */
                    CHECK(memcmp(C, W, sizeof(float) * m * n) == 0, "fallback != native");
                    o.force = 1; /* and what the emulation would have given */
                    CHECK(oz2s_ref_sgemm(&o, m, n, k, A, k, B, n, 0, C, n, &res) == 0, "forced");
                }
                errs e = measure(m * n, C, R, AB);
                const int better = e.cw <= en.cw && e.rel <= en.rel;
                printf("%-9s %5lld %-7d %3d %6s %9.2e %9.2f %9.2e %9.2f  %s%s\n", CLASS_NAME[cls],
                       (long long)k, nm, p.half_bits, fb ? "yes" : "no", e.cw, e.cw / en.cw, e.rel,
                       e.rel / en.rel, nm == autom ? "(auto) " : "", fb ? res.reason : "");
                if (nm < autom)
                    continue;
                if (cls == UNIFORM || cls == ROWCOL30)
                    CHECK(!fb, "%s k %lld, %d moduli: fell back (%s)", CLASS_NAME[cls],
                          (long long)k, nm, res.reason);
                CHECK(fb || better, "%s k %lld, %d moduli: cw %.3g (native %.3g), rel %.3g (native %.3g)",
                      CLASS_NAME[cls], (long long)k, nm, e.cw, en.cw, e.rel, en.rel);
                if (!better)
                    CHECK(fb, "%s k %lld, %d moduli: worse than native, no fallback",
                          CLASS_NAME[cls], (long long)k, nm);
            }
        }
    }
    free(A), free(B), free(C), free(N), free(W), free(R), free(AB);
}

static void test_paths(void)
{
    enum { M = 33, NN = 29, K = 130, LDC = 31 };
    static float A[M * K], B[K * NN], C[M * LDC], C2[M * LDC], R[M * LDC];
    for (int q = 0; q < M * K; ++q)
        A[q] = (float)uni();
    for (int q = 0; q < K * NN; ++q)
        B[q] = (float)uni();
    for (int q = 0; q < M * LDC; ++q)
        C[q] = C2[q] = R[q] = (float)uni();
    oz2_ref_opts o = {.moduli = 0}, oc = {.kchunk = 50};
    oz2_ref_result res;
    oz2s_ref_native_wide(M, NN, K, A, K, B, NN, 1, R, LDC);
    CHECK(oz2s_ref_sgemm(&o, M, NN, K, A, K, B, NN, 1, C, LDC, &res) == 0 && !res.fallback, "beta");
    CHECK(oz2s_ref_sgemm(&oc, M, NN, K, A, K, B, NN, 1, C2, LDC, &res) == 0 && !res.fallback,
          "chunked (%s)", res.reason);
    double worst = 0, worst2 = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < LDC; ++j) {
            double d = fabs(C[i * LDC + j] - R[i * LDC + j]), d2 = fabs(C2[i * LDC + j] - R[i * LDC + j]);
            if (j >= NN) /* outside the block: untouched */
                CHECK(d == 0 && d2 == 0, "padding (%d,%d) written", i, j);
            worst = d > worst ? d : worst, worst2 = d2 > worst2 ? d2 : worst2;
        }
    CHECK(worst < 1e-5 && worst2 < 1e-5, "beta 1: %.3g, chunked: %.3g", worst, worst2);
    CHECK(oz2s_ref_sgemm(&o, M, NN, 0, A, K, B, NN, 0, C, LDC, &res) == 0 && C[0] == 0 &&
               C[(M - 1) * LDC + NN - 1] == 0 && C[NN] != 0,
          "k = 0 zeroes the block only");
    A[5 * K + 7] = INFINITY;
    CHECK(oz2s_ref_sgemm(&o, M, NN, K, A, K, B, NN, 0, C, LDC, &res) == 0 && res.fallback &&
               strstr(res.reason, "non-finite") && isinf(C[5 * LDC]),
          "non-finite: fallback %d (%s)", res.fallback, res.reason);
    CHECK(oz2s_ref_sgemm(&o, M, NN, K, A, K - 1, B, NN, 0, C, LDC, &res) == -1, "lda < k refused");
    oz2_ref_opts few = {.moduli = OZ2S_MIN_MODULI - 1};
    CHECK(oz2s_ref_sgemm(&few, M, NN, K, A, K, B, NN, 0, C, LDC, &res) == -1, "5 moduli refused");
    /* the automatic choice: 8 moduli up to k = 16384, 9 up to 65536 */
    CHECK(oz2s_auto_moduli(1) == 8 && oz2s_auto_moduli(16384) == 8 &&
              oz2s_auto_moduli(16385) == 9 && oz2s_auto_moduli(65536) == 9,
          "auto moduli %d %d %d %d", oz2s_auto_moduli(1), oz2s_auto_moduli(16384),
          oz2s_auto_moduli(16385), oz2s_auto_moduli(65536));
}

/* oz2s_symmodf against oz2_symmod, oz2s_scaled_f against oz2s_scaled. */
static void test_fp32_slicing(void)
{
    oz2_params p;
    oz2_params_init(&p, OZ2S_MAX_MODULI);
    long long checked = 0, wrong = 0;
    for (int i = 0; i < p.n; ++i) {
        const double m = p.m[i];
        /* near multiples of m and of powers of two, up to 2^38 */
        for (int e = 0; e <= 38; ++e)
            for (int d = -300; d <= 300; ++d)
                for (int sg = -1; sg <= 1; sg += 2) {
                    double base = ldexp(1.0, e), q = floor(base / m);
                    double xs[2] = {base + d, q * m + d};
                    for (int t = 0; t < 2; ++t) {
                        float x = (float)(sg * xs[t]);
                        if ((double)x != sg * xs[t] || fabs((double)x) > 0x1p38)
                            continue; /* not an FP32 integer in range */
                        float got = oz2s_symmodf(x, p.mf[i], p.rinvf[i]);
                        double want = oz2_symmod((double)x, m, p.rinv[i]);
                        ++checked, wrong += (double)got != want;
                    }
                }
        /* random FP32 integers of every magnitude */
        for (int r = 0; r < 200000; ++r) {
            int e = irange(0, 38);
            float x = (float)rint(ldexp(uni(), e));
            float got = oz2s_symmodf(x, p.mf[i], p.rinvf[i]);
            ++checked, wrong += (double)got != oz2_symmod((double)x, m, p.rinv[i]);
        }
    }
    CHECK(wrong == 0, "oz2s_symmodf: %lld of %lld residues differ from oz2_symmod", wrong, checked);
    long long bad = 0;
    for (int r = 0; r < 1000000; ++r) {
        float x = (float)ldexp(uni(), irange(-149, 127));
        int s = irange(-100, 180);
        if (fabs(ldexp((double)x, s)) > 0x1p38)
            continue;
        int l1, l2;
        float got = oz2s_scaled_f(x, ldexp(1.0, s), &l1);
        bad += (double)got != oz2s_scaled((double)x, s, &l2) || l1 != l2;
    }
    CHECK(bad == 0, "oz2s_scaled_f: %lld values differ from oz2s_scaled", bad);
    printf("FP32 slicing: %lld residues and 1e6 scaled values equal the FP64 ones\n", checked);
}

/* Arguments: the values of k for the table (default 256, 1024, 4096; up
 * to 65536), e.g. test-ozaki2-s 16384 65536 for the deeper products (slow:
 * minutes). */
int main(int argc, char **argv)
{
    int64_t ks[16] = {256, 1024, 4096};
    size_t nk = 3;
    if (argc > 1) {
        nk = 0;
        for (int a = 1; a < argc && nk < 16; ++a) {
            long long v = atoll(argv[a]);
            if (v < 1 || v > 65536) {
                fprintf(stderr, "test_ozaki2_s: k must be 1..65536, not %s\n", argv[a]);
                return 2;
            }
            ks[nk++] = v;
        }
    }
    test_fp32_slicing();
    test_paths();
    test_accuracy(ks, nk);
    if (g_fail)
        fprintf(stderr, "test_ozaki2_s: %d failure(s)\n", g_fail);
    else
        printf("test_ozaki2_s: all passed\n");
    return g_fail ? 1 : 0;
}
