/* dgemm_dist_scalapack.h — libdgemm-dist-scalapack: pdgemm_ and psgemm_
 * with ScaLAPACK's Fortran ABI, served by dd_pgemm (dgemm_dist.h).
 *
 * A separate library (-ldgemm-dist-scalapack, CMake target
 * dgemm-dist::scalapack, pkg-config dgemm-dist-scalapack).  Link it before
 * ScaLAPACK (… -ldgemm-dist-scalapack -lscalapack-openmpi …) and a
 * ScaLAPACK program's pdgemm/psgemm calls run through dd_pgemm, on the GPUs
 * where the ranks have them (host data in and out, as ScaLAPACK's contract
 * is); such a program needs no source change and need not include this
 * header.  It needs a BLACS (ScaLAPACK's; the symbols are taken weakly, so
 * the library itself does not depend on ScaLAPACK): the grid comes from
 * Cblacs_gridinfo of DESCA's CTXT and the communicator from the BLACS
 * context (Cblacs_get with what = 10, Cblacs2sys_handle), whose ranks are
 * the grid's in row-major order.  One dd_context per communicator (same
 * ranks in the same order) is kept and freed at MPI_Finalize.
 * Environment: DD_SCALAPACK_BACKEND (auto, cuda, cpu; default auto),
 * DD_SCALAPACK_VERBOSE=1 (grid process (0,0) says on stderr which calls it
 * serves).  A bad argument is reported as PBLAS does (PXERBLA with
 * 100·position + field, and one line from process (0,0) saying what to
 * change) and the call returns without touching C; unlike ScaLAPACK it
 * does not abort.  A call it cannot serve (descriptor type other than 1,
 * no BLACS, contexts of A, B, C differing, a backend failing to open) goes
 * to the real ScaLAPACK routine when one is linked after it (found with
 * dlsym(RTLD_NEXT)), with one note on stderr; else it is reported as an
 * error the same way. */
#ifndef DGEMM_DIST_SCALAPACK_H
#define DGEMM_DIST_SCALAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

/* PBLAS's pdgemm and psgemm: sub(C) ← alpha·op(sub(A))·op(sub(B)) +
 * beta·sub(C) on ScaLAPACK's 9-entry descriptors, every argument by
 * reference (Fortran), offsets 1-based. */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);

/* The number of pdgemm_/psgemm_ calls this process has served itself (not
 * handed to ScaLAPACK). */
long dd_scalapack_calls(void);

#ifdef __cplusplus
}
#endif

#endif
