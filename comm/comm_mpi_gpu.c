/* comm_mpi_gpu.c — panel broadcasts with MPI for the CUDA engine (comm.h):
 * device pointers straight to MPI where MPI is CUDA-aware, otherwise staged
 * through pinned host buffers.  Works with several ranks on one GPU.
 *
 * Which path.  DD_MPI_CUDA_AWARE=0|1 in the environment wins; otherwise,
 * where <mpi-ext.h> offers it, MPIX_Query_cuda_support() is asked at run
 * time (Open MPI's MPIX_CUDA_AWARE_SUPPORT macro is only a build-time hint:
 * Open MPI 4.1 ships the extension even when built without CUDA); otherwise
 * MPI is taken as not CUDA-aware.  Ranks agree on the minimum, so one rank
 * that cannot take device pointers puts everyone on the staged path.
 *
 * Ordering.  post() only enqueues on the communication stream (pack or
 * device-to-host copy) and records posted[s]; the broadcasts of a panel run
 * on the host, in post order, on every rank, from progress() — which the
 * engine calls right after launching a multiply, so they overlap it — or
 * from wait() for a panel progress() has not reached.  For panel u in slot s:
 *
 *   staged:  root: posted[s] done (D2H into host slot) → MPI_Ibcast row/col
 *            → MPI_Waitall; receiver: ready[s] done (its previous H2D out of
 *            the host slot) → MPI_Ibcast → MPI_Waitall → enqueue (wait
 *            slot_free[s]) H2D into the device slot → record ready[s];
 *            wait(s): the compute stream waits ready[s].
 *   aware:   posted[s] done (it was queued behind slot_free[s], so the gemm
 *            that last read the slot is finished, and the A pack is done) →
 *            MPI_Ibcast of device pointers → MPI_Waitall.  The host has seen
 *            the data land before it enqueues the gemm, so wait() adds no
 *            device-side dependency.
 *
 * No deadlock: the host blocks only on (a) events whose work depends on
 * gemms already enqueued, which in turn wait only on ready events already
 * recorded — GPU work that finishes with no host help — and (b) MPI_Waitall
 * of panel u, which every member reaches after doing panels < u the same
 * way.  Both broadcasts of a panel are started before either is waited for,
 * so the row and column collectives cannot wait on each other.
 *
 * MPI counts are ints: messages go in pieces of at most 1 GiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm.h"
#include "dd_cuda.h"
#include "engine.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* Tests set a small value to exercise the pieces. */
#ifndef DD_MPI_CHUNK_BYTES
#define DD_MPI_CHUNK_BYTES ((size_t)1 << 30)
#endif
#define CHUNK_BYTES ((size_t)DD_MPI_CHUNK_BYTES)

typedef struct {
    dd_panel_xfer x;       /* as posted */
    int pending;           /* posted, broadcasts not yet done */
    void *host_a, *host_b; /* staged: pinned copies of the panels */
    size_t cap_a, cap_b;
} slot_state;

typedef struct {
    MPI_Comm row, col;
    cudaStream_t cs, xs; /* the engine's communication and compute streams */
    int aware;
    int nslots;
    slot_state *slots;
    int *fifo, head, count; /* pending slots in post order */
    cudaEvent_t *posted, *ready, *slot_free;
    MPI_Request *req;
    int nreq, cap_req;
} mpig_state;

/* ---- which path -------------------------------------------------------- */

/* This rank's answer: 1 aware, 0 not; why says from where. */
static int local_awareness(int *aware, char *why, size_t len, dd_err *err)
{
    const char *env = getenv("DD_MPI_CUDA_AWARE");
    if (env && *env) {
        if (strcmp(env, "0") && strcmp(env, "1"))
            return dd_fail(err, DD_EUSAGE, "DD_MPI_CUDA_AWARE must be 0 or 1, not '%s'", env);
        *aware = env[0] == '1';
        snprintf(why, len, "DD_MPI_CUDA_AWARE=%s", env);
        return DD_OK;
    }
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    *aware = MPIX_Query_cuda_support() == 1;
    snprintf(why, len, "MPIX_Query_cuda_support() = %d", *aware);
#else
    *aware = 0;
    snprintf(why, len, "this MPI cannot say whether it is CUDA-aware");
#endif
    return DD_OK;
}

/* ---- set-up ------------------------------------------------------------- */

static void free_state(mpig_state *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nslots; i++) {
        if (s->slots) {
            if (s->slots[i].host_a)
                cudaFreeHost(s->slots[i].host_a);
            if (s->slots[i].host_b)
                cudaFreeHost(s->slots[i].host_b);
        }
        if (s->posted && s->posted[i])
            cudaEventDestroy(s->posted[i]);
        if (s->ready && s->ready[i])
            cudaEventDestroy(s->ready[i]);
        if (s->slot_free && s->slot_free[i])
            cudaEventDestroy(s->slot_free[i]);
    }
    free(s->slots);
    free(s->fifo);
    free(s->posted);
    free(s->ready);
    free(s->slot_free);
    free(s->req);
    free(s);
}

static int make_event(cudaEvent_t *ev, dd_err *err)
{
    return dd_cuda_check(cudaEventCreateWithFlags(ev, cudaEventDisableTiming),
                         "cudaEventCreateWithFlags", err);
}

/* Local checks and allocations: nothing collective. */
static int prepare(mpig_state **out, const dd_comm_cfg *cfg, dd_err *err)
{
    struct dd_engine *e = cfg->engine;
    if (!e || strcmp(e->ops->name, "cuda"))
        return dd_fail(err, DD_EUNSUP,
                       "the mpi comm backend for GPUs needs the CUDA backend (this run uses '%s')",
                       e ? e->ops->name : "none");
    mpig_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the MPI comm backend");
    *out = s;
    size_t n = (size_t)cfg->nslots;
    s->row = cfg->row;
    s->col = cfg->col;
    s->cs = (cudaStream_t)e->ops->comm_stream(e);
    s->xs = (cudaStream_t)e->ops->compute_stream(e);
    s->slots = calloc(n, sizeof *s->slots);
    s->fifo = calloc(n, sizeof *s->fifo);
    s->posted = calloc(n, sizeof *s->posted);
    s->ready = calloc(n, sizeof *s->ready);
    s->slot_free = calloc(n, sizeof *s->slot_free);
    if (!s->slots || !s->fifo || !s->posted || !s->ready || !s->slot_free)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the MPI comm backend");
    s->nslots = cfg->nslots;
    for (int i = 0; i < s->nslots; i++) {
        int rc;
        if ((rc = make_event(&s->posted[i], err)) || (rc = make_event(&s->ready[i], err)) ||
            (rc = make_event(&s->slot_free[i], err)))
            return rc;
    }
    return DD_OK;
}

static int mpig_open(dd_comm *c, const dd_comm_cfg *cfg, dd_err *err)
{
    mpig_state *s = NULL;
    int mine = 0, all = 0;
    char why[96] = "";
    c->impl = NULL;
    int rc = prepare(&s, cfg, err);
    if (!rc)
        rc = local_awareness(&mine, why, sizeof why, err);
    if (!(rc = dd_agree(cfg->world, rc, err)))
        rc = dd_mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, cfg->world),
                          "MPI_Allreduce of CUDA-awareness", err);
    if (rc) {
        free_state(s);
        return rc;
    }
    s->aware = all;
    if (all)
        snprintf(c->detail, sizeof c->detail, "MPI CUDA-aware (%s)", why);
    else
        snprintf(c->detail, sizeof c->detail, "MPI staged through pinned host memory (%s)",
                 mine ? "not CUDA-aware on every rank" : why);
    c->impl = s;
    return DD_OK;
}

static void mpig_close(dd_comm *c)
{
    mpig_state *s = c->impl;
    if (!s)
        return;
    /* Copies into or out of the host slots may still be queued after a
     * failure; let them finish before the memory goes (no host action is
     * needed for them to finish). */
    cudaStreamSynchronize(s->cs);
    free_state(s);
    c->impl = NULL;
}

/* ---- broadcasts --------------------------------------------------------- */

static int push_req(mpig_state *s, MPI_Request q, dd_err *err)
{
    if (s->nreq == s->cap_req) {
        int cap = s->cap_req ? 2 * s->cap_req : 8;
        MPI_Request *p = realloc(s->req, (size_t)cap * sizeof *p);
        if (!p)
            return dd_fail(err, DD_ENOMEM, "out of host memory for MPI requests");
        s->req = p;
        s->cap_req = cap;
    }
    s->req[s->nreq++] = q;
    return DD_OK;
}

/* Start broadcasting `bytes` at buf from root, in pieces of at most
 * CHUNK_BYTES; bytes == 0 starts nothing (every member has the same count). */
static int ibcast(mpig_state *s, void *buf, size_t bytes, int root, MPI_Comm comm, dd_err *err)
{
    for (size_t off = 0; off < bytes; off += CHUNK_BYTES) {
        size_t len = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
        MPI_Request q;
        int rc = dd_mpi_check(MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, root, comm, &q),
                              "MPI_Ibcast of a panel", err);
        if (rc || (rc = push_req(s, q, err)))
            return rc;
    }
    return DD_OK;
}

static size_t xfer_bytes(const dd_xfer *x, dd_dtype t)
{
    return x->active ? (size_t)x->rows * (size_t)x->width * dd_elsize(t) : 0;
}

/* Both broadcasts of a panel, started together, then completed. */
static int bcast_both(mpig_state *s, void *a, size_t na, int ra, void *b, size_t nb, int rb,
                      dd_err *err)
{
    int rc;
    s->nreq = 0;
    if ((rc = ibcast(s, a, na, ra, s->row, err)) || (rc = ibcast(s, b, nb, rb, s->col, err)))
        return rc; /* MPI errors are fatal by default; this is for those that are not */
    if (s->nreq == 0)
        return DD_OK;
    rc = dd_mpi_check(MPI_Waitall(s->nreq, s->req, MPI_STATUSES_IGNORE),
                      "MPI_Waitall on the panel broadcasts", err);
    s->nreq = 0;
    return rc;
}

static int complete_aware(mpig_state *s, int slot, dd_err *err)
{
    const dd_panel_xfer *x = &s->slots[slot].x;
    size_t na = xfer_bytes(&x->a, x->type), nb = xfer_bytes(&x->b, x->type);
    if (!na && !nb)
        return DD_OK;
    int rc = dd_cuda_check(cudaEventSynchronize(s->posted[slot]),
                           "cudaEventSynchronize (slot free, A panel packed)", err);
    void *b = x->b.is_root ? (void *)x->b.src : x->b.dst;
    return rc ? rc : bcast_both(s, x->a.dst, na, x->a.root, b, nb, x->b.root, err);
}

static int complete_staged(mpig_state *s, int slot, dd_err *err)
{
    slot_state *ss = &s->slots[slot];
    const dd_panel_xfer *x = &ss->x;
    size_t na = xfer_bytes(&x->a, x->type), nb = xfer_bytes(&x->b, x->type);
    int send = (na && x->a.is_root) || (nb && x->b.is_root);
    int recv_a = na && !x->a.is_root, recv_b = nb && !x->b.is_root;
    int rc = DD_OK;
    if (send)
        rc = dd_cuda_check(cudaEventSynchronize(s->posted[slot]),
                           "cudaEventSynchronize (panel copied to the host)", err);
    if (!rc && (recv_a || recv_b))
        rc = dd_cuda_check(cudaEventSynchronize(s->ready[slot]),
                           "cudaEventSynchronize (host slot free)", err);
    if (!rc)
        rc = bcast_both(s, ss->host_a, na, x->a.root, ss->host_b, nb, x->b.root, err);
    if (!rc && (recv_a || recv_b))
        rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, s->slot_free[slot], 0),
                           "cudaStreamWaitEvent (slot free)", err);
    if (!rc && recv_a)
        rc = dd_cuda_check(cudaMemcpyAsync(x->a.dst, ss->host_a, na, cudaMemcpyHostToDevice, s->cs),
                           "cudaMemcpyAsync host to GPU (A panel)", err);
    if (!rc && recv_b)
        rc = dd_cuda_check(cudaMemcpyAsync(x->b.dst, ss->host_b, nb, cudaMemcpyHostToDevice, s->cs),
                           "cudaMemcpyAsync host to GPU (B panel)", err);
    if (!rc)
        rc = dd_cuda_check(cudaEventRecord(s->ready[slot], s->cs), "cudaEventRecord (panel ready)",
                           err);
    return rc;
}

/* Complete the oldest pending panel. */
static int complete_next(mpig_state *s, dd_err *err)
{
    int slot = s->fifo[s->head];
    int rc = s->aware ? complete_aware(s, slot, err) : complete_staged(s, slot, err);
    if (rc)
        return rc;
    s->slots[slot].pending = 0;
    s->head = (s->head + 1) % s->nslots;
    s->count--;
    return DD_OK;
}

/* ---- the protocol ------------------------------------------------------- */

static int bad_slot(const mpig_state *s, int slot, dd_err *err)
{
    if (slot >= 0 && slot < s->nslots)
        return DD_OK;
    return dd_fail(err, DD_EFAIL, "panel slot %d out of range (the MPI backend has %d)", slot,
                   s->nslots);
}

/* Make the pinned host slot at least `bytes`.  The old one may still be the
 * source of a queued host-to-GPU copy (recorded before ready[slot]). */
static int host_room(mpig_state *s, int slot, void **buf, size_t *cap, size_t bytes, dd_err *err)
{
    if (bytes <= *cap)
        return DD_OK;
    int rc = dd_cuda_check(cudaEventSynchronize(s->ready[slot]),
                           "cudaEventSynchronize (host slot free)", err);
    if (rc)
        return rc;
    if (*buf)
        cudaFreeHost(*buf);
    *buf = NULL;
    *cap = 0;
    cudaError_t cr = cudaHostAlloc(buf, bytes, cudaHostAllocDefault);
    if (cr != cudaSuccess) {
        *buf = NULL;
        return dd_fail(err, DD_ENOMEM, "cudaHostAlloc of %zu bytes for a staged panel failed: %s",
                       bytes, cudaGetErrorString(cr));
    }
    *cap = bytes;
    return DD_OK;
}

static int post_aware(mpig_state *s, const dd_panel_xfer *x, dd_err *err)
{
    const dd_xfer *a = &x->a;
    size_t es = dd_elsize(x->type);
    int rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, s->slot_free[x->slot], 0),
                           "cudaStreamWaitEvent (slot free)", err);
    if (!rc && xfer_bytes(a, x->type) && a->is_root)
        rc = dd_cuda_check(cudaMemcpy2DAsync(a->dst, (size_t)a->width * es, a->src,
                                             (size_t)a->src_ld * es, (size_t)a->width * es,
                                             (size_t)a->rows, cudaMemcpyDeviceToDevice, s->cs),
                           "cudaMemcpy2DAsync (packing the A panel)", err);
    return rc;
}

static int post_staged(mpig_state *s, const dd_panel_xfer *x, dd_err *err)
{
    slot_state *ss = &s->slots[x->slot];
    const dd_xfer *a = &x->a, *b = &x->b;
    size_t es = dd_elsize(x->type);
    size_t na = xfer_bytes(a, x->type), nb = xfer_bytes(b, x->type);
    int rc;
    if ((rc = host_room(s, x->slot, &ss->host_a, &ss->cap_a, na, err)) ||
        (rc = host_room(s, x->slot, &ss->host_b, &ss->cap_b, nb, err)))
        return rc;
    if (na && a->is_root &&
        (rc = dd_cuda_check(cudaMemcpy2DAsync(ss->host_a, (size_t)a->width * es, a->src,
                                              (size_t)a->src_ld * es, (size_t)a->width * es,
                                              (size_t)a->rows, cudaMemcpyDeviceToHost, s->cs),
                            "cudaMemcpy2DAsync GPU to host (A panel)", err)))
        return rc;
    if (nb && b->is_root &&
        (rc = dd_cuda_check(cudaMemcpyAsync(ss->host_b, b->src, nb, cudaMemcpyDeviceToHost, s->cs),
                            "cudaMemcpyAsync GPU to host (B panel)", err)))
        return rc;
    return DD_OK;
}

static int mpig_post(dd_comm *c, const dd_panel_xfer *x, dd_err *err)
{
    mpig_state *s = c->impl;
    int rc;
    if ((rc = bad_slot(s, x->slot, err)))
        return rc;
    slot_state *ss = &s->slots[x->slot];
    if (ss->pending)
        return dd_fail(err, DD_EFAIL,
                       "panel posted into slot %d before the panel in it was waited for", x->slot);
    ss->x = *x;
    if ((rc = s->aware ? post_aware(s, x, err) : post_staged(s, x, err)) ||
        (rc = dd_cuda_check(cudaEventRecord(s->posted[x->slot], s->cs),
                            "cudaEventRecord (panel posted)", err)))
        return rc;
    ss->pending = 1;
    s->fifo[(s->head + s->count) % s->nslots] = x->slot;
    s->count++;
    return DD_OK;
}

static int mpig_wait(dd_comm *c, int slot, dd_err *err)
{
    mpig_state *s = c->impl;
    int rc;
    if ((rc = bad_slot(s, slot, err)))
        return rc;
    /* Panels complete in post order on every rank: the ones before this
     * slot's go first. */
    while (s->slots[slot].pending)
        if ((rc = complete_next(s, err)))
            return rc;
    if (s->aware)
        return DD_OK;
    return dd_cuda_check(cudaStreamWaitEvent(s->xs, s->ready[slot], 0),
                         "cudaStreamWaitEvent (panel ready)", err);
}

static int mpig_release(dd_comm *c, int slot, dd_err *err)
{
    mpig_state *s = c->impl;
    int rc = bad_slot(s, slot, err);
    return rc ? rc
              : dd_cuda_check(cudaEventRecord(s->slot_free[slot], s->xs),
                              "cudaEventRecord (slot free)", err);
}

static int mpig_progress(dd_comm *c, dd_err *err)
{
    mpig_state *s = c->impl;
    while (s->count) {
        int rc = complete_next(s, err);
        if (rc)
            return rc;
    }
    return DD_OK;
}

const dd_comm_ops dd_comm_mpi_gpu = {
    .name = "mpi",
    .open = mpig_open,
    .close = mpig_close,
    .post = mpig_post,
    .wait = mpig_wait,
    .release = mpig_release,
    .progress = mpig_progress,
};
