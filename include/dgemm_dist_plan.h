/* dgemm_dist_plan.h — plans: operands kept in the context's memory,
 * streamed in and out (part of the public C API; includes dgemm_dist.h).
 *
 * dd_gemm takes whole blocks from the caller's memory and gives C back in
 * one call.  A plan is for callers whose operands are not in memory in one
 * piece (read from files, made on the fly) or who multiply the same
 * operands many times: the library holds this rank's blocks of op(A),
 * op(B) and C (the 2-D block layout of dgemm_dist.h) in the memory its
 * backend computes in (GPU memory on CUDA); the caller streams them in and
 * out in bands of rows through a dd_stream, through two small pinned
 * buffers, so that reading band i overlaps moving band i-1; and it
 * multiplies as often as it likes.  The dgemm-dist program is built on
 * these calls (and the instrumentation of dgemm_dist_tool.h).
 *
 *   dd_plan_create     the sizes and settings (with dd_context_options.tune,
 *                      the grid, panel and lookahead the model predicts
 *                      fastest); memory checked, nothing allocated
 *   dd_plan_get_info   what was chosen, this rank's blocks, the memory
 *   dd_plan_allocate   the comm backend and work memory; connections warmed
 *   dd_plan_load       a block of op(A), op(B) or C's input, from a stream
 *   dd_plan_generate   ... or the project's reproducible random values
 *   dd_plan_prepare    alpha and beta applied; what the check needs kept
 *   dd_plan_multiply   C = alpha·op(A)·op(B) + beta·C_in, timed; again and
 *                      again (each pass starts from beta·C_in)
 *   dd_plan_check      the residual check of C (HPL's manner)
 *   dd_plan_store      a block streamed out
 *   dd_plan_read/write a sub-block of a block to or from host memory
 *   dd_plan_destroy
 * Every call taking a plan is collective over the context's communicator
 * and agreed (DD_ERROR_COMM excepted, as for dd_gemm), but dd_plan_get_info,
 * dd_plan_read, dd_plan_write, dd_plan_set_progress and dd_plan_destroy,
 * which are local.  The collective ones compare their arguments across
 * ranks (the operand, seed, trans, alpha, beta, check) and refuse a NULL
 * result pointer on every rank; the times of dd_plan_multiply may be NULL.
 * A context holds at most one plan at a time; dd_context_destroy destroys
 * it too (the plan pointer is then dead).  dd_gemm and friends may be
 * called on a context that holds a plan: each keeps its own work memory. */
#ifndef DGEMM_DIST_PLAN_H
#define DGEMM_DIST_PLAN_H

#include "dgemm_dist.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DD_OPERAND_A = 0, DD_OPERAND_B = 1, DD_OPERAND_C = 2 } dd_operand;

typedef struct dd_plan dd_plan;

typedef struct {
    int type;            /* DD_FLOAT64, DD_FLOAT32, DD_COMPLEX128 or DD_COMPLEX64 */
    int64_t M, N, K;     /* op(A) M×K, op(B) K×N, C M×N; each >= 0 */
    int read_c;          /* 1: C's input will be loaded (beta ≠ 0): the multiply adds to it */
    int passes;          /* multiplies that each start from the same beta·C_in (>= 1): with
                          * read_c and passes > 1, a copy of beta·C_in is kept in work memory */
    int transposed;      /* 1: some stream will have trans set (room to turn its bands) */
    int host_pass;       /* 1: dd_plan_host_pass (dgemm_dist_tool.h) will be called: host
                          * copies of the blocks; 0 for every other caller */
    uint64_t check_seed; /* the check's random vector (0: a fixed default) */
} dd_plan_params;

/* Sizes and settings; the memory each rank needs is checked against what
 * its device (or host, shared with the other ranks there) has free, and a
 * problem too large says which setting to change.  Nothing is allocated:
 * a dry run ends after dd_plan_get_info.  With tune set in the context's
 * options, a grid of 0×0 may be re-formed here (dd_context_grid says which
 * grid is in use), and stays so when the plan is then refused. */
dd_status dd_plan_create(dd_context *ctx, const dd_plan_params *params, dd_plan **plan);

typedef struct {
    int P, Q, p, q; /* the grid and this rank's place in it */
    int64_t panel;  /* SUMMA panel width */
    int lookahead;  /* panels in flight */
    int64_t panels; /* panels per multiply */
    /* This rank's blocks of op(A) (0), op(B) (1) and C (2): rows
     * [row0, row0 + rows) and columns [col0, col0 + cols) of the whole
     * op(A) (M×K), op(B) (K×N) and C (M×N). */
    int64_t row0[3], rows[3], col0[3], cols[3];
    const char *backend; /* "cuda", "cpu" */
    const char *comm;    /* the comm backend open on the context; "" when none yet */
    const char *kernel;  /* the local-multiply kernel */
    int keeps_c;         /* 1: beta·C_in is kept for every pass */
    size_t work_bytes;   /* work memory of this rank: blocks, panel slots, kept C, scratch */
} dd_plan_info;

/* Local; the strings live as long as the plan. */
dd_status dd_plan_get_info(const dd_plan *plan, dd_plan_info *info);

/* The comm backend (opened, or kept when the context has one that serves
 * the plan), work memory, the stream buffers, and one panel moved as the
 * multiply will move it so that connections are made before anything is
 * timed. */
dd_status dd_plan_allocate(dd_plan *plan);

/* A stream moves one block of the plan between the library and the
 * caller, in bands of rows of the stored sub-block it comes from or goes
 * to: `stored` rows of `width` elements, where the stored sub-block is the
 * block itself (rows × cols of dd_plan_info) or, with trans, its transpose
 * (cols × rows: a block of a dataset that holds Xᵀ).  fill (dd_plan_load)
 * writes stored rows [r, r+h) into band, h×width elements row-major and
 * contiguous; drain (dd_plan_store) takes them from band.  Every rank gets
 * the same number of calls, some with h = 0, so a stream may do
 * collective I/O in them; after a failure the remaining calls are still
 * made.  trans must be the same on every rank.  Return DD_SUCCESS, or a
 * status with one sentence in msg (len bytes): dd_plan_load and
 * dd_plan_store return it (agreed) with that message. */
typedef struct dd_stream dd_stream;
struct dd_stream {
    dd_status (*fill)(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len);
    dd_status (*drain)(const dd_stream *s, const void *band, int64_t r, int64_t h, char *msg,
                       size_t len);
    void *arg; /* the caller's */
    int trans; /* the stored sub-block is the block's transpose; turned on the way */
};

/* A block from a stream (fill), or to one (drain).  On a GPU the bands go
 * through two pinned buffers of DD_RING_MIB MiB (default 64) each.  which
 * and the stream's trans alike on every rank. */
dd_status dd_plan_load(dd_plan *plan, dd_operand which, const dd_stream *src);
dd_status dd_plan_store(dd_plan *plan, dd_operand which, const dd_stream *dst);

/* A block filled with the values dgemm-dist's generator gives the whole
 * matrix at its place (seeded, reproducible whatever the grid): op(A) is a
 * block of the generated M×K A, or with trans of the transpose of the
 * generated K×M A; likewise op(B) of B (K×N or, with trans, N×K) and C of
 * an M×N C.  Made where the data lives (on the GPU on CUDA).  which, seed
 * and trans alike on every rank. */
dd_status dd_plan_generate(dd_plan *plan, dd_operand which, uint64_t seed, int trans);

/* After the loads: A ← alpha·A (alpha = 0: A and B zeroed, as they were
 * not read), C ← beta·C_in when the plan reads C, in place and once (a
 * load or generate after it asks for it again; calling it twice applies
 * the scalars twice); with check, beta·C_in's part of the check is taken
 * now; the copy for later passes is made.  alpha, beta and check must be
 * the same on every rank (bit for bit), and alpha and beta finite. */
dd_status dd_plan_prepare(dd_plan *plan, double alpha, double beta, int check);
/* The same on a complex plan (DD_COMPLEX128, DD_COMPLEX64; dd_plan_prepare
 * gives it real alpha and beta): alpha and beta complex (c64: each part
 * rounded to float), and conj_a, conj_b 1 where op(A), op(B) is the
 * conjugate transpose ('C'): the blocks loaded (turned by a stream with
 * trans, or generated with trans) are conjugated here.  A real plan is
 * refused (DD_ERROR_USAGE).  Collective; every argument alike on every rank. */
dd_status dd_plan_prepare_complex(dd_plan *plan, dd_complex128 alpha, dd_complex128 beta,
                                  int conj_a, int conj_b, int check);

/* One multiply's times. */
typedef struct {
    double seconds;      /* this rank's multiply phase */
    double gemm_seconds; /* this rank's local multiplies within it */
    double slowest;      /* the slowest rank's seconds (the same on every rank) */
} dd_plan_times;

/* One distributed multiply; every pass after the first starts again from
 * beta·C_in (or zero).  alpha = 0 (dd_plan_prepare's) multiplies nothing. */
dd_status dd_plan_multiply(dd_plan *plan, dd_plan_times *times);

/* The check of C against alpha·op(A)·op(B)·x + beta·C_in·x for a random x
 * (an O(MN + MK + KN) pass, as HPL checks): the result, passed or not,
 * comes back with DD_SUCCESS; an error is something else. */
typedef struct {
    double residual;     /* scaled residual; NaN when not meaningful (why_not says) */
    int passed;          /* 1: finite and below 16 */
    const char *why_not; /* NULL, or why the residual means nothing (static) */
} dd_check_result;
dd_status dd_plan_check(dd_plan *plan, dd_check_result *result);
/* "||C x - A(B x)||_oo / (...) = 2.1e-02 ...... PASSED" (or FAILED, or not
 * meaningful and why) into buf (n bytes).  r NULL: a line saying FAILED
 * (no result); buf NULL or n 0: nothing is written. */
void dd_check_line(const dd_check_result *r, char *buf, size_t n);

/* rows × cols of block `which` from its element (i, j) to host memory
 * (row-major, leading dimension ld), or from host memory into it.  Local
 * and synchronous.  host NULL is refused unless rows or cols is 0. */
dd_status dd_plan_read(dd_plan *plan, dd_operand which, int64_t i, int64_t j, int64_t rows,
                       int64_t cols, void *host, int64_t ld);
dd_status dd_plan_write(dd_plan *plan, dd_operand which, int64_t i, int64_t j, int64_t rows,
                        int64_t cols, const void *host, int64_t ld);

/* Called after each panel's multiply is issued with the panels done and
 * their total, where the host sees panels finish (the CPU backend; a GPU's
 * panels are queued ahead, and this is never called).  NULL: none.  Local. */
dd_status dd_plan_set_progress(dd_plan *plan, void (*fn)(void *arg, int64_t done, int64_t total),
                               void *arg);

/* NULL is ignored.  The context stays open.  Local: it frees this rank's
 * memory only, so ranks may call it at different times. */
void dd_plan_destroy(dd_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
