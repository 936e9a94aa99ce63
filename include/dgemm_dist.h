/* dgemm_dist.h — the public C API of dgemm-dist: distributed GEMM
 *
 *   C = alpha·op(A)·op(B) + beta·C,  op(A) M×K, op(B) K×N, C M×N,
 *   op(X) = X (trans 'N'), X^T ('T'), or for complex data X^H, the
 *   conjugate transpose ('C'; 'C' = 'T' for real data)
 *
 * Four entries, the same operation: dd_gemm/dd_sgemm (host pointers, the
 * 2-D block layout below), dd_gemm_device/dd_sgemm_device (the same on
 * device pointers), dd_pgemm/dd_psgemm (host pointers, any layout a
 * dd_matrix_desc describes, ScaLAPACK's block-cyclic included, submatrices
 * at 1-based offsets as PBLAS takes them), dd_pgemm_device/dd_psgemm_device.
 * Each comes in four element types: double (dd_gemm), float (dd_sgemm),
 * complex double (dd_zgemm, dd_pzgemm, ...) and complex float (dd_cgemm,
 * dd_pcgemm, ...); complex matrices hold (re, im) pairs (dd_complex128,
 * dd_complex64) and alpha, beta are complex.
 * Other headers: dgemm_dist_plan.h (plans: operands streamed in and out of
 * the library's memory, many multiplies), dgemm_dist_scalapack.h (the
 * pdgemm_/psgemm_ drop-in, its own library), dgemm_dist_tool.h (the
 * dgemm-dist program's instrumentation: not a stable interface).
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
 * transposes (by meaning: 'n' is 'N', 't' is 'T'; 'C', 'c' are 'T' for real
 * data and the conjugate transpose for complex data), offsets and
 * descriptors' global fields, every dd_context_options field, a plan's
 * parameters and the arguments of its collective calls; a difference is
 * refused on every rank with one message naming the argument and both
 * values.  A NULL pointer is refused (DD_ERROR_USAGE) wherever the headers
 * do not say that NULL is allowed.  Outside the promises: DD_ERROR_COMM
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
 * which is the layout the multiply itself works in: such operands go to
 * work memory with one copy each, or none: dd_gemm_device multiplies in
 * the caller's arrays where ld equals the block's width (A and B only
 * when alpha = 1: they are never written).  A transposed operand (stored A K×M:
 * rows block(K,P,p) × cols block(M,Q,q), lda >= that width) is
 * redistributed among the ranks first (one all-to-all exchange; see
 * dd_pgemm).  A pointer may be NULL only where its block is empty (or not
 * read: A and B when alpha = 0, C's input when beta = 0 is still written).
 *
 * Collectives.  dd_context_create, dd_context_destroy (before
 * MPI_Finalize) and the multiplies are collective over the context's
 * communicator: every rank calls them, with the same M, N, K, alpha, beta,
 * transa, transb (and, for dd_pgemm, the same offsets and global
 * descriptor fields; the promises above say what happens when they
 * differ).  Errors are agreed: when any rank fails, every rank returns the
 * same code, and dd_context_last_error() gives the same message on every
 * rank (the lowest failing rank's).  The one exception to agreement is
 * DD_ERROR_COMM: a broadcast broke mid-multiply, the peers may be left in
 * a collective, and the caller should MPI_Abort.
 *
 * Threads: a context is used by one thread at a time.  MPI must be
 * initialized (MPI_Init or MPI_Init_thread) before dd_context_create and
 * finalized only after dd_context_destroy. */
#ifndef DGEMM_DIST_H
#define DGEMM_DIST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* DGEMM_DIST_VERSION_MAJOR, _MINOR, _PATCH and DGEMM_DIST_VERSION_STRING:
 * the project's version (CMake project(VERSION)), generated at build time. */
#include "dgemm_dist_version.h"

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

/* The version of the library linked at run time (DGEMM_DIST_VERSION_*
 * say the one compiled against); any pointer may be NULL. */
void dd_version(int *major, int *minor, int *patch);
/* The CPU BLAS the library was linked with ("OpenBLAS 0.3.21 ..."): the
 * CPU backend's, reported on any backend. */
const char *dd_blas_version(void);

/* Element types (dd_context_options.type, dd_plan_params.type). */
typedef enum { DD_FLOAT64 = 0, DD_FLOAT32 = 1, DD_COMPLEX128 = 2, DD_COMPLEX64 = 3 } dd_type;
/* Complex values: (real, imaginary) pairs, the layout of C99's double
 * _Complex / float _Complex, C++'s std::complex, numpy's complex128 /
 * complex64 and Fortran's COMPLEX*16 / COMPLEX*8. */
typedef struct {
    double re, im;
} dd_complex128;
typedef struct {
    float re, im;
} dd_complex64;

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
    int type;           /* DD_FLOAT64 (default), DD_FLOAT32, DD_COMPLEX128 or DD_COMPLEX64:
                         * the kernel first chosen for */
    int tune;           /* 1: grid, panel and lookahead left at 0 are chosen per plan by the
                         * performance model (dd_plan_create, dgemm_dist_plan.h); 0: the
                         * defaults above */
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
    double tflops;         /* 2·M·N·K (complex: 8·M·N·K) / multiply_seconds / 1e12 (0 when
                            * nothing multiplied) */
    double check_residual; /* scaled residual (HPL style); NaN if not meaningful or unchecked */
    int check_passed;      /* 1: residual finite and < 16; 0: FAILED or unchecked */
    /* On DD_ERROR_USAGE for one argument: which, as PBLAS numbers pdgemm's
     * (TRANSA 1 .. ALPHA 6, A 7, IA 8, JA 9, DESCA 10, B 11 .. DESCB 14,
     * BETA 15, C 16 .. DESCC 19) and, for a descriptor's field, 100·position
     * + its entry in PBLAS's 11-entry descriptor (a 9-entry one's MB_, NB_
     * first checked as IMB_, INB_): layout DTYPE_ 1, grid and order CTXT_ 2,
     * m 3, n 4, mb 5, nb 6, rsrc 9, csrc 10, lld 11: 1011 = DESCA's LLD_.
     * dd_gemm's lda, ldb, ldc are 1011, 1411, 1911.  0 otherwise. */
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

/* The same in complex double and complex float: transa, transb 'N', 'T' or
 * 'C' (the conjugate transpose), alpha and beta complex (BLAS's rules for
 * alpha = 0 and beta = 0 take both parts 0).  info->tflops counts 8 real
 * flops per complex multiply-add. */
dd_status dd_zgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   dd_complex128 alpha, const dd_complex128 *A, int64_t lda,
                   const dd_complex128 *B, int64_t ldb, dd_complex128 beta, dd_complex128 *C,
                   int64_t ldc, dd_gemm_info *info);
dd_status dd_cgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   dd_complex64 alpha, const dd_complex64 *A, int64_t lda, const dd_complex64 *B,
                   int64_t ldb, dd_complex64 beta, dd_complex64 *C, int64_t ldc,
                   dd_gemm_info *info);

/* The same on device pointers: A, B and C are this rank's blocks (the 2-D
 * block layout above, leading dimensions in elements) in the memory the
 * context's backend computes in: GPU memory of the rank's device on the
 * CUDA backend (any pointer CUDA can copy device to device), host memory
 * on the CPU backend.  Untransposed blocks go device to device; a
 * transposed operand is brought to the host, redistributed and copied up.
 * C is written on the device.  Collective; errors agreed. */
dd_status dd_gemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                         double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                         double beta, double *C, int64_t ldc, dd_gemm_info *info);
dd_status dd_sgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                          int64_t ldb, float beta, float *C, int64_t ldc, dd_gemm_info *info);
dd_status dd_zgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, dd_complex128 alpha, const dd_complex128 *A, int64_t lda,
                          const dd_complex128 *B, int64_t ldb, dd_complex128 beta,
                          dd_complex128 *C, int64_t ldc, dd_gemm_info *info);
dd_status dd_cgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, dd_complex64 alpha, const dd_complex64 *A, int64_t lda,
                          const dd_complex64 *B, int64_t ldb, dd_complex64 beta, dd_complex64 *C,
                          int64_t ldc, dd_gemm_info *info);

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
 * and C are this rank's local arrays (host memory); only sub(C)'s elements
 * are written.  Operands not in the context's 2-D block layout of op(A),
 * op(B) and C are redistributed into it (one all-to-all exchange each,
 * sub(C) only when beta ≠ 0; C's result sent back); extra host memory:
 * about one local array of each operand, twice.  BLAS rules for alpha = 0
 * and beta = 0 as dd_gemm.  Arguments are checked as PBLAS checks them
 * (sizes >= 0, offsets >= 1, submatrices inside their matrices, descriptor
 * fields, lld >= max(1, local rows)); info->bad_argument says which.
 * Collective; errors agreed. */
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

/* dd_pgemm in complex double and complex float (PBLAS's pzgemm, pcgemm):
 * transposes, scalars and rules as dd_zgemm. */
dd_status dd_pzgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    dd_complex128 alpha, const dd_complex128 *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const dd_complex128 *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, dd_complex128 beta, dd_complex128 *C, int64_t ic,
                    int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info);
dd_status dd_pcgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    dd_complex64 alpha, const dd_complex64 *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const dd_complex64 *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, dd_complex64 beta, dd_complex64 *C, int64_t ic,
                    int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info);

/* dd_pgemm and dd_psgemm on local arrays in device memory (the context's
 * backend's: GPU memory on CUDA, host memory on the CPU backend, where they
 * are dd_pgemm itself).  On a GPU each local array the call reads (A and B
 * unless alpha = 0; C always) is copied whole to pinned host memory,
 * dd_pgemm runs on the copies, and C's goes back up.  Arguments, rules and
 * errors as dd_pgemm. */
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
dd_status dd_pzgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, dd_complex128 alpha, const dd_complex128 *A, int64_t ia,
                           int64_t ja, const dd_matrix_desc *descA, const dd_complex128 *B,
                           int64_t ib, int64_t jb, const dd_matrix_desc *descB,
                           dd_complex128 beta, dd_complex128 *C, int64_t ic, int64_t jc,
                           const dd_matrix_desc *descC, dd_gemm_info *info);
dd_status dd_pcgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, dd_complex64 alpha, const dd_complex64 *A, int64_t ia,
                           int64_t ja, const dd_matrix_desc *descA, const dd_complex64 *B,
                           int64_t ib, int64_t jb, const dd_matrix_desc *descB, dd_complex64 beta,
                           dd_complex64 *C, int64_t ic, int64_t jc, const dd_matrix_desc *descC,
                           dd_gemm_info *info);

/* For programs that own their process: after the last dd_context_destroy
 * and MPI_Finalize, hand the GPU back at once (CUDA's primary context), so
 * that its cost is not paid at exit.  A library linked into someone else's
 * program never calls this. */
void dd_release_devices(void);

/* For programs that own their process, before MPI_Init: start creating
 * this rank's CUDA context on a thread of its own, so that it overlaps
 * MPI's start-up.  The GPU is the one the CUDA backend will pick (the
 * node-local rank modulo the visible GPUs), the local rank read from the
 * launcher's environment (Open MPI, MPICH's Hydra, PMI, PALS, srun; 0 for
 * a singleton); where the launcher says nothing, nothing is started.  The
 * first context made waits for the thread; where it opens another GPU, or
 * the CPU backend, the guessed GPU's context is destroyed again.  Does
 * nothing in a build without CUDA.  A library linked into someone else's
 * program never calls this. */
void dd_prestart_device(void);

#ifdef __cplusplus
}
#endif

#endif
