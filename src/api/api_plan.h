/* api_plan.h — plans of the public API (dgemm_dist_plan.h), private to src/api:
 * api_plan.c makes, describes, allocates and frees them; api_plan_stream.c
 * moves blocks between streams and work memory, and sub-blocks between
 * host memory and work memory; api_plan_data.c computes
 * (generate, prepare, multiply, host pass, check); api_plan_rows.c
 * multiplies and moves bands of rows (the file pipeline's). */
#ifndef DD_API_PLAN_H
#define DD_API_PLAN_H

#include <pthread.h>

#include "api_impl.h"
#include "tune.h"

struct dd_plan {
    dd_context *ctx;
    dd_dtype t;
    int64_t M, N, K;
    int read_c, passes, transposed, host_pass;
    dd_tune tune;       /* grid, panel, lookahead and the model's prediction */
    dd_summa s;         /* blocks of op(A), op(B), C and the panel slots (work memory) */
    char note[1536];    /* dd_plan_kernel_note's last answer */
    void *C0;           /* beta·C_in kept for later passes (keeps_c) */
    void *hA, *hB, *hC; /* host copies of the blocks: the host pass */
    void *ring[2];      /* pinned stream buffers (GPU) */
    size_t ring_slot;
    void *tscratch; /* host scratch turning transposed bands (CPU) */
    check_cterm cin;
    double alpha, beta;
    double alpha_im, beta_im; /* complex plans: the imaginary parts */
    int conj_a, conj_b;       /* complex plans: op(A), op(B) conjugated at prepare */
    int prepared, checkable, npass;
    int allocated; /* dd_plan_allocate succeeded: the blocks are usable */
    int owns;      /* dd_plan_allocate ran: dd_plan_destroy frees what it got */
    uint64_t check_seed;
    size_t work_bytes, slot_bytes;
    /* the band pipeline's staged moves (api_plan_rows.c: dd_plan_put_rows) */
    int64_t rows_put, rows_used; /* puts made, and those a multiply has waited for */
    int rows_slices_tried;       /* summa_rows_slices asked once (dd_plan_multiply_rows) */
    int64_t rows_piece;          /* upload pieces so far: piece i in slot i % 2 */
    int64_t take_r0, take_rows, take_per, take_queued; /* the take under way, in pieces */
    int take_on;                 /* a take is queued and not ended */
    void *take_host;             /* dd_plan_take_rows_to's host rows (NULL: the slots') */
    int64_t take_ld;
    struct {
        char *p;
        size_t bytes;
    } hbuf[DD_PLAN_HOST_BUFS]; /* dd_plan_host_alloc's memory */
    pthread_mutex_t hmu;       /* guards hbuf (dd_plan_host_alloc may run on another thread) */
    double alloc_sec[3];
};

/* alpha = 0 (both parts): nothing multiplied. */
static inline int plan_alpha0(const dd_plan *p)
{
    return p->alpha == 0 && p->alpha_im == 0;
}

/* api_plan.c */
/* Bytes of the kept beta·C_in (0: none) and of the GPU's turning scratch. */
size_t plan_c0_bytes(const dd_plan *p);
size_t plan_scratch_bytes(const dd_plan *p);
/* Host memory of the stream buffers (GPU) or the turning scratch (CPU). */
size_t plan_ring_bytes(const dd_plan *p);
/* Block `which` (0 A, 1 B, 2 C) in work memory, its rows and columns. */
void *plan_block(const dd_plan *p, int which, int64_t *rows, int64_t *cols);
/* The public entries' start: the plan's context's message cleared; the
 * end: an internal code as a status. */
dd_err *plan_err(dd_plan *p);

/* api_plan_data.c: a public entry's start on a plan (not NULL): its
 * message cleared into *err, and whether it is allocated (not agreed). */
int plan_enter(dd_plan *p, dd_err **err);
/* Once per plan, at its first band, on one rank with an emulated kernel
 * (DD_OZAKI2_PANELS and the backend allow it; not for host passes): the
 * bands from slices, B's made once for every band (summa_rows_slices). */
void plan_rows_slices(dd_plan *p);

/* api_plan_stream.c */
int plan_use_ring(const dd_plan *p);
int plan_ring_open(dd_plan *p, dd_err *err);
void plan_ring_close(dd_plan *p);

#endif
