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
 * reads them (pdesc_of, dd_scalapack_impl.h).  A first block other than
 * MB_ x NB_ reaches the library's layout through dd_internal_first_blocks
 * (dgemm_dist_tool.h).  Replicated operands (RSRC_ or CSRC_ = -1) go to
 * ScaLAPACK.
 *
 * Illegal arguments are refused as PBLAS refuses them, with its numbers
 * and its PB_Cabort, after its checks made on each process and agreed
 * over the grid (dd_scalapack_check.c); the library never aborts by itself.
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd_knobs.h"
#include "dd_scalapack_impl.h"
#include "dgemm_dist.h"
#include "dgemm_dist_scalapack.h"
#include "dgemm_dist_tool.h" /* dd_internal_first_blocks */

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
static long served, handed;
long dropin_refused;
int dropin_last_info;

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
    return dropin_last_info;
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
                rank, served, handed, dropin_refused);
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
    dropin_last_info = 0;
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
        dropin_pblas_verdict(p, &v); /* finds DESCA's CTXT_, or a lower fault: never NONE here */
        dropin_refuse(ictxt, p->name, number_of(v.code), dropin_local_printer(p), v.why);
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
    dropin_pblas_verdict(p, &v);
    agreed a;
    if (!dropin_agree(e->comm, &v, pd, &a)) {
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
        dropin_refuse(ictxt, p->name, number_of(a.code), rank == a.rank, v.why);
        return;
    }
    if (a.first_differs) {
        dropin_refuse(ictxt, p->name, a.first_differs, me00,
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
        dropin_refuse(ictxt, p->name, info.bad_argument, me00, dd_context_last_error(e->ctx));
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
