/* test_bounds.c — bounds that must be compared without overflow
 * (dgemm_dist.h, "What the library promises": nothing written outside the
 * caller's buffers).  dd_pgemm with offsets near 2^63 (ia, ja, ib, jb, ic,
 * jc), where i - 1 + M wraps, is refused with the offset's number and
 * touches nothing; an empty submatrix anywhere (PBLAS does not bound its
 * offsets) computes beta·C; leading dimensions whose local arrays would
 * span more than 2^63 bytes (dd_gemm's ld, a descriptor's lld, the host
 * side of dd_plan_read) are refused; the descriptor constructors refuse
 * such an lld; dd_numroc on a grid past 2^30 processes.  Every local
 * array sits between guard zones that are checked after every call.  Run
 * at any rank count. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist_plan.h"
#include "api_case.h"

enum { N4 = 4, GUARD = 64 };
#define SENTINEL 12345.0

/* A local array with GUARD elements of SENTINEL on each side, and a copy of
 * its contents to compare with. */
typedef struct {
    double *buf, *a, *copy;
    int64_t n;
} guarded;

static guarded guarded_make(int64_t n, double salt)
{
    guarded g = {malloc(sizeof(double) * (size_t)(n + 2 * GUARD)), NULL,
                 malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), n};
    for (int64_t i = 0; i < n + 2 * GUARD; i++)
        g.buf[i] = SENTINEL;
    g.a = g.buf + GUARD;
    for (int64_t i = 0; i < n; i++)
        g.a[i] = g.copy[i] = (double)((i * 5 + (int64_t)salt) % 7) - 3;
    return g;
}

/* 1 when the guards hold SENTINEL and the array its contents */
static int guarded_intact(const guarded *g)
{
    for (int64_t i = 0; i < GUARD; i++)
        if (g->buf[i] != SENTINEL || g->buf[GUARD + g->n + i] != SENTINEL)
            return 0;
    return memcmp(g->a, g->copy, sizeof(double) * (size_t)g->n) == 0;
}

static void guarded_free(guarded *g)
{
    free(g->buf);
    free(g->copy);
}

/* 4x4 block-cyclic A, B, C (blocks of 2) on the context's grid */
typedef struct {
    int P, Q, p, q;
    int64_t lr, lc;
    dd_matrix_desc d;
    guarded A, B, C;
} cyc;

static void cyc_make(dd_context *ctx, cyc *c)
{
    dd_context_grid(ctx, &c->P, &c->Q, &c->p, &c->q);
    c->lr = dd_numroc(N4, 2, c->p, 0, c->P);
    c->lc = dd_numroc(N4, 2, c->q, 0, c->Q);
    int64_t lld = c->lr > 1 ? c->lr : 1;
    CHECK(dd_desc_block_cyclic(&c->d, N4, N4, 2, 2, 0, 0, c->P, c->Q, 'R', lld) == DD_SUCCESS,
          "descriptor");
    c->A = guarded_make(lld * c->lc, 1);
    c->B = guarded_make(lld * c->lc, 2);
    c->C = guarded_make(lld * c->lc, 3);
}

static int all_intact(const cyc *c)
{
    return guarded_intact(&c->A) && guarded_intact(&c->B) && guarded_intact(&c->C);
}

/* dd_pgemm on the whole 4x4 matrices with one offset replaced */
static dd_status pgemm_at(dd_context *ctx, cyc *c, int64_t M, int64_t N, int64_t K, int64_t off[6],
                          const dd_matrix_desc *dc, double beta, dd_gemm_info *info)
{
    return dd_pgemm(ctx, 'N', 'N', M, N, K, 1.0, c->A.a, off[0], off[1], &c->d, c->B.a, off[2],
                    off[3], &c->d, beta, c->C.a, off[4], off[5], dc ? dc : &c->d, info);
}

static void test_offsets(dd_context *ctx)
{
    cyc c;
    cyc_make(ctx, &c);
    /* each offset in turn near 2^63: i - 1 + 4 wraps for these */
    static const int number[6] = {8, 9, 12, 13, 17, 18}; /* IA JA IB JB IC JC */
    static const char *name[6] = {"ia", "ja", "ib", "jb", "ic", "jc"};
    int64_t huge[3] = {INT64_MAX - 1, INT64_MAX, INT64_MAX - 2};
    for (int which = 0; which < 6; which++)
        for (int h = 0; h < 3; h++) {
            int64_t off[6] = {1, 1, 1, 1, 1, 1};
            off[which] = huge[h];
            dd_gemm_info info = {0};
            dd_status st = pgemm_at(ctx, &c, N4, N4, N4, off, NULL, 1.0, &info);
            CHECK(st == DD_ERROR_USAGE && info.bad_argument == number[which],
                  "%s = %lld: %s (%d), argument %d: %s", name[which], (long long)huge[h],
                  dd_status_string(st), st, info.bad_argument, dd_context_last_error(ctx));
            CHECK(all_intact(&c), "%s = %lld: a local array or its guards changed", name[which],
                  (long long)huge[h]);
        }
    /* an offset below 1, INT64_MIN included, is refused the same way */
    int64_t off[6] = {INT64_MIN, 1, 1, 1, 1, 1};
    dd_gemm_info info = {0};
    dd_status st = pgemm_at(ctx, &c, N4, N4, N4, off, NULL, 1.0, &info);
    CHECK(st == DD_ERROR_USAGE && info.bad_argument == 8 && all_intact(&c), "ia = INT64_MIN: %d %s",
          st, dd_context_last_error(ctx));
    /* K = 0: sub(A) (4x0) and sub(B) (0x4) are empty, their offsets
     * unbounded (PBLAS's rule); C = beta·C exactly, its guards intact */
    int64_t far[6] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, 1, 1};
    st = pgemm_at(ctx, &c, N4, N4, 0, far, NULL, 2.0, &info);
    CHECK(st == DD_SUCCESS, "K = 0, far offsets of A and B: %s: %s", dd_status_string(st),
          dd_context_last_error(ctx));
    int twice = 1;
    for (int64_t i = 0; i < c.C.n; i++)
        twice &= c.C.a[i] == 2 * c.C.copy[i];
    CHECK(twice && guarded_intact(&c.A) && guarded_intact(&c.B), "K = 0: C is not 2·C_in");
    memcpy(c.C.copy, c.C.a, sizeof(double) * (size_t)c.C.n);
    CHECK(guarded_intact(&c.C), "K = 0: C's guards");
    /* an lld whose local array would span more than 2^63 bytes: refused
     * with LLD_'s number (the one an lld below the local rows gets) */
    dd_matrix_desc small = c.d, wide = c.d;
    small.lld = 0;
    int64_t one[6] = {1, 1, 1, 1, 1, 1};
    pgemm_at(ctx, &c, N4, N4, N4, one, &small, 1.0, &info);
    int lld_number = info.bad_argument;
    CHECK(lld_number / 100 == 19, "descC lld 0: argument %d", lld_number);
    wide.lld = INT64_MAX / 2;
    st = pgemm_at(ctx, &c, N4, N4, N4, one, &wide, 1.0, &info);
    int spans = c.lc > 1; /* only a rank with two local columns has such an array */
    int any = 0;
    MPI_Allreduce(&spans, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(!any || (st == DD_ERROR_USAGE && info.bad_argument == lld_number),
          "descC lld 2^62: %s, argument %d: %s", dd_status_string(st), info.bad_argument,
          dd_context_last_error(ctx));
    CHECK(!any || all_intact(&c), "descC lld 2^62: a local array or its guards changed");
    guarded_free(&c.A), guarded_free(&c.B), guarded_free(&c.C);
}

/* dd_gemm's ld: a block whose rows ld apart would span more than 2^63
 * bytes is refused with the ld's number, nothing read or written */
static void test_ld(dd_context *ctx)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t r0, Mp, c0, Nq, k0, Kq, kp0, Kp;
    dd_block_range(N4, P, p, &r0, &Mp);
    dd_block_range(N4, Q, q, &c0, &Nq);
    dd_block_range(N4, Q, q, &k0, &Kq);
    dd_block_range(N4, P, p, &kp0, &Kp);
    guarded A = guarded_make(Mp * N4, 4), B = guarded_make(Kp * N4, 5),
            C = guarded_make(Mp * N4, 6);
    dd_gemm_info info = {0};
    dd_gemm(ctx, 'N', 'N', N4, N4, N4, 1, A.a, N4, B.a, N4, 1, C.a, 0, &info);
    int ld_number = info.bad_argument; /* an ldc below the width: the ld's number */
    CHECK(ld_number / 100 == 19, "ldc 0: argument %d", ld_number);
    int64_t huge[2] = {INT64_MAX / 4, INT64_MAX};
    for (int h = 0; h < 2; h++) {
        dd_status st =
            dd_gemm(ctx, 'N', 'N', N4, N4, N4, 1, A.a, N4, B.a, N4, 1, C.a, huge[h], &info);
        CHECK(st == DD_ERROR_USAGE && info.bad_argument == ld_number,
              "ldc %lld: %s, argument %d: %s", (long long)huge[h], dd_status_string(st),
              info.bad_argument, dd_context_last_error(ctx));
        st = dd_gemm(ctx, 'N', 'N', N4, N4, N4, 1, A.a, huge[h], B.a, N4, 1, C.a, N4, &info);
        CHECK(st == DD_ERROR_USAGE && info.bad_argument / 100 == 10,
              "lda %lld: %s, argument %d: %s", (long long)huge[h], dd_status_string(st),
              info.bad_argument, dd_context_last_error(ctx));
        CHECK(guarded_intact(&A) && guarded_intact(&B) && guarded_intact(&C),
              "ld %lld: an array or its guards changed", (long long)huge[h]);
    }
    guarded_free(&A), guarded_free(&B), guarded_free(&C);
}

/* dd_plan_read's host side: rows ld apart past 2^63 bytes are refused */
static void test_plan_read(dd_context *ctx)
{
    dd_plan_params pp = {.type = DD_FLOAT64, .M = N4, .N = N4, .K = N4, .passes = 1};
    dd_plan *plan = NULL;
    dd_status st = dd_plan_create(ctx, &pp, &plan);
    CHECK(st == DD_SUCCESS && (st = dd_plan_allocate(plan)) == DD_SUCCESS, "plan: %s",
          dd_context_last_error(ctx));
    if (st != DD_SUCCESS) {
        dd_plan_destroy(plan);
        return;
    }
    dd_plan_info in;
    dd_plan_get_info(plan, &in);
    guarded h = guarded_make(2 * N4, 7);
    if (in.rows[2] >= 2 && in.cols[2] >= 1) {
        int64_t lds[2] = {INT64_MAX / 4, INT64_MAX};
        for (int i = 0; i < 2; i++) {
            st = dd_plan_read(plan, DD_OPERAND_C, 0, 0, 2, in.cols[2], h.a, lds[i]);
            CHECK(st == DD_ERROR_USAGE && guarded_intact(&h), "dd_plan_read ld %lld: %s: %s",
                  (long long)lds[i], dd_status_string(st), dd_context_last_error(ctx));
            st = dd_plan_write(plan, DD_OPERAND_C, 0, 0, 2, in.cols[2], h.a, lds[i]);
            CHECK(st == DD_ERROR_USAGE, "dd_plan_write ld %lld: %s", (long long)lds[i],
                  dd_status_string(st));
        }
        st = dd_plan_read(plan, DD_OPERAND_C, 0, 0, 2, in.cols[2], h.a, N4);
        CHECK(st == DD_SUCCESS, "dd_plan_read ld 4: %s", dd_context_last_error(ctx));
    }
    guarded_free(&h);
    dd_plan_destroy(plan);
}

/* The constructors and dd_numroc, local */
static void test_local(void)
{
    dd_matrix_desc d;
    CHECK(dd_desc_block_cyclic(&d, N4, N4, 1, 1, 0, 0, 1, 1, 'R', N4) == DD_SUCCESS, "valid");
    CHECK(dd_desc_block_cyclic(&d, N4, N4, 1, 1, 0, 0, 1, 1, 'R', INT64_MAX) == DD_ERROR_USAGE,
          "block-cyclic lld INT64_MAX over 4 columns");
    CHECK(dd_desc_block_cyclic(&d, N4, 1, 1, 1, 0, 0, 1, 1, 'R', INT64_MAX) == DD_SUCCESS,
          "one column: any lld addresses it");
    CHECK(dd_desc_block(&d, N4, N4, 1, 1, INT64_MAX) == DD_ERROR_USAGE,
          "block lld INT64_MAX over 4 rows");
    CHECK(dd_desc_block(&d, N4, N4, 1, 1, N4) == DD_SUCCESS, "block valid");
    /* (iproc - isrc + nprocs) in 64 bits: 10 blocks of 1 from process 0,
     * process INT_MAX - 1 of INT_MAX holds none */
    CHECK(dd_numroc(10, 1, INT_MAX - 1, 0, INT_MAX) == 0, "numroc on INT_MAX processes: %lld",
          (long long)dd_numroc(10, 1, INT_MAX - 1, 0, INT_MAX));
    CHECK(dd_numroc(10, 1, 9, 0, INT_MAX) == 1 && dd_numroc(10, 1, 10, 0, INT_MAX) == 0,
          "numroc: the tenth holds one, the eleventh none");
    CHECK(dd_numroc(INT64_MAX, INT64_MAX, 0, 0, 1) == INT64_MAX, "numroc of INT64_MAX");
}

/* argv[1], when given, runs the one case of that name (the others are
 * skipped): a hang or crash in one case then says which */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    if (api_case(argc, argv, "local"))
        test_local();
    dd_context *ctx = api_cpu_context(0);
    if (ctx) {
        if (api_case(argc, argv, "offsets"))
            test_offsets(ctx);
        if (api_case(argc, argv, "ld"))
            test_ld(ctx);
        if (api_case(argc, argv, "plan_read"))
            test_plan_read(ctx);
        dd_context_destroy(ctx);
    }
    return api_finish("test-bounds");
}
