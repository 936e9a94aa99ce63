/* test_pdgemm.c — libdgemm-dist-scalapack against ScaLAPACK itself.
 *
 * Linked as a ScaLAPACK program would be after relinking: the drop-in
 * before -lscalapack-openmpi, so pdgemm_/psgemm_ are dgemm-dist's; the real
 * routines are taken from the ScaLAPACK library by dlopen/dlsym on its
 * path (DD_SCALAPACK_LIB).  Every case fills two copies of the same
 * block-cyclic data (values a function of the global index, fixed seeds),
 * runs the real routine on one and the drop-in on the other and compares
 * every local element: inside sub(C) within 8·(k+1)·eps·(|alpha|·k·max|A|·
 * max|B| + |beta|·max|C|) (the maxima <= 1: values lie in [-1, 1)),
 * outside it (and in the local arrays' padding)
 * bit for bit.  Where the BLACS grid holds every rank, dd_pgemm (every
 * other case dd_pgemm_device, on the CPU backend) is also
 * called directly on MPI_COMM_WORLD with the grid's order ('R' or 'C').
 *
 * Cases: every grid of 1x1, 1x2, 2x1, 2x2, 2x3, 3x2 that fits the ranks,
 * BLACS order R and C, block sizes 1, 7, 64 (and unequal ones), the four
 * transpose pairs, alpha/beta with beta = 0 on NaN in C, offsets ia, ja,
 * ib, jb, ic, jc other than 1, first blocks off process (0, 0), psgemm_,
 * 11-entry descriptors (DTYPE_ 2) whose first block IMB_ x INB_ is
 * smaller or larger than MB_ x NB_; and on the 1x1 (column order) and 2x2
 * (row order) grids a generated table: each of M, N, K in {1, 3, 8} with
 * transa, transb in {N, T, C}.  pzgemm_ and pcgemm_ against ScaLAPACK's
 * PZGEMM and PCGEMM on cases of each kind (complex alpha and beta, 'C' the
 * conjugate transpose; the imaginary parts other values than the real),
 * and their refusals.  Refusals are PBLAS's: PB_Cabort (defined
 * here, as PBLAS's testers define it) with minus PBLAS's number, never
 * PXERBLA.
 *
 *   test_pdgemm            the oracle cases, then the refusals (run with
 *                          DD_SCALAPACK_BACKEND=cpu: the drop-in serves)
 *   test_pdgemm fallback   DD_SCALAPACK_BACKEND is bad: every call must
 *                          reach ScaLAPACK (dd_scalapack_calls() stays 0)
 *   test_pdgemm handon     DD_SCALAPACK_BACKEND auto on the CPU: every
 *                          call is handed to ScaLAPACK (counted as such)
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"
#include "dgemm_dist_scalapack.h" /* dd_scalapack_calls */

void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np);

typedef void pgemm_fn(const char *, const char *, const int *, const int *, const int *,
                      const void *, const void *, const int *, const int *, const int *,
                      const void *, const int *, const int *, const int *, const void *, void *,
                      const int *, const int *, const int *);
void pdgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
             const double *, const int *, const int *, const int *, const double *, const int *,
             const int *, const int *, const double *, double *, const int *, const int *,
             const int *);
void psgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
             const float *, const int *, const int *, const int *, const float *, const int *,
             const int *, const int *, const float *, float *, const int *, const int *,
             const int *);

static int g_cases, g_last_abort, g_xerbla_calls;
static pgemm_fn *real_pdgemm, *real_psgemm, *real_pzgemm, *real_pcgemm;

/* PBLAS's error handler: ours, so a refusal is seen (ScaLAPACK's would
 * abort the job); its number as PBLAS passes it, negative. */
void PB_Cabort(int ictxt, const char *rout, int info)
{
    (void)ictxt, (void)rout;
    g_last_abort = info;
}

/* PBLAS never calls PXERBLA for PDGEMM: nor may the drop-in. */
void pxerbla_(const int *ictxt, const char *name, const int *info, size_t len)
{
    (void)ictxt, (void)name, (void)info, (void)len;
    g_xerbla_calls++;
}

/* A value in [-1, 1) from (seed, i, j): a splitmix64 step. */
static double value(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 0xbf58476d1ce4e5b9ULL +
                 (uint64_t)j * 0x94d049bb133111ebULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ULL << 52) - 1.0;
}

/* One process's local array of a block-cyclic matrix: its descriptor
 * (9 entries, or 11 where the first block is imb x inb, DTYPE_ 2). */
typedef struct {
    int desc[11];
    int imb, inb, mb, nb, rsrc, csrc;
    int locr, locc, lld;
    double *d;
    float *f;
    double *z; /* complex: (re, im) pairs, the imaginary parts from another seed */
    float *c;
} mat;

/* Whole index of local index l: a first block of ib, then blocks of nb,
 * from src over np (ib = nb: NUMROC's plain layout). */
static int64_t global_index(int l, int ib, int nb, int me, int src, int np)
{
    int dist = (me - src + np) % np;
    if (dist == 0 && l < ib)
        return l;
    if (dist == 0) /* block (j + 1)·np after the first, j = (l - ib) / nb */
        return ib + ((int64_t)((l - ib) / nb + 1) * np - 1) * nb + (l - ib) % nb;
    return ib + ((int64_t)(l / nb) * np + dist - 1) * nb + l % nb;
}

/* How many of n indices (first block ib, then nb) process me holds. */
static int held(int n, int ib, int nb, int me, int src, int np)
{
    int count = 0;
    for (int l = 0;; l++) { /* local indices map to increasing whole ones */
        int64_t g = global_index(l, ib, nb, me, src, np);
        if (g >= n)
            break;
        count++;
    }
    return count;
}

/* An m×n matrix, first block imb×inb (DTYPE_ 2 when it is not mb×nb),
 * then blocks mb×nb, from (rsrc, csrc), lld padded; values from seed (NaN
 * everywhere when seed is 0), padding 777. */
static void mat_make_first(mat *x, int ctxt, int m, int n, int imb, int inb, int mb, int nb,
                           int rsrc, int csrc, uint64_t seed)
{
    int P, Q, pr, pc;
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    x->imb = imb, x->inb = inb, x->mb = mb, x->nb = nb, x->rsrc = rsrc, x->csrc = csrc;
    x->locr = held(m, imb, mb, pr, rsrc, P);
    x->locc = held(n, inb, nb, pc, csrc, Q);
    if (imb == mb)
        CHECK(x->locr == numroc_(&m, &mb, &pr, &rsrc, &P), "the test's own count of rows");
    x->lld = (x->locr > 1 ? x->locr : 1) + 3;
    if (imb == mb && inb == nb) {
        int d[11] = {1, ctxt, m, n, mb, nb, rsrc, csrc, x->lld, 0, 0};
        memcpy(x->desc, d, sizeof d);
    } else {
        int d[11] = {2, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, x->lld};
        memcpy(x->desc, d, sizeof d);
    }
    size_t len = (size_t)x->lld * (size_t)(x->locc > 1 ? x->locc : 1);
    x->d = malloc(len * sizeof(double));
    x->f = malloc(len * sizeof(float));
    x->z = malloc(2 * len * sizeof(double));
    x->c = malloc(2 * len * sizeof(float));
    for (int c = 0; c < (x->locc > 1 ? x->locc : 1); c++)
        for (int r = 0; r < x->lld; r++) {
            double v = 777, w = -777;
            if (r < x->locr && c < x->locc) {
                int64_t gi = global_index(r, imb, mb, pr, rsrc, P),
                        gj = global_index(c, inb, nb, pc, csrc, Q);
                v = seed ? value(seed, gi, gj) : NAN;
                w = seed ? value(seed + 1000, gi, gj) : NAN;
            }
            size_t at = (size_t)c * x->lld + r;
            x->d[at] = v;
            x->f[at] = (float)v;
            x->z[2 * at] = v, x->z[2 * at + 1] = w;
            x->c[2 * at] = (float)v, x->c[2 * at + 1] = (float)w;
        }
}

static void mat_make(mat *x, int ctxt, int m, int n, int mb, int nb, int rsrc, int csrc,
                     uint64_t seed)
{
    mat_make_first(x, ctxt, m, n, mb, nb, mb, nb, rsrc, csrc, seed);
}

static void mat_copy(mat *dst, const mat *src)
{
    *dst = *src;
    size_t len = (size_t)src->lld * (size_t)(src->locc > 1 ? src->locc : 1);
    dst->d = malloc(len * sizeof(double));
    dst->f = malloc(len * sizeof(float));
    dst->z = malloc(2 * len * sizeof(double));
    dst->c = malloc(2 * len * sizeof(float));
    memcpy(dst->d, src->d, len * sizeof(double));
    memcpy(dst->f, src->f, len * sizeof(float));
    memcpy(dst->z, src->z, 2 * len * sizeof(double));
    memcpy(dst->c, src->c, 2 * len * sizeof(float));
}

static void mat_free(mat *x)
{
    free(x->d);
    free(x->f);
    free(x->z);
    free(x->c);
}

typedef struct {
    char ta, tb;
    int m, n, k, ia, ja, ib, jb, ic, jc;
    double alpha, beta;
    int mbA, nbA, mbB, nbB, mbC, nbC, src; /* src: first blocks on process (1, 1) when it exists */
    int single;
    int first[3][2]; /* A's, B's, C's first block (DTYPE_ 2); 0: MB_ x NB_ */
    int cplx;                 /* 1: pzgemm_ (pcgemm_ with single) */
    double alpha_im, beta_im; /* complex: the imaginary parts */
} pcase;

/* Element at of x's local array in c's type: both parts (im 0 for real). */
static void elem(const mat *x, const pcase *c, size_t at, double v[2])
{
    v[1] = 0;
    if (c->cplx && c->single)
        v[0] = x->c[2 * at], v[1] = x->c[2 * at + 1];
    else if (c->cplx)
        v[0] = x->z[2 * at], v[1] = x->z[2 * at + 1];
    else
        v[0] = c->single ? x->f[at] : x->d[at];
}

/* |got - want| within tol inside sub(C), identical bits outside; returns the worst ratio. */
static double compare(const mat *want, const mat *got, const pcase *c, int ctxt, double tol)
{
    int P, Q, pr, pc;
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    double worst = 0;
    for (int col = 0; col < (got->locc > 1 ? got->locc : 1); col++)
        for (int r = 0; r < got->lld; r++) {
            size_t at = (size_t)col * got->lld + r;
            double wv[2], gv[2];
            elem(want, c, at, wv);
            elem(got, c, at, gv);
            double w = wv[0], g = gv[0];
            int inside = 0;
            if (r < got->locr && col < got->locc) {
                int64_t i = global_index(r, got->imb, got->mb, pr, got->rsrc, P);
                int64_t j = global_index(col, got->inb, got->nb, pc, got->csrc, Q);
                inside = i >= c->ic - 1 && i < c->ic - 1 + c->m && j >= c->jc - 1 &&
                         j < c->jc - 1 + c->n;
            }
            if (inside) {
                double e = isfinite(g) && isfinite(w) && isfinite(gv[1]) && isfinite(wv[1])
                               ? hypot(g - w, gv[1] - wv[1]) / tol
                               : INFINITY;
                worst = e > worst ? e : worst;
            } else if ((memcmp(&w, &g, sizeof w) && !(isnan(w) && isnan(g))) ||
                       (memcmp(&wv[1], &gv[1], sizeof w) && !(isnan(wv[1]) && isnan(gv[1])))) {
                worst = INFINITY; /* an element outside sub(C) changed */
            }
        }
    return worst;
}

static void call(pgemm_fn *f, const pcase *c, mat *A, mat *B, mat *C)
{
    if (c->cplx) { /* COMPLEX*16 or COMPLEX*8: pairs */
        double za[2] = {c->alpha, c->alpha_im}, zb[2] = {c->beta, c->beta_im};
        float ca[2] = {(float)c->alpha, (float)c->alpha_im},
              cb[2] = {(float)c->beta, (float)c->beta_im};
        int s = c->single;
        f(&c->ta, &c->tb, &c->m, &c->n, &c->k, s ? (void *)ca : (void *)za,
          s ? (void *)A->c : (void *)A->z, &c->ia, &c->ja, A->desc, s ? (void *)B->c : (void *)B->z,
          &c->ib, &c->jb, B->desc, s ? (void *)cb : (void *)zb, s ? (void *)C->c : (void *)C->z,
          &c->ic, &c->jc, C->desc);
        return;
    }
    float fa = (float)c->alpha, fb = (float)c->beta;
    f(&c->ta, &c->tb, &c->m, &c->n, &c->k, c->single ? (void *)&fa : (void *)&c->alpha,
      c->single ? (void *)A->f : (void *)A->d, &c->ia, &c->ja, A->desc,
      c->single ? (void *)B->f : (void *)B->d, &c->ib, &c->jb, B->desc,
      c->single ? (void *)&fb : (void *)&c->beta, c->single ? (void *)C->f : (void *)C->d, &c->ic,
      &c->jc, C->desc);
}

/* dd_pgemm on MPI_COMM_WORLD with the BLACS grid's order (grid = every rank). */
static dd_status call_direct(dd_context *ctx, const pcase *c, mat *A, mat *B, mat *C, int P, int Q,
                             char order)
{
    dd_matrix_desc d[3];
    mat *x[3] = {A, B, C};
    for (int i = 0; i < 3; i++) {
        const int *s = x[i]->desc;
        dd_desc_block_cyclic(&d[i], s[2], s[3], s[4], s[5], s[6], s[7], P, Q, order, s[8]);
    }
    /* on the CPU backend host arrays are its "device" arrays: every other
     * direct call goes through dd_pgemm_device, which must give the same
     * (counted here: every rank makes every direct call, unlike the cases
     * of smaller grids) */
    static int direct_calls;
    int dev = !strcmp(dd_context_backend(ctx), "cpu") && (direct_calls++ & 1);
    if (c->cplx && c->single) {
        dd_complex64 al = {(float)c->alpha, (float)c->alpha_im},
                     be = {(float)c->beta, (float)c->beta_im};
        return (dev ? dd_pcgemm_device : dd_pcgemm)(
            ctx, c->ta, c->tb, c->m, c->n, c->k, al, (const dd_complex64 *)A->c, c->ia, c->ja,
            &d[0], (const dd_complex64 *)B->c, c->ib, c->jb, &d[1], be, (dd_complex64 *)C->c,
            c->ic, c->jc, &d[2], NULL);
    }
    if (c->cplx) {
        dd_complex128 al = {c->alpha, c->alpha_im}, be = {c->beta, c->beta_im};
        return (dev ? dd_pzgemm_device : dd_pzgemm)(
            ctx, c->ta, c->tb, c->m, c->n, c->k, al, (const dd_complex128 *)A->z, c->ia, c->ja,
            &d[0], (const dd_complex128 *)B->z, c->ib, c->jb, &d[1], be, (dd_complex128 *)C->z,
            c->ic, c->jc, &d[2], NULL);
    }
    if (c->single)
        return (dev ? dd_psgemm_device : dd_psgemm)(
            ctx, c->ta, c->tb, c->m, c->n, c->k, (float)c->alpha, A->f, c->ia, c->ja, &d[0], B->f,
            c->ib, c->jb, &d[1], (float)c->beta, C->f, c->ic, c->jc, &d[2], NULL);
    return (dev ? dd_pgemm_device : dd_pgemm)(ctx, c->ta, c->tb, c->m, c->n, c->k, c->alpha, A->d,
                                              c->ia, c->ja, &d[0], B->d, c->ib, c->jb, &d[1],
                                              c->beta, C->d, c->ic, c->jc, &d[2], NULL);
}

/* One case on one grid: real, drop-in and (grid = world) dd_pgemm. */
static void run_case(const pcase *c, int ctxt, char order, dd_context *world_ctx)
{
    int P, Q, pr, pc;
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    int ar = c->ta == 'N' ? c->m : c->k, ac = c->ta == 'N' ? c->k : c->m;
    int br = c->tb == 'N' ? c->k : c->n, bc = c->tb == 'N' ? c->n : c->k;
    int rs = c->src && P > 1 ? 1 : 0, cs = c->src && Q > 1 ? Q - 1 : 0;
    mat A, B, C0, C1, C2;
#define FIRST(k, d, b) (c->first[k][d] ? c->first[k][d] : (b))
    mat_make_first(&A, ctxt, c->ia - 1 + ar + 2, c->ja - 1 + ac + 1, FIRST(0, 0, c->mbA),
                   FIRST(0, 1, c->nbA), c->mbA, c->nbA, rs, cs, 11);
    mat_make_first(&B, ctxt, c->ib - 1 + br + 1, c->jb - 1 + bc + 3, FIRST(1, 0, c->mbB),
                   FIRST(1, 1, c->nbB), c->mbB, c->nbB, cs ? 0 : rs, cs, 22);
    mat_make_first(&C0, ctxt, c->ic - 1 + c->m + 1, c->jc - 1 + c->n + 2, FIRST(2, 0, c->mbC),
                   FIRST(2, 1, c->nbC), c->mbC, c->nbC, rs, 0,
                   c->beta == 0 && c->beta_im == 0 ? 0 : 33);
#undef FIRST
    mat_copy(&C1, &C0);
    mat_copy(&C2, &C0);
    if (getenv("DD_TEST_VERBOSE"))
        fprintf(stderr, "[rank %d] grid %dx%d %c %c%c m%d n%d k%d blocks A%dx%d B%dx%d C%dx%d\n",
                g_rank, P, Q, order, c->ta, c->tb, c->m, c->n, c->k, c->mbA, c->nbA, c->mbB, c->nbB,
                c->mbC, c->nbC);
    pgemm_fn *mine = c->cplx ? (c->single ? (pgemm_fn *)pcgemm_ : (pgemm_fn *)pzgemm_)
                             : (c->single ? (pgemm_fn *)psgemm_ : (pgemm_fn *)pdgemm_);
    call(c->cplx ? (c->single ? real_pcgemm : real_pzgemm) : (c->single ? real_psgemm : real_pdgemm),
         c, &A, &B, &C0);
    call(mine, c, &A, &B, &C1);
    /* every value lies in [-1, 1): max|A|, max|B|, max|C| <= 1 (complex:
     * moduli below sqrt 2, a product's below 2, four roundings a term) */
    double eps = c->single ? FLT_EPSILON : DBL_EPSILON, cf = c->cplx ? 4 : 1;
    double tol = 8 * cf * (c->k + 1) * eps *
                     (hypot(c->alpha, c->alpha_im) * c->k + hypot(c->beta, c->beta_im)) +
                 1e-300;
    double e = compare(&C0, &C1, c, ctxt, tol);
    CHECK(e <= 1,
          "%s %dx%d %c %c%c m%d n%d k%d a%g b%g blocks A%dx%d B%dx%d C%dx%d first A%dx%d "
          "B%dx%d C%dx%d off %d,%d %d,%d %d,%d: drop-in vs ScaLAPACK error %.3g x tol",
          c->cplx ? (c->single ? "pcgemm" : "pzgemm") : c->single ? "psgemm" : "pdgemm", P, Q, order, c->ta, c->tb, c->m, c->n, c->k, c->alpha,
          c->beta, c->mbA, c->nbA, c->mbB, c->nbB, c->mbC, c->nbC, A.imb, A.inb, B.imb, B.inb,
          C0.imb, C0.inb, c->ia, c->ja, c->ib, c->jb, c->ic, c->jc, e);
    /* dd_matrix_desc has no first block: the 9-entry cases only */
    if (world_ctx && P * Q == g_size && A.desc[0] == 1 && B.desc[0] == 1 && C0.desc[0] == 1) {
        dd_status st = call_direct(world_ctx, c, &A, &B, &C2, P, Q, order);
        e = compare(&C0, &C2, c, ctxt, tol);
        CHECK(st == DD_SUCCESS && e <= 1,
              "dd_pgemm direct %dx%d %c %c%c: %s (%s), error %.3g x tol", P, Q, order, c->ta, c->tb,
              dd_status_string(st), dd_context_last_error(world_ctx), e);
    }
    g_cases++;
    mat_free(&A), mat_free(&B), mat_free(&C0), mat_free(&C1), mat_free(&C2);
}

/* The cases of one grid: block sizes × transposes, the rest varied by a counter. */
static void grid_cases(int ctxt, char order, dd_context *world_ctx, int quick, int first)
{
    static const int bs[] = {1, 7, 64};
    static const char tr[][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'C'}};
    static const double ab[][2] = {{1, 0}, {-0.5, 2}, {2.5, 1}, {0, 1.5}, {1.25, -1}};
    static const int sizes[][3] = {{37, 29, 23}, {70, 9, 41},  {5, 66, 130},
                                   {1, 1, 1},    {129, 40, 7}, {12, 13, 0}};
    int counter = first; /* the same cases on every process of the grid */
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 4; t++) {
            if (quick && (b + t) % 3)
                continue;
            int n = counter++;
            pcase c = {.ta = tr[t][0], .tb = tr[t][1]};
            const int *sz = sizes[n % 6];
            c.m = sz[0], c.n = sz[1], c.k = sz[2];
            c.alpha = ab[n % 5][0], c.beta = ab[n % 5][1];
            c.ia = 1 + n % 4, c.ja = 1 + (n / 2) % 3, c.ib = 1 + (n / 3) % 3, c.jb = 1 + n % 2;
            c.ic = 1 + (n / 4) % 3, c.jc = 1 + (n + 1) % 3;
            int s = bs[b], s2 = bs[(b + n) % 3];
            c.mbA = s, c.nbA = n % 2 ? s : s2, c.mbB = s2, c.nbB = s, c.mbC = s,
            c.nbC = n % 3 ? s : s2;
            c.src = n % 2;
            c.single = n % 7 == 3 || n % 7 == 5;
            c.cplx = n % 7 >= 4; /* pzgemm_, pcgemm_ (n % 7 = 5): complex scalars */
            if (c.cplx) {
                c.alpha_im = ab[(n + 2) % 5][1] - 1, c.beta_im = ab[(n + 1) % 5][0];
                if (t == 3) /* 'C' on both sides, then each on one */
                    c.ta = 'C';
                else if (t == 1 || t == 2)
                    c.ta == 'N' ? (c.ta = 'C') : (c.tb = 'C');
            }
            run_case(&c, ctxt, order, world_ctx);
        }
    /* Operands laid out as SUMMA needs them (no transposes, offsets 1, A's
     * rows dealt as C's, B's columns as C's): the library multiplies on the
     * local arrays without a redistribution (src/api/api_cyclic.c); K cut
     * alike for A and B, and not. */
    static const int kb[][2] = {{7, 7}, {64, 7}, {1, 64}, {7, 64}};
    for (int i = 0; i < 4; i++) {
        pcase c = {.ta = 'N',
                   .tb = 'N',
                   .m = 70 + i,
                   .n = 41,
                   .k = 130 - i,
                   .ia = 1,
                   .ja = 1,
                   .ib = 1,
                   .jb = 1,
                   .ic = 1,
                   .jc = 1,
                   .alpha = 1.5,
                   .beta = i == 1 ? 0 : -1,
                   .mbA = 7,
                   .nbA = kb[i][0],
                   .mbB = kb[i][1],
                   .nbB = 5,
                   .mbC = 7,
                   .nbC = 5,
                   .src = 0,
                   .single = i == 2,
                   .cplx = i == 3,
                   .alpha_im = i == 3 ? -0.5 : 0,
                   .beta_im = i == 3 ? 2 : 0};
        run_case(&c, ctxt, order, world_ctx);
    }
}

/* 11-entry descriptors (DTYPE_ 2) whose first block differs from the
 * others: smaller, larger (past several blocks), 1, one side only; with
 * offsets inside and past the first block, transposes, every operand. */
static void first_block_cases(int ctxt, char order)
{
    static const int firsts[][3][2] = {
        {{1, 3}, {2, 2}, {3, 1}},    /* smaller than the blocks (4, 5) */
        {{9, 11}, {13, 6}, {10, 7}}, /* larger: past two blocks */
        {{4, 2}, {5, 5}, {4, 5}},    /* one side alike */
        {{1, 1}, {1, 1}, {1, 1}},
    };
    static const char tr[][2] = {{'N', 'N'}, {'T', 'N'}, {'N', 'T'}, {'T', 'C'}};
    for (int f = 0; f < 4; f++)
        for (int t = 0; t < 4; t++) {
            int n = f * 4 + t;
            pcase c = {.ta = tr[t][0], .tb = tr[t][1], .m = 23 + n, .n = 19, .k = 17 + n % 5,
                       .ia = 1 + n % 3 * 4, .ja = 1 + n % 2 * 7, .ib = 1 + (n / 2) % 3 * 5,
                       .jb = 1 + n % 4, .ic = 1 + n % 3 * 6, .jc = 1 + (n + 1) % 2 * 9,
                       .alpha = n % 3 ? 1.5 : -1, .beta = n % 4 ? 0.5 : 0, .mbA = 4, .nbA = 5,
                       .mbB = 5, .nbB = 4, .mbC = 4, .nbC = 4, .src = n % 2, .single = n % 5 == 2};
            memcpy(c.first, firsts[f], sizeof c.first);
            c.cplx = n % 3 == 1; /* pzgemm_, pcgemm_ */
            c.alpha_im = c.cplx ? 0.75 : 0, c.beta_im = c.cplx && c.beta != 0 ? -1 : 0;
            run_case(&c, ctxt, order, NULL);
        }
}

/* A generated table rather than chosen shapes: each of M, N, K in {1, 3, 8}
 * (square op(A) with M = K, M = N = K, K = 1, sizes below the grid's) with
 * transa, transb in {N, T, C}, blocks of 2, offsets 1 and 2 in turn. */
static void sweep_cases(int ctxt, char order, dd_context *world_ctx)
{
    static const int sz[] = {1, 3, 8};
    static const char tr[] = {'N', 'T', 'C'};
    for (int s = 0; s < 27; s++)
        for (int t = 0; t < 9; t++) {
            int n = s * 9 + t, o = 1 + n % 2;
            pcase c = {.ta = tr[t / 3], .tb = tr[t % 3], .m = sz[s / 9], .n = sz[s / 3 % 3],
                       .k = sz[s % 3], .ia = o, .ja = 1, .ib = 1, .jb = o, .ic = o, .jc = o,
                       .alpha = n % 3 ? 1.5 : -1, .beta = n % 4 ? 0 : 0.5, .mbA = 2, .nbA = 2,
                       .mbB = 2, .nbB = 2, .mbC = 2, .nbC = 2, .src = n % 2, .single = 0};
            run_case(&c, ctxt, order, world_ctx);
            /* the same through pzgemm_ and pcgemm_ in turn, complex scalars
             * (alpha 0 with beta 0 once in a while: C's NaN must go) */
            c.cplx = 1, c.single = n % 2;
            c.alpha_im = n % 5 ? 0.5 : 0, c.beta_im = n % 3 ? -2 : 0;
            if (n % 11 == 0)
                c.alpha = c.alpha_im = 0;
            run_case(&c, ctxt, order, world_ctx);
        }
}

/* Bad arguments: minus PBLAS's number through PB_Cabort, C untouched, no
 * crash; through pdgemm_, pzgemm_ (cplx) or pcgemm_ (cplx, single). */
static void refusals(int ctxt, int cplx, int single)
{
    pcase c = {'N', 'N', 20, 16, 12, 1, 1, 1, 1, 1, 1, 1.0, 0.5, 4, 4, 4, 4, 4, 4, 0, single, {{0}},
               cplx, 0.5, -1};
    pgemm_fn *f = !cplx ? (pgemm_fn *)pdgemm_ : single ? (pgemm_fn *)pcgemm_ : (pgemm_fn *)pzgemm_;
    const char *name = !cplx ? "pdgemm_" : single ? "pcgemm_" : "pzgemm_";
    mat A, B, C, C0;
    mat_make(&A, ctxt, 20, 12, 4, 4, 0, 0, 11);
    mat_make(&B, ctxt, 12, 16, 4, 4, 0, 0, 22);
    mat_make(&C, ctxt, 20, 16, 4, 4, 0, 0, 33);
    mat_copy(&C0, &C);
    struct {
        int which, entry, value, want; /* which: 0 A, 1 B, 2 C desc; -1 scalar */
        const char *what;
    } bad[] = {{0, 8, 0, 1011, "LLD_A below the local rows (every process)"},
               {2, 4, 0, 1905, "MB_C = 0"},
               {1, 6, 7, 1409, "RSRC_B outside the grid"},
               {1, 1, 12345, 1402, "CTXT_B not A's"},
               {-1, 3, -1, 3, "M < 0"},
               {-1, 8, 0, 8, "IA = 0"},
               {-1, 17, 20, 17, "IC + M - 1 > M_C"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pcase cc = c;
        mat *x[3] = {&A, &B, &C};
        int save = 0;
        if (bad[i].which >= 0) {
            save = x[bad[i].which]->desc[bad[i].entry];
            x[bad[i].which]->desc[bad[i].entry] = bad[i].value;
        } else if (bad[i].entry == 3) {
            cc.m = bad[i].value;
        } else if (bad[i].entry == 8) {
            cc.ia = bad[i].value;
        } else {
            cc.ic = bad[i].value;
        }
        g_last_abort = 0;
        call(f, &cc, &A, &B, &C);
        CHECK(g_last_abort == -bad[i].want, "%s %s: PB_Cabort got %d, want %d", name, bad[i].what,
              g_last_abort, -bad[i].want);
        if (bad[i].which >= 0)
            x[bad[i].which]->desc[bad[i].entry] = save;
        size_t len = (size_t)C.lld * (size_t)(C.locc > 1 ? C.locc : 1);
        CHECK(!memcmp(C.d, C0.d, sizeof(double) * len) && !memcmp(C.z, C0.z, 2 * sizeof(double) * len) &&
                  !memcmp(C.c, C0.c, 2 * sizeof(float) * len),
              "%s %s: C changed", name, bad[i].what);
    }
    /* and the next good call is served */
    g_last_abort = 0;
    long before = dd_scalapack_calls();
    call(f, &c, &A, &B, &C);
    CHECK(g_last_abort == 0 && dd_scalapack_calls() == before + 1,
          "%s: a good call after refusals: PB_Cabort %d, served %ld", name, g_last_abort,
          dd_scalapack_calls() - before);
    mat_free(&A), mat_free(&B), mat_free(&C), mat_free(&C0);
}

static int find_real(void)
{
    void *h = dlopen(DD_SCALAPACK_LIB, RTLD_NOW | RTLD_GLOBAL);
    real_pdgemm = h ? (pgemm_fn *)dlsym(h, "pdgemm_") : NULL;
    real_psgemm = h ? (pgemm_fn *)dlsym(h, "psgemm_") : NULL;
    real_pzgemm = h ? (pgemm_fn *)dlsym(h, "pzgemm_") : NULL;
    real_pcgemm = h ? (pgemm_fn *)dlsym(h, "pcgemm_") : NULL;
    if (!real_pdgemm || !real_psgemm || !real_pzgemm || !real_pcgemm ||
        real_pdgemm == (pgemm_fn *)pdgemm_ || real_pzgemm == (pgemm_fn *)pzgemm_) {
        fprintf(stderr, "test_pdgemm: ScaLAPACK's own pdgemm_ not found in %s (%s)\n",
                DD_SCALAPACK_LIB, dlerror());
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int fallback = argc > 1 && !strcmp(argv[1], "fallback");
    int handon = argc > 1 && !strcmp(argv[1], "handon");
    if (!find_real()) {
        MPI_Finalize();
        return 1;
    }
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    dd_context *world_ctx = NULL;
    char msg[256];
    if (!fallback && !handon && dd_context_create(MPI_COMM_WORLD, &o, &world_ctx, msg, sizeof msg))
        CHECK(0, "dd_context_create: %s", msg);
    static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 2}};
    int in_grid = 0;
    for (int gi = 0; gi < 6; gi++) {
        if (grids[gi][0] * grids[gi][1] > g_size)
            continue;
        for (int oi = 0; oi < 2; oi++) {
            char order = oi ? 'C' : 'R';
            int ctxt;
            Cblacs_get(-1, 0, &ctxt);
            Cblacs_gridinit(&ctxt, oi ? "C" : "R", grids[gi][0], grids[gi][1]);
            if (ctxt >= 0) {
                in_grid = 1;
                grid_cases(ctxt, order, world_ctx, fallback || handon, (gi * 2 + oi) * 12);
                if (!fallback && !handon && gi == 3 && oi == 0)
                    for (int r = 0; r < 3; r++)
                        refusals(ctxt, r > 0, r == 2);
                if (!fallback && !handon && ((gi == 0 && oi == 1) || (gi == 3 && oi == 0)))
                    sweep_cases(ctxt, order, world_ctx);
                if (!fallback && (gi >= 3 || (gi == 0 && oi == 1)))
                    first_block_cases(ctxt, order);
                Cblacs_gridexit(ctxt);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    long served = dd_scalapack_calls();
    if (fallback)
        CHECK(served == 0, "DD_SCALAPACK_BACKEND bad, yet %ld calls were served by dgemm-dist",
              served);
    else if (handon)
        CHECK(served == 0 && (dd_scalapack_handed_on() > 0 || !in_grid),
              "the CPU backend under auto: %ld calls served by dgemm-dist, %ld handed on", served,
              dd_scalapack_handed_on());
    else
        CHECK(served > 0 || !in_grid, "no call was served by dgemm-dist");
    CHECK(g_xerbla_calls == 0, "PXERBLA was called %d times", g_xerbla_calls);
    dd_context_destroy(world_ctx);
    int fails = 0, cases = 0;
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&g_cases, &cases, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_pdgemm%s: %d rank%s, %d case-runs over the ranks, %s\n",
               fallback ? " fallback" : handon ? " handon" : "", g_size, g_size == 1 ? "" : "s", cases,
               fails ? "FAILED" : "all passed");
    MPI_Finalize();
    return fails != 0;
}
