/* cpu_bench.c — the CPU backend's multiply phase against a direct
 * cblas_dgemm/sgemm on the same matrices, in the same run.
 *
 *   mpirun -np 1 cpu-bench [--size N] [--reps R] [--panel NB] [--dtype f64|f32] [--json FILE]
 *
 * Both sides: random inputs from the project's generator, one warm-up, R
 * timed runs each, interleaved, median.  The SUMMA side is the real driver (summa.c) with the
 * CPU engine and the host MPI comm backend, as dgemm-dist runs it; its
 * result is checked against the direct product before any time is shown. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "bench_opts.h"
#include "dd_json.h"
#include "rng.h"
#include "summa.h"
#include "timer.h"

static const char USAGE[] =
    "usage: mpirun -np 1 cpu-bench [--size N] [--reps R] [--panel NB] [--dtype f64|f32]\n"
    "                              [--json FILE]\n";

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int64_t n = 2048, nb = 512;
    int reps = 7, dtype = 0;
    const char *json = NULL;
    const bench_opt table[] = {
        {"--size", BENCH_I64, &n, 1, 1 << 20, 0, 0, NULL, NULL},
        {"--reps", BENCH_INT, &reps, 1, 100000, 0, 0, NULL, NULL},
        {"--panel", BENCH_I64, &nb, 1, 1 << 20, 0, 0, NULL, NULL},
        {"--dtype", BENCH_CHOICE, &dtype, 0, 0, 0, 0, "f64|f32", NULL},
        {"--json", BENCH_STRING, &json, 0, 0, 0, 0, NULL, NULL},
        {NULL, BENCH_FLAG, NULL, 0, 0, 0, 0, NULL, NULL}};
    int size, prc = bench_parse("cpu-bench", USAGE, table, argc, argv, stderr);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (prc == BENCH_GO && size != 1) {
        fprintf(stderr, "cpu-bench: runs on one rank (mpirun -np 1), not %d\n", size);
        prc = 2;
    }
    if (prc != BENCH_GO) {
        MPI_Finalize();
        return prc;
    }
    dd_dtype t = dtype ? DD_F32 : DD_F64;
    size_t es = dd_elsize(t), bytes = (size_t)(n * n) * es;
    void *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *Cref = malloc(bytes);
    double *tb = malloc(sizeof(double) * (size_t)reps), *ts = malloc(sizeof(double) * (size_t)reps);
    if (!A || !B || !C || !Cref || !tb || !ts) {
        fprintf(stderr, "cpu-bench: out of memory\n");
        return 1;
    }
    rng_fill_block(A, t, 3, RNG_TAG_A, 0, n, 0, n, n);
    rng_fill_block(B, t, 3, RNG_TAG_B, 0, n, 0, n, n);

    /* the SUMMA driver, as dgemm-dist runs it on one rank */
    dd_err err = {{0}};
    dd_engine e = {0};
    dd_comm c = {0};
    dd_engine_cfg ecfg = {MPI_COMM_WORLD, MPI_COMM_SELF, t, NULL, 0};
    e.ops = &dd_engine_cpu;
    dd_summa s;
    memset(&s, 0, sizeof s);
    s.engine = &e;
    s.comm = &c;
    s.g = grid_make(1, 1, 0);
    s.type = t;
    s.M = s.N = s.K = n;
    s.nb = nb;
    s.lookahead = 1;
    s.A = A;
    s.B = B;
    s.C = C;
    summa_shape(&s);
    dd_comm_cfg ccfg = {.world = MPI_COMM_WORLD,
                        .row = MPI_COMM_SELF,
                        .col = MPI_COMM_SELF,
                        .nslots = 2,
                        .work_is_host = 1,
                        .ranks_per_device = 1};
    c.ops = &dd_comm_mpi_host;
    int rc = e.ops->open(&e, &ecfg, &err);
    if (!rc)
        rc = c.ops->open(&c, &ccfg, &err);
    if (!rc)
        rc = summa_setup(&s, &err);
    /* Interleaved, so that drift in the machine's load falls on both sides. */
    for (int r = -1; r < reps && !rc; r++) {
        double t0 = dd_now();
        if (t == DD_F64)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, A,
                        (int)n, B, (int)n, 0.0, Cref, (int)n);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, A,
                        (int)n, B, (int)n, 0.0f, Cref, (int)n);
        double tblas = dd_now() - t0, sec, gemm;
        rc = summa_multiply(&s, 0, &sec, &gemm, &err);
        if (r >= 0) {
            tb[r] = tblas;
            ts[r] = sec;
        }
    }
    if (rc) {
        fprintf(stderr, "cpu-bench: %s\n", err.msg);
        return 1;
    }
    double maxerr = 0, maxref = 0;
    for (int64_t i = 0; i < n * n; i++) {
        double a = t == DD_F64 ? ((double *)C)[i] : ((float *)C)[i];
        double b = t == DD_F64 ? ((double *)Cref)[i] : ((float *)Cref)[i];
        maxerr = fmax(maxerr, fabs(a - b));
        maxref = fmax(maxref, fabs(b));
    }
    double tol = (t == DD_F64 ? 1e-15 : 1e-6) * (double)n * 4;
    if (!(maxerr <= tol * fmax(maxref, 1))) {
        fprintf(stderr, "cpu-bench: SUMMA result differs from BLAS by %.3g: not timing it\n",
                maxerr);
        return 1;
    }
    double mb = dd_median_sort(tb, reps), ms = dd_median_sort(ts, reps);
    double fl = 2.0 * (double)n * n * n;
    printf("%-28s %6s %8s %10s %10s %8s\n", "what", "type", "n", "ms", "GFLOP/s", "% BLAS");
    printf("%-28s %6s %8lld %10.2f %10.1f %8.1f\n", "cblas direct", dd_dtype_name(t), (long long)n,
           mb * 1e3, fl / mb / 1e9, 100.0);
    printf("%-28s %6s %8lld %10.2f %10.1f %8.1f\n", "dgemm-dist multiply phase", dd_dtype_name(t),
           (long long)n, ms * 1e3, fl / ms / 1e9, 100.0 * mb / ms);
    printf("(panel %lld, %lld panels, median of %d after 1 warm-up; %s; max |diff| %.2g)\n",
           (long long)nb, (long long)s.npanels, reps, engine_cpu_blas_version(), maxerr);
    if (json) {
        FILE *f = fopen(json, "a");
        if (f) {
            fputs("{\"tool\":\"cpu-bench\"", f);
            dd_json_kv_str(f, "dtype", dd_dtype_name(t));
            dd_json_kv_int(f, "n", n);
            dd_json_kv_int(f, "panel", nb);
            dd_json_kv_int(f, "reps", reps);
            dd_json_kv_num(f, "blas_ms", mb * 1e3);
            dd_json_kv_num(f, "summa_ms", ms * 1e3);
            dd_json_kv_num(f, "ratio", mb / ms);
            dd_json_kv_str(f, "blas", engine_cpu_blas_version());
            fputs("}\n", f);
            fclose(f);
        } else {
            fprintf(stderr, "cpu-bench: cannot append to %s\n", json);
        }
    }
    summa_teardown(&s);
    c.ops->close(&c);
    e.ops->close(&e);
    MPI_Finalize();
    return 0;
}
