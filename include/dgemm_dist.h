/* dgemm_dist.h — the public C API of dgemm-dist: distributed GEMM
 *
 *   C = alpha·op(A)·op(B) + beta·C,  op(A) M×K, op(B) K×N, C M×N,
 *   op(X) = X (trans 'N') or X^T (trans 'T'; 'C' = 'T' for real data)
 *
 * Four entries, the same operation:
 *   dd_gemm / dd_sgemm                 host pointers, the 2-D block layout below
 *   dd_gemm_device / dd_sgemm_device   the same on device pointers (CUDA backend)
 *   dd_pgemm / dd_psgemm               host pointers, any layout a dd_matrix_desc
 *                                      describes (ScaLAPACK's 2-D block-cyclic
 *                                      included), submatrices at 1-based offsets
 *                                      as PBLAS's pdgemm takes them
 *   dd_pgemm_device / dd_psgemm_device the same on device pointers
 * plans (dd_plan_*) for operands streamed in and out of the library's own
 * memory (files, generated data, many multiplies), and a separate library, libdgemm-dist-scalapack,
 * exports pdgemm_ and psgemm_ with ScaLAPACK's Fortran signature on top of dd_pgemm (see the end of
 * this header).
 *
 * What the library promises, whatever the arguments.  It never exits,
 * aborts or calls MPI_Abort: an MPI error on its communicators comes back
 * as a status (it sets MPI_ERRORS_RETURN on them), and dd_context_destroy
 * after MPI_Finalize returns.  It never hangs: every rank reaches the same
 * collectives whatever its own checks found, and one rank's refusal is
 * every rank's.  It writes nothing outside the caller's buffers as the
 * arguments describe them (C's block and ldc, sub(C) in C's local array, a
 * host buffer and its ld) and reads nothing outside A's and B's: every
 * bound is compared without overflow (offsets near 2^63 included), and a
 * leading dimension whose local array would span more than 2^63 bytes is
 * refused.  Every argument that must be alike on every rank is compared
 * across them before anything depends on it: the entry (dd_gemm against
 * dd_sgemm, ...), sizes, scalars (bit for bit; NaN is NaN, -0 is 0),
 * transposes (by meaning: 'n' is 'N'; 't', 'C', 'c' are 'T'), offsets and
 * descriptors' global fields, every dd_context_options field, a plan's
 * parameters and the arguments of its collective calls; a difference is
 * refused on every rank with one message naming the argument and both
 * values.  A NULL pointer is refused (DD_ERROR_USAGE) wherever this header
 * does not say that NULL is allowed.  Outside the promises: DD_ERROR_COMM
 * (below); a context or plan pointer that is NULL or stale on some ranks
 * only (there is then no communicator to agree on: pass NULL on all ranks
 * or none); buffers smaller than their arguments say.  Each promise is
 * tested as stated by tests/api/test_bounds.c, tests/api/test_agree.c,
 * tests/api/test_null.c and tests/api/test_finalize.c.
 *
 * The 2-D block layout.  The ranks of the context's communicator form a P×Q
 * process grid; rank r sits at row p = r / Q, column q = r % Q.  A length n
 * is cut into `parts` contiguous blocks differing by at most one element
 * (the first n % parts blocks get one more): dd_block_range() says which.
 * A stored R×S matrix X is held by rank (p,q) as its block
 *   rows block(R,P,p) × cols block(S,Q,q), row-major, leading dimension
 *   ldx >= max(1, width of that block) (elements between rows).
 * The stored matrices are A (M×K, or K×M when transa is 'T'), B (K×N, or
 * N×K when transb is 'T') and C (M×N).  With 'N' on both, rank (p,q) holds
 *   op(A): rows block(M,P,p) × cols block(K,Q,q)   (lda >= Kq)
 *   op(B): rows block(K,P,p) × cols block(N,Q,q)   (ldb >= Nq)
 *   C    : rows block(M,P,p) × cols block(N,Q,q)   (ldc >= Nq)
 * which is the layout the multiply itself works in and the dgemm-dist
 * program uses: such operands go to work memory with one copy each.  A
 * transposed operand (stored A K×M: rows block(K,P,p) × cols block(M,Q,q),
 * lda >= that width) is redistributed among the ranks first (one
 * all-to-all exchange; see dd_pgemm).  A pointer may be NULL only where
 * its block is empty (or not read: A and B when alpha = 0, C's input when
 * beta = 0 is still written).
 *
 * Collectives.  dd_context_create, dd_context_destroy (before
 * MPI_Finalize), the multiplies and the plan calls marked so below are
 * collective over the context's communicator: every rank calls them, with
 * the same M, N, K, alpha, beta, transa, transb (and, for dd_pgemm, the
 * same offsets and global descriptor fields; the promises above say what
 * happens when they differ).  Errors are agreed: when any rank fails,
 * every rank returns the same code, and dd_context_last_error() gives the
 * same message on every rank (the lowest failing rank's).  The one
 * exception to agreement is DD_ERROR_COMM: a broadcast broke mid-multiply,
 * the peers may be left in a collective, and the caller should MPI_Abort.
 *
 * Threads: a context is used by one thread at a time.  MPI must be
 * initialized (MPI_Init or MPI_Init_thread) before dd_context_create and
 * finalized only after dd_context_destroy. */
#ifndef DGEMM_DIST_H
#define DGEMM_DIST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "dgemm_dist_telemetry.h"

/* The library's version: the project's (CMake project(VERSION)); the build
 * refuses to configure when they differ. */
#define DGEMM_DIST_VERSION_MAJOR 0
#define DGEMM_DIST_VERSION_MINOR 1
#define DGEMM_DIST_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* Most panels in flight (dd_context_options.lookahead). */
#define DGEMM_DIST_LOOKAHEAD_MAX 16

/* Return codes.  DD_SUCCESS is 0; every error is positive. */
typedef enum {
    DD_SUCCESS = 0,
    DD_ERROR_USAGE = 1,        /* bad argument: sizes, leading dimensions, options, NULL */
    DD_ERROR_MEMORY = 2,       /* out of host or device memory */
    DD_ERROR_IO = 3,           /* I/O (not used by dd_gemm: no files) */
    DD_ERROR_COMM = 4,         /* communication broke mid-multiply: not agreed, MPI_Abort */
    DD_ERROR_CHECK_FAILED = 5, /* info->check was set and the check FAILED (C is written) */
    DD_ERROR_UNSUPPORTED = 6, /* not supported here: a backend absent, a device entry without one */
    DD_ERROR_INTERNAL = 7,    /* anything else (an MPI call failed, ...) */
    DD_ERROR_MPI = 8          /* MPI not initialized, or the communicator unusable */
} dd_status;

/* "success", "usage error", ...: a static string, never NULL (for any value). */
const char *dd_status_string(dd_status s);

/* The version of the library linked at run time; any pointer may be NULL. */
void dd_version(int *major, int *minor, int *patch);
/* The CPU BLAS the library was linked with ("OpenBLAS 0.3.21 ..."): the
 * CPU backend's, reported on any backend. */
const char *dd_blas_version(void);

typedef struct dd_context dd_context;

/* Options of a context; dd_context_options_init() fills the defaults.  The
 * strings are copied at dd_context_create. */
typedef struct {
    const char *backend; /* "auto" (default: CUDA when every rank has a GPU), "cuda", "cpu" */
    const char *comm;   /* "auto" (default), "nccl", "ce" (copy engines, GPUs of one node), "mpi" */
    const char *kernel; /* local-multiply kernel name; NULL = the backend's default */
    int64_t panel;      /* SUMMA panel width; 0 = the backend's default */
    int lookahead;      /* panels in flight, 1..16; 0 = default (1) */
    int P, Q;           /* process grid; 0, 0 = the most nearly square (P <= Q) */
    int threads;        /* CPU backend: BLAS threads per rank; 0 = default */
    int type;           /* DD_FLOAT64 (default) or DD_FLOAT32: the kernel first chosen for */
    int tune;           /* 1: grid, panel and lookahead left at 0 are chosen per plan by the
                         * performance model (dd_plan_create); 0: the defaults above */
} dd_context_options;

void dd_context_options_init(dd_context_options *opts); /* NULL is ignored */

/* Collective over comm (which is duplicated: the caller may free its own).
 * opts NULL = defaults; in opts, backend and comm NULL = "auto", kernel
 * NULL = the backend's default.  Every option must be the same on every
 * rank (refused, naming it, when one differs).  On success *ctx is the
 * context; on failure *ctx is NULL, the same code is returned on every
 * rank, and errbuf (errlen bytes, may be NULL) holds the message.  ctx NULL
 * (on any rank) is refused on every rank. */
dd_status dd_context_create(MPI_Comm comm, const dd_context_options *opts, dd_context **ctx,
                            char *errbuf, size_t errlen);
/* Collective; NULL is ignored.  After MPI_Finalize (a C++ destructor, an
 * atexit handler) it is local and makes no MPI call: it frees the memory
 * that needs no MPI (work memory, the engine, the plan) and leaves the MPI
 * objects, which MPI_Finalize has already ended. */
void dd_context_destroy(dd_context *ctx);

/* The message of the last failed call on ctx ("" after a success); valid
 * until the next call on ctx.  ctx NULL: a static "no context (NULL)". */
const char *dd_context_last_error(const dd_context *ctx);

/* The grid P×Q and this rank's coordinates (p, q); any pointer may be NULL.
 * ctx NULL: DD_ERROR_USAGE.  The backend actually chosen ("cpu", "cuda")
 * with dd_context_backend() ("" for NULL). */
dd_status dd_context_grid(const dd_context *ctx, int *P, int *Q, int *p, int *q);
const char *dd_context_backend(const dd_context *ctx);

/* Block `index` of a length n cut into `parts`: its first element *start
 * and length *len (0 when parts > n); start or len may be NULL.  n >= 0,
 * parts >= 1, 0 <= index < parts, else DD_ERROR_USAGE.  Local (not
 * collective). */
dd_status dd_block_range(int64_t n, int parts, int index, int64_t *start, int64_t *len);

/* What one multiply did.  The caller sets `check`; the rest is output. */
typedef struct {
    int check; /* in: 1 = verify C afterwards (an O(MN + MK + KN) check), and samples of
                * A, B and C's input against the blocks they became */
    double multiply_seconds;     /* the distributed multiply, slowest rank */
    double exposed_comm_seconds; /* multiply time not spent in local multiplies, mean of ranks */
    double tflops;         /* 2·M·N·K / multiply_seconds / 1e12 (0 when nothing multiplied) */
    double check_residual; /* scaled residual (HPL style); NaN if not meaningful or unchecked */
    int check_passed;      /* 1: residual finite and < 16; 0: FAILED or unchecked */
    /* On DD_ERROR_USAGE from dd_pgemm/dd_psgemm for one argument: which, as
     * PBLAS numbers pdgemm's (TRANSA 1, TRANSB 2, M 3, N 4, K 5, ALPHA 6,
     * A 7, IA 8, JA 9, DESCA 10, B 11, IB 12, JB 13, DESCB 14, BETA 15, C 16,
     * IC 17, JC 18, DESCC 19) and, for a descriptor's field, 100·position +
     * the field's entry in PBLAS's 11-entry descriptor, where a 9-entry
     * one's MB_ and NB_ are first checked as IMB_ and INB_ (layout DTYPE_ 1,
     * grid and order CTXT_ 2, m M_ 3, n N_ 4, mb 5, nb 6, rsrc RSRC_ 9, csrc
     * CSRC_ 10, lld LLD_ 11): 1011 = DESCA's LLD_.  dd_gemm's lda, ldb and
     * ldc are their operands' LLD_ (1011, 1411, 1911).  0 otherwise. */
    int bad_argument;
} dd_gemm_info;

/* C ← alpha·op(A)·op(B) + beta·C on this rank's blocks (layout above):
 * transa, transb 'N', 'T' or 'C' (either case; 'C' is 'T', so ranks may
 * spell one operation differently).
 * BLAS rules: beta = 0: C is not read (NaN in it does not survive);
 * alpha = 0: A and B are not read and nothing is multiplied.  A and B are
 * never written.  info may be NULL.  With info->check, a FAILED check
 * returns DD_ERROR_CHECK_FAILED (C holds the computed result).  Collective;
 * errors agreed (DD_ERROR_COMM excepted, see above). */
dd_status dd_gemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                  double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                  double beta, double *C, int64_t ldc, dd_gemm_info *info);
/* The same in single precision.  A context serves both; switching the
 * element type between calls reopens the backend (collective, costly). */
dd_status dd_sgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float beta, float *C, int64_t ldc, dd_gemm_info *info);

/* The same on device pointers: A, B and C are this rank's blocks (the 2-D
 * block layout above, leading dimensions in elements) in the memory the
 * context's backend computes in: GPU memory of the rank's device on the
 * CUDA backend (cudaMalloc'd, or any pointer CUDA can copy device to
 * device), host memory on the CPU backend.  Untransposed blocks go device
 * to device (one copy when ld equals the block's width, one copy per row
 * otherwise); a transposed operand is brought to the host, redistributed
 * and copied up.  C is written on the device.  Collective; errors agreed. */
dd_status dd_gemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                         double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                         double beta, double *C, int64_t ldc, dd_gemm_info *info);
dd_status dd_sgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                          int64_t ldb, float beta, float *C, int64_t ldc, dd_gemm_info *info);

/* ---- Distributed-matrix descriptors and dd_pgemm ----------------------------------
 *
 * A dd_matrix_desc says how a whole (global) m×n matrix is spread over a
 * process grid of nprow×npcol ranks of the context's communicator.
 * Grid ranks: order 'R' (row-major, as BLACS gridinit 'R'): the process at
 * grid row pr, column pc is rank pr·npcol + pc; 'C' (column-major, BLACS
 * 'C'): rank pc·nprow + pr.  nprow·npcol must equal the communicator's size.
 *
 * DD_LAYOUT_BLOCK_CYCLIC — ScaLAPACK's 2-D block-cyclic layout, the fields
 * those of a ScaLAPACK descriptor (DESC(M_), ...): rows are cut into
 * blocks of mb, dealt to grid rows cyclically starting at grid row rsrc
 * (block b on grid row (rsrc + b) mod nprow), columns likewise (nb, csrc,
 * npcol).  Each rank stores its elements column-major in a local array
 * with leading dimension lld >= max(1, local rows), local rows =
 * dd_numroc(m, mb, myrow, rsrc, nprow), local columns = dd_numroc(n, nb,
 * mycol, csrc, npcol): global element (i, j) (0-based) of block row
 * bi = i / mb lies at local row (bi / nprow)·mb + i % mb, and likewise for
 * columns.  Any block size >= 1.
 *
 * DD_LAYOUT_BLOCK — the project's 2-D block layout (see the top of this
 * header): the grid's rank (pr, pc) holds rows block(m, nprow, pr) ×
 * columns block(n, npcol, pc), row-major, ld = lld >= max(1, that width);
 * mb, nb, rsrc, csrc are ignored.  nprow = npcol = 0 means the context's
 * grid (then order must be 'R').
 *
 * dd_desc_block_cyclic and dd_desc_block fill a descriptor and check it
 * (locally: DD_ERROR_USAGE; d NULL, or an lld whose largest local array
 * could not be addressed, too).  dd_pgemm checks it again on each rank. */
typedef enum { DD_LAYOUT_BLOCK = 1, DD_LAYOUT_BLOCK_CYCLIC = 2 } dd_layout;

typedef struct {
    int layout;       /* DD_LAYOUT_BLOCK_CYCLIC or DD_LAYOUT_BLOCK (ScaLAPACK's DTYPE_) */
    int64_t m, n;     /* M_, N_: the whole matrix */
    int64_t mb, nb;   /* MB_, NB_: block sizes (block-cyclic), >= 1 */
    int rsrc, csrc;   /* RSRC_, CSRC_: grid row and column of the first block */
    int64_t lld;      /* LLD_: leading dimension of the local array */
    int nprow, npcol; /* the process grid (BLACS's CTXT_ stands for it) */
    char order;       /* 'R' or 'C': grid rank order, as above */
} dd_matrix_desc;

dd_status dd_desc_block_cyclic(dd_matrix_desc *d, int64_t m, int64_t n, int64_t mb, int64_t nb,
                               int rsrc, int csrc, int nprow, int npcol, char order, int64_t lld);
dd_status dd_desc_block(dd_matrix_desc *d, int64_t m, int64_t n, int nprow, int npcol, int64_t ld);
/* ScaLAPACK's NUMROC: how many of n elements, cut into blocks of nb dealt
 * cyclically over nprocs starting at isrc, process iproc holds (0 for bad
 * arguments).  Local. */
int64_t dd_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs);

/* sub(C) ← alpha·op(sub(A))·op(sub(B)) + beta·sub(C), PBLAS's pdgemm on
 * dd's descriptors: sub(A) is the submatrix of the matrix descA describes
 * whose top-left element is (ia, ja), 1-based, of M×K (transa 'N') or K×M
 * ('T'/'C'); sub(B) at (ib, jb) K×N or N×K; sub(C) at (ic, jc) M×N.  A, B
 * and C are this rank's local arrays (host memory).  Only sub(C)'s
 * elements are written; the rest of C's local array is untouched.
 * How: sub(A), sub(B) and sub(C) (the last only when beta ≠ 0) are
 * redistributed into the context's 2-D block layout of op(A), op(B) and C
 * (one all-to-all exchange each, MPI_Alltoallv, in rounds of at most 2^31-1
 * elements per pair when larger), multiplied there, and C's result is sent
 * back; operands already in that layout (DD_LAYOUT_BLOCK on the context's
 * grid, offsets 1, 'N') are copied directly.  Extra host memory: about one
 * local array of each operand, twice.  BLAS rules for alpha = 0 and beta = 0
 * as dd_gemm.  Arguments are checked as PBLAS checks them (sizes >= 0,
 * offsets >= 1, submatrices inside their matrices, descriptor fields,
 * lld >= max(1, local rows)); info->bad_argument says which.  Collective;
 * errors agreed. */
dd_status dd_pgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   double alpha, const double *A, int64_t ia, int64_t ja,
                   const dd_matrix_desc *descA, const double *B, int64_t ib, int64_t jb,
                   const dd_matrix_desc *descB, double beta, double *C, int64_t ic, int64_t jc,
                   const dd_matrix_desc *descC, dd_gemm_info *info);
dd_status dd_psgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, float beta, float *C, int64_t ic, int64_t jc,
                    const dd_matrix_desc *descC, dd_gemm_info *info);

/* dd_pgemm and dd_psgemm on local arrays in device memory (the context's
 * backend's: GPU memory on CUDA, host memory on the CPU backend, where they
 * are dd_pgemm itself).  On a GPU each local array the call reads (A and B
 * unless alpha = 0; C always, whose elements outside sub(C) must come back
 * unchanged) is copied whole to pinned host memory, dd_pgemm's host path
 * runs on the copies, and C's copy goes back up: device memory in and out,
 * at the cost of those copies.  Arguments, rules and errors as dd_pgemm. */
dd_status dd_pgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, double alpha, const double *A, int64_t ia, int64_t ja,
                          const dd_matrix_desc *descA, const double *B, int64_t ib, int64_t jb,
                          const dd_matrix_desc *descB, double beta, double *C, int64_t ic,
                          int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info);
dd_status dd_psgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t ia, int64_t ja,
                           const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                           const dd_matrix_desc *descB, float beta, float *C, int64_t ic,
                           int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info);

/* ---- Plans: operands kept in the context's memory, streamed in and out -------------
 *
 * dd_gemm takes whole blocks from the caller's memory and gives C back in
 * one call.  A plan is for callers whose operands are not in memory in one
 * piece (read from files, made on the fly) or who multiply the same
 * operands many times: the library holds this rank's blocks of op(A),
 * op(B) and C (the 2-D block layout at the top of this header) in the
 * memory its backend computes in (GPU memory on CUDA); the caller streams
 * them in and out in bands of rows through a dd_stream, through two small
 * pinned buffers, so that reading band i overlaps moving band i-1; and it
 * multiplies as often as it likes.  The dgemm-dist program is built on
 * these calls and nothing else.
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
 *   dd_plan_panel_seconds  the last multiply's time per panel on this rank
 *   dd_plan_check      the residual check of C (HPL's manner)
 *   dd_plan_store      a block streamed out
 *   dd_plan_read/write a sub-block of a block to or from host memory
 *   dd_plan_destroy
 * Every call taking a plan is collective over the context's communicator
 * and agreed (DD_ERROR_COMM excepted, as for dd_gemm), but dd_plan_get_info,
 * dd_plan_read, dd_plan_write, dd_plan_set_progress, dd_plan_panel_seconds,
 * the telemetry calls and dd_plan_destroy, which are local.  The collective
 * ones compare their arguments across ranks (the operand, seed, trans,
 * alpha, beta, check) and refuse a NULL result pointer on every rank; the
 * times of dd_plan_multiply and dd_plan_host_pass may be NULL.  A context holds at most one plan at
 * a time; dd_context_destroy destroys it too (the plan pointer is then dead). dd_gemm and friends
 * may be called on a context that holds a plan: each keeps its own work memory. */
typedef enum { DD_FLOAT64 = 0, DD_FLOAT32 = 1 } dd_type;
typedef enum { DD_OPERAND_A = 0, DD_OPERAND_B = 1, DD_OPERAND_C = 2 } dd_operand;

typedef struct dd_plan dd_plan;

typedef struct {
    int type;            /* DD_FLOAT64 or DD_FLOAT32 */
    int64_t M, N, K;     /* op(A) M×K, op(B) K×N, C M×N; each >= 0 */
    int read_c;          /* 1: C's input will be loaded (beta ≠ 0): the multiply adds to it */
    int passes;          /* multiplies that each start from the same beta·C_in (>= 1): with
                          * read_c and passes > 1, a copy of beta·C_in is kept in work memory */
    int transposed;      /* 1: some stream will have trans set (room to turn its bands) */
    int host_pass;       /* 1: dd_plan_host_pass will be called (host copies of the blocks) */
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
    const char *backend;        /* "cuda", "cpu" */
    const char *backend_why;    /* why that backend (auto's choice) */
    const char *comm;           /* the comm backend open on the context; "" when none yet */
    const char *comm_detail;    /* its transport, where it says ("" otherwise) */
    const char *kernel;         /* the local-multiply kernel */
    const char *device;         /* "NVIDIA H200", "CPU (OpenBLAS ..., 2 threads)" */
    const char *versions;       /* "CUDA 13.0, cuBLAS 13.1", ... */
    int device_index;           /* GPU ordinal, -1 without one */
    int host_memory;            /* 1: work memory is host memory (the CPU backend) */
    int keeps_c;                /* 1: beta·C_in is kept for every pass */
    size_t work_bytes;          /* work memory of this rank: blocks, panel slots, kept C, scratch */
    size_t slot_bytes;          /* of which the panel slots */
    size_t host_bytes;          /* host memory of this rank: blocks on the CPU, stream buffers */
    const char *tune_line;      /* what the model chose and why, or why no model */
    const char *model_line;     /* the model's prediction of the settings in use; NULL: none */
    const char *model_json;     /* the same as a JSON object; NULL: none */
    double allocate_seconds[3]; /* dd_plan_allocate on this rank: comm, memory, warm */
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
 * made.  trans must be the same on every rank.  Return DD_SUCCESS, or a status with one sentence in
 * msg (len bytes): dd_plan_load and dd_plan_store return it (agreed) with that message. */
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

/* One multiply's times. */
typedef struct {
    double seconds;      /* this rank's multiply phase */
    double gemm_seconds; /* this rank's local multiplies within it */
    double slowest;      /* the slowest rank's seconds (the same on every rank) */
} dd_plan_times;

/* One distributed multiply; every pass after the first starts again from
 * beta·C_in (or zero).  alpha = 0 (dd_plan_prepare's) multiplies nothing. */
dd_status dd_plan_multiply(dd_plan *plan, dd_plan_times *times);

/* What a caller holding its data in host memory waits for: op(A) and op(B)
 * streamed up from host copies panel by panel behind the multiply, C down
 * after it (the plan's host_pass; GPU backends: on the CPU backend there is
 * no such pass and this returns DD_ERROR_UNSUPPORTED).  The blocks are
 * zeroed before, so what the pass misses, the check finds. */
dd_status dd_plan_host_pass(dd_plan *plan, dd_plan_times *times);

/* This rank's time in each panel's local multiply during the last
 * dd_plan_multiply or dd_plan_host_pass, in panel order (K's panels as the
 * multiply takes them): the number of panels into *count, the first n times
 * (seconds) into seconds (NULL with n = 0 asks for the count alone).  0 for
 * a panel not multiplied: before the first multiply, with alpha = 0, or
 * where this rank's block of C is empty.  Local: no other rank takes part,
 * so ranks may call it or not. */
dd_status dd_plan_panel_seconds(dd_plan *plan, double *seconds, int64_t n, int64_t *count);

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

/* The GPU's clock, power and energy between start and stop
 * (dgemm_dist_telemetry.h); *t says "not available" on the CPU backend or
 * without NVML.  Local. */
dd_status dd_plan_telemetry_start(dd_plan *plan);
dd_status dd_plan_telemetry_stop(dd_plan *plan, dd_telemetry *t);

/* NULL is ignored.  The context stays open.  Local: it frees this rank's
 * memory only, so ranks may call it at different times. */
void dd_plan_destroy(dd_plan *plan);

/* For programs that own their process: after the last dd_context_destroy
 * and MPI_Finalize, hand the GPU back at once (CUDA's primary context), so
 * that its cost is not paid at exit.  A library linked into someone else's
 * program never calls this. */
void dd_release_devices(void);

/* ---- libdgemm-dist-scalapack: pdgemm_ and psgemm_ ---------------------------------
 *
 * A separate library (-ldgemm-dist-scalapack, CMake target
 * dgemm-dist::scalapack, pkg-config dgemm-dist-scalapack) exports
 *   void pdgemm_(const char *transa, const char *transb, const int *m,
 *                const int *n, const int *k, const double *alpha,
 *                const double *a, const int *ia, const int *ja,
 *                const int *desca, const double *b, const int *ib,
 *                const int *jb, const int *descb, const double *beta,
 *                double *c, const int *ic, const int *jc, const int *descc);
 * and psgemm_ (float), ScaLAPACK's Fortran ABI.  Link it before ScaLAPACK
 * (… -ldgemm-dist-scalapack -lscalapack-openmpi …) and a ScaLAPACK program's
 * pdgemm/psgemm calls run through dd_pgemm, on the GPUs where the ranks
 * have them (host data in and out, as ScaLAPACK's contract is).  It needs a
 * BLACS (ScaLAPACK's; the symbols are taken weakly, so the library itself
 * does not depend on ScaLAPACK): the grid comes from Cblacs_gridinfo of
 * DESCA's CTXT and the communicator from the BLACS context (Cblacs_get
 * with what = 10, Cblacs2sys_handle), whose ranks are the grid's in
 * row-major order.  One dd_context per communicator (same ranks in the
 * same order) is kept and freed at MPI_Finalize.  Environment:
 * DD_SCALAPACK_BACKEND (auto, cuda, cpu; default auto),
 * DD_SCALAPACK_VERBOSE=1 (grid process (0,0) says on stderr which calls it
 * serves).  A bad argument is reported as PBLAS does (PXERBLA with
 * 100·position + field, and one line from process (0,0) saying what to
 * change) and the call returns without touching C; unlike ScaLAPACK it
 * does not abort.  A call it cannot serve (descriptor type other than 1,
 * no BLACS, contexts of A, B, C differing, a backend failing to open) goes
 * to the real ScaLAPACK routine when one is linked after it (found with
 * dlsym(RTLD_NEXT)), with one note on stderr; else it is reported as an
 * error the same way.  dd_scalapack_calls() (declared in that library's
 * use only, see below) counts the calls served. */
/* In libdgemm-dist-scalapack: the number of pdgemm_/psgemm_ calls this
 * process has served itself (not handed to ScaLAPACK). */
long dd_scalapack_calls(void);

#ifdef __cplusplus
}
#endif

#endif
