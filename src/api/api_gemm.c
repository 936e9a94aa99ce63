/* api_gemm.c — one multiply of the public API (dgemm_dist.h): the
 * caller's operands into work memory (one copy each when already in the
 * work layout, else redistributed: api_redist.c), alpha and beta applied
 * where the data is, the SUMMA multiply, the optional check, C back, each
 * step agreed across ranks.  The public entry points are in api_entry.c. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_impl.h"
#include "check.h"
#include "dd_fault.h"
#include "summa.h"

static int check_trans(char t, const char *name, int number, gemm_call *g, dd_err *err)
{
    if (t == 'N' || t == 'n' || t == 'T' || t == 't' || t == 'C' || t == 'c')
        return DD_OK;
    g->bad_arg = number;
    return dd_fail(err, DD_EUSAGE, "%s = '%c' (0x%02x): must be 'N', 'T' or 'C'", name,
                   t >= 32 && t < 127 ? t : '?', (unsigned char)t);
}

/* 'N', 'T' or 'C': 'n' is 'N', 't' is 'T', and 'C', 'c' are 'T' for real
 * data and 'C' (the conjugate transpose) for complex data, so that ranks
 * spelling the same operation differently agree. */
static char norm_trans(char t, dd_dtype type)
{
    if (t == 'C' || t == 'c')
        return dd_dtype_complex(type) ? 'C' : 'T';
    return t == 'n' ? 'N' : t == 't' ? 'T' : t;
}

/* The same arguments on every rank: rank 0's against mine (collective).
 * The message names the first that differs, with both values. */
static int same_args(gemm_call *g, dd_err *err)
{
    api_global mine[API_GLOBALS];
    int64_t r0[API_GLOBALS];
    int n = api_globals(g, mine);
    for (int i = 0; i < API_GLOBALS; i++)
        r0[i] = mine[i].v;
    int rc =
        dd_mpi_check(MPI_Bcast(r0, API_GLOBALS, MPI_INT64_T, 0, g->ctx->world), "MPI_Bcast", err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        if (mine[i].v == r0[i])
            continue;
        char here[64], there[64];
        api_global_show(&mine[i], mine[i].v, here, sizeof here);
        api_global_show(&mine[i], r0[i], there, sizeof there);
        return dd_fail(err, DD_EUSAGE,
                       "rank %d: %s differs between ranks: %s here, %s on rank 0 (every rank "
                       "passes the same M, N, K, alpha, beta, transa, transb, info->check%s to "
                       "the same entry)",
                       g->ctx->rank, mine[i].name, here, there,
                       g->desc ? ", offsets and descriptors' global fields" : "");
    }
    return DD_OK;
}

/* Arguments, checked on every rank; agreed. */
static int validate(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    int rc = check_trans(g->ta, "transa", 1, g, err);
    if (!rc)
        rc = check_trans(g->tb, "transb", 2, g, err);
    if (!rc) {
        g->ta = norm_trans(g->ta, g->t);
        g->tb = norm_trans(g->tb, g->t);
    }
    if (!rc && (g->M < 0 || g->N < 0 || g->K < 0)) {
        g->bad_arg = g->M < 0 ? 3 : g->N < 0 ? 4 : 5;
        rc = dd_fail(err, DD_EUSAGE, "M=%lld N=%lld K=%lld: sizes must be >= 0", (long long)g->M,
                     (long long)g->N, (long long)g->K);
    }
    if (!rc)
        rc = api_check_given(g, err);
    int rc2 = same_args(g, err); /* collective: made whatever rc is */
    rc = rc ? rc : rc2;
    if (!rc)
        rc = api_check_operands(g, err);
    /* the lowest failing rank's argument number, like its message: MINLOC
     * over (rank, number) pairs carries the number as the location */
    struct {
        int key, number;
    } mine = {rc ? ctx->rank : INT_MAX, rc ? g->bad_arg : 0}, low;
    rc = dd_agree(ctx->world, rc, err);
    if (rc && MPI_Allreduce(&mine, &low, 1, MPI_2INT, MPI_MINLOC, ctx->world) == MPI_SUCCESS)
        g->bad_arg = low.number;
    return rc;
}

/* summa_setup's panels and slots, the slots from the context's kept
 * work memory (summa_slices.c's slot sizes: panels at most nb wide; L+1 of
 * each, as summa_setup's). */
static int setup_slots(gemm_call *g, dd_err *err)
{
    dd_summa *s = &g->s;
    int overflow = 0;
    size_t sa = summa_slot_bytes(s, 0, &overflow), sb = summa_slot_bytes(s, 1, &overflow);
    int rc = summa_plan_panels(s, err);
    if (!rc)
        rc = summa_plan_slices(s, err);
    for (int i = 0; i <= s->lookahead && !rc; i++) {
        int at = API_DEV_SLOT + 2 * i;
        if (s->g.Q > 1 && sa > 0)
            rc = api_dev_get(g->ctx, at, sa, &s->slotA[i], err);
        if (!rc && s->g.P > 1 && sb > 0)
            rc = api_dev_get(g->ctx, at + 1, sb, &s->slotB[i], err);
    }
    if (!rc && s->expA_bytes)
        rc = api_dev_get(g->ctx, API_DEV_EXPORT_A, s->expA_bytes, &s->expA, err);
    if (!rc && s->expB_bytes)
        rc = api_dev_get(g->ctx, API_DEV_EXPORT_B, s->expB_bytes, &s->expB, err);
    return rc;
}

/* Blocks, slots and panels in work memory (kept by the context); agreed. */
static int alloc_blocks(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_summa *s = &g->s;
    dd_engine *e = &ctx->eng;
    /* One rank broadcasts nothing, so without a width asked for (by the
     * caller or by the kernel) the whole K is one local multiply: each panel
     * more is one more pass over C and one more tail wave. */
    int64_t panel = ctx->panel               ? ctx->panel
                    : ctx->size == 1 && !e->info.panel && g->K > 0 ? g->K
                                                                 : 0;
    summa_init(s, e, &ctx->comm, ctx->g, g->t, g->M, g->N, g->K, panel, ctx->lookahead,
               !api_beta0(g));
    int overflow = 0, rc = g->cyclic ? api_cyclic_shape(g, err) : DD_OK;
    summa_use_slices(s, ctx->world, ctx->slices); /* on the shape the panels will have */
    summa_work_bytes(s, NULL, &overflow);
    if (overflow)
        rc = dd_fail(err, DD_EUSAGE,
                     "M=%lld N=%lld K=%lld on a %dx%d grid: rank %d's blocks would need more than "
                     "2^64 bytes",
                     (long long)g->M, (long long)g->N, (long long)g->K, s->g.P, s->g.Q, ctx->rank);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return rc;
    size_t es = dd_elsize(g->t);
    /* dd_gemm_device's operands that already are the blocks SUMMA works on
     * (the 2-D block layout, contiguous rows): used where they lie, no copy
     * in or out.  A and B only when nothing is scaled in them (alpha = 1,
     * no conjugation: a direct operand is untransposed): never written. */
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    int64_t cols[3] = {s->Kq, s->Nq, s->Nq};
    void **blk[3] = {&s->A, &s->B, &s->C};
    int ids[3] = {API_DEV_A, API_DEV_B, API_DEV_C};
    size_t bytes[3] = {(size_t)(s->Mp * s->Kq) * es, (size_t)(s->Kp * s->Nq) * es,
                       (size_t)(s->Mp * s->Nq) * es};
    for (int k = 0; k < 3 && !rc; k++) {
        g->inplace[k] = g->device && ops[k]->direct && !g->cyclic &&
                        ops[k]->ld == cols[k] && bytes[k] > 0 &&
                        (k == 2 || (g->alpha == 1 && g->alpha_im == 0)) &&
                        !dd_fault("misload") && !dd_fault("no-inplace");
        if (g->inplace[k])
            *blk[k] = (void *)ops[k]->p;
        else
            rc = api_dev_get(ctx, ids[k], bytes[k], blk[k], err);
    }
    if (!rc)
        rc = setup_slots(g, err);
    return dd_agree(ctx->world, rc, err);
}

/* The blocks and slots stay with the context for the next call. */
static void free_blocks(gemm_call *g)
{
    dd_summa *s = &g->s;
    summa_free_lists(s);
    s->expA = s->expB = NULL; /* the context's */
    free(g->cyc_panels);
    g->cyc_panels = NULL;
    s->fixed = NULL;
    s->A = s->B = s->C = NULL;
    check_cterm_free(&g->cin);
}

/* rows × cols between the caller's device array (pitch ld) and contiguous
 * work memory, in (out = 0) or out: one copy when contiguous, else one per
 * row.  (Host arrays go through api_stage.c.) */
static int copy_user(gemm_call *g, void *work, const void *user, int64_t ld, int64_t rows,
                     int64_t cols, int out, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    size_t es = dd_elsize(g->t), w = (size_t)cols * es, p = (size_t)ld * es;
    if (rows == 0 || cols == 0)
        return DD_OK;
    if (ld == cols)
        return out ? e->ops->copy(e, (void *)user, work, w * (size_t)rows, err)
                   : e->ops->copy(e, work, user, w * (size_t)rows, err);
    int rc = DD_OK;
    for (int64_t i = 0; i < rows && !rc; i++) {
        char *u = (char *)user + (size_t)i * p, *k = (char *)work + (size_t)i * w;
        rc = out ? e->ops->copy(e, u, k, w, err) : e->ops->copy(e, k, u, w, err);
    }
    return rc;
}

static int host_buf(dd_engine *e, size_t bytes, void **p, dd_err *err)
{
    return e->ops->host_alloc(e, bytes ? bytes : 8, p, err);
}

/* A redistributed operand into its work block W (layout wl, rows × cols):
 * device arrays brought to the host first (dd_gemm_device's 2-D block
 * layout), the exchange into host memory, up to W where work memory is
 * not host memory.  Agreed. */
static int redist_in(gemm_call *g, const api_operand *o, const rd_layout *wl, void *W, int64_t rows,
                     int64_t cols, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_engine *e = &ctx->eng;
    size_t es = dd_elsize(g->t);
    rd_layout from = o->lay;
    const void *src = o->p;
    void *stage = NULL, *hostW = NULL;
    int rc = DD_OK;
    if (g->device) {
        int pr, pc;
        rd_coords(&from, ctx->rank, &pr, &pc);
        int64_t r = grid_block(from.row.glen, from.row.np, pr).len;
        int64_t c = grid_block(from.col.glen, from.col.np, pc).len;
        rc = host_buf(e, (size_t)(r * c) * es, &stage, err);
        if (!rc && r > 0 && c > 0)
            rc = e->ops->download_async(e, stage, (size_t)c * es, o->p, (size_t)o->ld * es,
                                        (size_t)c * es, r, err);
        if (!rc)
            rc = e->ops->wait_copies(e, err);
        from.rs = c;
        src = stage;
    }
    if (!rc && !e->ops->work_is_host)
        rc = host_buf(e, (size_t)(rows * cols) * es, &hostW, err);
    if (!(rc = dd_agree(ctx->world, rc, err)))
        rc = rd_move(ctx->world, g->t, &from, src, wl, hostW ? hostW : W, o->trans,
                     api_move_threads(ctx, rows, cols), &ctx->keep, err);
    if (!rc && hostW && rows > 0 && cols > 0)
        rc = e->ops->upload_async(e, W, (size_t)cols * es, hostW, (size_t)cols * es,
                                  (size_t)cols * es, rows, err);
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    if (stage)
        e->ops->host_free(e, stage);
    if (hostW)
        e->ops->host_free(e, hostW);
    return dd_agree(ctx->world, rc, err);
}

/* The complex types' alpha and beta where the data is: op(A) ← alpha·op(A)
 * and op(B) conjugated where op is 'C' (the transpose was made as the
 * operand arrived), C ← beta·C_in.  Local: the caller agrees. */
static int scale_complex(gemm_call *g, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    dd_summa *s = &g->s;
    if (!e->ops->cscale)
        return dd_fail(err, DD_EUNSUP, "the %s backend cannot scale complex data",
                       e->ops->name);
    const double alpha[2] = {g->alpha, g->alpha_im}, one[2] = {1, 0}, beta[2] = {g->beta, g->beta_im};
    int rc = e->ops->cscale(e, g->t, s->A, s->Mp * s->Kq, alpha, g->ta == 'C', err);
    if (!rc && !api_alpha0(g) && g->tb == 'C')
        rc = e->ops->cscale(e, g->t, s->B, s->Kp * s->Nq, one, 1, err);
    if (!rc && !api_beta0(g))
        rc = e->ops->cscale(e, g->t, s->C, s->Mp * s->Nq, beta, 0, err);
    return rc;
}

/* The caller's operands up (A and B only when alpha ≠ 0, C only when beta
 * ≠ 0: BLAS's rules), alpha and beta applied; beta·C's part of the check.
 * Agreed. */
static int load(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_engine *e = &ctx->eng;
    dd_summa *s = &g->s;
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    void *work[3] = {s->A, s->B, s->C};
    int64_t rows[3] = {s->Mp, s->Kp, s->Mp}, cols[3] = {s->Kq, s->Nq, s->Nq};
    int rc = DD_OK;
    for (int k = 0; k < 3; k++) {
        if (k < 2 ? api_alpha0(g) : api_beta0(g))
            continue;
        if (!g->device) {
            rc = api_load_host(g, k, work[k], rows[k], cols[k], err);
        } else if (ops[k]->direct) { /* in place (the caller's array) on some ranks only:
                                        * every rank agrees all the same */
            if (!g->inplace[k])
                rc = copy_user(g, work[k], ops[k]->p, ops[k]->ld, rows[k], cols[k], 0, err);
            if (!rc && !g->inplace[k])
                rc = e->ops->wait_copies(e, err);
            rc = dd_agree(ctx->world, rc, err);
        } else {
            rd_layout wl;
            api_work_layout(g, k, &wl);
            rc = redist_in(g, ops[k], &wl, work[k], rows[k], cols[k], err);
        }
        api_tick(g, API_T_LOAD + k);
        if (rc)
            return rc;
    }
    if (!rc && dd_fault("misload") && s->Mp * s->Kq > 0) /* tests: op(A) arrives doubled */
        rc = e->ops->scale(e, g->t, s->A, s->Mp * s->Kq, 2.0, err);
    rc = dd_agree(ctx->world, rc, err);
    /* the check's look at the operands as they arrived (kept for finish:
     * C is still computed and written, as for a FAILED residual) */
    if (g->check && (rc = api_sample_operands(g, err)) == DD_ECHECK) {
        g->sample_failed = 1;
        snprintf(g->sample_msg, sizeof g->sample_msg, "%s", err->msg);
        dd_err_clear(err);
        rc = DD_OK;
    }
    if (rc)
        return rc;
    /* alpha = 0: A and B were not read; zeros, for the check */
    if (dd_dtype_complex(g->t))
        rc = scale_complex(g, err);
    else
        rc = e->ops->scale(e, g->t, s->A, s->Mp * s->Kq, g->alpha, err);
    if (!rc && api_alpha0(g))
        rc = e->ops->scale(e, g->t, s->B, s->Kp * s->Nq, 0, err);
    if (!rc && !api_beta0(g) && !dd_dtype_complex(g->t))
        rc = e->ops->scale(e, g->t, s->C, s->Mp * s->Nq, g->beta, err);
    rc = dd_agree(ctx->world, rc, err);
    api_tick(g, API_T_SCALE);
    if (rc || !g->check || api_beta0(g))
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
    if (api_alpha0(g) || g->K == 0) { /* nothing multiplied: C = beta·C_in (there) or 0 */
        int rc = !api_beta0(g)
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
    int rc = DD_OK;
    g->chk.residual = NAN;
    g->chk.passed = 0;
    if (g->check &&
        (rc = check_product(ctx->world, ctx->row, &ctx->g, e, g->t, g->M, g->N, g->K, s->A, s->B,
                            s->C, !api_beta0(g) ? &g->cin : NULL, 0x5eedULL, &g->chk, err)))
        return rc;
    api_tick(g, API_T_MULT);
    if (!g->device) {
        rc = api_store_host(g, err);
    } else if (g->c.direct) { /* in place: computed where the caller has C */
        if (!g->inplace[2])
            rc = copy_user(g, s->C, g->c.p, g->c.ld, s->Mp, s->Nq, 1, err);
        if (!rc && !g->inplace[2])
            rc = e->ops->wait_copies(e, err);
        rc = dd_agree(ctx->world, rc, err);
    } else { /* dd_gemm_device's C is always in the work layout */
        rc =
            dd_agree(ctx->world, dd_fail(err, DD_EFAIL, "a device C outside the work layout"), err);
    }
    api_tick(g, API_T_STORE);
    if (rc)
        return rc;
    if (g->sample_failed) {
        g->chk.passed = 0;
        return dd_fail(err, DD_ECHECK, "the check FAILED: %s", g->sample_msg);
    }
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
    /* both reductions on every rank, whatever the first gave here */
    int rc = dd_mpi_check(MPI_Allreduce(mine, mx, 2, MPI_DOUBLE, MPI_MAX, w), "MPI_Allreduce", err);
    int rc2 =
        dd_mpi_check(MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, w), "MPI_Allreduce", err);
    if ((rc = dd_agree(w, rc ? rc : rc2, err)) || !info)
        return rc;
    info->multiply_seconds = mx[0];
    info->exposed_comm_seconds = sum[1] / g->ctx->size;
    double flops = api_flops(g->t, g->M, g->N, g->K);
    info->tflops = mx[0] > 0 && !api_alpha0(g) ? flops / mx[0] / 1e12 : 0;
    info->check_residual = g->chk.residual;
    info->check_passed = g->check ? g->chk.passed : 0;
    return DD_OK;
}

static int run_call(gemm_call *g, dd_err *err)
{
    int rc = validate(g, err);
    /* nothing to compute, C unchanged: BLAS's quick returns (unless checked) */
    if (rc || g->M == 0 || g->N == 0 || (!g->check && (api_alpha0(g) || g->K == 0) && api_beta1(g)))
        return rc;
    if (g->t != g->ctx->type && (rc = api_retype(g->ctx, g->t, err)))
        return rc;
    if ((rc = api_comm_ready(g->ctx, g->ctx->lookahead + 1, err)))
        return rc;
    api_tick(g, API_T_ARGS);
    /* descriptors over device arrays: staged through the host (CPU: they are host arrays) */
    int staged = g->desc && g->device && !g->ctx->eng.ops->work_is_host;
    api_dstage st;
    if (g->desc && g->device && !staged)
        g->device = 0;
    if (staged && (rc = api_device_stage(g, &st, err)))
        return api_device_unstage(g, &st, rc, err);
    g->cyclic = api_cyclic_fits(g);
    if ((g->piped = api_pipe_fits(g)))
        rc = api_pipe_gemm(g, err);
    else if (!(rc = alloc_blocks(g, err)) && (api_tick(g, API_T_ALLOC), 1) && !(rc = load(g, err)) &&
        !(rc = multiply(g, err)))
        rc = finish(g, err);
    free_blocks(g);
    if (staged)
        rc = api_device_unstage(g, &st, rc, err);
    return rc;
}

dd_status api_gemm(gemm_call *g, dd_gemm_info *info)
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
        info->bad_argument = 0;
    }
    api_tick(g, -1);
    int rc = run_call(g, err);
    api_timing_print(g);
    if (info && rc == DD_EUSAGE)
        info->bad_argument = g->bad_arg;
    if (rc == DD_OK || rc == DD_ECHECK) {
        int rc2 = report(g, info, err);
        rc = rc ? rc : rc2;
    }
    return api_status(rc);
}
