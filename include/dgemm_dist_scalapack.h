/* dgemm_dist_scalapack.h — libdgemm-dist-scalapack: PBLAS's pdgemm,
 * psgemm, pzgemm and pcgemm with ScaLAPACK's Fortran ABI, served by
 * dd_pgemm, dd_psgemm, dd_pzgemm and dd_pcgemm (dgemm_dist.h).
 *
 * A separate library (-ldgemm-dist-scalapack, CMake target
 * dgemm-dist::scalapack, pkg-config dgemm-dist-scalapack).  Link it before
 * ScaLAPACK (… -ldgemm-dist-scalapack -lscalapack-openmpi …), or put it in
 * front of a dynamically linked program with LD_PRELOAD, and a ScaLAPACK
 * program's pdgemm/psgemm/pzgemm/pcgemm calls run through dd_pgemm (and
 * its other types), on the GPUs where
 * the ranks have them (host data in and out, as ScaLAPACK's contract is);
 * such a program needs no source change and need not include this header.
 * The routines are exported under every usual Fortran mangling: pdgemm_,
 * pdgemm, PDGEMM, PDGEMM_ (psgemm, pzgemm, pcgemm likewise).
 *
 * It needs a BLACS (ScaLAPACK's; the symbols are taken weakly, so the
 * library itself does not depend on ScaLAPACK): the grid comes from
 * Cblacs_gridinfo of DESCA's CTXT and the communicator from the BLACS
 * context (Cblacs_get with what = 10, Cblacs2sys_handle), whose ranks are
 * the grid's in row-major order.  One dd_context per communicator (same
 * ranks in the same order) is kept and freed at MPI_Finalize.
 * Descriptors: DTYPE_ 1 (9 entries) and DTYPE_ 2 (11 entries, the first
 * block IMB_ x INB_ of any size).
 *
 * Illegal arguments are reported as PBLAS reports them: PBLAS's checks
 * (in its order, the lowest number over the grid), then PB_Cabort(ctxt,
 * "PDGEMM", -number) ("PSGEMM", "PZGEMM", "PCGEMM") with PBLAS's number (100·position + entry in PBLAS's
 * 11-entry descriptor, else the position), taken from the program's
 * ScaLAPACK (which aborts the job) or the program's own (PBLAS's testers
 * intercept it); before it, one line on stderr from one process says what
 * to change.  The library itself never aborts: without a PB_Cabort, or
 * with DD_SCALAPACK_ERRORS=return, the call returns with C untouched and
 * dd_scalapack_last_info() gives the number.
 *
 * Calls go to ScaLAPACK's own routine (linked after, found with
 * dlsym(RTLD_NEXT)) where it is the better or the only choice: with
 * DD_SCALAPACK_BACKEND auto on ranks without GPUs (ScaLAPACK is faster on
 * the CPU; DD_SCALAPACK_BACKEND=cpu makes dgemm-dist serve them),
 * replicated operands (RSRC_ or CSRC_ = -1), a backend that cannot start;
 * without a ScaLAPACK after it such a call is reported and C left
 * unchanged.  Environment: DD_SCALAPACK_BACKEND, DD_SCALAPACK_ERRORS,
 * DD_SCALAPACK_SUMMARY (the counts below, printed at MPI_Finalize),
 * DD_SCALAPACK_VERBOSE (docs/environment.md). */
#ifndef DGEMM_DIST_SCALAPACK_H
#define DGEMM_DIST_SCALAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

/* PBLAS's pdgemm and psgemm: sub(C) ← alpha·op(sub(A))·op(sub(B)) +
 * beta·sub(C) on ScaLAPACK's descriptors, every argument by reference
 * (Fortran), offsets 1-based. */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);
/* pzgemm and pcgemm: COMPLEX*16 and COMPLEX*8 data, each element and
 * alpha, beta a (real, imaginary) pair of doubles or floats (dd_complex128,
 * dd_complex64); TRANSA, TRANSB 'N', 'T' or 'C' (conjugate transpose). */
void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pcgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);
/* The same routines under the other manglings. */
void pdgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
            const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
            double *c, const int *ic, const int *jc, const int *descc);
void PDGEMM(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
            const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
            double *c, const int *ic, const int *jc, const int *descc);
void PDGEMM_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void psgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
            const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
            float *c, const int *ic, const int *jc, const int *descc);
void PSGEMM(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
            const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
            float *c, const int *ic, const int *jc, const int *descc);
void PSGEMM_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);
void pzgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
            const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
            double *c, const int *ic, const int *jc, const int *descc);
void PZGEMM(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
            const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
            double *c, const int *ic, const int *jc, const int *descc);
void PZGEMM_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pcgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
            const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
            float *c, const int *ic, const int *jc, const int *descc);
void PCGEMM(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
            const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
            float *c, const int *ic, const int *jc, const int *descc);
void PCGEMM_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc);

/* The number of pdgemm/psgemm/pzgemm/pcgemm calls this process has served itself. */
long dd_scalapack_calls(void);
/* The number it has handed to the ScaLAPACK routine linked after it. */
long dd_scalapack_handed_on(void);
/* 0 when this process's last call was legal; else minus PBLAS's number of
 * the illegal argument, as PB_Cabort was (or, without it, would be) given. */
int dd_scalapack_last_info(void);

#ifdef __cplusplus
}
#endif

#endif
