/* check.h — verification at full size, in the manner of HPL.
 *
 * With a seeded random x: y = C·x and z = A·(B·x), both distributed, in
 * double precision whatever the element type; then
 *   r = ||y − z||_oo / (eps · k · ||A||_oo · ||B||_oo · ||x||_oo)
 * with eps the unit roundoff of the element type.  PASSED iff r < 16 and
 * every figure is finite: NaN or Inf anywhere can never pass.
 * Cost O(MN + MK + KN) over all ranks; needs O(K) memory per rank. */
#ifndef DD_CHECK_H
#define DD_CHECK_H

#include <mpi.h>

#include "dd.h"
#include "grid.h"

typedef struct {
    double residual; /* NaN when not finite */
    int passed;
} dd_check_result;

/* Host blocks: A Mp×Kq, B Kp×Nq, C Mp×Nq (row-major).  Collective over
 * world; row is my grid row's communicator. */
int check_product(MPI_Comm world, MPI_Comm row, const dd_grid *g, dd_dtype t, int64_t M, int64_t N,
                  int64_t K, const void *A, const void *B, const void *C, uint64_t seed,
                  dd_check_result *res, dd_err *err);

/* "||C x - A(B x)||_oo / (...) = 2.1e-02 ...... PASSED" */
void check_line(const dd_check_result *r, char *buf, size_t n);

#endif
