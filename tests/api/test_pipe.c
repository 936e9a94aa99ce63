/* test_pipe.c — the host pipeline (src/api/api_pipe.c) on the CPU backend,
 * where DD_FAULT=host-pipe:* makes it take the path a GPU takes: uploads,
 * multiplies and downloads in bands through pinned slots (here host
 * memory), C' = A'·B' computed as Cᵀ for column-major arrays.
 *
 *   mpirun -n R test-pipe [cuda]     (cuda: on the GPU backend, where
 *                                     the pipeline is the path taken;
 *                                     exit 77 without a GPU)
 *
 * Every case is compared element by element with the exact product
 * (small integers: every sum is exact in both types):
 *   - dd_gemm (one rank: C's rows contiguous, op(A) and op(B) turned on the
 *     way when transposed; ld padded) and dd_pgemm (block-cyclic local
 *     arrays, column-major: the transposed product; submatrix offsets on
 *     one rank);
 *   - shapes with odd M, N, K (1, primes, K > M, N > K), transa and
 *     transb in {N, T}, alpha in {1, -2, 0.5, 0}, beta in {0 with NaN in
 *     C, 1, -3}, FP64 and FP32;
 *   - slots of one to seven columns (DD_FAULT=pipe-narrow:*): bands and
 *     pieces of odd widths, the last one narrower; there beta = 0 takes the
 *     split schedule (half of K for every column first), and once more the
 *     band schedule alone (DD_FAULT=no-pipe-split:*);
 *   - a failure mid-way (DD_FAULT=multiply: the last rank): the call fails
 *     with the one message on every rank, nothing hangs, the context works
 *     after it; on one rank (the pipeline) each band of C holds either the
 *     product or C's input, and some of each (the failure struck between
 *     bands, with bands in flight drained), for both schedules.
 * On several ranks the pipeline does not apply (the call goes through
 * SUMMA and the exchanges): the same cases hold there, so the dispatch is
 * shown to leave them alone. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"

static int g_P, g_Q, g_p, g_q;

/* The same status and message on every rank (collective). */
static int same_msg(dd_status st, const char *msg)
{
    char mine[256], first[256];
    snprintf(mine, sizeof mine, "%d %s", (int)st, msg);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = !strcmp(mine, first), all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* The global matrices: small integers from (which, i, j). */
static double val(int which, int64_t i, int64_t j)
{
    uint64_t z = (uint64_t)(which * 7919 + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(i * 131 + j);
    z = (z ^ (z >> 29)) * 0xbf58476d1ce4e5b9ULL;
    return (double)((int64_t)(z >> 40) % 7) - 3;
}

typedef struct {
    int f64;
    char ta, tb;
    int64_t M, N, K;
    double alpha, beta;
} gcase;

/* The exact C (M×N, element (i, j) at i·N + j) from op(A), op(B), C_in. */
static double *reference(const gcase *c)
{
    double *R = malloc((size_t)(c->M * c->N) * sizeof *R);
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < c->N; j++) {
            double s = 0;
            for (int64_t k = 0; k < c->K; k++) {
                double a = c->ta == 'N' ? val(0, i, k) : val(0, k, i);
                double b = c->tb == 'N' ? val(1, k, j) : val(1, j, k);
                s += a * b;
            }
            R[i * c->N + j] = c->alpha * s + (c->beta != 0 ? c->beta * val(2, i, j) : 0);
        }
    return R;
}

static void put(void *p, int f64, size_t at, double v)
{
    if (f64)
        ((double *)p)[at] = v;
    else
        ((float *)p)[at] = (float)v;
}

static double get(const void *p, int f64, size_t at)
{
    return f64 ? ((const double *)p)[at] : (double)((const float *)p)[at];
}

/* A block-cyclic local array of the stored R×S matrix `which` (element
 * (i, j) is val(which, i, j): reference's reading), blocks nb, offset (i0, j0)
 * of the submatrix that holds it; column-major, lld = local rows + 1.
 * with_nan: NaN everywhere (C with beta = 0). */
typedef struct {
    void *p;
    int64_t lr, lc, lld, nb, i0, j0, R, S;
    dd_matrix_desc d;
} local;

static int64_t gidx(int64_t l, int64_t nb, int me, int np)
{
    return (l / nb * np + me) * nb + l % nb;
}

static void make_local(local *L, int f64, int which, int64_t R, int64_t S, int64_t nb, int64_t i0,
                       int64_t j0, int with_nan)
{
    int64_t m = R + i0, n = S + j0;
    L->R = R, L->S = S, L->nb = nb, L->i0 = i0, L->j0 = j0;
    L->lr = dd_numroc(m, nb, g_p, 0, g_P);
    L->lc = dd_numroc(n, nb, g_q, 0, g_Q);
    L->lld = L->lr + 1;
    size_t es = f64 ? 8 : 4, len = (size_t)(L->lld * (L->lc > 0 ? L->lc : 1));
    L->p = malloc(len * es);
    for (size_t i = 0; i < len; i++)
        put(L->p, f64, i, NAN);
    for (int64_t c = 0; c < L->lc; c++)
        for (int64_t r = 0; r < L->lr; r++) {
            int64_t gi = gidx(r, nb, g_p, g_P) - i0, gj = gidx(c, nb, g_q, g_Q) - j0;
            if (gi < 0 || gj < 0 || with_nan)
                continue;
            put(L->p, f64, (size_t)(c * L->lld + r), val(which, gi, gj));
        }
    CHECK(dd_desc_block_cyclic(&L->d, m, n, nb, nb, 0, 0, g_P, g_Q, 'R', L->lld) == DD_SUCCESS,
          "descriptor");
}

/* How local C compares with R: 0 all equal; else the count of elements
 * neither equal to R nor to C_in (with_in: C_in's values count as right
 * too; *written, *kept count those equal to R and to C_in). */
static int64_t compare(const local *L, int f64, const double *R, int64_t N, int with_in,
                       int64_t *written, int64_t *kept)
{
    int64_t bad = 0;
    for (int64_t c = 0; c < L->lc; c++)
        for (int64_t r = 0; r < L->lr; r++) {
            int64_t gi = gidx(r, L->nb, g_p, g_P) - L->i0, gj = gidx(c, L->nb, g_q, g_Q) - L->j0;
            if (gi < 0 || gj < 0)
                continue;
            double got = get(L->p, f64, (size_t)(c * L->lld + r)), want = R[gi * N + gj];
            if (got == want) {
                (*written)++;
            } else if (with_in && got == val(2, gi, gj)) {
                (*kept)++;
            } else {
                if (bad++ < 3)
                    fprintf(stderr, "  [rank %d] C(%lld,%lld) = %g, want %g\n", g_rank,
                            (long long)gi, (long long)gj, got, want);
            }
        }
    return bad;
}

static dd_status call_pgemm(dd_context *ctx, const gcase *c, local *A, local *B, local *C)
{
    dd_gemm_info info = {0};
    if (c->f64)
        return dd_pgemm(ctx, c->ta, c->tb, c->M, c->N, c->K, c->alpha, A->p, A->i0 + 1, A->j0 + 1,
                        &A->d, B->p, B->i0 + 1, B->j0 + 1, &B->d, c->beta, C->p, C->i0 + 1,
                        C->j0 + 1, &C->d, &info);
    return dd_psgemm(ctx, c->ta, c->tb, c->M, c->N, c->K, (float)c->alpha, A->p, A->i0 + 1,
                     A->j0 + 1, &A->d, B->p, B->i0 + 1, B->j0 + 1, &B->d, (float)c->beta, C->p,
                     C->i0 + 1, C->j0 + 1, &C->d, &info);
}

/* dd_pgemm on block-cyclic local arrays (offsets on one rank). */
static void pgemm_case(dd_context *ctx, const gcase *c, const char *mode)
{
    int64_t nb = 3 + (c->M + c->N) % 5, off = g_size == 1 ? 2 : 0;
    local A, B, C;
    make_local(&A, c->f64, 0, c->ta == 'N' ? c->M : c->K, c->ta == 'N' ? c->K : c->M, nb, off,
               off / 2, 0);
    make_local(&B, c->f64, 1, c->tb == 'N' ? c->K : c->N, c->tb == 'N' ? c->N : c->K, nb, off / 2,
               off, 0);
    make_local(&C, c->f64, 2, c->M, c->N, nb, off, off, c->beta == 0);
    double *R = reference(c);
    dd_status st = call_pgemm(ctx, c, &A, &B, &C);
    int64_t w = 0, k = 0, bad = st == DD_SUCCESS ? compare(&C, c->f64, R, c->N, 0, &w, &k) : 0;
    CHECK(st == DD_SUCCESS && bad == 0,
          "%s dd_p%sgemm %c%c %lldx%lldx%lld alpha %g beta %g: %s, %lld wrong: %s", mode,
          c->f64 ? "d" : "s", c->ta, c->tb, (long long)c->M, (long long)c->N, (long long)c->K,
          c->alpha, c->beta, dd_status_string(st), (long long)bad, dd_context_last_error(ctx));
    free(A.p), free(B.p), free(C.p), free(R);
}

/* dd_gemm on one rank: row-major, ld padded by 2. */
static void gemm_case(dd_context *ctx, const gcase *c, const char *mode)
{
    int64_t ar = c->ta == 'N' ? c->M : c->K, ac = c->ta == 'N' ? c->K : c->M;
    int64_t br = c->tb == 'N' ? c->K : c->N, bc = c->tb == 'N' ? c->N : c->K;
    int64_t lda = ac + 2, ldb = bc + 2, ldc = c->N + 2;
    double *A = malloc((size_t)(ar * lda) * 8), *B = malloc((size_t)(br * ldb) * 8),
           *C = malloc((size_t)(c->M * ldc) * 8);
    for (int64_t i = 0; i < ar; i++)
        for (int64_t j = 0; j < ac; j++)
            put(A, c->f64, (size_t)(i * lda + j), val(0, i, j));
    for (int64_t i = 0; i < br; i++)
        for (int64_t j = 0; j < bc; j++)
            put(B, c->f64, (size_t)(i * ldb + j), val(1, i, j));
    for (int64_t i = 0; i < c->M; i++)
        for (int64_t j = 0; j < ldc; j++)
            put(C, c->f64, (size_t)(i * ldc + j), c->beta == 0 || j >= c->N ? NAN : val(2, i, j));
    double *R = reference(c);
    dd_gemm_info info = {0};
    dd_status st = c->f64
                       ? dd_gemm(ctx, c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb,
                                 c->beta, C, ldc, &info)
                       : dd_sgemm(ctx, c->ta, c->tb, c->M, c->N, c->K, (float)c->alpha, (float *)A,
                                  lda, (float *)B, ldb, (float)c->beta, (float *)C, ldc, &info);
    int64_t bad = 0, pad = 0;
    for (int64_t i = 0; i < c->M && st == DD_SUCCESS; i++)
        for (int64_t j = 0; j < ldc; j++) {
            double got = get(C, c->f64, (size_t)(i * ldc + j));
            if (j >= c->N)
                pad += !isnan(got) && c->beta == 0; /* outside C: never written */
            else
                bad += got != R[i * c->N + j];
        }
    CHECK(st == DD_SUCCESS && bad == 0 && pad == 0,
          "%s dd_%sgemm %c%c %lldx%lldx%lld alpha %g beta %g: %s, %lld wrong, %lld past N: %s",
          mode, c->f64 ? "d" : "s", c->ta, c->tb, (long long)c->M, (long long)c->N, (long long)c->K,
          c->alpha, c->beta, dd_status_string(st), (long long)bad, (long long)pad,
          dd_context_last_error(ctx));
    free(A), free(B), free(C), free(R);
}

static void sweep(dd_context *ctx, const char *fault, const char *mode)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1}, {7, 5, 3}, {13, 29, 17}, {3, 61, 40}, {37, 2, 11}};
    static const double ab[][2] = {{1, 0}, {-2, 1}, {0.5, -3}, {0, -3}};
    setenv("DD_FAULT", fault, 1);
    for (int f64 = 1; f64 >= 0; f64--)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++)
                for (size_t x = 0; x < sizeof ab / sizeof ab[0]; x++) {
                    gcase c = {f64,          t & 1 ? 'T' : 'N', t & 2 ? 'T' : 'N', shapes[s][0],
                               shapes[s][1], shapes[s][2],      ab[x][0],          ab[x][1]};
                    pgemm_case(ctx, &c, mode);
                    if (g_size == 1)
                        gemm_case(ctx, &c, mode);
                }
    unsetenv("DD_FAULT");
}

/* The last rank fails mid-way: agreed, no hang; on one rank each band of
 * C is the product or C's input, some of each; the context works after.
 * beta 1: the band schedule; beta 0: the split one (its first part of K
 * done for every column before the bands). */
static void fault_case(dd_context *ctx, double beta)
{
    char spec[96];
    snprintf(spec, sizeof spec, "host-pipe:*,pipe-narrow:*,multiply:%d", g_size - 1);
    setenv("DD_FAULT", spec, 1);
    gcase c = {1, 'N', 'T', 40, 57, 29, 1, beta};
    local A, B, C;
    make_local(&A, 1, 0, c.M, c.K, 4, 0, 0, 0);
    make_local(&B, 1, 1, c.N, c.K, 4, 0, 0, 0);
    make_local(&C, 1, 2, c.M, c.N, 4, 0, 0, 0);
    double *R = reference(&c);
    dd_status st = call_pgemm(ctx, &c, &A, &B, &C);
    unsetenv("DD_FAULT");
    const char *msg = dd_context_last_error(ctx);
    CHECK(st == DD_ERROR_INTERNAL && strstr(msg, "injected fault in the multiply"),
          "a failed multiply on rank %d: %s: %s", g_size - 1, dd_status_string(st), msg);
    CHECK(same_msg(st, msg), "a failed multiply: not agreed");
    int64_t w = 0, k = 0, bad = compare(&C, 1, R, c.N, 1, &w, &k);
    CHECK(bad == 0, "after a failed multiply %lld elements of C are neither product nor input",
          (long long)bad);
    if (g_size == 1) { /* C' = Cᵀ: its bands are bands of C's rows, 7 each */
        int64_t rows_r = 0, rows_in = 0;
        for (int64_t i = 0; i < c.M; i++) { /* a row of C is one band's: all or nothing */
            int all_r = 1, all_in = 1;
            for (int64_t j = 0; j < c.N; j++) {
                double x = ((double *)C.p)[j * C.lld + i];
                all_r &= x == R[i * c.N + j];
                all_in &= x == val(2, i, j);
            }
            CHECK(all_r || all_in, "row %lld of C is partly written", (long long)i);
            rows_r += all_r && !all_in;
            rows_in += all_in && !all_r;
        }
        CHECK(rows_r > 0 && rows_in > 0,
              "a failure mid-way: %lld rows of C written, %lld kept (want some of both)",
              (long long)rows_r, (long long)rows_in);
    }
    free(C.p);
    make_local(&C, 1, 2, c.M, c.N, 4, 0, 0, 0);
    setenv("DD_FAULT", "host-pipe:*", 1);
    st = call_pgemm(ctx, &c, &A, &B, &C);
    unsetenv("DD_FAULT");
    w = k = 0;
    bad = st == DD_SUCCESS ? compare(&C, 1, R, c.N, 0, &w, &k) : -1;
    CHECK(bad == 0, "after a failed multiply: %s, %lld wrong: %s", dd_status_string(st),
          (long long)bad, dd_context_last_error(ctx));
    free(A.p), free(B.p), free(C.p), free(R);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = argc > 1 && !strcmp(argv[1], "cuda") ? "cuda" : "cpu";
    dd_context *ctx = NULL;
    char msg[256];
    dd_status cst = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    if (cst != DD_SUCCESS) {
        if (g_rank == 0)
            printf("test_pipe: %s: %s\n", cst == DD_ERROR_UNSUPPORTED ? "skipped" : "failed", msg);
        MPI_Finalize();
        return cst == DD_ERROR_UNSUPPORTED ? 77 : 1;
    }
    dd_context_grid(ctx, &g_P, &g_Q, &g_p, &g_q);
    sweep(ctx, "host-pipe:*", "pipeline");
    if (g_size == 1) /* on several ranks the slots are not the pipeline's */
        sweep(ctx, "host-pipe:*,pipe-narrow:*", "narrow bands");
    if (g_size == 1)
        sweep(ctx, "host-pipe:*,pipe-narrow:*,no-pipe-split:*", "narrow bands, no split");
    fault_case(ctx, 1);
    fault_case(ctx, 0);
    dd_context_destroy(ctx);
    int fails = dd_check_total();
    if (g_rank == 0)
        printf("test_pipe: %d failed assertions on %d ranks\n", fails, g_size);
    MPI_Finalize();
    return fails != 0;
}
