/* comm_ce_xfer.c — the copy-engine backend's panel protocol: post, wait,
 * release, progress (comm.h; the ordering and why it cannot deadlock are
 * at the top of comm_ce.c). */
#include <stdint.h>
#include <string.h>

#include "agree.h"
#include "comm_ce.h"

static const dd_xfer *xfer_of(const dd_panel_xfer *x, int m)
{
    return m ? &x->b : &x->a;
}

static size_t xfer_bytes(const dd_xfer *t, dd_dtype type)
{
    return t->active ? (size_t)t->rows * (size_t)t->width * dd_elsize(type) : 0;
}

static int bad_slot(const ce_state *s, int slot, dd_err *err)
{
    if (slot >= 0 && slot < s->nslots)
        return DD_OK;
    return dd_fail(err, DD_EFAIL, "panel slot %d out of range (the copy-engine backend has %d)",
                   slot, s->nslots);
}

/* The allocation holding p: its base here and its process-wide id. */
static int locate(ce_state *s, const void *p, char **base, unsigned long long *id, dd_err *err)
{
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                    CU_POINTER_ATTRIBUTE_BUFFER_ID};
    CUdeviceptr start = 0;
    unsigned long long bid = 0;
    void *data[2] = {&start, &bid};
    CUresult r = s->ptr_attrs(2, attrs, data, (CUdeviceptr)(uintptr_t)p);
    if (r != CUDA_SUCCESS || !start || !bid)
        return dd_fail(err, DD_EFAIL,
                       "cuPointerGetAttributes of a panel's source failed (CUresult %d): the "
                       "copy-engine comm backend needs blocks in cudaMalloc memory",
                       (int)r);
    *base = (char *)(uintptr_t)start;
    *id = bid;
    return DD_OK;
}

/* The message of transfer t: its allocation's handle (exported again only
 * for a new allocation) and where the panel lies in it. */
static int describe(ce_state *s, ce_group *g, const dd_xfer *t, ce_msg *msg, dd_err *err)
{
    char *base = NULL;
    unsigned long long id = 0;
    int rc = locate(s, t->src, &base, &id, err);
    if (!rc && id != g->my_bufid) {
        rc = dd_cuda_check(cudaIpcGetMemHandle(&g->my_handle, base),
                           "cudaIpcGetMemHandle (a block of the root)", err);
        g->my_bufid = rc ? 0 : id;
    }
    if (rc)
        return rc;
    msg->handle = g->my_handle;
    msg->bufid = id;
    msg->offset = (uint64_t)((const char *)t->src - base);
    msg->seq = s->seq;
    msg->src_ld = t->src_ld;
    msg->rows = t->rows;
    msg->width = t->width;
    return DD_OK;
}

/* Root: slot's previous post fully acknowledged, then produced[slot]
 * recorded and announced to every receiver of the transfers it roots. */
static int root_part(ce_state *s, const dd_panel_xfer *x, dd_err *err)
{
    int slot = x->slot, any = 0, rc = DD_OK;
    for (int m = 0; m < 2; m++)
        any |= xfer_bytes(xfer_of(x, m), x->type) && xfer_of(x, m)->is_root;
    if (!any)
        return DD_OK;
    for (int m = 0; m < 2 && !rc; m++) {
        ce_group *g = &s->g[m];
        MPI_Request *acks = g->acks + (size_t)slot * g->size;
        MPI_Request *sends = g->sends + (size_t)slot * g->size;
        if (!(rc = dd_mpi_check(MPI_Waitall(g->size, acks, MPI_STATUSES_IGNORE),
                                "MPI_Waitall (acks of a slot's previous panel)", err)))
            rc = dd_mpi_check(MPI_Waitall(g->size, sends, MPI_STATUSES_IGNORE),
                              "MPI_Waitall (announcements of a slot's previous panel)", err);
        for (int p = 0; p < g->size && !rc; p++)
            if (p != g->rank && g->ack_in[(size_t)slot * g->size + p] != g->out[slot].seq)
                rc = dd_fail(err, DD_EFAIL,
                             "copy-engine backend out of step: ack of post %lld "
                             "for post %lld",
                             (long long)g->ack_in[(size_t)slot * g->size + p],
                             (long long)g->out[slot].seq);
        for (int p = 0; p < g->size; p++) /* nothing owed until the next announcement */
            g->ack_in[(size_t)slot * g->size + p] = 0;
    }
    if (rc || (rc = dd_cuda_check(cudaEventRecord(s->produced[slot], s->cs),
                                  "cudaEventRecord (panel produced)", err)))
        return rc;
    for (int m = 0; m < 2 && !rc; m++) {
        ce_group *g = &s->g[m];
        const dd_xfer *t = xfer_of(x, m);
        g->out[slot].seq = 0; /* no acks owed for this slot in a group it does not root */
        if (!xfer_bytes(t, x->type) || !t->is_root || (rc = describe(s, g, t, &g->out[slot], err)))
            continue;
        g->out[slot].slot = slot;
        for (int p = 0; p < g->size && !rc; p++) {
            size_t i = (size_t)slot * g->size + p;
            if (p == g->rank)
                continue;
            if (!(rc = dd_mpi_check(MPI_Isend(&g->out[slot], (int)sizeof(ce_msg), MPI_BYTE, p,
                                              CE_TAG_READY, g->comm, &g->sends[i]),
                                    "MPI_Isend (panel produced)", err)))
                rc = dd_mpi_check(
                    MPI_Irecv(&g->ack_in[i], 1, MPI_INT64_T, p, CE_TAG_ACK, g->comm, &g->acks[i]),
                    "MPI_Irecv (ack)", err);
        }
    }
    return rc;
}

/* The root's allocation named in msg, opened here (once per allocation). */
static int mapping(ce_state *s, ce_map *mp, const ce_msg *msg, dd_err *err)
{
    if (mp->base && mp->bufid == msg->bufid &&
        !memcmp(&mp->handle, &msg->handle, sizeof msg->handle))
        return DD_OK;
    int rc = DD_OK;
    if (mp->base) { /* a new allocation of that root: no copy may still read the old one */
        if (!(rc = dd_cuda_check(cudaStreamSynchronize(s->cs), "cudaStreamSynchronize", err)))
            rc = dd_cuda_check(cudaIpcCloseMemHandle(mp->base), "cudaIpcCloseMemHandle", err);
        mp->base = NULL;
        mp->bufid = 0;
    }
    void *p = NULL;
    if (!rc &&
        !(rc = dd_cuda_check(cudaIpcOpenMemHandle(&p, msg->handle, cudaIpcMemLazyEnablePeerAccess),
                             "cudaIpcOpenMemHandle (a root's block)", err))) {
        mp->base = p;
        mp->bufid = msg->bufid;
        mp->handle = msg->handle;
    }
    return rc;
}

/* Receiver of transfer m: the root's word, its event, the ack, the copy. */
static int receive(ce_state *s, int m, const dd_panel_xfer *x, dd_err *err)
{
    ce_group *g = &s->g[m];
    const dd_xfer *t = xfer_of(x, m);
    size_t es = dd_elsize(x->type);
    int slot = x->slot, rc;
    ce_msg msg;
    if (g->size < 2 || t->root < 0 || t->root >= g->size || t->root == g->rank)
        return dd_fail(err, DD_EFAIL, "a panel transfer with root %d in a group of %d ranks",
                       t->root, g->size);
    if ((rc = dd_mpi_check(MPI_Recv(&msg, (int)sizeof msg, MPI_BYTE, t->root, CE_TAG_READY, g->comm,
                                    MPI_STATUS_IGNORE),
                           "MPI_Recv (panel produced)", err)))
        return rc;
    if (msg.seq != s->seq || msg.slot != slot || msg.rows != t->rows || msg.width != t->width)
        return dd_fail(err, DD_EFAIL,
                       "copy-engine backend out of step: post %lld slot %d (%lldx%lld) "
                       "announced as post %lld slot %d (%lldx%lld)",
                       (long long)s->seq, slot, (long long)t->rows, (long long)t->width,
                       (long long)msg.seq, (int)msg.slot, (long long)msg.rows,
                       (long long)msg.width);
    ce_map *mp = &g->map[t->root];
    if ((rc = mapping(s, mp, &msg, err)) ||
        (rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, g->peer[t->root * s->nslots + slot], 0),
                            "cudaStreamWaitEvent (the root's panel produced)", err)) ||
        (rc = dd_mpi_check(MPI_Wait(&g->ack_out[slot], MPI_STATUS_IGNORE), "MPI_Wait (ack)", err)))
        return rc;
    g->ack_seq[slot] = msg.seq;
    if ((rc = dd_mpi_check(MPI_Isend(&g->ack_seq[slot], 1, MPI_INT64_T, t->root, CE_TAG_ACK,
                                     g->comm, &g->ack_out[slot]),
                           "MPI_Isend (ack)", err)))
        return rc;
    return dd_cuda_check(cudaMemcpy2DAsync(t->dst, (size_t)t->width * es, mp->base + msg.offset,
                                           (size_t)msg.src_ld * es, (size_t)t->width * es,
                                           (size_t)t->rows, cudaMemcpyDeviceToDevice, s->cs),
                         "cudaMemcpy2DAsync (peer copy of a panel)", err);
}

int ce_post(dd_comm *c, const dd_panel_xfer *x, dd_err *err)
{
    ce_state *s = c->impl;
    int rc = bad_slot(s, x->slot, err), receives = 0;
    if (rc)
        return rc;
    s->seq++;
    for (int m = 0; m < 2; m++)
        receives |= xfer_bytes(xfer_of(x, m), x->type) && !xfer_of(x, m)->is_root;
    if ((rc = root_part(s, x, err)) ||
        (receives && (rc = dd_cuda_check(cudaStreamWaitEvent(s->cs, s->slot_free[x->slot], 0),
                                         "cudaStreamWaitEvent (slot free)", err))))
        return rc;
    for (int m = 0; m < 2 && !rc; m++)
        if (xfer_bytes(xfer_of(x, m), x->type) && !xfer_of(x, m)->is_root)
            rc = receive(s, m, x, err);
    return rc ? rc
              : dd_cuda_check(cudaEventRecord(s->ready[x->slot], s->cs),
                              "cudaEventRecord (panel ready)", err);
}

int ce_wait(dd_comm *c, int slot, dd_err *err)
{
    ce_state *s = c->impl;
    int rc = bad_slot(s, slot, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamWaitEvent(s->xs, s->ready[slot], 0),
                              "cudaStreamWaitEvent (panel ready)", err);
}

int ce_release(dd_comm *c, int slot, dd_err *err)
{
    ce_state *s = c->impl;
    int rc = bad_slot(s, slot, err);
    return rc ? rc
              : dd_cuda_check(cudaEventRecord(s->slot_free[slot], s->xs),
                              "cudaEventRecord (slot free)", err);
}

/* The copies run on the copy engines; only surface a failure of one. */
int ce_progress(dd_comm *c, dd_err *err)
{
    ce_state *s = c->impl;
    cudaError_t cr = cudaStreamQuery(s->cs);
    if (cr == cudaSuccess || cr == cudaErrorNotReady)
        return DD_OK;
    return dd_cuda_check(cr, "a peer copy on the communication stream", err);
}
