/* dgemm_dist.h — the public C API of dgemm-dist: distributed GEMM on host
 * pointers in the project's 2-D block layout.
 *
 *   C = alpha·op(A)·op(B) + beta·C,  op(A) M×K, op(B) K×N, C M×N
 *
 * Layout.  The ranks of the context's communicator form a P×Q process grid;
 * rank r sits at row p = r / Q, column q = r % Q.  A length n is cut into
 * `parts` contiguous blocks differing by at most one element (the first
 * n % parts blocks get one more): dd_block_range() says which.  Rank (p,q)
 * holds, row-major with a leading dimension (elements between rows):
 *   op(A): rows block(M,P,p) × cols block(K,Q,q)   (Mp × Kq, lda >= Kq)
 *   op(B): rows block(K,P,p) × cols block(N,Q,q)   (Kp × Nq, ldb >= Nq)
 *   C    : rows block(M,P,p) × cols block(N,Q,q)   (Mp × Nq, ldc >= Nq)
 * This is the layout the dgemm-dist program works in.  A leading dimension
 * must be at least 1 (and at least the block's width); a pointer may be
 * NULL only where its block is empty.
 *
 * Collectives.  Every function taking a context is collective over the
 * context's communicator: every rank calls it with the same M, N, K,
 * alpha, beta, transa, transb.  Errors are agreed: when any rank fails,
 * every rank returns the same code, and dd_context_last_error() gives the
 * same message on every rank (the lowest failing rank's).  The library
 * never calls exit() or abort(); the one exception to agreement is
 * DD_ERROR_COMM: a broadcast broke mid-multiply, the peers may be left in
 * a collective, and the caller should MPI_Abort.
 *
 * Threads: a context is used by one thread at a time.  MPI must be
 * initialized (MPI_Init or MPI_Init_thread) before dd_context_create and
 * finalized only after dd_context_destroy.
 *
 * This slice supports transa = transb = 'N' only; 'T' (or 'C') is refused
 * with DD_ERROR_UNSUPPORTED. */
#ifndef DGEMM_DIST_H
#define DGEMM_DIST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The library's version: the project's (CMake project(VERSION)); the build
 * refuses to configure when they differ. */
#define DGEMM_DIST_VERSION_MAJOR 0
#define DGEMM_DIST_VERSION_MINOR 1
#define DGEMM_DIST_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes.  DD_SUCCESS is 0; every error is positive. */
typedef enum {
    DD_SUCCESS = 0,
    DD_ERROR_USAGE = 1,        /* bad argument: sizes, leading dimensions, options, NULL */
    DD_ERROR_MEMORY = 2,       /* out of host or device memory */
    DD_ERROR_IO = 3,           /* I/O (not used by dd_gemm: no files) */
    DD_ERROR_COMM = 4,         /* communication broke mid-multiply: not agreed, MPI_Abort */
    DD_ERROR_CHECK_FAILED = 5, /* info->check was set and the check FAILED (C is written) */
    DD_ERROR_UNSUPPORTED = 6,  /* not supported: a transpose, a backend absent here */
    DD_ERROR_INTERNAL = 7,     /* anything else (an MPI call failed, ...) */
    DD_ERROR_MPI = 8           /* MPI not initialized, or the communicator unusable */
} dd_status;

/* "success", "usage error", ...: a static string, never NULL. */
const char *dd_status_string(dd_status s);

/* The version of the library linked at run time. */
void dd_version(int *major, int *minor, int *patch);

typedef struct dd_context dd_context;

/* Options of a context; dd_context_options_init() fills the defaults.  The
 * strings are copied at dd_context_create. */
typedef struct {
    const char *backend; /* "auto" (default: CUDA when every rank has a GPU), "cuda", "cpu" */
    const char *comm;    /* "auto" (default), "nccl", "mpi" */
    const char *kernel;  /* local-multiply kernel name; NULL = the backend's default */
    int64_t panel;       /* SUMMA panel width; 0 = the backend's default */
    int lookahead;       /* panels in flight, 1..16; 0 = default (1) */
    int P, Q;            /* process grid; 0, 0 = the most nearly square (P <= Q) */
    int threads;         /* CPU backend: BLAS threads per rank; 0 = default */
} dd_context_options;

void dd_context_options_init(dd_context_options *opts);

/* Collective over comm (which is duplicated: the caller may free its own).
 * opts NULL = defaults.  On success *ctx is the context; on failure *ctx is
 * NULL, the same code is returned on every rank, and errbuf (errlen bytes,
 * may be NULL) holds the message. */
dd_status dd_context_create(MPI_Comm comm, const dd_context_options *opts, dd_context **ctx,
                            char *errbuf, size_t errlen);
/* Collective; NULL is ignored. */
void dd_context_destroy(dd_context *ctx);

/* The message of the last failed call on ctx ("" after a success); valid
 * until the next call on ctx. */
const char *dd_context_last_error(const dd_context *ctx);

/* The grid P×Q and this rank's coordinates (p, q); any pointer may be NULL.
 * The backend actually chosen ("cpu", "cuda") with dd_context_backend(). */
dd_status dd_context_grid(const dd_context *ctx, int *P, int *Q, int *p, int *q);
const char *dd_context_backend(const dd_context *ctx);

/* Block `index` of a length n cut into `parts`: its first element *start
 * and length *len (0 when parts > n).  n >= 0, parts >= 1, 0 <= index <
 * parts, else DD_ERROR_USAGE.  Local (not collective). */
dd_status dd_block_range(int64_t n, int parts, int index, int64_t *start, int64_t *len);

/* What one multiply did.  The caller sets `check`; the rest is output. */
typedef struct {
    int check;                   /* in: 1 = verify C afterwards (an O(MN + MK + KN) check) */
    double multiply_seconds;     /* the distributed multiply, slowest rank */
    double exposed_comm_seconds; /* multiply time not spent in local multiplies, mean of ranks */
    double tflops;         /* 2·M·N·K / multiply_seconds / 1e12 (0 when nothing multiplied) */
    double check_residual; /* scaled residual (HPL style); NaN if not meaningful or unchecked */
    int check_passed;      /* 1: residual finite and < 16; 0: FAILED or unchecked */
} dd_gemm_info;

/* C ← alpha·op(A)·op(B) + beta·C on this rank's blocks (layout above).
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

#ifdef __cplusplus
}
#endif

#endif
