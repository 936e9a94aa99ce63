/* comm_ce.c — panel broadcasts with the GPUs' copy engines (comm.h),
 * `--comm ce`: for grids whose rows and columns each lie on one host.
 *
 * Instead of a broadcast kernel (NCCL's, which takes SMs from the
 * multiply), each receiver pulls its panel straight from the root's block
 * with one cudaMemcpy2DAsync on its communication stream: a peer copy over
 * NVLink or PCIe done by a copy engine, no SM involved.  The root moves
 * nothing and packs nothing; its multiply reads its own block in place, as
 * with every backend.
 *
 * Memory.  The root's blocks are engine allocations (cudaMalloc).  An IPC
 * handle names a whole allocation, so the root sends with each panel the
 * handle of the allocation holding it, its process-wide buffer id and the
 * panel's byte offset from the allocation's base (cuPointerGetAttributes,
 * reached through cudaGetDriverEntryPoint so nothing links libcuda).  A
 * receiver opens a root's allocation the first time it sees its id
 * (cudaIpcOpenMemHandle) and keeps the mapping; a new id (a block freed
 * and allocated again) replaces it.  So the handles of both blocks travel
 * once, lazily, and any buffer SUMMA hands over works.
 *
 * Ordering, per panel (post number `seq`, the same on every rank, as every
 * rank posts every panel in the same order):
 *
 *   root:     [wait for the acks of slot s's previous post]
 *             record produced[s] on the comm stream (after the library's
 *             streamed upload of the panel, queued there before post)
 *             → MPI_Isend {seq, handle, offset, pitch} to each receiver
 *   receiver: MPI_Recv that message → comm stream waits produced[s] of
 *             the root (an IPC event) → MPI_Isend ack(seq) to the root →
 *             comm stream waits slot_free[s] → cudaMemcpy2DAsync from the
 *             root's memory into the slot → record ready[s]
 *   compute:  wait ready[s] → gemm → record slot_free[s] (release)
 *
 * An IPC event waited on stands for the record that was last issued
 * before the wait was: the message makes sure that record is this panel's
 * (the receiver never reads a panel the root has not produced), and the
 * ack makes sure the root does not record the event again for a later
 * panel before every receiver has issued its wait (a wait on a later
 * record could wait for work queued after the copy it guards: a cycle
 * between the GPUs).  The host waits only for messages of the current or
 * an earlier post, each sent before its sender waits for anything of the
 * same post, so no rank waits for one that waits for it.  The root's
 * block is never written during a multiply (SUMMA reads it), so no
 * receiver's copy can see it change; between multiplies the library
 * agrees over MPI after every rank's copies have completed (phase_end).
 *
 * Refusals.  open() returns DD_EUNSUP, agreed, when a row or column spans
 * hosts (MPI_Comm_split_type SHARED), the CUDA driver's entry point is missing,
 * or IPC is refused (a probe allocation and the events are exchanged and
 * opened at open: containers without a shared IPC namespace, GPUs without
 * peer access); comm_select then falls back to what auto would take. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm_ce.h"

static void free_group(ce_group *g, int nslots, cudaStream_t cs)
{
    int idle = cs && cudaStreamQuery(cs) == cudaSuccess;
    (void)cudaGetLastError();
    for (int i = 0; g->peer && i < g->size * nslots; i++)
        if (g->peer[i])
            cudaEventDestroy(g->peer[i]);
    /* Mappings go only when no copy from them can be in flight (after a
     * failure elsewhere the process ends soon and takes them with it). */
    for (int i = 0; idle && g->map && i < g->size; i++)
        if (g->map[i].base)
            cudaIpcCloseMemHandle(g->map[i].base);
    /* In a good run every ack arrived long ago; after a failure one may
     * never come: a receive still open is cancelled, sends are let go. */
    for (int i = 0; g->acks && i < g->size * nslots; i++) {
        int done = 0;
        if (g->acks[i] != MPI_REQUEST_NULL &&
            MPI_Test(&g->acks[i], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
            MPI_Cancel(&g->acks[i]);
            MPI_Wait(&g->acks[i], MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; g->sends && i < g->size * nslots; i++)
        if (g->sends[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&g->sends[i]);
    for (int i = 0; g->ack_out && i < nslots; i++)
        if (g->ack_out[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&g->ack_out[i]);
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    free(g->peer);
    free(g->map);
    free(g->out);
    free(g->sends);
    free(g->acks);
    free(g->ack_in);
    free(g->ack_out);
    free(g->ack_seq);
}

static void free_state(ce_state *s)
{
    if (!s)
        return;
    for (int m = 0; m < 2; m++)
        free_group(&s->g[m], s->nslots, s->cs);
    for (int i = 0; i < s->nslots; i++) {
        cudaEvent_t *ev[] = {s->produced, s->ready, s->slot_free};
        for (int k = 0; k < 3; k++)
            if (ev[k] && ev[k][i])
                cudaEventDestroy(ev[k][i]);
    }
    free(s->produced);
    free(s->ready);
    free(s->slot_free);
    free(s);
}

static int make_event(cudaEvent_t *ev, unsigned flags, dd_err *err)
{
    return dd_cuda_check(cudaEventCreateWithFlags(ev, flags), "cudaEventCreateWithFlags", err);
}

/* cuPointerGetAttributes from the driver, without linking libcuda. */
static int driver_entry(ce_state *s, dd_err *err)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t cr = cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000,
                                                      cudaEnableDefault, &q);
#else
    cudaError_t cr = cudaGetDriverEntryPoint("cuPointerGetAttributes", &fn, cudaEnableDefault, &q);
#endif
    if (cr != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        (void)cudaGetLastError();
        return dd_fail(err, DD_EUNSUP,
                       "the copy-engine comm backend needs cuPointerGetAttributes from the CUDA "
                       "driver (%s)",
                       cudaGetErrorString(cr));
    }
    memcpy(&s->ptr_attrs, &fn, sizeof fn);
    return DD_OK;
}

/* Local checks and allocations: nothing collective. */
static int prepare(ce_state **out, const dd_comm_cfg *cfg, dd_err *err)
{
    if (cfg->work_is_host)
        return dd_fail(
            err, DD_EUNSUP,
            "the copy-engine comm backend needs the CUDA backend (this run uses the CPU)");
    ce_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the copy-engine comm backend");
    *out = s;
    s->g[0].comm = s->g[1].comm = MPI_COMM_NULL;
    s->cs = (cudaStream_t)cfg->comm_stream;
    s->xs = (cudaStream_t)cfg->compute_stream;
    size_t n = (size_t)cfg->nslots;
    s->produced = calloc(n, sizeof *s->produced);
    s->ready = calloc(n, sizeof *s->ready);
    s->slot_free = calloc(n, sizeof *s->slot_free);
    if (!s->produced || !s->ready || !s->slot_free)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the copy-engine comm backend");
    s->nslots = cfg->nslots;
    int rc = driver_entry(s, err);
    for (int i = 0; i < s->nslots && !rc; i++)
        if (!(rc = make_event(&s->produced[i], cudaEventInterprocess | cudaEventDisableTiming,
                              err)) &&
            !(rc = make_event(&s->ready[i], cudaEventDisableTiming, err)))
            rc = make_event(&s->slot_free[i], cudaEventDisableTiming, err);
    return rc;
}

/* Collective over `from`: the backend's own duplicate, and whether every
 * member is on this host. */
static int join_group(ce_group *g, MPI_Comm from, const char *which, dd_err *err)
{
    MPI_Comm local = MPI_COMM_NULL;
    int rc, nlocal = 0;
    if ((rc = dd_mpi_check(MPI_Comm_dup(from, &g->comm), "MPI_Comm_dup", err)) ||
        (rc = dd_mpi_check(MPI_Comm_rank(g->comm, &g->rank), "MPI_Comm_rank", err)) ||
        (rc = dd_mpi_check(MPI_Comm_size(g->comm, &g->size), "MPI_Comm_size", err)) ||
        (rc = dd_mpi_check(
             MPI_Comm_split_type(g->comm, MPI_COMM_TYPE_SHARED, g->rank, MPI_INFO_NULL, &local),
             "MPI_Comm_split_type", err)))
        return rc;
    rc = dd_mpi_check(MPI_Comm_size(local, &nlocal), "MPI_Comm_size", err);
    MPI_Comm_free(&local);
    if (!rc && nlocal != g->size)
        rc = dd_fail(err, DD_EUNSUP,
                     "a grid %s spans hosts (%d of its %d ranks here); copy engines need "
                     "one host",
                     which, nlocal, g->size);
    return rc;
}

/* What each rank of a group publishes at open: its "produced" events and
 * a probe allocation that peers open once, to learn whether IPC works. */
typedef struct {
    int rc;
    cudaIpcMemHandle_t probe;
    cudaIpcEventHandle_t ev[DD_CE_MAX_SLOTS];
} ce_card;

/* Open every peer's events and probe.  Local; DD_EUNSUP when refused. */
static int open_peers(ce_state *s, ce_group *g, const ce_card *cards, dd_err *err)
{
    for (int p = 0; p < g->size; p++) {
        if (p == g->rank)
            continue;
        if (cards[p].rc)
            return dd_fail(err, DD_EUNSUP, "CUDA IPC export failed on rank %d of a grid group", p);
        void *probe = NULL;
        cudaError_t cr =
            cudaIpcOpenMemHandle(&probe, cards[p].probe, cudaIpcMemLazyEnablePeerAccess);
        if (cr == cudaSuccess)
            cr = cudaIpcCloseMemHandle(probe);
        for (int i = 0; i < s->nslots && cr == cudaSuccess; i++)
            cr = cudaIpcOpenEventHandle(&g->peer[p * s->nslots + i], cards[p].ev[i]);
        if (cr != cudaSuccess) {
            (void)cudaGetLastError();
            return dd_fail(err, DD_EUNSUP,
                           "CUDA IPC refused (%s): copy engines need peer access and a shared "
                           "IPC namespace",
                           cudaGetErrorString(cr));
        }
    }
    return DD_OK;
}

/* Collective over the group: publish, gather, open.  A local failure is
 * carried through the gather (every member makes it) and returned. */
static int exchange(ce_state *s, ce_group *g, dd_err *err)
{
    ce_card mine;
    memset(&mine, 0, sizeof mine);
    void *probe = NULL;
    int rc = dd_cuda_check(cudaMalloc(&probe, 256), "cudaMalloc (IPC probe)", err);
    if (!rc)
        rc = dd_cuda_check(cudaIpcGetMemHandle(&mine.probe, probe), "cudaIpcGetMemHandle", err);
    for (int i = 0; i < s->nslots && !rc; i++)
        rc = dd_cuda_check(cudaIpcGetEventHandle(&mine.ev[i], s->produced[i]),
                           "cudaIpcGetEventHandle", err);
    mine.rc = rc ? 1 : 0;
    ce_card *cards = calloc((size_t)g->size, sizeof *cards);
    int rc2 = cards ? DD_OK : dd_fail(err, DD_ENOMEM, "out of host memory for IPC handles");
    int rc3 = dd_mpi_check(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, cards,
                                         cards ? (int)sizeof mine : 0, MPI_BYTE, g->comm),
                           "MPI_Allgather of the CUDA IPC handles", err);
    rc = rc ? rc : rc2 ? rc2 : rc3;
    if (!rc)
        rc = open_peers(s, g, cards, err);
    /* Every peer has opened and closed the probe once the group agrees;
     * freeing it then is safe (the caller agrees right after). */
    int rc4 = dd_mpi_check(MPI_Barrier(g->comm), "MPI_Barrier", err);
    if (probe)
        cudaFree(probe);
    free(cards);
    return rc ? rc : rc4;
}

static int alloc_group(ce_group *g, int nslots, dd_err *err)
{
    size_t n = (size_t)nslots * (size_t)g->size;
    g->peer = calloc(n, sizeof *g->peer);
    g->map = calloc((size_t)g->size, sizeof *g->map);
    g->out = calloc((size_t)nslots, sizeof *g->out);
    g->sends = malloc(n * sizeof *g->sends);
    g->acks = malloc(n * sizeof *g->acks);
    g->ack_in = calloc(n, sizeof *g->ack_in);
    g->ack_out = malloc((size_t)nslots * sizeof *g->ack_out);
    g->ack_seq = calloc((size_t)nslots, sizeof *g->ack_seq);
    if (!g->peer || !g->map || !g->out || !g->sends || !g->acks || !g->ack_in || !g->ack_out ||
        !g->ack_seq)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the copy-engine comm backend");
    for (size_t i = 0; i < n; i++)
        g->sends[i] = g->acks[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < nslots; i++)
        g->ack_out[i] = MPI_REQUEST_NULL;
    return DD_OK;
}

/* Every rank calls every collective in the same order; a failure is
 * carried to the next agreement over world. */
static int setup_groups(ce_state *s, const dd_comm_cfg *cfg, dd_err *err)
{
    MPI_Comm from[2] = {cfg->row, cfg->col};
    const char *which[2] = {"row", "column"};
    int rc = DD_OK;
    for (int m = 0; m < 2; m++) {
        int r = join_group(&s->g[m], from[m], which[m], err);
        rc = rc ? rc : r;
    }
    if ((rc = dd_agree(cfg->world, rc, err)))
        return rc;
    for (int m = 0; m < 2 && !rc; m++)
        rc = alloc_group(&s->g[m], s->nslots, err);
    if ((rc = dd_agree(cfg->world, rc, err)))
        return rc;
    for (int m = 0; m < 2; m++) {
        int r = s->g[m].size > 1 ? exchange(s, &s->g[m], err) : DD_OK;
        rc = rc ? rc : r;
    }
    return dd_agree(cfg->world, rc, err);
}

static int ce_open(dd_comm *c, const dd_comm_cfg *cfg, dd_err *err)
{
    ce_state *s = NULL;
    c->impl = NULL;
    int rc = cfg->nslots > DD_CE_MAX_SLOTS
                 ? dd_fail(err, DD_EUNSUP, "the copy-engine comm backend takes at most %d slots",
                           DD_CE_MAX_SLOTS)
                 : prepare(&s, cfg, err);
    if (!(rc = dd_agree(cfg->world, rc, err)))
        rc = setup_groups(s, cfg, err);
    if (rc) {
        free_state(s);
        return rc;
    }
    snprintf(c->detail, sizeof c->detail,
             "CUDA IPC peer copies on the copy engines (receivers pull from the root's block; "
             "row groups of %d, column groups of %d, on one host)",
             s->g[0].size, s->g[1].size);
    c->impl = s;
    return DD_OK;
}

/* Local: the context closes the comm before the engine (api_context.c). */
static void ce_close(dd_comm *c)
{
    free_state(c->impl);
    c->impl = NULL;
}

const dd_comm_ops dd_comm_ce = {
    .name = "ce",
    .work_is_host = 0,
    .open = ce_open,
    .close = ce_close,
    .post = ce_post,
    .wait = ce_wait,
    .release = ce_release,
    .progress = ce_progress,
};
