/* dd_scalapack_impl.h — what the drop-in's two files share, private to
 * src/scalapack: dd_scalapack.c (the entry points, the contexts, who
 * multiplies and the hand-on to ScaLAPACK) and dd_scalapack_check.c
 * (PBLAS's checks of the arguments, their agreement over the grid and the
 * refusal PBLAS's way).  include/dgemm_dist_scalapack.h is the interface. */
#ifndef DD_SCALAPACK_IMPL_H
#define DD_SCALAPACK_IMPL_H

#include <limits.h>
#include <mpi.h>

/* BLACS (C interface) and PBLAS's error handler, from the program's ScaLAPACK. */
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol)
    __attribute__((weak));
extern void Cblacs_get(int ctxt, int what, int *val) __attribute__((weak));
extern MPI_Comm Cblacs2sys_handle(int sysctxt) __attribute__((weak));
extern void PB_Cabort(int ictxt, const char *rout, int info) __attribute__((weak));

/* One call of PDGEMM, PSGEMM, PZGEMM or PCGEMM, its arguments as given. */
typedef struct {
    int type; /* DD_FLOAT64, DD_FLOAT32, DD_COMPLEX128, DD_COMPLEX64 */
    const char *name;
    const char *ta, *tb;
    const int *m, *n, *k;
    const void *alpha, *a;
    const int *ia, *ja, *desca;
    const void *b;
    const int *ib, *jb, *descb;
    const void *beta;
    void *c;
    const int *ic, *jc, *descc;
} pcall;

/* A descriptor as PBLAS's 11 entries (PB_CargFtoC): DTYPE_ 1 (9 entries)
 * and 2 (11) read, any other type only its first two. */
typedef struct {
    int dtype, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld;
} pdesc;

static inline pdesc pdesc_of(const int *d)
{
    if (d[0] == 1)
        return (pdesc){1, d[1], d[2], d[3], d[4], d[5], d[4], d[5], d[6], d[7], d[8]};
    if (d[0] == 2)
        return (pdesc){2, d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10]};
    return (pdesc){d[0], d[1], 0, 0, 1, 1, 1, 1, 0, 0, 1};
}

/* The grid of a context on this process, and whether it is in it. */
typedef struct {
    int ictxt, nprow, npcol, myrow, mycol;
} pgrid;

static inline int grid_of(int ictxt, pgrid *g)
{
    *g = (pgrid){ictxt, -1, -1, -1, -1};
    Cblacs_gridinfo(ictxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    return g->nprow >= 1 && g->npcol >= 1 && g->myrow >= 0 && g->mycol >= 0;
}

/* PBLAS's verdict: the lowest code of the faults found, with its reason.
 * code = 100 * position for an argument, 100 * position + entry for a
 * descriptor's entry (so they compare as PBLAS compares them); NONE if
 * none. */
enum { NONE = INT_MAX };
typedef struct {
    int code;
    char why[320];
} verdict;

/* What the grid agreed on (dropin_agree). */
typedef struct {
    int code, rank, first_differs; /* first_differs: 100 * position + entry, or 0 */
} agreed;

/* PBLAS's positive number of a verdict's code. */
static inline int number_of(int code)
{
    return code % 100 ? code : code / 100;
}

/* dd_scalapack.c: the calls refused, and the last call's number (negated;
 * 0: not refused), dd_scalapack_last_info's. */
extern long dropin_refused;
extern int dropin_last_info;

/* dd_scalapack_check.c */
/* PBLAS's checks of the whole call on this process into *v. */
void dropin_pblas_verdict(const pcall *p, verdict *v);
/* Whether this process prints a refusal made without a grid to agree on. */
int dropin_local_printer(const pcall *p);
/* v and d's first blocks agreed over comm (collective); 0 if that failed. */
int dropin_agree(MPI_Comm comm, const verdict *v, const pdesc d[3], agreed *out);
/* An illegal argument, refused PBLAS's way (PB_Cabort, or the call returns). */
void dropin_refuse(int ictxt, const char *name, int number, int printer, const char *why);

#endif
