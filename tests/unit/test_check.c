/* test_check.c — the HPL-style check (src/core/check.c) at any rank count.
 *
 *   mpirun -n R test-check exact|wrong|huge|nonfinite|beta|chunks|line
 *
 * Distributed A (M×K), B (K×N) are laid out as the driver lays them out
 * (grid_default, grid_block, rng_fill_block); each rank computes its block of
 * C = A·B exactly (long double, from the global generator), then the check
 * is asked about that C and about perturbed copies of it:
 *   exact     exact C passes, f64 and f32;
 *   wrong     one element off by a relative 1e-6 (f64) / 1e-2 (f32) fails,
 *             one off by 1e-13 (f64) still passes;
 *   huge      inputs scaled by powers of two near the ends of the range
 *             (|a| up to DBL_MAX/4, ||A||·||B|| > DBL_MAX, 2^±900, tiny,
 *             cancelling pairs): exact C passes, perturbed C fails;
 *   nonfinite NaN / Inf in C, A or B fails, "not meaningful";
 *   beta      GEMM's beta·C_in term (check_c_input): C = A·B + beta·C_in
 *             passes, C_in left out or beta applied twice fails, C_in far
 *             above or below A·B in scale, NaN in C_in not meaningful;
 *   chunks    check_allreduce in pieces of a few elements;
 *   line      check_line's text.
 * Rank 0 prints each figure.  Exit status 0 only when every check on every
 * rank passed. */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#define DD_CHECK_MPI
#define DD_CHECK_MATRICES
#include "dd_check.h"
#include "engine.h"
#include "grid.h"
#include "rng.h"

static dd_engine g_eng;          /* the CPU engine: work memory is host memory */
static const check_cterm *g_cin; /* beta·C_in's part of the check, or NULL */

enum { TM = 37, TN = 29, TK = 26 }; /* K even: cancelling pairs; 13 | 13 splits a pair */
static const uint64_t SEED = 7, XSEED = 99;

/* How A and B are made from the generator: scaled by 2^ea, 2^eb; with
 * pairs, column 2k+1 of A repeats column 2k and row 2k+1 of B is minus row
 * 2k, so A·B = 0 exactly whatever the scale. */
typedef struct {
    const char *name;
    int ea, eb, pairs;
} shape;

typedef struct {
    dd_grid g;
    MPI_Comm row;
    dd_dtype t;
    shape s;
    dd_range rm, rn, rkq, rkp;
    void *A, *B, *C;
} prob;

static double base(dd_dtype t, uint64_t tag, int64_t i, int64_t j, int64_t cols)
{
    double v = rng_value(SEED, tag, (uint64_t)(i * cols + j));
    return t == DD_F64 ? v : (double)(float)v;
}
static double aval(const prob *p, int64_t i, int64_t k)
{
    return ldexp(base(p->t, RNG_TAG_A, i, p->s.pairs ? k & ~1 : k, TK), p->s.ea);
}
static double bval(const prob *p, int64_t k, int64_t j)
{
    double v = ldexp(base(p->t, RNG_TAG_B, p->s.pairs ? k & ~1 : k, j, TN), p->s.eb);
    return p->s.pairs && (k & 1) ? -v : v;
}
/* One block of A or B: the driver's fill, checked against the test's own
 * view of the generator, then shaped. */
static void fill(const prob *p, void *m, uint64_t tag, dd_range r, dd_range c, int64_t gcols)
{
    rng_fill_block(m, p->t, SEED, tag, r.start, r.len, c.start, c.len, gcols);
    for (int64_t i = 0; i < r.len; i++)
        for (int64_t j = 0; j < c.len; j++) {
            int64_t gi = r.start + i, gj = c.start + j, at = i * c.len + j;
            CHECK(tm_get(m, p->t, at) == base(p->t, tag, gi, gj, gcols),
                  "generator layout (%lld,%lld)", (long long)gi, (long long)gj);
            tm_put(m, p->t, at, tag == RNG_TAG_A ? aval(p, gi, gj) : bval(p, gi, gj));
        }
}

/* My blocks of A, B and of C = A·B exactly: 0 for pairs, else a long double
 * sum rounded once. */
static void build(prob *p, dd_dtype t, shape s)
{
    p->t = t;
    p->s = s;
    p->rm = grid_block(TM, p->g.P, p->g.p);
    p->rn = grid_block(TN, p->g.Q, p->g.q);
    p->rkq = grid_block(TK, p->g.Q, p->g.q);
    p->rkp = grid_block(TK, p->g.P, p->g.p);
    fill(p, p->A, RNG_TAG_A, p->rm, p->rkq, TK);
    fill(p, p->B, RNG_TAG_B, p->rkp, p->rn, TN);
    for (int64_t i = 0; i < p->rm.len; i++)
        for (int64_t j = 0; j < p->rn.len; j++) {
            long double sum = 0;
            for (int64_t k = 0; k < TK && !s.pairs; k++)
                sum += (long double)aval(p, p->rm.start + i, k) *
                       (long double)bval(p, k, p->rn.start + j);
            tm_put(p->C, t, i * p->rn.len + j, (double)sum);
            CHECK(isfinite(tm_get(p->C, t, i * p->rn.len + j)), "%s: exact C not finite", s.name);
        }
}

/* Rank 0's element of C with the largest |c·x_j| (the one a perturbation
 * shows most), or -1 when rank 0 has no C. */
static int64_t target(const prob *p)
{
    int64_t best = -1;
    double bv = -1;
    for (int64_t i = 0; g_rank == 0 && i < p->rm.len; i++)
        for (int64_t j = 0; j < p->rn.len; j++) {
            double v = fabs(tm_get(p->C, p->t, i * p->rn.len + j)) *
                       fabs(rng_value(XSEED, RNG_TAG_X, (uint64_t)(p->rn.start + j)));
            if (v > bv) {
                bv = v;
                best = i * p->rn.len + j;
            }
        }
    return best;
}

static check_result run_check(const prob *p, const char *what)
{
    check_result r;
    memset(&r, 0, sizeof r);
    dd_err err = {{0}};
    int rc = check_product(MPI_COMM_WORLD, p->row, &p->g, &g_eng, p->t, TM, TN, TK, p->A, p->B,
                           p->C, g_cin, XSEED, &r, &err);
    CHECK(rc == DD_OK, "%s: check_product rc %d: %s", what, rc, err.msg);
    char line[256];
    check_line(&r, line, sizeof line);
    if (g_rank == 0)
        printf("%-44s %s %s\n", what, dd_dtype_name(p->t), line);
    return r;
}

static void expect_pass(const prob *p, const char *what)
{
    check_result r = run_check(p, what);
    CHECK(r.passed == 1 && r.residual < DD_CHECK_THRESHOLD && r.why_not == NULL,
          "%s: passed %d residual %g why_not %s", what, r.passed, r.residual,
          r.why_not ? r.why_not : "-");
}

static void expect_fail(const prob *p, const char *what)
{
    check_result r = run_check(p, what);
    CHECK(r.passed == 0 && r.residual >= DD_CHECK_THRESHOLD && r.why_not == NULL,
          "%s: passed %d residual %g why_not %s", what, r.passed, r.residual,
          r.why_not ? r.why_not : "-");
}

/* FAILED and not meaningful, the reason naming `who`. */
static void expect_not_meaningful(const prob *p, const char *what, const char *who)
{
    check_result r = run_check(p, what);
    CHECK(r.passed == 0 && isnan(r.residual) && r.why_not && strstr(r.why_not, who),
          "%s: passed %d residual %g why_not %s", what, r.passed, r.residual,
          r.why_not ? r.why_not : "-");
}

/* Multiply rank 0's target element of C by (1 + rel). */
static void perturb(prob *p, double rel)
{
    int64_t at = target(p);
    if (at < 0)
        return;
    double old = tm_get(p->C, p->t, at);
    tm_put(p->C, p->t, at, old * (1 + rel));
    CHECK(tm_get(p->C, p->t, at) != old, "perturbation by %g lost", rel);
}

/* max ||A||_oo * ||B||_oo of the global matrices, in long double */
static long double norms_product(const prob *p)
{
    long double an = 0, bn = 0;
    for (int64_t i = 0; i < TM; i++) {
        long double s = 0;
        for (int64_t k = 0; k < TK; k++)
            s += fabsl((long double)aval(p, i, k));
        an = s > an ? s : an;
    }
    for (int64_t k = 0; k < TK; k++) {
        long double s = 0;
        for (int64_t j = 0; j < TN; j++)
            s += fabsl((long double)bval(p, k, j));
        bn = s > bn ? s : bn;
    }
    return an * bn;
}

static void case_exact(prob *p)
{
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    expect_pass(p, "exact C passes");
    build(p, DD_F32, (shape){"plain", 0, 0, 0});
    expect_pass(p, "exact C passes");
}

static void case_wrong(prob *p)
{
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    perturb(p, 1e-6);
    expect_fail(p, "one element off by 1e-6 fails");
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    perturb(p, 1e-13);
    expect_pass(p, "one element off by 1e-13 passes");
    build(p, DD_F32, (shape){"plain", 0, 0, 0});
    perturb(p, 1e-2);
    expect_fail(p, "one element off by 1e-2 fails");
}

static void case_huge(prob *p)
{
    static const shape shapes[] = {
        {"|a| to DBL_MAX/4 (2^1022), b 2^-1000", 1022, -1000, 0},
        {"a 2^-1000, |b| to DBL_MAX/4 (2^1022)", -1000, 1022, 0},
        {"a 2^619, b 2^400: ||A||*||B|| > DBL_MAX", 619, 400, 0},
        {"a 2^900, b 2^-900", 900, -900, 0},
        {"a 2^-500, b 2^-500 (tiny)", -500, -500, 0},
    };
    char what[128];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        build(p, DD_F64, shapes[i]);
        if (strstr(shapes[i].name, "> DBL_MAX"))
            CHECK(norms_product(p) > (long double)DBL_MAX, "premise: ||A||*||B|| = %Lg",
                  norms_product(p));
        snprintf(what, sizeof what, "%s, exact", shapes[i].name);
        expect_pass(p, what);
        perturb(p, 1e-6);
        snprintf(what, sizeof what, "%s, 1e-6 off", shapes[i].name);
        expect_fail(p, what);
    }
    /* ||A||*||B|| ~ 2^1200 while C = 0: no finite C is wrong by 16 bounds */
    build(p, DD_F64, (shape){"pairs", 600, 600, 1});
    CHECK(norms_product(p) > ldexpl((long double)DBL_MAX, 150), "premise: ||A||*||B|| = %Lg",
          norms_product(p));
    expect_pass(p, "a, b 2^600 cancelling pairs, C = 0 exact");
}

static void case_nonfinite(prob *p)
{
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    perturb(p, NAN);
    expect_not_meaningful(p, "NaN in C fails", "C");
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    perturb(p, INFINITY);
    expect_not_meaningful(p, "Inf in C fails", "C");
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    /* on the last rank: the others must learn of it */
    if (g_rank == g_size - 1 && p->rm.len * p->rkq.len > 0)
        tm_put(p->A, p->t, 0, NAN);
    expect_not_meaningful(p, "NaN in A fails (last rank)", "A holds");
    build(p, DD_F64, (shape){"plain", 0, 0, 0});
    if (g_rank == g_size - 1 && p->rkp.len * p->rn.len > 0)
        tm_put(p->B, p->t, 0, -INFINITY);
    expect_not_meaningful(p, "-Inf in B fails (last rank)", "B holds");
    build(p, DD_F32, (shape){"plain", 0, 0, 0});
    perturb(p, NAN);
    expect_not_meaningful(p, "NaN in C fails", "C");
    build(p, DD_F64, (shape){"pairs", 600, 600, 1});
    if (g_rank == 0)
        tm_put(p->C, p->t, 0, INFINITY);
    expect_not_meaningful(p, "Inf in C, a, b 2^600 pairs, fails", "C");
}

/* GEMM's beta: my block of beta·C_in (2^ec-scaled generator values times
 * beta, in the type) into cin, and C = A·B + k·beta·C_in exactly (one
 * rounding of a long double sum); k = 1 is the right C. */
static void build_beta(prob *p, dd_dtype t, double beta, int ec, double k, void *cin)
{
    build(p, t, (shape){"plain", 0, 0, 0});
    for (int64_t i = 0; i < p->rm.len; i++)
        for (int64_t j = 0; j < p->rn.len; j++) {
            int64_t gi = p->rm.start + i, gj = p->rn.start + j, at = i * p->rn.len + j;
            double c = ldexp(rng_value(SEED, RNG_TAG_C, (uint64_t)(gi * TN + gj)), ec);
            tm_put(cin, t, at, t == DD_F64 ? c * beta : (double)((float)c * (float)beta));
            long double sum = k * (long double)tm_get(cin, t, at);
            for (int64_t kk = 0; kk < TK; kk++)
                sum += (long double)aval(p, gi, kk) * (long double)bval(p, kk, gj);
            tm_put(p->C, t, at, (double)sum);
        }
}

static void beta_case(prob *p, dd_dtype t, double beta, int ec, double k, const char *what,
                      int pass)
{
    void *cin = malloc(sizeof(double) * TM * TN);
    build_beta(p, t, beta, ec, k, cin);
    check_cterm ct;
    dd_err err = {{0}};
    int rc = check_c_input(MPI_COMM_WORLD, &p->g, &g_eng, t, TM, TN, cin, XSEED, &ct, &err);
    CHECK(rc == DD_OK, "%s: check_c_input: %s", what, err.msg);
    g_cin = &ct;
    if (pass)
        expect_pass(p, what);
    else
        expect_fail(p, what);
    g_cin = NULL;
    check_cterm_free(&ct);
    free(cin);
}

static void case_beta(prob *p)
{
    for (int ti = 0; ti < 2; ti++) {
        dd_dtype t = ti ? DD_F32 : DD_F64;
        beta_case(p, t, 2.5, 0, 1, "C = A·B + 2.5·C_in passes", 1);
        beta_case(p, t, -0.5, 0, 1, "C = A·B - 0.5·C_in passes", 1);
        beta_case(p, t, 2.5, 0, 0, "beta·C_in left out fails", 0);
        beta_case(p, t, 2.5, 0, 2, "beta applied twice fails", 0);
        beta_case(p, t, 2.5, -30, 1.0001, "beta·C_in tiny beside A·B, 1e-4 off, passes", 1);
        beta_case(p, t, 1, 30, 1, "beta·C_in 2^30 beside A·B passes", 1);
        beta_case(p, t, 1, 30, 1 + 1e-3, "beta·C_in 2^30 beside A·B, 1e-3 off, fails", 0);
    }
    beta_case(p, DD_F64, 1, 900, 1, "C_in 2^900 (scaled by its own exponent) passes", 1);
    beta_case(p, DD_F64, 1, 900, 1 + 1e-9, "C_in 2^900, 1e-9 off, fails", 0);
    /* NaN in beta·C_in: not meaningful, whatever C is */
    void *cin = malloc(sizeof(double) * TM * TN);
    build_beta(p, DD_F64, 2, 0, 1, cin);
    if (g_rank == g_size - 1 && p->rm.len * p->rn.len > 0)
        tm_put(cin, DD_F64, 0, NAN);
    check_cterm ct;
    dd_err err = {{0}};
    CHECK(check_c_input(MPI_COMM_WORLD, &p->g, &g_eng, DD_F64, TM, TN, cin, XSEED, &ct, &err) ==
              DD_OK,
          "check_c_input: %s", err.msg);
    g_cin = &ct;
    expect_not_meaningful(p, "NaN in C's input (last rank) fails", "C's input");
    g_cin = NULL;
    check_cterm_free(&ct);
    free(cin);
}

/* check_allreduce in pieces of 3 and whole, in place and not, SUM and MAX. */
static void case_chunks(void)
{
    enum { N = 10 };
    double s[N], r[N];
    int64_t chunks[] = {3, 1, 0, N};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < N; i++) {
                s[i] = g_rank + 1 + 100.0 * i;
                r[i] = inplace ? s[i] : -1;
            }
            dd_err err = {{0}};
            int rc = check_allreduce(inplace ? MPI_IN_PLACE : (const void *)s, r, N, MPI_SUM,
                                     MPI_COMM_WORLD, chunks[c], &err);
            CHECK(rc == DD_OK, "chunk %lld: %s", (long long)chunks[c], err.msg);
            for (int i = 0; i < N; i++) {
                double want = g_size * (g_size + 1) / 2.0 + 100.0 * i * g_size;
                CHECK(r[i] == want, "chunk %lld inplace %d: r[%d] = %g, want %g",
                      (long long)chunks[c], inplace, i, r[i], want);
            }
            rc = check_allreduce(s, r, N - 1, MPI_MAX, MPI_COMM_WORLD, chunks[c], &err);
            CHECK(rc == DD_OK && r[N - 2] == g_size + 100.0 * (N - 2), "chunk %lld MAX: r[%d] = %g",
                  (long long)chunks[c], N - 2, r[N - 2]);
            r[0] = -7;
            rc = check_allreduce(s, r, 0, MPI_SUM, MPI_COMM_WORLD, chunks[c], &err);
            CHECK(rc == DD_OK && r[0] == -7, "n = 0 touched the buffer");
        }
    if (g_rank == 0)
        printf("check_allreduce: pieces of 3, 1, INT_MAX, 10; in place and not; SUM, MAX; n 0\n");
}

static void case_line(void)
{
    char buf[256];
    check_result r = {0.021, 1, NULL};
    check_line(&r, buf, sizeof buf);
    CHECK(!strcmp(buf, "||C x - A(B x)||_oo / (eps * k * ||A||_oo * ||B||_oo * ||x||_oo) = "
                       "2.1e-02 ...... PASSED"),
          "%s", buf);
    r = (check_result){20.0, 0, NULL};
    check_line(&r, buf, sizeof buf);
    CHECK(!strcmp(buf, "||C x - A(B x)||_oo / (eps * k * ||A||_oo * ||B||_oo * ||x||_oo) = "
                       "2.0e+01 ...... FAILED"),
          "%s", buf);
    r = (check_result){NAN, 0, "A holds NaN or Inf"};
    check_line(&r, buf, sizeof buf);
    size_t n = strlen(buf);
    CHECK(strstr(buf, "= not meaningful (A holds NaN or Inf) ") && n > 6 &&
              !strcmp(buf + n - 6, "FAILED") && !strstr(buf, "PASSED"),
          "%s", buf);
    if (g_rank == 0)
        printf("check_line: %s\n", buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *what = argc > 1 ? argv[1] : "";
    prob p;
    memset(&p, 0, sizeof p);
    int P, Q;
    grid_default(g_size, &P, &Q);
    p.g = grid_make(P, Q, g_rank);
    if (MPI_Comm_split(MPI_COMM_WORLD, p.g.p, p.g.q, &p.row) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Comm_split failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    g_eng.ops = &dd_engine_cpu;
    dd_engine_cfg cfg = {MPI_COMM_WORLD, MPI_COMM_SELF, DD_F64, NULL, 1};
    dd_err oerr = {{0}};
    if (g_eng.ops->open(&g_eng, &cfg, &oerr) != DD_OK) {
        fprintf(stderr, "CPU engine open failed: %s\n", oerr.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t big = sizeof(double) * (size_t)(TM * TK + TK * TN + TM * TN);
    p.A = malloc(big);
    p.B = malloc(big);
    p.C = malloc(big);
    if (!strcmp(what, "exact"))
        case_exact(&p);
    else if (!strcmp(what, "wrong"))
        case_wrong(&p);
    else if (!strcmp(what, "huge"))
        case_huge(&p);
    else if (!strcmp(what, "nonfinite"))
        case_nonfinite(&p);
    else if (!strcmp(what, "beta"))
        case_beta(&p);
    else if (!strcmp(what, "chunks"))
        case_chunks();
    else if (!strcmp(what, "line"))
        case_line();
    else
        CHECK(0, "usage: test-check exact|wrong|huge|nonfinite|beta|chunks|line (got '%s')", what);
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test-check %s on %d rank(s) (grid %dx%d): %s\n", what, g_size, P, Q,
               all ? "FAILED" : "ok");
    free(p.A);
    free(p.B);
    free(p.C);
    MPI_Comm_free(&p.row);
    g_eng.ops->close(&g_eng);
    MPI_Finalize();
    return all ? 1 : 0;
}
