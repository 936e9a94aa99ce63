/* dd_scalapack.c — libdgemm-dist-scalapack: pdgemm_, psgemm_, pzgemm_ and
 * pcgemm_ with ScaLAPACK's Fortran ABI on top of dd_pgemm, dd_psgemm,
 * dd_pzgemm and dd_pcgemm (include/dgemm_dist_scalapack.h), also under the
 * names other Fortran compilers use (pdgemm, PDGEMM, PDGEMM_; the others
 * likewise).  The four differ only in the element type: one path serves
 * them all.
 *
 * The grid and the communicator come from the BLACS context of DESCA's
 * CTXT: Cblacs_gridinfo for the shape and this process's place,
 * Cblacs_get(ctxt, 10) and Cblacs2sys_handle for the context's own
 * communicator, whose ranks are the grid's, row-major.  The BLACS symbols
 * and PBLAS's error handler PB_Cabort are weak: whatever ScaLAPACK (or
 * other BLACS) the program links provides them; without BLACS the library
 * says so.  One dd_context per communicator (same processes, same order)
 * is kept, with a duplicate of the communicator for the drop-in's own
 * agreement, freed at MPI_Finalize.
 *
 * Descriptors: DTYPE_ 1 (9 entries) and 2 (11: the first block's size
 * IMB_, INB_ of its own), read into PBLAS's 11-entry form as PB_CargFtoC
 * reads them.  A first block other than MB_ x NB_ reaches the library's
 * layout through dd_internal_first_blocks (dgemm_dist_tool.h).
 * Replicated operands (RSRC_ or CSRC_ = -1) go to ScaLAPACK.
 *
 * Illegal arguments: PBLAS's checks (PDGEMM's, in its order: pblas_verdict),
 * made on each process and agreed over the grid (the lowest number wins),
 * are reported as PBLAS reports them: PB_Cabort(ctxt, "PDGEMM", -number)
 * on every process, after one line from the process that found it saying
 * what to change.  ScaLAPACK's PB_Cabort aborts the job, as with
 * ScaLAPACK itself; the library never aborts by itself: without a
 * PB_Cabort, or with DD_SCALAPACK_ERRORS=return, the call returns with C
 * untouched (dd_scalapack_last_info).  A process whose DESCA names no grid
 * it is in, or whose descriptors name a bad type or different contexts,
 * has no communicator to agree on: it reports at once, alone.  Never
 * PXERBLA: PBLAS does not call it.
 *
 * Who multiplies: dgemm-dist, except where ScaLAPACK (linked after) is
 * the better choice or the only one: DD_SCALAPACK_BACKEND auto resolving
 * to the CPU (ScaLAPACK's own PDGEMM is faster on the CPU,
 * docs/results/cpu-2026-12-02-dropin-testers/), replicated operands, a
 * backend that cannot start.  Each call is counted as served, handed on
 * or refused (dd_scalapack_calls, dd_scalapack_handed_on;
 * DD_SCALAPACK_SUMMARY=1 prints the counts at MPI_Finalize). */
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
#include "dgemm_dist_tool.h" /* dd_internal_first_blocks */

/* BLACS (C interface) and PBLAS's error handler, from the program's ScaLAPACK. */
extern void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol)
    __attribute__((weak));
extern void Cblacs_get(int ctxt, int what, int *val) __attribute__((weak));
extern MPI_Comm Cblacs2sys_handle(int sysctxt) __attribute__((weak));
extern void PB_Cabort(int ictxt, const char *rout, int info) __attribute__((weak));

typedef void pgemm_fn(const char *, const char *, const int *, const int *, const int *,
                      const void *, const void *, const int *, const int *, const int *,
                      const void *, const int *, const int *, const int *, const void *, void *,
                      const int *, const int *, const int *, size_t, size_t);

enum { CACHE_MAX = 16, BLACS_GET_CONTEXT_COMM = 10 };
typedef struct {
    dd_context *ctx;
    MPI_Group group;
    MPI_Comm comm; /* a duplicate of the grid's, errors returned: the drop-in's agreement */
} grid_entry;
static grid_entry cache[CACHE_MAX];
static int ncache, keyval = MPI_KEYVAL_INVALID;
static long served, handed, refused;
static int last_info;

long dd_scalapack_calls(void)
{
    return served;
}

long dd_scalapack_handed_on(void)
{
    return handed;
}

int dd_scalapack_last_info(void)
{
    return last_info;
}

static void entry_free(grid_entry *e)
{
    dd_context_destroy(e->ctx);
    MPI_Group_free(&e->group);
    MPI_Comm_free(&e->comm);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the summary is
 * printed and the contexts go then. */
static int at_finalize(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    if (dd_knob_int(DDK_SCALAPACK_SUMMARY)) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr,
                "dgemm-dist-scalapack: rank %d: PDGEMM/PSGEMM/PZGEMM/PCGEMM calls: served %ld, "
                "handed on %ld, "
                "refused %ld\n",
                rank, served, handed, refused);
    }
    for (int i = ncache - 1; i >= 0; i--)
        entry_free(&cache[i]);
    ncache = 0;
    return MPI_SUCCESS;
}

/* The finalize hook, set at the first call (else the contexts and the
 * counts live until exit, unsaid). */
static void hook_finalize(void)
{
    int up = 0, down = 0;
    if (keyval != MPI_KEYVAL_INVALID || MPI_Initialized(&up) != MPI_SUCCESS || !up ||
        MPI_Finalized(&down) != MPI_SUCCESS || down)
        return;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &keyval, NULL) != MPI_SUCCESS)
        keyval = MPI_KEYVAL_INVALID;
    else if (MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) != MPI_SUCCESS)
        MPI_Comm_free_keyval(&keyval);
}

/* The context for comm's processes: found, or made (collective over comm:
 * every grid process is in this call).  NULL with msg on failure. */
static grid_entry *context_for(MPI_Comm comm, char *msg, size_t len)
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
            return &cache[i];
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
    /* the drop-in's own communicator, errors returned (MPI_Comm_dup is
     * collective: it fails on every process or is an MPI fault) */
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS ||
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        snprintf(msg, len, "MPI_Comm_dup of the BLACS context's communicator failed");
        if (dup != MPI_COMM_NULL)
            MPI_Comm_free(&dup);
        dd_context_destroy(ctx);
        MPI_Group_free(&g);
        return NULL;
    }
    if (ncache == CACHE_MAX) { /* the oldest goes: collective over its own processes */
        entry_free(&cache[0]);
        memmove(cache, cache + 1, sizeof cache[0] * (CACHE_MAX - 1));
        ncache--;
    }
    cache[ncache] = (grid_entry){ctx, g, dup};
    return &cache[ncache++];
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
    "", "DTYPE_", "CTXT_", "M_", "N_", "IMB_, or MB_ of a 9-entry descriptor",
    "INB_, or NB_ of a 9-entry descriptor", "MB_", "NB_", "RSRC_", "CSRC_", "LLD_"};

/* An illegal argument, PBLAS's way: number is what PBLAS passes negated
 * to PB_Cabort (100 * position + entry for a descriptor's entry, else the
 * position); our line (PB_Cabort's wording, then why) from the printer. */
static void refuse(int ictxt, const char *name, int number, int printer, const char *why)
{
    refused++;
    last_info = -number;
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
    if (PB_Cabort && dd_knob_int(DDK_SCALAPACK_ERRORS) == 0)
        PB_Cabort(ictxt, name, -number);
}

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

/* The real routine after ours in link order, or NULL. */
static pgemm_fn *next_routine(const pcall *p)
{
    static const char *const names[4] = {"pdgemm_", "psgemm_", "pzgemm_", "pcgemm_"};
    return (pgemm_fn *)dlsym(RTLD_NEXT, names[p->type]);
}

static void hand_on(const pcall *p, pgemm_fn *f)
{
    handed++;
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

/* The verdict and the first blocks agreed over the grid (one reduction):
 * the lowest code and the lowest rank that found it, and whether every
 * process describes each operand's first block alike. */
typedef struct {
    int code, rank, first_differs; /* first_differs: 100 * position + entry, or 0 */
} agreed;

static int agree(MPI_Comm comm, const verdict *v, const pdesc d[3], agreed *out)
{
    static const int pos[3] = {10, 14, 19};
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 0;
    int64_t x[13];
    x[0] = v->code == NONE ? INT64_MAX : ((int64_t)v->code << 32) | (uint32_t)rank;
    for (int k = 0; k < 3; k++) {
        x[1 + 4 * k] = d[k].imb, x[2 + 4 * k] = -(int64_t)d[k].imb;
        x[3 + 4 * k] = d[k].inb, x[4 + 4 * k] = -(int64_t)d[k].inb;
    }
    int64_t y[13];
    if (MPI_Allreduce(x, y, 13, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    *out = (agreed){NONE, -1, 0};
    if (y[0] != INT64_MAX)
        out->code = (int)(y[0] >> 32), out->rank = (int)(y[0] & 0xffffffff);
    for (int k = 2; k >= 0; k--) { /* the lowest number last */
        if (y[3 + 4 * k] != -y[4 + 4 * k])
            out->first_differs = pos[k] * 100 + E_INB;
        if (y[1 + 4 * k] != -y[2 + 4 * k])
            out->first_differs = pos[k] * 100 + E_IMB;
    }
    return 1;
}

/* PBLAS's positive number of a verdict's code. */
static int number_of(int code)
{
    return code % 100 ? code : code / 100;
}

static dd_status run(const pcall *p, dd_context *ctx, const pgrid *g, const pdesc pd[3],
                     dd_gemm_info *info)
{
    dd_matrix_desc d[3];
    int64_t first[3][2];
    int firsts = 0;
    for (int k = 0; k < 3; k++) {
        d[k] = (dd_matrix_desc){DD_LAYOUT_BLOCK_CYCLIC, pd[k].m, pd[k].n, pd[k].mb, pd[k].nb,
                                pd[k].rsrc, pd[k].csrc, pd[k].lld, g->nprow, g->npcol, 'R'};
        first[k][0] = pd[k].imb, first[k][1] = pd[k].inb;
        firsts |= pd[k].imb != pd[k].mb || pd[k].inb != pd[k].nb;
    }
    const dd_matrix_desc *const keys[3] = {&d[0], &d[1], &d[2]};
    if (firsts)
        dd_internal_first_blocks(keys, (const int64_t(*)[2])first);
    dd_status st;
    if (p->type == DD_FLOAT64)
        st = dd_pgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const double *)p->alpha, p->a,
                      *p->ia, *p->ja, &d[0], p->b, *p->ib, *p->jb, &d[1],
                      *(const double *)p->beta, p->c, *p->ic, *p->jc, &d[2], info);
    else if (p->type == DD_FLOAT32)
        st = dd_psgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const float *)p->alpha, p->a,
                       *p->ia, *p->ja, &d[0], p->b, *p->ib, *p->jb, &d[1],
                       *(const float *)p->beta, p->c, *p->ic, *p->jc, &d[2], info);
    else if (p->type == DD_COMPLEX128) /* COMPLEX*16: (re, im) pairs, dd_complex128's layout */
        st = dd_pzgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const dd_complex128 *)p->alpha,
                       p->a, *p->ia, *p->ja, &d[0], p->b, *p->ib, *p->jb, &d[1],
                       *(const dd_complex128 *)p->beta, p->c, *p->ic, *p->jc, &d[2], info);
    else
        st = dd_pcgemm(ctx, *p->ta, *p->tb, *p->m, *p->n, *p->k, *(const dd_complex64 *)p->alpha,
                       p->a, *p->ia, *p->ja, &d[0], p->b, *p->ib, *p->jb, &d[1],
                       *(const dd_complex64 *)p->beta, p->c, *p->ic, *p->jc, &d[2], info);
    if (firsts)
        dd_internal_first_blocks(NULL, NULL);
    return st;
}

static void serve(const pcall *p)
{
    static int told_serving, told_cpu;
    hook_finalize();
    last_info = 0;
    int ictxt = p->desca[1];
    if (!Cblacs_gridinfo || !Cblacs_get || !Cblacs2sys_handle) {
        cannot_serve(p, -1, 1, "no BLACS is linked (Cblacs_gridinfo, Cblacs_get, Cblacs2sys_handle)");
        return;
    }
    pgrid g;
    int in_grid = grid_of(ictxt, &g);
    int replicated = 0;
    verdict v;
    /* Refused here alone only when DESCA's context is no grid of this
     * process: there is no communicator to agree over.  A bad DTYPE_ or
     * CTXT_ of DESCB or DESCC (here, or on some processes only) goes into
     * the verdict agreed over DESCA's grid below, so no process is left
     * in a collective. */
    if (!in_grid) {
        pblas_verdict(p, &v); /* finds DESCA's CTXT_, or a lower fault: never NONE here */
        refuse(ictxt, p->name, number_of(v.code), local_printer(p), v.why);
        return;
    }
    const pdesc pd[3] = {pdesc_of(p->desca), pdesc_of(p->descb), pdesc_of(p->descc)};
    for (int i = 0; i < 3; i++)
        replicated |= pd[i].rsrc == -1 || pd[i].csrc == -1;
    int me00 = g.myrow == 0 && g.mycol == 0;
    dd_knobs_warn(DD_KNOB_DROPIN, me00); /* a bad knob's warning from process (0, 0), once */
    int sys = -1;
    Cblacs_get(ictxt, BLACS_GET_CONTEXT_COMM, &sys);
    MPI_Comm comm = Cblacs2sys_handle(sys);
    char msg[512] = "";
    grid_entry *e = context_for(comm, msg, sizeof msg);
    if (!e) { /* agreed by dd_context_create: every process hands on, or none */
        char why[600];
        snprintf(why, sizeof why, "dgemm-dist could not start on this grid (%s)", msg);
        cannot_serve(p, ictxt, me00, why);
        return;
    }
    pblas_verdict(p, &v);
    agreed a;
    if (!agree(e->comm, &v, pd, &a)) {
        if (me00)
            fprintf(stderr,
                    "dgemm-dist-scalapack: %s: the grid's processes could not agree on the "
                    "arguments (MPI_Allreduce failed): C is unchanged; end the job\n",
                    p->name);
        return;
    }
    int rank = 0;
    MPI_Comm_rank(e->comm, &rank);
    if (a.code != NONE) {
        refuse(ictxt, p->name, number_of(a.code), rank == a.rank, v.why);
        return;
    }
    if (a.first_differs) {
        refuse(ictxt, p->name, a.first_differs, me00,
               "the first block's size (IMB_ or INB_) differs between the grid's processes: "
               "give every process the same descriptor");
        return;
    }
    if (replicated) {
        cannot_serve(p, ictxt, me00, "a replicated operand (RSRC_ or CSRC_ = -1)");
        return;
    }
    /* auto on the CPU: ScaLAPACK's PDGEMM is the faster there
     * (docs/results/cpu-2026-12-02-dropin-testers/); DD_SCALAPACK_BACKEND=cpu
     * makes ours serve */
    const char *be = dd_knob_str(DDK_SCALAPACK_BACKEND);
    pgemm_fn *next = NULL;
    if ((!be || !strcmp(be, "auto")) && !strcmp(dd_context_backend(e->ctx), "cpu") &&
        (next = next_routine(p))) {
        if (me00 && dd_knob_int(DDK_SCALAPACK_VERBOSE))
            note_once(&told_cpu, p->name,
                      "handed to the ScaLAPACK routine linked after it: on the CPU backend it is "
                      "the faster (DD_SCALAPACK_BACKEND=cpu makes dgemm-dist serve it)");
        hand_on(p, next);
        return;
    }
    if (me00 && dd_knob_int(DDK_SCALAPACK_VERBOSE)) {
        char line[160];
        snprintf(line, sizeof line, "served by dgemm-dist (backend %s, BLACS grid %dx%d)",
                 dd_context_backend(e->ctx), g.nprow, g.npcol);
        note_once(&told_serving, p->name, line);
    }
    dd_gemm_info info = {0};
    dd_status st = run(p, e->ctx, &g, pd, &info);
    if (st == DD_SUCCESS) {
        served++;
    } else if (st == DD_ERROR_USAGE && info.bad_argument) {
        refuse(ictxt, p->name, info.bad_argument, me00, dd_context_last_error(e->ctx));
    } else if (st == DD_ERROR_COMM) {
        if (me00)
            fprintf(stderr, "dgemm-dist-scalapack: %s: %s: C is undefined; end the job\n",
                    p->name, dd_context_last_error(e->ctx));
    } else { /* agreed: every process hands on, or none */
        cannot_serve(p, ictxt, me00, dd_context_last_error(e->ctx));
    }
}

void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja,
             const int *desca, const double *b, const int *ib, const int *jb, const int *descb,
             const double *beta, double *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {DD_FLOAT64, "PDGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}

void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {DD_FLOAT32, "PSGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}

void pzgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {DD_COMPLEX128, "PZGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}

void pcgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const float *alpha, const float *a, const int *ia, const int *ja, const int *desca,
             const float *b, const int *ib, const int *jb, const int *descb, const float *beta,
             float *c, const int *ic, const int *jc, const int *descc)
{
    pcall p = {DD_COMPLEX64, "PCGEMM", transa, transb, m, n,     k,  alpha, a,  ia,
               ja, desca,    b,      ib,     jb, descb, beta, c, ic, jc, descc};
    serve(&p);
}

/* The other manglings of the names (no underscore, upper case, both), as
 * Fortran compilers other than gfortran form them. */
#define DD_ALIAS(name, target) __typeof__(target) name __attribute__((alias(#target)))
DD_ALIAS(pdgemm, pdgemm_);
DD_ALIAS(PDGEMM, pdgemm_);
DD_ALIAS(PDGEMM_, pdgemm_);
DD_ALIAS(psgemm, psgemm_);
DD_ALIAS(PSGEMM, psgemm_);
DD_ALIAS(PSGEMM_, psgemm_);
DD_ALIAS(pzgemm, pzgemm_);
DD_ALIAS(PZGEMM, pzgemm_);
DD_ALIAS(PZGEMM_, pzgemm_);
DD_ALIAS(pcgemm, pcgemm_);
DD_ALIAS(PCGEMM, pcgemm_);
DD_ALIAS(PCGEMM_, pcgemm_);
