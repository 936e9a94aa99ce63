/* api_impl.h — the library's context, private to src/api (the public
 * headers are include/dgemm_dist.h, dgemm_dist_plan.h and dgemm_dist_tool.h). */
#ifndef DD_API_IMPL_H
#define DD_API_IMPL_H

#include "api_redist.h"
#include "check.h"
#include "comm.h"
#include "dd.h"
#include "dgemm_dist_tool.h"
#include "engine.h"
#include "grid.h"
#include "summa.h"

/* The public codes and the layers' own.  Base and core see none of
 * include/, so they name their codes themselves (dd.h's DD_OK..DD_EMPI,
 * dd_dtype, summa.h's DD_LOOKAHEAD_MAX); the API is the one place that
 * sees both, and here each pair is held to one number, so that a status is
 * its code and a dd_type its dd_dtype by value, converted by a cast. */
#define API_SAME(pub, own) _Static_assert((int)(pub) == (int)(own), #pub " is " #own)
API_SAME(DD_SUCCESS, DD_OK);
API_SAME(DD_ERROR_USAGE, DD_EUSAGE);
API_SAME(DD_ERROR_MEMORY, DD_ENOMEM);
API_SAME(DD_ERROR_IO, DD_EIO);
API_SAME(DD_ERROR_COMM, DD_ECOMM);
API_SAME(DD_ERROR_CHECK_FAILED, DD_ECHECK);
API_SAME(DD_ERROR_UNSUPPORTED, DD_EUNSUP);
API_SAME(DD_ERROR_INTERNAL, DD_EFAIL);
API_SAME(DD_ERROR_MPI, DD_EMPI);
API_SAME(DD_FLOAT64, DD_F64);
API_SAME(DD_FLOAT32, DD_F32);
API_SAME(DD_COMPLEX128, DD_C128);
API_SAME(DD_COMPLEX64, DD_C64);
_Static_assert(sizeof(dd_complex128) == 16 && sizeof(dd_complex64) == 8,
               "the complex values are (re, im) pairs without padding");
API_SAME(DGEMM_DIST_LOOKAHEAD_MAX, DD_LOOKAHEAD_MAX);
#undef API_SAME

/* core's check verdict as the public one (the same fields). */
static inline dd_check_result api_check_result(const check_result *r)
{
    return (dd_check_result){r->residual, r->passed, r->why_not};
}

/* Memory a context keeps between calls (api_work.c): grown, never shrunk. */
typedef struct {
    void *p;
    size_t cap;
} api_buf;
enum {
    API_DEV_A,
    API_DEV_B,
    API_DEV_C,
    API_DEV_EXPORT_A, /* this rank's own panels as slices (summa.h) */
    API_DEV_EXPORT_B,
    API_DEV_SLOT,
    API_NDEV = API_DEV_SLOT + 2 * (DD_LOOKAHEAD_MAX + 1)
};
enum { API_HOST_RING, API_HOST_STAGE = 2, API_HOST_DOWN, API_NHOST = API_HOST_DOWN + 3 };

struct dd_context {
    MPI_Comm world, node, row, col; /* world: the caller's communicator, duplicated */
    int rank, size;
    dd_grid g;
    char backend[16], comm_name[16], kernel[64];
    int have_kernel;
    int64_t panel;
    int lookahead, threads;
    int slices; /* ozaki2's panels travel sliced (DD_OZAKI2_PANELS, agreed; choose_slices) */
    int tune;                /* dd_context_options.tune: plans choose what is left at 0 */
    int opt_P, opt_Q, opt_L; /* the options as given (0: auto where tune is set) */
    int comm_slots;          /* slots the open comm backend serves */
    struct dd_plan *plan;    /* the context's plan, if one is made */
    dd_engine eng;
    int eng_open;
    dd_comm comm;
    int comm_open;
    dd_dtype type;           /* the element type the engine was opened for */
    int warmed;              /* the comm backend's connections are made (summa_warm) */
    char why[192];           /* engine_select's account of the backend chosen */
    dd_err err;              /* the last call's message */
    api_buf dev[API_NDEV];   /* work memory: blocks A, B, C, then SUMMA's slots */
    api_buf host[API_NHOST]; /* pinned (CUDA): the ring's two slots, the exchange's staging,
                              * api_pipe.c's two download slots */
    rd_keep keep;            /* the redistribution's send and receive buffers */
    int copy_threads;        /* threads of the host copies (api_copy_runs) */
};

/* One operand of a call, as the caller holds it. */
typedef struct {
    const void *p;           /* the caller's local array (device memory for dd_gemm_device) */
    int64_t ld;              /* dd_gemm: its leading dimension */
    int64_t i, j;            /* dd_pgemm: the submatrix's 1-based offsets */
    const dd_matrix_desc *d; /* dd_pgemm: its descriptor */
    /* set by api_check_operands: */
    rd_layout lay; /* the caller's layout of the stored submatrix */
    int trans;     /* the stored matrix is the transpose of the operand */
    int direct;    /* the caller's layout is the work layout: one copy, pitch ld */
} api_operand;

/* One call's arguments and state (api_gemm.c). */
typedef struct {
    dd_context *ctx;
    dd_dtype t;
    char ta, tb; /* after validate: 'N', 'T', or 'C' (complex types only: conjugated) */
    int64_t M, N, K;
    double alpha, beta;       /* the real parts (the value, for the real types) */
    double alpha_im, beta_im; /* the imaginary parts: 0 for the real types */
    api_operand a, b, c;
    int desc;    /* 1: dd_pgemm (descriptors); 0: dd_gemm's 2-D block layout */
    int device;  /* dd_gemm_device: the arrays are in work (device) memory */
    int bad_arg; /* PBLAS's number of a bad argument (dgemm_dist.h), 0 if none */
    int check;
    int cyclic;           /* api_cyclic.c: the local arrays are the SUMMA blocks */
    int piped;            /* api_pipe.c: the call went through the host pipeline */
    int inplace[3];       /* dd_gemm_device: the caller's A, B, C are the SUMMA blocks */
    dd_panel *cyc_panels; /* ... and its panel list */
    dd_summa s;
    check_cterm cin;
    double sec, gemm;    /* this rank's multiply phase and local multiplies */
    double tm[8], tlast; /* DD_API_TIMING: seconds per step (api_tick) */
    check_result chk;
    int sample_failed;            /* api_sample.c found an operand not as the caller holds it */
    char sample_msg[DD_ERRLEN];   /* ... and which element */
} gemm_call;

/* BLAS's cases of the scalars, both parts of a complex one. */
static inline int api_alpha0(const gemm_call *g)
{
    return g->alpha == 0 && g->alpha_im == 0;
}
static inline int api_beta0(const gemm_call *g)
{
    return g->beta == 0 && g->beta_im == 0;
}
static inline int api_beta1(const gemm_call *g)
{
    return g->beta == 1 && g->beta_im == 0;
}
/* Real flops of one multiply: 2·M·N·K, 8·M·N·K for the complex types. */
static inline double api_flops(dd_dtype t, int64_t M, int64_t N, int64_t K)
{
    return (dd_dtype_complex(t) ? 8.0 : 2.0) * (double)M * (double)N * (double)K;
}

/* dd_pgemm's descriptors given (not NULL), before the same-argument
 * comparison, so that a NULL one is named as such (local; sets g->bad_arg). */
int api_check_given(gemm_call *g, dd_err *err);
/* The operands' checks (local: the caller agrees) and layouts; sets
 * g->bad_arg with the message.  After same-argument agreement. */
int api_check_operands(gemm_call *g, dd_err *err);
/* The numbers every rank must pass alike (the entry, sizes, scalars as
 * their bits, transposes, offsets, descriptors' global fields), each with
 * its name, into v (at most API_GLOBALS, the rest zeroed); returns how
 * many.  Exact: 64-bit integers, not doubles, so no two sizes or offsets
 * compare alike that differ. */
enum { API_GLOBALS = 64 };
enum { API_G_INT, API_G_REAL, API_G_CHAR, API_G_TRANS, API_G_ENTRY };
typedef struct {
    int64_t v;
    const char *name;
    int kind; /* API_G_*: how api_global_show writes a value */
} api_global;
int api_globals(const gemm_call *g, api_global *v);
/* Value v of global x as the user wrote it ("dd_sgemm", "'N', 'T'", "0.5"). */
void api_global_show(const api_global *x, int64_t v, char *buf, size_t len);
/* Whether a local array of `lines` lines ld elements apart, `len` elements
 * each, of es-byte elements, can exist: (lines - 1)·ld + len elements fit in
 * PTRDIFF_MAX bytes, so no address in it overflows.  1 when it is empty. */
int api_span_fits(int64_t lines, int64_t len, int64_t ld, size_t es);
/* The work layout (2-D block, row-major, contiguous) of op(A) (0), op(B)
 * (1) or C (2) on the context's grid. */
void api_work_layout(const gemm_call *g, int which, rd_layout *l);

/* api_sample.c: with the check, samples of the caller's A, B (alpha ≠ 0)
 * and C's input (beta ≠ 0) compared with the work blocks they went to,
 * before alpha and beta are applied.  Agreed: DD_ECHECK naming the first
 * element that differs. */
int api_sample_operands(gemm_call *g, dd_err *err);

/* The call: checked, multiplied, reported into info (may be NULL). */
dd_status api_gemm(gemm_call *g, dd_gemm_info *info);

/* An internal code (DD_OK, DD_E*) as a public status: the same number. */
dd_status api_status(int rc);
/* Close, then open the engine for type t (collective, agreed); the comm
 * backend is opened when a multiply first needs it (api_comm_ready). */
int api_open_backends(dd_context *ctx, dd_dtype t, dd_err *err);
/* The comm backend on the context's grid, serving at least `slots` panel
 * buffers in flight: kept when open and enough, else (re)opened.  Agreed. */
int api_comm_ready(dd_context *ctx, int slots, dd_err *err);
/* The context's grid made P×Q (communicators split again, the comm backend
 * closed) when it is another.  Collective, agreed. */
int api_regrid(dd_context *ctx, int P, int Q, dd_err *err);
/* Multiply type t from now on: the engine's kernel for it (retype), the
 * backends and kept memory left open (collective, agreed). */
int api_retype(dd_context *ctx, dd_dtype t, dd_err *err);

/* api_work.c: the context's kept memory (which: API_DEV_*, API_HOST_*),
 * at least `bytes`, grown when short (local: the caller agrees); all of it
 * freed (before the engine closes). */
int api_dev_get(dd_context *ctx, int which, size_t bytes, void **p, dd_err *err);
int api_host_get(dd_context *ctx, int which, size_t bytes, void **p, dd_err *err);
void api_work_free(dd_context *ctx);
/* Threads for a move of rows × cols elements (1 when small). */
int api_move_threads(const dd_context *ctx, int64_t rows, int64_t cols);
/* A ring slot's bytes: DD_RING_MIB (default 64): dd_gemm's staging and plans' streams. */
size_t api_ring_bytes(void);
/* Host copy threads: DD_API_THREADS, else the node's cores per rank (1..8). */
int api_copy_threads(MPI_Comm node);
/* n runs of `bytes`, dst + i·dstride ← src + i·sstride, over threads. */
void api_copy_runs(void *dst, size_t dstride, const void *src, size_t sstride, size_t bytes,
                   int64_t n, int threads);
/* DD_API_TIMING: the time since the last tick added to step `step`
 * (API_T_*; -1: only restart the clock); the call's line from rank 0. */
enum { API_T_ARGS, API_T_ALLOC, API_T_LOAD, API_T_SCALE = 5, API_T_MULT, API_T_STORE, API_NSTEPS };
void api_tick(gemm_call *g, int step);
void api_timing_print(const gemm_call *g);

/* api_pdevice.c: dd_pgemm_device's local arrays staged through pinned host
 * memory (the ones read; C always, copied back up by unstage when rc is
 * DD_OK or DD_ECHECK).  g->device is 0 between the two.  Agreed. */
typedef struct {
    const void *dev[3];
    void *host[3];
    int64_t n[3]; /* elements of each local array */
} api_dstage;
int api_device_stage(gemm_call *g, api_dstage *st, dd_err *err);
int api_device_unstage(gemm_call *g, api_dstage *st, int rc, dd_err *err);

/* api_cyclic.c: whether the operands' block-cyclic local arrays serve as
 * SUMMA's blocks as they are (after api_check_operands; the same on every
 * rank), and then the blocks' sizes and the panel list into g->s (after
 * summa_init; local, allocation only).  The lines move in api_stage.c. */
int api_cyclic_fits(const gemm_call *g);
int api_cyclic_shape(gemm_call *g, dd_err *err);

/* api_stage.c: lines [l0, l0+h) of a work block W (rows × cols, row-major)
 * from or to a contiguous host band: W's rows, or with turn its columns
 * (the band holding them as its rows, turned by the engine).  Enqueued
 * (the engine's wait_copies waits). */
int api_band_up(dd_engine *e, void *W, int64_t rows, int64_t cols, int turn, const void *band,
                int64_t l0, int64_t h, size_t es, dd_err *err);
int api_band_down(dd_engine *e, void *band, const void *W, int64_t rows, int64_t cols, int turn,
                  int64_t l0, int64_t h, size_t es, dd_err *err);
/* api_stage.c: a host operand into its work block (k: 0 A, 1 B, 2 C), and
 * C's work block back to the caller's host array.  Agreed. */
int api_load_host(gemm_call *g, int k, void *W, int64_t rows, int64_t cols, dd_err *err);
int api_store_host(gemm_call *g, dd_err *err);

/* api_stage.c: on one rank, operand o's stored elements as op(X)'s
 * strides: element (r, c) at *base + (r·rs + c·cs) elements; 1 when its
 * rows or columns are contiguous (else, or on several ranks, 0). */
int api_local_view(const gemm_call *g, const api_operand *o, const char **base, int64_t *rs,
                   int64_t *cs);

/* api_pipe.c: whether this call takes the host pipeline (one rank, host
 * arrays, no check, alpha ≠ 0, K > 0; a GPU, or DD_FAULT=host-pipe on the
 * CPU), and the call through it: uploads, multiplies and downloads in
 * flight together, C written band by band.  g->sec is its time.  Agreed. */
int api_pipe_fits(const gemm_call *g);
int api_pipe_gemm(gemm_call *g, dd_err *err);

#endif
