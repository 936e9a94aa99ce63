/* api_context.c — contexts of the public API (dgemm_dist.h): the grid, the
 * communicators, the engine and comm backends.  The library's composition
 * root picks the backends here and nowhere else (engine_select,
 * comm_select) and hands their ops structs to core (docs/design.md,
 * section 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_impl.h"
#include "dd_knobs.h"
#include "summa.h"

dd_status api_status(int rc)
{
    return (dd_status)dd_status_of(rc);
}

const char *dd_status_string(dd_status s)
{
    static const char *names[] = {"success",     "usage error",         "out of memory",
                                  "I/O error",   "communication error", "check failed",
                                  "unsupported", "internal error",      "MPI error"};
    if ((int)s < 0 || (size_t)s >= sizeof names / sizeof names[0])
        return "unknown status";
    return names[s];
}

void dd_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = DGEMM_DIST_VERSION_MAJOR;
    if (minor)
        *minor = DGEMM_DIST_VERSION_MINOR;
    if (patch)
        *patch = DGEMM_DIST_VERSION_PATCH;
}

const char *dd_blas_version(void)
{
    return engine_cpu_blas_version();
}

void dd_context_options_init(dd_context_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->backend = "auto";
    o->comm = "auto";
    o->lookahead = 1;
}

dd_status dd_block_range(int64_t n, int parts, int index, int64_t *start, int64_t *len)
{
    if (n < 0 || parts < 1 || index < 0 || index >= parts)
        return DD_ERROR_USAGE;
    dd_range r = grid_block(n, parts, index);
    if (start)
        *start = r.start;
    if (len)
        *len = r.len;
    return DD_SUCCESS;
}

const char *dd_context_last_error(const dd_context *ctx)
{
    return ctx ? ctx->err.msg : "no context (NULL)";
}

dd_status dd_context_grid(const dd_context *ctx, int *P, int *Q, int *p, int *q)
{
    if (!ctx)
        return DD_ERROR_USAGE;
    if (P)
        *P = ctx->g.P;
    if (Q)
        *Q = ctx->g.Q;
    if (p)
        *p = ctx->g.p;
    if (q)
        *q = ctx->g.q;
    return DD_SUCCESS;
}

const char *dd_context_backend(const dd_context *ctx)
{
    return ctx && ctx->eng_open ? ctx->eng.ops->name : "";
}

static void close_comm(dd_context *ctx);

static void close_backends(dd_context *ctx)
{
    api_work_free(ctx);
    close_comm(ctx);
    if (ctx->eng_open)
        ctx->eng.ops->close(&ctx->eng);
    ctx->eng_open = 0;
}

/* DD_OZAKI2_PANELS (agreed by same_knobs) for this context: slices or fp64
 * as set; auto: slices where the comm backend comm_select will open moves
 * GPU memory straight (the copy engines, NCCL), FP64 panels where it goes
 * through MPI (staged through host memory: the blob's N bytes an element
 * against FP64's 8 cost more on that path than the receivers' slicing
 * saves, docs/results/h200-2026-12-03-call-f) and on the CPU backend.
 * Collective over the context (the most ranks sharing a GPU). */
static int choose_slices(dd_context *ctx, dd_err *err)
{
    long long v = dd_knob_int(DDK_OZAKI2_PANELS); /* 0 auto, 1 slices, 2 fp64 */
    int shared = ctx->eng.info.ranks_per_device, most = shared;
    int rc = dd_mpi_check(MPI_Allreduce(&shared, &most, 1, MPI_INT, MPI_MAX, ctx->world),
                          "MPI_Allreduce of GPU sharing", err);
    const char *c = ctx->eng.ops->work_is_host ? "mpi"
                                               : comm_gpu_choice(ctx->comm_name, most, 1);
    ctx->slices = v == 1 || (v == 0 && (!strcmp(c, "ce") || !strcmp(c, "nccl")));
    return rc;
}

int api_open_backends(dd_context *ctx, dd_dtype t, dd_err *err)
{
    close_backends(ctx);
    dd_engine_cfg ecfg = {ctx->world, ctx->node, t, ctx->have_kernel ? ctx->kernel : NULL,
                          ctx->threads};
    int rc = engine_select(ctx->backend, &ecfg, &ctx->eng, ctx->why, sizeof ctx->why, err);
    ctx->eng_open = rc == DD_OK;
    if (!rc)
        ctx->type = t;
    if (!rc) /* engine_select's result is agreed: every rank is here */
        rc = choose_slices(ctx, err);
    return rc;
}

static void close_comm(dd_context *ctx)
{
    if (ctx->comm_open)
        ctx->comm.ops->close(&ctx->comm);
    ctx->comm_open = 0;
    ctx->comm_slots = 0;
    ctx->warmed = 0;
}

int api_comm_ready(dd_context *ctx, int slots, dd_err *err)
{
    if (ctx->comm_open && ctx->comm_slots >= slots)
        return DD_OK;
    close_comm(ctx);
    dd_engine *e = &ctx->eng;
    dd_comm_cfg cfg = {ctx->world,
                       ctx->row,
                       ctx->col,
                       slots,
                       e->ops->work_is_host,
                       e->ops->comm_stream(e),
                       e->ops->compute_stream(e),
                       e->info.ranks_per_device};
    int rc = dd_agree(ctx->world, comm_select(ctx->comm_name, &cfg, &ctx->comm, err), err);
    ctx->comm_open = rc == DD_OK;
    ctx->comm_slots = rc == DD_OK ? slots : 0;
    return rc;
}

/* Grid communicators: both splits made on every rank (collective). */
static int split_grid(dd_context *ctx, dd_err *err)
{
    int rc = dd_mpi_check(MPI_Comm_split(ctx->world, ctx->g.p, ctx->g.q, &ctx->row),
                          "MPI_Comm_split", err);
    int rc2 = dd_mpi_check(MPI_Comm_split(ctx->world, ctx->g.q, ctx->g.p, &ctx->col),
                           "MPI_Comm_split", err);
    return rc ? rc : rc2;
}

int api_regrid(dd_context *ctx, int P, int Q, dd_err *err)
{
    if (P == ctx->g.P && Q == ctx->g.Q)
        return DD_OK;
    if (P < 1 || Q < 1 || (int64_t)P * Q != ctx->size)
        return dd_agree(
            ctx->world,
            dd_fail(err, DD_EUSAGE, "grid %dx%d does not cover %d ranks", P, Q, ctx->size), err);
    close_comm(ctx);
    api_work_free(ctx); /* kept slots and blocks were sized for the old grid */
    MPI_Comm *comms[] = {&ctx->row, &ctx->col};
    for (int i = 0; i < 2; i++)
        if (*comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(comms[i]);
    ctx->g = grid_make(P, Q, ctx->rank);
    return dd_agree(ctx->world, split_grid(ctx, err), err);
}

int api_retype(dd_context *ctx, dd_dtype t, dd_err *err)
{
    dd_engine *e = &ctx->eng;
    if (!e->ops->retype) { /* the engine serves every type as it is */
        ctx->type = t;
        return DD_OK;
    }
    int rc =
        dd_agree(ctx->world, e->ops->retype(e, t, ctx->have_kernel ? ctx->kernel : NULL, err), err);
    if (!rc)
        ctx->type = t;
    return rc;
}

static int copy_name(char *dst, size_t n, const char *src, const char *what, dd_err *err)
{
    if (strlen(src) >= n)
        return dd_fail(err, DD_EUSAGE, "%s name '%.64s' is too long", what, src);
    snprintf(dst, n, "%s", src);
    return DD_OK;
}

/* The options, checked locally (agreed by the caller). */
static int take_options(dd_context *ctx, const dd_context_options *o, dd_err *err)
{
    int rc = copy_name(ctx->backend, sizeof ctx->backend, o->backend ? o->backend : "auto",
                       "backend", err);
    if (!rc)
        rc = copy_name(ctx->comm_name, sizeof ctx->comm_name, o->comm ? o->comm : "auto", "comm",
                       err);
    ctx->have_kernel = o->kernel != NULL;
    if (!rc && o->kernel)
        rc = copy_name(ctx->kernel, sizeof ctx->kernel, o->kernel, "kernel", err);
    ctx->panel = o->panel;
    ctx->lookahead = o->lookahead ? o->lookahead : 1;
    ctx->threads = o->threads;
    ctx->tune = o->tune != 0;
    ctx->opt_P = o->P;
    ctx->opt_Q = o->Q;
    ctx->opt_L = o->lookahead;
    if (rc)
        return rc;
    if (strcmp(ctx->backend, "auto") && strcmp(ctx->backend, "cuda") && strcmp(ctx->backend, "cpu"))
        return dd_fail(err, DD_EUSAGE, "backend '%s': must be auto, cuda or cpu", ctx->backend);
    if (!comm_known(ctx->comm_name))
        return dd_fail(err, DD_EUSAGE, "comm '%s': must be auto, nccl, ce (cuda-ipc) or mpi",
                       ctx->comm_name);
    if (o->panel < 0)
        return dd_fail(err, DD_EUSAGE, "panel %lld: must be >= 0 (0: default)",
                       (long long)o->panel);
    if (ctx->lookahead < 1 || ctx->lookahead > DD_LOOKAHEAD_MAX)
        return dd_fail(err, DD_EUSAGE, "lookahead %d: must be 1..%d (0: default)", o->lookahead,
                       DD_LOOKAHEAD_MAX);
    if (!dd_dtype_valid(o->type))
        return dd_fail(err, DD_EUSAGE,
                       "type %d: must be DD_FLOAT64, DD_FLOAT32, DD_COMPLEX128 or DD_COMPLEX64",
                       o->type);
    if (o->threads < 0)
        return dd_fail(err, DD_EUSAGE, "threads %d: must be >= 0 (0: default)", o->threads);
    int P = o->P, Q = o->Q;
    if (!P && !Q)
        grid_default(ctx->size, &P, &Q);
    if (P < 1 || Q < 1 || (int64_t)P * Q != ctx->size)
        return dd_fail(err, DD_EUSAGE,
                       "grid %dx%d does not cover the communicator's %d ranks (P*Q must equal "
                       "the size; 0x0: the default)",
                       o->P, o->Q, ctx->size);
    ctx->g = grid_make(P, Q, ctx->rank);
    return DD_OK;
}

/* The options as every rank must give them: the strings (NULL as what it
 * means: "auto", or no kernel named), the numbers as given (0 means auto
 * where tune is set, so 0 and a value differ).  A string longer than its
 * field here is longer than the context's too, and take_options refuses it. */
typedef struct {
    char backend[64], comm[64], kernel[80];
    long long num[8];
} opt_image;

static const char *opt_names[8] = {"panel",   "lookahead", "P",    "Q",
                                   "threads", "type",      "tune", "kernel (NULL or named)"};

static void opt_take(opt_image *im, const dd_context_options *o)
{
    memset(im, 0, sizeof *im);
    snprintf(im->backend, sizeof im->backend, "%s", o->backend ? o->backend : "auto");
    snprintf(im->comm, sizeof im->comm, "%s", o->comm ? o->comm : "auto");
    snprintf(im->kernel, sizeof im->kernel, "%s", o->kernel ? o->kernel : "");
    long long n[8] = {o->panel,   o->lookahead, o->P,         o->Q,
                      o->threads, o->type,      o->tune != 0, o->kernel != NULL};
    memcpy(im->num, n, sizeof n);
}

/* Every option the same on every rank as on rank 0 (collective over the
 * context's communicator, before anything depends on them); a difference
 * is one message naming the option and both values. */
static int same_options(dd_context *ctx, const dd_context_options *o, dd_err *err)
{
    opt_image mine, r0;
    opt_take(&mine, o);
    r0 = mine;
    int rc = dd_mpi_check(MPI_Bcast(&r0, (int)sizeof r0, MPI_BYTE, 0, ctx->world),
                          "MPI_Bcast of the context's options", err);
    if (rc)
        return rc;
    const char *sname[3] = {"backend", "comm", "kernel"};
    const char *smine[3] = {mine.backend, mine.comm, mine.kernel},
               *sr0[3] = {r0.backend, r0.comm, r0.kernel};
    for (int i = 0; i < 8; i++) /* whether a kernel is named, before which */
        if (mine.num[i] != r0.num[i])
            return dd_fail(err, DD_EUSAGE,
                           "rank %d: option %s differs between ranks: %lld here, %lld on rank 0 "
                           "(every rank passes the same dd_context_options)",
                           ctx->rank, opt_names[i], mine.num[i], r0.num[i]);
    for (int i = 0; i < 3; i++)
        if (strcmp(smine[i], sr0[i]))
            return dd_fail(err, DD_EUSAGE,
                           "rank %d: option %s differs between ranks: '%.64s' here, '%.64s' on "
                           "rank 0 (every rank passes the same dd_context_options)",
                           ctx->rank, sname[i], smine[i], sr0[i]);
    return DD_OK;
}

/* The knobs that change what ranks send one another, the same on every
 * rank (collective whatever the value here): DD_OZAKI2_PANELS. */
static int same_knobs(dd_context *ctx, dd_err *err)
{
    static const char *const name[] = {"auto", "slices", "fp64"};
    int v = (int)dd_knob_int(DDK_OZAKI2_PANELS), in[2] = {v, -v}, out[2] = {v, -v};
    int rc = dd_mpi_check(MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, ctx->world),
                          "MPI_Allreduce of the panel knobs", err);
    if (!rc && out[0] != -out[1])
        rc = dd_fail(err, DD_EUSAGE,
                     "rank %d: DD_OZAKI2_PANELS is '%s' here but not on every rank: set it the "
                     "same on every rank",
                     ctx->rank, name[v >= 0 && v < 3 ? v : 0]);
    return rc;
}

/* The grid's and the node's communicators (collective). */
static int split(dd_context *ctx, dd_err *err)
{
    int rc = split_grid(ctx, err);
    int rc2 = dd_mpi_check(
        MPI_Comm_split_type(ctx->world, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &ctx->node),
        "MPI_Comm_split_type", err);
    return rc ? rc : rc2;
}

static dd_status create_fail(dd_status s, const char *msg, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "%s", msg);
    return s;
}

dd_status dd_context_create(MPI_Comm comm, const dd_context_options *opts, dd_context **out,
                            char *errbuf, size_t errlen)
{
    int init = 0, fin = 0;
    if (out)
        *out = NULL;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return create_fail(DD_ERROR_MPI, "dd_context_create: MPI is not initialized", errbuf,
                           errlen);
    if (comm == MPI_COMM_NULL)
        return create_fail(DD_ERROR_MPI, "dd_context_create: comm is MPI_COMM_NULL", errbuf,
                           errlen);
    dd_context_options defaults;
    dd_context_options_init(&defaults);
    dd_context *ctx = out ? calloc(1, sizeof *ctx) : NULL;
    int local = out && !ctx ? DD_ENOMEM : DD_OK, rc;
    dd_err err = {{0}};
    if (!out) /* refused on every rank: the others are waiting below */
        local = dd_fail(&err, DD_EUSAGE, "dd_context_create: ctx (the result's pointer) is NULL");
    else if (!ctx)
        dd_fail(&err, DD_ENOMEM, "out of host memory for a context");
    else
        ctx->world = ctx->node = ctx->row = ctx->col = MPI_COMM_NULL;
    /* agree on the arguments and the allocation over the caller's communicator first */
    if ((rc = dd_agree(comm, local, &err)))
        goto fail;
    if ((rc = dd_agree(comm, dd_mpi_check(MPI_Comm_dup(comm, &ctx->world), "MPI_Comm_dup", &err),
                       &err)))
        goto fail;
    /* MPI errors on the library's communicators (and those made from them)
     * come back as codes, to be agreed, instead of ending the caller's job */
    if ((rc = dd_agree(ctx->world,
                       dd_mpi_check(MPI_Comm_set_errhandler(ctx->world, MPI_ERRORS_RETURN),
                                    "MPI_Comm_set_errhandler", &err),
                       &err)))
        goto fail;
    MPI_Comm_rank(ctx->world, &ctx->rank);
    MPI_Comm_size(ctx->world, &ctx->size);
    /* the library's knobs checked now, a bad value's warning from this
     * communicator's rank 0 (world rank 0 may not be among its ranks) */
    dd_knobs_warn(DD_KNOB_LIBRARY, ctx->rank == 0);
    const dd_context_options *o = opts ? opts : &defaults;
    int same = same_options(ctx, o, &err); /* collective: made whatever the options are here */
    int knobs = same_knobs(ctx, &err);       /* collective too */
    int taken = take_options(ctx, o, &err);
    if ((rc = dd_agree(ctx->world, same ? same : knobs ? knobs : taken, &err)) ||
        (rc = dd_agree(ctx->world, split(ctx, &err), &err)) ||
        (rc = api_open_backends(ctx, (dd_dtype)o->type, &err))) /* checked; api_impl.h */
        goto fail;
    ctx->copy_threads = api_copy_threads(ctx->node);
    *out = ctx;
    return DD_SUCCESS;
fail:
    dd_context_destroy(ctx);
    return create_fail(api_status(rc), err.msg, errbuf, errlen);
}

void dd_context_destroy(dd_context *ctx)
{
    if (!ctx)
        return;
    int fin = 0;
    MPI_Finalized(&fin); /* callable at any time, after MPI_Finalize too */
    dd_plan_destroy(ctx->plan);
    if (fin) {
        /* After MPI_Finalize (a destructor run at exit): the communicators
         * and the comm backend's MPI objects ended with MPI, and closing
         * them would call MPI; they are left.  The memory that needs no MPI
         * is released: work memory, the engine. */
        api_work_free(ctx);
        ctx->comm_open = 0;
        if (ctx->eng_open)
            ctx->eng.ops->close(&ctx->eng);
        free(ctx);
        return;
    }
    close_backends(ctx);
    MPI_Comm *comms[] = {&ctx->row, &ctx->col, &ctx->node, &ctx->world};
    for (int i = 0; i < 4; i++)
        if (*comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(comms[i]);
    free(ctx);
}
