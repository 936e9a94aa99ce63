/* comm_nccl.c — panel broadcasts with NCCL on the CUDA engine's streams
 * (comm.h).
 *
 * Communicators.  One world communicator, bootstrapped by an id that rank 0
 * makes and MPI_Bcast carries; the row and column communicators are split
 * from it (ncclCommSplit, NCCL >= 2.18), with each rank's MPI row/column
 * rank as key so that NCCL roots and MPI roots name the same rank.  Older
 * NCCL gets one id per row and per column instead.  A group of one rank gets
 * no communicator (nothing is ever broadcast in it), so a one-rank run starts
 * no NCCL at all.  Every step of set-up is agreed over MPI (dd_agree) before
 * the next, so a rank that fails reports and the others do not walk into an
 * NCCL init that would wait for it.
 *
 * Ordering, all on the GPU, the host never waits:
 *
 *   comm stream:    wait slot_free[s] → pack A (root) → group{bcast A on row,
 *                   bcast B on col} → record ready[s]
 *   compute stream: wait ready[s] → gemm → record slot_free[s]
 *
 * slot_free[s] is recorded by release() after the gemm that read slot s, and
 * SUMMA posts into s only after that release, so the refill of a slot
 * waits for the multiply that last read it.  A never-recorded event is
 * complete, so the first post into each slot waits for nothing.  Every rank
 * issues its broadcasts in panel order, row before column, in one group per
 * panel, so NCCL sees the same sequence everywhere.
 *
 * The B root broadcasts straight from its block (in place: send = receive
 * buffer); the A root packs its strided slice into the slot first.  A
 * broadcast of zero elements (an empty block row or column, the same for
 * every member) is skipped by every member alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "agree.h"
#include "comm.h"
#include "dd_cuda.h"

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0) && !defined(DD_NCCL_NO_SPLIT)
#define DD_NCCL_SPLIT 1
#else
#define DD_NCCL_SPLIT 0
#endif

typedef struct {
    ncclComm_t world, row, col;
    cudaStream_t cs, xs; /* the engine's communication and compute streams */
    int nslots;
    cudaEvent_t *ready, *slot_free;
} nccl_state;

static int nccl_check(ncclResult_t r, const char *what, dd_err *err)
{
    if (r == ncclSuccess)
        return DD_OK;
    const char *last = ncclGetLastError(NULL);
    return dd_fail(err, DD_EFAIL, "%s failed: %s%s%s%s", what, ncclGetErrorString(r),
                   last && *last ? " (" : "", last && *last ? last : "", last && *last ? ")" : "");
}

static void free_comm(ncclComm_t *comm, int abort)
{
    if (*comm)
        (void)(abort ? ncclCommAbort(*comm) : ncclCommDestroy(*comm));
    *comm = NULL;
}

static void free_state(nccl_state *s, int abort)
{
    if (!s)
        return;
    free_comm(&s->col, abort);
    free_comm(&s->row, abort);
    free_comm(&s->world, abort);
    for (int i = 0; i < s->nslots; i++) {
        if (s->ready && s->ready[i])
            cudaEventDestroy(s->ready[i]);
        if (s->slot_free && s->slot_free[i])
            cudaEventDestroy(s->slot_free[i]);
    }
    free(s->ready);
    free(s->slot_free);
    free(s);
}

/* Local checks and allocations: nothing collective. */
static int prepare(nccl_state **out, const dd_comm_cfg *cfg, dd_err *err)
{
    if (cfg->work_is_host)
        return dd_fail(err, DD_EUNSUP,
                       "the NCCL comm backend needs the CUDA backend (this run uses the CPU)");
    if (cfg->ranks_per_device > 1) {
        char host[MPI_MAX_PROCESSOR_NAME] = "";
        int len = 0;
        MPI_Get_processor_name(host, &len);
        return dd_fail(err, DD_EUNSUP,
                       "%d ranks share one GPU on host %s; NCCL needs one GPU per rank: use "
                       "--comm mpi or one rank per GPU",
                       cfg->ranks_per_device, host);
    }
    nccl_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the NCCL comm backend");
    *out = s;
    s->cs = (cudaStream_t)cfg->comm_stream;
    s->xs = (cudaStream_t)cfg->compute_stream;
    s->ready = calloc((size_t)cfg->nslots, sizeof *s->ready);
    s->slot_free = calloc((size_t)cfg->nslots, sizeof *s->slot_free);
    if (!s->ready || !s->slot_free)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the NCCL comm backend");
    s->nslots = cfg->nslots;
    for (int i = 0; i < s->nslots; i++) {
        int rc;
        if ((rc = dd_cuda_check(cudaEventCreateWithFlags(&s->ready[i], cudaEventDisableTiming),
                                "cudaEventCreateWithFlags", err)) ||
            (rc = dd_cuda_check(cudaEventCreateWithFlags(&s->slot_free[i], cudaEventDisableTiming),
                                "cudaEventCreateWithFlags", err)))
            return rc;
    }
    return DD_OK;
}

/* Collective over `mpi`: rank 0 of it makes an id, everyone gets it and
 * joins a blocking NCCL communicator over the same ranks.  A group of one
 * gets none (NULL): nothing is ever broadcast in it. */
static int init_from_id(MPI_Comm mpi, ncclComm_t *comm, const char *which, dd_err *err)
{
    int rank = 0, size = 0, rc;
    struct {
        int rc;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof msg);
    char what[96];
    *comm = NULL;
    if ((rc = dd_mpi_check(MPI_Comm_rank(mpi, &rank), "MPI_Comm_rank", err)) ||
        (rc = dd_mpi_check(MPI_Comm_size(mpi, &size), "MPI_Comm_size", err)) || size == 1)
        return rc;
    snprintf(what, sizeof what, "ncclGetUniqueId for the %s communicator", which);
    if (rank == 0)
        msg.rc = nccl_check(ncclGetUniqueId(&msg.id), what, err);
    if ((rc = dd_mpi_check(MPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, mpi),
                           "MPI_Bcast of the NCCL unique id", err)))
        return rc;
    if (msg.rc)
        return rank == 0 ? msg.rc : dd_fail(err, msg.rc, "%s failed on its rank 0", what);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    snprintf(what, sizeof what, "ncclCommInitRankConfig (%s communicator, %d ranks)", which, size);
    return nccl_check(ncclCommInitRankConfig(comm, size, msg.id, rank, &config), what, err);
}

#if DD_NCCL_SPLIT
/* My rank's world rank of rank 0 of `sub`: one colour per row or column. */
static int leader(MPI_Comm sub, MPI_Comm world, int *color, dd_err *err)
{
    MPI_Group gs, gw;
    int zero = 0, rc;
    if ((rc = dd_mpi_check(MPI_Comm_group(sub, &gs), "MPI_Comm_group", err)))
        return rc;
    if (!(rc = dd_mpi_check(MPI_Comm_group(world, &gw), "MPI_Comm_group", err))) {
        rc = dd_mpi_check(MPI_Group_translate_ranks(gs, 1, &zero, gw, color),
                          "MPI_Group_translate_ranks", err);
        MPI_Group_free(&gw);
    }
    MPI_Group_free(&gs);
    return rc;
}

static int split(nccl_state *s, MPI_Comm sub, MPI_Comm world, ncclComm_t *out, const char *which,
                 dd_err *err)
{
    int color = NCCL_SPLIT_NOCOLOR, key = 0, size = 0, rc;
    char what[64];
    *out = NULL;
    if (!s->world) /* a world of one: every group is one rank */
        return DD_OK;
    snprintf(what, sizeof what, "ncclCommSplit (%s communicator)", which);
    if ((rc = dd_mpi_check(MPI_Comm_size(sub, &size), "MPI_Comm_size", err)) ||
        (rc = dd_mpi_check(MPI_Comm_rank(sub, &key), "MPI_Comm_rank", err)) ||
        (size > 1 && (rc = leader(sub, world, &color, err))))
        return rc;
    /* Collective over the world communicator: groups of one take part
     * without a colour and get no communicator. */
    return nccl_check(ncclCommSplit(s->world, color, key, out, NULL), what, err);
}
#endif

/* Every rank calls every step, in the same order, whatever it found before:
 * a failure is carried to the next agreement, never out of the sequence. */
static int make_comms(nccl_state *s, const dd_comm_cfg *cfg, dd_err *err)
{
    int rc = init_from_id(cfg->world, &s->world, "world", err);
    if ((rc = dd_agree(cfg->world, rc, err)))
        return rc;
#if DD_NCCL_SPLIT
    rc = split(s, cfg->row, cfg->world, &s->row, "row", err);
    int rc2 = split(s, cfg->col, cfg->world, &s->col, "column", err);
#else
    rc = init_from_id(cfg->row, &s->row, "row", err);
    int rc2 = init_from_id(cfg->col, &s->col, "column", err);
#endif
    return dd_agree(cfg->world, rc ? rc : rc2, err);
}

static int nccl_open(dd_comm *c, const dd_comm_cfg *cfg, dd_err *err)
{
    nccl_state *s = NULL;
    c->impl = NULL;
    int rc = prepare(&s, cfg, err);
    if (!(rc = dd_agree(cfg->world, rc, err)))
        rc = make_comms(s, cfg, err);
    if (rc) {
        free_state(s, 1);
        return rc;
    }
    int v = 0;
    ncclGetVersion(&v);
    snprintf(c->detail, sizeof c->detail, "NCCL %d.%d.%d (row and column communicators %s)",
             v / 10000, v % 10000 / 100, v % 100,
             DD_NCCL_SPLIT ? "split from world" : "from their own ids");
    c->impl = s;
    return DD_OK;
}

static void nccl_close(dd_comm *c)
{
    nccl_state *s = c->impl;
    if (!s)
        return;
    /* Always abort, which is local.  After a failure elsewhere queued
     * broadcasts may never complete, and destroy would wait for them; at the
     * end of a good run every broadcast has completed on every rank (the
     * multiplies that waited for them are over and the ranks have agreed
     * since), so abort frees the same resources without destroy's closing
     * handshake, which was most of a 2-GPU run's teardown
     * (docs/results/h200x2-2026-11-30-wholerun-2).  The engine is still
     * open: the context closes the comm first (api_context.c). */
    free_state(s, 1);
    c->impl = NULL;
}

static int bad_slot(const nccl_state *s, int slot, dd_err *err)
{
    if (slot >= 0 && slot < s->nslots)
        return DD_OK;
    return dd_fail(err, DD_EFAIL, "panel slot %d out of range (the NCCL backend has %d)", slot,
                   s->nslots);
}

static int enqueue_bcasts(nccl_state *s, const dd_panel_xfer *x, dd_err *err)
{
    const dd_xfer *a = &x->a, *b = &x->b;
    size_t es = dd_elsize(x->type);
    /* complex elements as two of their component type */
    size_t per = dd_dtype_complex(x->type) ? 2 : 1;
    size_t na = a->active ? (size_t)a->rows * (size_t)a->width * per : 0;
    size_t nb = b->active ? (size_t)b->rows * (size_t)b->width * per : 0;
    ncclDataType_t dt = dd_dtype_real(x->type) == DD_F64 ? ncclDouble : ncclFloat;
    int rc = DD_OK;
    if (na && a->is_root &&
        (rc = dd_cuda_check(cudaMemcpy2DAsync(a->dst, (size_t)a->width * es, a->src,
                                              (size_t)a->src_ld * es, (size_t)a->width * es,
                                              (size_t)a->rows, cudaMemcpyDeviceToDevice, s->cs),
                            "cudaMemcpy2DAsync (packing the A panel)", err)))
        return rc;
    if (!na && !nb)
        return DD_OK;
    if ((na && !s->row) || (nb && !s->col))
        return dd_fail(err, DD_EFAIL, "a panel broadcast was posted in a group of one rank");
    if ((rc = nccl_check(ncclGroupStart(), "ncclGroupStart", err)))
        return rc;
    if (na)
        rc = nccl_check(ncclBroadcast(a->dst, a->dst, na, dt, a->root, s->row, s->cs),
                        "ncclBroadcast of the A panel along the grid row", err);
    if (nb && !rc) {
        /* On the root, in place from its own block, which NCCL only reads. */
        void *buf = b->is_root ? (void *)b->src : b->dst;
        rc = nccl_check(ncclBroadcast(buf, buf, nb, dt, b->root, s->col, s->cs),
                        "ncclBroadcast of the B panel down the grid column", err);
    }
    /* The group is closed even after a failure inside it. */
    int rc2 = nccl_check(ncclGroupEnd(), "ncclGroupEnd (panel broadcasts)", err);
    return rc ? rc : rc2;
}

static int nccl_post(dd_comm *c, const dd_panel_xfer *x, dd_err *err)
{
    nccl_state *s = c->impl;
    int rc;
    if ((rc = bad_slot(s, x->slot, err)))
        return rc;
    if ((rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, s->slot_free[x->slot], 0),
                            "cudaStreamWaitEvent (slot free)", err)) ||
        (rc = enqueue_bcasts(s, x, err)))
        return rc;
    return dd_cuda_check(cudaEventRecord(s->ready[x->slot], s->cs), "cudaEventRecord (panel ready)",
                         err);
}

static int nccl_wait(dd_comm *c, int slot, dd_err *err)
{
    nccl_state *s = c->impl;
    int rc = bad_slot(s, slot, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamWaitEvent(s->xs, s->ready[slot], 0),
                              "cudaStreamWaitEvent (panel ready)", err);
}

static int nccl_release(dd_comm *c, int slot, dd_err *err)
{
    nccl_state *s = c->impl;
    int rc = bad_slot(s, slot, err);
    return rc ? rc
              : dd_cuda_check(cudaEventRecord(s->slot_free[slot], s->xs),
                              "cudaEventRecord (slot free)", err);
}

/* Nothing to drive (NCCL runs on the GPU); only surface a failure that the
 * NCCL proxy threads saw, e.g. a peer that died. */
static int nccl_progress(dd_comm *c, dd_err *err)
{
    nccl_state *s = c->impl;
    ncclComm_t comms[2] = {s->row, s->col};
    for (int i = 0; i < 2; i++) {
        if (!comms[i])
            continue;
        ncclResult_t async = ncclSuccess;
        int rc = nccl_check(ncclCommGetAsyncError(comms[i], &async), "ncclCommGetAsyncError", err);
        if (!rc && async != ncclSuccess && async != ncclInProgress)
            rc = nccl_check(async, i ? "NCCL (column communicator)" : "NCCL (row communicator)",
                            err);
        if (rc)
            return rc;
    }
    return DD_OK;
}

const dd_comm_ops dd_comm_nccl = {
    .name = "nccl",
    .work_is_host = 0,
    .open = nccl_open,
    .close = nccl_close,
    .post = nccl_post,
    .wait = nccl_wait,
    .release = nccl_release,
    .progress = nccl_progress,
};
