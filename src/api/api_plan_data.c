/* api_plan_data.c — what a plan computes (dgemm_dist_plan.h): generated
 * blocks, alpha and beta where the data is, the timed multiplies, the
 * streamed host pass, the check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_plan.h"
#include "dd_fault.h"
#include "rng.h"
#include "timer.h"

static int ready(dd_plan *p, dd_err *err)
{
    return p->allocated ? DD_OK
                        : dd_fail(err, DD_EUSAGE, "the plan is not allocated (dd_plan_allocate)");
}

/* A public entry's start on a plan (not NULL): its message cleared, and
 * whether it is allocated (not agreed). */
static int enter(dd_plan *p, dd_err **err)
{
    *err = plan_err(p);
    return ready(p, *err);
}

dd_status dd_plan_generate(dd_plan *p, dd_operand which, uint64_t seed, int trans)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_context *ctx = p->ctx;
    dd_engine *e = &ctx->eng;
    if (!rc && ((int)which < 0 || (int)which > 2 || (which == DD_OPERAND_C && trans)))
        rc = dd_fail(err, DD_EUSAGE, "operand %d (trans %d): A or B, or C untransposed", (int)which,
                     trans);
    /* which, seed and trans alike on every rank: compared whatever the
     * local verdict, so every rank makes the same collectives */
    long long mine[3] = {(long long)which, (long long)seed, trans != 0}, r0[3];
    static const char *names[3] = {"operand", "seed", "trans"};
    memcpy(r0, mine, sizeof r0);
    int rc2 = dd_mpi_check(MPI_Bcast(r0, 3, MPI_LONG_LONG, 0, ctx->world), "MPI_Bcast", err);
    for (int i = 0; i < 3 && !rc2; i++)
        if (mine[i] != r0[i])
            rc2 = dd_fail(err, DD_EUSAGE,
                          "rank %d: dd_plan_generate's %s differs between ranks: %lld here, %lld "
                          "on rank 0",
                          ctx->rank, names[i], mine[i], r0[i]);
    if ((rc = dd_agree(ctx->world, rc ? rc : rc2, err)))
        return api_status(rc);
    dd_range rm = grid_block(p->M, ctx->g.P, ctx->g.p), rn = grid_block(p->N, ctx->g.Q, ctx->g.q);
    dd_range rkq = grid_block(p->K, ctx->g.Q, ctx->g.q), rkp = grid_block(p->K, ctx->g.P, ctx->g.p);
    dd_summa *s = &p->s;
    trans = trans != 0;
    if (which == DD_OPERAND_A)
        rc = e->ops->fill_random(e, p->t, s->A, seed, RNG_TAG_A, rm.start, s->Mp, rkq.start, s->Kq,
                                 trans ? p->M : p->K, trans, err);
    else if (which == DD_OPERAND_B)
        rc = e->ops->fill_random(e, p->t, s->B, seed, RNG_TAG_B, rkp.start, s->Kp, rn.start, s->Nq,
                                 trans ? p->K : p->N, trans, err);
    else
        rc = e->ops->fill_random(e, p->t, s->C, seed, RNG_TAG_C, rm.start, s->Mp, rn.start, s->Nq,
                                 p->N, 0, err);
    p->prepared = 0; /* new data: alpha and beta are not applied to it yet */
    return api_status(dd_agree(ctx->world, rc, err));
}

/* alpha and beta where the data is: A ← alpha·A (zeros for alpha = 0, with
 * B: neither was read), C ← beta·C_in.  Not agreed. */
static int apply_scalars(dd_plan *p, dd_err *err)
{
    dd_summa *s = &p->s;
    dd_engine *e = &p->ctx->eng;
    double alpha = dd_fault("no-alpha") ? 1 : p->alpha; /* tests: alpha forgotten */
    int rc = e->ops->scale(e, p->t, s->A, s->Mp * s->Kq, alpha, err);
    if (!rc && p->alpha == 0)
        rc = e->ops->scale(e, p->t, s->B, s->Kp * s->Nq, 0, err);
    if (!rc && p->read_c) /* tests: beta forgotten */
        rc = e->ops->scale(e, p->t, s->C, s->Mp * s->Nq, dd_fault("no-beta") ? 1 : p->beta, err);
    return rc;
}

/* The host pass streams A and B up from host copies of what was loaded. */
static int keep_host_copies(dd_plan *p, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    size_t es = dd_elsize(p->t);
    if (!p->hA)
        return DD_OK;
    int rc = e->ops->download(e, p->hA, p->s.A, (size_t)(p->s.Mp * p->s.Kq) * es, err);
    if (!rc)
        rc = e->ops->download(e, p->hB, p->s.B, (size_t)(p->s.Kp * p->s.Nq) * es, err);
    return rc;
}

/* alpha, beta and check alike on every rank (rank 0's against mine, bit
 * for bit: NaN differs from any value, itself included).  Collective. */
static int same_scalars(dd_context *ctx, double alpha, double beta, int check, dd_err *err)
{
    double mine[3] = {alpha, beta, check != 0}, r0[3];
    memcpy(r0, mine, sizeof r0);
    int rc = dd_mpi_check(MPI_Bcast(r0, 3, MPI_DOUBLE, 0, ctx->world), "MPI_Bcast", err);
    if (!rc && memcmp(mine, r0, sizeof mine))
        rc = dd_fail(err, DD_EUSAGE,
                     "rank %d: alpha, beta and check must be the same on every rank (%.17g, "
                     "%.17g, %d here, %.17g, %.17g, %d on rank 0)",
                     ctx->rank, alpha, beta, check != 0, r0[0], r0[1], (int)r0[2]);
    return rc;
}

dd_status dd_plan_prepare(dd_plan *p, double alpha, double beta, int check)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_context *ctx = p->ctx;
    dd_engine *e = &ctx->eng;
    if (!rc && (!isfinite(alpha) || !isfinite(beta)))
        rc = dd_fail(err, DD_EUSAGE, "alpha %g, beta %g: must be finite", alpha, beta);
    if (!rc && p->read_c == (beta == 0))
        rc = dd_fail(err, DD_EUSAGE,
                     "beta %g on a plan made with read_c %d: C's input is read exactly when "
                     "beta is not 0",
                     beta, p->read_c);
    /* collective: made on every rank whatever its own checks found, so a
     * rank refusing alone does not leave the others in the broadcast */
    int rc2 = same_scalars(ctx, alpha, beta, check, err);
    if ((rc = dd_agree(ctx->world, rc ? rc : rc2, err)))
        return api_status(rc);
    p->alpha = alpha;
    p->beta = beta;
    p->npass = 0;
    check_cterm_free(&p->cin);
    rc = dd_agree(ctx->world, apply_scalars(p, err), err);
    if (!rc && p->read_c && check)
        rc = check_c_input(ctx->world, &ctx->g, e, p->t, p->M, p->N, p->s.C, p->check_seed, &p->cin,
                           err);
    if (!rc && p->C0)
        rc = e->ops->copy(e, p->C0, p->s.C, (size_t)(p->s.Mp * p->s.Nq) * dd_elsize(p->t), err);
    if (!rc)
        rc = keep_host_copies(p, err);
    rc = dd_agree(ctx->world, rc, err);
    p->prepared = rc == DD_OK;
    p->checkable = p->prepared && (check || !p->read_c);
    return api_status(rc);
}

/* Every pass after the first starts from beta·C_in again (untimed). */
static int restore_c(dd_plan *p, dd_err *err)
{
    if (p->npass == 0)
        return DD_OK;
    if (p->C0)
        return p->ctx->eng.ops->copy(&p->ctx->eng, p->s.C, p->C0,
                                     (size_t)(p->s.Mp * p->s.Nq) * dd_elsize(p->t), err);
    if (p->read_c)
        return dd_fail(err, DD_EUSAGE,
                       "pass %d of a plan made for %d: beta·C_in was not kept for it (raise "
                       "params.passes, or load C again)",
                       p->npass + 1, p->passes);
    return DD_OK;
}

/* alpha = 0: A and B are not multiplied; C is beta·C_in (already there) or
 * zero.  Nothing to time. */
static int no_multiply(dd_plan *p, double *sec, double *gemm, dd_err *err)
{
    *sec = *gemm = 0;
    if (p->read_c)
        return DD_OK;
    return p->ctx->eng.ops->zero(&p->ctx->eng, p->s.C,
                                 (size_t)(p->s.Mp * p->s.Nq) * dd_elsize(p->t), err);
}

/* One multiply of a prepared plan (streamed from the host copies with
 * `streamed`), agreed; a broken broadcast is returned as it is (peers may
 * be in a collective). */
static int multiply(dd_plan *p, int streamed, double *sec, double *gemm, dd_err *err)
{
    dd_context *ctx = p->ctx;
    int rc = restore_c(p, err);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return rc;
    if (p->t != ctx->type && (rc = api_retype(ctx, p->t, err))) /* a dd_sgemm in between */
        return rc;
    rc = dd_agree(ctx->world,
                  dd_mpi_check(MPI_Barrier(ctx->world), "MPI_Barrier before a multiply", err), err);
    if (rc)
        return rc;
    double t0 = dd_now();
    rc = p->alpha == 0 ? no_multiply(p, sec, gemm, err)
                       : summa_multiply(&p->s, streamed, sec, gemm, err);
    if (!rc && streamed)
        rc = ctx->eng.ops->download(&ctx->eng, p->hC, p->s.C,
                                    (size_t)(p->s.Mp * p->s.Nq) * dd_elsize(p->t), err);
    if (streamed)
        *sec = dd_now() - t0;
    if (rc == DD_ECOMM)
        return rc;
    p->npass++;
    return dd_agree(ctx->world, rc, err);
}

static dd_status timed(dd_plan *p, int streamed, dd_plan_times *times)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    double sec = 0, gemm = 0, slowest = 0;
    int rc = enter(p, &err);
    if (!rc && streamed && !p->host_pass)
        rc = dd_fail(err, DD_EUNSUP,
                     "a host pass needs a GPU backend and a plan made with params.host_pass");
    if (!rc && !p->prepared)
        rc = dd_fail(err, DD_EUSAGE, "the plan is not prepared (dd_plan_prepare)");
    if ((rc = dd_agree(p->ctx->world, rc, err)))
        return api_status(rc);
    if (streamed) { /* zeroed: a slice the streamed upload missed makes C wrong */
        dd_engine *e = &p->ctx->eng;
        size_t es = dd_elsize(p->t);
        rc = e->ops->zero(e, p->s.A, (size_t)(p->s.Mp * p->s.Kq) * es, err);
        if (!rc)
            rc = e->ops->zero(e, p->s.B, (size_t)(p->s.Kp * p->s.Nq) * es, err);
        if ((rc = dd_agree(p->ctx->world, rc, err)))
            return api_status(rc);
    }
    rc = multiply(p, streamed, &sec, &gemm, err);
    if (!rc)
        rc = dd_agree(
            p->ctx->world,
            dd_mpi_check(MPI_Allreduce(&sec, &slowest, 1, MPI_DOUBLE, MPI_MAX, p->ctx->world),
                         "MPI_Allreduce of the multiply time", err),
            err);
    if (times)
        *times = (dd_plan_times){sec, gemm, slowest};
    return api_status(rc);
}

dd_status dd_plan_multiply(dd_plan *p, dd_plan_times *times)
{
    return timed(p, 0, times);
}

dd_status dd_plan_host_pass(dd_plan *p, dd_plan_times *times)
{
    return timed(p, 1, times);
}

dd_status dd_plan_check(dd_plan *p, dd_check_result *res)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_context *ctx = p->ctx;
    check_result cr = {NAN, 0, NULL};
    if (!rc && !res) /* refused on every rank (agreed below), the check not run */
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_check: result is NULL");
    if (!rc && (!p->checkable || p->npass == 0))
        rc = dd_fail(err, DD_EUSAGE,
                     "nothing to check: prepare with check set, then multiply, before "
                     "dd_plan_check");
    if (!(rc = dd_agree(ctx->world, rc, err)))
        rc = check_product(ctx->world, ctx->row, &ctx->g, &ctx->eng, p->t, p->M, p->N, p->K, p->s.A,
                           p->s.B, p->s.C, p->read_c ? &p->cin : NULL, p->check_seed, &cr, err);
    if (res)
        *res = api_check_result(&cr);
    return api_status(rc);
}

void dd_check_line(const dd_check_result *r, char *buf, size_t n)
{
    check_result cr = {r ? r->residual : NAN, r ? r->passed : 0, r ? r->why_not : NULL};
    check_line(r ? &cr : NULL, buf, n);
}

dd_status dd_plan_panel_seconds(dd_plan *p, double *seconds, int64_t n, int64_t *count)
{
    if (!p || !count || n < 0 || (n > 0 && !seconds))
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    if (rc)
        return api_status(rc);
    *count = p->s.npanels;
    for (int64_t i = 0; i < n && i < p->s.npanels; i++)
        seconds[i] = p->s.panel_sec[i];
    return DD_SUCCESS;
}

/* A band of C's rows: SUMMA over the whole K on a copy of the plan's
 * SUMMA state whose blocks of op(A) and C start at row r0 and are `rows`
 * high (their row pitches, the panel list and the slots stay: a band's
 * panels are the whole multiply's, narrower in M).  The A broadcast of a
 * band moves only its rows; B's panels go again for every band. */
dd_status dd_plan_multiply_rows(dd_plan *p, int64_t r0, int64_t rows, dd_plan_times *times)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_context *ctx = p->ctx;
    if (!rc && !p->prepared)
        rc = dd_fail(err, DD_EUSAGE, "the plan is not prepared (dd_plan_prepare)");
    if (!rc && (p->alpha == 0 || p->passes != 1))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_multiply_rows needs alpha not 0 and a plan made with passes = 1 "
                     "(alpha %g, passes %d): use dd_plan_multiply",
                     p->alpha, p->passes);
    if (!rc && (r0 < 0 || rows < 0 || r0 > p->s.Mp || rows > p->s.Mp - r0))
        rc = dd_fail(err, DD_EUSAGE,
                     "rank %d: rows [%lld, %lld) are not inside its %lld rows of C", ctx->rank,
                     (long long)r0, (long long)(r0 + rows), (long long)p->s.Mp);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return api_status(rc);
    if (p->t != ctx->type && (rc = api_retype(ctx, p->t, err)))
        return api_status(dd_agree(ctx->world, rc, err));
    size_t es = dd_elsize(p->t);
    dd_summa band = p->s;
    band.Mp = rows;
    band.A = (char *)p->s.A + (size_t)(r0 * p->s.Kq) * es;
    band.C = (char *)p->s.C + (size_t)(r0 * p->s.Nq) * es;
    double sec = 0, gemm = 0, slowest = 0;
    rc = summa_multiply(&band, 0, &sec, &gemm, err);
    if (rc == DD_ECOMM)
        return api_status(rc);
    p->npass = 1;
    rc = dd_agree(ctx->world, rc, err);
    if (!rc)
        rc = dd_agree(
            ctx->world,
            dd_mpi_check(MPI_Allreduce(&sec, &slowest, 1, MPI_DOUBLE, MPI_MAX, ctx->world),
                         "MPI_Allreduce of the multiply time", err),
            err);
    if (times)
        *times = (dd_plan_times){sec, gemm, slowest};
    return api_status(rc);
}

void *dd_plan_host_block(const dd_plan *p, dd_operand which)
{
    if (!p || !p->allocated || !p->ctx->eng.ops->work_is_host || (int)which < 0 || (int)which > 2)
        return NULL;
    int64_t rows, cols;
    return plan_block(p, (int)which, &rows, &cols);
}
