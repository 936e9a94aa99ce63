/* test_ops_sweep.c — every entry of the library against a serial product
 * on a generated table of shapes and operations, so that no shape that
 * hides a bug (a square op(A), K = 1, fewer rows than ranks, blocks that
 * differ in size) can be left out by choice:
 *
 *   shapes   every (M, N, K) with each of M, N, K in {1, 2, 3, 7} (all of
 *            M = N = K, square op(A) with M = K ≠ N, tall, wide, K = 1,
 *            sizes below and above the grid's, uneven blocks);
 *   ops      transa, transb each in {N, T, C};
 *   scalars  alpha = 1.5, beta = 0 (C poisoned with NaN: it must not be
 *            read) and alpha = -0.5, beta = 2;
 *   entries  dd_gemm, dd_gemm_device (host memory on the CPU backend),
 *            dd_pgemm on ScaLAPACK's block-cyclic layout in place (N/N, the
 *            operands SUMMA's own blocks: api_cyclic.c) and through the
 *            redistribution (offsets inside larger matrices, another block
 *            size, the grid in column order), and a plan whose operands
 *            are streamed in (transposed streams for T and C).
 *
 * Every stored operand is non-symmetric (A(i,j) ≠ A(j,i)), so a transpose
 * that is skipped or applied twice changes C.  The values are small dyadic
 * numbers, so every product is exact; with info->check set, the library's
 * own check must pass on every correct result.  Run at any rank count;
 * DD_SWEEP_BACKEND (default cpu; cuda: exit 77 where there is none) picks
 * the backend, DD_SWEEP_ENTRIES (a comma list of gemm, device, cyclic,
 * redist, plan) narrows the sweep by hand.
 *
 *   test-ops-sweep misload     (with DD_FAULT=misload:*, every op(A) block
 *                              arriving doubled): the check must FAIL,
 *                              naming op(A), though C fits the work blocks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist_plan.h"

static const int64_t sizes[] = {1, 2, 3, 7};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };
static const char ops[] = {'N', 'T', 'C'};
static const double alphas[] = {1.5, -0.5}, betas[] = {0, 2};

/* The stored matrices, non-symmetric and exact in binary. */
static double a_st(int64_t i, int64_t j)
{
    return (double)((i * 7 + j * 3 + 1) % 11 - 5) / 4;
}
static double b_st(int64_t i, int64_t j)
{
    return (double)((i * 5 + j * 2 + 3) % 13 - 6) / 8;
}
static double c_in(int64_t i, int64_t j)
{
    return (double)((i * 3 + j * 11) % 7 - 3) / 2;
}

static int is_t(char t)
{
    return t != 'N';
}

typedef struct {
    int64_t M, N, K;
    char ta, tb;
    double alpha, beta;
} gcase;

static double op_a(const gcase *g, int64_t i, int64_t k)
{
    return is_t(g->ta) ? a_st(k, i) : a_st(i, k);
}
static double op_b(const gcase *g, int64_t k, int64_t j)
{
    return is_t(g->tb) ? b_st(j, k) : b_st(k, j);
}
static double want(const gcase *g, int64_t i, int64_t j)
{
    double s = 0;
    for (int64_t k = 0; k < g->K; k++)
        s += op_a(g, i, k) * op_b(g, k, j);
    return g->alpha * s + (g->beta != 0 ? g->beta * c_in(i, j) : 0);
}

static void describe(const gcase *g, const char *entry, char *buf, size_t n)
{
    snprintf(buf, n, "%s M=%lld N=%lld K=%lld %c%c alpha=%g beta=%g", entry, (long long)g->M,
             (long long)g->N, (long long)g->K, g->ta, g->tb, g->alpha, g->beta);
}

/* ---- the 2-D block layout: dd_gemm and dd_gemm_device ----------------------- */

typedef struct {
    int64_t r0, rows, c0, cols, ld;
    double *v;
} block;

/* This rank's block of a stored R×S matrix f (NaN-poisoned padding). */
static block make_block(int P, int Q, int p, int q, int64_t R, int64_t S,
                        double (*f)(int64_t, int64_t), int poison)
{
    block b;
    dd_block_range(R, P, p, &b.r0, &b.rows);
    dd_block_range(S, Q, q, &b.c0, &b.cols);
    b.ld = b.cols + 2;
    size_t n = (size_t)(b.rows * b.ld + 1);
    b.v = malloc(n * sizeof(double));
    for (size_t x = 0; x < n; x++)
        b.v[x] = NAN;
    for (int64_t i = 0; i < b.rows; i++)
        for (int64_t j = 0; j < b.cols; j++)
            b.v[i * b.ld + j] = poison ? NAN : f(b.r0 + i, b.c0 + j);
    return b;
}

/* Elements of C's block (padding must stay NaN) that differ from want. */
static int64_t block_errors(const gcase *g, const block *c)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t j = 0; j < c->ld; j++) {
            double got = c->v[i * c->ld + j];
            if (j >= c->cols)
                bad += !isnan(got);
            else
                bad += !(fabs(got - want(g, c->r0 + i, c->c0 + j)) <= 1e-12);
        }
    return bad;
}

static int64_t run_block(dd_context *ctx, const gcase *g, int device, dd_gemm_info *info)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    block a = make_block(P, Q, p, q, is_t(g->ta) ? g->K : g->M, is_t(g->ta) ? g->M : g->K, a_st,
                         0);
    block b = make_block(P, Q, p, q, is_t(g->tb) ? g->N : g->K, is_t(g->tb) ? g->K : g->N, b_st,
                         0);
    block c = make_block(P, Q, p, q, g->M, g->N, c_in, g->beta == 0);
    dd_status st =
        (device ? dd_gemm_device : dd_gemm)(ctx, g->ta, g->tb, g->M, g->N, g->K, g->alpha, a.v,
                                            a.ld, b.v, b.ld, g->beta, c.v, c.ld, info);
    int64_t bad = st == DD_SUCCESS ? block_errors(g, &c) : -1;
    free(a.v), free(b.v), free(c.v);
    return bad;
}

/* ---- ScaLAPACK's block-cyclic layout: dd_pgemm ------------------------------- */

typedef struct {
    dd_matrix_desc d;
    int64_t lrows, lcols;
    int pr, pc;
    double *v;
} cyc;

/* Global index of local index l along a dimension cut in blocks of nb over
 * np processes from src, on process me (ScaLAPACK's INDXL2G). */
static int64_t l2g(int64_t l, int64_t nb, int me, int src, int np)
{
    int64_t dist = (me - src + np) % np;
    return (l / nb * np + dist) * nb + l % nb;
}

/* This rank's local array of an m×n global matrix (block mb×nb, first
 * block on (rs, cs), grid in `order`) that holds f at rows [i0, i0 + R)
 * and columns [j0, j0 + S) and a marker elsewhere; poison: NaN there. */
static cyc make_cyc(int rank, int P, int Q, char order, int64_t m, int64_t n, int64_t mb,
                    int64_t nb, int rs, int cs, int64_t i0, int64_t j0, int64_t R, int64_t S,
                    double (*f)(int64_t, int64_t), int poison)
{
    cyc c;
    c.pr = order == 'R' ? rank / Q : rank % P;
    c.pc = order == 'R' ? rank % Q : rank / P;
    c.lrows = dd_numroc(m, mb, c.pr, rs, P);
    c.lcols = dd_numroc(n, nb, c.pc, cs, Q);
    int64_t lld = c.lrows > 0 ? c.lrows + 1 : 1;
    dd_desc_block_cyclic(&c.d, m, n, mb, nb, rs, cs, P, Q, order, lld);
    size_t cnt = (size_t)(lld * (c.lcols > 0 ? c.lcols : 1));
    c.v = malloc(cnt * sizeof(double));
    for (size_t x = 0; x < cnt; x++)
        c.v[x] = 1e30; /* outside the submatrix: must come back as it was */
    for (int64_t lj = 0; lj < c.lcols; lj++)
        for (int64_t li = 0; li < c.lrows; li++) {
            int64_t gi = l2g(li, mb, c.pr, rs, P) - i0, gj = l2g(lj, nb, c.pc, cs, Q) - j0;
            if (gi >= 0 && gi < R && gj >= 0 && gj < S)
                c.v[lj * lld + li] = poison ? NAN : f(gi, gj);
        }
    return c;
}

static int64_t cyc_errors(const gcase *g, const cyc *c, int64_t i0, int64_t j0)
{
    int64_t bad = 0, lld = c->d.lld;
    for (int64_t lj = 0; lj < c->lcols; lj++)
        for (int64_t li = 0; li < c->lrows; li++) {
            int64_t gi = l2g(li, c->d.mb, c->pr, c->d.rsrc, c->d.nprow) - i0;
            int64_t gj = l2g(lj, c->d.nb, c->pc, c->d.csrc, c->d.npcol) - j0;
            double got = c->v[lj * lld + li];
            if (gi >= 0 && gi < g->M && gj >= 0 && gj < g->N)
                bad += !(fabs(got - want(g, gi, gj)) <= 1e-12);
            else
                bad += got != 1e30;
        }
    return bad;
}

/* in_place: every operand block-cyclic with C's distribution on the
 * context's grid in row order, offsets 1 (api_cyclic.c's case); otherwise
 * offsets inside larger matrices, block sizes 2×3, the first block on the
 * last grid row, the grid in column order (the redistribution). */
static int64_t run_cyclic(dd_context *ctx, const gcase *g, int in_place, dd_gemm_info *info)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    char order = in_place ? 'R' : 'C'; /* 'C': the same P×Q, ranks numbered down columns */
    int64_t mb = 2, nb = in_place ? 2 : 3;
    int64_t oi = in_place ? 0 : 1, oj = in_place ? 0 : 2; /* 0-based offsets */
    int rs = in_place ? 0 : P - 1, cs = 0;
    int64_t Ra = is_t(g->ta) ? g->K : g->M, Sa = is_t(g->ta) ? g->M : g->K;
    int64_t Rb = is_t(g->tb) ? g->N : g->K, Sb = is_t(g->tb) ? g->K : g->N;
    cyc a = make_cyc(g_rank, P, Q, order, Ra + 2 * oi, Sa + oj, mb, nb, rs, cs, oi, oj, Ra, Sa,
                     a_st, 0);
    cyc b = make_cyc(g_rank, P, Q, order, Rb + oi, Sb + 2 * oj, mb, nb, rs, cs, oi, oj, Rb, Sb,
                     b_st, 0);
    cyc c = make_cyc(g_rank, P, Q, order, g->M + oi, g->N + oj, mb, nb, rs, cs, oi, oj, g->M, g->N,
                     c_in, g->beta == 0);
    dd_status st = dd_pgemm(ctx, g->ta, g->tb, g->M, g->N, g->K, g->alpha, a.v, oi + 1, oj + 1,
                            &a.d, b.v, oi + 1, oj + 1, &b.d, g->beta, c.v, oi + 1, oj + 1, &c.d,
                            info);
    int64_t bad = st == DD_SUCCESS ? cyc_errors(g, &c, oi, oj) : -1;
    free(a.v), free(b.v), free(c.v);
    return bad;
}

/* ---- plans: operands streamed in ---------------------------------------------- */

typedef struct {
    double (*f)(int64_t, int64_t); /* the stored matrix */
    int64_t r0, c0, width;         /* the stored sub-block's first row and column, width */
} src;

static dd_status fill(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len)
{
    const src *x = s->arg;
    double *out = band;
    (void)msg, (void)len;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < x->width; j++)
            out[i * x->width + j] = x->f(x->r0 + r + i, x->c0 + j);
    return DD_SUCCESS;
}

static int64_t run_plan(dd_context *ctx, const gcase *g, int check, double *residual)
{
    dd_plan_params pp = {DD_FLOAT64, g->M,           g->N, g->K, g->beta != 0, 1,
                         is_t(g->ta) || is_t(g->tb), 0,    0};
    dd_plan *plan = NULL;
    dd_plan_info in;
    memset(&in, 0, sizeof in);
    dd_status st = dd_plan_create(ctx, &pp, &plan);
    if (st == DD_SUCCESS)
        st = dd_plan_get_info(plan, &in);
    if (st == DD_SUCCESS)
        st = dd_plan_allocate(plan);
    /* a transposed stream's stored sub-block is the block's transpose */
    int ta = is_t(g->ta), tb = is_t(g->tb);
    src a = {a_st, ta ? in.col0[0] : in.row0[0], ta ? in.row0[0] : in.col0[0],
             ta ? in.rows[0] : in.cols[0]};
    src b = {b_st, tb ? in.col0[1] : in.row0[1], tb ? in.row0[1] : in.col0[1],
             tb ? in.rows[1] : in.cols[1]};
    src c = {c_in, in.row0[2], in.col0[2], in.cols[2]};
    dd_stream sa = {fill, NULL, &a, ta}, sb = {fill, NULL, &b, tb}, sc = {fill, NULL, &c, 0};
    if (st == DD_SUCCESS)
        st = dd_plan_load(plan, DD_OPERAND_A, &sa);
    if (st == DD_SUCCESS)
        st = dd_plan_load(plan, DD_OPERAND_B, &sb);
    if (st == DD_SUCCESS && g->beta != 0)
        st = dd_plan_load(plan, DD_OPERAND_C, &sc);
    if (st == DD_SUCCESS)
        st = dd_plan_prepare(plan, g->alpha, g->beta, check);
    dd_plan_times t;
    if (st == DD_SUCCESS)
        st = dd_plan_multiply(plan, &t);
    dd_check_result chk = {NAN, 0, NULL};
    if (st == DD_SUCCESS && check)
        st = dd_plan_check(plan, &chk);
    *residual = chk.passed ? chk.residual : -1;
    int64_t bad = -1;
    if (st == DD_SUCCESS) {
        block out = {in.row0[2], in.rows[2], in.col0[2], in.cols[2], in.cols[2] + 1, NULL};
        out.v = malloc((size_t)(out.rows * out.ld + 1) * sizeof(double));
        for (int64_t x = 0; x < out.rows * out.ld + 1; x++)
            out.v[x] = NAN;
        st = dd_plan_read(plan, DD_OPERAND_C, 0, 0, out.rows, out.cols, out.v, out.ld);
        out.cols = out.rows ? out.cols : 0;
        if (st == DD_SUCCESS)
            bad = block_errors(g, &out);
        free(out.v);
    }
    dd_plan_destroy(plan);
    return bad;
}

/* ---- the sweep ------------------------------------------------------------------ */

static int wanted(const char *entry)
{
    const char *list = getenv("DD_SWEEP_ENTRIES");
    if (!list || !*list)
        return 1;
    size_t n = strlen(entry);
    for (const char *s = list; (s = strstr(s, entry)); s += n)
        if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == 0))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = getenv("DD_SWEEP_BACKEND") ? getenv("DD_SWEEP_BACKEND") : "cpu";
    o.panel = 2; /* several panels even at K = 7 */
    dd_context *ctx = NULL;
    char msg[512];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    if (st != DD_SUCCESS) {
        int skip = st == DD_ERROR_UNSUPPORTED && strcmp(o.backend, "cpu") != 0;
        if (g_rank == 0)
            fprintf(stderr, "test_ops_sweep: %s%s\n", skip ? "SKIP: " : "", msg);
        MPI_Finalize();
        return skip ? 77 : 1;
    }
    long calls = 0;
    static const char *entries_misload[] = {"gemm", "device", "redist"};
    if (argc > 1 && strcmp(argv[1], "misload") == 0) {
        /* DD_FAULT=misload:*: every op(A) block arrives doubled, so C is
         * consistent with the work blocks (the residual passes) and only
         * the look at the caller's operands can see it */
        static const gcase bad[] = {{7, 3, 7, 'N', 'N', 1.5, 0}, {7, 3, 7, 'T', 'N', 1.5, 0},
                                    {3, 7, 2, 'C', 'T', -0.5, 2}, {2, 2, 2, 'T', 'T', -0.5, 2}};
        for (int i = 0; i < 4; i++)
            for (int e = 0; e < 3; e++) {
                dd_gemm_info info;
                memset(&info, 0, sizeof info);
                info.check = 1;
                int64_t wrong = e < 2 ? run_block(ctx, &bad[i], e, &info)
                                      : run_cyclic(ctx, &bad[i], 0, &info);
                const char *m = dd_context_last_error(ctx);
                char what[160];
                describe(&bad[i], entries_misload[e], what, sizeof what);
                CHECK(wrong == -1 && !info.check_passed && strstr(m, "the check FAILED: op(A)("),
                      "%s: a doubled op(A) block must fail the check (%lld, passed %d: %s)", what,
                      (long long)wrong, info.check_passed, m);
                calls++;
            }
    }
    static const char *entries[] = {"gemm", "device", "cyclic", "redist", "plan"};
    for (int e = 0; e < 5 && !(argc > 1 && strcmp(argv[1], "misload") == 0); e++) {
        /* dd_gemm_device takes host pointers only on the CPU backend (GPU
         * memory: tests/gpu/test_api_device.c) */
        if (!wanted(entries[e]) || (e == 1 && strcmp(o.backend, "cpu") != 0))
            continue;
        for (int s = 0; s < NSIZES * NSIZES * NSIZES; s++)
            for (int t = 0; t < 9; t++)
                for (int v = 0; v < 2; v++) {
                    gcase g = {sizes[s / (NSIZES * NSIZES)], sizes[s / NSIZES % NSIZES],
                               sizes[s % NSIZES], ops[t / 3], ops[t % 3], alphas[v], betas[v]};
                    if (e == 2 && (g.ta != 'N' || g.tb != 'N'))
                        continue; /* the in-place path is for untransposed operands */
                    int check = (s + t + v) % 2; /* half the calls with the check */
                    dd_gemm_info info;
                    memset(&info, 0, sizeof info);
                    info.check = check;
                    double residual = 0;
                    int64_t bad = e < 2    ? run_block(ctx, &g, e == 1, &info)
                                  : e < 4  ? run_cyclic(ctx, &g, e == 2, &info)
                                           : run_plan(ctx, &g, check, &residual);
                    int passed = e < 4 ? info.check_passed : residual >= 0;
                    char what[160];
                    describe(&g, entries[e], what, sizeof what);
                    CHECK(bad == 0, "%s: %lld wrong elements (-1: the call failed: %s)", what,
                          (long long)bad, dd_context_last_error(ctx));
                    CHECK(!check || passed, "%s: a correct C and the check did not pass", what);
                    calls++;
                }
    }
    int fails = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_ops_sweep: %ld calls on %d ranks, %d failed assertions\n", calls, g_size,
               fails);
    dd_context_destroy(ctx);
    MPI_Finalize();
    return fails != 0;
}
