/* test_plan.c — the plan API (dgemm_dist.h: dd_plan_*), as a client that
 * holds its matrices whole sees it: op(A) streamed in transposed, B and
 * C_in plain, in bands that every rank gets alike; C = alpha·op(A)·B +
 * beta·C_in twice from the same inputs (the kept beta·C_in), checked by the
 * library and against a host reference after dd_plan_store; generated
 * inputs; element access; the refusals (a second plan, a multiply before
 * prepare, a pass beyond the plan's, a transposed stream on a plan without
 * it) and a stream that fails on one rank, agreed everywhere.  Both types.
 * DD_TEST_BACKEND picks the backend (default cpu); cuda where no GPU
 * exists exits 77 (skipped). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd.h" /* dd_err for same_everywhere */
#include "dd_check.h"
#include "dgemm_dist_tool.h"

enum { M = 37, N = 29, K = 23 };

/* a matrix held whole by every rank, row-major, and the type it is read in */
typedef struct {
    const double *x;
    int64_t ld;
    int f32;
    int64_t row0, col0, width; /* the stored sub-block this stream moves */
    int64_t calls, rows_seen;
    int fail_rank; /* the rank whose first fill fails (-1: none) */
    double *out;   /* drain: the whole C, this rank's block written */
} mem_stream;

static dd_status fill(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len)
{
    mem_stream *m = s->arg;
    m->calls++;
    m->rows_seen += h;
    if (m->fail_rank == g_rank) {
        m->fail_rank = -1;
        snprintf(msg, len, "the band of rows %lld.. could not be read on rank %d", (long long)r,
                 g_rank);
        return DD_ERROR_IO;
    }
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < m->width; j++) {
            double v = m->x[(m->row0 + r + i) * m->ld + m->col0 + j];
            if (m->f32)
                ((float *)band)[i * m->width + j] = (float)v;
            else
                ((double *)band)[i * m->width + j] = v;
        }
    return DD_SUCCESS;
}

static dd_status drain(const dd_stream *s, const void *band, int64_t r, int64_t h, char *msg,
                       size_t len)
{
    (void)msg;
    (void)len;
    mem_stream *m = s->arg;
    m->calls++;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < m->width; j++)
            m->out[(m->row0 + r + i) * m->ld + m->col0 + j] =
                m->f32 ? ((const float *)band)[i * m->width + j]
                       : ((const double *)band)[i * m->width + j];
    return DD_SUCCESS;
}

static double val(int64_t i, int64_t j, int salt)
{
    return (double)((i * 7 + j * 3 + salt) % 11 - 5) / 8;
}

/* The stored sub-block of block `w` (rows × cols at row0, col0 of the
 * matrix), or with trans of its transpose. */
static mem_stream stream_of(const dd_plan_info *in, int w, const double *x, int64_t ld, int f32,
                            int trans, dd_stream *st)
{
    mem_stream m = {x, ld, f32, in->row0[w], in->col0[w], in->cols[w], 0, 0, -1, NULL};
    if (trans) {
        m.row0 = in->col0[w];
        m.col0 = in->row0[w];
        m.width = in->rows[w];
    }
    *st = (dd_stream){fill, drain, NULL, trans};
    return m;
}

/* The same count on every rank. */
static int same_count(int64_t n)
{
    long long mine = n, lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* A small FP32 multiply through dd_sgemm on the same context. */
/* The last multiply's time per panel: one per panel of the plan, each
 * >= 0, together the local multiplies' time; bad arguments refused. */
static void panel_times(dd_plan *plan, const dd_plan_info *in, const dd_plan_times *t)
{
    int64_t count = -1;
    double sec[64], sum = 0;
    CHECK(dd_plan_panel_seconds(plan, NULL, 0, &count) == DD_SUCCESS && count == in->panels,
          "panel count %lld (the plan has %lld)", (long long)count, (long long)in->panels);
    CHECK(dd_plan_panel_seconds(plan, NULL, 1, &count) == DD_ERROR_USAGE &&
              dd_plan_panel_seconds(plan, sec, -1, &count) == DD_ERROR_USAGE &&
              dd_plan_panel_seconds(plan, sec, 1, NULL) == DD_ERROR_USAGE,
          "bad arguments to dd_plan_panel_seconds refused");
    CHECK(count <= 64 && dd_plan_panel_seconds(plan, sec, 64, &count) == DD_SUCCESS,
          "panel times of %lld panels", (long long)count);
    for (int64_t i = 0; i < count && i < 64; i++) {
        CHECK(sec[i] >= 0, "panel %lld took %g s", (long long)i, sec[i]);
        sum += sec[i];
    }
    CHECK(fabs(sum - t->gemm_seconds) <= 1e-9 * (1 + t->gemm_seconds),
          "panel times add up to %.9g s, the local multiplies took %.9g s", sum, t->gemm_seconds);
}

static void sgemm_between(dd_context *ctx)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t n = 2L * P * Q, m0, mp, n0, nq, k0, kq, kp0, kp;
    dd_block_range(n, P, p, &m0, &mp);
    dd_block_range(n, Q, q, &n0, &nq);
    dd_block_range(n, Q, q, &k0, &kq);
    dd_block_range(n, P, p, &kp0, &kp);
    float *a = calloc((size_t)(mp * kq + 1), sizeof(float));
    float *b = calloc((size_t)(kp * nq + 1), sizeof(float));
    float *c = calloc((size_t)(mp * nq + 1), sizeof(float));
    dd_status st = dd_sgemm(ctx, 'N', 'N', n, n, n, 1.0f, a, kq > 0 ? kq : 1, b, nq > 0 ? nq : 1,
                            0.0f, c, nq > 0 ? nq : 1, NULL);
    CHECK(st == DD_SUCCESS, "dd_sgemm beside a plan: %s", dd_context_last_error(ctx));
    free(a), free(b), free(c);
}

static void one_type(dd_context *ctx, int f32)
{
    double *At = malloc(sizeof(double) * K * M), *B = malloc(sizeof(double) * K * N);
    double *C = malloc(sizeof(double) * M * N), *ref = malloc(sizeof(double) * M * N);
    double *got = calloc((size_t)(M * N), sizeof(double));
    double alpha = 0.5, beta = -2;
    for (int64_t k = 0; k < K; k++)
        for (int64_t i = 0; i < M; i++)
            At[k * M + i] = val(i, k, 1); /* A is M×K; the stream holds Aᵀ */
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            B[k * N + j] = val(k, j, 2);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            C[i * N + j] = val(i, j, 3);
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += At[k * M + i] * B[k * N + j];
            ref[i * N + j] = alpha * s + beta * C[i * N + j];
        }
    dd_plan_params pp = {f32 ? DD_FLOAT32 : DD_FLOAT64, M, N, K, 1, 2, 1, 0, 0};
    dd_plan *plan = NULL, *second = NULL;
    dd_status st = dd_plan_create(ctx, &pp, &plan);
    CHECK(st == DD_SUCCESS, "dd_plan_create: %s", dd_context_last_error(ctx));
    if (st != DD_SUCCESS)
        return;
    CHECK(dd_plan_create(ctx, &pp, &second) == DD_ERROR_USAGE && !second,
          "a second plan on one context is refused");
    dd_plan_info in;
    dd_plan_get_info(plan, &in);
    long long cells = in.rows[2] * in.cols[2], all = 0;
    MPI_Allreduce(&cells, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == M * N && in.keeps_c, "C's blocks cover C (%lld of %d) and beta·C is kept", all,
          M * N);
    CHECK(dd_plan_multiply(plan, NULL) == DD_ERROR_USAGE, "a multiply before allocate refused");
    CHECK(dd_plan_allocate(plan) == DD_SUCCESS, "allocate: %s", dd_context_last_error(ctx));
    dd_plan_get_info(plan, &in);
    CHECK(in.comm[0] != '\0', "the comm backend is named after allocate");
    /* the tool's account: this header's layout served, any other refused */
    dd_plan_tool_info ti = {0};
    dd_telemetry tel;
    CHECK(dd_plan_get_tool_info(plan, DGEMM_DIST_TOOL_VERSION, &ti) == DD_SUCCESS && ti.tune_line &&
              ti.device && ti.allocate_seconds[1] >= 0,
          "dd_plan_get_tool_info: %s", dd_context_last_error(ctx));
    CHECK(dd_plan_get_tool_info(plan, DGEMM_DIST_TOOL_VERSION + 1, &ti) == DD_ERROR_UNSUPPORTED &&
              strstr(dd_context_last_error(ctx), "dgemm_dist_tool.h version") &&
              dd_plan_telemetry_stop(plan, DGEMM_DIST_TOOL_VERSION - 1, &tel) ==
                  DD_ERROR_UNSUPPORTED,
          "another tool layout refused: %s", dd_context_last_error(ctx));
    dd_stream sa, sb, sc, plain;
    mem_stream ma = stream_of(&in, 0, At, M, f32, 1, &sa),
               mb = stream_of(&in, 1, B, N, f32, 0, &sb), mc = stream_of(&in, 2, C, N, f32, 0, &sc);
    sa.arg = &ma;
    sb.arg = &mb;
    sc.arg = &mc;
    CHECK(dd_plan_load(plan, DD_OPERAND_A, &sa) == DD_SUCCESS &&
              dd_plan_load(plan, DD_OPERAND_B, &sb) == DD_SUCCESS &&
              dd_plan_load(plan, DD_OPERAND_C, &sc) == DD_SUCCESS,
          "loads: %s", dd_context_last_error(ctx));
    CHECK(ma.rows_seen == in.cols[0] && mb.rows_seen == in.rows[1],
          "the transposed stream moved the block's columns (%lld of %lld), the plain one its "
          "rows (%lld of %lld)",
          (long long)ma.rows_seen, (long long)in.cols[0], (long long)mb.rows_seen,
          (long long)in.rows[1]);
    CHECK(same_count(ma.calls) && same_count(mb.calls), "every rank gets the same band calls");
    CHECK(dd_plan_multiply(plan, NULL) == DD_ERROR_USAGE, "a multiply before prepare refused");
    CHECK(dd_plan_prepare(plan, alpha, beta, 1) == DD_SUCCESS, "prepare: %s",
          dd_context_last_error(ctx));
    dd_plan_times t = {0, 0, 0};
    dd_check_result chk = {0, 0, NULL};
    for (int pass = 0; pass < 3; pass++) { /* passes 2 and 3 start from the kept beta·C_in */
        CHECK(dd_plan_multiply(plan, &t) == DD_SUCCESS && t.slowest >= t.seconds, "multiply %d: %s",
              pass, dd_context_last_error(ctx));
        CHECK(dd_plan_check(plan, &chk) == DD_SUCCESS && chk.passed, "check %d: residual %g", pass,
              chk.residual);
    }
    panel_times(plan, &in, &t);
    if (!f32) { /* a dd_sgemm in between switches the engine to FP32; the plan switches back */
        sgemm_between(ctx);
        CHECK(dd_plan_multiply(plan, &t) == DD_SUCCESS && dd_plan_check(plan, &chk) == 0 &&
                  chk.passed,
              "the plan after a dd_sgemm: %s (residual %g)", dd_context_last_error(ctx),
              chk.residual);
    }
    mem_stream mo = stream_of(&in, 2, NULL, N, f32, 0, &plain);
    mo.out = got;
    plain.arg = &mo;
    CHECK(dd_plan_store(plan, DD_OPERAND_C, &plain) == DD_SUCCESS, "store: %s",
          dd_context_last_error(ctx));
    MPI_Allreduce(MPI_IN_PLACE, got, M * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double worst = 0;
    for (int64_t i = 0; i < M * N; i++)
        worst = fmax(worst, fabs(got[i] - ref[i]));
    CHECK(worst <= (f32 ? 1e-4 : 1e-12), "C against the reference: worst difference %g", worst);
    double e = 0;
    if (in.rows[2] > 0 && in.cols[2] > 0) {
        CHECK(dd_plan_read(plan, DD_OPERAND_C, in.rows[2] - 1, 0, 1, 1, &e, 1) == DD_SUCCESS,
              "read: %s", dd_context_last_error(ctx));
        double want = ref[(in.row0[2] + in.rows[2] - 1) * N + in.col0[2]];
        float ef;
        memcpy(&ef, &e, sizeof ef);
        double have = f32 ? (double)ef : e;
        CHECK(fabs(have - want) <= (f32 ? 1e-4 : 1e-12), "element read %g, want %g", have, want);
    }
    CHECK(dd_plan_read(plan, DD_OPERAND_C, in.rows[2], 0, 1, 1, &e, 1) == DD_ERROR_USAGE,
          "a read outside the block is refused");
    CHECK(dd_plan_read(plan, DD_OPERAND_C, 1, 0, INT64_MAX, 1, &e, 1) == DD_ERROR_USAGE,
          "a read whose end overflows is refused");
    /* scalars that differ between ranks are refused everywhere, not hung on */
    st = dd_plan_prepare(plan, g_rank == g_size - 1 ? 2.0 : alpha, beta, 1);
    CHECK(g_size == 1 ? st == DD_SUCCESS : st == DD_ERROR_USAGE, "alpha differing: %d %s", st,
          dd_context_last_error(ctx));
    /* a host pass on the CPU is refused and leaves the data alone; a load
     * after prepare asks for prepare again */
    if (!strcmp(in.backend, "cpu"))
        CHECK(dd_plan_host_pass(plan, NULL) == DD_ERROR_UNSUPPORTED, "host pass on the CPU");
    CHECK(dd_plan_load(plan, DD_OPERAND_C, &sc) == DD_SUCCESS &&
              dd_plan_multiply(plan, NULL) == DD_ERROR_USAGE,
          "a multiply after a load without prepare is refused");
    CHECK(dd_plan_prepare(plan, alpha, beta, 1) == DD_SUCCESS &&
              dd_plan_multiply(plan, &t) == DD_SUCCESS && dd_plan_check(plan, &chk) == 0 &&
              chk.passed,
          "prepared again, the multiply passes: %s (%g)", dd_context_last_error(ctx), chk.residual);
    /* a stream that fails on the last rank: every rank gets its status and message */
    mem_stream bad = stream_of(&in, 1, B, N, f32, 0, &plain);
    bad.fail_rank = g_size - 1;
    plain.arg = &bad;
    st = dd_plan_load(plan, DD_OPERAND_B, &plain);
    dd_err e2 = {{0}};
    snprintf(e2.msg, sizeof e2.msg, "%s", dd_context_last_error(ctx));
    CHECK(st == DD_ERROR_IO && strstr(e2.msg, "could not be read"), "a failed band: %d %s", st,
          e2.msg);
    CHECK(same_everywhere(st, &e2), "the failed band is agreed");
    dd_plan_destroy(plan);
    free(At), free(B), free(C), free(ref), free(got);
}

/* Generated inputs (no C), one pass only, a transposed stream refused. */
static void generated(dd_context *ctx)
{
    dd_plan_params pp = {DD_FLOAT64, M, N, K, 0, 1, 0, 0, 11};
    dd_plan *plan = NULL;
    CHECK(dd_plan_create(ctx, &pp, &plan) == DD_SUCCESS && dd_plan_allocate(plan) == DD_SUCCESS,
          "plan: %s", dd_context_last_error(ctx));
    if (!plan)
        return;
    CHECK(dd_plan_generate(plan, DD_OPERAND_A, 7, 1) == DD_SUCCESS &&
              dd_plan_generate(plan, DD_OPERAND_B, 7, 0) == DD_SUCCESS,
          "generate: %s", dd_context_last_error(ctx));
    CHECK(dd_plan_prepare(plan, 1, 1, 1) == DD_ERROR_USAGE, "beta ≠ 0 without read_c refused");
    dd_check_result chk = {0, 0, NULL};
    CHECK(dd_plan_prepare(plan, 1, 0, 1) == DD_SUCCESS && dd_plan_multiply(plan, NULL) == 0 &&
              dd_plan_check(plan, &chk) == DD_SUCCESS && chk.passed,
          "generated inputs multiply and pass (%g)", chk.residual);
    dd_stream s = {fill, drain, NULL, 1};
    CHECK(dd_plan_load(plan, DD_OPERAND_A, &s) == DD_ERROR_USAGE,
          "a transposed stream on a plan without transposed is refused");
    dd_plan_destroy(plan);
    /* read_c with one pass: the second multiply has no beta·C_in to start from */
    dd_plan_params p1 = {DD_FLOAT64, M, N, K, 1, 1, 0, 0, 0};
    CHECK(dd_plan_create(ctx, &p1, &plan) == DD_SUCCESS && dd_plan_allocate(plan) == DD_SUCCESS &&
              dd_plan_generate(plan, DD_OPERAND_A, 1, 0) == 0 &&
              dd_plan_generate(plan, DD_OPERAND_B, 2, 0) == 0 &&
              dd_plan_generate(plan, DD_OPERAND_C, 3, 0) == 0 &&
              dd_plan_prepare(plan, 1, 1, 0) == 0 && dd_plan_multiply(plan, NULL) == 0,
          "one pass: %s", dd_context_last_error(ctx));
    CHECK(dd_plan_multiply(plan, NULL) == DD_ERROR_USAGE &&
              strstr(dd_context_last_error(ctx), "params.passes"),
          "a pass beyond the plan's is refused: %s", dd_context_last_error(ctx));
    CHECK(dd_plan_check(plan, &chk) == DD_ERROR_USAGE, "no check without prepare's check");
    dd_plan_destroy(plan);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *backend = getenv("DD_TEST_BACKEND");
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = backend ? backend : "cpu";
    o.tune = 1;
    dd_context *ctx = NULL;
    char msg[512];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    if (st == DD_ERROR_UNSUPPORTED || (st != DD_SUCCESS && strstr(msg, "GPU"))) {
        if (g_rank == 0)
            printf("skipped: %s\n", msg);
        MPI_Finalize();
        return 77;
    }
    CHECK(st == DD_SUCCESS, "context: %s", msg);
    if (ctx) {
        one_type(ctx, 0);
        one_type(ctx, 1);
        generated(ctx);
        dd_context_destroy(ctx);
    }
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("%s (%d failed checks)\n", fails ? "FAILED" : "PASSED", fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
