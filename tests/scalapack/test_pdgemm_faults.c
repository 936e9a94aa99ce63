/* test_pdgemm_faults.c — the drop-in's refusals against PBLAS's own.
 *
 * Linked as test_pdgemm.c is (the drop-in before -lscalapack-openmpi).
 * PXERBLA and PBLAS's PB_Cabort are defined here, as PBLAS's testers
 * define PB_Cabort, so each records the number it is given instead of
 * printing (and, for PB_Cabort, aborting the job); PB_Cwarn keeps PBLAS's
 * last warning for the failure messages.  Every faulty call goes to
 * ScaLAPACK's own pdgemm_ (dlopen/dlsym on DD_SCALAPACK_LIB), whose number
 * is the oracle, and to the drop-in, which must call PB_Cabort once with
 * the same (negative) number, never PXERBLA, leave C untouched and return
 * (a barrier after each case: no rank is left inside).  With
 * DD_SCALAPACK_ERRORS=return the drop-in must not call PB_Cabort at all,
 * and dd_scalapack_last_info() must give the number.
 *
 *   contexts   CTXT_ of A, B and C in turn: a grid released by
 *              Cblacs_gridexit, another grid's (same shape, column order;
 *              and, at 2 ranks or more, a 1x2 grid whose other processes
 *              hold -1), -1, a handle BLACS never gave; the released one in
 *              all three
 *   fields     every entry of each descriptor, 9-entry (DTYPE_, M_, N_,
 *              MB_, NB_, RSRC_, CSRC_, LLD_) and 11-entry (the same and
 *              IMB_, INB_: RSRC_, CSRC_, LLD_ numbered x09, x10, x11 in
 *              both) and every scalar argument (TRANSA ... JC, the
 *              submatrices' bounds); where the grid holds every rank,
 *              dd_pgemm's info->bad_argument too
 *   served     processes outside a valid grid (their handle -1) get
 *              PBLAS's number (DESCA's CTXT_) while the grid's processes
 *              compute; a replicated operand (RSRC_ = -1) is handed to
 *              ScaLAPACK (same bits as its own call); an 11-entry
 *              descriptor (DTYPE_ 2) is served
 *   message    the drop-in's line, PB_Cabort's wording, from one process
 *
 * The grid is 2x2 at 4 ranks or more, 1x1 below. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"
#include "dgemm_dist_scalapack.h" /* dd_scalapack_last_info, dd_scalapack_calls */

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np);

typedef void pgemm_fn(const char *, const char *, const int *, const int *, const int *,
                      const double *, const double *, const int *, const int *, const int *,
                      const double *, const int *, const int *, const int *, const double *,
                      double *, const int *, const int *, const int *);
void pdgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
             const double *, const int *, const int *, const int *, const double *, const int *,
             const int *, const int *, const double *, double *, const int *, const int *,
             const int *);

static int g_cases;
static MPI_Comm g_grid; /* the processes of the call's grid */
static pgemm_fn *real_pdgemm;
static int xerbla_calls, xerbla_number, cabort_calls, cabort_number;
static int errors_return; /* DD_SCALAPACK_ERRORS=return: no PB_Cabort from the drop-in */
static char pblas_warning[512];

/* ScaLAPACK's error hook, as the drop-in calls it. */
void pxerbla_(const int *ictxt, const char *name, const int *info, size_t len)
{
    (void)ictxt, (void)name, (void)len;
    xerbla_calls++;
    xerbla_number = *info;
}

/* PBLAS's: the number it would abort the job with (PBLAS passes it negative). */
void PB_Cabort(int ictxt, const char *rout, int info)
{
    (void)ictxt, (void)rout;
    cabort_calls++;
    cabort_number = -info;
}

void PB_Cwarn(int ictxt, int line, char *rout, char *form, ...)
{
    (void)ictxt, (void)line, (void)rout;
    va_list ap;
    va_start(ap, form);
    vsnprintf(pblas_warning, sizeof pblas_warning, form, ap);
    va_end(ap);
}

static double value(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 0xbf58476d1ce4e5b9ULL +
                 (uint64_t)j * 0x94d049bb133111ebULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ULL << 52) - 1.0;
}

/* A local array and its descriptor (11 entries of room: DTYPE_ 2 uses them). */
typedef struct {
    int desc[11];
    int locr, locc;
    size_t len;
    double *d;
} mat;

static int64_t global_index(int l, int nb, int me, int src, int np)
{
    return ((int64_t)(l / nb) * np + (me - src + np) % np) * nb + l % nb;
}

/* m x n in nb x nb blocks from process (rsrc, 0) of ctxt's grid (rsrc -1:
 * every process row holds every row), lld = local rows + 3; outside the
 * grid an empty array with CTXT_ -1. */
static void mat_make(mat *x, int ctxt, int m, int n, int nb, int rsrc, uint64_t seed)
{
    int P, Q, pr, pc, zero = 0;
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    int in = P >= 1 && pr >= 0;
    x->locr = !in ? 0 : rsrc < 0 ? m : numroc_(&m, &nb, &pr, &rsrc, &P);
    x->locc = in ? numroc_(&n, &nb, &pc, &zero, &Q) : 0;
    int lld = x->locr + 3;
    int d[11] = {1, in ? ctxt : -1, m, n, nb, nb, rsrc, 0, lld, 0, 0};
    memcpy(x->desc, d, sizeof d);
    x->len = (size_t)lld * (size_t)(x->locc > 1 ? x->locc : 1);
    x->d = malloc(x->len * sizeof(double));
    for (size_t e = 0; e < x->len; e++) {
        int r = (int)(e % (size_t)lld), c = (int)(e / (size_t)lld);
        x->d[e] = r < x->locr && c < x->locc
                      ? value(seed, rsrc < 0 ? r : global_index(r, nb, pr, rsrc, P),
                              global_index(c, nb, pc, 0, Q))
                      : 777;
    }
}

static double *clone(const mat *x)
{
    double *c = malloc(x->len * sizeof(double));
    memcpy(c, x->d, x->len * sizeof(double));
    return c;
}

/* One call's scalars; the descriptors are the matrices'. */
typedef struct {
    char ta, tb;
    int m, n, k, ia, ja, ib, jb, ic, jc;
    double alpha, beta;
} args;

static void call(pgemm_fn *f, const args *a, const mat *A, const mat *B, const int *descc,
                 double *C)
{
    f(&a->ta, &a->tb, &a->m, &a->n, &a->k, &a->alpha, A->d, &a->ia, &a->ja, A->desc, B->d, &a->ib,
      &a->jb, B->desc, &a->beta, C, &a->ic, &a->jc, descc);
}

/* dd_pgemm on MPI_COMM_WORLD with dd's form of the same descriptors. */
static int dd_number(dd_context *ctx, const args *a, const mat *A, const mat *B, const mat *C,
                     int P, int Q)
{
    dd_matrix_desc d[3];
    const mat *x[3] = {A, B, C};
    for (int i = 0; i < 3; i++) {
        const int *s = x[i]->desc;
        /* DTYPE_ 1 is the block-cyclic layout; any other stays bad */
        int layout = s[0] == 1 ? DD_LAYOUT_BLOCK_CYCLIC : s[0] == 2 ? 99 : s[0];
        d[i] = (dd_matrix_desc){layout, s[2], s[3], s[4], s[5], s[6], s[7], s[8], P, Q, 'R'};
    }
    double *c = clone(C);
    dd_gemm_info info = {0};
    dd_status st =
        dd_pgemm(ctx, a->ta, a->tb, a->m, a->n, a->k, a->alpha, A->d, a->ia, a->ja, &d[0], B->d,
                 a->ib, a->jb, &d[1], a->beta, c, a->ic, a->jc, &d[2], &info);
    CHECK(!memcmp(c, C->d, C->len * sizeof(double)), "dd_pgemm refused but changed C");
    free(c);
    return st == DD_ERROR_USAGE ? info.bad_argument : -1;
}

/* A faulty call: PBLAS's number (the oracle, checked against want where
 * want > 0), the drop-in's through PXERBLA, and dd_pgemm's where ctx is
 * given; C untouched. */
static void refusal(const char *what, const args *a, const mat *A, const mat *B, const mat *C,
                    int want, dd_context *ctx, int P, int Q)
{
    cabort_calls = 0, cabort_number = 0, pblas_warning[0] = 0;
    double *c = clone(C);
    call(real_pdgemm, a, A, B, C->desc, c);
    int pblas = cabort_number;
    CHECK(cabort_calls == 1 && pblas > 0, "%s: ScaLAPACK's pdgemm_ reported nothing (%d calls)",
          what, cabort_calls);
    if (want > 0)
        CHECK(pblas == want, "%s: PBLAS says %d (%s), the test expects %d", what, pblas,
              pblas_warning, want);
    xerbla_calls = 0, xerbla_number = 0, cabort_calls = 0, cabort_number = 0;
    memcpy(c, C->d, C->len * sizeof(double));
    call((pgemm_fn *)pdgemm_, a, A, B, C->desc, c);
    CHECK(xerbla_calls == 0, "%s: the drop-in called PXERBLA (%d times, last with %d)", what,
          xerbla_calls, xerbla_number);
    if (errors_return)
        CHECK(cabort_calls == 0, "%s: DD_SCALAPACK_ERRORS=return, yet PB_Cabort was called", what);
    else
        CHECK(cabort_calls == 1 && cabort_number == pblas,
              "%s: the drop-in called PB_Cabort %d times, last with %d; PBLAS says %d (%s)", what,
              cabort_calls, -cabort_number, -pblas, pblas_warning);
    CHECK(dd_scalapack_last_info() == -pblas, "%s: dd_scalapack_last_info() %d, PBLAS says %d",
          what, dd_scalapack_last_info(), -pblas);
    CHECK(!memcmp(c, C->d, C->len * sizeof(double)), "%s: the drop-in changed C", what);
    free(c);
    if (ctx) {
        int n = dd_number(ctx, a, A, B, C, P, Q);
        CHECK(n == pblas, "%s: dd_pgemm's bad_argument %d, PBLAS says %d (%s)", what, n, pblas,
              pblas_warning);
    }
    g_cases++;
}

static const args good = {'N', 'N', 16, 16, 16, 1, 1, 1, 1, 1, 1, 1.5, -0.5};

/* CTXT_ faults; grid: the call's grid (P x P); the others: this process's
 * handles (sub -1 when not made). */
static void contexts(int grid, int foreign, int sub, int stale, int P)
{
    static const char *names[3] = {"A", "B", "C"};
    static const int pos[3] = {10, 14, 19};
    mat x[3];
    mat_make(&x[0], grid, 16, 16, 4, 0, 11);
    mat_make(&x[1], grid, 16, 16, 4, 0, 22);
    mat_make(&x[2], grid, 16, 16, 4, 0, 33);
    struct {
        const char *what;
        int handle, want_a; /* PBLAS's number for A's; B's and C's are 1402, 1902 */
    } kinds[] = {{"released by Cblacs_gridexit", stale, 1002},
                 {"another grid's (same shape, column order)", foreign, 1402},
                 {"-1", -1, 1002},
                 {"12345 (never a handle)", 12345, 1002},
                 /* ranks 0, 1 are in it, and for a 1x2 grid A's LLD_ is short
                  * where it was made for 2 process rows; the others hold -1 */
                 {"a 1x2 grid's (ranks 0 and 1)", sub,
                  g_rank >= 2 ? 1002
                  : P > 1     ? 1011
                              : 1402}};
    int nkinds = g_size > 1 ? 5 : 4;
    for (int k = 0; k < nkinds; k++)
        for (int i = 0; i < 3; i++) {
            char what[160];
            snprintf(what, sizeof what, "CTXT_ of DESC%s %s", names[i], kinds[k].what);
            int save = x[i].desc[1];
            x[i].desc[1] = kinds[k].handle;
            refusal(what, &good, &x[0], &x[1], &x[2], i ? pos[i] * 100 + 2 : kinds[k].want_a, NULL,
                    0, 0);
            x[i].desc[1] = save;
            MPI_Barrier(g_grid);
        }
    for (int i = 0; i < 3; i++)
        x[i].desc[1] = stale;
    refusal("CTXT_ of all three released by Cblacs_gridexit", &good, &x[0], &x[1], &x[2], 1002,
            NULL, 0, 0);
    for (int i = 0; i < 3; i++)
        free(x[i].d);
}

/* DESCB's DTYPE_ or CTXT_ wrong on one process of the grid only (the
 * last): ScaLAPACK cannot be the oracle (its other processes would go on
 * into the multiply), so the drop-in alone: the fault is agreed over
 * DESCA's grid, every process refuses with it (1401, 1402), none is left
 * in a collective (the test's timeout), C unchanged everywhere. */
static void one_process(int grid)
{
    int gsize = 1, grank = 0;
    MPI_Comm_size(g_grid, &gsize);
    MPI_Comm_rank(g_grid, &grank);
    mat x[3];
    mat_make(&x[0], grid, 16, 16, 4, 0, 11);
    mat_make(&x[1], grid, 16, 16, 4, 0, 22);
    mat_make(&x[2], grid, 16, 16, 4, 0, 33);
    static const struct {
        int entry, value, want;
    } faults[] = {{0, 3, 1401}, {1, 12345, 1402}};
    for (int f = 0; f < 2; f++) {
        int save = x[1].desc[faults[f].entry];
        if (grank == gsize - 1)
            x[1].desc[faults[f].entry] = faults[f].value;
        xerbla_calls = 0, cabort_calls = 0, cabort_number = 0;
        double *c = clone(&x[2]);
        call((pgemm_fn *)pdgemm_, &good, &x[0], &x[1], x[2].desc, c);
        const char *what = f ? "DESCB's CTXT_ 12345 on the last process only"
                             : "DESCB's DTYPE_ 3 on the last process only";
        CHECK(xerbla_calls == 0, "%s: the drop-in called PXERBLA", what);
        if (!errors_return)
            CHECK(cabort_calls == 1 && cabort_number == faults[f].want,
                  "%s: PB_Cabort %d times, last with %d; want -%d everywhere", what, cabort_calls,
                  -cabort_number, faults[f].want);
        CHECK(dd_scalapack_last_info() == -faults[f].want,
              "%s: dd_scalapack_last_info() %d, want -%d on every process", what,
              dd_scalapack_last_info(), faults[f].want);
        CHECK(!memcmp(c, x[2].d, x[2].len * sizeof(double)), "%s: the drop-in changed C", what);
        free(c);
        x[1].desc[faults[f].entry] = save;
        g_cases++;
        MPI_Barrier(g_grid);
    }
    for (int i = 0; i < 3; i++)
        free(x[i].d);
}

/* Every descriptor entry and every scalar, one fault at a time. */
static void fields(int grid, int P, int Q, dd_context *ctx)
{
    static const char *names[3] = {"A", "B", "C"};
    static const int pos[3] = {10, 14, 19};
    mat x[3];
    mat_make(&x[0], grid, 16, 16, 4, 0, 11);
    mat_make(&x[1], grid, 16, 16, 4, 0, 22);
    mat_make(&x[2], grid, 16, 16, 4, 0, 33);
    int rows = x[0].locr; /* the same on every process: 16 rows in blocks of 4 */
    struct {
        const char *what;
        int entry, value, number; /* entry of the 9; number: PBLAS's entry */
    } bad[] = {{"DTYPE_ = 7", 0, 7, 1},
               {"DTYPE_ = 0", 0, 0, 1},
               {"M_ = -1", 2, -1, 3},
               {"M_ = 0 (sub() not empty)", 2, 0, 3},
               {"N_ = -1", 3, -1, 4},
               {"N_ = 0 (sub() not empty)", 3, 0, 4},
               {"MB_ = 0", 4, 0, 5},
               {"MB_ = -2", 4, -2, 5},
               {"NB_ = 0", 5, 0, 6},
               {"RSRC_ = nprow", 6, P, 9},
               {"RSRC_ = -2", 6, -2, 9},
               {"CSRC_ = npcol", 7, Q, 10},
               {"CSRC_ = -2", 7, -2, 10},
               {"LLD_ = 0", 8, 0, 11},
               {"LLD_ = local rows - 1", 8, rows - 1, 11}};
    for (int i = 0; i < 3; i++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char what[120];
            snprintf(what, sizeof what, "DESC%s's %s", names[i], bad[b].what);
            int save = x[i].desc[bad[b].entry];
            x[i].desc[bad[b].entry] = bad[b].value;
            refusal(what, &good, &x[0], &x[1], &x[2], pos[i] * 100 + bad[b].number, ctx, P, Q);
            x[i].desc[bad[b].entry] = save;
            MPI_Barrier(g_grid);
        }
    /* the 11-entry form (DTYPE_ 2), every entry: its number is its place */
    struct {
        const char *what;
        int entry, value; /* entry of the 11, from 0; PBLAS's number entry + 1 */
    } bad11[] = {{"DTYPE_ = 7", 0, 7},
                 {"M_ = -1", 2, -1},
                 {"N_ = 0 (sub() not empty)", 3, 0},
                 {"IMB_ = 0", 4, 0},
                 {"INB_ = -2", 5, -2},
                 {"MB_ = 0", 6, 0},
                 {"NB_ = -2", 7, -2},
                 {"RSRC_ = nprow", 8, P},
                 {"CSRC_ = -2", 9, -2},
                 {"LLD_ = 0", 10, 0},
                 {"LLD_ = local rows - 1", 10, rows - 1}};
    for (int i = 0; i < 3; i++)
        for (size_t b = 0; b < sizeof bad11 / sizeof bad11[0]; b++) {
            int d9[9], save[11];
            memcpy(d9, x[i].desc, sizeof d9);
            memcpy(save, x[i].desc, sizeof save);
            int d11[11] = {2, d9[1], d9[2], d9[3], d9[4], d9[5], d9[4], d9[5], d9[6], d9[7], d9[8]};
            d11[bad11[b].entry] = bad11[b].value;
            memcpy(x[i].desc, d11, sizeof d11);
            char what[120];
            snprintf(what, sizeof what, "DESC%s's (11 entries) %s", names[i], bad11[b].what);
            refusal(what, &good, &x[0], &x[1], &x[2], pos[i] * 100 + bad11[b].entry + 1, NULL, 0,
                    0);
            memcpy(x[i].desc, save, sizeof save);
            MPI_Barrier(g_grid);
        }
    /* the scalars: position in PDGEMM's list */
    struct {
        const char *what;
        args a;
        int number;
    } sc[] = {
        {"TRANSA = 'X'", {'X', 'N', 16, 16, 16, 1, 1, 1, 1, 1, 1, 1, 0}, 1},
        {"TRANSB = 'x'", {'N', 'x', 16, 16, 16, 1, 1, 1, 1, 1, 1, 1, 0}, 2},
        {"M = -1", {'N', 'N', -1, 16, 16, 1, 1, 1, 1, 1, 1, 1, 0}, 3},
        {"N = -1", {'N', 'N', 16, -1, 16, 1, 1, 1, 1, 1, 1, 1, 0}, 4},
        {"K = -1", {'N', 'N', 16, 16, -1, 1, 1, 1, 1, 1, 1, 1, 0}, 5},
        {"IA = 0", {'N', 'N', 16, 16, 16, 0, 1, 1, 1, 1, 1, 1, 0}, 8},
        {"JA = 0", {'N', 'N', 16, 16, 16, 1, 0, 1, 1, 1, 1, 1, 0}, 9},
        {"IB = 0", {'N', 'N', 16, 16, 16, 1, 1, 0, 1, 1, 1, 1, 0}, 12},
        {"JB = 0", {'N', 'N', 16, 16, 16, 1, 1, 1, 0, 1, 1, 1, 0}, 13},
        {"IC = 0", {'N', 'N', 16, 16, 16, 1, 1, 1, 1, 0, 1, 1, 0}, 17},
        {"JC = 0", {'N', 'N', 16, 16, 16, 1, 1, 1, 1, 1, 0, 1, 0}, 18},
        {"IA + M - 1 > M_A", {'N', 'N', 16, 16, 8, 2, 1, 1, 1, 1, 1, 1, 0}, 8},
        {"JA + K - 1 > N_A", {'N', 'N', 8, 16, 16, 1, 2, 1, 1, 1, 1, 1, 0}, 9},
        {"IA + K - 1 > M_A (TRANSA T)", {'T', 'N', 8, 16, 16, 2, 1, 1, 1, 1, 1, 1, 0}, 8},
        {"IB + K - 1 > M_B", {'N', 'N', 8, 8, 16, 1, 1, 2, 1, 1, 1, 1, 0}, 12},
        {"JB + N - 1 > N_B", {'N', 'N', 8, 16, 8, 1, 1, 1, 2, 1, 1, 1, 0}, 13},
        {"JB + K - 1 > N_B (TRANSB C)", {'N', 'C', 8, 8, 16, 1, 1, 1, 2, 1, 1, 1, 0}, 13},
        {"IC + M - 1 > M_C", {'N', 'N', 16, 8, 8, 1, 1, 1, 1, 2, 1, 1, 0}, 17},
        {"JC + N - 1 > N_C", {'N', 'N', 8, 16, 8, 1, 1, 1, 1, 1, 2, 1, 0}, 18},
    };
    for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
        refusal(sc[s].what, &sc[s].a, &x[0], &x[1], &x[2], sc[s].number, ctx, P, Q);
        MPI_Barrier(g_grid);
    }
    for (int i = 0; i < 3; i++)
        free(x[i].d);
}

/* |got - want| within the rounding of a k-term sum inside sub(C); equal elsewhere. */
static void compare(const char *what, const double *want, const double *got, size_t len, int k,
                    int exact)
{
    double tol = 8.0 * (k + 1) * DBL_EPSILON * (1.5 * k + 0.5);
    size_t bad = 0;
    for (size_t e = 0; e < len; e++)
        if (exact ? memcmp(&want[e], &got[e], sizeof(double)) != 0
                  : !(fabs(want[e] - got[e]) <= tol))
            bad++;
    CHECK(bad == 0, "%s: %zu of %zu local elements differ from ScaLAPACK's%s", what, bad, len,
          exact ? " (bit for bit)" : "");
}

/* Processes outside a grid (their handle -1) get PBLAS's number while the
 * grid's processes compute; calls PBLAS accepts give its result. */
static void served(int grid, int sub)
{
    if (g_size > 1) { /* processes 2.. are outside sub's 1x2 grid: their handle is -1 */
        mat A, B, C;
        mat_make(&A, sub, 16, 16, 4, 0, 11);
        mat_make(&B, sub, 16, 16, 4, 0, 22);
        mat_make(&C, sub, 16, 16, 4, 0, 33);
        CHECK((g_rank < 2) == (C.desc[1] >= 0), "1x2 grid: rank %d has handle %d", g_rank,
              C.desc[1]);
        double *want = clone(&C), *got = clone(&C);
        cabort_calls = 0, cabort_number = 0;
        call(real_pdgemm, &good, &A, &B, C.desc, want);
        int pblas = cabort_calls ? cabort_number : 0;
        CHECK(pblas == (g_rank < 2 ? 0 : 1002), "1x2 grid, rank %d: PBLAS says %d", g_rank, pblas);
        xerbla_calls = 0, cabort_calls = 0, cabort_number = 0;
        call((pgemm_fn *)pdgemm_, &good, &A, &B, C.desc, got);
        CHECK(xerbla_calls == 0, "1x2 grid, rank %d: PXERBLA called (%d)", g_rank, xerbla_number);
        CHECK(errors_return ? cabort_calls == 0 : (cabort_calls ? cabort_number : 0) == pblas,
              "1x2 grid, rank %d: the drop-in called PB_Cabort %d times with %d; PBLAS says %d",
              g_rank, cabort_calls, cabort_number, pblas);
        CHECK(dd_scalapack_last_info() == -pblas, "1x2 grid, rank %d: last info %d, PBLAS %d",
              g_rank, dd_scalapack_last_info(), -pblas);
        compare(g_rank < 2 ? "1x2 grid, inside" : "1x2 grid, outside (must be untouched)", want,
                got, C.len, 16, g_rank >= 2);
        free(want), free(got), free(A.d), free(B.d), free(C.d);
        g_cases++;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int P, Q, pr, pc;
    Cblacs_gridinfo(grid, &P, &Q, &pr, &pc);
    if (pr < 0)
        return;
    for (int kind = 0; kind < 2; kind++) {
        mat A, B, C;
        mat_make(&A, grid, 16, 16, 4, kind == 0 ? -1 : 0, 11); /* RSRC_ -1: replicated rows */
        mat_make(&B, grid, 16, 16, 4, 0, 22);
        mat_make(&C, grid, 16, 16, 4, 0, 33);
        if (kind == 1) { /* the 11-entry form of B's descriptor */
            int d9[9];
            memcpy(d9, B.desc, sizeof d9);
            int d11[11] = {2, d9[1], d9[2], d9[3], d9[4], d9[5], d9[4], d9[5], d9[6], d9[7], d9[8]};
            memcpy(B.desc, d11, sizeof d11);
        }
        const char *what = kind == 0 ? "RSRC_A = -1 (replicated)" : "DTYPE_B = 2 (11 entries)";
        double *want = clone(&C), *got = clone(&C);
        cabort_calls = 0;
        call(real_pdgemm, &good, &A, &B, C.desc, want);
        CHECK(cabort_calls == 0, "%s: ScaLAPACK refuses it (%d: %s)", what, cabort_number,
              pblas_warning);
        xerbla_calls = 0, cabort_calls = 0;
        long before = dd_scalapack_calls();
        call((pgemm_fn *)pdgemm_, &good, &A, &B, C.desc, got);
        CHECK(xerbla_calls == 0 && cabort_calls == 0, "%s: the drop-in refuses it (%d, %d)", what,
              xerbla_number, cabort_number);
        /* handed to ScaLAPACK: the same bits; served: the same within rounding */
        compare(what, want, got, C.len, 16, kind == 0);
        CHECK((dd_scalapack_calls() > before) == (kind == 1), "%s: %s by dgemm-dist", what,
              kind == 1 ? "not served" : "served");
        free(want), free(got), free(A.d), free(B.d), free(C.d);
        g_cases++;
    }
}

/* fd 2 into a temporary file around one call: how often `line` appears. */
static int lines_printed(const char *line, const args *a, const mat *A, const mat *B, const mat *C)
{
    FILE *f = tmpfile();
    int saved = dup(2);
    if (!f || saved < 0) {
        CHECK(0, "cannot capture stderr");
        return -1;
    }
    fflush(stderr);
    dup2(fileno(f), 2);
    double *c = clone(C);
    call((pgemm_fn *)pdgemm_, a, A, B, C->desc, c);
    free(c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[8192];
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    int count = 0;
    for (const char *s = buf; (s = strstr(s, line)); s++)
        count++;
    return count;
}

/* The drop-in's line: PB_Cabort's wording, once over the grid's processes. */
static void message(int grid, int stale)
{
    mat x[3];
    mat_make(&x[0], grid, 16, 16, 4, 0, 11);
    mat_make(&x[1], grid, 16, 16, 4, 0, 22);
    mat_make(&x[2], grid, 16, 16, 4, 0, 33);
    struct {
        const char *what, *line;
        int entry, value; /* of DESCA; entry -1: none */
        args a;
    } cases[] = {
        {"LLD_A = 0",
         "dgemm-dist-scalapack: PDGEMM: parameter number 10 (DESCA), entry number 11 (LLD_) had "
         "an illegal value: ",
         8, 0, good},
        {"stale CTXT_A",
         "dgemm-dist-scalapack: PDGEMM: parameter number 10 (DESCA), entry number 2 (CTXT_) had "
         "an illegal value: DESCA's CTXT_ = ",
         1, stale, good},
        {"M = -1",
         "dgemm-dist-scalapack: PDGEMM: parameter number 3 (M) had an illegal value: ",
         -1,
         0,
         {'N', 'N', -1, 16, 16, 1, 1, 1, 1, 1, 1, 1, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int e = cases[i].entry, save = e >= 0 ? x[0].desc[e] : 0;
        if (e >= 0)
            x[0].desc[e] = cases[i].value;
        int mine = lines_printed(cases[i].line, &cases[i].a, &x[0], &x[1], &x[2]), all = 0;
        if (e >= 0)
            x[0].desc[e] = save;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, g_grid);
        CHECK(all == 1, "%s: the line \"%s\" printed %d times over the ranks, want once",
              cases[i].what, cases[i].line, all);
        g_cases++;
    }
    for (int i = 0; i < 3; i++)
        free(x[i].d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *mode = getenv("DD_SCALAPACK_ERRORS");
    errors_return = mode && !strcmp(mode, "return");
    void *h = dlopen(DD_SCALAPACK_LIB, RTLD_NOW | RTLD_GLOBAL);
    real_pdgemm = h ? (pgemm_fn *)dlsym(h, "pdgemm_") : NULL;
    if (!real_pdgemm || real_pdgemm == (pgemm_fn *)pdgemm_) {
        fprintf(stderr, "test_pdgemm_faults: ScaLAPACK's own pdgemm_ not found in %s\n",
                DD_SCALAPACK_LIB);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int P = g_size >= 4 ? 2 : 1, Q = P;
    /* the call's grid, another of the same shape, a 1x2 one (ranks 0, 1),
     * and one released at once (made last, so that no grid takes its slot) */
    int grid, foreign, sub = -1, stale;
    Cblacs_get(-1, 0, &grid);
    Cblacs_gridinit(&grid, "R", P, Q);
    Cblacs_get(-1, 0, &foreign);
    Cblacs_gridinit(&foreign, "C", P, Q);
    if (g_size > 1) {
        Cblacs_get(-1, 0, &sub);
        Cblacs_gridinit(&sub, "R", 1, 2);
    }
    Cblacs_get(-1, 0, &stale);
    Cblacs_gridinit(&stale, "R", P, Q);
    if (stale >= 0)
        Cblacs_gridexit(stale);
    if (MPI_Comm_split(MPI_COMM_WORLD, grid >= 0, g_rank, &g_grid) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    dd_context *ctx = NULL;
    if (P * Q == g_size) {
        dd_context_options o;
        dd_context_options_init(&o);
        o.backend = "cpu";
        char msg[256];
        if (dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg) != DD_SUCCESS)
            CHECK(0, "dd_context_create: %s", msg);
    }
    if (grid >= 0) { /* processes past the grid (2, 3 ranks; 5 and more) wait in served() */
        contexts(grid, foreign, sub, stale, P);
        one_process(grid);
        fields(grid, P, Q, ctx);
        message(grid, stale);
    }
    served(grid, sub);
    dd_context_destroy(ctx);
    MPI_Comm_free(&g_grid);
    int fails = 0, cases = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&g_cases, &cases, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_pdgemm_faults%s: %d rank%s, %d case-runs over the ranks, %s\n",
               errors_return ? " (DD_SCALAPACK_ERRORS=return)" : "", g_size, g_size == 1 ? "" : "s",
               cases, fails ? "FAILED" : "all passed");
    MPI_Finalize();
    return fails != 0;
}
