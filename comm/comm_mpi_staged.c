/* comm_mpi_staged.c — the MPI comm backend for the CUDA engine where MPI
 * is not CUDA-aware: panels staged through pinned host buffers, in pieces.
 * comm_mpi_gpu.c decides the path and holds the protocol; the ordering of
 * the staged path and why it cannot deadlock are explained at its top.
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
 * open. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm_mpi_gpu.h"
#include "dd_knobs.h"
#include "grid.h"

/* Automatic piece count: one per STAGE_PIECE_BYTES, at most STAGE_AUTO_MAX
 * (comm_mpi_gpu.h). */
#define STAGE_PIECE_BYTES ((size_t)8 << 20)
/* DD_MPI_STAGE_PIECES (dd_knobs.h: 0..4096 or auto): 0 (automatic) when
 * unset, empty, "0" or "auto"; refused when bad. */
int mpig_local_pieces(int *pieces, dd_err *err)
{
    char msg[DD_ERRLEN];
    *pieces = 0;
    if (dd_knob_error(DDK_MPI_STAGE_PIECES, msg, sizeof msg))
        return dd_fail(err, DD_EUSAGE, "%s", msg);
    *pieces = (int)dd_knob_int(DDK_MPI_STAGE_PIECES);
    return DD_OK;
}

/* ---- staged pieces ------------------------------------------------------ */

static const dd_xfer *xfer_of(const dd_panel_xfer *x, int m)
{
    return m ? &x->b : &x->a;
}

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

/* ---- completing a staged panel ------------------------------------------ */

/* Where the broadcasts of one staged panel stand while it completes. */
typedef struct {
    int slot;
    slot_state *ss;
    int base[2]; /* global index of each transfer's piece 0 */
    int root[2]; /* this rank is the root of transfer m */
    int next[2]; /* root: next piece to broadcast */
    int unsent;  /* root: pieces not yet started */
    int active;  /* requests not yet complete */
    int freed;   /* slot_free waited for on the comm stream */
} staged_run;

/* Receives need nothing local: start them all, so that every piece the
 * root sends finds its match.  Count the pieces this rank is root of. */
static int start_receives(mpig_state *s, staged_run *r, dd_err *err)
{
    slot_state *ss = r->ss;
    int rc;
    for (int m = 0; m < 2; m++) {
        if (!ss->npc[m])
            continue;
        if (r->root[m]) {
            r->unsent += ss->npc[m];
            continue;
        }
        for (int i = 0; i < ss->npc[m]; i++)
            if ((rc = start_piece(s, ss, m, i, r->base[m] + i, &r->active, err)))
                return rc;
    }
    return DD_OK;
}

/* Root: broadcast, in order, every piece whose copy to the host has
 * landed; stop at the first still copying. */
static int send_copied(mpig_state *s, staged_run *r, dd_err *err)
{
    slot_state *ss = r->ss;
    int rc;
    for (int m = 0; m < 2; m++) {
        while (r->root[m] && r->next[m] < ss->npc[m]) {
            int p = r->base[m] + r->next[m];
            cudaError_t q = cudaEventQuery(ss->copied[p]);
            if (q == cudaErrorNotReady)
                break;
            if ((rc = dd_cuda_check(q, "cudaEventQuery (staged piece copied to the host)", err)) ||
                (rc = start_piece(s, ss, m, r->next[m], p, &r->active, err)))
                return rc;
            r->next[m]++;
            r->unsent--;
        }
    }
    return DD_OK;
}

/* Nothing of ours to move yet: block on the next copy. */
static int wait_copy(const staged_run *r, dd_err *err)
{
    int m = r->root[0] && r->next[0] < r->ss->npc[0] ? 0 : 1;
    return dd_cuda_check(cudaEventSynchronize(r->ss->copied[r->base[m] + r->next[m]]),
                         "cudaEventSynchronize (staged piece copied to the host)", err);
}

/* Complete what requests MPI has done; a receiver's piece whose requests
 * are all done goes on to the GPU.  While pieces of ours are still
 * copying, only test (the host must come back to start them); once all
 * are started, wait. */
static int reap_pieces(mpig_state *s, staged_run *r, dd_err *err)
{
    slot_state *ss = r->ss;
    int nd = 0, rc;
    if (r->unsent)
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
        return dd_fail(err, DD_EFAIL, "MPI lost %d staged panel requests", r->active);
    for (int j = 0; j < nd; j++) {
        int p = s->req_piece[s->done_idx[j]];
        int m = p >= r->base[1] && ss->npc[1] ? 1 : 0;
        r->active--;
        if (--s->left[p] == 0 && !r->root[m] &&
            (rc = piece_to_gpu(s, r->slot, m, p - r->base[m], &r->freed, err)))
            return rc;
    }
    return DD_OK;
}

int mpig_complete_staged(mpig_state *s, int slot, dd_err *err)
{
    slot_state *ss = &s->slots[slot];
    int np = ss->npc[0] + ss->npc[1];
    staged_run r = {.slot = slot,
                    .ss = ss,
                    .base = {0, ss->npc[0]},
                    .root = {ss->x.a.is_root, ss->x.b.is_root}};
    int recv = (ss->npc[0] && !r.root[0]) || (ss->npc[1] && !r.root[1]);
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
    if ((rc = start_receives(s, &r, err)))
        return rc;
    while (r.unsent || r.active) {
        if ((rc = send_copied(s, &r, err)))
            return rc;
        if (!r.active) {
            if ((rc = wait_copy(&r, err)))
                return rc;
            continue;
        }
        if ((rc = reap_pieces(s, &r, err)))
            return rc;
    }
    s->reqs.n = 0;
    if (recv)
        return dd_cuda_check(cudaEventRecord(s->ready[slot], s->cs),
                             "cudaEventRecord (panel ready)", err);
    return DD_OK;
}

/* ---- posting a staged panel --------------------------------------------- */

/* Root: queue each piece's copy to the host, each followed by its event, so
 * that the host can broadcast piece i while piece i+1 is still copying.  No
 * wait on slot_free: the copy reads the owned block and writes the host
 * slot, whose last reader (a copy to the GPU, if any) is earlier on this
 * stream and whose last MPI use completed before this post. */
int mpig_post_staged(mpig_state *s, const dd_panel_xfer *x, dd_err *err)
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
