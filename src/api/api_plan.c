/* api_plan.c — plans (dgemm_dist_plan.h): the settings from the model, the
 * memory checked before anything is allocated, the comm backend and work
 * memory, what was chosen (and the tool's account, dgemm_dist_tool.h),
 * telemetry, the teardown.  Element access (dd_plan_read, dd_plan_write):
 * api_plan_stream.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_launch.h"
#include "api_plan.h"
#include "dd_sysmem.h"
#include "timer.h"

dd_err *plan_err(dd_plan *p)
{
    dd_err_clear(&p->ctx->err);
    return &p->ctx->err;
}

size_t plan_c0_bytes(const dd_plan *p)
{
    if (!p->read_c || p->passes < 2)
        return 0;
    int overflow = 0;
    size_t b = dd_mul3((uint64_t)p->s.Mp, (uint64_t)p->s.Nq, dd_elsize(p->t), &overflow);
    return overflow ? SIZE_MAX : b;
}

size_t plan_scratch_bytes(const dd_plan *p)
{
    return !p->ctx->eng.ops->work_is_host && p->transposed ? api_ring_bytes() : 0;
}

size_t plan_ring_bytes(const dd_plan *p)
{
    if (plan_use_ring(p))
        return 2 * api_ring_bytes();
    return p->transposed ? api_ring_bytes() : 0;
}

void *plan_block(const dd_plan *p, int which, int64_t *rows, int64_t *cols)
{
    const dd_summa *s = &p->s;
    int64_t r[3] = {s->Mp, s->Kp, s->Mp}, c[3] = {s->Kq, s->Nq, s->Nq};
    void *b[3] = {s->A, s->B, s->C};
    *rows = r[which];
    *cols = c[which];
    return b[which];
}

/* The same parameters on every rank (rank 0's against mine; pp NULL here
 * is refused after the comparison, which every rank makes); local checks.
 * The flags are compared as what they mean (0 or not). */
static int check_params(dd_context *ctx, const dd_plan_params *pp, dd_err *err)
{
    static const char *names[10] = {
        "params (NULL or not)", "type",      "M",         "N", "K", "read_c", "passes",
        "transposed",           "host_pass", "check_seed"};
    long long mine[10] = {pp != NULL}, r0[10];
    if (pp) {
        long long v[9] = {pp->type,
                          pp->M,
                          pp->N,
                          pp->K,
                          pp->read_c != 0,
                          pp->passes,
                          pp->transposed != 0,
                          pp->host_pass != 0,
                          (long long)pp->check_seed};
        memcpy(mine + 1, v, sizeof v);
    }
    memcpy(r0, mine, sizeof r0);
    int rc = dd_mpi_check(MPI_Bcast(r0, 10, MPI_LONG_LONG, 0, ctx->world), "MPI_Bcast", err);
    if (rc)
        return rc;
    for (int i = 0; i < 10; i++)
        if (mine[i] != r0[i])
            return dd_fail(err, DD_EUSAGE,
                           "rank %d: the plan's %s differs between ranks: %lld here, %lld on "
                           "rank 0 (every rank passes the same dd_plan_params)",
                           ctx->rank, names[i], mine[i], r0[i]);
    if (!pp)
        return dd_fail(err, DD_EUSAGE, "dd_plan_create: params is NULL");
    if (ctx->plan)
        return dd_fail(err, DD_EUSAGE, "the context has a plan already: destroy it first");
    if (!dd_dtype_valid(pp->type))
        return dd_fail(err, DD_EUSAGE,
                       "type %d: must be DD_FLOAT64, DD_FLOAT32, DD_COMPLEX128 or DD_COMPLEX64",
                       pp->type);
    if (pp->M < 0 || pp->N < 0 || pp->K < 0)
        return dd_fail(err, DD_EUSAGE, "M=%lld N=%lld K=%lld: sizes must be >= 0", (long long)pp->M,
                       (long long)pp->N, (long long)pp->K);
    if (pp->passes < 1)
        return dd_fail(err, DD_EUSAGE, "passes %d: must be >= 1", pp->passes);
    return DD_OK;
}

/* The settings: the context's, or with tune the model's where left at 0. */
static int settings(dd_plan *p, dd_err *err)
{
    dd_context *ctx = p->ctx;
    dd_engine *e = &ctx->eng;
    int tune = ctx->tune;
    size_t extra = plan_scratch_bytes(p) + (e->ops->work_is_host ? plan_ring_bytes(p) : 0);
    dd_tune_req r = {ctx->world,
                     ctx->node,
                     ctx->size,
                     p->M,
                     p->N,
                     p->K,
                     p->t,
                     tune ? ctx->opt_P : ctx->g.P,
                     tune ? ctx->opt_Q : ctx->g.Q,
                     tune || ctx->panel ? ctx->panel : engine_panel(e),
                     tune ? ctx->opt_L : ctx->lookahead,
                     ctx->comm_name,
                     extra,
                     p->read_c && p->passes >= 2,
                     ctx->slices};
    int rc = dd_agree(ctx->world, tune_settings(&r, e, &p->tune, err), err);
    if (!rc)
        rc = api_regrid(ctx, p->tune.P, p->tune.Q, err);
    return rc;
}

/* GPU memory: blocks and panel buffers must fit in what the device has free. */
static int gpu_memory_fits(dd_plan *p, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    size_t margin = (size_t)512 << 20, work = p->work_bytes; /* cuBLAS, NCCL, kernels */
    if (!e->info.mem_free || work + margin <= e->info.mem_free)
        return DD_OK;
    return dd_fail(err, DD_EUSAGE,
                   "rank %d needs %.2f GiB of GPU memory (blocks %.2f GiB + panel buffers "
                   "%.2f GiB + %.2f GiB reserve) but %s has %.2f GiB free: use more ranks "
                   "(GPUs), a smaller panel or lookahead",
                   p->ctx->rank, (double)(work + margin) / (1 << 30),
                   (double)(work - p->slot_bytes) / (1 << 30), (double)p->slot_bytes / (1 << 30),
                   (double)margin / (1 << 30), e->info.device,
                   (double)e->info.mem_free / (1 << 30));
}

/* Host memory on the CPU backend: what the ranks of this host hold together
 * must fit in what the host (or its cgroup) allows, or the OOM killer ends
 * the run without a word.  Collective over the node. */
static int host_memory_fits(dd_plan *p, size_t work, dd_err *err)
{
    dd_context *ctx = p->ctx;
    double mine = (double)work, node = 0;
    int ranks = 1;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &node, 1, MPI_DOUBLE, MPI_SUM, ctx->node),
                          "MPI_Allreduce of host memory", err);
    if (!rc)
        rc = dd_mpi_check(MPI_Comm_size(ctx->node, &ranks), "MPI_Comm_size", err);
    double have = (double)dd_host_memory_bytes();
    if (rc || have <= 0 || node <= 0.95 * have)
        return rc;
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    return dd_fail(err, DD_EUSAGE,
                   "the %d rank%s on host %s need%s %.2f GiB of memory (%.2f GiB per rank: blocks "
                   "and panel buffers) but it allows %.2f GiB: use more hosts, fewer ranks per "
                   "host, or a smaller problem",
                   ranks, ranks == 1 ? "" : "s", host, ranks == 1 ? "s" : "", node / (1 << 30),
                   mine / (1 << 30), have / (1 << 30));
}

/* Sizes, panels, memory: everything before any data moves.  Every size
 * product is checked for overflow before it is used. */
static int layout(dd_plan *p, dd_err *err)
{
    dd_context *ctx = p->ctx;
    dd_summa *s = &p->s;
    summa_init(s, &ctx->eng, &ctx->comm, ctx->g, p->t, p->M, p->N, p->K, p->tune.nb, p->tune.L,
               p->read_c);
    summa_use_slices(s, ctx->world, ctx->slices);
    int overflow = 0, rc = DD_OK;
    p->work_bytes = dd_add(summa_work_bytes(s, &p->slot_bytes, &overflow),
                           dd_add(plan_c0_bytes(p), plan_scratch_bytes(p), &overflow), &overflow);
    if (overflow)
        rc = dd_fail(err, DD_EUSAGE,
                     "M=%lld N=%lld K=%lld on a %dx%d grid: rank %d's blocks would need more "
                     "than 2^64 bytes; use many more ranks or a smaller problem",
                     (long long)p->M, (long long)p->N, (long long)p->K, s->g.P, s->g.Q, ctx->rank);
    else if (s->npanels < 0)
        rc = dd_fail(err, DD_EUSAGE, "panel %lld gives no panel list", (long long)s->nb);
    if (ctx->eng.ops->work_is_host) {
        int rc2 =
            host_memory_fits(p, overflow ? SIZE_MAX : p->work_bytes + plan_ring_bytes(p), err);
        rc = rc ? rc : rc2;
    } else if (!rc) {
        rc = gpu_memory_fits(p, err);
    }
    return dd_agree(ctx->world, rc, err);
}

dd_status dd_plan_create(dd_context *ctx, const dd_plan_params *pp, dd_plan **out)
{
    if (!ctx) /* no communicator to agree on: refused here alone */
        return DD_ERROR_USAGE;
    if (out)
        *out = NULL;
    dd_err *err = &ctx->err;
    dd_err_clear(err);
    if (!ctx->eng_open)
        return api_status(dd_fail(err, DD_EFAIL, "the context has no backend open: destroy it"));
    /* pp and out NULL are refused on every rank, after the collectives
     * every rank makes */
    dd_plan *p = out ? calloc(1, sizeof *p) : NULL;
    int rc = dd_agree(
        ctx->world,
        !out ? dd_fail(err, DD_EUSAGE, "dd_plan_create: plan (the result's pointer) is NULL")
        : p  ? DD_OK
             : dd_fail(err, DD_ENOMEM, "out of host memory"),
        err);
    if (!rc)
        rc = dd_agree(ctx->world, check_params(ctx, pp, err), err);
    if (rc) {
        free(p);
        return api_status(rc);
    }
    p->ctx = ctx;
    pthread_mutex_init(&p->hmu, NULL);
    p->t = (dd_dtype)pp->type; /* checked above; the same values (api_impl.h) */
    p->M = pp->M;
    p->N = pp->N;
    p->K = pp->K;
    p->read_c = pp->read_c != 0;
    p->passes = pp->passes;
    p->transposed = pp->transposed != 0;
    p->host_pass = pp->host_pass != 0 && !ctx->eng.ops->work_is_host;
    p->check_seed = pp->check_seed ? pp->check_seed : 0x5eedULL;
    p->alpha = 1;
    if (p->t != ctx->type)
        rc = api_retype(ctx, p->t, err);
    if (!rc && !(rc = settings(p, err)))
        rc = layout(p, err);
    if (rc) {
        pthread_mutex_destroy(&p->hmu);
        free(p);
        return api_status(rc);
    }
    ctx->plan = p;
    *out = p;
    return DD_SUCCESS;
}

dd_status dd_plan_get_info(const dd_plan *p, dd_plan_info *in)
{
    if (!p || !in)
        return DD_ERROR_USAGE;
    const dd_context *ctx = p->ctx;
    const dd_engine *e = &ctx->eng;
    const dd_summa *s = &p->s;
    memset(in, 0, sizeof *in);
    in->P = ctx->g.P;
    in->Q = ctx->g.Q;
    in->p = ctx->g.p;
    in->q = ctx->g.q;
    in->panel = s->nb;
    in->lookahead = s->lookahead;
    in->panels = s->npanels;
    dd_range rm = grid_block(p->M, ctx->g.P, ctx->g.p), rn = grid_block(p->N, ctx->g.Q, ctx->g.q);
    dd_range rkq = grid_block(p->K, ctx->g.Q, ctx->g.q), rkp = grid_block(p->K, ctx->g.P, ctx->g.p);
    dd_range rows[3] = {rm, rkp, rm}, cols[3] = {rkq, rn, rn};
    for (int i = 0; i < 3; i++) {
        in->row0[i] = rows[i].start;
        in->rows[i] = rows[i].len;
        in->col0[i] = cols[i].start;
        in->cols[i] = cols[i].len;
    }
    in->backend = e->ops->name;
    in->comm = ctx->comm_open ? ctx->comm.ops->name : "";
    in->kernel = e->info.kernel;
    in->keeps_c = plan_c0_bytes(p) > 0;
    in->work_bytes = p->work_bytes;
    return DD_SUCCESS;
}

/* The layout asked for is the one compiled here, or nothing is written
 * (the refusal the context's last error). */
static int tool_version(const dd_plan *p, int version, const char *call)
{
    if (version == DGEMM_DIST_TOOL_VERSION)
        return DD_OK;
    dd_err_clear(&p->ctx->err);
    return dd_fail(&p->ctx->err, DD_EUNSUP,
                   "%s: built against dgemm_dist_tool.h version %d, but the library's is %d: "
                   "rebuild the program against this library's headers",
                   call, version, DGEMM_DIST_TOOL_VERSION);
}

dd_status dd_plan_get_tool_info(const dd_plan *p, int version, dd_plan_tool_info *in)
{
    if (!p || !in)
        return DD_ERROR_USAGE;
    int rc = tool_version(p, version, "dd_plan_get_tool_info");
    if (rc)
        return api_status(rc);
    const dd_context *ctx = p->ctx;
    const dd_engine *e = &ctx->eng;
    memset(in, 0, sizeof *in);
    in->backend_why = ctx->why;
    in->comm_detail = ctx->comm_open ? ctx->comm.detail : "";
    in->device = e->info.device;
    in->versions = e->info.versions;
    in->device_index = e->info.device_index;
    in->host_memory = e->ops->work_is_host;
    in->slot_bytes = p->slot_bytes;
    in->host_bytes = (e->ops->work_is_host ? p->work_bytes : 0) + plan_ring_bytes(p);
    in->tune_line = p->tune.line;
    in->model_line = p->tune.have ? p->tune.model : NULL;
    in->model_json = p->tune.have ? p->tune.json : NULL;
    for (int i = 0; i < 3; i++)
        in->allocate_seconds[i] = p->alloc_sec[i];
    return DD_SUCCESS;
}

/* Work blocks, the kept C, the host copies of the host pass, SUMMA's slots
 * and panel list, the stream buffers.  Not agreed. */
static int alloc_memory(dd_plan *p, dd_err *err)
{
    dd_summa *s = &p->s;
    dd_engine *e = &p->ctx->eng;
    size_t es = dd_elsize(p->t);
    size_t sz[3] = {(size_t)(s->Mp * s->Kq) * es, (size_t)(s->Kp * s->Nq) * es,
                    (size_t)(s->Mp * s->Nq) * es};
    void **blk[3] = {&s->A, &s->B, &s->C}, **host[3] = {&p->hA, &p->hB, &p->hC};
    int rc = DD_OK;
    for (int i = 0; i < 3 && !rc; i++)
        rc = e->ops->alloc(e, sz[i], blk[i], err);
    if (!rc && plan_c0_bytes(p))
        rc = e->ops->alloc(e, sz[2], &p->C0, err);
    for (int i = 0; i < 3 && !rc && p->host_pass; i++)
        rc = e->ops->host_alloc(e, sz[i], host[i], err);
    s->hA = p->hA;
    s->hB = p->hB;
    if (!rc)
        rc = summa_setup(s, err);
    return rc;
}

dd_status dd_plan_allocate(dd_plan *p)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err = plan_err(p);
    dd_context *ctx = p->ctx;
    if (p->owns)
        return api_status(dd_agree(
            ctx->world, dd_fail(err, DD_EUSAGE, "dd_plan_allocate was called on this plan already"),
            err));
    double t0 = dd_now();
    int rc = api_comm_ready(ctx, p->s.lookahead + 1, err);
    double t1 = dd_now();
    if (!rc)
        rc = dd_agree(ctx->world, alloc_memory(p, err), err);
    if (!rc)
        rc = plan_ring_open(p, err);
    p->owns = 1; /* what was allocated is freed by dd_plan_destroy */
    double t2 = dd_now();
    if (!rc) {
        rc = summa_warm(&p->s, err);
        if (rc == DD_ECOMM)
            return api_status(rc);
        rc = dd_agree(ctx->world, rc, err);
        ctx->warmed = rc == DD_OK;
    }
    p->allocated = rc == DD_OK;
    p->alloc_sec[0] = t1 - t0;
    p->alloc_sec[1] = t2 - t1;
    p->alloc_sec[2] = dd_now() - t2;
    return api_status(rc);
}

dd_status dd_plan_set_progress(dd_plan *p, void (*fn)(void *, int64_t, int64_t), void *arg)
{
    if (!p)
        return DD_ERROR_USAGE;
    p->s.on_panel = p->ctx->eng.ops->work_is_host ? fn : NULL;
    p->s.on_panel_arg = arg;
    return DD_SUCCESS;
}

const char *dd_plan_kernel_note(dd_plan *p)
{
    if (!p)
        return "";
    dd_engine *e = &p->ctx->eng;
    const char *k = e->ops->note ? e->ops->note(e) : "";
    if (!p->s.slices)
        return k;
    /* SUMMA's part: the panels travelled sliced, and how many panel
     * products were redone in the element type (the last multiply's, or
     * the bands' so far) */
    char redone[160] = "";
    if (p->s.redone)
        snprintf(redone, sizeof redone, ", %lld panel product%s redone in %s (out of the moduli's "
                 "range)", (long long)p->s.redone, p->s.redone == 1 ? "" : "s",
                 dd_dtype_name(p->t));
    snprintf(p->note, sizeof p->note, "%s%s%s%s", k, k[0] ? "; " : "",
             p->s.keep_b ? "multiplied from slices, B's made once for every band"
                         : "panels broadcast as slices",
             redone);
    return p->note;
}

dd_status dd_plan_telemetry_start(dd_plan *p)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_engine *e = &p->ctx->eng;
    if (e->ops->telemetry_start)
        e->ops->telemetry_start(e);
    return DD_SUCCESS;
}

dd_status dd_plan_telemetry_stop(dd_plan *p, int version, dd_telemetry *t)
{
    if (!p || !t)
        return DD_ERROR_USAGE;
    int rc = tool_version(p, version, "dd_plan_telemetry_stop");
    if (rc)
        return api_status(rc);
    dd_engine *e = &p->ctx->eng;
    if (e->ops->telemetry_stop)
        e->ops->telemetry_stop(e, t);
    else
        dd_tele_unavailable(t, "no GPU: the CPU backend");
    return DD_SUCCESS;
}

void dd_plan_destroy(dd_plan *p)
{
    if (!p)
        return;
    dd_engine *e = &p->ctx->eng;
    dd_summa *s = &p->s;
    if (p->owns && p->ctx->eng_open) {
        dd_err ignored = {{0}}; /* no staged copy (dd_plan_put_rows) lands after the free */
        e->ops->wait_copies(e, &ignored);
        if (s->panels || s->slotA[0] || s->slotB[0])
            summa_teardown(s);
        plan_ring_close(p);
        void *blocks[] = {s->A, s->B, s->C, p->C0};
        for (int i = 0; i < 4; i++)
            if (blocks[i])
                e->ops->free(e, blocks[i]);
        void *host[] = {p->hA, p->hB, p->hC};
        for (int i = 0; i < 3; i++)
            if (host[i])
                e->ops->host_free(e, host[i]);
    }
    for (int i = 0; i < DD_PLAN_HOST_BUFS && p->ctx->eng_open; i++)
        if (p->hbuf[i].p && p->hbuf[i].bytes) /* dd_plan_host_alloc's, after the wait above */
            e->ops->host_free(e, p->hbuf[i].p);
    pthread_mutex_destroy(&p->hmu);
    check_cterm_free(&p->cin);
    p->ctx->plan = NULL;
    free(p);
}

void dd_release_devices(void)
{
    engine_release_devices();
}

void dd_prestart_device(void)
{
    engine_prestart(dd_launch_local_rank());
}
