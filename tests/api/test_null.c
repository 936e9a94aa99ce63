/* test_null.c — every public entry of dgemm_dist.h given NULL pointers
 * (dgemm_dist.h, "What the library promises"): where the header allows NULL
 * (outputs of the getters, info, opts, errbuf, destroy) the call works;
 * everywhere else it is refused with DD_ERROR_USAGE (dd_check_line, which
 * returns nothing, writes a line that says FAILED), and never dereferences
 * it.  A collective call given NULL on one rank only (the last) is refused
 * on every rank with the same message, no rank left waiting (an array is
 * NULL there only where that rank holds part of it).  Run at 1, 2 and 3
 * ranks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd.h" /* dd_err for same_everywhere */
#include "dd_check.h"
#include "dgemm_dist_tool.h"
#include "api_case.h"

enum { N4 = 4 };

static int last(void)
{
    return g_rank == g_size - 1;
}

/* the local calls */
static void test_local(void)
{
    dd_version(NULL, NULL, NULL);
    dd_context_options_init(NULL);
    CHECK(dd_context_last_error(NULL) && *dd_context_last_error(NULL), "last_error(NULL)");
    CHECK(dd_context_backend(NULL) && !*dd_context_backend(NULL), "backend(NULL)");
    int P;
    CHECK(dd_context_grid(NULL, &P, NULL, NULL, NULL) == DD_ERROR_USAGE, "grid(NULL)");
    CHECK(dd_block_range(5, 2, 0, NULL, NULL) == DD_SUCCESS, "block_range's outputs NULL");
    CHECK(dd_desc_block_cyclic(NULL, 4, 4, 1, 1, 0, 0, 1, 1, 'R', 4) == DD_ERROR_USAGE,
          "desc_block_cyclic(NULL)");
    CHECK(dd_desc_block(NULL, 4, 4, 1, 1, 4) == DD_ERROR_USAGE, "desc_block(NULL)");
    CHECK(dd_blas_version() != NULL && dd_status_string(DD_SUCCESS) != NULL, "strings");
    char line[256] = "x";
    dd_check_line(NULL, line, sizeof line);
    CHECK(strstr(line, "FAILED") && !strstr(line, "PASSED"), "check_line(NULL): %s", line);
    dd_check_result r = {0.5, 1, NULL};
    dd_check_line(&r, NULL, 64); /* nowhere to write: nothing happens */
    dd_check_line(&r, line, 0);
    dd_context_destroy(NULL);
    dd_plan_destroy(NULL);
}

/* the collective calls with no context (on every rank: nothing to agree on) */
static void test_no_context(void)
{
    double x = 0;
    float f = 0;
    dd_matrix_desc d;
    dd_desc_block(&d, 1, 1, 0, 0, 1);
    dd_status st[8] = {
        dd_gemm(NULL, 'N', 'N', 1, 1, 1, 1, &x, 1, &x, 1, 0, &x, 1, NULL),
        dd_sgemm(NULL, 'N', 'N', 1, 1, 1, 1, &f, 1, &f, 1, 0, &f, 1, NULL),
        dd_gemm_device(NULL, 'N', 'N', 1, 1, 1, 1, &x, 1, &x, 1, 0, &x, 1, NULL),
        dd_sgemm_device(NULL, 'N', 'N', 1, 1, 1, 1, &f, 1, &f, 1, 0, &f, 1, NULL),
        dd_pgemm(NULL, 'N', 'N', 1, 1, 1, 1, &x, 1, 1, &d, &x, 1, 1, &d, 0, &x, 1, 1, &d, NULL),
        dd_psgemm(NULL, 'N', 'N', 1, 1, 1, 1, &f, 1, 1, &d, &f, 1, 1, &d, 0, &f, 1, 1, &d, NULL),
        dd_pgemm_device(NULL, 'N', 'N', 1, 1, 1, 1, &x, 1, 1, &d, &x, 1, 1, &d, 0, &x, 1, 1, &d,
                        NULL),
        dd_psgemm_device(NULL, 'N', 'N', 1, 1, 1, 1, &f, 1, 1, &d, &f, 1, 1, &d, 0, &f, 1, 1, &d,
                         NULL)};
    for (int i = 0; i < 8; i++)
        CHECK(st[i] == DD_ERROR_USAGE, "entry %d with ctx NULL: %d", i, st[i]);
    dd_plan_params pp = {.type = DD_FLOAT64, .M = 1, .N = 1, .K = 1, .passes = 1};
    dd_plan *plan = (dd_plan *)1;
    dd_stream s = {NULL, NULL, NULL, 0};
    dd_plan_times t;
    dd_check_result r;
    dd_plan_info in;
    dd_plan_tool_info ti;
    dd_telemetry tel;
    int64_t count;
    dd_status ps[] = {dd_plan_create(NULL, &pp, &plan),
                      dd_plan_get_info(NULL, &in),
                      dd_plan_get_tool_info(NULL, DGEMM_DIST_TOOL_VERSION, &ti),
                      dd_plan_allocate(NULL),
                      dd_plan_load(NULL, DD_OPERAND_A, &s),
                      dd_plan_store(NULL, DD_OPERAND_C, &s),
                      dd_plan_generate(NULL, DD_OPERAND_A, 1, 0),
                      dd_plan_prepare(NULL, 1, 0, 0),
                      dd_plan_multiply(NULL, &t),
                      dd_plan_host_pass(NULL, &t),
                      dd_plan_panel_seconds(NULL, NULL, 0, &count),
                      dd_plan_check(NULL, &r),
                      dd_plan_read(NULL, DD_OPERAND_C, 0, 0, 1, 1, &x, 1),
                      dd_plan_write(NULL, DD_OPERAND_C, 0, 0, 1, 1, &x, 1),
                      dd_plan_set_progress(NULL, NULL, NULL),
                      dd_plan_telemetry_start(NULL),
                      dd_plan_telemetry_stop(NULL, DGEMM_DIST_TOOL_VERSION, &tel)};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        CHECK(ps[i] == DD_ERROR_USAGE, "plan call %zu with plan (or ctx) NULL: %d", i, ps[i]);
}

/* dd_context_create: the result's pointer NULL on the last rank alone */
static void test_create(void)
{
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    dd_context *ctx = (dd_context *)1;
    char msg[256] = "";
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, last() ? NULL : &ctx, msg, sizeof msg);
    CHECK(st == DD_ERROR_USAGE && strstr(msg, "ctx") && (last() || !ctx),
          "ctx NULL on the last rank: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "ctx NULL on the last rank: not agreed");
    /* opts and errbuf may be NULL (defaults; no message wanted) */
    st = dd_context_create(MPI_COMM_WORLD, NULL, &ctx, NULL, 0);
    CHECK(st == DD_SUCCESS, "opts and errbuf NULL: %s", dd_status_string(st));
    if (st == DD_SUCCESS) {
        int Q;
        CHECK(dd_context_grid(ctx, NULL, &Q, NULL, NULL) == DD_SUCCESS && Q >= 1, "grid's NULLs");
        dd_context_destroy(ctx);
    }
}

/* the multiplies: operands, descriptors NULL on the last rank */
static void test_gemm(dd_context *ctx)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    double *A = calloc(N4 * N4, sizeof(double)), *B = calloc(N4 * N4, sizeof(double)),
           *C = calloc(N4 * N4, sizeof(double));
    for (int i = 0; i < N4 * N4; i++)
        A[i] = B[i] = 1, C[i] = 5;
    struct {
        const char *what;
        int which;
        double alpha, beta;
        dd_status want;
    } cases[] = {{"A", 0, 1, 0, DD_ERROR_USAGE},
                 {"B", 1, 1, 0, DD_ERROR_USAGE},
                 {"C", 2, 1, 0, DD_ERROR_USAGE},
                 {"C (beta 1)", 2, 1, 1, DD_ERROR_USAGE},
                 {"A and B with alpha 0", 3, 0, 1, DD_SUCCESS}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int w = cases[c].which;
        const double *a = last() && (w == 0 || w == 3) ? NULL : A;
        const double *b = last() && (w == 1 || w == 3) ? NULL : B;
        double *cc = last() && w == 2 ? NULL : C;
        dd_status st = dd_gemm(ctx, 'N', 'N', N4, N4, N4, cases[c].alpha, a, N4, b, N4,
                               cases[c].beta, cc, N4, NULL);
        const char *msg = dd_context_last_error(ctx);
        CHECK(st == cases[c].want, "dd_gemm, %s NULL on the last rank: %s: %s", cases[c].what,
              dd_status_string(st), msg);
        CHECK(api_agreed(st, msg), "dd_gemm, %s NULL: not agreed", cases[c].what);
    }
    int64_t lr = dd_numroc(N4, 2, p, 0, P), lc = dd_numroc(N4, 2, q, 0, Q);
    dd_matrix_desc d;
    dd_desc_block_cyclic(&d, N4, N4, 2, 2, 0, 0, P, Q, 'R', lr > 1 ? lr : 1);
    /* an array NULL is refused only where the last rank holds part of it
     * (at 3 ranks on a 1x3 grid it holds none, and NULL is allowed) */
    int holds = lr > 0 && lc > 0;
    MPI_Bcast(&holds, 1, MPI_INT, g_size - 1, MPI_COMM_WORLD);
    for (int k = 0; k < 6; k++) { /* descA, descB, descC, then A, B, C */
        const dd_matrix_desc *da = last() && k == 0 ? NULL : &d, *db = last() && k == 1 ? NULL : &d,
                             *dc = last() && k == 2 ? NULL : &d;
        const double *a = last() && k == 3 ? NULL : A, *b = last() && k == 4 ? NULL : B;
        double *cc = last() && k == 5 ? NULL : C;
        dd_gemm_info info = {0};
        dd_status st = dd_pgemm(ctx, 'N', 'N', N4, N4, N4, 1, a, 1, 1, da, b, 1, 1, db, 0, cc, 1, 1,
                                dc, &info);
        const char *msg = dd_context_last_error(ctx);
        /* the argument's PBLAS number: DESCA 10, DESCB 14, DESCC 19, A 7, B 11, C 16 */
        static const int number[6] = {10, 14, 19, 7, 11, 16};
        if (k >= 3 && !holds)
            CHECK(st == DD_SUCCESS, "dd_pgemm, argument %d NULL where it is empty: %s: %s",
                  number[k], dd_status_string(st), msg);
        else
            CHECK(st == DD_ERROR_USAGE && info.bad_argument == number[k] && strstr(msg, "NULL"),
                  "dd_pgemm, argument %d NULL on the last rank: %s, argument %d: %s", number[k],
                  dd_status_string(st), info.bad_argument, msg);
        CHECK(api_agreed(st, msg), "dd_pgemm, argument %d NULL: not agreed", number[k]);
    }
    free(A), free(B), free(C);
}

/* the plan calls: NULL on the last rank where they are collective, on the
 * calling rank where they are local */
static void test_plan(dd_context *ctx)
{
    dd_plan_params pp = {.type = DD_FLOAT64, .M = N4, .N = N4, .K = N4, .passes = 1};
    dd_plan *plan = (dd_plan *)1;
    dd_status st = dd_plan_create(ctx, last() ? NULL : &pp, &plan);
    const char *msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_USAGE && !plan && strstr(msg, "params"),
          "dd_plan_create, params NULL on the last rank: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "params NULL: not agreed");
    st = dd_plan_create(ctx, &pp, last() ? NULL : &plan);
    msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_USAGE && strstr(msg, "plan"),
          "dd_plan_create, plan NULL on the last rank: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "plan NULL: not agreed");
    plan = NULL;
    st = dd_plan_create(ctx, &pp, &plan);
    CHECK(st == DD_SUCCESS && (st = dd_plan_allocate(plan)) == DD_SUCCESS, "plan: %s",
          dd_context_last_error(ctx));
    if (st != DD_SUCCESS) {
        dd_plan_destroy(plan);
        return;
    }
    dd_plan_info in;
    CHECK(dd_plan_get_info(plan, NULL) == DD_ERROR_USAGE, "get_info's info NULL");
    CHECK(dd_plan_get_info(plan, &in) == DD_SUCCESS, "get_info");
    /* a NULL stream, and one without its function, on the last rank */
    dd_stream none = {NULL, NULL, NULL, 0};
    st = dd_plan_load(plan, DD_OPERAND_A, last() ? NULL : &none);
    CHECK(st == DD_ERROR_USAGE && api_agreed(st, dd_context_last_error(ctx)), "load, stream NULL: %d",
          st);
    st = dd_plan_store(plan, DD_OPERAND_C, &none);
    CHECK(st == DD_ERROR_USAGE && api_agreed(st, dd_context_last_error(ctx)), "store, no drain: %d",
          st);
    CHECK(dd_plan_generate(plan, DD_OPERAND_A, 1, 0) == DD_SUCCESS &&
              dd_plan_generate(plan, DD_OPERAND_B, 2, 0) == DD_SUCCESS &&
              dd_plan_prepare(plan, 1, 0, 1) == DD_SUCCESS,
          "generate, prepare: %s", dd_context_last_error(ctx));
    /* times NULL is allowed */
    CHECK(dd_plan_multiply(plan, NULL) == DD_SUCCESS, "multiply, times NULL: %s",
          dd_context_last_error(ctx));
    /* the result NULL on the last rank: refused everywhere, nobody waits */
    dd_check_result r;
    st = dd_plan_check(plan, last() ? NULL : &r);
    msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_USAGE && strstr(msg, "NULL"),
          "check, result NULL on the last rank: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "check's result NULL: not agreed");
    st = dd_plan_check(plan, &r);
    CHECK(st == DD_SUCCESS && r.passed, "check: %s", dd_context_last_error(ctx));
    /* local: host NULL for a 2x2 sub-block (nothing written to NULL) */
    if (in.rows[2] >= 2 && in.cols[2] >= 2) {
        CHECK(dd_plan_read(plan, DD_OPERAND_C, 0, 0, 2, 2, NULL, 2) == DD_ERROR_USAGE,
              "dd_plan_read into NULL");
        CHECK(dd_plan_write(plan, DD_OPERAND_C, 0, 0, 2, 2, NULL, 2) == DD_ERROR_USAGE,
              "dd_plan_write from NULL");
    }
    CHECK(dd_plan_read(plan, DD_OPERAND_C, 0, 0, 0, 0, NULL, 1) == DD_SUCCESS,
          "dd_plan_read of nothing into NULL");
    int64_t count = -1;
    CHECK(dd_plan_panel_seconds(plan, NULL, 0, &count) == DD_SUCCESS && count >= 1,
          "panel_seconds, the count alone");
    CHECK(dd_plan_panel_seconds(plan, NULL, 1, &count) == DD_ERROR_USAGE &&
              dd_plan_panel_seconds(plan, &r.residual, 1, NULL) == DD_ERROR_USAGE,
          "panel_seconds with NULL where it writes");
    CHECK(dd_plan_set_progress(plan, NULL, NULL) == DD_SUCCESS, "set_progress(NULL): none");
    CHECK(dd_plan_telemetry_start(plan) == DD_SUCCESS &&
              dd_plan_telemetry_stop(plan, DGEMM_DIST_TOOL_VERSION, NULL) == DD_ERROR_USAGE,
          "telemetry_stop's result NULL");
    CHECK(dd_plan_get_tool_info(plan, DGEMM_DIST_TOOL_VERSION, NULL) == DD_ERROR_USAGE,
          "get_tool_info's result NULL");
    dd_plan_destroy(plan);
}

/* argv[1], when given, runs the one case of that name (the others are
 * skipped): a hang or crash in one case then says which */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    if (api_case(argc, argv, "local"))
        test_local();
    if (api_case(argc, argv, "no_context"))
        test_no_context();
    if (api_case(argc, argv, "create"))
        test_create();
    dd_context *ctx = api_cpu_context(0);
    if (ctx) {
        if (api_case(argc, argv, "gemm"))
            test_gemm(ctx);
        if (api_case(argc, argv, "plan"))
            test_plan(ctx);
        dd_context_destroy(ctx);
    }
    return api_finish("test-null");
}
