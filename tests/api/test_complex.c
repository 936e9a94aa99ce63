/* test_complex.c — the complex entries (dd_zgemm, dd_cgemm, their _device
 * forms, dd_pzgemm, dd_pcgemm) against a plain complex product:
 *
 *   shapes   nine (M, N, K) from {1, 3, 7, 17} (square, tall, wide, K = 1,
 *            sizes below and above the grid's, uneven blocks);
 *   ops      transa, transb each in {N, T, C} ('C': conjugate transpose);
 *   scalars  four sets, each (shape, op) taking one in turn so that every
 *            op meets every set: alpha (1.5, -0.5) with beta 0 (C poisoned
 *            with NaN: it must not be read); alpha 0 (A and B passed NULL:
 *            not read) with beta (0.5, 2); alpha (-0.5, 1) with beta
 *            (2, -1); alpha (0, 1) with beta (1, 0);
 *   grids    every P×Q of the ranks (1×1 at 1 rank, 1×4, 2×2, 4×1 at 4),
 *            above 4 ranks those with P, Q > 1 (2×3, 3×2 at 6);
 *   entries  dd_zgemm/dd_cgemm on the 2-D block layout (lda one past the
 *            width), their _device forms (host memory on the CPU backend)
 *            and dd_pzgemm/dd_pcgemm on ScaLAPACK's block-cyclic layout,
 *            sub-matrices at offsets inside larger matrices.
 *
 * Each stored matrix is non-symmetric and non-Hermitian, with imaginary
 * parts unlike the real ones, so a transpose or a conjugation skipped or
 * applied twice changes C.  The values are small dyadic numbers: every
 * product is exact in both precisions, so C must equal the reference.
 * info->check is set on every call and must pass.  Then the refusals: a
 * different imaginary part of alpha, and 'T' against 'C', on one rank.
 *
 *   test-complex misload   (DD_FAULT=misload:*: op(A) arrives doubled): the
 *                          library's complex check must FAIL every call.
 *   test-complex pipe      (one rank, DD_FAULT=host-pipe:*,pipe-narrow:* set by
 *                          the caller):
 *                          the calls without the check, so that the
 *                          one-rank ones take the host pipeline
 *                          (src/api/api_pipe.c) in slots of a few columns;
 *                          C must still equal the reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"

typedef struct {
    double re, im;
} cplx;

static cplx cmul(cplx a, cplx b)
{
    return (cplx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
static cplx cadd(cplx a, cplx b)
{
    return (cplx){a.re + b.re, a.im + b.im};
}

/* The stored matrices: dyadic, exact in float, A(i,j) ≠ A(j,i) and ≠ its
 * conjugate. */
static cplx a_st(int64_t i, int64_t j)
{
    return (cplx){(double)((i * 7 + j * 3 + 1) % 11 - 5) / 4, (double)((i * 2 + j * 5 + 2) % 9 - 4) / 8};
}
static cplx b_st(int64_t i, int64_t j)
{
    return (cplx){(double)((i * 5 + j * 2 + 3) % 13 - 6) / 8, (double)((i * 3 + j * 7) % 5 - 2) / 4};
}
static cplx c_st(int64_t i, int64_t j)
{
    return (cplx){(double)((i * 3 + j * 11) % 7 - 3) / 2, (double)((i + j * 4) % 5 - 2) / 4};
}

typedef struct {
    int64_t M, N, K;
    char ta, tb;
    cplx alpha, beta;
} zcase;

static cplx op_of(cplx (*st)(int64_t, int64_t), char t, int64_t i, int64_t j)
{
    if (t == 'N')
        return st(i, j);
    cplx v = st(j, i);
    if (t == 'C')
        v.im = -v.im;
    return v;
}

static cplx want(const zcase *g, int64_t i, int64_t j)
{
    cplx s = {0, 0};
    for (int64_t k = 0; k < g->K; k++)
        s = cadd(s, cmul(op_of(a_st, g->ta, i, k), op_of(b_st, g->tb, k, j)));
    cplx r = cmul(g->alpha, s);
    if (g->beta.re != 0 || g->beta.im != 0)
        r = cadd(r, cmul(g->beta, c_st(i, j)));
    return r;
}

/* Element access on either complex type (dbl: complex double). */
static void put(void *p, int dbl, int64_t at, cplx v)
{
    if (dbl) {
        ((double *)p)[2 * at] = v.re;
        ((double *)p)[2 * at + 1] = v.im;
    } else {
        ((float *)p)[2 * at] = (float)v.re;
        ((float *)p)[2 * at + 1] = (float)v.im;
    }
}
static cplx get(const void *p, int dbl, int64_t at)
{
    if (dbl)
        return (cplx){((const double *)p)[2 * at], ((const double *)p)[2 * at + 1]};
    return (cplx){((const float *)p)[2 * at], ((const float *)p)[2 * at + 1]};
}

static int64_t blen(int64_t n, int parts, int idx, int64_t *start)
{
    int64_t s = 0, l = 0;
    dd_block_range(n, parts, idx, &s, &l);
    if (start)
        *start = s;
    return l;
}

static int P_, Q_, p_, q_;
static int misload, piped;

/* The call's verdict: misload wants a FAILED check, else success, a passed
 * check and the reference in C (cmp says whether C is compared). */
static int verdict(dd_status st, const dd_gemm_info *info, const char *what, const zcase *g,
                   dd_context *ctx)
{
    if (misload) {
        int must_fail = g->alpha.re != 0 || g->alpha.im != 0;
        CHECK(st == (must_fail ? DD_ERROR_CHECK_FAILED : DD_SUCCESS),
              "%s %c%c %lldx%lldx%lld: misload gave %s (%s)", what, g->ta, g->tb, (long long)g->M,
              (long long)g->N, (long long)g->K, dd_status_string(st), dd_context_last_error(ctx));
        return 0;
    }
    CHECK(st == DD_SUCCESS && (piped || info->check_passed), "%s %c%c %lldx%lldx%lld on %dx%d: %s (%s), check %d",
          what, g->ta, g->tb, (long long)g->M, (long long)g->N, (long long)g->K, P_, Q_,
          dd_status_string(st), dd_context_last_error(ctx), info->check_passed);
    return st == DD_SUCCESS;
}

static void compare(const void *C, int dbl, int64_t rows, int64_t cols, int64_t i0, int64_t j0,
                    int64_t ld, int colmajor, const zcase *g, const char *what)
{
    double tol = dbl ? 0 : 1e-6;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            cplx w = want(g, i0 + i, j0 + j);
            cplx h = get(C, dbl, colmajor ? j * ld + i : i * ld + j);
            double s = 1 + fabs(w.re) + fabs(w.im);
            CHECK(fabs(h.re - w.re) <= tol * s && fabs(h.im - w.im) <= tol * s,
                  "%s %c%c %lldx%lldx%lld alpha (%g,%g) beta (%g,%g) on %dx%d: C(%lld,%lld) = "
                  "(%.17g, %.17g), want (%.17g, %.17g)",
                  what, g->ta, g->tb, (long long)g->M, (long long)g->N, (long long)g->K,
                  g->alpha.re, g->alpha.im, g->beta.re, g->beta.im, P_, Q_, (long long)(i0 + i),
                  (long long)(j0 + j), h.re, h.im, w.re, w.im);
        }
}

/* dd_zgemm / dd_cgemm (device: their _device forms) on the 2-D block layout. */
static void block_case(dd_context *ctx, int dbl, int device, const zcase *g)
{
    size_t es = dbl ? 16 : 8;
    int64_t Ar = g->ta == 'N' ? g->M : g->K, Ac = g->ta == 'N' ? g->K : g->M;
    int64_t Br = g->tb == 'N' ? g->K : g->N, Bc = g->tb == 'N' ? g->N : g->K;
    int64_t a0, a1, b0, b1, c0, c1;
    int64_t ar = blen(Ar, P_, p_, &a0), ac = blen(Ac, Q_, q_, &a1);
    int64_t br = blen(Br, P_, p_, &b0), bc = blen(Bc, Q_, q_, &b1);
    int64_t cr = blen(g->M, P_, p_, &c0), cc = blen(g->N, Q_, q_, &c1);
    int64_t lda = ac + 1, ldb = bc + 1, ldc = cc + 1;
    int alpha0 = g->alpha.re == 0 && g->alpha.im == 0;
    int beta0 = g->beta.re == 0 && g->beta.im == 0;
    void *A = calloc((size_t)(ar * lda + 1), es), *B = calloc((size_t)(br * ldb + 1), es),
         *C = calloc((size_t)(cr * ldc + 1), es);
    for (int64_t i = 0; i < ar; i++)
        for (int64_t j = 0; j < ac; j++)
            put(A, dbl, i * lda + j, a_st(a0 + i, a1 + j));
    for (int64_t i = 0; i < br; i++)
        for (int64_t j = 0; j < bc; j++)
            put(B, dbl, i * ldb + j, b_st(b0 + i, b1 + j));
    for (int64_t i = 0; i < cr; i++)
        for (int64_t j = 0; j < cc; j++)
            put(C, dbl, i * ldc + j, beta0 ? (cplx){NAN, NAN} : c_st(c0 + i, c1 + j));
    const void *pa = alpha0 ? NULL : A, *pb = alpha0 ? NULL : B;
    dd_gemm_info info = {.check = !piped};
    dd_status st;
    if (dbl) {
        dd_complex128 al = {g->alpha.re, g->alpha.im}, be = {g->beta.re, g->beta.im};
        st = (device ? dd_zgemm_device : dd_zgemm)(ctx, g->ta, g->tb, g->M, g->N, g->K, al, pa, lda,
                                                   pb, ldb, be, C, ldc, &info);
    } else {
        dd_complex64 al = {(float)g->alpha.re, (float)g->alpha.im},
                     be = {(float)g->beta.re, (float)g->beta.im};
        st = (device ? dd_cgemm_device : dd_cgemm)(ctx, g->ta, g->tb, g->M, g->N, g->K, al, pa, lda,
                                                   pb, ldb, be, C, ldc, &info);
    }
    const char *what = dbl ? (device ? "dd_zgemm_device" : "dd_zgemm")
                           : (device ? "dd_cgemm_device" : "dd_cgemm");
    if (verdict(st, &info, what, g, ctx)) {
        compare(C, dbl, cr, cc, c0, c1, ldc, 0, g, what);
        CHECK(info.tflops >= 0, "%s: tflops %g", what, info.tflops);
    }
    free(A);
    free(B);
    free(C);
}

/* A block-cyclic local array (column-major) of a global R×S matrix whose
 * sub-matrix at 1-based (oi, oj) is the stored operand (st), the rest
 * filled with other values. */
static void *cyclic(int dbl, cplx (*st)(int64_t, int64_t), cplx fill, int64_t R, int64_t S,
                    int64_t oi, int64_t oj, int64_t r, int64_t s, int64_t mb, int64_t nb,
                    dd_matrix_desc *d)
{
    int64_t lr = dd_numroc(R, mb, p_, 0, P_), lc = dd_numroc(S, nb, q_, 0, Q_);
    int64_t lld = lr > 0 ? lr : 1;
    dd_desc_block_cyclic(d, R, S, mb, nb, 0, 0, P_, Q_, 'R', lld);
    void *L = calloc((size_t)(lld * (lc > 0 ? lc : 1)), dbl ? 16 : 8);
    for (int64_t li = 0; li < lr; li++)
        for (int64_t lj = 0; lj < lc; lj++) {
            int64_t gi = (li / mb * P_ + p_) * mb + li % mb, gj = (lj / nb * Q_ + q_) * nb + lj % nb;
            int64_t si = gi - (oi - 1), sj = gj - (oj - 1);
            int in = si >= 0 && si < r && sj >= 0 && sj < s;
            put(L, dbl, lj * lld + li, in && st ? st(si, sj) : fill);
        }
    return L;
}

/* dd_pzgemm / dd_pcgemm: sub-matrices at offsets in block-cyclic matrices. */
static void cyclic_case(dd_context *ctx, int dbl, const zcase *g)
{
    int64_t Ar = g->ta == 'N' ? g->M : g->K, Ac = g->ta == 'N' ? g->K : g->M;
    int64_t Br = g->tb == 'N' ? g->K : g->N, Bc = g->tb == 'N' ? g->N : g->K;
    int beta0 = g->beta.re == 0 && g->beta.im == 0;
    dd_matrix_desc da, db, dc;
    void *A = cyclic(dbl, a_st, (cplx){9, 9}, Ar + 2, Ac + 1, 3, 2, Ar, Ac, 2, 3, &da);
    void *B = cyclic(dbl, b_st, (cplx){7, -7}, Br + 1, Bc + 3, 2, 4, Br, Bc, 3, 2, &db);
    void *C = cyclic(dbl, beta0 ? NULL : c_st, beta0 ? (cplx){NAN, NAN} : (cplx){5, 5}, g->M + 1,
                     g->N + 2, 2, 3, g->M, g->N, 2, 2, &dc);
    dd_gemm_info info = {.check = !piped};
    dd_status st;
    if (dbl) {
        dd_complex128 al = {g->alpha.re, g->alpha.im}, be = {g->beta.re, g->beta.im};
        st = dd_pzgemm(ctx, g->ta, g->tb, g->M, g->N, g->K, al, A, 3, 2, &da, B, 2, 4, &db, be, C,
                       2, 3, &dc, &info);
    } else {
        dd_complex64 al = {(float)g->alpha.re, (float)g->alpha.im},
                     be = {(float)g->beta.re, (float)g->beta.im};
        st = dd_pcgemm(ctx, g->ta, g->tb, g->M, g->N, g->K, al, A, 3, 2, &da, B, 2, 4, &db, be, C,
                       2, 3, &dc, &info);
    }
    const char *what = dbl ? "dd_pzgemm" : "dd_pcgemm";
    if (verdict(st, &info, what, g, ctx)) {
        /* sub(C) against the reference, the rest of C untouched */
        int64_t lr = dd_numroc(dc.m, 2, p_, 0, P_), lc = dd_numroc(dc.n, 2, q_, 0, Q_);
        for (int64_t li = 0; li < lr; li++)
            for (int64_t lj = 0; lj < lc; lj++) {
                int64_t gi = (li / 2 * P_ + p_) * 2 + li % 2, gj = (lj / 2 * Q_ + q_) * 2 + lj % 2;
                int64_t si = gi - 1, sj = gj - 2;
                cplx h = get(C, dbl, lj * dc.lld + li);
                if (si >= 0 && si < g->M && sj >= 0 && sj < g->N) {
                    cplx w = want(g, si, sj);
                    double tol = dbl ? 0 : 1e-6 * (1 + fabs(w.re) + fabs(w.im));
                    CHECK(fabs(h.re - w.re) <= tol && fabs(h.im - w.im) <= tol,
                          "%s %c%c %lldx%lldx%lld on %dx%d: sub(C)(%lld,%lld) = (%g, %g), want "
                          "(%g, %g)",
                          what, g->ta, g->tb, (long long)g->M, (long long)g->N, (long long)g->K,
                          P_, Q_, (long long)si, (long long)sj, h.re, h.im, w.re, w.im);
                } else {
                    CHECK(beta0 ? isnan(h.re) : h.re == 5 && h.im == 5,
                          "%s: C outside sub(C) changed at local (%lld,%lld): (%g, %g)", what,
                          (long long)li, (long long)lj, h.re, h.im);
                }
            }
    }
    free(A);
    free(B);
    free(C);
}

/* Arguments that differ on one rank are refused on every rank. */
static void refusals(dd_context *ctx)
{
    dd_complex128 one = {1, 0}, zero = {0, 0}, a = {1, g_rank == g_size - 1 ? 0.5 : 0};
    dd_complex128 A[4] = {{1, 1}}, B[4] = {{1, -1}}, C[4];
    int64_t m = 1;
    dd_gemm_info info = {0};
    /* one element on rank 0, empty blocks elsewhere */
    int64_t ld = 1;
    dd_status st =
        dd_zgemm(ctx, 'N', 'N', m, m, m, a, g_rank ? NULL : A, ld, g_rank ? NULL : B, ld, zero,
                 g_rank ? NULL : C, ld, &info);
    CHECK(st == DD_ERROR_USAGE && strstr(dd_context_last_error(ctx), "imaginary"),
          "alpha's imaginary part differing on rank %d: %s (%s)", g_size - 1, dd_status_string(st),
          dd_context_last_error(ctx));
    char t = g_rank == g_size - 1 ? 'T' : 'C';
    st = dd_zgemm(ctx, t, 'N', m, m, m, one, g_rank ? NULL : A, ld, g_rank ? NULL : B, ld, zero,
                  g_rank ? NULL : C, ld, &info);
    CHECK(st == DD_ERROR_USAGE && strstr(dd_context_last_error(ctx), "transa"),
          "'T' against 'C' on complex data: %s (%s)", dd_status_string(st),
          dd_context_last_error(ctx));
    /* 'C' and 'c' mean the same: agreed */
    t = g_rank == g_size - 1 ? 'c' : 'C';
    st = dd_zgemm(ctx, t, 'N', m, m, m, one, g_rank ? NULL : A, ld, g_rank ? NULL : B, ld, zero,
                  g_rank ? NULL : C, ld, &info);
    CHECK(st == DD_SUCCESS, "'c' against 'C': %s (%s)", dd_status_string(st),
          dd_context_last_error(ctx));
    if (g_rank == 0)
        CHECK(C[0].re == 0 && C[0].im == -2, "conj(1+i)·(1-i) = (%g, %g), want (0, -2)", C[0].re,
              C[0].im);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    misload = argc > 1 && !strcmp(argv[1], "misload");
    piped = argc > 1 && !strcmp(argv[1], "pipe");
    const char *fault = getenv("DD_FAULT");
    CHECK(!piped || (fault && strstr(fault, "host-pipe") && g_size == 1),
          "test-complex pipe: run it on one rank with DD_FAULT=host-pipe:*,pipe-narrow:*");
    static const int64_t shapes[][3] = {{1, 1, 1},  {3, 7, 17}, {17, 3, 7}, {7, 17, 3}, {17, 17, 1},
                                        {1, 17, 7}, {3, 1, 17}, {7, 7, 7},  {17, 1, 3}};
    static const char ops[] = {'N', 'T', 'C'};
    static const cplx sc[4][2] = {{{1.5, -0.5}, {0, 0}},
                                  {{0, 0}, {0.5, 2}},
                                  {{-0.5, 1}, {2, -1}},
                                  {{0, 1}, {1, 0}}};
    int calls = 0;
    for (int P = 1; P <= g_size; P++) {
        if (g_size % P || (g_size > 4 && (P == 1 || P == g_size))) /* 6 ranks: 2x3, 3x2 */
            continue;
        dd_context_options o;
        dd_context_options_init(&o);
        o.backend = "cpu";
        o.P = P;
        o.Q = g_size / P;
        o.type = DD_COMPLEX128;
        dd_context *ctx = NULL;
        char msg[256] = "";
        dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
        CHECK(st == DD_SUCCESS, "context %dx%d: %s", o.P, o.Q, msg);
        if (st)
            break;
        dd_context_grid(ctx, &P_, &Q_, &p_, &q_);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int oa = 0; oa < 3; oa++)
                for (int ob = 0; ob < 3; ob++) {
                    int k = (int)(s + (size_t)(3 * oa + ob)) % 4;
                    zcase g = {shapes[s][0], shapes[s][1], shapes[s][2], ops[oa], ops[ob],
                               sc[k][0],     sc[k][1]};
                    for (int dbl = 0; dbl < 2; dbl++) {
                        block_case(ctx, dbl, (int)(s + (size_t)oa) % 2, &g);
                        cyclic_case(ctx, dbl, &g);
                        calls += 2;
                    }
                }
        if (!misload && g_size > 1)
            refusals(ctx);
        dd_context_destroy(ctx);
    }
    int fails = dd_check_total();
    if (g_rank == 0)
        printf("test-complex%s: %d calls a rank, %d failures\n",
               misload ? " misload" : piped ? " pipe" : "", calls,
               fails);
    MPI_Finalize();
    return fails != 0;
}
