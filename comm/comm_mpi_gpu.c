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
 * Staged pieces.  Done whole, a staged panel costs D2H + MPI + H2D end to
 * end (measured on 2 H200s, 128 MiB A panels: ~23 ms against a ~7.4 ms
 * multiply).  So each transfer (A's panel, B's panel) is cut into pieces of
 * whole rows, each its own MPI_Ibcast: the root's copy of piece i+1 to the
 * host runs while piece i is broadcast, and a receiver's copy of piece i to
 * the GPU runs while piece i+1 arrives; the panel then costs about its
 * slowest stage plus a piece's worth of the others.  How many:
 * DD_MPI_STAGE_PIECES=N (N >= 1) sets N per transfer (fewer when the panel
 * has fewer rows); unset, 0 or "auto" takes one piece per 8 MiB, at most 8
 * (a smaller piece gains less overlap than its per-message cost; 8 pieces
 * already hide 7/8 of the two copies).  Every member of a communicator must
 * cut a transfer alike, as each piece is a collective: the cut depends only
 * on the panel's shape, the type and the setting, which ranks agree on at
 * open.
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
#include "comm.h"
#include "comm_mpi_util.h"
#include "dd_cuda.h"
#include "grid.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

/* Automatic piece count: one per STAGE_PIECE_BYTES, at most STAGE_AUTO_MAX. */
#define STAGE_PIECE_BYTES ((size_t)8 << 20)
#define STAGE_AUTO_MAX 8
/* Largest DD_MPI_STAGE_PIECES accepted. */
#define STAGE_PIECES_MAX 4096

typedef struct {
    dd_panel_xfer x; /* as posted */
    int pending;     /* posted, broadcasts not yet done */
    void *host[2];   /* staged: pinned copies of the A [0] and B [1] panels */
    size_t cap[2];
    int npc[2];          /* staged: pieces of A's and B's transfer, as posted */
    cudaEvent_t *copied; /* staged root: piece i's copy to the host done (A's, then B's) */
    int ncopied;         /* events created */
} slot_state;

typedef struct {
    MPI_Comm row, col;
    cudaStream_t cs, xs; /* the engine's communication and compute streams */
    int aware;
    int pieces; /* staged: pieces per transfer, 0 = automatic (agreed) */
    int nslots;
    slot_state *slots;
    int *fifo, head, count; /* pending slots in post order */
    cudaEvent_t *posted, *ready, *slot_free;
    comm_reqs reqs; /* the panel being completed */
    int *req_piece; /* staged: reqs.req[j] belongs to piece req_piece[j] */
    int *done_idx;  /* staged: indices out of MPI_Testsome/Waitsome */
    int cap_idx;
    int *left; /* staged: requests of each piece not yet complete */
    int cap_left;
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

/* DD_MPI_STAGE_PIECES: 0 (automatic) when unset, empty, "0" or "auto". */
static int local_pieces(int *pieces, dd_err *err)
{
    const char *env = getenv("DD_MPI_STAGE_PIECES");
    *pieces = 0;
    if (!env || !*env || !strcmp(env, "auto"))
        return DD_OK;
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (*end || v < 0 || v > STAGE_PIECES_MAX)
        return dd_fail(err, DD_EUSAGE,
                       "DD_MPI_STAGE_PIECES must be a number of pieces from 1 to %d, or 0 or "
                       "'auto' for automatic, not '%s'",
                       STAGE_PIECES_MAX, env);
    *pieces = (int)v;
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

static int make_event(cudaEvent_t *ev, dd_err *err)
{
    return dd_cuda_check(cudaEventCreateWithFlags(ev, cudaEventDisableTiming),
                         "cudaEventCreateWithFlags", err);
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
        rc = local_pieces(&pieces, err);
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

static size_t xfer_bytes(const dd_xfer *x, dd_dtype t)
{
    return x->active ? (size_t)x->rows * (size_t)x->width * dd_elsize(t) : 0;
}

static const dd_xfer *xfer_of(const dd_panel_xfer *x, int m)
{
    return m ? &x->b : &x->a;
}

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

/* ---- staged pieces ------------------------------------------------------ */

/* How many pieces transfer x is cut into: a function of its shape, the type
 * and the agreed setting only, so the same on every member of its
 * communicator.  0 when there is nothing to move. */
static int piece_count(const mpig_state *s, const dd_xfer *x, dd_dtype t)
{
    size_t bytes = xfer_bytes(x, t);
    if (!bytes)
        return 0;
    int64_t n = s->pieces;
    if (!n) {
        size_t auto_n = bytes / STAGE_PIECE_BYTES;
        n = auto_n > STAGE_AUTO_MAX ? STAGE_AUTO_MAX : (int64_t)auto_n;
    }
    if (n < 1)
        n = 1;
    if (n > x->rows)
        n = x->rows;
    return (int)n;
}

/* Piece i of n: rows [r->start, r->start + r->len) of the panel, as byte
 * offset and length in the packed panel (host slot and device slot alike,
 * both with ld = width). */
static dd_range piece_at(const dd_xfer *x, dd_dtype t, int n, int i, size_t *off, size_t *len)
{
    dd_range r = grid_block(x->rows, n, i);
    size_t row_bytes = (size_t)x->width * dd_elsize(t);
    *off = (size_t)r.start * row_bytes;
    *len = (size_t)r.len * row_bytes;
    return r;
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

/* At least n copy events in slot ss (created once, reused: a slot's events
 * are recorded again only after its previous panel completed). */
static int copy_events(slot_state *ss, int n, dd_err *err)
{
    if (n <= ss->ncopied)
        return DD_OK;
    cudaEvent_t *ev = realloc(ss->copied, (size_t)n * sizeof *ev);
    if (!ev)
        return dd_fail(err, DD_ENOMEM, "out of host memory for staged piece events");
    ss->copied = ev;
    for (; ss->ncopied < n; ss->ncopied++) {
        int rc = make_event(&ss->copied[ss->ncopied], err);
        if (rc)
            return rc;
    }
    return DD_OK;
}

/* Room for n pieces and for the request bookkeeping of the panel. */
static int piece_room(mpig_state *s, int n, dd_err *err)
{
    if (n > s->cap_left) {
        int *p = realloc(s->left, (size_t)n * sizeof *p);
        if (!p)
            return dd_fail(err, DD_ENOMEM, "out of host memory for staged pieces");
        s->left = p;
        s->cap_left = n;
    }
    return DD_OK;
}

/* Start the broadcast of piece i of transfer m (global piece index p),
 * from or into the host slot. */
static int start_piece(mpig_state *s, slot_state *ss, int m, int i, int p, int *active, dd_err *err)
{
    const dd_xfer *x = xfer_of(&ss->x, m);
    size_t off, len;
    piece_at(x, ss->x.type, ss->npc[m], i, &off, &len);
    int first = s->reqs.n;
    int rc =
        comm_ibcast(&s->reqs, (char *)ss->host[m] + off, len, x->root, m ? s->col : s->row, err);
    if (rc)
        return rc;
    if (s->reqs.cap > s->cap_idx) {
        int *a = realloc(s->req_piece, (size_t)s->reqs.cap * sizeof *a);
        if (a)
            s->req_piece = a;
        int *b = a ? realloc(s->done_idx, (size_t)s->reqs.cap * sizeof *b) : NULL;
        if (b)
            s->done_idx = b;
        if (!a || !b)
            return dd_fail(err, DD_ENOMEM, "out of host memory for MPI requests");
        s->cap_idx = s->reqs.cap;
    }
    for (int j = first; j < s->reqs.n; j++)
        s->req_piece[j] = p;
    s->left[p] = s->reqs.n - first;
    *active += s->reqs.n - first;
    return DD_OK;
}

/* Receiver: piece p (piece i of transfer m) has arrived in the host slot;
 * queue its copy into the device slot.  The first one of the panel first
 * makes the communication stream wait until the gemm that last read the
 * device slot is done (slot_free). */
static int piece_to_gpu(mpig_state *s, int slot, int m, int i, int *freed, dd_err *err)
{
    slot_state *ss = &s->slots[slot];
    const dd_xfer *x = xfer_of(&ss->x, m);
    size_t off, len;
    int rc;
    piece_at(x, ss->x.type, ss->npc[m], i, &off, &len);
    if (!*freed && (rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, s->slot_free[slot], 0),
                                       "cudaStreamWaitEvent (slot free)", err)))
        return rc;
    *freed = 1;
    return dd_cuda_check(cudaMemcpyAsync((char *)x->dst + off, (char *)ss->host[m] + off, len,
                                         cudaMemcpyHostToDevice, s->cs),
                         m ? "cudaMemcpyAsync host to GPU (B panel piece)"
                           : "cudaMemcpyAsync host to GPU (A panel piece)",
                         err);
}

static int complete_staged(mpig_state *s, int slot, dd_err *err)
{
    slot_state *ss = &s->slots[slot];
    const dd_panel_xfer *x = &ss->x;
    int np = ss->npc[0] + ss->npc[1];
    int base[2] = {0, ss->npc[0]}; /* global index of each transfer's piece 0 */
    int root[2] = {x->a.is_root, x->b.is_root};
    int recv = (ss->npc[0] && !root[0]) || (ss->npc[1] && !root[1]);
    int next[2] = {0, 0}; /* root: next piece to broadcast */
    int unsent = 0;       /* root: pieces not yet started */
    int active = 0;       /* requests not yet complete */
    int freed = 0;        /* slot_free waited for on the comm stream */
    int rc;
    if (!np)
        return DD_OK;
    if ((rc = piece_room(s, np, err)))
        return rc;
    s->reqs.n = 0;
    /* MPI writes into the host slot: its previous copy to the GPU must be
     * done.  Nothing of this rank is in flight yet, so blocking is fine. */
    if (recv && (rc = dd_cuda_check(cudaEventSynchronize(s->ready[slot]),
                                    "cudaEventSynchronize (host slot free)", err)))
        return rc;
    /* Receives need nothing local: start them all, so that every piece the
     * root sends finds its match. */
    for (int m = 0; m < 2; m++) {
        if (!ss->npc[m])
            continue;
        if (root[m]) {
            unsent += ss->npc[m];
            continue;
        }
        for (int i = 0; i < ss->npc[m]; i++)
            if ((rc = start_piece(s, ss, m, i, base[m] + i, &active, err)))
                return rc;
    }
    while (unsent || active) {
        /* Root: broadcast, in order, every piece whose copy to the host has
         * landed; stop at the first still copying. */
        for (int m = 0; m < 2; m++) {
            while (root[m] && next[m] < ss->npc[m]) {
                cudaError_t q = cudaEventQuery(ss->copied[base[m] + next[m]]);
                if (q == cudaErrorNotReady)
                    break;
                if ((rc = dd_cuda_check(q, "cudaEventQuery (staged piece copied to the host)",
                                        err)) ||
                    (rc = start_piece(s, ss, m, next[m], base[m] + next[m], &active, err)))
                    return rc;
                next[m]++;
                unsent--;
            }
        }
        if (!active) {
            /* Nothing of ours to move yet: block on the next copy. */
            int m = root[0] && next[0] < ss->npc[0] ? 0 : 1;
            if ((rc = dd_cuda_check(cudaEventSynchronize(ss->copied[base[m] + next[m]]),
                                    "cudaEventSynchronize (staged piece copied to the host)", err)))
                return rc;
            continue;
        }
        /* While pieces of ours are still copying, only test (the host must
         * come back to start them); once all are started, wait. */
        int nd = 0;
        if (unsent)
            rc = dd_mpi_check(
                MPI_Testsome(s->reqs.n, s->reqs.req, &nd, s->done_idx, MPI_STATUSES_IGNORE),
                "MPI_Testsome on the staged panel pieces", err);
        else
            rc = dd_mpi_check(
                MPI_Waitsome(s->reqs.n, s->reqs.req, &nd, s->done_idx, MPI_STATUSES_IGNORE),
                "MPI_Waitsome on the staged panel pieces", err);
        if (rc)
            return rc;
        if (nd == MPI_UNDEFINED) /* cannot happen with active > 0; never loop on it */
            return dd_fail(err, DD_EFAIL, "MPI lost %d staged panel requests", active);
        for (int j = 0; j < nd; j++) {
            int p = s->req_piece[s->done_idx[j]];
            int m = p >= base[1] && ss->npc[1] ? 1 : 0;
            active--;
            if (--s->left[p] == 0 && !root[m] &&
                (rc = piece_to_gpu(s, slot, m, p - base[m], &freed, err)))
                return rc;
        }
    }
    s->reqs.n = 0;
    if (recv)
        return dd_cuda_check(cudaEventRecord(s->ready[slot], s->cs),
                             "cudaEventRecord (panel ready)", err);
    return DD_OK;
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

/* Root: queue each piece's copy to the host, each followed by its event, so
 * that the host can broadcast piece i while piece i+1 is still copying.  No
 * wait on slot_free: the copy reads the owned block and writes the host
 * slot, whose last reader (a copy to the GPU, if any) is earlier on this
 * stream and whose last MPI use completed before this post. */
static int post_staged(mpig_state *s, const dd_panel_xfer *x, dd_err *err)
{
    slot_state *ss = &s->slots[x->slot];
    size_t es = dd_elsize(x->type);
    int rc;
    for (int m = 0; m < 2; m++)
        if ((rc = host_room(s, x->slot, &ss->host[m], &ss->cap[m],
                            xfer_bytes(xfer_of(x, m), x->type), err)))
            return rc;
    ss->npc[0] = piece_count(s, &x->a, x->type);
    ss->npc[1] = piece_count(s, &x->b, x->type);
    if ((rc = copy_events(ss, ss->npc[0] + ss->npc[1], err)))
        return rc;
    for (int m = 0; m < 2; m++) {
        const dd_xfer *t = xfer_of(x, m);
        if (!ss->npc[m] || !t->is_root)
            continue;
        size_t row_bytes = (size_t)t->width * es, pitch = (size_t)t->src_ld * es;
        for (int i = 0; i < ss->npc[m]; i++) {
            size_t off, len;
            dd_range r = piece_at(t, x->type, ss->npc[m], i, &off, &len);
            const char *src = (const char *)t->src + (size_t)r.start * pitch;
            char *dst = (char *)ss->host[m] + off;
            /* A's panel is a strided slice of the owned block; B's is
             * contiguous. */
            cudaError_t cr = pitch == row_bytes
                                 ? cudaMemcpyAsync(dst, src, len, cudaMemcpyDeviceToHost, s->cs)
                                 : cudaMemcpy2DAsync(dst, row_bytes, src, pitch, row_bytes,
                                                     (size_t)r.len, cudaMemcpyDeviceToHost, s->cs);
            if ((rc = dd_cuda_check(cr,
                                    m ? "cudaMemcpyAsync GPU to host (B panel piece)"
                                      : "cudaMemcpy2DAsync GPU to host (A panel piece)",
                                    err)) ||
                (rc = dd_cuda_check(cudaEventRecord(ss->copied[(m ? ss->npc[0] : 0) + i], s->cs),
                                    "cudaEventRecord (staged piece copied)", err)))
                return rc;
        }
    }
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
    if ((rc = s->aware ? post_aware(s, x, err) : post_staged(s, x, err)))
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
