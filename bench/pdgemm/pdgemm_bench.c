/* pdgemm_bench.c — the pdgemm_ drop-in (libdgemm-dist-scalapack) against
 * ScaLAPACK's own pdgemm_ on the same block-cyclic data (not a test).
 *
 *   mpirun -n 4 pdgemm-bench --n 4096 --nb 64 [--reps 3] [--which both|dd|scalapack]
 *                            [--dtype f64|f32|c128|c64] [--json FILE] [--tag TEXT]
 *
 * The ranks form the most nearly square BLACS grid P×Q (P <= Q, row-major);
 * A and B n×n, seeded uniform [-1, 1) (complex: real and imaginary parts
 * each), blocks nb×nb; C = A·B (alpha 1, beta 0).  Each implementation: one
 * warm-up call, then --reps calls timed from a barrier to the slowest
 * rank's return; the median is reported.  The drop-in's C is compared with
 * ScaLAPACK's (when both run): the largest difference of a real or
 * imaginary part / (n·eps·max|A|·max|B|) must stay below 16 (max|A|·max|B|
 * is 1 for the real types, 2 for complex), else no time is printed and the
 * exit status is 1.  One table line per implementation on rank 0 and, with
 * --json, one JSON Lines record each (--tag: a label it carries).  --dtype
 * f32: psgemm_; c128: pzgemm_; c64: pcgemm_.  GFLOP/s counts 2·n³ flops
 * for the real types and 8·n³ for complex (a complex multiply-add is 8 real
 * flops); the record's "flops_per_multiply_add" says which.  The drop-in's
 * backend is
 * DD_SCALAPACK_BACKEND's (default auto: CUDA where every rank
 * has a GPU; the knob of src/base/dd_knobs.h). */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "dd_json.h"
#include "dd_knobs.h"

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np);
typedef void pdgemm_fn(const char *, const char *, const int *, const int *, const int *,
                       const double *, const double *, const int *, const int *, const int *,
                       const double *, const int *, const int *, const int *, const double *,
                       double *, const int *, const int *, const int *);
pdgemm_fn pdgemm_;
typedef void psgemm_fn(const char *, const char *, const int *, const int *, const int *,
                       const float *, const float *, const int *, const int *, const int *,
                       const float *, const int *, const int *, const int *, const float *,
                       float *, const int *, const int *, const int *);
psgemm_fn psgemm_;
/* pzgemm_ and pcgemm_: the same arguments, each element and alpha, beta a
 * (real, imaginary) pair of doubles (pzgemm_) or floats (pcgemm_). */
pdgemm_fn pzgemm_;
psgemm_fn pcgemm_;

/* --dtype: element type and the routine of each */
enum { T_F64, T_F32, T_C128, T_C64 };
static const char *const DTYPES[4] = {"f64", "f32", "c128", "c64"};
static const char *const ROUTINES[4] = {"pdgemm_", "psgemm_", "pzgemm_", "pcgemm_"};

static double uniform(uint64_t i, uint64_t j, uint64_t seed)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL ^ (i * 0xbf58476d1ce4e5b9ULL + j);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ULL << 52) - 1.0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One call of the routine f, C = A·B: dbl, the double routines (pdgemm_,
 * pzgemm_), else the float ones.  alpha = 1 and beta = 0 as pairs (1, 0)
 * and (0, 0): a real routine reads the first of each, a complex one both. */
static void call(void *f, int dbl, int n, const void *A, const void *B, void *C, const int *desc)
{
    int i1 = 1;
    if (dbl) {
        double one[2] = {1, 0}, zero[2] = {0, 0};
        ((pdgemm_fn *)f)("N", "N", &n, &n, &n, one, A, &i1, &i1, desc, B, &i1, &i1, desc, zero, C,
                         &i1, &i1, desc);
    } else {
        float one[2] = {1, 0}, zero[2] = {0, 0};
        ((psgemm_fn *)f)("N", "N", &n, &n, &n, one, A, &i1, &i1, desc, B, &i1, &i1, desc, zero, C,
                         &i1, &i1, desc);
    }
}

/* reps timed calls (after one warm-up): the median of the slowest rank's times */
static double timed(void *f, int dbl, int n, const void *A, const void *B, void *C,
                    const int *desc, int reps)
{
    double t[64];
    for (int r = -1; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        call(f, dbl, n, A, B, C, desc);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            t[r] = mx;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    return t[reps / 2];
}

/* Component i (a real element, or one part of a complex one) of a double
 * (dbl) or float array. */
static double at(const void *p, int dbl, size_t i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void set(void *p, int dbl, size_t i, double v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static const char USAGE[] =
    "usage: mpirun -n 4 pdgemm-bench [--n N] [--nb NB] [--reps 1..64] [--which both|dd|scalapack]\n"
    "                                [--dtype f64|f32|c128|c64] [--json FILE] [--tag TEXT]\n";

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = 2048, nb = 64, reps = 3, zero = 0, which = 0, dtype = 0;
    const char *json = NULL, *tag = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const bench_opt table[] = {
        {"--n", BENCH_INT, &n, 1, 1 << 20, 0, 0, NULL, NULL},
        {"--nb", BENCH_INT, &nb, 1, 1 << 20, 0, 0, NULL, NULL},
        {"--reps", BENCH_INT, &reps, 1, 64, 0, 0, NULL, NULL},
        {"--which", BENCH_CHOICE, &which, 0, 0, 0, 0, "both|dd|scalapack", NULL},
        {"--dtype", BENCH_CHOICE, &dtype, 0, 0, 0, 0, "f64|f32|c128|c64", NULL},
        {"--json", BENCH_STRING, &json, 0, 0, 0, 0, NULL, NULL},
        {"--tag", BENCH_STRING, &tag, 0, 0, 0, 0, NULL, NULL},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    int prc = bench_parse("pdgemm-bench", USAGE, table, argc, argv, rank == 0 ? stderr : NULL);
    if (prc != BENCH_GO) {
        MPI_Finalize();
        return prc;
    }
    int P = 1, Q, ctxt, pr, pc;
    for (int p = 1; p * p <= size; p++)
        if (size % p == 0)
            P = p;
    Q = size / P;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "R", P, Q);
    Cblacs_gridinfo(ctxt, &P, &Q, &pr, &pc);
    int lr = numroc_(&n, &nb, &pr, &zero, &P), lc = numroc_(&n, &nb, &pc, &zero, &Q);
    int lld = lr > 1 ? lr : 1, desc[9] = {1, ctxt, n, n, nb, nb, 0, 0, lld};
    size_t len = (size_t)lld * (size_t)(lc > 1 ? lc : 1);
    /* dbl: double components (f64, c128); cw: components per element (2:
     * complex, real part first) */
    int dbl = dtype == T_F64 || dtype == T_C128, cw = dtype >= T_C128 ? 2 : 1;
    size_t es = (size_t)cw * (dbl ? 8 : 4), nv = len * (size_t)cw;
    void *A = malloc(len * es), *B = malloc(len * es), *C[2] = {calloc(len, es), calloc(len, es)};
    if (!A || !B || !C[0] || !C[1]) {
        fprintf(stderr, "pdgemm-bench: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int c = 0; c < lc; c++)
        for (int r = 0; r < lr; r++) {
            uint64_t i = (uint64_t)(r / nb * P + pr) * nb + r % nb;
            uint64_t j = (uint64_t)(c / nb * Q + pc) * nb + c % nb;
            size_t e = ((size_t)c * lld + r) * (size_t)cw;
            for (int part = 0; part < cw; part++) { /* seeds 1, 2 real parts; 3, 4 imaginary */
                set(A, dbl, e + part, uniform(i, j, 1 + 2 * (uint64_t)part));
                set(B, dbl, e + part, uniform(i, j, 2 + 2 * (uint64_t)part));
            }
        }
    void *h = dlopen(DD_SCALAPACK_LIB, RTLD_NOW | RTLD_GLOBAL);
    const char *sym = ROUTINES[dtype];
    void *const ours[4] = {(void *)pdgemm_, (void *)psgemm_, (void *)pzgemm_, (void *)pcgemm_};
    void *fn[2] = {h ? dlsym(h, sym) : NULL, ours[dtype]};
    const char *names[2] = {"scalapack", "dgemm-dist"};
    int run[2] = {which != 1, which != 2}, fails = 0; /* both, dd, scalapack */
    double sec[2] = {0, 0};
    if (run[0] && !fn[0]) {
        if (!rank)
            fprintf(stderr, "pdgemm-bench: ScaLAPACK's %s not found in %s\n", sym, DD_SCALAPACK_LIB);
        MPI_Finalize();
        return 1;
    }
    for (int i = 0; i < 2; i++)
        if (run[i])
            sec[i] = timed(fn[i], dbl, n, A, B, C[i], desc, reps);
    if (run[0] && run[1]) { /* the two Cs agree */
        double d = 0, all;
        for (size_t i = 0; i < nv; i++)
            d = fmax(d, fabs(at(C[0], dbl, i) - at(C[1], dbl, i)));
        MPI_Allreduce(&d, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        /* max|A|·max|B|: 1 real, |a|, |b| <= sqrt 2 complex */
        fails = !(all / (cw * (double)n * (dbl ? DBL_EPSILON : FLT_EPSILON)) < 16);
        if (!rank && fails)
            fprintf(stderr, "pdgemm-bench: the drop-in's C differs from ScaLAPACK's by %.3g\n",
                    all);
    }
    const char *be = dd_knob_str(DDK_SCALAPACK_BACKEND); /* the drop-in's backend, or NULL */
    for (int i = 0; i < 2 && !rank && !fails; i++) {
        if (!run[i])
            continue;
        int fma = cw == 2 ? 8 : 2; /* real flops per multiply-add */
        double gf = fma * (double)n * n * n / sec[i] / 1e9;
        printf("%-10s %s n %6d  nb %4d  ranks %2d  grid %dx%d  %9.3f s  %9.1f GFLOP/s\n", names[i],
               DTYPES[dtype], n, nb, size, P, Q, sec[i], gf);
        FILE *f = json ? fopen(json, "a") : NULL;
        if (f) {
            char grid[32];
            snprintf(grid, sizeof grid, "%dx%d", P, Q);
            fputs("{\"bench\":\"pdgemm\"", f);
            dd_json_kv_str(f, "impl", names[i]);
            dd_json_kv_str(f, "tag", tag); /* --tag, or null */
            dd_json_kv_str(f, "backend", i ? (be ? be : "auto") : "scalapack");
            dd_json_kv_str(f, "dtype", DTYPES[dtype]);
            dd_json_kv_int(f, "n", n);
            dd_json_kv_int(f, "nb", nb);
            dd_json_kv_int(f, "ranks", size);
            dd_json_kv_str(f, "grid", grid);
            dd_json_kv_int(f, "reps", reps);
            dd_json_kv_num(f, "seconds", sec[i]);
            dd_json_kv_num(f, "gflops", gf);
            dd_json_kv_int(f, "flops_per_multiply_add", fma); /* gflops = this · n³ / s / 1e9 */
            fputs("}\n", f);
            fclose(f);
        } else if (json) {
            fprintf(stderr, "pdgemm-bench: cannot append to %s\n", json);
        }
    }
    if (!rank && run[0] && run[1] && !fails)
        printf("dgemm-dist / ScaLAPACK: %.2fx\n", sec[0] / sec[1]);
    free(A), free(B), free(C[0]), free(C[1]);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return fails;
}
