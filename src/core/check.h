/* check.h — verification at full size, in the manner of HPL.
 *
 * With a seeded random x: y = C·x and z = A·(B·x), both distributed, in
 * double precision whatever the element type; then
 *   r = ||y − z||_oo / (eps · k · ||A||_oo · ||B||_oo · ||x||_oo)
 * with eps the unit roundoff of the element type.  PASSED iff r < 16 and
 * every figure is finite: NaN or Inf anywhere can never pass.  Complex
 * types: x is complex (its parts two of the generator's values), the
 * products complex, |.| the modulus and eps the unit roundoff of one part.
 *
 * GEMM: A and B are the blocks the multiply used, op(A) and op(B) with
 * alpha applied (the library transposes and scales at load, src/api).  With beta ≠ 0,
 * z = A·(B·x) + w, w = (beta·C_in)·x (check_c_input), and the denominator
 * gains eps · ||beta·C_in||_oo · ||x||_oo, so a C computed with the wrong
 * beta, or without C's input, fails.
 *
 * Scaling: A is taken as A·2^-ea and B as B·2^-eb (so C as C·2^-e, e =
 * ea+eb, or the exponent of max|beta·C_in| when that is larger), with ea,
 * eb the binary exponents of max|a| and max|b|.  Powers of two are
 * exact and the ratio is unchanged, but every scaled sum is bounded by the
 * dimensions: no row sum, matrix-vector product or denominator overflows
 * (or underflows) for inputs anywhere in the finite range.  A correct
 * product of huge (or tiny) finite inputs therefore passes, and the
 * denominator is always finite.  A C far enough off to overflow in scaled
 * form gives r = Inf (FAILED).
 *
 * Not meaningful: when A or B holds NaN or Inf, or C does, the figure cannot
 * be computed; the result is then FAILED with residual NaN and why_not set.
 *
 * Every MPI call is checked and failures agreed over world; counts above
 * INT_MAX are reduced in chunks.  Cost O(MN + MK + KN) over all ranks (A and
 * B are read twice: once for their maxima), on the engine that holds the
 * blocks (a few memory-bound passes on the GPU); needs O(K) host memory per
 * rank, and as much engine scratch on CUDA. */
#ifndef DD_CHECK_H
#define DD_CHECK_H

#include <mpi.h>

#include "dd.h"
#include "engine.h"
#include "grid.h"

/* beta·C's part of the expression, taken from the work C right after C's
 * input was loaded and scaled by beta (the multiply then overwrites it):
 * check_c_input() fills it, check_product() adds it, check_cterm_free()
 * releases it. */
typedef struct {
    double *w;     /* Mp (complex: Mp pairs): my partial sums of (beta·C_in)'·x (summed along
                    * the grid row later) */
    double *abs;   /* Mp: my partial row sums of |(beta·C_in)'| */
    int e;         /* (beta·C_in)' = beta·C_in·2^-e, e from max|beta·C_in| over all ranks */
    int nonfinite; /* beta·C_in holds NaN or Inf somewhere */
    int64_t rows;  /* Mp */
} check_cterm;

/* A check's verdict (the library hands it on as dd_check_result,
 * include/dgemm_dist_plan.h, field by field). */
typedef struct {
    double residual;     /* NaN when not meaningful, Inf when too large to represent */
    int passed;          /* 1 only for a finite residual below DD_CHECK_THRESHOLD */
    const char *why_not; /* NULL when meaningful, else why not (static) */
} check_result;

/* Blocks in e's work memory (device memory on CUDA): A Mp×Kq, B Kp×Nq,
 * C Mp×Nq (row-major).  The scans and matrix-vector products run on the
 * engine (absmax, matvec: where the data is; only vectors of length K, Mp,
 * Kp and Nq cross to the host); the reductions and the verdict on the host.
 * Collective over world; row is my grid row's communicator.  Returns DD_OK
 * with *res set (PASSED or FAILED alike), or an agreed error (memory, MPI,
 * the engine). */
int check_product(MPI_Comm world, MPI_Comm row, const dd_grid *g, dd_engine *e, dd_dtype t,
                  int64_t M, int64_t N, int64_t K, const void *A, const void *B, const void *C,
                  const check_cterm *cin, uint64_t seed, check_result *res, dd_err *err);

/* cin's figures from my block of beta·C_in (Mp×Nq, work memory), with the
 * x that check_product() will draw from the same seed.  Collective over
 * world (the scale is global); agreed.  On failure *ct holds nothing. */
int check_c_input(MPI_Comm world, const dd_grid *g, dd_engine *e, dd_dtype t, int64_t M, int64_t N,
                  const void *C, uint64_t seed, check_cterm *ct, dd_err *err);
void check_cterm_free(check_cterm *ct);

/* "||C x - A(B x)||_oo / (...) = 2.1e-02 ...... PASSED"; when not meaningful
 * "||C x - A(B x)||_oo / (...) = not meaningful (<why_not>) ...... FAILED";
 * r NULL: a line saying FAILED (no result); buf NULL or n 0: nothing. */
void check_line(const check_result *r, char *buf, size_t n);

/* MPI_Allreduce of n doubles (n may exceed INT_MAX) in pieces of at most
 * `chunk` elements (check_product uses INT_MAX; 0 means INT_MAX).  send may
 * be MPI_IN_PLACE.  Collective over comm: every piece is reduced on every
 * rank even after a failure, so no rank is left in a collective; returns
 * the first failure (not agreed: the caller agrees). */
int check_allreduce(const void *send, double *recv, int64_t n, MPI_Op op, MPI_Comm comm,
                    int64_t chunk, dd_err *err);

#endif
