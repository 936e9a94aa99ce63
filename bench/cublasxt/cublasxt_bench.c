/* cublasxt_bench.c — cuBLASXt GEMM on all visible GPUs (or --gpus N), A, B
 * and C in pinned host memory (--pageable: malloc's, as programs hold
 * them): the host-data baseline that dgemm-dist's host-to-host runs are
 * measured against (docs/design.md).
 *
 *   cublasxt-bench --n 16384 --gpus 2 --reps 3 --json out/cublasxt.jsonl
 *   cublasxt-bench --m 1000 --n 2000 --k 3000 --dtype f32 --block 2048
 *   cublasxt-bench --n 16384 --dtype c128 --pageable
 *
 * Row-major C(m×n) = A(m×k)·B(k×n), computed as the column-major product
 * Cᵀ = Bᵀ·Aᵀ, so no data is transposed.  --dtype f64, f32: cublasXtDgemm,
 * cublasXtSgemm; c128, c64: cublasXtZgemm, cublasXtCgemm (alpha 1, beta 0;
 * each element a (real, imaginary) pair).  Data: seeded uniform [-1, 1),
 * never zero (complex: each part).  One warm-up call, then --reps timed
 * calls (wall clock around each call: cuBLASXt returns when C is back in
 * host memory); the median is reported.  TFLOP/s counts 2·m·n·k flops for
 * the real types and 8·m·n·k for complex (a complex multiply-add is 8 real
 * flops); the record's "flops_per_multiply_add" says which.  Before any
 * time is printed, 256 sampled entries of C are checked against a host dot
 * product; a wrong result prints no time and exits 1.  Prints one line;
 * --json FILE appends one JSON Lines record.  Exit 77 (ctest "skipped")
 * where no GPU is visible. */
#define _POSIX_C_SOURCE 200809L
#include <cublasXt.h>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_opts.h"
#include "dd_json.h"
#include "dd_splitmix.h"

#define SKIP 77
#define MAX_GPUS 64
#define NCHECK 256

/* --dtype, in its order */
enum { T_F64, T_F32, T_C128, T_C64 };
static const char *const DTYPES[4] = {"f64", "f32", "c128", "c64"};
static const char *const GEMMS[4] = {"dgemm", "sgemm", "zgemm", "cgemm"};

typedef struct {
    int64_t m, n, k;
    int dtype, dbl, cw; /* dbl: double parts (f64, c128); cw: parts per element (2: complex) */
    int gpus, block, reps, warmup, pageable;
    uint64_t seed;
    const char *json;
} opts;

static const char USAGE[] =
    "usage: cublasxt-bench [--n N] [--m M] [--k K] [--dtype f64|f32|c128|c64] [--gpus G]\n"
    "                      [--block B] [--reps R] [--warmup W] [--seed S] [--pageable]\n"
    "                      [--json FILE]\n"
    "  C(MxN) = A(MxK) B(KxN), row-major, host data in pinned memory (--pageable: malloc's),\n"
    "  on G GPUs\n"
    "  (default: all visible) through cuBLASXt.  M and K default to N (8192).\n";

/* argv into o (bench_opts.h's rules); -1 to run, else the exit status. */
static int parse(int argc, char **argv, opts *o)
{
    int64_t m = -1, k = -1;
    int dtype = 0;
    memset(o, 0, sizeof *o);
    o->n = 8192;
    o->reps = 3;
    o->warmup = 1;
    o->seed = 42;
    const bench_opt table[] = {
        {"--n", BENCH_I64, &o->n, 1, 1LL << 40, 0, 0, NULL, NULL},
        {"--m", BENCH_I64, &m, 1, 1LL << 40, 0, 0, NULL, NULL},
        {"--k", BENCH_I64, &k, 1, 1LL << 40, 0, 0, NULL, NULL},
        {"--dtype", BENCH_CHOICE, &dtype, 0, 0, 0, 0, "f64|f32|c128|c64", NULL},
        {"--gpus", BENCH_INT, &o->gpus, 1, MAX_GPUS, 0, 0, NULL, NULL},
        {"--block", BENCH_INT, &o->block, 1, 1 << 30, 0, 0, NULL, NULL},
        {"--reps", BENCH_INT, &o->reps, 1, 100000, 0, 0, NULL, NULL},
        {"--warmup", BENCH_INT, &o->warmup, 0, 100000, 0, 0, NULL, NULL},
        {"--seed", BENCH_U64, &o->seed, 0, 0, 0, 0, NULL, NULL},
        {"--pageable", BENCH_FLAG, &o->pageable, 0, 0, 0, 0, NULL, NULL},
        {"--json", BENCH_STRING, &o->json, 0, 0, 0, 0, NULL, NULL},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    int rc = bench_parse("cublasxt-bench", USAGE, table, argc, argv, stderr);
    if (rc != BENCH_GO)
        return rc;
    o->dtype = dtype;
    o->dbl = dtype == T_F64 || dtype == T_C128;
    o->cw = dtype >= T_C128 ? 2 : 1;
    o->m = m > 0 ? m : o->n;
    o->k = k > 0 ? k : o->n;
    return BENCH_GO;
}

/* Counter-based (splitmix64, dd_splitmix.h): element i of stream `seed` does
 * not depend on the order of generation.  53 (or 24) random bits j give
 * (2j + 1 - 2^b) / 2^b: uniform on [-1, 1), exact in the element type, odd
 * numerator so never zero.  count: of parts (a complex element is two). */
static void fill(void *p, size_t count, int dbl, uint64_t seed)
{
    uint64_t base = dd_splitmix64(seed);
    for (size_t i = 0; i < count; i++) {
        uint64_t x = dd_splitmix64(base ^ (i * 0xd1b54a32d192ed03ull));
        if (dbl)
            ((double *)p)[i] =
                (double)((int64_t)(2 * (x >> 11) + 1) - ((int64_t)1 << 53)) * 0x1p-53;
        else
            ((float *)p)[i] = (float)((int64_t)(2 * (x >> 40) + 1) - ((int64_t)1 << 24)) * 0x1p-24f;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Part i of a double (dbl) or float array. */
static double elem(const void *p, int dbl, size_t i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Sampled entries of C against a host dot product, with the usual bound
 * |err| <= 2 k eps sum |a||b| (real), and twice that on the modulus of the
 * error for complex (each product four real ones and two sums). */
static int check(const opts *o, const void *A, const void *B, const void *C)
{
    double eps = o->dbl ? DBL_EPSILON : FLT_EPSILON;
    size_t cw = (size_t)o->cw;
    uint64_t s = dd_splitmix64(o->seed ^ 0x5eedull);
    for (int t = 0; t < NCHECK; t++) {
        size_t i = (size_t)(dd_splitmix64(s + 2 * (uint64_t)t) % (uint64_t)o->m);
        size_t j = (size_t)(dd_splitmix64(s + 2 * (uint64_t)t + 1) % (uint64_t)o->n);
        long double re = 0, im = 0, mag = 0;
        for (size_t l = 0; l < (size_t)o->k; l++) {
            size_t ia = (i * (size_t)o->k + l) * cw, ib = (l * (size_t)o->n + j) * cw;
            long double ar = elem(A, o->dbl, ia), br = elem(B, o->dbl, ib);
            long double ai = cw == 2 ? elem(A, o->dbl, ia + 1) : 0;
            long double bi = cw == 2 ? elem(B, o->dbl, ib + 1) : 0;
            re += ar * br - ai * bi;
            im += ar * bi + ai * br;
            mag += sqrtl(ar * ar + ai * ai) * sqrtl(br * br + bi * bi);
        }
        size_t ic = (i * (size_t)o->n + j) * cw;
        double gr = elem(C, o->dbl, ic), gi = cw == 2 ? elem(C, o->dbl, ic + 1) : 0;
        double err = hypot(gr - (double)re, gi - (double)im);
        double bound = 2.0 * (double)cw * (double)o->k * eps * (double)mag;
        if (!(err <= bound)) {
            if (cw == 2)
                fprintf(stderr,
                        "cublasxt-bench: wrong result: C(%zu,%zu) = (%.17g, %.17g), host "
                        "(%.17g, %.17g) (bound %.3g); no time reported\n",
                        i, j, gr, gi, (double)re, (double)im, bound);
            else
                fprintf(stderr,
                        "cublasxt-bench: wrong result: C(%zu,%zu) = %.17g, host %.17g (bound "
                        "%.3g); no time reported\n",
                        i, j, gr, (double)re, bound);
            return -1;
        }
    }
    return 0;
}

static int cuda_ok(cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess)
        return 1;
    fprintf(stderr, "cublasxt-bench: %s failed: %s\n", what, cudaGetErrorString(rc));
    return 0;
}

static int xt_ok(cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return 1;
    fprintf(stderr, "cublasxt-bench: %s failed: %s\n", what, cublasGetStatusString(st));
    return 0;
}

static cublasStatus_t gemm(cublasXtHandle_t h, const opts *o, const void *A, const void *B, void *C)
{
    /* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ with the same pointers. */
    size_t m = (size_t)o->m, n = (size_t)o->n, k = (size_t)o->k;
    switch (o->dtype) {
    case T_F64: {
        const double one = 1, zero = 0;
        return cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n);
    }
    case T_F32: {
        const float one = 1, zero = 0;
        return cublasXtSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n);
    }
    case T_C128: {
        const cuDoubleComplex one = {1, 0}, zero = {0, 0};
        return cublasXtZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n);
    }
    default: {
        const cuComplex one = {1, 0}, zero = {0, 0};
        return cublasXtCgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n);
    }
    }
}

static int write_json(const opts *o, int block, const double *times, double median, double tflops,
                      char names[][256], const char *cublas)
{
    FILE *f = fopen(o->json, "a");
    if (!f) {
        fprintf(stderr, "cublasxt-bench: cannot append to %s\n", o->json);
        return -1;
    }
    char host[256] = "", stamp[32] = "";
    gethostname(host, sizeof host - 1);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *job = getenv("SLURM_JOB_ID");
    fputs("{\"tool\":\"cublasxt-bench\"", f);
    dd_json_kv_str(f, "timestamp", stamp);
    dd_json_kv_str(f, "host", host);
    dd_json_kv_str(f, "slurm_job_id", job); /* unset: null */
    dd_json_kv_int(f, "m", o->m);
    dd_json_kv_int(f, "n", o->n);
    dd_json_kv_int(f, "k", o->k);
    dd_json_kv_str(f, "dtype", DTYPES[o->dtype]);
    dd_json_kv_int(f, "gpus", o->gpus);
    dd_json_kv_int(f, "block", block);
    dd_json_kv_str(f, "host_memory", o->pageable ? "pageable" : "pinned");
    dd_json_kv_int(f, "warmup", o->warmup);
    dd_json_kv_int(f, "reps", o->reps);
    fputs(",\"times\":[", f);
    for (int i = 0; i < o->reps; i++) {
        if (i)
            fputc(',', f);
        dd_json_num(f, times[i]);
    }
    fputc(']', f);
    dd_json_kv_num(f, "time_median", median);
    dd_json_kv_num_g(f, "tflops", tflops, 6);
    dd_json_kv_int(f, "flops_per_multiply_add", o->cw == 2 ? 8 : 2); /* tflops: this·m·n·k/s/1e12 */
    fputs(",\"gpu_names\":[", f);
    for (int i = 0; i < o->gpus; i++) {
        if (i)
            fputc(',', f);
        dd_json_str(f, names[i]);
    }
    fputc(']', f);
    dd_json_kv_str(f, "cublas", cublas);
    dd_json_kv_str(f, "check", "passed");
    fputs("}\n", f);
    return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
    opts o;
    int prc = parse(argc, argv, &o);
    if (prc != BENCH_GO)
        return prc;
    int count = 0;
    cudaError_t cr = cudaGetDeviceCount(&count);
    if (cr != cudaSuccess || count == 0) {
        printf("cublasxt-bench: skipped: no CUDA GPU visible (%s)\n",
               cr != cudaSuccess ? cudaGetErrorString(cr) : "0 devices");
        return SKIP;
    }
    if (o.gpus == 0)
        o.gpus = count < MAX_GPUS ? count : MAX_GPUS;
    if (o.gpus > count || o.gpus > MAX_GPUS) {
        fprintf(stderr, "cublasxt-bench: --gpus %d, but %d GPU(s) are visible\n", o.gpus, count);
        return 2;
    }
    int ids[MAX_GPUS];
    static char names[MAX_GPUS][256];
    for (int i = 0; i < o.gpus; i++) {
        struct cudaDeviceProp prop;
        ids[i] = i;
        if (!cuda_ok(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties"))
            return 1;
        snprintf(names[i], sizeof names[i], "%.255s", prop.name);
    }

    size_t es = (size_t)o.cw * (o.dbl ? 8 : 4); /* bytes per element */
    size_t na = (size_t)(o.m * o.k), nb = (size_t)(o.k * o.n), nc = (size_t)(o.m * o.n);
    void *A = NULL, *B = NULL, *C = NULL;
    /* Portable: pinned for every GPU cuBLASXt uses, not just the current one. */
    if (o.pageable) {
        if (!(A = malloc(na * es)) || !(B = malloc(nb * es)) || !(C = malloc(nc * es))) {
            fprintf(stderr, "cublasxt-bench: out of host memory\n");
            return 1;
        }
    } else if (!cuda_ok(cudaHostAlloc(&A, na * es, cudaHostAllocPortable), "cudaHostAlloc (A)") ||
               !cuda_ok(cudaHostAlloc(&B, nb * es, cudaHostAllocPortable), "cudaHostAlloc (B)") ||
               !cuda_ok(cudaHostAlloc(&C, nc * es, cudaHostAllocPortable), "cudaHostAlloc (C)")) {
        return 1;
    }
    fill(A, na * (size_t)o.cw, o.dbl, o.seed);
    fill(B, nb * (size_t)o.cw, o.dbl, o.seed + 1);
    memset(C, 0, nc * es);

    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    char cublas[32];
    snprintf(cublas, sizeof cublas, "%d.%d.%d", major, minor, patch);

    cublasXtHandle_t h;
    int block = 0;
    if (!xt_ok(cublasXtCreate(&h), "cublasXtCreate"))
        return 1;
    if (!xt_ok(cublasXtDeviceSelect(h, o.gpus, ids), "cublasXtDeviceSelect") ||
        (o.block && !xt_ok(cublasXtSetBlockDim(h, o.block), "cublasXtSetBlockDim")) ||
        !xt_ok(cublasXtGetBlockDim(h, &block), "cublasXtGetBlockDim"))
        return 1;

    static const char *const routine[4] = {"cublasXtDgemm", "cublasXtSgemm", "cublasXtZgemm",
                                           "cublasXtCgemm"};
    const char *what = routine[o.dtype];
    double *times = calloc((size_t)o.reps, sizeof *times);
    if (!times)
        return 1;
    for (int i = 0; i < o.warmup; i++)
        if (!xt_ok(gemm(h, &o, A, B, C), what))
            return 1;
    for (int i = 0; i < o.reps; i++) {
        double t0 = now();
        if (!xt_ok(gemm(h, &o, A, B, C), what))
            return 1;
        times[i] = now() - t0;
    }
    if (check(&o, A, B, C))
        return 1;

    double *sorted = malloc((size_t)o.reps * sizeof *sorted);
    if (!sorted)
        return 1;
    memcpy(sorted, times, (size_t)o.reps * sizeof *sorted);
    qsort(sorted, (size_t)o.reps, sizeof *sorted, cmp_double);
    double median =
        o.reps % 2 ? sorted[o.reps / 2] : 0.5 * (sorted[o.reps / 2 - 1] + sorted[o.reps / 2]);
    double fma = o.cw == 2 ? 8 : 2; /* real flops per multiply-add */
    double tflops = fma * (double)o.m * (double)o.n * (double)o.k / median / 1e12;
    int same = 1;
    for (int i = 1; i < o.gpus; i++)
        same &= !strcmp(names[i], names[0]);
    printf("cublasxt-bench: %s %lldx%lldx%lld on %d GPU(s) (%s%s), host data %s, block %d: "
           "median %.4f s of %d (min %.4f s), %.2f TFLOP/s, cuBLAS %s, check passed\n",
           GEMMS[o.dtype], (long long)o.m, (long long)o.n, (long long)o.k, o.gpus,
           names[0], same ? "" : " and others", o.pageable ? "pageable" : "pinned", block, median,
           o.reps, sorted[0], tflops, cublas);
    int rc = o.json ? write_json(&o, block, times, median, tflops, names, cublas) : 0;

    cublasXtDestroy(h);
    if (o.pageable) {
        free(A);
        free(B);
        free(C);
    } else {
        cudaFreeHost(A);
        cudaFreeHost(B);
        cudaFreeHost(C);
    }
    free(times);
    free(sorted);
    return rc ? 1 : 0;
}
