/* dd_scalapack.c — libdgemm-dist-scalapack: pdgemm_ and psgemm_ with
 * ScaLAPACK's Fortran ABI on top of dd_pgemm (include/dgemm_dist_scalapack.h).
 *
 * The grid and the communicator come from the BLACS context of DESCA's
 * CTXT: Cblacs_gridinfo for the shape and this process's place,
 * Cblacs_get(ctxt, 10) and Cblacs2sys_handle for the context's own
 * communicator, whose ranks are the grid's, row-major.  The BLACS symbols
 * are weak: whatever ScaLAPACK (or other BLACS) the program links
 * provides them; without one the library says so.  One dd_context per
 * communicator (same processes, same order) is kept, freed at
 * MPI_Finalize.  Never exits: bad arguments go the PBLAS way (PXERBLA,
 * with PBLAS's number) and return; calls it cannot serve go to the next
 * pdgemm_/psgemm_ in link order (ScaLAPACK's) when there is one.
 *
 * The contexts and descriptor types are checked here, on each process
 * alone, before anything collective: a process whose DESCA names no grid
 * it is in, or whose descriptors name different contexts, has no
 * communicator to agree on, so it refuses at once, with the number PBLAS
 * gives on that process (pblas_verdict, PDGEMM's checks in PBLAS's
 * order).  Every other argument is checked by dd_pgemm, agreed over the
 * grid. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_knobs.h"
#include "dgemm_dist.h"
#include "dgemm_dist_scalapack.h"

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
    /* DD_SCALAPACK_BACKEND (dd_knobs.h): the name goes to the library,
     * which checks it on every grid process together */
    const char *be = dd_knob_str(DDK_SCALAPACK_BACKEND);
    if (be)
        o.backend = be;
    dd_context *ctx = NULL;
    if (dd_context_create(comm, &o, &ctx, msg, len) != DD_SUCCESS) {
        if (be && len) { /* the failure's message says which setting it ran with */
            char why[512];
            snprintf(why, sizeof why, "%s", msg);
            snprintf(msg, len, "DD_SCALAPACK_BACKEND=\"%.64s\": %.400s", be, why);
        }
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

/* PBLAS's numbers (as its checker PB_Cchkmat gives them): the argument at
 * position i of PDGEMM's list is i; entry j of the descriptor at position
 * i is 100 * i + j, j counted in PBLAS's 11-entry internal descriptor,
 * into which a 9-entry one (DTYPE_ 1) goes with IMB_ = MB_ and INB_ = NB_. */
enum { E_DTYPE = 1, E_CTXT, E_M, E_N, E_IMB, E_INB, E_MB, E_NB, E_RSRC, E_CSRC, E_LLD };
static const char *const arg_names[20] = {
    "",      "TRANSA", "TRANSB", "M",  "N",     "K",    "ALPHA", "A",  "IA", "JA",
    "DESCA", "B",      "IB",     "JB", "DESCB", "BETA", "C",     "IC", "JC", "DESCC"};
static const char *const entry_names[12] = {
    "", "DTYPE_", "CTXT_", "M_", "N_", "IMB_: MB_ of a 9-entry descriptor",
    "INB_: NB_ of a 9-entry descriptor", "MB_", "NB_", "RSRC_", "CSRC_", "LLD_"};

/* The PBLAS way for a bad argument: PXERBLA (when linked) on every
 * process, our line (PB_Cabort's wording, then why) from one; no abort. */
static void pblas_error(int ictxt, const char *name, int number, int printer, const char *why)
{
    if (printer) {
        int i = number / 100, j = number % 100;
        if (i >= 1 && i < 20 && j >= 1 && j < 12)
            fprintf(stderr,
                    "dgemm-dist-scalapack: %s: parameter number %d (%s), entry number %d (%s) had "
                    "an illegal value: %s\n",
                    name, i, arg_names[i], j, entry_names[j], why);
        else
            fprintf(stderr,
                    "dgemm-dist-scalapack: %s: parameter number %d (%s) had an illegal value: %s\n",
                    name, number, number >= 1 && number < 20 ? arg_names[number] : "?", why);
    }
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

/* A descriptor as PBLAS's 11 entries (PB_CargFtoC): DTYPE_ 1 (9 entries)
 * and 2 (11) read, any other type only its first two. */
typedef struct {
    int dtype, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld;
} pdesc;

static pdesc pdesc_of(const int *d)
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

static int grid_of(int ictxt, pgrid *g)
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

__attribute__((format(printf, 3, 4))) static void fault(verdict *v, int code, const char *fmt,
                                                       ...)
{
    if (code >= v->code)
        return;
    v->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof v->why, fmt, ap);
    va_end(ap);
}

/* How many of n rows (or columns) dealt as a first block of imb, then
 * blocks of nb, cyclically over np processes from src, process me holds:
 * all of them when src is -1 (replicated) or np is 1 (PBLAS's Mnumroc from
 * the first index).  imb, nb >= 1. */
static int64_t held(int64_t n, int64_t imb, int64_t nb, int me, int src, int np)
{
    if (src < 0 || np <= 1)
        return n;
    int64_t dist = ((int64_t)me - src + np) % np;
    if (n <= imb)
        return dist == 0 ? n : 0;
    int64_t rest = n - imb, full = rest / nb, part = rest % nb, count = dist == 0 ? imb : 0;
    int64_t first = (dist + np - 1) % np; /* block b after the first lies on (b + 1) mod np */
    if (full > first)
        count += ((full - 1 - first) / np + 1) * nb;
    if (part && (full + 1) % np == dist)
        count += part;
    return count;
}

/* PB_Cchkmat's checks of sub(X), m x n at (ia, ja), described by desc at
 * position dpos (ia, ja at dpos - 2, dpos - 1), m and n at mpos, npos. */
static void check_matrix(verdict *v, const pgrid *g, const char *X, int64_t m, int mpos, int64_t n,
                         int npos, int ia, int ja, const int *desc, int dpos)
{
    const pdesc d = pdesc_of(desc);
    int at = dpos * 100;
    if (m < 0)
        fault(v, mpos * 100, "%s = %lld: must be at least 0", arg_names[mpos], (long long)m);
    if (n < 0)
        fault(v, npos * 100, "%s = %lld: must be at least 0", arg_names[npos], (long long)n);
    if (ia < 1)
        fault(v, (dpos - 2) * 100, "I%s = %d: must be at least 1", X, ia);
    if (ja < 1)
        fault(v, (dpos - 1) * 100, "J%s = %d: must be at least 1", X, ja);
    if (d.dtype != 1 && d.dtype != 2) { /* PBLAS stops checking this operand here */
        fault(v, at + E_DTYPE, "DESC%s's DTYPE_ = %d: PBLAS takes 1 (or 2, the 11-entry form)", X,
              d.dtype);
        return;
    }
    if (d.ctxt != g->ictxt) { /* ... and here */
        fault(v, at + E_CTXT,
              "DESC%s's CTXT_ = %d is not DESCA's (%d): A, B and C must share one BLACS context",
              X, d.ctxt, g->ictxt);
        return;
    }
    const char *mb = d.dtype == 1 ? "MB_" : "IMB_", *nb = d.dtype == 1 ? "NB_" : "INB_";
    if (d.imb < 1)
        fault(v, at + E_IMB, "DESC%s's %s = %d: must be at least 1", X, mb, d.imb);
    if (d.inb < 1)
        fault(v, at + E_INB, "DESC%s's %s = %d: must be at least 1", X, nb, d.inb);
    if (d.mb < 1)
        fault(v, at + E_MB, "DESC%s's MB_ = %d: must be at least 1", X, d.mb);
    if (d.nb < 1)
        fault(v, at + E_NB, "DESC%s's NB_ = %d: must be at least 1", X, d.nb);
    if (d.rsrc < -1 || d.rsrc >= g->nprow)
        fault(v, at + E_RSRC, "DESC%s's RSRC_ = %d: must be -1 or a grid row, 0..%d", X, d.rsrc,
              g->nprow - 1);
    if (d.csrc < -1 || d.csrc >= g->npcol)
        fault(v, at + E_CSRC, "DESC%s's CSRC_ = %d: must be -1 or a grid column, 0..%d", X,
              d.csrc, g->npcol - 1);
    if (m == 0 || n == 0) { /* sub(X) empty: M_, N_ >= 0 and LLD_ >= 1 only */
        if (d.m < 0)
            fault(v, at + E_M, "DESC%s's M_ = %d: must be at least 0", X, d.m);
        if (d.n < 0)
            fault(v, at + E_N, "DESC%s's N_ = %d: must be at least 0", X, d.n);
        if (d.lld < 1)
            fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least 1", X, d.lld);
        return;
    }
    if (d.m < 1)
        fault(v, at + E_M, "DESC%s's M_ = %d: must be at least 1 (sub(%s) is not empty)", X, d.m,
              X);
    if (d.n < 1)
        fault(v, at + E_N, "DESC%s's N_ = %d: must be at least 1 (sub(%s) is not empty)", X, d.n,
              X);
    if (d.m >= 1 && d.n >= 1) {
        if ((int64_t)ia - 1 + m > d.m)
            fault(v, (dpos - 2) * 100,
                  "I%s = %d: the submatrix's %lld rows from there must lie in DESC%s's M_ = %d", X,
                  ia, (long long)m, X, d.m);
        if ((int64_t)ja - 1 + n > d.n)
            fault(v, (dpos - 1) * 100,
                  "J%s = %d: the submatrix's %lld columns from there must lie in DESC%s's N_ = %d",
                  X, ja, (long long)n, X, d.n);
    }
    if (v->code != NONE) /* PBLAS looks at LLD_ only when all else is right */
        return;
    int64_t np = held(d.m, d.imb, d.mb, g->myrow, d.rsrc, g->nprow);
    if (d.lld >= (np > 1 ? np : 1))
        return;
    if (d.lld < 1)
        fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least 1", X, d.lld);
    else if (held(d.n, d.inb, d.nb, g->mycol, d.csrc, g->npcol) > 0)
        fault(v, at + E_LLD, "DESC%s's LLD_ = %d: must be at least %lld, the local rows here", X,
              d.lld, (long long)np);
}

/* PBLAS's verdict on this process for the whole call: PDGEMM's checks as
 * PBLAS's PDGEMM runs them (each local), the lowest code winning. */
static void pblas_verdict(const pcall *p, verdict *v)
{
    *v = (verdict){NONE, ""};
    pgrid g;
    if (!grid_of(p->desca[1], &g)) {
        fault(v, 1000 + E_CTXT,
              "DESCA's CTXT_ = %d is no BLACS grid this process is in (a grid's processes get "
              "-1 as its handle when it leaves them out; this is another value, or the grid was "
              "released by BLACS_GRIDEXIT)",
              p->desca[1]);
        return;
    }
    char ta = *p->ta >= 'a' && *p->ta <= 'z' ? (char)(*p->ta - 32) : *p->ta;
    char tb = *p->tb >= 'a' && *p->tb <= 'z' ? (char)(*p->tb - 32) : *p->tb;
    int nota = ta == 'N', notb = tb == 'N';
    if (!nota && ta != 'T' && ta != 'C')
        fault(v, 100, "TRANSA = '%c': must be 'N', 'T' or 'C'", ta >= 32 && ta < 127 ? ta : '?');
    else if (!notb && tb != 'T' && tb != 'C')
        fault(v, 200, "TRANSB = '%c': must be 'N', 'T' or 'C'", tb >= 32 && tb < 127 ? tb : '?');
    if (nota)
        check_matrix(v, &g, "A", *p->m, 3, *p->k, 5, *p->ia, *p->ja, p->desca, 10);
    else
        check_matrix(v, &g, "A", *p->k, 5, *p->m, 3, *p->ia, *p->ja, p->desca, 10);
    if (notb)
        check_matrix(v, &g, "B", *p->k, 5, *p->n, 4, *p->ib, *p->jb, p->descb, 14);
    else
        check_matrix(v, &g, "B", *p->n, 4, *p->k, 5, *p->ib, *p->jb, p->descb, 14);
    check_matrix(v, &g, "C", *p->m, 3, *p->n, 4, *p->ic, *p->jc, p->descc, 19);
}

/* Who prints a refusal made here without a grid to agree on: process
 * (0, 0) of DESCA's grid, else of DESCB's or DESCC's where this process
 * is in one, else MPI_COMM_WORLD's rank 0. */
static int local_printer(const pcall *p)
{
    const int *d[3] = {p->desca, p->descb, p->descc};
    for (int i = 0; i < 3; i++) {
        pgrid g;
        if (grid_of(d[i][1], &g))
            return g.myrow == 0 && g.mycol == 0;
    }
    int up = 0, down = 0, rank = 0;
    if (MPI_Initialized(&up) != MPI_SUCCESS || !up || MPI_Finalized(&down) != MPI_SUCCESS ||
        down || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
        return 1;
    return rank == 0;
}

static void serve(const pcall *p)
{
    static int told_serving;
    int ictxt = p->desca[1];
    if (!Cblacs_gridinfo || !Cblacs_get || !Cblacs2sys_handle) {
        cannot_serve(p, -1, 1, "no BLACS is linked (Cblacs_gridinfo, Cblacs_get, Cblacs2sys_handle)");
        return;
    }
    pgrid g;
    int in_grid = grid_of(ictxt, &g);
    /* BLACS gives a grid's handle as -1 to the processes it leaves out: with
     * -1 in every descriptor this process is not in the call's grid and
     * returns, as ScaLAPACK programs expect (PBLAS itself would report
     * DESCA's CTXT_ and abort) */
    if (!in_grid && p->desca[1] == -1 && p->descb[1] == -1 && p->descc[1] == -1)
        return;
    const int *d[3] = {p->desca, p->descb, p->descc};
    int local_fault = !in_grid, inb = 0, replicated = 0;
    for (int i = 0; i < 3; i++) {
        local_fault |= (d[i][0] != 1 && d[i][0] != 2) || d[i][1] != ictxt;
        inb |= d[i][0] == 2;
        replicated |= d[i][0] == 1 && (d[i][6] == -1 || d[i][7] == -1);
    }
    if (local_fault) { /* refused here alone, first: a bad context gives no grid to agree over */
        verdict v;
        pblas_verdict(p, &v); /* finds these faults, or lower ones: never NONE here */
        pblas_error(ictxt, p->name, v.code % 100 ? v.code : v.code / 100, local_printer(p), v.why);
        return;
    }
    int nprow = g.nprow, npcol = g.npcol, me00 = g.myrow == 0 && g.mycol == 0;
    dd_knobs_warn(DD_KNOB_DROPIN, me00); /* a bad knob's warning from process (0, 0), once */
    if (inb || replicated) {
        cannot_serve(p, ictxt, me00,
                     inb ? "a descriptor of type 2 (DTYPE_, the 11-entry form)"
                         : "a replicated operand (RSRC_ or CSRC_ = -1)");
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
    if (me00 && dd_knob_int(DDK_SCALAPACK_VERBOSE)) {
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
