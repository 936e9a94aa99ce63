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
int plan_enter(dd_plan *p, dd_err **err)
{
    *err = plan_err(p);
    return ready(p, *err);
}

dd_status dd_plan_generate(dd_plan *p, dd_operand which, uint64_t seed, int trans)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
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
    p->s.b_kept = 0;
    return api_status(dd_agree(ctx->world, rc, err));
}

/* alpha and beta where the data is: A ← alpha·A (zeros for alpha = 0, with
 * B: neither was read), C ← beta·C_in.  Not agreed. */
static int apply_scalars(dd_plan *p, dd_err *err)
{
    dd_summa *s = &p->s;
    dd_engine *e = &p->ctx->eng;
    int no_alpha = dd_fault("no-alpha"), no_beta = dd_fault("no-beta"); /* tests: forgotten */
    if (dd_dtype_complex(p->t)) {
        if (!e->ops->cscale)
            return dd_fail(err, DD_EUNSUP, "the %s backend cannot scale complex data",
                           e->ops->name);
        const double a[2] = {no_alpha ? 1 : p->alpha, no_alpha ? 0 : p->alpha_im},
                     one[2] = {1, 0}, b[2] = {no_beta ? 1 : p->beta, no_beta ? 0 : p->beta_im};
        int rc = e->ops->cscale(e, p->t, s->A, s->Mp * s->Kq, a, p->conj_a, err);
        if (!rc && plan_alpha0(p))
            rc = e->ops->scale(e, p->t, s->B, s->Kp * s->Nq, 0, err);
        else if (!rc && p->conj_b)
            rc = e->ops->cscale(e, p->t, s->B, s->Kp * s->Nq, one, 1, err);
        if (!rc && p->read_c)
            rc = e->ops->cscale(e, p->t, s->C, s->Mp * s->Nq, b, 0, err);
        return rc;
    }
    double alpha = no_alpha ? 1 : p->alpha;
    int rc = e->ops->scale(e, p->t, s->A, s->Mp * s->Kq, alpha, err);
    if (!rc && p->alpha == 0)
        rc = e->ops->scale(e, p->t, s->B, s->Kp * s->Nq, 0, err);
    if (!rc && p->read_c)
        rc = e->ops->scale(e, p->t, s->C, s->Mp * s->Nq, no_beta ? 1 : p->beta, err);
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

/* alpha, beta (both parts), the conjugations and check alike on every
 * rank (rank 0's against mine, bit for bit: NaN differs from any value,
 * itself included).  Collective. */
static int same_scalars(dd_context *ctx, const double alpha[2], const double beta[2], int conj,
                        int check, dd_err *err)
{
    double mine[6] = {alpha[0], beta[0], check != 0, alpha[1], beta[1], conj}, r0[6];
    memcpy(r0, mine, sizeof r0);
    int rc = dd_mpi_check(MPI_Bcast(r0, 6, MPI_DOUBLE, 0, ctx->world), "MPI_Bcast", err);
    if (!rc && memcmp(mine, r0, sizeof mine))
        rc = dd_fail(err, DD_EUSAGE,
                     "rank %d: alpha, beta%s and check must be the same on every rank (%.17g, "
                     "%.17g, %d here, %.17g, %.17g, %d on rank 0%s)",
                     ctx->rank, alpha[1] != 0 || beta[1] != 0 || conj ? " (both parts), conj" : "",
                     alpha[0], beta[0], check != 0, r0[0], r0[1], (int)r0[2],
                     memcmp(mine + 3, r0 + 3, 3 * sizeof(double)) ? "; the imaginary parts or "
                                                                     "conjugations differ"
                                                                   : "");
    return rc;
}

static int plan_prepare(dd_plan *p, const double alpha[2], const double beta[2], int conj_a,
                        int conj_b, int check, int complex_entry)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_context *ctx = p->ctx;
    dd_engine *e = &ctx->eng;
    int beta0 = beta[0] == 0 && beta[1] == 0;
    if (!rc && complex_entry && !dd_dtype_complex(p->t))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_prepare_complex on a %s plan: use dd_plan_prepare (real alpha, beta)",
                     dd_dtype_name(p->t));
    if (!rc && (!isfinite(alpha[0]) || !isfinite(beta[0]) || !isfinite(alpha[1]) ||
                !isfinite(beta[1])))
        rc = dd_fail(err, DD_EUSAGE, "alpha (%g, %g), beta (%g, %g): must be finite", alpha[0],
                     alpha[1], beta[0], beta[1]);
    if (!rc && p->read_c == beta0)
        rc = dd_fail(err, DD_EUSAGE,
                     "beta %g on a plan made with read_c %d: C's input is read exactly when "
                     "beta is not 0",
                     beta[0], p->read_c);
    /* collective: made on every rank whatever its own checks found, so a
     * rank refusing alone does not leave the others in the broadcast */
    int rc2 = same_scalars(ctx, alpha, beta, (conj_a != 0) + 2 * (conj_b != 0), check, err);
    if ((rc = dd_agree(ctx->world, rc ? rc : rc2, err)))
        return rc;
    p->alpha = alpha[0];
    p->beta = beta[0];
    p->alpha_im = alpha[1];
    p->beta_im = beta[1];
    p->conj_a = conj_a != 0;
    p->conj_b = conj_b != 0;
    p->npass = 0;
    p->s.b_kept = 0; /* B's kept slices (summa_rows_slices) are made again */
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
    return rc;
}

dd_status dd_plan_prepare(dd_plan *p, double alpha, double beta, int check)
{
    const double a[2] = {alpha, 0}, b[2] = {beta, 0};
    return api_status(plan_prepare(p, a, b, 0, 0, check, 0));
}

dd_status dd_plan_prepare_complex(dd_plan *p, dd_complex128 alpha, dd_complex128 beta, int conj_a,
                                  int conj_b, int check)
{
    const double a[2] = {alpha.re, alpha.im}, b[2] = {beta.re, beta.im};
    return api_status(plan_prepare(p, a, b, conj_a, conj_b, check, 1));
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
    rc = plan_alpha0(p) ? no_multiply(p, sec, gemm, err)
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
    int rc = plan_enter(p, &err);
    p->s.b_kept = 0; /* a whole multiply slices B again (summa_rows_slices) */
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
    int rc = plan_enter(p, &err);
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
    int rc = plan_enter(p, &err);
    if (rc)
        return api_status(rc);
    *count = p->s.npanels;
    for (int64_t i = 0; i < n && i < p->s.npanels; i++)
        seconds[i] = p->s.panel_sec[i];
    return DD_SUCCESS;
}
