/* comm_mpi_gpu.h — private to the MPI comm backend for the CUDA engine:
 * the state that comm_mpi_gpu.c (open/close, which path, the protocol, the
 * CUDA-aware path) and comm_mpi_staged.c (the path staged through pinned
 * host buffers, in pieces) share, and what one calls in the other.  The
 * design, ordering and deadlock argument are at the top of comm_mpi_gpu.c;
 * the piece cut at the top of comm_mpi_staged.c. */
#ifndef DD_COMM_MPI_GPU_H
#define DD_COMM_MPI_GPU_H

#include <stddef.h>

#include "comm.h"
#include "comm_mpi_util.h"
#include "dd_cuda.h"

/* Automatic piece count: at most STAGE_AUTO_MAX per transfer. */
#define STAGE_AUTO_MAX 8

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

static inline int make_event(cudaEvent_t *ev, dd_err *err)
{
    return dd_cuda_check(cudaEventCreateWithFlags(ev, cudaEventDisableTiming),
                         "cudaEventCreateWithFlags", err);
}

static inline size_t xfer_bytes(const dd_xfer *x, dd_dtype t)
{
    return x->active ? (size_t)x->rows * (size_t)x->width * dd_elsize(t) : 0;
}

/* comm_mpi_staged.c */

/* DD_MPI_STAGE_PIECES: 0 (automatic) when unset, empty, "0" or "auto". */
int mpig_local_pieces(int *pieces, dd_err *err);
/* Queue the root's copies of x's pieces to the host (see there). */
int mpig_post_staged(mpig_state *s, const dd_panel_xfer *x, dd_err *err);
/* Broadcast the panel in slot and, on receivers, queue its copies to the
 * GPU followed by ready[slot]. */
int mpig_complete_staged(mpig_state *s, int slot, dd_err *err);

#endif
