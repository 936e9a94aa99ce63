/* api_gemm.c — dd_gemm and dd_sgemm (dgemm_dist.h): the caller's host
 * blocks into work memory, alpha and beta applied where the data is, the
 * SUMMA multiply, the optional check, C back; the steps run.c and
 * run_data.c take, each agreed across ranks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agree.h"
#include "api_impl.h"
#include "check.h"
#include "summa.h"

/* One call's arguments and state. */
typedef struct {
    dd_context *ctx;
    dd_dtype t;
    char ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
    int check;
    dd_summa s;
    check_cterm cin;
    double sec, gemm; /* this rank's multiply phase and local multiplies */
    dd_check_result chk;
} gemm_call;

static int check_trans(char t, const char *name, dd_err *err)
{
    if (t == 'N' || t == 'n')
        return DD_OK;
    if (t == 'T' || t == 't' || t == 'C' || t == 'c')
        return dd_fail(err, DD_EUNSUP,
                       "%s = '%c': transposed operands are not supported yet by the library "
                       "(pass op(%c) itself, with %s = 'N')",
                       name, t, name[5] == 'a' ? 'A' : 'B', name);
    return dd_fail(err, DD_EUSAGE, "%s = '%c' (0x%02x): must be 'N' (or 'T', not supported yet)",
                   name, t >= 32 && t < 127 ? t : '?', (unsigned char)t);
}

/* One operand's block: rows × cols at p with leading dimension ld (p may
 * be NULL when the block is empty, or not `read`). */
static int check_block(const char *name, const void *p, int64_t rows, int64_t cols, int64_t ld,
                       int read, int rank, dd_err *err)
{
    if (ld < 1 || ld < cols)
        return dd_fail(err, DD_EUSAGE,
                       "rank %d: ld%c = %lld is less than max(1, %lld), the width of its block of "
                       "%s (%lld x %lld, row-major)",
                       rank,
                       name[0] == 'C'   ? 'c'
                       : name[3] == 'A' ? 'a'
                                        : 'b',
                       (long long)ld, (long long)cols, name, (long long)rows, (long long)cols);
    if (!p && read && rows > 0 && cols > 0)
        return dd_fail(err, DD_EUSAGE, "rank %d: %s is NULL but its block is %lld x %lld", rank,
                       name, (long long)rows, (long long)cols);
    return DD_OK;
}

/* The same scalars on every rank: rank 0's against mine (collective). */
static int same_args(gemm_call *g, dd_err *err)
{
    double mine[7] = {(double)g->M, (double)g->N,  (double)g->K, g->alpha,
                      g->beta,      (double)g->ta, (double)g->tb};
    double r0[7];
    memcpy(r0, mine, sizeof r0);
    int rc = dd_mpi_check(MPI_Bcast(r0, 7, MPI_DOUBLE, 0, g->ctx->world), "MPI_Bcast", err);
    if (rc)
        return rc;
    for (int i = 0; i < 7; i++)
        if (memcmp(&mine[i], &r0[i], sizeof(double)) && !(isnan(mine[i]) && isnan(r0[i])))
            return dd_fail(err, DD_EUSAGE,
                           "rank %d: M, N, K, alpha, beta, transa and transb must be the same on "
                           "every rank (M=%lld N=%lld K=%lld here, M=%.0f N=%.0f K=%.0f on rank 0)",
                           g->ctx->rank, (long long)g->M, (long long)g->N, (long long)g->K, r0[0],
                           r0[1], r0[2]);
    return DD_OK;
}

/* Arguments, checked on every rank; agreed. */
static int validate(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    int rc = check_trans(g->ta, "transa", err);
    if (!rc)
        rc = check_trans(g->tb, "transb", err);
    if (!rc && (g->M < 0 || g->N < 0 || g->K < 0))
        rc = dd_fail(err, DD_EUSAGE, "M=%lld N=%lld K=%lld: sizes must be >= 0", (long long)g->M,
                     (long long)g->N, (long long)g->K);
    int rc2 = same_args(g, err); /* collective: made whatever rc is */
    rc = rc ? rc : rc2;
    if (!rc) {
        const dd_grid *gr = &ctx->g;
        int64_t Mp = grid_block(g->M, gr->P, gr->p).len, Nq = grid_block(g->N, gr->Q, gr->q).len;
        int64_t Kq = grid_block(g->K, gr->Q, gr->q).len, Kp = grid_block(g->K, gr->P, gr->p).len;
        int ab = g->alpha != 0; /* alpha = 0: A and B are not read */
        rc = check_block("op(A)", g->A, Mp, Kq, g->lda, ab, ctx->rank, err);
        if (!rc)
            rc = check_block("op(B)", g->B, Kp, Nq, g->ldb, ab, ctx->rank, err);
        if (!rc)
            rc = check_block("C", g->C, Mp, Nq, g->ldc, 1, ctx->rank, err);
    }
    return dd_agree(ctx->world, rc, err);
}

/* Blocks, slots and panels in work memory; agreed. */
static int alloc_blocks(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_summa *s = &g->s;
    dd_engine *e = &ctx->eng;
    summa_init(s, e, &ctx->comm, ctx->g, g->t, g->M, g->N, g->K, ctx->panel, ctx->lookahead,
               g->beta != 0);
    int overflow = 0, rc = DD_OK;
    summa_work_bytes(s, NULL, &overflow);
    if (overflow)
        rc = dd_fail(err, DD_EUSAGE,
                     "M=%lld N=%lld K=%lld on a %dx%d grid: rank %d's blocks would need more than "
                     "2^64 bytes",
                     (long long)g->M, (long long)g->N, (long long)g->K, s->g.P, s->g.Q, ctx->rank);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return rc;
    size_t es = dd_elsize(g->t);
    rc = e->ops->alloc(e, (size_t)(s->Mp * s->Kq) * es, &s->A, err);
    if (!rc)
        rc = e->ops->alloc(e, (size_t)(s->Kp * s->Nq) * es, &s->B, err);
    if (!rc)
        rc = e->ops->alloc(e, (size_t)(s->Mp * s->Nq) * es, &s->C, err);
    if (!rc)
        rc = summa_setup(s, err);
    return dd_agree(ctx->world, rc, err);
}

static void free_blocks(gemm_call *g)
{
    dd_engine *e = &g->ctx->eng;
    dd_summa *s = &g->s;
    if (s->panels || s->slotA[0] || s->slotB[0])
        summa_teardown(s);
    void *blocks[] = {s->A, s->B, s->C};
    for (int i = 0; i < 3; i++)
        if (blocks[i])
            e->ops->free(e, blocks[i]);
    s->A = s->B = s->C = NULL;
    check_cterm_free(&g->cin);
}

/* rows × cols at host (ld) into contiguous work memory. */
static int upload(dd_engine *e, void *work, const void *host, int64_t ld, int64_t rows,
                  int64_t cols, size_t es, dd_err *err)
{
    if (rows == 0 || cols == 0)
        return DD_OK;
    return e->ops->upload_async(e, work, (size_t)cols * es, host, (size_t)ld * es,
                                (size_t)cols * es, rows, err);
}

/* The caller's blocks up (A and B only when alpha ≠ 0, C only when beta ≠
 * 0: BLAS's rules), alpha and beta applied; beta·C's part of the check.
 * Agreed. */
static int load(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_engine *e = &ctx->eng;
    dd_summa *s = &g->s;
    size_t es = dd_elsize(g->t);
    int rc = DD_OK;
    if (g->alpha != 0) {
        rc = upload(e, s->A, g->A, g->lda, s->Mp, s->Kq, es, err);
        if (!rc)
            rc = upload(e, s->B, g->B, g->ldb, s->Kp, s->Nq, es, err);
    }
    if (!rc && g->beta != 0)
        rc = upload(e, s->C, g->C, g->ldc, s->Mp, s->Nq, es, err);
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    /* alpha = 0: A and B were not read; zeros, for the check */
    if (!rc)
        rc = e->ops->scale(e, g->t, s->A, s->Mp * s->Kq, g->alpha, err);
    if (!rc && g->alpha == 0)
        rc = e->ops->scale(e, g->t, s->B, s->Kp * s->Nq, 0, err);
    if (!rc && g->beta != 0)
        rc = e->ops->scale(e, g->t, s->C, s->Mp * s->Nq, g->beta, err);
    if ((rc = dd_agree(ctx->world, rc, err)) || !g->check || g->beta == 0)
        return rc;
    return check_c_input(ctx->world, &ctx->g, e, g->t, g->M, g->N, s->C, 0x5eedULL, &g->cin, err);
}

/* The distributed multiply, timed.  Agreed, but for a broken broadcast
 * (DD_ECOMM), which peers may never reach: returned as it is. */
static int multiply(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_engine *e = &ctx->eng;
    dd_summa *s = &g->s;
    g->sec = g->gemm = 0;
    if (g->alpha == 0 || g->K == 0) { /* nothing multiplied: C = beta·C_in (there) or 0 */
        int rc = g->beta != 0
                     ? DD_OK
                     : e->ops->zero(e, s->C, (size_t)(s->Mp * s->Nq) * dd_elsize(g->t), err);
        return dd_agree(ctx->world, rc, err);
    }
    int rc = DD_OK;
    if (!ctx->warmed) { /* connections made before the first timed multiply */
        if ((rc = summa_warm(s, err)) == DD_ECOMM)
            return rc;
        if ((rc = dd_agree(ctx->world, rc, err)))
            return rc;
        ctx->warmed = 1;
    }
    rc = dd_agree(ctx->world, dd_mpi_check(MPI_Barrier(ctx->world), "MPI_Barrier", err), err);
    if (rc)
        return rc;
    rc = summa_multiply(s, 0, &g->sec, &g->gemm, err);
    if (rc == DD_ECOMM)
        return rc;
    return dd_agree(ctx->world, rc, err);
}

/* The check (optional) and C back into the caller's block.  Agreed. */
static int finish(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_engine *e = &ctx->eng;
    dd_summa *s = &g->s;
    size_t es = dd_elsize(g->t);
    int rc = DD_OK;
    g->chk.residual = NAN;
    g->chk.passed = 0;
    if (g->check &&
        (rc = check_product(ctx->world, ctx->row, &ctx->g, e, g->t, g->M, g->N, g->K, s->A, s->B,
                            s->C, g->beta != 0 ? &g->cin : NULL, 0x5eedULL, &g->chk, err)))
        return rc;
    if (s->Mp > 0 && s->Nq > 0)
        rc = e->ops->download_async(e, g->C, (size_t)g->ldc * es, s->C, (size_t)s->Nq * es,
                                    (size_t)s->Nq * es, s->Mp, err);
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return rc;
    if (g->check && !g->chk.passed) {
        char line[256];
        check_line(&g->chk, line, sizeof line);
        return dd_fail(err, DD_ECHECK, "the check FAILED: %s", line);
    }
    return DD_OK;
}

/* The figures of the call, over all ranks. */
static int report(gemm_call *g, dd_gemm_info *info, dd_err *err)
{
    double mine[2] = {g->sec, g->sec > g->gemm ? g->sec - g->gemm : 0}, mx[2], sum[2];
    MPI_Comm w = g->ctx->world;
    int rc = dd_mpi_check(MPI_Allreduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, w), "MPI_Allreduce", err);
    if (!rc)
        rc =
            dd_mpi_check(MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, w), "MPI_Allreduce", err);
    if ((rc = dd_agree(w, rc, err)) || !info)
        return rc;
    info->multiply_seconds = mx[0];
    info->exposed_comm_seconds = sum[1] / g->ctx->size;
    double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
    info->tflops = mx[0] > 0 && g->alpha != 0 ? flops / mx[0] / 1e12 : 0;
    info->check_residual = g->chk.residual;
    info->check_passed = g->check ? g->chk.passed : 0;
    return DD_OK;
}

static int run_call(gemm_call *g, dd_err *err)
{
    int rc = validate(g, err);
    if (rc || g->M == 0 || g->N == 0) /* nothing to compute: BLAS's quick return */
        return rc;
    if (g->t != g->ctx->type && (rc = api_open_backends(g->ctx, g->t, err)))
        return rc;
    if (!(rc = alloc_blocks(g, err)) && !(rc = load(g, err)) && !(rc = multiply(g, err)))
        rc = finish(g, err);
    free_blocks(g);
    return rc;
}

static dd_status gemm_any(gemm_call *g, dd_gemm_info *info)
{
    if (!g->ctx)
        return DD_ERROR_USAGE;
    dd_err *err = &g->ctx->err;
    dd_err_clear(err);
    if (!g->ctx->eng_open) /* a failed type switch left no backend */
        return api_status(dd_fail(err, DD_EFAIL, "the context has no backend open: destroy it"));
    g->check = info ? info->check : 0;
    g->chk.residual = NAN;
    if (info) {
        info->multiply_seconds = info->exposed_comm_seconds = info->tflops = 0;
        info->check_residual = NAN;
        info->check_passed = 0;
    }
    int rc = run_call(g, err);
    if (rc == DD_OK || rc == DD_ECHECK) {
        int rc2 = report(g, info, err);
        rc = rc ? rc : rc2;
    }
    return api_status(rc);
}

/* The two public entry points differ only in the element type. */
static dd_status gemm_typed(dd_context *ctx, dd_dtype t, char transa, char transb, int64_t M,
                            int64_t N, int64_t K, double alpha, const void *A, int64_t lda,
                            const void *B, int64_t ldb, double beta, void *C, int64_t ldc,
                            dd_gemm_info *info)
{
    gemm_call g = {.ctx = ctx,
                   .t = t,
                   .ta = transa,
                   .tb = transb,
                   .M = M,
                   .N = N,
                   .K = K,
                   .alpha = alpha,
                   .beta = beta,
                   .A = A,
                   .B = B,
                   .C = C,
                   .lda = lda,
                   .ldb = ldb,
                   .ldc = ldc};
    return gemm_any(&g, info);
}

dd_status dd_gemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                  double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                  double beta, double *C, int64_t ldc, dd_gemm_info *info)
{
    return gemm_typed(ctx, DD_F64, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}

dd_status dd_sgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float beta, float *C, int64_t ldc, dd_gemm_info *info)
{
    return gemm_typed(ctx, DD_F32, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}
