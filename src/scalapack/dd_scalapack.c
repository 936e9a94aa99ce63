/* dd_scalapack.c — libdgemm-dist-scalapack: pdgemm_ and psgemm_ with
 * ScaLAPACK's Fortran ABI on top of dd_pgemm (dgemm_dist.h, end).
 *
 * The grid and the communicator come from the BLACS context of DESCA's
 * CTXT: Cblacs_gridinfo for the shape and this process's place,
 * Cblacs_get(ctxt, 10) and Cblacs2sys_handle for the context's own
 * communicator, whose ranks are the grid's, row-major.  The BLACS symbols
 * are weak: whatever ScaLAPACK (or other BLACS) the program links
 * provides them; without one the library says so.  One dd_context per
 * communicator (same processes, same order) is kept, freed at
 * MPI_Finalize.  Never exits: bad arguments go the PBLAS way (PXERBLA)
 * and return; calls it cannot serve go to the next pdgemm_/psgemm_ in
 * link order (ScaLAPACK's) when there is one. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dgemm_dist.h"

/* BLACS (C interface) and PBLAS's error hook, from the program's ScaLAPACK. */
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol)
    __attribute__((weak));
extern void Cblacs_get(int ctxt, int what, int *val) __attribute__((weak));
extern MPI_Comm Cblacs2sys_handle(int sysctxt) __attribute__((weak));
extern void pxerbla_(const int *ictxt, const char *srname, const int *info, size_t len)
    __attribute__((weak));

typedef void pgemm_fn(const char *, const char *, const int *, const int *, const int *,
                      const void *, const void *, const int *, const int *, const int *,
                      const void *, const int *, const int *, const int *, const void *, void *,
                      const int *, const int *, const int *, size_t, size_t);

enum { CACHE_MAX = 16, BLACS_GET_CONTEXT_COMM = 10 };
static struct {
    dd_context *ctx;
    MPI_Group group;
} cache[CACHE_MAX];
static int ncache, keyval = MPI_KEYVAL_INVALID;
static long served;

long dd_scalapack_calls(void)
{
    return served;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the contexts go then. */
static int free_cache(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    for (int i = ncache - 1; i >= 0; i--) {
        dd_context_destroy(cache[i].ctx);
        MPI_Group_free(&cache[i].group);
    }
    ncache = 0;
    return MPI_SUCCESS;
}

/* The context for comm's processes: found, or made (collective over comm:
 * every grid process is in this call).  NULL with msg on failure. */
static dd_context *context_for(MPI_Comm comm, char *msg, size_t len)
{
    MPI_Group g;
    if (MPI_Comm_group(comm, &g) != MPI_SUCCESS) {
        snprintf(msg, len, "MPI_Comm_group of the BLACS context's communicator failed");
        return NULL;
    }
    for (int i = 0; i < ncache; i++) {
        int same;
        if (MPI_Group_compare(g, cache[i].group, &same) == MPI_SUCCESS && same == MPI_IDENT) {
            MPI_Group_free(&g);
            return cache[i].ctx;
        }
    }
    dd_context_options o;
    dd_context_options_init(&o);
    const char *be = getenv("DD_SCALAPACK_BACKEND");
    if (be && *be)
        o.backend = be;
    dd_context *ctx = NULL;
    if (dd_context_create(comm, &o, &ctx, msg, len) != DD_SUCCESS) {
        MPI_Group_free(&g);
        return NULL;
    }
    if (keyval == MPI_KEYVAL_INVALID &&
        (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cache, &keyval, NULL) != MPI_SUCCESS ||
         MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) != MPI_SUCCESS))
        keyval = MPI_KEYVAL_INVALID; /* then the contexts live until exit */
    if (ncache == CACHE_MAX) { /* the oldest goes: collective over its own processes */
        dd_context_destroy(cache[0].ctx);
        MPI_Group_free(&cache[0].group);
        memmove(cache, cache + 1, sizeof cache[0] * (CACHE_MAX - 1));
        ncache--;
    }
    cache[ncache].ctx = ctx;
    cache[ncache++].group = g;
    return ctx;
}

/* One line on stderr, once per process and kind (served-by notes, fallbacks). */
static void note_once(int *done, const char *name, const char *what)
{
    if (*done)
        return;
    *done = 1;
    fprintf(stderr, "dgemm-dist-scalapack: %s: %s\n", name, what);
}

/* The PBLAS way for a bad argument: PXERBLA (when linked) on every
 * process, our explanation from grid process (0, 0); no abort. */
static void pblas_error(int ictxt, const char *name, int number, int me00, const char *why)
{
    if (me00)
        fprintf(stderr, "dgemm-dist-scalapack: %s: parameter number %d had an illegal value: %s\n",
                name, number, why);
    if (pxerbla_)
        pxerbla_(&ictxt, name, &number, strlen(name));
}

/* A descriptor as dd's (DTYPE_ 1 only, checked by the caller). */
static void desc_of(dd_matrix_desc *d, const int *s, int nprow, int npcol)
{
    *d = (dd_matrix_desc){DD_LAYOUT_BLOCK_CYCLIC, s[2], s[3], s[4], s[5], s[6], s[7], s[8],
                          nprow, npcol, 'R'};
}

typedef struct {
    int dbl;
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

/* The real routine after ours in link order, or NULL. */
static pgemm_fn *next_routine(const pcall *p)
{
    return (pgemm_fn *)dlsym(RTLD_NEXT, p->dbl ? "pdgemm_" : "psgemm_");
}

static void hand_on(const pcall *p, pgemm_fn *f)
{
    f(p->ta, p->tb, p->m, p->n, p->k, p->alpha, p->a, p->ia, p->ja, p->desca, p->b, p->ib, p->jb,
      p->descb, p->beta, p->c, p->ic, p->jc, p->descc, 1, 1);
}

/* A call not served: to ScaLAPACK when linked, else one clear line. */
static void cannot_serve(const pcall *p, int ictxt, int me00, const char *why)
{
    static int told_fallback, told_error;
    pgemm_fn *f = next_routine(p);
    char line[640];
    if (f) {
        snprintf(line, sizeof line, "%s; handed to the ScaLAPACK routine linked after it", why);
        if (me00)
            note_once(&told_fallback, p->name, line);
        hand_on(p, f);
        return;
    }
    snprintf(line, sizeof line, "%s, and no ScaLAPACK %s is linked after it: C is unchanged", why,
             p->name);
    if (me00 || ictxt < 0)
        note_once(&told_error, p->name, line);
}

static dd_status run(const pcall *p, dd_context *ctx, int nprow, int npcol, dd_gemm_info *info)
{
    dd_matrix_desc da, db, dc;
    desc_of(&da, p->desca, nprow, npcol);
    desc_of(&db, p->descb, nprow, npcol);
    desc_of(&dc, p->descc, nprow, npcol);
    if (p->dbl)
        return dd_pgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const double *)p->alpha,
                        p->a, *p->ia, *p->ja, &da, p->b, *p->ib, *p->jb, &db,
                        *(const double *)p->beta, p->c, *p->ic, *p->jc, &dc, info);
    return dd_psgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const float *)p->alpha, p->a,
                     *p->ia, *p->ja, &da, p->b, *p->ib, *p->jb, &db, *(const float *)p->beta,
                     p->c, *p->ic, *p->jc, &dc, info);
}

/* The descriptors' DTYPE_ and CTXT_: 0, or the PBLAS number of the first bad one. */
static int check_contexts(const pcall *p, int ictxt)
{
    const int *d[3] = {p->desca, p->descb, p->descc};
    const int pos[3] = {10, 14, 19};
    for (int i = 0; i < 3; i++)
        if (d[i][1] != ictxt)
            return pos[i] * 100 + 2;
    return 0;
}

static void serve(const pcall *p)
{
    static int told_serving;
    int nprow = -1, npcol = -1, myrow = -1, mycol = -1, ictxt = p->desca[1];
    if (!Cblacs_gridinfo || !Cblacs_get || !Cblacs2sys_handle) {
        cannot_serve(p, -1, 1, "no BLACS is linked (Cblacs_gridinfo, Cblacs_get, Cblacs2sys_handle)");
        return;
    }
    Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
    if (nprow < 1 || npcol < 1 || myrow < 0 || mycol < 0) /* not in the grid: PBLAS returns */
        return;
    int me00 = myrow == 0 && mycol == 0, bad = check_contexts(p, ictxt);
    if (bad) {
        pblas_error(ictxt, p->name, bad, me00, "the descriptors of A, B and C must share one BLACS context");
        return;
    }
    if (p->desca[0] != 1 || p->descb[0] != 1 || p->descc[0] != 1) {
        cannot_serve(p, ictxt, me00, "a descriptor type (DTYPE_) other than 1 (dense block-cyclic)");
        return;
    }
    int sys = -1;
    Cblacs_get(ictxt, BLACS_GET_CONTEXT_COMM, &sys);
    MPI_Comm comm = Cblacs2sys_handle(sys);
    char msg[512] = "";
    dd_context *ctx = context_for(comm, msg, sizeof msg);
    if (!ctx) {
        char why[600];
        snprintf(why, sizeof why, "dgemm-dist could not start on this grid (%s)", msg);
        cannot_serve(p, ictxt, me00, why);
        return;
    }
    if (me00 && getenv("DD_SCALAPACK_VERBOSE") && atoi(getenv("DD_SCALAPACK_VERBOSE")) > 0) {
        char line[160];
        snprintf(line, sizeof line, "served by dgemm-dist (backend %s, BLACS grid %dx%d)",
                 dd_context_backend(ctx), nprow, npcol);
        note_once(&told_serving, p->name, line);
    }
    dd_gemm_info info = {0};
    dd_status st = run(p, ctx, nprow, npcol, &info);
    if (st == DD_SUCCESS) {
        served++;
    } else if (st == DD_ERROR_USAGE && info.bad_argument) {
        pblas_error(ictxt, p->name, info.bad_argument, me00, dd_context_last_error(ctx));
    } else if (st == DD_ERROR_COMM) {
        if (me00)
            fprintf(stderr, "dgemm-dist-scalapack: %s: %s: C is undefined; end the job\n",
                    p->name, dd_context_last_error(ctx));
    } else { /* agreed: every process hands on, or none */
        cannot_serve(p, ictxt, me00, dd_context_last_error(ctx));
    }
}

void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja,
             const int *desca, const double *b, const int *ib, const int *jb, const int *descb,
             const double *beta, double *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {1,  "PDGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}

void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {0,  "PSGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}
