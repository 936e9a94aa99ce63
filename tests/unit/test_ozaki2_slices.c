/* test_ozaki2_slices — sliced operands on the host (kernels/ozaki2_ref.c,
 * oz2_ref_slices_*), held to oz2_ref_dgemm with a fixed count of moduli:
 *  - bit for bit (memcmp of the doubles, padding of C included) at shapes
 *    from 1×1×1 to 64×40×300 (odd sizes, k not a multiple of 32, an
 *    all-zero row and column), 14, 16 and 18 moduli, beta 0 and 1, strided
 *    A and B whose padding holds NaN (never read), the blobs moved to a
 *    fresh buffer at an odd address before the multiply (position
 *    independence), and every byte of a blob written (two makes into
 *    differently filled buffers give equal bytes);
 *  - out of range (a row of A or a column of B with a non-finite value, or
 *    half its values 2^-60 below the rest): oz2_ref_dgemm falls back, the
 *    slices report missed = 1 with oz2_ref_dgemm's reason word for word
 *    (the lowest such row or column, A's before B's), C = 0 for beta 0
 *    and C unchanged for beta 1;
 *  - bad arguments: moduli 7 and 21, k 0 and past OZ2_KCHUNK, sizes that
 *    overflow, blobs of another count, k, side or length, a broken magic:
 *    0 bytes or -1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "ozaki2.h"
#include "ozaki2_ref.h"

#define OZ_RNG_SEED 0x6A09E667F3BCC909ull
#include "oz_rng.h"

/* A row-major r×c matrix with leading dimension ld ≥ c, its padding NaN.
 * Values: magnitudes uniform in [1/4, 1) of either sign, times 2^[-2, 2]
 * inside a vector and a scale 2^[-30, 30] of each row (rows 1) or column
 * (rows 0), one in eight zero.  Every nonzero is then at least 2^-6 of its
 * vector's largest, above the range check's limit (lossy below 2^-14 of
 * the norm at 14 moduli, ozaki2.h; the norm ≤ sqrt(k)·max, < 2^5·max for
 * k ≤ 1000): in range from 14 moduli on. */
static double *random_matrix(int64_t r, int64_t c, int64_t ld, int rows)
{
    double *X = malloc(sizeof(double) * (size_t)(r * ld));
    int64_t nv = rows ? r : c;
    int *e = malloc(sizeof(int) * (size_t)nv);
    for (int64_t v = 0; v < nv; ++v)
        e[v] = irange(-30, 30);
    for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < ld; ++j) {
            double x = NAN;
            if (j < c)
                x = next_u64() % 8 == 0
                        ? 0.0
                        : ldexp((next_u64() & 1 ? 1 : -1) * (0.625 + 0.375 * uni()),
                                irange(-2, 2) + e[rows ? i : j]);
            X[i * ld + j] = x;
        }
    free(e);
    return X;
}

/* Moves a blob to a fresh allocation at an odd address; the old buffer is
 * overwritten and freed.  *hold gets what to free afterwards. */
static void *relocate(void *blob, size_t bytes, void **hold)
{
    unsigned char *fresh = malloc(bytes + 1);
    memcpy(fresh + 1, blob, bytes);
    memset(blob, 0x5A, bytes);
    free(blob);
    *hold = fresh;
    return fresh + 1;
}

/* The blob of side `side` of X (vectors vectors of length k, leading
 * dimension ld), made twice into buffers of different garbage (the bytes
 * must agree), then relocated; NULL when making fails. */
static void *make_blob(int nm, int side, int64_t vectors, int64_t k, const double *X, int64_t ld,
                       void **hold)
{
    size_t bytes = oz2_ref_slices_bytes(nm, vectors, k);
    unsigned char *b1 = malloc(bytes), *b2 = malloc(bytes);
    memset(b1, 0xA5, bytes), memset(b2, 0x3C, bytes);
    int r1 = oz2_ref_slices_make(nm, side, vectors, k, X, ld, b1);
    int r2 = oz2_ref_slices_make(nm, side, vectors, k, X, ld, b2);
    CHECK(bytes > 0 && r1 == 0 && r2 == 0, "make side %d: bytes %zu, rc %d %d", side, bytes, r1, r2);
    CHECK(memcmp(b1, b2, bytes) == 0, "side %d: a byte of the blob left unwritten", side);
    free(b2);
    if (r1) {
        free(b1);
        *hold = NULL;
        return NULL;
    }
    return relocate(b1, bytes, hold);
}

/* ---- in range: bit for bit ---------------------------------------------------------- */

static void case_bitwise(int64_t m, int64_t n, int64_t k, int nm, int zero_vectors)
{
    const int64_t lda = k + 3, ldb = n + 5, ldc = n + 2;
    double *A = random_matrix(m, k, lda, 1), *B = random_matrix(k, n, ldb, 0);
    if (zero_vectors) { /* row 4 of A and column 2 of B all zero: scale 0 */
        for (int64_t l = 0; l < k; ++l)
            A[4 * lda + l] = 0, B[l * ldb + 2] = 0;
    }
    const size_t cb = sizeof(double) * (size_t)(m * ldc);
    double *R = malloc(cb), *C = malloc(cb), *C1 = malloc(cb);
    void *ha, *hb;
    void *a = make_blob(nm, 0, m, k, A, lda, &ha), *b = make_blob(nm, 1, n, k, B, ldb, &hb);
    int fails = g_fail;
    oz2_ref_opts o = {nm, 0, 0, 0, 0};
    oz2_ref_result res;
    for (int beta = 0; beta <= 1 && a && b; ++beta) {
        for (int64_t q = 0; q < m * ldc; ++q) /* beta 0: C must not be read */
            C1[q] = beta ? uni() : NAN;
        memcpy(R, C1, cb), memcpy(C, C1, cb);
        int rr = oz2_ref_dgemm(&o, m, n, k, A, lda, B, ldb, beta, R, ldc, &res);
        CHECK(rr == 0 && !res.fallback, "dgemm rc %d, fallback %d (%s)", rr, res.fallback,
              res.reason);
        int missed = -1;
        char why[192] = "x";
        int rs = oz2_ref_slices_gemm(nm, m, n, k, a, b, beta, C, ldc, &missed, why, sizeof why);
        CHECK(rs == 0 && missed == 0 && why[0] == '\0', "slices rc %d, missed %d (%s)", rs, missed,
              why);
        CHECK(memcmp(C, R, cb) == 0, "%lldx%lldx%lld, %d moduli, beta %d: C differs from oz2_ref_dgemm",
              (long long)m, (long long)n, (long long)k, nm, beta);
    }
    printf("bitwise m=%-3lld n=%-3lld k=%-4lld moduli=%d lda=%lld ldb=%lld ldc=%lld%s: %s\n",
           (long long)m, (long long)n, (long long)k, nm, (long long)lda, (long long)ldb,
           (long long)ldc, zero_vectors ? " (zero row, column)" : "",
           g_fail == fails && a && b ? "ok" : "FAILED");
    free(ha), free(hb), free(A), free(B), free(R), free(C), free(C1);
}

/* ---- out of range: missed, the reason, C = beta·C ----------------------------------- */

enum { NONE, NONFINITE, LOSSY };

/* Spoils row (of A) or column (of B) v: a NaN/Inf, or half its values
 * times 2^-60. */
static void spoil(double *X, int64_t ld, int side, int64_t v, int64_t k, int how)
{
    for (int64_t l = 0; l < k; ++l) {
        double *x = side ? &X[l * ld + v] : &X[v * ld + l];
        if (how == NONFINITE && l == k / 2)
            *x = side ? INFINITY : NAN;
        else if (how == LOSSY && l % 2 == 1)
            *x = ldexp(*x == 0 ? 1.0 : *x, -60);
    }
}

static void case_out_of_range(const char *name, int nm, int64_t ar, int ahow, int64_t ar2,
                              int ahow2, int64_t bc, int bhow, const char *expect)
{
    const int64_t m = 9, n = 6, k = 50, lda = k + 1, ldb = n + 3, ldc = n + 1;
    double *A = random_matrix(m, k, lda, 1), *B = random_matrix(k, n, ldb, 0);
    if (ahow)
        spoil(A, lda, 0, ar, k, ahow);
    if (ahow2)
        spoil(A, lda, 0, ar2, k, ahow2);
    if (bhow)
        spoil(B, ldb, 1, bc, k, bhow);
    const size_t cb = sizeof(double) * (size_t)(m * ldc);
    double *C = malloc(cb), *C0 = malloc(cb);
    void *ha, *hb;
    void *a = make_blob(nm, 0, m, k, A, lda, &ha), *b = make_blob(nm, 1, n, k, B, ldb, &hb);
    int fails = g_fail;
    oz2_ref_opts o = {nm, 0, 0, 0, 0};
    oz2_ref_result res;
    double *R = malloc(cb);
    int rr = oz2_ref_dgemm(&o, m, n, k, A, lda, B, ldb, 0, R, ldc, &res);
    CHECK(rr == 0 && res.fallback && strstr(res.reason, expect), "%s: dgemm rc %d fallback %d (%s)",
          name, rr, res.fallback, res.reason);
    char why[192] = "";
    for (int beta = 0; beta <= 1 && a && b; ++beta) {
        for (int64_t q = 0; q < m * ldc; ++q)
            C0[q] = beta ? uni() : NAN;
        memcpy(C, C0, cb);
        int missed = 0;
        int rs = oz2_ref_slices_gemm(nm, m, n, k, a, b, beta, C, ldc, &missed, why, sizeof why);
        CHECK(rs == 0 && missed == 1, "%s, beta %d: rc %d missed %d", name, beta, rs, missed);
        CHECK(strcmp(why, res.reason) == 0, "%s: reason \"%s\", oz2_ref_dgemm's \"%s\"", name, why,
              res.reason);
        int ok = 1;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
                double want = j < n && !beta ? 0.0 : C0[i * ldc + j];
                ok &= memcmp(&C[i * ldc + j], &want, sizeof want) == 0;
            }
        CHECK(ok, "%s, beta %d: C is not beta*C (padding untouched)", name, beta);
    }
    printf("out of range, %s, %d moduli: %s (\"%s\")\n", name, nm,
           g_fail == fails && a && b ? "ok" : "FAILED", why);
    free(ha), free(hb), free(A), free(B), free(C), free(C0), free(R);
}

/* ---- bad arguments ------------------------------------------------------------------- */

static void case_bad_arguments(void)
{
    int fails = g_fail;
    const int64_t m = 5, n = 4, k = 7;
    double *A = random_matrix(m, k, k, 1), *B = random_matrix(k, n, n, 0);
    double C[5 * 4];
    int missed;
    char why[192];
    CHECK(oz2_ref_slices_bytes(7, m, k) == 0 && oz2_ref_slices_bytes(21, m, k) == 0, "moduli 7/21");
    CHECK(oz2_ref_slices_bytes(14, m, 0) == 0 && oz2_ref_slices_bytes(14, m, OZ2_KCHUNK + 1) == 0,
          "k 0 / past OZ2_KCHUNK");
    CHECK(oz2_ref_slices_bytes(14, -1, k) == 0, "vectors < 0");
    CHECK(oz2_ref_slices_bytes(20, INT64_MAX, OZ2_KCHUNK) == 0 &&
              oz2_ref_slices_bytes(8, INT64_MAX / 2, 1) == 0 &&
              oz2_ref_slices_bytes(20, INT64_MAX / 20 / OZ2_KCHUNK + 1, OZ2_KCHUNK) == 0,
          "overflowing sizes");
    CHECK(oz2_ref_slices_bytes(14, 0, k) > 0 && oz2_ref_slices_bytes(14, 1, 1) > 0 &&
              oz2_ref_slices_bytes(20, 1, OZ2_KCHUNK) > 0,
          "sizes in range");
    for (int64_t v = 0; v < 40; ++v) /* nondecreasing in vectors and k */
        CHECK(oz2_ref_slices_bytes(14, v + 1, k) >= oz2_ref_slices_bytes(14, v, k) &&
                  oz2_ref_slices_bytes(14, v, k + 1) >= oz2_ref_slices_bytes(14, v, k),
              "bytes not monotone at %lld", (long long)v);

    size_t bytes = oz2_ref_slices_bytes(14, m, k);
    unsigned char *junk = malloc(bytes + 64);
    CHECK(oz2_ref_slices_make(7, 0, m, k, A, k, junk) == -1 &&
              oz2_ref_slices_make(21, 0, m, k, A, k, junk) == -1,
          "make: moduli 7/21");
    CHECK(oz2_ref_slices_make(14, 0, m, 0, A, k, junk) == -1, "make: k 0");
    CHECK(oz2_ref_slices_make(14, 2, m, k, A, k, junk) == -1, "make: side 2");
    CHECK(oz2_ref_slices_make(14, 0, m, k, A, k - 1, junk) == -1, "make: ld < k");
    CHECK(oz2_ref_slices_make(14, 1, n, k, B, n - 1, junk) == -1, "make: ld < vectors");
    CHECK(oz2_ref_slices_make(14, 0, m, k, NULL, k, junk) == -1 &&
              oz2_ref_slices_make(14, 0, m, k, A, k, NULL) == -1,
          "make: NULL");
    free(junk);

    void *h[8];
    void *a14 = make_blob(14, 0, m, k, A, k, &h[0]), *b14 = make_blob(14, 1, n, k, B, n, &h[1]);
    void *b16 = make_blob(16, 1, n, k, B, n, &h[2]);
    void *a14k = make_blob(14, 0, m, k - 1, A, k, &h[3]); /* k - 1 of each row */
    void *b14k = make_blob(14, 1, n, k - 1, B, n, &h[4]);
    void *a0 = make_blob(14, 0, 0, k, A, k, &h[5]);
    if (a14 && b14 && b16 && a14k && b14k && a0) {
        CHECK(oz2_ref_slices_gemm(14, m, n, k, a14, b14, 0, C, n, &missed, why, sizeof why) == 0 &&
                  !missed,
              "the good pair");
        CHECK(oz2_ref_slices_gemm(7, m, n, k, a14, b14, 0, C, n, &missed, why, sizeof why) == -1 &&
                  oz2_ref_slices_gemm(21, m, n, k, a14, b14, 0, C, n, &missed, why, sizeof why) ==
                      -1,
              "gemm: moduli 7/21");
        CHECK(oz2_ref_slices_gemm(14, m, n, 0, a14, b14, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: k 0");
        CHECK(oz2_ref_slices_gemm(16, m, n, k, a14, b16, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: A's blob of 14 moduli at 16");
        CHECK(oz2_ref_slices_gemm(14, m, n, k, a14, b16, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: B's blob of 16 moduli at 14");
        CHECK(oz2_ref_slices_gemm(14, m, m, k, a14, a14, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: A's blob as B");
        CHECK(oz2_ref_slices_gemm(14, n, n, k, b14, b14, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: B's blob as A");
        CHECK(oz2_ref_slices_gemm(14, m, n, k, a14k, b14, 0, C, n, &missed, why, sizeof why) == -1 &&
                  oz2_ref_slices_gemm(14, m, n, k, a14, b14k, 0, C, n, &missed, why, sizeof why) ==
                      -1,
              "gemm: a blob of another k");
        CHECK(oz2_ref_slices_gemm(14, m - 1, n, k, a14, b14, 0, C, n, &missed, why, sizeof why) ==
                      -1 &&
                  oz2_ref_slices_gemm(14, m, n + 1, k, a14, b14, 0, C, n + 1, &missed, why,
                                      sizeof why) == -1,
              "gemm: m or n not the blobs'");
        CHECK(oz2_ref_slices_gemm(14, m, n, k, a14, b14, 2, C, n, &missed, why, sizeof why) == -1 &&
                  oz2_ref_slices_gemm(14, m, n, k, a14, b14, 0, C, n - 1, &missed, why,
                                      sizeof why) == -1 &&
                  oz2_ref_slices_gemm(14, m, n, k, a14, b14, 0, C, n, NULL, why, sizeof why) ==
                      -1 &&
                  oz2_ref_slices_gemm(14, m, n, k, NULL, b14, 0, C, n, &missed, why, sizeof why) ==
                      -1,
              "gemm: beta 2, ldc < n, missed NULL, blob NULL");
        unsigned char first = *(unsigned char *)a14;
        *(unsigned char *)a14 ^= 1;
        CHECK(oz2_ref_slices_gemm(14, m, n, k, a14, b14, 0, C, n, &missed, why, sizeof why) == -1,
              "gemm: a broken magic");
        *(unsigned char *)a14 = first;
        /* m = 0: nothing to do, C untouched */
        C[0] = 42;
        missed = -1;
        CHECK(oz2_ref_slices_gemm(14, 0, n, k, a0, b14, 0, C, n, &missed, why, sizeof why) == 0 &&
                  missed == 0 && C[0] == 42,
              "gemm: m = 0");
    }
    for (int i = 0; i < 6; ++i)
        free(h[i]);
    printf("bad arguments: %s\n", g_fail == fails ? "ok" : "FAILED");
    free(A), free(B);
}

int main(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 40, 300},
                                        {5, 9, 32}, {3, 2, 129}};
    static const int moduli[] = {14, 16, 18};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (size_t q = 0; q < sizeof moduli / sizeof moduli[0]; ++q)
            case_bitwise(shapes[s][0], shapes[s][1], shapes[s][2], moduli[q], 0);
    for (size_t q = 0; q < sizeof moduli / sizeof moduli[0]; ++q)
        case_bitwise(33, 17, 65, moduli[q], 1);
    case_bitwise(2, 3, 1000, 20, 0);
    case_bitwise(4, 3, 200, 15, 0);

    case_out_of_range("row 3 of A non-finite", 14, 3, NONFINITE, 0, NONE, 0, NONE,
                      "row 3 of A holds a non-finite value");
    case_out_of_range("row 2 of A lossy, row 5 non-finite", 16, 2, LOSSY, 5, NONFINITE, 0, NONE,
                      "row 2 of A: ");
    case_out_of_range("row 8 of A lossy", 18, 8, LOSSY, 0, NONE, 0, NONE, "row 8 of A: ");
    case_out_of_range("column 4 of B non-finite", 14, 0, NONE, 0, NONE, 4, NONFINITE,
                      "column 4 of B holds a non-finite value");
    case_out_of_range("column 1 of B lossy", 14, 0, NONE, 0, NONE, 1, LOSSY, "column 1 of B: ");
    case_out_of_range("row 6 of A and column 0 of B", 16, 6, LOSSY, 0, NONE, 0, NONFINITE,
                      "row 6 of A: ");
    /* 8 moduli: H = 30 < OZ2_KEEP_BITS, every nonzero is lossy */
    case_out_of_range("every row at 8 moduli", 8, 0, NONE, 0, NONE, 0, NONE, "row 0 of A: ");

    case_bad_arguments();

    if (g_fail)
        fprintf(stderr, "test_ozaki2_slices: %d failure(s)\n", g_fail);
    else
        printf("test_ozaki2_slices: all passed\n");
    return g_fail ? 1 : 0;
}
