/* summa.h — SUMMA's loop: C(p,q) = Σ_t A(p,t)·B(t,q) over K panels,
 * double-buffered (lookahead L, L+1 slots).  Knows only the engine and comm
 * interfaces: no CUDA, no HDF5, and one MPI call of its own (below).
 *
 * Sliced panels (summa_use_slices; their sizes, plan and redo in
 * summa_slices.c).  Where the engine's kernel slices its operands
 * (engine.h's slices ops: ozaki2), the rank that owns a panel slices it
 * once into its export buffer and the panel travels as that blob; every
 * rank multiplies from blobs, so no receiver slices again.  A panel whose
 * blob says it cannot be emulated (a non-finite value, a range too wide)
 * is left out of its product; after the loop every rank learns which
 * panels any rank left out (one MPI_Allreduce over `world`), they are
 * broadcast again in the element type, and the ranks that left them out
 * multiply them with the kernel's own gemm (which falls back to native
 * there). */
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
    /* Sliced panels (summa_use_slices; 0: panels travel in the type). */
    int slices;
    MPI_Comm world;        /* every rank of the grid: the redone panels' agreement */
    size_t *offA, *offB;   /* per panel: its blob in expA / expB, SIZE_MAX: not mine */
    size_t expA_bytes, expB_bytes; /* the export buffers' sizes (summa_plan_slices) */
    void *expA, *expB;     /* work memory: this rank's own panels, sliced */
    unsigned char *missed; /* per panel: left out of its product here */
    int64_t redone;        /* panels redone in the element type, last multiply (all ranks) */
    /* Bands of one multiply on one rank (summa_rows_slices): B's blobs of
     * every panel in expB, made by the first band and kept while b_kept
     * (the plan clears it where B may have changed). */
    int keep_b, b_kept;
    /* Called after each panel's multiply is issued (NULL: not called). */
    void (*on_panel)(void *arg, int64_t done, int64_t total);
    void *on_panel_arg;
} dd_summa;

/* A fresh multiply: everything set from the arguments, panel 0 meaning the
 * engine's default width, then the block sizes and the panel count (no
 * allocation; summa_setup allocates). */
void summa_init(dd_summa *s, dd_engine *e, dd_comm *c, dd_grid g, dd_dtype t, int64_t M, int64_t N,
                int64_t K, int64_t panel, int lookahead, int accumulate);
/* After summa_init, before sizes are taken: panels travel sliced when
 * `allowed` (the agreed DD_OZAKI2_PANELS), the grid has more than one rank
 * and the engine slices panels of this kernel and type (pure: the same on
 * every rank).  world: the ranks of the grid. */
void summa_use_slices(dd_summa *s, MPI_Comm world, int allowed);
/* For dd_plan_multiply_rows on a grid of one rank, where panels do not
 * travel sliced and `allowed` (the agreed DD_OZAKI2_PANELS and the
 * backend): the bands multiply from blobs, B's blobs of every panel made
 * once and kept (keep_b), A's band sliced per panel into one reused blob.
 * Sets up the lists and allocates both export buffers; 1 where it did,
 * 0 where it cannot (nothing changed, the bands multiply as before: also
 * where the memory is not there). */
int summa_rows_slices(dd_summa *s, int allowed);
/* Bytes of one slot of A (side 0) or B (side 1): a panel in the type, or
 * its blob where panels travel sliced, whichever is larger. */
size_t summa_slot_bytes(const dd_summa *s, int side, int *overflow);
/* Where panels travel sliced, after the panel list is made: each own
 * panel's offset in the export buffers, their sizes, the missed flags
 * (host memory, freed by summa_free_lists).  DD_OK where not sliced. */
int summa_plan_slices(dd_summa *s, dd_err *err);
/* The panel list and summa_plan_slices' lists, freed. */
void summa_free_lists(dd_summa *s);
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
