/* comm_ce.h — private to the copy-engine comm backend (comm.h): the state
 * that comm_ce.c (open, close: communicators, IPC events, the probe) and
 * comm_ce_xfer.c (the panel protocol) share.  The design is at the top of
 * comm_ce.c. */
#ifndef DD_COMM_CE_H
#define DD_COMM_CE_H

#include <cuda.h>
#include <stdint.h>

#include "comm.h"
#include "dd_cuda.h"

/* Most slots (core's DD_LOOKAHEAD_MAX + 1, summa.h): their IPC event handles
 * travel in one fixed-size message at open. */
#define DD_CE_MAX_SLOTS 17

/* Tags on the backend's own communicators (duplicates of row and column). */
enum { CE_TAG_READY = 7301, CE_TAG_ACK = 7302 };

/* Root to each receiver, once per panel and matrix: the panel is produced
 * (the root recorded its event for `slot` before sending this), and where
 * it lies in the root's allocation. */
typedef struct {
    cudaIpcMemHandle_t handle;   /* of the allocation holding the panel */
    unsigned long long bufid;    /* the allocation's process-wide id (CUDA) */
    uint64_t offset;             /* bytes from the allocation's base to the panel */
    int64_t seq;                 /* post number, the same on every rank */
    int64_t src_ld, rows, width; /* elements: the root's row pitch and the shape */
    int32_t slot, pad;
} ce_msg;

/* A peer's allocation opened here. */
typedef struct {
    unsigned long long bufid; /* 0: none */
    cudaIpcMemHandle_t handle;
    char *base; /* mapped in this process */
} ce_map;

/* One direction: A along the grid row (g[0]) or B down the column (g[1]). */
typedef struct {
    MPI_Comm comm; /* duplicate of the row or column communicator */
    int rank, size;
    cudaEvent_t *peer;    /* [size·nslots]: peers' "produced" events, opened (self: NULL) */
    ce_map *map;          /* [size]: the peer's block this rank last read from */
    ce_msg *out;          /* root: [nslots] the message of the slot's last post */
    MPI_Request *sends;   /* root: [nslots·size] its sends */
    MPI_Request *acks;    /* root: [nslots·size] receives of the receivers' acks */
    int64_t *ack_in;      /* root: [nslots·size] their buffers */
    MPI_Request *ack_out; /* receiver: [nslots] its ack of the slot's last post */
    int64_t *ack_seq;     /* receiver: [nslots] their buffers */
    /* root: the handle of its own block last exported */
    unsigned long long my_bufid;
    cudaIpcMemHandle_t my_handle;
} ce_group;

/* cuPointerGetAttributes, from the driver at run time (no link to libcuda) */
typedef CUresult (*ce_ptr_attrs_fn)(unsigned n, CUpointer_attribute *attrs, void **data,
                                    CUdeviceptr ptr);

typedef struct {
    ce_group g[2];
    cudaStream_t cs, xs; /* the engine's communication and compute streams */
    int nslots;
    cudaEvent_t *produced;          /* [nslots] interprocess: recorded by this rank as a root */
    cudaEvent_t *ready, *slot_free; /* [nslots] local, as in the NCCL backend */
    int64_t seq;                    /* posts so far */
    ce_ptr_attrs_fn ptr_attrs;
} ce_state;

/* comm_ce_xfer.c: the ops after open. */
int ce_post(dd_comm *c, const dd_panel_xfer *x, dd_err *err);
int ce_wait(dd_comm *c, int slot, dd_err *err);
int ce_release(dd_comm *c, int slot, dd_err *err);
int ce_progress(dd_comm *c, dd_err *err);

#endif
