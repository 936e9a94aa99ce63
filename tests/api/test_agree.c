/* test_agree.c — ranks that pass different arguments (dgemm_dist.h, "What
 * the library promises": every argument agreed or refused on every rank,
 * no hang, no abort).  Rank 0 passes one value and every other rank
 * another:
 *   - each of dd_context_options' fields (backend, comm, kernel, panel,
 *     lookahead, grid, threads, type, tune): refused on every rank with one
 *     message naming the option and both values, no context made;
 *   - dd_gemm on rank 0, dd_sgemm elsewhere: refused, naming the entries;
 *   - transb 'N' and 'n', transa 'T' and 'c': the same operation, computed;
 *   - dd_pgemm offsets 2^53 + 1 and 2^53 (alike as doubles): refused;
 *   - dd_plan_prepare with a NaN alpha on one rank (rank 0, then the
 *     last); dd_plan_generate's
 *     seed; dd_plan_load's operand; dd_plan_create's passes: refused;
 *   - a failure of one rank's multiply clock before any panel moves
 *     (DD_FAULT=phase:<rank>): agreed, the peers not left in a broadcast;
 *     one rank without its exchange buffers (DD_FAULT=exchange-alloc:<rank>),
 *     in one all-to-all and in rounds: agreed, none left in the exchange.
 * At 1 rank each case runs with rank 0's values (and is computed, or
 * refused for its own reason).  Every call is bounded by the test's
 * timeout: a hang fails it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd.h" /* dd_err for same_everywhere */
#include "dd_check.h"
#include "dgemm_dist_plan.h"
#include "api_case.h"

enum { N3 = 3 };

/* the status and message of a call, the same on every rank */
static int others(void)
{
    return g_rank > 0;
}

/* "options:NAME" on the command line: that option's case alone */
static const char *g_option;

/* One option differing between rank 0 and the rest: refused everywhere
 * with the option's name and both values in the message. */
static void option_case(const char *what, dd_context_options *o, const char *v0, const char *v1)
{
    if (g_option && strcmp(g_option, what))
        return;
    dd_context *ctx = (dd_context *)1;
    char msg[512] = "";
    dd_status st = dd_context_create(MPI_COMM_WORLD, o, &ctx, msg, sizeof msg);
    if (g_size == 1) {
        CHECK(st == DD_SUCCESS && ctx, "%s at 1 rank: %s: %s", what, dd_status_string(st), msg);
        dd_context_destroy(st == DD_SUCCESS ? ctx : NULL);
        return;
    }
    CHECK(st == DD_ERROR_USAGE && !ctx, "%s differing: %s: %s", what, dd_status_string(st), msg);
    CHECK(strstr(msg, what) && strstr(msg, v0) && strstr(msg, v1),
          "%s differing: the message names neither it nor '%s' and '%s': %s", what, v0, v1, msg);
    CHECK(api_agreed(st, msg), "%s differing: not agreed", what);
    if (st == DD_SUCCESS)
        dd_context_destroy(ctx);
}

static void test_options(void)
{
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = others() ? "cuda" : "cpu"; /* cuda: absent here, or a GPU elsewhere */
    option_case("backend", &o, "'cpu'", "'cuda'");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.comm = others() ? "auto" : "mpi";
    option_case("comm", &o, "'mpi'", "'auto'");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.kernel = others() ? "openblas" : NULL;
    option_case("kernel", &o, "0", "1");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.panel = others() ? 3 : 2;
    option_case("panel", &o, "2", "3");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.lookahead = others() ? 2 : 1;
    option_case("lookahead", &o, "1", "2");
    dd_context_options_init(&o); /* the grid: 1 x size against size x 1 */
    o.backend = "cpu";
    o.P = others() ? g_size : 1;
    o.Q = others() ? 1 : g_size;
    option_case("P", &o, "1", g_size == 2 ? "2" : g_size == 3 ? "3" : "4");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.threads = others() ? 2 : 1;
    option_case("threads", &o, "1", "2");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.type = others() ? DD_FLOAT32 : DD_FLOAT64;
    option_case("type", &o, "0", "1");
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.tune = others() ? 1 : 0;
    option_case("tune", &o, "0", "1");
}

/* my blocks of 3x3 A, B, C in the 2-D block layout, exact small values */
typedef struct {
    int P, Q, p, q;
    int64_t m0, Mp, n0, Nq, k0, Kq, kp0, Kp;
    double A[9], B[9], C[9];
    float As[9], Bs[9], Cs[9];
} blocks;

static double av(int64_t i, int64_t k)
{
    return (double)(i - 2 * k);
}
static double bv(int64_t k, int64_t j)
{
    return (double)(3 * k + j - 4);
}

static void fill(dd_context *ctx, blocks *b)
{
    dd_context_grid(ctx, &b->P, &b->Q, &b->p, &b->q);
    dd_block_range(N3, b->P, b->p, &b->m0, &b->Mp);
    dd_block_range(N3, b->Q, b->q, &b->n0, &b->Nq);
    dd_block_range(N3, b->Q, b->q, &b->k0, &b->Kq);
    dd_block_range(N3, b->P, b->p, &b->kp0, &b->Kp);
    for (int64_t i = 0; i < b->Mp; i++)
        for (int64_t k = 0; k < b->Kq; k++)
            b->As[i * N3 + k] = (float)(b->A[i * N3 + k] = av(b->m0 + i, b->k0 + k));
    for (int64_t k = 0; k < b->Kp; k++)
        for (int64_t j = 0; j < b->Nq; j++)
            b->Bs[k * N3 + j] = (float)(b->B[k * N3 + j] = bv(b->kp0 + k, b->n0 + j));
    for (int i = 0; i < 9; i++)
        b->C[i] = b->Cs[i] = -99;
}

/* C = op(A)·op(B) with 'N' everywhere (A and B as stored) */
static int c_right(const blocks *b)
{
    for (int64_t i = 0; i < b->Mp; i++)
        for (int64_t j = 0; j < b->Nq; j++) {
            double s = 0;
            for (int64_t k = 0; k < N3; k++)
                s += av(b->m0 + i, k) * bv(k, b->n0 + j);
            if (b->C[i * N3 + j] != s)
                return 0;
        }
    return 1;
}

static void test_gemm(dd_context *ctx)
{
    blocks b;
    fill(ctx, &b);
    char msg[512];
    /* the element type: dd_gemm on rank 0, dd_sgemm elsewhere */
    dd_status st =
        others() ? dd_sgemm(ctx, 'N', 'N', N3, N3, N3, 1, b.As, N3, b.Bs, N3, 0, b.Cs, N3, NULL)
                 : dd_gemm(ctx, 'N', 'N', N3, N3, N3, 1, b.A, N3, b.B, N3, 0, b.C, N3, NULL);
    snprintf(msg, sizeof msg, "%s", dd_context_last_error(ctx));
    if (g_size == 1) {
        CHECK(st == DD_SUCCESS && c_right(&b), "dd_gemm alone: %s", msg);
    } else {
        CHECK(st == DD_ERROR_USAGE && strstr(msg, "dd_sgemm") && strstr(msg, "dd_gemm on rank 0"),
              "dd_gemm against dd_sgemm: %s: %s", dd_status_string(st), msg);
        CHECK(api_agreed(st, msg), "dd_gemm against dd_sgemm: not agreed");
    }
    /* 'N' and 'n' are one operation: computed, not refused */
    fill(ctx, &b);
    dd_gemm_info info = {.check = 1};
    st =
        dd_gemm(ctx, 'N', others() ? 'n' : 'N', N3, N3, N3, 1, b.A, N3, b.B, N3, 0, b.C, N3, &info);
    CHECK(st == DD_SUCCESS && c_right(&b) && info.check_passed, "transb 'N' and 'n': %s: %s",
          dd_status_string(st), dd_context_last_error(ctx));
    /* 'T' and 'c' likewise: A stored transposed (K x M), here A^T = A's
     * values at (k, i) */
    int64_t r0, rA, c0, cA;
    dd_block_range(N3, b.P, b.p, &r0, &rA);
    dd_block_range(N3, b.Q, b.q, &c0, &cA);
    double At[9];
    for (int64_t k = 0; k < rA; k++)
        for (int64_t i = 0; i < cA; i++)
            At[k * N3 + i] = av(c0 + i, r0 + k);
    fill(ctx, &b);
    st = dd_gemm(ctx, others() ? 'c' : 'T', 'N', N3, N3, N3, 1, At, N3, b.B, N3, 0, b.C, N3, NULL);
    CHECK(st == DD_SUCCESS && c_right(&b), "transa 'T' and 'c': %s: %s", dd_status_string(st),
          dd_context_last_error(ctx));
}

/* offsets that a double cannot tell apart: 2^53 + 1 on rank 0, 2^53
 * elsewhere (descriptors alike, local arrays that the call never reaches) */
static void test_exact_offsets(dd_context *ctx)
{
    if (g_size == 1)
        return; /* rank 0's offset alone would address its (tiny) array */
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t big = (int64_t)1 << 53;
    dd_matrix_desc d;
    CHECK(dd_desc_block_cyclic(&d, 1, big + 2, 1, 1, 0, 0, P, Q, 'R', 1) == DD_SUCCESS,
          "descriptor");
    double A[1] = {1}, B[1] = {1}, C[1] = {7};
    dd_gemm_info info = {0};
    dd_status st = dd_pgemm(ctx, 'N', 'N', 1, 1, 1, 1, A, 1, others() ? big : big + 1, &d, B, 1, 1,
                            &d, 0, C, 1, 1, &d, &info);
    const char *msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_USAGE && strstr(msg, "ja differs") && C[0] == 7,
          "ja 2^53 + 1 against 2^53: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "ja 2^53 + 1 against 2^53: not agreed");
}

/* one rank's multiply clock fails before any panel moves: agreed */
static void test_phase_fault(dd_context *ctx)
{
    blocks b;
    fill(ctx, &b);
    char spec[32];
    snprintf(spec, sizeof spec, "phase:%d", g_size - 1);
    setenv("DD_FAULT", spec, 1);
    dd_status st = dd_gemm(ctx, 'N', 'N', N3, N3, N3, 1, b.A, N3, b.B, N3, 0, b.C, N3, NULL);
    unsetenv("DD_FAULT");
    const char *msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_INTERNAL && strstr(msg, "injected fault in the multiply's clock"),
          "a failed clock on rank %d: %s: %s", g_size - 1, dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "a failed clock: not agreed");
    fill(ctx, &b);
    st = dd_gemm(ctx, 'N', 'N', N3, N3, N3, 1, b.A, N3, b.B, N3, 0, b.C, N3, NULL);
    CHECK(st == DD_SUCCESS && c_right(&b), "after a failed clock: %s", dd_context_last_error(ctx));
}

/* one rank's exchange buffers not had (DD_FAULT=exchange-alloc:<last>),
 * in the one-call exchange and in rounds (DD_REDIST_LIMIT=1): agreed, no
 * rank left in the all-to-all.  A transposed A is exchanged among the ranks
 * (at 1 rank it is turned in place: nothing fails). */
static void test_exchange_alloc(dd_context *ctx)
{
    blocks b;
    int64_t r0, rA, c0, cA;
    char spec[40];
    snprintf(spec, sizeof spec, "exchange-alloc:%d", g_size - 1);
    for (int rounds = 0; rounds < 2; rounds++) {
        fill(ctx, &b);
        dd_block_range(N3, b.P, b.p, &r0, &rA);
        dd_block_range(N3, b.Q, b.q, &c0, &cA);
        double At[9];
        for (int64_t k = 0; k < rA; k++)
            for (int64_t i = 0; i < cA; i++)
                At[k * N3 + i] = av(c0 + i, r0 + k);
        setenv("DD_FAULT", spec, 1);
        if (rounds)
            setenv("DD_REDIST_LIMIT", "1", 1);
        dd_status st = dd_gemm(ctx, 'T', 'N', N3, N3, N3, 1, At, N3, b.B, N3, 0, b.C, N3, NULL);
        unsetenv("DD_FAULT");
        unsetenv("DD_REDIST_LIMIT");
        const char *msg = dd_context_last_error(ctx);
        if (g_size == 1) {
            CHECK(st == DD_SUCCESS && c_right(&b), "exchange at 1 rank: %s", msg);
            continue;
        }
        CHECK(st == DD_ERROR_MEMORY && strstr(msg, rounds ? "datatypes" : "counts"),
              "no exchange buffers on rank %d%s: %s: %s", g_size - 1, rounds ? " (rounds)" : "",
              dd_status_string(st), msg);
        CHECK(api_agreed(st, msg), "no exchange buffers%s: not agreed", rounds ? " (rounds)" : "");
    }
}

/* a stream of zeros */
static dd_status zeros(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len)
{
    (void)r, (void)msg, (void)len;
    memset(band, 0, (size_t)h * (size_t)(intptr_t)s->arg * sizeof(double));
    return DD_SUCCESS;
}

static void test_plans(dd_context *ctx)
{
    /* the plan's parameters: passes differing */
    dd_plan_params pp = {.type = DD_FLOAT64, .M = N3, .N = N3, .K = N3, .passes = others() ? 2 : 1};
    dd_plan *plan = NULL;
    dd_status st = dd_plan_create(ctx, &pp, &plan);
    const char *msg = dd_context_last_error(ctx);
    if (g_size > 1) {
        CHECK(st == DD_ERROR_USAGE && !plan && strstr(msg, "passes differs"),
              "passes differing: %s: %s", dd_status_string(st), msg);
        CHECK(api_agreed(st, msg), "passes differing: not agreed");
    } else {
        CHECK(st == DD_SUCCESS, "plan at 1 rank: %s", msg);
        dd_plan_destroy(plan);
    }
    pp.passes = 1;
    plan = NULL;
    st = dd_plan_create(ctx, &pp, &plan);
    CHECK(st == DD_SUCCESS && (st = dd_plan_allocate(plan)) == DD_SUCCESS, "plan: %s",
          dd_context_last_error(ctx));
    if (st != DD_SUCCESS) {
        dd_plan_destroy(plan);
        return;
    }
    dd_plan_info in;
    dd_plan_get_info(plan, &in);
    /* dd_plan_generate's seed differing */
    st = dd_plan_generate(plan, DD_OPERAND_A, others() ? 8 : 7, 0);
    msg = dd_context_last_error(ctx);
    CHECK(g_size == 1 ? st == DD_SUCCESS : st == DD_ERROR_USAGE && strstr(msg, "seed differs"),
          "generate's seed differing: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "generate's seed: not agreed");
    /* dd_plan_load's operand differing (A on rank 0, B elsewhere) */
    int w = others() ? DD_OPERAND_B : DD_OPERAND_A;
    dd_stream s = {zeros, NULL, (void *)(intptr_t)in.cols[w], 0};
    st = dd_plan_load(plan, (dd_operand)w, &s);
    msg = dd_context_last_error(ctx);
    CHECK(g_size == 1 ? st == DD_SUCCESS
                      : st == DD_ERROR_USAGE && strstr(msg, "operand differs between ranks"),
          "load's operand differing: %s: %s", dd_status_string(st), msg);
    CHECK(api_agreed(st, msg), "load's operand: not agreed");
    /* a NaN alpha on rank 0 (the comparison's root), then on the last
     * rank: its own check refuses it, and every rank still compares the
     * scalars (no rank left in the broadcast) */
    for (int bad = 0; bad<g_size; bad += g_size - 1> 0 ? g_size - 1 : 1) {
        double alpha = g_rank == bad ? NAN : 1;
        st = dd_plan_prepare(plan, alpha, 0, 0);
        msg = dd_context_last_error(ctx);
        CHECK(st == DD_ERROR_USAGE && strstr(msg, "finite"), "NaN alpha on rank %d: %s: %s", bad,
              dd_status_string(st), msg);
        CHECK(api_agreed(st, msg), "NaN alpha on rank %d: not agreed", bad);
    }
    /* and alike it is prepared */
    st = dd_plan_prepare(plan, 1, 0, 0);
    CHECK(st == DD_SUCCESS, "prepare after the refusal: %s", dd_context_last_error(ctx));
    dd_plan_destroy(plan);
}

/* argv[1], when given, runs the one case of that name (the others are
 * skipped): a hang or crash in one case then says which */
static int only(int argc, char **argv, const char *name)
{
    if (argc >= 2 && !strncmp(argv[1], "options:", 8) && !strcmp(name, "options"))
        g_option = argv[1] + 8;
    return api_case(argc, argv, name) || (g_option && !strcmp(name, "options"));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    if (only(argc, argv, "options"))
        test_options();
    dd_context *ctx = api_cpu_context(1);
    if (ctx) {
        if (only(argc, argv, "gemm"))
            test_gemm(ctx);
        if (only(argc, argv, "exact_offsets"))
            test_exact_offsets(ctx);
        if (only(argc, argv, "exchange_alloc"))
            test_exchange_alloc(ctx);
        if (only(argc, argv, "phase_fault"))
            test_phase_fault(ctx);
        if (only(argc, argv, "plans"))
            test_plans(ctx);
        dd_context_destroy(ctx);
    }
    return api_finish("test-agree");
}
