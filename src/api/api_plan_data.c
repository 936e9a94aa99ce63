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
    int rc = enter(p, &err);
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

/* The engine's marks of the staged moves (dd_plan_put_rows, below): the two
 * upload slots', the two latest puts', the two download slots', the
 * multiply's. */
enum { RW_UP = 0, RW_BAND = 2, RW_DOWN = 4, RW_COMP = 6 };
static int rows_drain(dd_plan *p, int rc, dd_err *err);

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
    if (!rc && (plan_alpha0(p) || p->passes != 1))
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
    if (p->rows_put > p->rows_used) { /* the band's put (dd_plan_put_rows) is up first */
        dd_engine *e = &ctx->eng;
        rc = e->ops->after(e, DD_Q_COMPUTE, RW_BAND + (int)(p->rows_used++ % 2), err);
    }
    if (!rc)
        rc = summa_multiply(&band, 0, &sec, &gemm, err);
    if (rc) /* nothing staged lands later */
        rc = rows_drain(p, rc, err);
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

/* The band pipeline's staged moves (dgemm_dist_tool.h), ordered by the
 * marks RW_* (engine.h: mark, after, reached).  Queues: DD_Q_UP for the
 * uploads, DD_Q_DOWN for the downloads; on the CPU engine every copy is
 * synchronous and the marks do nothing.  DD_FAULT=pipe-narrow makes pieces
 * of 3 rows (many pieces and slot turns in a small test); DD_FAULT=pipe-stage
 * fails the second put after its first piece is queued. */

/* The slots and the rows of a `cols`-wide block per piece. */
static int rows_slots(dd_plan *p, int64_t cols, void *up[2], void *down[2], int64_t *per,
                      dd_err *err)
{
    dd_context *ctx = p->ctx;
    size_t slot = api_ring_bytes(), row = (size_t)cols * dd_elsize(p->t);
    if (row > slot)
        return dd_fail(err, DD_EUSAGE,
                       "one row of a block (%.1f MiB) is larger than a staging slot (%.0f MiB): "
                       "raise DD_RING_MIB or use more ranks",
                       (double)row / 1048576.0, (double)slot / 1048576.0);
    *per = row ? (int64_t)(slot / row) : 1;
    if (dd_fault("pipe-narrow") && *per > 3)
        *per = 3;
    int rc = DD_OK;
    for (int i = 0; i < 2 && !rc; i++) {
        rc = api_host_get(ctx, API_HOST_RING + i, slot, &up[i], err);
        if (!rc)
            rc = api_host_get(ctx, API_HOST_DOWN + i, slot, &down[i], err);
    }
    return rc;
}

/* Every staged copy in flight waited for and forgotten; rc kept when set
 * (the wait's own failure then goes to a scratch message). */
static int rows_drain(dd_plan *p, int rc, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    dd_err later = {{0}};
    int rc2 = e->ops->wait_copies(e, rc ? &later : err);
    p->rows_used = p->rows_put;
    p->take_on = 0;
    return rc ? rc : rc2;
}

/* Rows [r0, r0 + rows) inside block `which`: its address and columns. */
static int rows_at(dd_plan *p, int which, int64_t r0, int64_t rows, char **at, int64_t *cols,
                   dd_err *err)
{
    int64_t R;
    char *b = plan_block(p, which, &R, cols);
    if (r0 < 0 || rows < 0 || r0 > R || rows > R - r0)
        return dd_fail(err, DD_EUSAGE, "rank %d: rows [%lld, %lld) are not inside its %lld rows",
                       p->ctx->rank, (long long)r0, (long long)(r0 + rows), (long long)R);
    *at = b + (size_t)(r0 * *cols) * dd_elsize(p->t);
    return DD_OK;
}

dd_status dd_plan_put_rows(dd_plan *p, int64_t r0, int64_t rows, const void *host, int64_t ld)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, per = 1;
    void *up[2], *down[2];
    if (!rc)
        rc = rows_at(p, DD_OPERAND_A, r0, rows, &at, &cols, err);
    if (!rc && (ld < cols || (rows && cols && !host)))
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_put_rows: host is NULL or ld %lld < %lld columns",
                     (long long)ld, (long long)cols);
    if (!rc && p->rows_put - p->rows_used >= 2)
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_put_rows: two puts already wait for their multiplies");
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(rc);
    size_t es = dd_elsize(p->t), row = (size_t)cols * es;
    for (int64_t k = 0; k < rows && cols && !rc; k += per) {
        int64_t n = rows - k < per ? rows - k : per;
        int s = (int)(p->rows_piece++ % 2);
        rc = e->ops->reached(e, RW_UP + s, err); /* the slot's last upload is done */
        if (rc)
            break;
        api_copy_runs(up[s], row, (const char *)host + (size_t)(k * ld) * es, (size_t)ld * es,
                      row, n, api_move_threads(p->ctx, n, cols));
        rc = e->ops->upload_async(e, at + (size_t)(k * cols) * es, row, up[s], row, row, n, err);
        if (!rc)
            rc = e->ops->mark(e, DD_Q_UP, RW_UP + s, err);
        if (!rc && p->rows_put == 1 && dd_fault("pipe-stage"))
            rc = dd_fail(err, DD_EFAIL, "injected fault staging the second band of A on rank %d",
                         p->ctx->rank);
    }
    if (!rc)
        rc = e->ops->mark(e, DD_Q_UP, RW_BAND + (int)(p->rows_put % 2), err);
    if (!rc)
        p->rows_put++;
    else
        rc = rows_drain(p, rc, err);
    return api_status(rc);
}

/* Piece k of the take under way down into download slot k % 2. */
static int take_piece(dd_plan *p, void *down[2], dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, k = p->take_queued, r = k * p->take_per;
    int64_t n = p->take_rows - r < p->take_per ? p->take_rows - r : p->take_per;
    int s = (int)(k % 2);
    int rc = rows_at(p, DD_OPERAND_C, p->take_r0 + r, n, &at, &cols, err);
    size_t row = (size_t)cols * dd_elsize(p->t);
    if (!rc)
        rc = e->ops->reached(e, RW_DOWN + s, err);
    if (!rc)
        rc = e->ops->download_side_async(e, down[s], row, at, row, row, n, err);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_DOWN, RW_DOWN + s, err);
    p->take_queued++;
    return rc;
}

static int64_t take_pieces(const dd_plan *p)
{
    return (p->take_rows + p->take_per - 1) / p->take_per;
}

dd_status dd_plan_take_rows(dd_plan *p, int64_t r0, int64_t rows)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, per = 1;
    void *up[2], *down[2];
    if (!rc)
        rc = rows_at(p, DD_OPERAND_C, r0, rows, &at, &cols, err);
    if (!rc && p->take_on)
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_take_rows: the last take is not ended");
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(rc);
    p->take_r0 = r0;
    p->take_rows = cols ? rows : 0;
    p->take_per = per;
    p->take_queued = 0;
    p->take_on = 1;
    /* behind the multiplies queued so far */
    rc = e->ops->mark(e, DD_Q_COMPUTE, RW_COMP, err);
    if (!rc)
        rc = e->ops->after(e, DD_Q_DOWN, RW_COMP, err);
    while (!rc && p->take_queued < 2 && p->take_queued < take_pieces(p))
        rc = take_piece(p, down, err);
    if (rc)
        rc = rows_drain(p, rc, err);
    return api_status(rc);
}

dd_status dd_plan_take_rows_end(dd_plan *p, void *host, int64_t ld)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    int64_t R, cols = 0, per = 1;
    void *up[2], *down[2];
    plan_block(p, DD_OPERAND_C, &R, &cols);
    if (!rc && !p->take_on)
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_take_rows_end: no take under way");
    if (!rc && (ld < cols || (p->take_rows && !host)))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_take_rows_end: host is NULL or ld %lld < %lld columns",
                     (long long)ld, (long long)cols);
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(p->take_on ? rows_drain(p, rc, err) : rc);
    size_t es = dd_elsize(p->t), row = (size_t)cols * es;
    for (int64_t k = 0; k < take_pieces(p) && !rc; k++) {
        int64_t r = k * p->take_per;
        int64_t n = p->take_rows - r < p->take_per ? p->take_rows - r : p->take_per;
        int s = (int)(k % 2);
        rc = e->ops->reached(e, RW_DOWN + s, err);
        if (rc)
            break;
        api_copy_runs((char *)host + (size_t)(r * ld) * es, (size_t)ld * es, down[s], row, row, n,
                      api_move_threads(p->ctx, n, cols));
        if (k + 2 < take_pieces(p)) /* the slot is free again: the piece after next */
            rc = take_piece(p, down, err);
    }
    if (rc)
        rc = rows_drain(p, rc, err);
    p->take_on = 0;
    return api_status(rc);
}

dd_status dd_plan_rows_drain(dd_plan *p)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = enter(p, &err);
    if (!p->ctx->eng_open)
        return api_status(rc);
    return api_status(rows_drain(p, rc, err));
}
