/* summa.h — SUMMA's loop: C(p,q) = Σ_t A(p,t)·B(t,q) over K panels,
 * double-buffered (lookahead L, L+1 slots).  Knows only the engine and comm
 * interfaces: no MPI calls of its own beyond what they do, no CUDA, no HDF5. */
#ifndef DD_SUMMA_H
#define DD_SUMMA_H

#include "comm.h"
#include "engine.h"
#include "grid.h"

/* Most panels in flight (--lookahead); L+1 slot buffers of each matrix.
 * The public DGEMM_DIST_LOOKAHEAD_MAX (src/api/api_impl.h holds them equal). */
#define DD_LOOKAHEAD_MAX 16

typedef struct {
    dd_engine *engine;
    dd_comm *comm;
    dd_grid g;
    dd_dtype type;
    int64_t M, N, K;
    int64_t nb;     /* panel width */
    int lookahead;  /* L >= 1 */
    int accumulate; /* 1: the first panel adds to C (GEMM's beta ≠ 0: C holds beta·C_in) */
    /* my blocks in work memory: A Mp×Kq, B Kp×Nq, C Mp×Nq, row-major */
    void *A, *B, *C;
    int64_t Mp, Nq, Kq, Kp;
    /* slot buffers (work memory), L+1 of each; NULL when that broadcast is local */
    void *slotA[DD_LOOKAHEAD_MAX + 1], *slotB[DD_LOOKAHEAD_MAX + 1];
    /* host copies of the A and B blocks (same layout), for streamed upload */
    const void *hA, *hB;
    dd_panel *panels;
    int64_t npanels;
    /* this rank's seconds in each panel's local multiply during the last
     * multiply (0: none, an empty block); in the panel list's allocation */
    double *panel_sec;
    /* A panel list given by the caller (NULL: grid_panels' of the 2-D block
     * layout): K distributed otherwise (block-cyclic, api_cyclic.c); Mp, Nq,
     * Kq, Kp and nb (the widest panel) are then the caller's too. */
    const dd_panel *fixed;
    int64_t nfixed;
    /* Called after each panel's multiply is issued (NULL: not called). */
    void (*on_panel)(void *arg, int64_t done, int64_t total);
    void *on_panel_arg;
} dd_summa;

/* A fresh multiply: everything set from the arguments, panel 0 meaning the
 * engine's default width, then the block sizes and the panel count (no
 * allocation; summa_setup allocates). */
void summa_init(dd_summa *s, dd_engine *e, dd_comm *c, dd_grid g, dd_dtype t, int64_t M, int64_t N,
                int64_t K, int64_t panel, int lookahead, int accumulate);
/* Fill in the block sizes from g, M, N, K (pure). */
void summa_shape(dd_summa *s);
/* Panels of one multiply (pure: the same on every rank). */
int64_t summa_panel_count(const dd_summa *s);
/* Bytes of work memory needed per rank: blocks + slots; *overflow set (and
 * SIZE_MAX returned) when the figure does not fit in size_t. */
size_t summa_work_bytes(const dd_summa *s, size_t *slot_bytes, int *overflow);
/* The panel list alone (slots cleared, not allocated): for callers that
 * place the slots themselves. */
int summa_plan_panels(dd_summa *s, dd_err *err);
/* Allocate slots and the panel list (blocks are the caller's). */
int summa_setup(dd_summa *s, dd_err *err);
void summa_teardown(dd_summa *s);
/* One distributed multiply.  seconds: this rank's multiply phase; gemm:
 * time in local multiplies; exposed communication = seconds − gemm; each
 * panel's local multiply in panel_sec.
 * stream_upload: first upload each panel's owned slices of A and B from
 * hA/hB, on the communication stream just ahead of its broadcast, so the
 * upload of panel t+L overlaps the multiply of panel t. */
int summa_multiply(dd_summa *s, int stream_upload, double *seconds, double *gemm_seconds,
                   dd_err *err);

/* Moves the first two panels once, as the multiply will, so that the comm
 * backend's connections (NCCL's are made on first use) are set up before
 * the timed multiply: a single run's figures are then the warm ones.  The
 * slots' contents are overwritten by the multiply.  DD_ECOMM on failure. */
int summa_warm(dd_summa *s, dd_err *err);

#endif
