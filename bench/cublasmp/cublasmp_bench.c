/* cublasmp_bench.c — NVIDIA's distributed GEMM, cuBLASMp (cublasMpGemm),
 * and dgemm-dist's dd_gemm_device / dd_sgemm_device on the same GPUs, the
 * same sizes and the same process grid, device data, FP64 and FP32, in one
 * call; prints each side's time and the ratio.  A baseline, built only when
 * CMake is given a cuBLASMp prefix (-DDD_CUBLASMP_DIR); bench/gpu/cublasmp.sh
 * builds and runs it.
 *
 *   mpirun -np G cublasmp-bench [--sizes 16384,32768] [--types f64,f32] [--reps 5]
 *                               [--weak] [--json FILE]
 *
 * Both sides get the same global matrices (C = A·B, beta = 0): element
 * (i, j) of each is a counter-based value (splitmix64 of the seed and the
 * index, uniform on [-1, 1), never zero), placed in each library's own
 * layout — dgemm-dist's 2-D block layout (row-major blocks, dgemm_dist.h),
 * cuBLASMp's ScaLAPACK block-cyclic one (column-major local arrays; by
 * default M cut once over P, N once over Q and K into lcm(P, Q) blocks:
 * one block per rank where P = Q, the same cut as dgemm-dist's up to the
 * rounding of n / P).  Both on the P×Q grid dgemm-dist picks (P <= Q, most
 * nearly square), rank r at row r / Q, column r % Q on both sides.
 * Correctness first: after the warm-up, NCHECK sampled entries of each
 * side's C are compared with a host dot product (|err| <= 2 k eps sum|a b|)
 * and dgemm-dist's own check runs on its first call; a failure prints no
 * time and exits 1.  Then --reps timed calls of each, alternated (ABBA:
 * neither side always first), each from a barrier to the slowest rank's end
 * (device synchronised); medians reported; ratio = cuBLASMp's median time
 * over dgemm-dist's (> 1: dgemm-dist is faster).  --weak: the sizes are a
 * 1-GPU size, scaled by G^(1/3) (the same flops per GPU) to a multiple of 256.
 * Exit 77 ("skipped") where no GPU is visible. */
#define _POSIX_C_SOURCE 200809L
#include <cublasmp.h>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_opts.h"
#include "dd_json.h"
#include "dd_splitmix.h"
#include "dgemm_dist.h"

#define SKIP 77
#define MAX_SHAPES 32
#define NCHECK 256

typedef struct {
    int64_t shapes[MAX_SHAPES][3];
    int nshapes, f64, f32, reps, warmup, weak, fill_threads;
    int64_t mb, nb;
    uint64_t seed;
    const char *json, *kernel_f64, *kernel_f32;
} opts;

static const char USAGE[] =
    "usage: mpirun -np G cublasmp-bench [--sizes LIST] [--types f64,f32] [--reps R] [--warmup W]\n"
    "                                   [--weak] [--mb MB] [--nb NB] [--kernel-f64 NAME]\n"
    "                                   [--kernel-f32 NAME] [--fill-threads T] [--seed S]\n"
    "                                   [--json FILE]\n"
    "  cuBLASMp's cublasMpGemm against dgemm-dist's dd_gemm_device on the same G GPUs,\n"
    "  device data.  LIST: N or MxNxK, comma separated (default 16384,32768).  --mb/--nb:\n"
    "  cuBLASMp's block sizes (default M/P, N/Q, K/lcm(P,Q)).  --kernel-*: dgemm-dist's\n"
    "  kernel (default the backend's).  --weak: sizes scaled by G^(1/3).\n";

static int g_rank, g_size;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A bench may stop its peers: a failed call on one rank ends the job (no
 * rank is left in a collective). */
static void die(const char *what, const char *why)
{
    fprintf(stderr, "cublasmp-bench: rank %d: %s failed: %s\n", g_rank, what, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define CUDA(call)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            die(#call, cudaGetErrorString(e_));                                                    \
    } while (0)
#define NCCL(call)                                                                                 \
    do {                                                                                           \
        ncclResult_t e_ = (call);                                                                  \
        if (e_ != ncclSuccess)                                                                     \
            die(#call, ncclGetErrorString(e_));                                                    \
    } while (0)
#define MP(call)                                                                                   \
    do {                                                                                           \
        cublasMpStatus_t e_ = (call);                                                              \
        if (e_ != CUBLASMP_STATUS_SUCCESS) {                                                       \
            char s_[32];                                                                           \
            snprintf(s_, sizeof s_, "cublasMpStatus %d", (int)e_);                                 \
            die(#call, s_);                                                                        \
        }                                                                                          \
    } while (0)
#define MPIC(call)                                                                                 \
    do {                                                                                           \
        if ((call) != MPI_SUCCESS)                                                                 \
            die(#call, "MPI error");                                                               \
    } while (0)

/* --types: a comma list of f64 and f32. */
static const char *types_opt(const char *v, void *dest)
{
    opts *o = dest;
    if (!v)
        return "a list of f64 and f32";
    o->f64 = o->f32 = 0;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        if (len == 3 && !strncmp(s, "f64", 3))
            o->f64 = 1;
        else if (len == 3 && !strncmp(s, "f32", 3))
            o->f32 = 1;
        else
            return "a list of f64 and f32";
        s += len + (s[len] == ',');
    }
    return o->f64 || o->f32 ? NULL : "a list of f64 and f32";
}

static const char *sizes_opt(const char *v, void *dest)
{
    opts *o = dest;
    if (!v || bench_shapes(v, o->shapes, MAX_SHAPES, &o->nshapes))
        return "a list of N or MxNxK";
    return NULL;
}

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->f64 = o->f32 = 1;
    o->reps = 5;
    o->warmup = 1;
    o->seed = 42;
    o->nshapes = 2;
    o->shapes[0][0] = o->shapes[0][1] = o->shapes[0][2] = 16384;
    o->shapes[1][0] = o->shapes[1][1] = o->shapes[1][2] = 32768;
    const bench_opt table[] = {
        {"--sizes", BENCH_CALL, o, 0, 0, 0, 0, NULL, sizes_opt},
        {"--types", BENCH_CALL, o, 0, 0, 0, 0, NULL, types_opt},
        {"--reps", BENCH_INT, &o->reps, 1, 100000, 0, 0, NULL, NULL},
        {"--warmup", BENCH_INT, &o->warmup, 1, 100000, 0, 0, NULL, NULL},
        {"--weak", BENCH_FLAG, &o->weak, 0, 0, 0, 0, NULL, NULL},
        {"--mb", BENCH_I64, &o->mb, 1, 1LL << 40, 0, 0, NULL, NULL},
        {"--nb", BENCH_I64, &o->nb, 1, 1LL << 40, 0, 0, NULL, NULL},
        {"--kernel-f64", BENCH_STRING, &o->kernel_f64, 0, 0, 0, 0, NULL, NULL},
        {"--kernel-f32", BENCH_STRING, &o->kernel_f32, 0, 0, 0, 0, NULL, NULL},
        {"--fill-threads", BENCH_INT, &o->fill_threads, 1, 1024, 0, 0, NULL, NULL},
        {"--seed", BENCH_U64, &o->seed, 0, 0, 0, 0, NULL, NULL},
        {"--json", BENCH_STRING, &o->json, 0, 0, 0, 0, NULL, NULL},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    return bench_parse("cublasmp-bench", USAGE, table, argc, argv, g_rank ? NULL : stderr);
}

/* ---- the matrices: one global value per (i, j), two layouts ---------------------------- */

/* Element (i, j) of matrix `tag` (cols columns): uniform on [-1, 1), exact in
 * the element type (53 or 24 random bits, odd numerator: never zero). */
static double value(uint64_t seed, int tag, int64_t i, int64_t j, int64_t cols, int f64)
{
    uint64_t x = dd_splitmix64(dd_splitmix64(seed + (uint64_t)tag) ^
                               ((uint64_t)(i * cols + j) * 0xd1b54a32d192ed03ull));
    if (f64)
        return (double)((int64_t)(2 * (x >> 11) + 1) - ((int64_t)1 << 53)) * 0x1p-53;
    return (double)(float)((double)((int64_t)(2 * (x >> 40) + 1) - ((int64_t)1 << 24)) * 0x1p-24);
}

/* One rank's part of a global rows×cols matrix.  Block: dgemm-dist's layout,
 * rows [r0, r0 + lr) × cols [c0, c0 + lc), row-major, ld = lc.  Cyclic:
 * ScaLAPACK's, blocks mb×nb, this rank at grid (p, q) of P×Q, column-major,
 * ld = max(1, lr). */
typedef struct {
    int cyclic;
    int64_t rows, cols, lr, lc, ld;
    int64_t r0, c0;              /* block */
    int64_t mb, nb, p, q, P, Q;  /* cyclic */
} layout;

static int64_t numroc(int64_t n, int64_t nb, int64_t ip, int64_t np)
{
    int64_t blocks = n / nb, mine = blocks / np * nb, extra = blocks % np;
    if (ip < extra)
        mine += nb;
    else if (ip == extra)
        mine += n % nb;
    return mine;
}

static layout block_layout(int64_t rows, int64_t cols, int P, int Q, int p, int q)
{
    layout l = {0};
    int64_t s, len;
    l.rows = rows;
    l.cols = cols;
    dd_block_range(rows, P, p, &s, &len);
    l.r0 = s;
    l.lr = len;
    dd_block_range(cols, Q, q, &s, &len);
    l.c0 = s;
    l.lc = len;
    l.ld = l.lc > 1 ? l.lc : 1;
    return l;
}

static layout cyclic_layout(int64_t rows, int64_t cols, int64_t mb, int64_t nb, int P, int Q,
                            int p, int q)
{
    layout l = {0};
    l.cyclic = 1;
    l.rows = rows;
    l.cols = cols;
    l.mb = mb > 0 ? mb : (rows + P - 1) / P;
    l.nb = nb > 0 ? nb : (cols + Q - 1) / Q;
    if (l.mb < 1)
        l.mb = 1;
    if (l.nb < 1)
        l.nb = 1;
    l.p = p;
    l.q = q;
    l.P = P;
    l.Q = Q;
    l.lr = numroc(rows, l.mb, p, P);
    l.lc = numroc(cols, l.nb, q, Q);
    l.ld = l.lr > 1 ? l.lr : 1;
    return l;
}

static size_t local_count(const layout *l)
{
    return l->cyclic ? (size_t)(l->ld * l->lc) : (size_t)(l->lr * l->ld);
}

/* The local position of global (i, j), or -1 where another rank holds it. */
static int64_t local_index(const layout *l, int64_t i, int64_t j)
{
    if (!l->cyclic) {
        if (i < l->r0 || i >= l->r0 + l->lr || j < l->c0 || j >= l->c0 + l->lc)
            return -1;
        return (i - l->r0) * l->ld + (j - l->c0);
    }
    if ((i / l->mb) % l->P != l->p || (j / l->nb) % l->Q != l->q)
        return -1;
    int64_t li = i / (l->mb * l->P) * l->mb + i % l->mb;
    int64_t lj = j / (l->nb * l->Q) * l->nb + j % l->nb;
    return lj * l->ld + li;
}

typedef struct {
    const layout *l;
    void *buf;
    int f64, tag;
    uint64_t seed;
    int64_t from, to; /* local rows (block) or local columns (cyclic) */
} fill_job;

static void *fill_part(void *arg)
{
    const fill_job *f = arg;
    const layout *l = f->l;
    for (int64_t a = f->from; a < f->to; a++)
        if (!l->cyclic) {
            int64_t i = l->r0 + a;
            for (int64_t b = 0; b < l->lc; b++) {
                double v = value(f->seed, f->tag, i, l->c0 + b, l->cols, f->f64);
                size_t at = (size_t)(a * l->ld + b);
                if (f->f64)
                    ((double *)f->buf)[at] = v;
                else
                    ((float *)f->buf)[at] = (float)v;
            }
        } else {
            int64_t j = a / l->nb * (l->nb * l->Q) + l->q * l->nb + a % l->nb;
            for (int64_t b = 0; b < l->lr; b++) {
                int64_t i = b / l->mb * (l->mb * l->P) + l->p * l->mb + b % l->mb;
                double v = value(f->seed, f->tag, i, j, l->cols, f->f64);
                size_t at = (size_t)(a * l->ld + b);
                if (f->f64)
                    ((double *)f->buf)[at] = v;
                else
                    ((float *)f->buf)[at] = (float)v;
            }
        }
    return NULL;
}

/* This rank's part of matrix `tag` into dev (through host), threads threads. */
static void fill(const opts *o, const layout *l, int f64, int tag, void *host, void *dev)
{
    enum { MAXT = 256 };
    int64_t outer = l->cyclic ? l->lc : l->lr;
    int nt = o->fill_threads < MAXT ? o->fill_threads : MAXT;
    pthread_t th[MAXT];
    fill_job jobs[MAXT];
    for (int t = 0; t < nt; t++) {
        jobs[t] = (fill_job){l, host, f64, tag, o->seed, outer * t / nt, outer * (t + 1) / nt};
        if (pthread_create(&th[t], NULL, fill_part, &jobs[t]))
            die("pthread_create", "cannot start a fill thread");
    }
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    size_t bytes = local_count(l) * (f64 ? 8 : 4);
    if (bytes)
        CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
}

/* Sampled entries of C (global M×N, this rank's part in dev, layout lc)
 * against a host dot product; the count of wrong ones over all ranks. */
static int check(const opts *o, const int64_t *shape, int f64, const layout *lcl, const void *dev,
                 const char *who, double *worst)
{
    int64_t M = shape[0], N = shape[1], K = shape[2];
    double eps = f64 ? DBL_EPSILON : FLT_EPSILON, my_worst = 0;
    int bad = 0;
    uint64_t s = dd_splitmix64(o->seed ^ 0x5eedull);
    for (int t = 0; t < NCHECK; t++) {
        int64_t i = (int64_t)(dd_splitmix64(s + 2 * (uint64_t)t) % (uint64_t)M);
        int64_t j = (int64_t)(dd_splitmix64(s + 2 * (uint64_t)t + 1) % (uint64_t)N);
        int64_t at = local_index(lcl, i, j);
        if (at < 0)
            continue;
        long double ref = 0, mag = 0;
        for (int64_t l = 0; l < K; l++) {
            long double ab = (long double)value(o->seed, 0, i, l, K, f64) *
                             (long double)value(o->seed, 1, l, j, N, f64);
            ref += ab;
            mag += fabsl(ab);
        }
        double got;
        if (f64) {
            CUDA(cudaMemcpy(&got, (const double *)dev + at, 8, cudaMemcpyDeviceToHost));
        } else {
            float g;
            CUDA(cudaMemcpy(&g, (const float *)dev + at, 4, cudaMemcpyDeviceToHost));
            got = g;
        }
        double bound = 2.0 * (double)K * eps * (double)mag, err = fabs(got - (double)ref);
        if (bound > 0 && err / bound > my_worst)
            my_worst = err / bound;
        if (!(err <= bound)) {
            if (bad++ < 3)
                fprintf(stderr,
                        "cublasmp-bench: %s wrong: C(%lld,%lld) = %.17g, host %.17g (bound %.3g)\n",
                        who, (long long)i, (long long)j, got, (double)ref, bound);
        }
    }
    int total = 0;
    MPIC(MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPIC(MPI_Allreduce(&my_worst, worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return total;
}

/* ---- the two sides ------------------------------------------------------------------------ */

typedef struct {
    dd_context *ctx;
    void *A, *B, *C;
    layout la, lb, lc;
    double mult_s; /* dd_gemm_info.multiply_seconds of the last call */
} dd_side;

typedef struct {
    cublasMpHandle_t h;
    cublasMpGrid_t grid;
    cudaStream_t stream;
    cublasMpMatrixDescriptor_t da, db, dc;
    void *A, *B, *C, *dwork, *hwork;
    size_t dwork_bytes, hwork_bytes;
    layout la, lb, lc;
} mp_side;

static void dd_call(dd_side *d, const int64_t *shape, int f64, int check)
{
    dd_gemm_info info;
    memset(&info, 0, sizeof info);
    info.check = check;
    dd_status st;
    if (f64)
        st = dd_gemm_device(d->ctx, 'N', 'N', shape[0], shape[1], shape[2], 1.0, d->A, d->la.ld,
                            d->B, d->lb.ld, 0.0, d->C, d->lc.ld, &info);
    else
        st = dd_sgemm_device(d->ctx, 'N', 'N', shape[0], shape[1], shape[2], 1.0f, d->A,
                             d->la.ld, d->B, d->lb.ld, 0.0f, d->C, d->lc.ld, &info);
    if (st != DD_SUCCESS) {
        /* agreed: every rank has the same status and message */
        if (!g_rank)
            fprintf(stderr, "cublasmp-bench: dgemm-dist: %s: %s\n", dd_status_string(st),
                    dd_context_last_error(d->ctx));
        MPI_Finalize();
        exit(1);
    }
    d->mult_s = info.multiply_seconds;
}

static void mp_call(mp_side *m, const int64_t *shape, int f64)
{
    double a64 = 1, b64 = 0;
    float a32 = 1, b32 = 0;
    const void *alpha = f64 ? (const void *)&a64 : (const void *)&a32;
    const void *beta = f64 ? (const void *)&b64 : (const void *)&b32;
    MP(cublasMpGemm(m->h, CUBLAS_OP_N, CUBLAS_OP_N, shape[0], shape[1], shape[2], alpha, m->A, 1,
                    1, m->da, m->B, 1, 1, m->db, beta, m->C, 1, 1, m->dc,
                    f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, m->dwork, m->dwork_bytes,
                    m->hwork, m->hwork_bytes));
    CUDA(cudaStreamSynchronize(m->stream));
}

/* One timed call: from a barrier to the slowest rank's end. */
static double timed(int which, dd_side *d, mp_side *m, const int64_t *shape, int f64)
{
    MPIC(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    if (which == 0)
        dd_call(d, shape, f64, 0);
    else
        mp_call(m, shape, f64);
    CUDA(cudaDeviceSynchronize());
    double t = now() - t0, slowest = 0;
    MPIC(MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return slowest;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n, double *min)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        die("malloc", "out of host memory");
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    *min = s[0];
    free(s);
    return med;
}

static void *dev_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        char why[160];
        snprintf(why, sizeof why, "%s (%.2f GiB): %s", what, (double)bytes / (1 << 30),
                 cudaGetErrorString(e));
        die("cudaMalloc", why);
    }
    return p;
}

typedef struct {
    char gpu[256], versions[160];
    int P, Q;
} run_info;

static void json_times(FILE *f, const char *key, const double *t, int n)
{
    fprintf(f, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        dd_json_num(f, t[i]);
    }
    fputc(']', f);
}

static void write_json(const opts *o, const run_info *ri, const int64_t *shape, int f64,
                       const char *kernel, const mp_side *m, const double *tdd, const double *tmp,
                       const double *tmul, double med_dd, double med_mp, double med_mul,
                       double worst_dd, double worst_mp)
{
    FILE *f = fopen(o->json, "a");
    if (!f) {
        fprintf(stderr, "cublasmp-bench: cannot append to %s\n", o->json);
        return;
    }
    char host[256] = "", stamp[32] = "";
    gethostname(host, sizeof host - 1);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    double flop = 2.0 * (double)shape[0] * (double)shape[1] * (double)shape[2];
    fputs("{\"tool\":\"cublasmp-bench\"", f);
    dd_json_kv_str(f, "timestamp", stamp);
    dd_json_kv_str(f, "host", host);
    dd_json_kv_str(f, "gpu", ri->gpu);
    dd_json_kv_str(f, "versions", ri->versions);
    dd_json_kv_str(f, "cublasmp_disable_nvshmem", getenv("CUBLASMP_DISABLE_NVSHMEM"));
    dd_json_kv_int(f, "gpus", g_size);
    dd_json_kv_int(f, "P", ri->P);
    dd_json_kv_int(f, "Q", ri->Q);
    dd_json_kv_str(f, "scaling", o->weak ? "weak" : "strong");
    dd_json_kv_str(f, "dtype", f64 ? "f64" : "f32");
    dd_json_kv_int(f, "m", shape[0]);
    dd_json_kv_int(f, "n", shape[1]);
    dd_json_kv_int(f, "k", shape[2]);
    dd_json_kv_str(f, "data", "device");
    dd_json_kv_str(f, "dd_kernel", kernel ? kernel : "default");
    dd_json_kv_int(f, "mp_mb", m->lc.mb);
    dd_json_kv_int(f, "mp_nb", m->lc.nb);
    dd_json_kv_int(f, "mp_kb", m->la.nb);
    dd_json_kv_int(f, "mp_workspace_device", (long long)m->dwork_bytes);
    dd_json_kv_int(f, "mp_workspace_host", (long long)m->hwork_bytes);
    dd_json_kv_int(f, "warmup", o->warmup);
    dd_json_kv_int(f, "reps", o->reps);
    json_times(f, "dd_times", tdd, o->reps);
    json_times(f, "dd_multiply_seconds", tmul, o->reps);
    json_times(f, "mp_times", tmp, o->reps);
    dd_json_kv_num(f, "dd_time_median", med_dd);
    dd_json_kv_num(f, "dd_multiply_median", med_mul);
    dd_json_kv_num(f, "mp_time_median", med_mp);
    dd_json_kv_num_g(f, "dd_tflops", flop / med_dd / 1e12, 6);
    dd_json_kv_num_g(f, "mp_tflops", flop / med_mp / 1e12, 6);
    dd_json_kv_num_g(f, "ratio", med_mp / med_dd, 5);
    dd_json_kv_num_g(f, "dd_check_worst", worst_dd, 3);
    dd_json_kv_num_g(f, "mp_check_worst", worst_mp, 3);
    dd_json_kv_str(f, "check", "passed");
    fputs("}\n", f);
    if (fclose(f))
        fprintf(stderr, "cublasmp-bench: writing %s failed\n", o->json);
}

/* One (type, shape): both sides set up, checked, timed; printed. */
static void one(const opts *o, const run_info *ri, dd_context *ctx, mp_side *m, int f64,
                const int64_t *shape, void **host, size_t *host_bytes)
{
    int P = ri->P, Q = ri->Q, p = g_rank / Q, q = g_rank % Q;
    int64_t M = shape[0], N = shape[1], K = shape[2];
    size_t es = f64 ? 8 : 4;
    cudaDataType_t dt = f64 ? CUDA_R_64F : CUDA_R_32F;
    dd_side d = {ctx, NULL, NULL, NULL, block_layout(M, K, P, Q, p, q),
                 block_layout(K, N, P, Q, p, q), block_layout(M, N, P, Q, p, q), 0};
    /* Blocks conformal for the product (A's column blocks are B's row
     * blocks): by default M cut once over P, N once over Q, and K into
     * lcm(P, Q) blocks, so that A's and B's K blocks are one size (one
     * block per rank everywhere where P = Q); --mb/--nb for every matrix. */
    int64_t g = P, h = Q;
    while (h) {
        int64_t t = g % h;
        g = h;
        h = t;
    }
    int64_t lcm = (int64_t)P / g * Q;
    int64_t bm = o->mb ? o->mb : (M + P - 1) / P, bn = o->nb ? o->nb : (N + Q - 1) / Q;
    int64_t bk_r = o->mb ? o->mb : (K + lcm - 1) / lcm, bk_c = o->nb ? o->nb : bk_r;
    m->la = cyclic_layout(M, K, bm, bk_c, P, Q, p, q);
    m->lb = cyclic_layout(K, N, bk_r, bn, P, Q, p, q);
    m->lc = cyclic_layout(M, N, bm, bn, P, Q, p, q);

    size_t need = 0;
    const layout *all[6] = {&d.la, &d.lb, &m->la, &m->lb, &d.lc, &m->lc};
    for (int i = 0; i < 6; i++)
        if (local_count(all[i]) * es > need)
            need = local_count(all[i]) * es;
    if (need > *host_bytes) {
        free(*host);
        *host = malloc(need);
        if (!*host)
            die("malloc", "out of host memory for the staging buffer");
        *host_bytes = need;
    }
    d.A = dev_alloc(local_count(&d.la) * es, "dgemm-dist's A");
    d.B = dev_alloc(local_count(&d.lb) * es, "dgemm-dist's B");
    d.C = dev_alloc(local_count(&d.lc) * es, "dgemm-dist's C");
    m->A = dev_alloc(local_count(&m->la) * es, "cuBLASMp's A");
    m->B = dev_alloc(local_count(&m->lb) * es, "cuBLASMp's B");
    m->C = dev_alloc(local_count(&m->lc) * es, "cuBLASMp's C");
    fill(o, &d.la, f64, 0, *host, d.A);
    fill(o, &d.lb, f64, 1, *host, d.B);
    fill(o, &m->la, f64, 0, *host, m->A);
    fill(o, &m->lb, f64, 1, *host, m->B);
    CUDA(cudaMemset(d.C, 0, local_count(&d.lc) * es));
    CUDA(cudaMemset(m->C, 0, local_count(&m->lc) * es));

    MP(cublasMpMatrixDescriptorCreate(M, K, m->la.mb, m->la.nb, 0, 0, m->la.ld, dt, m->grid,
                                      &m->da));
    MP(cublasMpMatrixDescriptorCreate(K, N, m->lb.mb, m->lb.nb, 0, 0, m->lb.ld, dt, m->grid,
                                      &m->db));
    MP(cublasMpMatrixDescriptorCreate(M, N, m->lc.mb, m->lc.nb, 0, 0, m->lc.ld, dt, m->grid,
                                      &m->dc));
    double a64 = 1, b64 = 0;
    float a32 = 1, b32 = 0;
    MP(cublasMpGemm_bufferSize(m->h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K,
                               f64 ? (const void *)&a64 : (const void *)&a32, m->A, 1, 1, m->da,
                               m->B, 1, 1, m->db, f64 ? (const void *)&b64 : (const void *)&b32,
                               m->C, 1, 1, m->dc, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                               &m->dwork_bytes, &m->hwork_bytes));
    m->dwork = dev_alloc(m->dwork_bytes, "cuBLASMp's workspace");
    m->hwork = malloc(m->hwork_bytes ? m->hwork_bytes : 1);
    if (!m->hwork)
        die("malloc", "out of host memory for cuBLASMp's workspace");
    CUDA(cudaDeviceSynchronize());

    /* correctness first: the warm-up calls, then the sampled check of both */
    for (int w = 0; w < o->warmup; w++) {
        dd_call(&d, shape, f64, w == 0);
        mp_call(m, shape, f64);
    }
    CUDA(cudaDeviceSynchronize());
    double worst_dd = 0, worst_mp = 0;
    int bad_dd = check(o, shape, f64, &d.lc, d.C, "dgemm-dist", &worst_dd);
    int bad_mp = check(o, shape, f64, &m->lc, m->C, "cuBLASMp", &worst_mp);
    if (bad_dd || bad_mp) {
        if (!g_rank)
            fprintf(stderr,
                    "cublasmp-bench: %s %lldx%lldx%lld: check FAILED (dgemm-dist %d, cuBLASMp %d "
                    "of %d sampled entries wrong); no time reported\n",
                    f64 ? "f64" : "f32", (long long)M, (long long)N, (long long)K, bad_dd, bad_mp,
                    NCHECK);
        MPI_Finalize();
        exit(1);
    }

    double *tdd = calloc((size_t)o->reps, sizeof *tdd), *tmp = calloc((size_t)o->reps, sizeof *tmp);
    double *tmul = calloc((size_t)o->reps, sizeof *tmul);
    if (!tdd || !tmp || !tmul)
        die("calloc", "out of host memory");
    for (int r = 0; r < o->reps; r++) {
        int first = (r % 4 == 0 || r % 4 == 3) ? 0 : 1; /* ABBA */
        for (int s = 0; s < 2; s++) {
            int which = s ? !first : first;
            double t = timed(which, &d, m, shape, f64);
            if (which == 0) {
                tdd[r] = t;
                tmul[r] = d.mult_s;
            } else {
                tmp[r] = t;
            }
        }
    }
    double min_dd, min_mp, min_mul;
    double med_dd = median(tdd, o->reps, &min_dd), med_mp = median(tmp, o->reps, &min_mp);
    double med_mul = median(tmul, o->reps, &min_mul);
    double flop = 2.0 * (double)M * (double)N * (double)K;
    const char *kernel = f64 ? o->kernel_f64 : o->kernel_f32;
    if (!g_rank) {
        printf("%-4s %6lld %6lld %6lld  %-12s %9.4f %8.2f %9.4f %9.4f %8.2f  %6.3f  %s\n",
               f64 ? "f64" : "f32", (long long)M, (long long)N, (long long)K,
               kernel ? kernel : "default", med_dd, flop / med_dd / 1e12, med_mul, med_mp,
               flop / med_mp / 1e12, med_mp / med_dd, "passed");
        fflush(stdout);
        if (o->json)
            write_json(o, ri, shape, f64, kernel, m, tdd, tmp, tmul, med_dd, med_mp, med_mul,
                       worst_dd, worst_mp);
    }
    free(tdd);
    free(tmp);
    free(tmul);
    MP(cublasMpMatrixDescriptorDestroy(m->da));
    MP(cublasMpMatrixDescriptorDestroy(m->db));
    MP(cublasMpMatrixDescriptorDestroy(m->dc));
    CUDA(cudaFree(m->dwork));
    free(m->hwork);
    CUDA(cudaFree(m->A));
    CUDA(cudaFree(m->B));
    CUDA(cudaFree(m->C));
    CUDA(cudaFree(d.A));
    CUDA(cudaFree(d.B));
    CUDA(cudaFree(d.C));
}

/* dgemm-dist's default grid: P×Q = size, P <= Q, most nearly square. */
static void pick_grid(int size, int *P, int *Q)
{
    int p = 1;
    for (int d = 1; (int64_t)d * d <= size; d++)
        if (size % d == 0)
            p = d;
    *P = p;
    *Q = size / p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    opts o;
    int prc = parse(argc, argv, &o);
    if (prc != BENCH_GO) {
        MPI_Finalize();
        return prc;
    }

    /* one GPU per rank of a node, as dgemm-dist's CUDA engine picks it */
    MPI_Comm node;
    int lrank = 0, lsize = 1, count = 0, any_none = 0, none;
    MPIC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node));
    MPIC(MPI_Comm_rank(node, &lrank));
    MPIC(MPI_Comm_size(node, &lsize));
    cudaError_t cr = cudaGetDeviceCount(&count);
    none = cr != cudaSuccess || count == 0;
    MPIC(MPI_Allreduce(&none, &any_none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (any_none) {
        if (!g_rank)
            printf("cublasmp-bench: skipped: no CUDA GPU visible on some rank\n");
        MPI_Finalize();
        return SKIP;
    }
    CUDA(cudaSetDevice(lrank % count));
    CUDA(cudaFree(NULL));
    if (!o.fill_threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        o.fill_threads = cores > lsize ? (int)(cores / lsize) : 1;
    }

    run_info ri;
    memset(&ri, 0, sizeof ri);
    pick_grid(g_size, &ri.P, &ri.Q);
    struct cudaDeviceProp prop;
    CUDA(cudaGetDeviceProperties(&prop, lrank % count));
    snprintf(ri.gpu, sizeof ri.gpu, "%.255s", prop.name);
    int mpv = 0, ncv = 0, ddv[3] = {0, 0, 0};
    MP(cublasMpGetVersion(&mpv));
    NCCL(ncclGetVersion(&ncv));
    dd_version(&ddv[0], &ddv[1], &ddv[2]);
    snprintf(ri.versions, sizeof ri.versions, "cuBLASMp %d.%d.%d, NCCL %d.%d.%d, dgemm-dist %d.%d.%d",
             mpv / 1000, mpv % 1000 / 100, mpv % 100, ncv / 10000, ncv % 10000 / 100, ncv % 100,
             ddv[0], ddv[1], ddv[2]);

    /* cuBLASMp: one NCCL communicator over the world, one stream, one grid */
    mp_side m;
    memset(&m, 0, sizeof m);
    ncclUniqueId id;
    if (!g_rank)
        NCCL(ncclGetUniqueId(&id));
    MPIC(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    ncclComm_t nccl;
    NCCL(ncclCommInitRank(&nccl, g_size, id, g_rank));
    CUDA(cudaStreamCreate(&m.stream));
    MP(cublasMpCreate(&m.h, m.stream));
    MP(cublasMpGridCreate(ri.P, ri.Q, CUBLASMP_GRID_LAYOUT_ROW_MAJOR, nccl, &m.grid));

    if (!g_rank) {
        printf("cublasmp-bench: %d GPU(s) (%s), grid %dx%d, %s, %s scaling, device data, "
               "median of %d\n",
               g_size, ri.gpu, ri.P, ri.Q, ri.versions, o.weak ? "weak" : "strong", o.reps);
        printf("%-4s %6s %6s %6s  %-12s %9s %8s %9s %9s %8s  %6s  %s\n", "type", "m", "n", "k",
               "dd_kernel", "dd_s", "dd_TF/s", "dd_mult_s", "mp_s", "mp_TF/s", "mp/dd", "check");
    }
    void *host = NULL;
    size_t host_bytes = 0;
    for (int t = 0; t < 2; t++) {
        int f64 = t == 0;
        if (!(f64 ? o.f64 : o.f32))
            continue;
        dd_context_options copt;
        dd_context_options_init(&copt);
        copt.backend = "cuda";
        copt.type = f64 ? DD_FLOAT64 : DD_FLOAT32;
        copt.kernel = f64 ? o.kernel_f64 : o.kernel_f32;
        copt.P = ri.P;
        copt.Q = ri.Q;
        dd_context *ctx = NULL;
        char msg[512] = "";
        dd_status st = dd_context_create(MPI_COMM_WORLD, &copt, &ctx, msg, sizeof msg);
        if (st != DD_SUCCESS) {
            if (!g_rank)
                fprintf(stderr, "cublasmp-bench: dd_context_create: %s: %s\n",
                        dd_status_string(st), msg);
            MPI_Finalize();
            return 1;
        }
        for (int s = 0; s < o.nshapes; s++) {
            int64_t shape[3];
            for (int i = 0; i < 3; i++) {
                shape[i] = o.shapes[s][i];
                if (o.weak)
                    shape[i] = (int64_t)llround(cbrt((double)g_size) * (double)shape[i] / 256.0) *
                               256;
                if (shape[i] < 1)
                    shape[i] = 1;
            }
            one(&o, &ri, ctx, &m, f64, shape, &host, &host_bytes);
        }
        dd_context_destroy(ctx);
    }
    free(host);
    MP(cublasMpGridDestroy(m.grid));
    MP(cublasMpDestroy(m.h));
    NCCL(ncclCommFinalize(nccl));
    NCCL(ncclCommDestroy(nccl));
    CUDA(cudaStreamDestroy(m.stream));
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
