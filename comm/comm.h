/* comm.h — SUMMA panel broadcasts, behind one small ops struct.
 *
 * A comm backend moves panel t of A along its grid row and panel t of B down
 * its grid column into "slot" buffers SUMMA owns in work memory.  SUMMA's
 * loop (src/core/summa.c), with lookahead L and L+1 slots:
 *
 *     post(0..L-1)
 *     for t: post(t+L); wait(t); gemm(t, progress); release(t)
 *
 * post() starts the transfers of one panel into a slot; it may enqueue
 * stream work (CUDA) or start non-blocking MPI (host).  wait() makes the
 * panel in a slot usable by the next gemm (CUDA: the compute stream waits on
 * an event; host: MPI_Waitall).  release() says the gemm reading a slot has
 * been enqueued/finished, so a later post() may overwrite it (CUDA: event on
 * the compute stream that the comm stream waits for).  progress() is called
 * while a multiply runs and must not block on it.
 *
 * A transfer whose communicator has one rank is never posted: SUMMA reads
 * the owned block directly.
 *
 * On CUDA, wait(slot) also orders the compute stream after any work the
 * library enqueued on the engine's communication stream before post(slot)
 * (the streamed upload of owned blocks relies on it): backends record
 * "ready" on that stream. */
#ifndef DD_COMM_H
#define DD_COMM_H

#include <mpi.h>
#include <stdint.h>

#include "dd.h"

typedef struct dd_comm dd_comm;

typedef struct {
    int active;  /* 0: nothing to move for this matrix (group of one) */
    int root;    /* rank in the row (A) or column (B) communicator that owns it */
    int is_root; /* this rank is the root */
    /* Root only: where the panel lives in the owned block.  A's panel is a
     * strided slice (rows × width, row pitch src_ld elements); B's is
     * contiguous (src_ld == width == n). */
    const void *src;
    int64_t src_ld;
    int64_t rows, width; /* panel shape; rows*width elements in dst */
    void *dst;           /* slot buffer in work memory, rows × width, ld = width */
} dd_xfer;

typedef struct {
    int slot;
    dd_dtype type;
    dd_xfer a, b;
} dd_panel_xfer;

typedef struct {
    MPI_Comm world, row, col; /* row: ranks of my grid row (size Q); col: size P */
    int nslots;
    /* What the engine gives the backend (the context copies it from there,
     * src/api/api_context.c, so comm/ knows nothing of engines): where
     * panels live, the CUDA streams
     * (cudaStream_t, NULL on the host) and how many ranks share this rank's
     * GPU (NCCL needs one GPU per rank). */
    int work_is_host;
    void *comm_stream, *compute_stream;
    int ranks_per_device;
} dd_comm_cfg;

typedef struct dd_comm_ops {
    const char *name; /* "mpi-host", "nccl", "mpi", "ce" */
    int work_is_host; /* the memory it moves: 1 host (CPU engine), 0 device */
    /* Collective over world.  DD_EUNSUP when unusable here. */
    int (*open)(dd_comm *c, const dd_comm_cfg *cfg, dd_err *err);
    void (*close)(dd_comm *c);
    int (*post)(dd_comm *c, const dd_panel_xfer *x, dd_err *err);
    int (*wait)(dd_comm *c, int slot, dd_err *err);
    int (*release)(dd_comm *c, int slot, dd_err *err);
    int (*progress)(dd_comm *c, dd_err *err);
} dd_comm_ops;

struct dd_comm {
    const dd_comm_ops *ops;
    char detail[160]; /* for the report: "NCCL 2.28.3", "MPI staged through pinned host (not
                         CUDA-aware: MPIX_Query_cuda_support()=0)" */
    void *impl;
};

extern const dd_comm_ops dd_comm_mpi_host;
#ifdef DD_HAVE_CUDA
extern const dd_comm_ops dd_comm_mpi_gpu; /* CUDA-aware or staged, decided at open */
/* peer copies on the copy engines through CUDA IPC, grids whose rows and
 * columns each lie on one host (comm_ce.c) */
extern const dd_comm_ops dd_comm_ce;
#endif
#ifdef DD_HAVE_NCCL
extern const dd_comm_ops dd_comm_nccl;
#endif

/* --comm NAME (auto | nccl | mpi | ce, alias cuda-ipc): open the backend
 * that serves cfg's memory on every rank.  auto: on the host MPI; on GPUs
 * comm_gpu_choice's answer (below).  ce where it is refused (a row or
 * column across hosts, no CUDA IPC): what auto takes without the copy
 * engines, its detail saying why.  Collective; the result is agreed across
 * ranks. */
int comm_select(const char *name, const dd_comm_cfg *cfg, dd_comm *c, dd_err *err);
/* 1 when `name` is one comm_select takes (auto, nccl, mpi, ce, cuda-ipc). */
int comm_known(const char *name);
/* The backend --comm `name` selects for work in GPU memory, before any
 * refusal: "ce", "nccl" or "mpi" (pure: comm_select's rule; the performance
 * model maps the answer to its link, model_intra_link).  maxshared: the most ranks sharing one
 * GPU anywhere; with_ce = 0: auto's choice once the copy engines are
 * refused.  On GPUs with one rank each, auto takes the copy engines first
 * (no SMs taken from the multiply, no NCCL communicators to build and tear
 * down: docs/results/h200x2-2026-11-30-wholerun-3), NCCL where they are
 * refused (a row or column spanning hosts), MPI where GPUs are shared. */
const char *comm_gpu_choice(const char *name, int maxshared, int with_ce);

#endif
