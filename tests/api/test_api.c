/* test_api.c — the public API's rules (dgemm_dist.h): BLAS's alpha and
 * beta rules (beta = 0 with NaN in C), transposes (and the device entry,
 * host memory on the CPU backend), a refused transa, refused sizes
 * and leading dimensions, the same code and message on every rank when one
 * rank passes a bad ld, dd_block_range against grid_block, bad options.
 * Run at any rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd.h" /* dd_err for same_everywhere */
#include "dd_check.h"
#include "dgemm_dist.h"
#include "grid.h"

/* exact small values, so every product is exact */
static double a_at(int64_t i, int64_t k)
{
    return (double)((i * 3 + k * 5) % 7 - 3) / 4;
}
static double b_at(int64_t k, int64_t j)
{
    return (double)((k * 2 + j * 7) % 9 - 4) / 8;
}
static double c_at(int64_t i, int64_t j)
{
    return (double)((i + j) % 5 - 2);
}

enum { M = 11, N = 9, K = 7 };

typedef struct {
    int P, Q, p, q;
    int64_t m0, Mp, n0, Nq, kq0, Kq, kp0, Kp, lda, ldb, ldc;
    double *A, *B, *C;
    float *As, *Bs, *Cs;
} blocks;

static void fill(dd_context *ctx, blocks *b)
{
    dd_context_grid(ctx, &b->P, &b->Q, &b->p, &b->q);
    dd_block_range(M, b->P, b->p, &b->m0, &b->Mp);
    dd_block_range(N, b->Q, b->q, &b->n0, &b->Nq);
    dd_block_range(K, b->Q, b->q, &b->kq0, &b->Kq);
    dd_block_range(K, b->P, b->p, &b->kp0, &b->Kp);
    b->lda = b->Kq + 2;
    b->ldb = b->Nq + 1;
    b->ldc = b->Nq + 3;
    b->A = calloc((size_t)(b->Mp * b->lda + 1), sizeof(double));
    b->B = calloc((size_t)(b->Kp * b->ldb + 1), sizeof(double));
    b->C = calloc((size_t)(b->Mp * b->ldc + 1), sizeof(double));
    b->As = calloc((size_t)(b->Mp * b->lda + 1), sizeof(float));
    b->Bs = calloc((size_t)(b->Kp * b->ldb + 1), sizeof(float));
    b->Cs = calloc((size_t)(b->Mp * b->ldc + 1), sizeof(float));
    for (int64_t i = 0; i < b->Mp; i++)
        for (int64_t k = 0; k < b->Kq; k++)
            b->As[i * b->lda + k] = (float)(b->A[i * b->lda + k] = a_at(b->m0 + i, b->kq0 + k));
    for (int64_t k = 0; k < b->Kp; k++)
        for (int64_t j = 0; j < b->Nq; j++)
            b->Bs[k * b->ldb + j] = (float)(b->B[k * b->ldb + j] = b_at(b->kp0 + k, b->n0 + j));
}

/* C's block set to c_at (or NaN everywhere, padding included) */
static void set_c(blocks *b, int nan)
{
    for (int64_t i = 0; i < b->Mp * b->ldc; i++)
        b->C[i] = NAN, b->Cs[i] = NAN;
    for (int64_t i = 0; i < b->Mp; i++)
        for (int64_t j = 0; j < b->Nq; j++)
            if (!nan)
                b->Cs[i * b->ldc + j] = (float)(b->C[i * b->ldc + j] = c_at(b->m0 + i, b->n0 + j));
}

/* max |C - (alpha·A·B + beta·C_in)| over my block; padding must be untouched (NaN) */
static double c_error(const blocks *b, double alpha, double beta, int single)
{
    double worst = 0;
    for (int64_t i = 0; i < b->Mp; i++) {
        for (int64_t j = 0; j < b->ldc; j++) {
            double got = single ? b->Cs[i * b->ldc + j] : b->C[i * b->ldc + j];
            if (j >= b->Nq) {
                if (!isnan(got))
                    return INFINITY; /* a leading dimension not honoured */
                continue;
            }
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += a_at(b->m0 + i, k) * b_at(k, b->n0 + j);
            double want =
                (alpha != 0 ? alpha * s : 0) + (beta != 0 ? beta * c_at(b->m0 + i, b->n0 + j) : 0);
            double e = isnan(got) ? INFINITY : fabs(got - want);
            worst = e > worst ? e : worst;
        }
    }
    return worst;
}

/* the status and message of a call, the same on every rank */
static int agreed(dd_status st, const char *msg)
{
    dd_err e;
    snprintf(e.msg, sizeof e.msg, "%s", msg);
    return same_everywhere((int)st, &e);
}

static void test_rules(dd_context *ctx, blocks *b)
{
    struct {
        double alpha, beta;
        int nan_c, null_ab;
    } cases[] = {{1, 0, 1, 0}, {-0.5, 2.5, 0, 0}, {1.5, 0, 1, 0},
                 {0, 2, 0, 1}, {0, 0, 1, 1},      {2, 1, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double al = cases[c].alpha, be = cases[c].beta;
        set_c(b, 0);
        if (cases[c].nan_c)
            set_c(b, 1);
        dd_gemm_info info = {.check = 1};
        dd_status st = dd_gemm(ctx, 'N', 'n', M, N, K, al, cases[c].null_ab ? NULL : b->A, b->lda,
                               cases[c].null_ab ? NULL : b->B, b->ldb, be, b->C, b->ldc, &info);
        CHECK(st == DD_SUCCESS, "case %zu: %s: %s", c, dd_status_string(st),
              dd_context_last_error(ctx));
        CHECK(c_error(b, al, be, 0) < 1e-12, "case %zu (alpha %g beta %g): |C - ref| = %g", c, al,
              be, c_error(b, al, be, 0));
        CHECK(info.check_passed && info.check_residual < 16, "case %zu: residual %g", c,
              info.check_residual);
        CHECK(al == 0 ? info.tflops == 0 : info.multiply_seconds > 0, "case %zu: times", c);
        float fal = (float)al, fbe = (float)be;
        st = dd_sgemm(ctx, 'N', 'N', M, N, K, fal, b->As, b->lda, b->Bs, b->ldb, fbe, b->Cs, b->ldc,
                      &info);
        CHECK(st == DD_SUCCESS && c_error(b, al, be, 1) < 1e-5 && info.check_passed,
              "sgemm case %zu: %s: %s, |C - ref| = %g", c, dd_status_string(st),
              dd_context_last_error(ctx), c_error(b, al, be, 1));
    }
    /* info may be NULL; M = 0 is a quick return */
    set_c(b, 0);
    CHECK(dd_gemm(ctx, 'N', 'N', M, N, K, 1, b->A, b->lda, b->B, b->ldb, 0, b->C, b->ldc, NULL) ==
              DD_SUCCESS,
          "info NULL");
    CHECK(dd_gemm(ctx, 'N', 'N', 0, N, K, 1, NULL, b->lda, b->B, b->ldb, 0, NULL, b->ldc, NULL) ==
              DD_SUCCESS,
          "M = 0: %s", dd_context_last_error(ctx));
}

static void test_refusals(dd_context *ctx, blocks *b)
{
    set_c(b, 0);
    dd_gemm_info info = {0};
    dd_status st =
        dd_gemm(ctx, 'x', 'N', M, N, K, 1, b->A, b->lda, b->B, b->ldb, 0, b->C, b->ldc, &info);
    CHECK(st == DD_ERROR_USAGE && strstr(dd_context_last_error(ctx), "transa") &&
              info.bad_argument == 1,
          "transa x: %d %s", st, dd_context_last_error(ctx));
    CHECK(agreed(st, dd_context_last_error(ctx)), "transa x not agreed");
    CHECK(c_error(b, 0, 1, 0) == 0, "C changed by a refused call");
    st = dd_gemm(ctx, 'N', 'x', M, N, K, 1, b->A, b->lda, b->B, b->ldb, 0, b->C, b->ldc, &info);
    CHECK(st == DD_ERROR_USAGE && info.bad_argument == 2, "transb x: %d", st);
    st = dd_gemm(ctx, 'N', 'N', M, -1, K, 1, b->A, b->lda, b->B, b->ldb, 0, b->C, b->ldc, NULL);
    CHECK(st == DD_ERROR_USAGE && agreed(st, dd_context_last_error(ctx)), "N = -1: %d", st);
    /* lda below the block's width on every rank with a non-empty block */
    st = dd_gemm(ctx, 'N', 'N', M, N, K, 1, b->A, b->Kq - 1, b->B, b->ldb, 0, b->C, b->ldc, NULL);
    CHECK(st == DD_ERROR_USAGE && strstr(dd_context_last_error(ctx), "lda"), "lda: %d %s", st,
          dd_context_last_error(ctx));
    /* one rank (the last) passes a bad ldc: every rank returns its code and message */
    int64_t ldc = g_rank == g_size - 1 ? b->Nq - 1 : b->ldc;
    st = dd_gemm(ctx, 'N', 'N', M, N, K, 1, b->A, b->lda, b->B, b->ldb, 0, b->C, ldc, &info);
    CHECK(info.bad_argument == 1911, "bad ldc's number: %d", info.bad_argument);
    char want[64];
    snprintf(want, sizeof want, "rank %d: ldc", g_size - 1);
    CHECK(st == DD_ERROR_USAGE && strstr(dd_context_last_error(ctx), want), "one bad ldc: %d %s",
          st, dd_context_last_error(ctx));
    CHECK(agreed(st, dd_context_last_error(ctx)), "one bad ldc not agreed");
    /* M differing between ranks; a NULL block that is read */
    st = dd_gemm(ctx, 'N', 'N', g_size > 1 && g_rank == 1 ? M + 1 : M, N, K, 1, b->A, b->lda, b->B,
                 b->ldb, 0, b->C, b->ldc, NULL);
    CHECK(g_size == 1 ? st == DD_SUCCESS : st == DD_ERROR_USAGE, "M differs: %d", st);
    st = dd_gemm(ctx, 'N', 'N', M, N, K, 1, NULL, b->lda, b->B, b->ldb, 0, b->C, b->ldc, NULL);
    CHECK(st == DD_ERROR_USAGE && agreed(st, dd_context_last_error(ctx)), "A NULL: %d", st);
    /* and the context still works */
    set_c(b, 0);
    st = dd_gemm(ctx, 'N', 'N', M, N, K, 1, b->A, b->lda, b->B, b->ldb, 1, b->C, b->ldc, NULL);
    CHECK(st == DD_SUCCESS && c_error(b, 1, 1, 0) < 1e-12, "after refusals: %d", st);
}

/* Stored A^T (K×M) and B^T (N×K) in the 2-D block layout, padded:
 * transa/transb 'T' and 'C' give the same C as 'N' on op(A), op(B). */
static void test_transposes(dd_context *ctx, blocks *b)
{
    int64_t r0, rA, c0, cA, s0, rB, t0, cB; /* A^T: rows of K, cols of M; B^T: rows of N, cols of K */
    dd_block_range(K, b->P, b->p, &r0, &rA);
    dd_block_range(M, b->Q, b->q, &c0, &cA);
    dd_block_range(N, b->P, b->p, &s0, &rB);
    dd_block_range(K, b->Q, b->q, &t0, &cB);
    int64_t lat = cA + 1, lbt = cB + 2;
    double *At = calloc((size_t)(rA * lat + 1), sizeof(double));
    double *Bt = calloc((size_t)(rB * lbt + 1), sizeof(double));
    float *Ats = calloc((size_t)(rA * lat + 1), sizeof(float));
    float *Bts = calloc((size_t)(rB * lbt + 1), sizeof(float));
    for (int64_t k = 0; k < rA; k++)
        for (int64_t i = 0; i < cA; i++)
            Ats[k * lat + i] = (float)(At[k * lat + i] = a_at(c0 + i, r0 + k));
    for (int64_t j = 0; j < rB; j++)
        for (int64_t k = 0; k < cB; k++)
            Bts[j * lbt + k] = (float)(Bt[j * lbt + k] = b_at(t0 + k, s0 + j));
    const char *pairs[] = {"TN", "NT", "TT", "CC", "tn"};
    for (size_t c = 0; c < sizeof pairs / sizeof pairs[0]; c++) {
        char ta = pairs[c][0], tb = pairs[c][1];
        int tra = ta != 'N' && ta != 'n', trb = tb != 'N' && tb != 'n';
        set_c(b, 0);
        dd_gemm_info info = {.check = 1};
        dd_status st = dd_gemm(ctx, ta, tb, M, N, K, 1.5, tra ? At : b->A, tra ? lat : b->lda,
                               trb ? Bt : b->B, trb ? lbt : b->ldb, -1, b->C, b->ldc, &info);
        CHECK(st == DD_SUCCESS && c_error(b, 1.5, -1, 0) < 1e-12 && info.check_passed,
              "%c%c: %s: %s, |C - ref| = %g", ta, tb, dd_status_string(st),
              dd_context_last_error(ctx), c_error(b, 1.5, -1, 0));
        st = dd_sgemm(ctx, ta, tb, M, N, K, 1.5f, tra ? Ats : b->As, tra ? lat : b->lda,
                      trb ? Bts : b->Bs, trb ? lbt : b->ldb, -1, b->Cs, b->ldc, &info);
        CHECK(st == DD_SUCCESS && c_error(b, 1.5, -1, 1) < 1e-5, "sgemm %c%c: %s: %s", ta, tb,
              dd_status_string(st), dd_context_last_error(ctx));
        /* the device entry: host memory on the CPU backend */
        set_c(b, 0);
        st = dd_gemm_device(ctx, ta, tb, M, N, K, 1.5, tra ? At : b->A, tra ? lat : b->lda,
                            trb ? Bt : b->B, trb ? lbt : b->ldb, -1, b->C, b->ldc, NULL);
        CHECK(st == DD_SUCCESS && c_error(b, 1.5, -1, 0) < 1e-12, "device %c%c: %s: %s", ta, tb,
              dd_status_string(st), dd_context_last_error(ctx));
    }
    /* lda for a transposed A is the width of the stored block (M's part) */
    dd_gemm_info info = {0};
    dd_status st = dd_gemm(ctx, 'T', 'N', M, N, K, 1, At, cA - 1, b->B, b->ldb, 0, b->C, b->ldc,
                           &info);
    CHECK(cA < 2 || (st == DD_ERROR_USAGE && info.bad_argument == 1011), "T with lda < width: %d",
          st);
    free(At), free(Bt), free(Ats), free(Bts);
}

static void test_block_range(void)
{
    for (int64_t n = 0; n < 40; n++)
        for (int parts = 1; parts < 8; parts++)
            for (int i = 0; i < parts; i++) {
                int64_t s = -1, l = -1;
                dd_range r = grid_block(n, parts, i);
                CHECK(dd_block_range(n, parts, i, &s, &l) == DD_SUCCESS && s == r.start &&
                          l == r.len,
                      "n %lld parts %d i %d", (long long)n, parts, i);
            }
    int64_t s, l;
    CHECK(dd_block_range(-1, 2, 0, &s, &l) == DD_ERROR_USAGE, "n < 0");
    CHECK(dd_block_range(5, 0, 0, &s, &l) == DD_ERROR_USAGE, "parts 0");
    CHECK(dd_block_range(5, 2, 2, &s, &l) == DD_ERROR_USAGE, "index = parts");
    CHECK(dd_block_range(5, 2, -1, &s, &l) == DD_ERROR_USAGE, "index < 0");
}

static void test_options(void)
{
    dd_context_options o;
    dd_context_options_init(&o);
    o.P = 3;
    o.Q = g_size + 1; /* never P·Q = size */
    dd_context *ctx = (dd_context *)1;
    char msg[256] = "";
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_ERROR_USAGE && !ctx && strstr(msg, "grid"), "bad grid: %d %s", st, msg);
    CHECK(agreed(st, msg), "bad grid not agreed");
    dd_context_options_init(&o);
    o.backend = "abacus";
    st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_ERROR_USAGE && !ctx && strstr(msg, "abacus") && agreed(st, msg),
          "backend abacus: %d %s", st, msg);
    dd_context_destroy(ctx);
    dd_context_options_init(&o);
    o.lookahead = 99;
    st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_ERROR_USAGE && !ctx, "lookahead 99: %d %s", st, msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int major, minor, patch;
    dd_version(&major, &minor, &patch);
    CHECK(major == DGEMM_DIST_VERSION_MAJOR && minor == DGEMM_DIST_VERSION_MINOR &&
              patch == DGEMM_DIST_VERSION_PATCH,
          "version");
    test_block_range();
    test_options();
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.panel = 2; /* several panels, narrow first one */
    dd_context *ctx = NULL;
    char msg[256];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_SUCCESS, "create: %s", msg);
    if (st == DD_SUCCESS) {
        blocks b;
        fill(ctx, &b);
        test_rules(ctx, &b);
        test_refusals(ctx, &b);
        test_transposes(ctx, &b);
        dd_context_destroy(ctx);
        free(b.A), free(b.B), free(b.C), free(b.As), free(b.Bs), free(b.Cs);
    }
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test-api: %d rank%s, %s\n", g_size, g_size == 1 ? "" : "s",
               fails ? "FAILED" : "all passed");
    MPI_Finalize();
    return fails != 0;
}
