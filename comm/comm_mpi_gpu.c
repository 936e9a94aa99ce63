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
 * Staged pieces.  Each transfer of a staged panel is cut into pieces of
 * whole rows, each its own MPI_Ibcast, so that the copies to and from the
 * host overlap the broadcasts: comm_mpi_staged.c, which holds that path,
 * says how many and why.
 *
 * Ordering.  post() only enqueues on the communication stream (aware: the A
 * pack; staged root: the device-to-host copy of each piece, each followed by
 * its own event copied[s][i]); the broadcasts of a panel run on the host, in
 * post order, on every rank, from progress() — which the engine calls right
 * after launching a multiply, so they overlap it — or from wait() for a
 * panel progress() has not reached.  For panel u in slot s:
 *
 *   staged:  receiver: ready[s] done (its previous H2D out of the host slot)
 *            → MPI_Ibcast of every piece it receives, in order → as each
 *            piece completes (MPI_Waitsome/Testsome, any order): enqueue
 *            (once, before the first) a wait on slot_free[s], then that
 *            piece's H2D into the device slot → after the last, record
 *            ready[s].  Root: for each piece in order, copied[s][i] done →
 *            MPI_Ibcast of it; while a copy is still running, MPI_Testsome
 *            keeps the pieces already started moving (Open MPI moves data
 *            only inside MPI calls).  Then both wait for the rest.
 *            wait(s): the compute stream waits ready[s].
 *   aware:   posted[s] done (it was queued behind slot_free[s], so the gemm
 *            that last read the slot is finished, and the A pack is done) →
 *            MPI_Ibcast of device pointers → MPI_Waitall.  The host has seen
 *            the data land before it enqueues the gemm, so wait() adds no
 *            device-side dependency.
 *
 * The collectives on each communicator are thus, on every member, the
 * pieces of panel u in piece order (each cut in messages of at most 1 GiB,
 * comm_ibcast), after all of panel u-1's.  A rank that is root of one
 * transfer and receiver of the other starts its receives first, then its
 * sends as copies land; the two communicators need no common order.
 *
 * No deadlock: the host blocks only on (a) events whose work depends on
 * gemms already enqueued, which in turn wait only on ready events already
 * recorded — GPU work that finishes with no host help — and (b) MPI
 * requests of panel u, and only once this rank has started all of panel u's
 * collectives (before that it tests, never waits), which every member does
 * after finishing panels < u the same way, needing nothing but its own GPU.
 * progress() completes every panel posted so far, in order, and no more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm_mpi_gpu.h"
#include "dd_knobs.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* ---- which path -------------------------------------------------------- */

/* This rank's answer: 1 aware, 0 not; why says from where. */
static int local_awareness(int *aware, char *why, size_t len, dd_err *err)
{
    char msg[DD_ERRLEN];
    if (dd_knob_error(DDK_MPI_CUDA_AWARE, msg, sizeof msg))
        return dd_fail(err, DD_EUSAGE, "%s", msg);
    const char *env = dd_knob_str(DDK_MPI_CUDA_AWARE);
    if (env) {
        *aware = dd_knob_int(DDK_MPI_CUDA_AWARE) == 1;
        snprintf(why, len, "DD_MPI_CUDA_AWARE=%.32s", env);
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
            slot_state *ss = &s->slots[i];
            for (int m = 0; m < 2; m++)
                if (ss->host[m])
                    cudaFreeHost(ss->host[m]);
            for (int j = 0; j < ss->ncopied; j++)
                cudaEventDestroy(ss->copied[j]);
            free(ss->copied);
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
    comm_reqs_free(&s->reqs);
    free(s->req_piece);
    free(s->done_idx);
    free(s->left);
    free(s);
}

/* Local checks and allocations: nothing collective. */
static int prepare(mpig_state **out, const dd_comm_cfg *cfg, dd_err *err)
{
    if (cfg->work_is_host)
        return dd_fail(err, DD_EUNSUP,
                       "the mpi comm backend for GPUs needs the CUDA backend (this run uses the "
                       "CPU)");
    mpig_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the MPI comm backend");
    *out = s;
    size_t n = (size_t)cfg->nslots;
    s->row = cfg->row;
    s->col = cfg->col;
    s->cs = (cudaStream_t)cfg->comm_stream;
    s->xs = (cudaStream_t)cfg->compute_stream;
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
    int mine = 0, pieces = 0;
    /* One reduction: awareness (minimum), and the piece setting's minimum
     * and maximum, which must match, as each piece is a collective. */
    int in[3], all[3] = {0, 0, 0};
    char why[64] = ""; /* short enough for the detail line below */
    c->impl = NULL;
    int rc = prepare(&s, cfg, err);
    if (!rc)
        rc = local_awareness(&mine, why, sizeof why, err);
    if (!rc)
        rc = mpig_local_pieces(&pieces, err);
    in[0] = mine;
    in[1] = pieces;
    in[2] = -pieces;
    if (!(rc = dd_agree(cfg->world, rc, err)))
        rc = dd_mpi_check(MPI_Allreduce(in, all, 3, MPI_INT, MPI_MIN, cfg->world),
                          "MPI_Allreduce of CUDA-awareness and DD_MPI_STAGE_PIECES", err);
    if (!rc && all[1] != -all[2])
        rc = dd_fail(err, DD_EUSAGE,
                     "DD_MPI_STAGE_PIECES differs between ranks (from %d to %d; 0 is automatic): "
                     "set it alike on every rank",
                     all[1], -all[2]);
    if (rc) {
        free_state(s);
        return rc;
    }
    s->aware = all[0];
    s->pieces = all[1];
    if (all[0])
        snprintf(c->detail, sizeof c->detail, "MPI CUDA-aware (%s)", why);
    else if (s->pieces)
        snprintf(c->detail, sizeof c->detail,
                 "MPI staged through pinned host memory (%s), in %d pieces",
                 mine ? "not CUDA-aware on every rank" : why, s->pieces);
    else
        snprintf(c->detail, sizeof c->detail,
                 "MPI staged through pinned host memory (%s), in pieces of >= 8 MiB, at most %d",
                 mine ? "not CUDA-aware on every rank" : why, STAGE_AUTO_MAX);
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

/* Both broadcasts of a panel, started together, then completed. */
static int bcast_both(mpig_state *s, void *a, size_t na, int ra, void *b, size_t nb, int rb,
                      dd_err *err)
{
    int rc;
    s->reqs.n = 0;
    if ((rc = comm_ibcast(&s->reqs, a, na, ra, s->row, err)) ||
        (rc = comm_ibcast(&s->reqs, b, nb, rb, s->col, err)))
        return rc; /* MPI errors are fatal by default; this is for those that are not */
    if (s->reqs.n == 0)
        return DD_OK;
    rc = dd_mpi_check(MPI_Waitall(s->reqs.n, s->reqs.req, MPI_STATUSES_IGNORE),
                      "MPI_Waitall on the panel broadcasts", err);
    s->reqs.n = 0;
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

/* Complete the oldest pending panel. */
static int complete_next(mpig_state *s, dd_err *err)
{
    int slot = s->fifo[s->head];
    int rc = s->aware ? complete_aware(s, slot, err) : mpig_complete_staged(s, slot, err);
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
    if (!rc)
        rc = dd_cuda_check(cudaEventRecord(s->posted[x->slot], s->cs),
                           "cudaEventRecord (panel posted)", err);
    return rc;
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
    if ((rc = s->aware ? post_aware(s, x, err) : mpig_post_staged(s, x, err)))
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

/* Called once per gemm, right after its launch: the GPU is busy, so the
 * host may block in MPI here.  It completes every panel posted so far, in
 * post order — what the next wait() will need — and nothing beyond. */
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
    .work_is_host = 0,
    .open = mpig_open,
    .close = mpig_close,
    .post = mpig_post,
    .wait = mpig_wait,
    .release = mpig_release,
    .progress = mpig_progress,
};
