/* model_calib.c — the figures the performance model (src/model) is built
 * from, measured through the program's own engine and comm backends:
 *
 *   mpirun -np 1 model-calib --gemm  [--backend cpu|cuda] [--dtype f64|f32] [--threads T]
 *                                    [--shape MxNxK]... [--reps R] [--json FILE]
 *   mpirun -np P model-calib --bcast [--backend cpu|cuda] [--comm auto|nccl|mpi]
 *                                    [--rows R] [--reps R] [--inflight 1|2] [--json FILE]
 *
 * --gemm times the engine's local multiply (beta 1, as SUMMA's panels after
 * the first) at the panel shapes a run meets; one warm-up, median of R and
 * the best (on a shared machine the best is the machine's, the median
 * also its neighbours').
 * --bcast times one panel broadcast over all P ranks (grid 1×P, the A
 * panel's path: post, wait, release, then the phase clock's end), R rows ×
 * width columns for widths 1 .. 4096, median over reps of the slowest
 * rank, then fits t = a + bytes·b by least squares: the link's latency is
 * a/(P-1) (ring) and its bandwidth 1/b.  JSON lines, one per figure and one
 * per fit; bench/gpu/model_check.sh and the tables' README use them.
 * --inflight 2 keeps two broadcasts in flight (both slots posted, then
 * both waited), as SUMMA's pipeline does with lookahead 1, and reports the
 * time per broadcast: some links (sockets, staged MPI) move more that way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "comm.h"
#include "dd_json.h"
#include "engine.h"
#include "timer.h"

typedef struct {
    const char *backend, *comm, *json;
    dd_dtype type;
    int threads, reps, gemm, bcast, inflight;
    int64_t rows;
    int nshapes;
    int64_t shape[32][3];
} opts;

static FILE *open_json(const opts *o, int rank)
{
    return o->json && rank == 0 ? fopen(o->json, "a") : NULL;
}

/* The shapes a run's local multiply meets: squares and full-height panels. */
static void default_shapes(opts *o, int gpu)
{
    static const int64_t cpu[][3] = {{256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                                     {2048, 2048, 2048}, {2048, 2048, 128},  {2048, 2048, 512},
                                     {1024, 1024, 256},  {1024, 2048, 512},  {2048, 1024, 512},
                                     {1448, 1448, 512},  {2896, 2896, 512},  {1024, 512, 512}};
    static const int64_t gpu_s[][3] = {{2048, 2048, 2048},    {4096, 4096, 4096},
                                       {8192, 8192, 8192},    {16384, 16384, 16384},
                                       {16384, 16384, 256},   {16384, 16384, 512},
                                       {16384, 16384, 1024},  {16384, 16384, 2048},
                                       {16384, 8192, 2048},   {16384, 8192, 256},
                                       {32768, 16384, 2048},  {32768, 16384, 256},
                                       {8192, 8192, 2048},    {4096, 4096, 2048},
                                       {2048, 2048, 512},     {1024, 1024, 1024}};
    const int64_t(*s)[3] = gpu ? gpu_s : cpu;
    int n = gpu ? (int)(sizeof gpu_s / sizeof *gpu_s) : (int)(sizeof cpu / sizeof *cpu);
    for (int i = 0; i < n; i++)
        memcpy(o->shape[i], s[i], sizeof o->shape[i]);
    o->nshapes = n;
}

static int gemm_one(dd_engine *e, const opts *o, const int64_t sh[3], FILE *js)
{
    dd_err err = {{0}};
    int64_t m = sh[0], n = sh[1], k = sh[2];
    size_t es = dd_elsize(o->type);
    void *A = NULL, *B = NULL, *C = NULL;
    double *t = calloc((size_t)o->reps, sizeof *t), sec = 0, g = 0;
    int rc = e->ops->alloc(e, (size_t)(m * k) * es, &A, &err);
    rc = rc ? rc : e->ops->alloc(e, (size_t)(k * n) * es, &B, &err);
    rc = rc ? rc : e->ops->alloc(e, (size_t)(m * n) * es, &C, &err);
    rc = rc ? rc : e->ops->fill_random(e, o->type, A, 7, 1, 0, m, 0, k, k, 0, &err);
    rc = rc ? rc : e->ops->fill_random(e, o->type, B, 7, 2, 0, k, 0, n, n, 0, &err);
    rc = rc ? rc : e->ops->zero(e, C, (size_t)(m * n) * es, &err);
    for (int r = -1; r < o->reps && !rc && t; r++) {
        e->ops->reset_timers(e);
        rc = e->ops->phase_begin(e, &err);
        rc = rc ? rc : e->ops->gemm(e, o->type, m, n, k, A, k, B, n, 1, C, n, NULL, NULL, &err);
        rc = rc ? rc : e->ops->phase_end(e, &sec, &g, &err);
        if (r >= 0)
            t[r] = g > 0 ? g : sec;
    }
    if (!rc && t) {
        double med = dd_median_sort(t, o->reps), gf = 2.0 * (double)m * n * k / med / 1e9;
        double best = 2.0 * (double)m * n * k / t[0] / 1e9; /* sorted by dd_median_sort() */
        printf("gemm %-6s %-12s %6lld %6lld %6lld %10.3f ms %10.1f GFLOP/s (best %.1f)\n",
               dd_dtype_name(o->type), e->info.kernel, (long long)m, (long long)n, (long long)k,
               med * 1e3, gf, best);
        if (js) {
            fputs("{\"tool\":\"model-calib\",\"what\":\"gemm\",\"device\":", js);
            dd_json_str(js, e->info.device);
            dd_json_kv_str(js, "kernel", e->info.kernel);
            dd_json_kv_str(js, "dtype", dd_dtype_name(o->type));
            dd_json_kv_int(js, "threads", o->threads);
            dd_json_kv_int(js, "m", m);
            dd_json_kv_int(js, "n", n);
            dd_json_kv_int(js, "k", k);
            dd_json_kv_num(js, "seconds", med);
            dd_json_kv_num(js, "gflops", gf);
            dd_json_kv_num(js, "gflops_best", best);
            fputs("}\n", js);
        }
    } else if (rc) {
        fprintf(stderr, "model-calib: %lldx%lldx%lld: %s\n", (long long)m, (long long)n,
                (long long)k, err.msg);
    }
    void *bufs[] = {A, B, C};
    for (int i = 0; i < 3; i++)
        if (bufs[i])
            e->ops->free(e, bufs[i]);
    free(t);
    return rc;
}

/* One broadcast of rows × w over the world as a grid row; seconds of the slowest rank. */
static int bcast_once(dd_engine *e, dd_comm *c, const opts *o, void *src, void *dst, int64_t w,
                      int rank, double *sec, dd_err *err)
{
    dd_panel_xfer x;
    memset(&x, 0, sizeof x);
    x.type = o->type;
    x.a.active = 1;
    x.a.root = 0;
    x.a.is_root = rank == 0;
    x.a.src = rank == 0 ? src : NULL;
    x.a.src_ld = w;
    x.a.rows = o->rows;
    x.a.width = w;
    x.a.dst = dst;
    double g = 0, mine = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    e->ops->reset_timers(e);
    int rc = e->ops->phase_begin(e, err);
    for (int sl = 0; sl < o->inflight && !rc; sl++) {
        x.slot = sl;
        x.a.dst = (char *)dst + (size_t)sl * (size_t)(o->rows * w) * dd_elsize(o->type);
        rc = c->ops->post(c, &x, err);
    }
    for (int sl = 0; sl < o->inflight && !rc; sl++) {
        rc = c->ops->wait(c, sl, err);
        rc = rc ? rc : c->ops->release(c, sl, err);
    }
    rc = rc ? rc : e->ops->phase_end(e, &mine, &g, err);
    MPI_Allreduce(&mine, sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *sec /= o->inflight; /* per broadcast */
    return rc;
}

static void fit_line(const double *x, const double *y, int n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

static int bcast_all(dd_engine *e, dd_comm *c, const opts *o, int rank, int size, FILE *js)
{
    static const int64_t widths[] = {1, 16, 128, 256, 512, 1024, 2048, 4096};
    enum { NW = sizeof widths / sizeof *widths };
    size_t es = dd_elsize(o->type), big = (size_t)o->rows * 4096 * es;
    void *src = NULL, *dst = NULL;
    double *t = calloc((size_t)o->reps, sizeof *t), xs[NW], ys[NW], a = 0, b = 0;
    dd_err err = {{0}};
    int rc = e->ops->alloc(e, big, &src, &err), n = 0;
    rc = rc ? rc : e->ops->alloc(e, big * (size_t)o->inflight, &dst, &err);
    rc = rc ? rc : e->ops->zero(e, src, big, &err);
    for (int i = 0; i < NW && !rc && t; i++) {
        for (int r = -1; r < o->reps && !rc; r++)
            rc = bcast_once(e, c, o, src, dst, widths[i], rank, r >= 0 ? &t[r] : &a, &err);
        if (rc)
            break;
        xs[n] = (double)o->rows * widths[i] * es;
        ys[n] = dd_median_sort(t, o->reps);
        if (rank == 0)
            printf("bcast %-6s p=%d %12.0f bytes %10.3f ms %8.2f GB/s\n", c->ops->name, size,
                   xs[n], ys[n] * 1e3, xs[n] / ys[n] / 1e9);
        if (js) {
            fputs("{\"tool\":\"model-calib\",\"what\":\"bcast\"", js);
            dd_json_kv_str(js, "comm", c->ops->name);
            dd_json_kv_int(js, "p", size);
            dd_json_kv_int(js, "inflight", o->inflight);
            dd_json_kv_int(js, "bytes", (long long)xs[n]);
            dd_json_kv_num_g(js, "seconds", ys[n], 6);
            fputs("}\n", js);
        }
        n++;
    }
    if (!rc && n >= 2) {
        fit_line(xs, ys, n, &a, &b);
        double alpha = size > 1 ? fmax(a, 0) / (size - 1) : 0, beta = b > 0 ? 1 / b : 0;
        if (rank == 0)
            printf("fit %s p=%d: t = %.3g s + bytes / %.3g GB/s (ring: alpha %.3g us per step)\n",
                   c->ops->name, size, a, beta / 1e9, alpha * 1e6);
        if (js) {
            fputs("{\"tool\":\"model-calib\",\"what\":\"fit\"", js);
            dd_json_kv_str(js, "comm", c->ops->name);
            dd_json_kv_str(js, "detail", c->detail);
            dd_json_kv_int(js, "p", size);
            dd_json_kv_int(js, "inflight", o->inflight);
            dd_json_kv_num_g(js, "intercept_s", a, 6);
            dd_json_kv_num_g(js, "alpha_s", alpha, 6);
            dd_json_kv_num_g(js, "beta_bytes_s", beta, 6);
            fputs("}\n", js);
        }
    }
    if (rc)
        fprintf(stderr, "model-calib: broadcast: %s\n", err.msg);
    if (src)
        e->ops->free(e, src);
    if (dst)
        e->ops->free(e, dst);
    free(t);
    return rc;
}

static const char USAGE[] =
    "usage: mpirun -np 1 model-calib --gemm [--backend cpu|cuda] [--dtype f64|f32]\n"
    "                   [--threads T] [--shape MxNxK]... [--reps R] [--json FILE]\n"
    "       mpirun -np P model-calib --bcast [--backend cpu|cuda] [--comm auto|nccl|mpi]\n"
    "                   [--rows R] [--reps R] [--inflight 1|2] [--json FILE]\n";

/* --shape MxNxK, once per shape (at most 32) */
static const char *opt_shape(const char *v, void *dest)
{
    opts *o = dest;
    int64_t d[1][3];
    int n = 0;
    if (o->nshapes >= 32 || bench_shapes(v, d, 1, &n))
        return "MxNxK (each 1..2147483647; at most 32 shapes)";
    memcpy(o->shape[o->nshapes++], d[0], sizeof d[0]);
    return NULL;
}

/* argv into o (bench_opts.h's rules); -1 to run, else the exit status. */
static int parse(int argc, char **argv, opts *o, FILE *err)
{
    *o = (opts){"cpu", "auto", NULL, DD_F64, 0, 5, 0, 0, 1, 0, 0, {{0}}};
    int dtype = 0;
    const bench_opt table[] = {
        {"--gemm", BENCH_FLAG, &o->gemm, 0, 0, 0, 0, NULL, NULL},
        {"--bcast", BENCH_FLAG, &o->bcast, 0, 0, 0, 0, NULL, NULL},
        {"--backend", BENCH_STRING, &o->backend, 0, 0, 0, 0, NULL, NULL},
        {"--comm", BENCH_STRING, &o->comm, 0, 0, 0, 0, NULL, NULL},
        {"--json", BENCH_STRING, &o->json, 0, 0, 0, 0, NULL, NULL},
        {"--dtype", BENCH_CHOICE, &dtype, 0, 0, 0, 0, "f64|f32", NULL},
        {"--threads", BENCH_INT, &o->threads, 0, 4096, 0, 0, NULL, NULL},
        {"--reps", BENCH_INT, &o->reps, 1, 100000, 0, 0, NULL, NULL},
        {"--inflight", BENCH_INT, &o->inflight, 1, 2, 0, 0, NULL, NULL},
        {"--rows", BENCH_I64, &o->rows, 1, 1 << 20, 0, 0, NULL, NULL},
        {"--shape", BENCH_CALL, o, 0, 0, 0, 0, NULL, opt_shape},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    int rc = bench_parse("model-calib", USAGE, table, argc, argv, err);
    o->type = dtype ? DD_F32 : DD_F64;
    if (rc == BENCH_GO && !o->gemm && !o->bcast) {
        if (err)
            fprintf(err, "model-calib: say what to measure, --gemm or --bcast (or both)\n");
        rc = 2;
    }
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, rc = DD_OK;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opts o;
    int prc = parse(argc, argv, &o, rank == 0 ? stderr : NULL);
    if (prc != BENCH_GO) {
        MPI_Finalize();
        return prc;
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    dd_engine e = {0};
    dd_comm c = {0};
    dd_err err = {{0}};
    char why[192];
    dd_engine_cfg ecfg = {MPI_COMM_WORLD, node, o.type, NULL, o.threads};
    rc = engine_select(o.backend, &ecfg, &e, why, sizeof why, &err);
    int eng_open = rc == DD_OK, gpu = eng_open && !e.ops->work_is_host;
    if (!o.nshapes)
        default_shapes(&o, gpu);
    if (!o.rows) /* not given */
        o.rows = gpu ? 16384 : 2048;
    FILE *js = open_json(&o, rank);
    for (int i = 0; !rc && o.gemm && rank == 0 && i < o.nshapes; i++)
        rc = gemm_one(&e, &o, o.shape[i], js);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!rc && o.bcast) {
        dd_comm_cfg cc = {MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_COMM_SELF, 2, e.ops->work_is_host,
                          e.ops->comm_stream(&e), e.ops->compute_stream(&e),
                          e.info.ranks_per_device};
        rc = comm_select(o.comm, &cc, &c, &err);
        if (!rc)
            rc = bcast_all(&e, &c, &o, rank, size, js);
        if (c.ops)
            c.ops->close(&c);
    }
    if (rc && err.msg[0] && rank == 0)
        fprintf(stderr, "model-calib: %s\n", err.msg);
    if (js)
        fclose(js);
    if (eng_open)
        e.ops->close(&e);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return rc ? 1 : 0;
}
