/* test_engine_aux_gpu.c — the CUDA engine's absmax, matvec and fill_random
 * (engine.h, src/engine/engine_cuda_kernels.cu) against the CPU engine's, on the GPU:
 *   fill_random  bit for bit equal to rng_fill_block, f64 and f32, on odd
 *                shapes and offsets (row0, col0, gcols; indices past 2^32);
 *   absmax       equal to the CPU engine's (a maximum is exact), and the
 *                same NaN/Inf flag, with NaN, +Inf, -Inf planted;
 *   matvec       out within 1e-12 of the CPU engine's, relative to
 *                Σ_j |m'·v| (the sums' order differs), absrow within 1e-12
 *                relative, non-finite rows alike (NaN / same-signed Inf),
 *                the same flag; one row, one column, few rows of many
 *                columns, many rows of few, inputs near the range's ends.
 * The engine's scratch grows from case to case.  Exit 77 (skipped) where no
 * GPU is visible. */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#define DD_CHECK_MATRICES
#include "dd_check.h"
#include "engine.h"
#include "rng.h"

static dd_engine gpu, cpu;

/* A host copy in GPU memory (NULL for 0 bytes); ends the test on failure. */
static void *to_gpu(const void *host, size_t bytes)
{
    void *d = NULL;
    dd_err err = {{0}};
    if (gpu.ops->alloc(&gpu, bytes, &d, &err) || gpu.ops->upload(&gpu, d, host, bytes, &err)) {
        fprintf(stderr, "FAIL: GPU alloc/upload of %zu bytes: %s\n", bytes, err.msg);
        exit(1);
    }
    return d;
}

/* trans: a block of the transpose (rng_fill_block_t), as for --transa T */
static void fill_case_t(dd_dtype t, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                        int64_t gcols, uint64_t seed, int trans)
{
    size_t bytes = (size_t)(rows * cols) * dd_elsize(t);
    void *want = malloc(bytes + 1), *got = malloc(bytes + 1), *d = NULL;
    memset(got, 0x5a, bytes + 1);
    if (trans)
        rng_fill_block_t(want, t, seed, RNG_TAG_A, row0, rows, col0, cols, gcols);
    else
        rng_fill_block(want, t, seed, RNG_TAG_A, row0, rows, col0, cols, gcols);
    dd_err err = {{0}};
    int rc = gpu.ops->alloc(&gpu, bytes, &d, &err);
    if (!rc)
        rc = gpu.ops->fill_random(&gpu, t, d, seed, RNG_TAG_A, row0, rows, col0, cols, gcols, trans,
                                  &err);
    if (!rc)
        rc = gpu.ops->download(&gpu, got, d, bytes, &err);
    CHECK(rc == DD_OK, "fill_random: %s", err.msg);
    int64_t bad = -1, n = rows * cols;
    for (int64_t i = 0; i < n && bad < 0; i++)
        if (memcmp((char *)got + (size_t)i * dd_elsize(t), (char *)want + (size_t)i * dd_elsize(t),
                   dd_elsize(t)))
            bad = i;
    CHECK(!rc && bad < 0,
          "fill_random %s %lldx%lld at (%lld,%lld) of %lld cols: element %lld = %.17g, host %.17g",
          dd_dtype_name(t), (long long)rows, (long long)cols, (long long)row0, (long long)col0,
          (long long)gcols, (long long)bad, bad < 0 ? 0 : tm_get(got, t, bad),
          bad < 0 ? 0 : tm_get(want, t, bad));
    gpu.ops->free(&gpu, d);
    free(want);
    free(got);
}

static void fill_case(dd_dtype t, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                      int64_t gcols, uint64_t seed)
{
    fill_case_t(t, row0, rows, col0, cols, gcols, seed, 0);
    fill_case_t(t, row0, rows, col0, cols, gcols, seed, 1);
}

/* scale (alpha, beta) bit for bit as the CPU engine's, s = 0 without
 * reading (NaN planted), s = 1 untouched; copy (the saved beta·C) exact. */
static void scale_case(dd_dtype t, int64_t n, double s)
{
    size_t bytes = (size_t)n * dd_elsize(t);
    /* NaN only where it must not be read: a NaN's payload is the engine's */
    void *h = tm_make(t, 1, n, 3, s == 0 && n > 2 ? NAN : 0, 31), *want = malloc(bytes + 1);
    void *got = malloc(bytes + 1), *d = to_gpu(h, bytes), *d2 = NULL;
    memcpy(want, h, bytes);
    dd_err err = {{0}};
    int rc = cpu.ops->scale(&cpu, t, want, n, s, &err);
    if (!rc)
        rc = gpu.ops->scale(&gpu, t, d, n, s, &err);
    if (!rc)
        rc = gpu.ops->alloc(&gpu, bytes, &d2, &err);
    if (!rc)
        rc = gpu.ops->copy(&gpu, d2, d, bytes, &err);
    if (!rc)
        rc = gpu.ops->download(&gpu, got, d2, bytes, &err);
    CHECK(rc == DD_OK, "scale/copy: %s", err.msg);
    CHECK(!rc && !memcmp(got, want, bytes), "scale %s n %lld by %g differs from the CPU engine's",
          dd_dtype_name(t), (long long)n, s);
    for (int64_t i = 0; s == 0 && !rc && i < n; i++)
        CHECK(tm_get(got, t, i) == 0 && !signbit(tm_get(got, t, i)), "scale by 0 left %g at %lld",
              tm_get(got, t, i), (long long)i);
    gpu.ops->free(&gpu, d);
    gpu.ops->free(&gpu, d2);
    free(h);
    free(want);
    free(got);
}

/* upload_t_async into a wider work block and download_t_async back, bit
 * for bit as the CPU engine's (a band up turned, then down turned). */
static void turn_case(dd_dtype t, int64_t h, int64_t w, int64_t ldd)
{
    size_t es = dd_elsize(t), n = (size_t)(h * w), blk = (size_t)(w * ldd) * es;
    void *band = tm_make(t, h, w, 0, 0, 41), *want = calloc(1, blk + 1), *got = malloc(blk + 1);
    void *back = malloc(n * es + 1), *d = NULL;
    dd_err err = {{0}};
    int rc = cpu.ops->upload_t_async(&cpu, want, ldd, band, h, w, es, &err);
    if (!rc)
        rc = gpu.ops->alloc(&gpu, blk, &d, &err);
    if (!rc)
        rc = gpu.ops->zero(&gpu, d, blk, &err);
    if (!rc)
        rc = gpu.ops->upload_t_async(&gpu, d, ldd, band, h, w, es, &err);
    if (!rc)
        rc = gpu.ops->wait_copies(&gpu, &err);
    if (!rc)
        rc = gpu.ops->download(&gpu, got, d, blk, &err);
    if (!rc)
        rc = gpu.ops->download_t_async(&gpu, back, d, ldd, h, w, es, &err);
    if (!rc)
        rc = gpu.ops->wait_copies(&gpu, &err);
    CHECK(rc == DD_OK, "turned copies: %s", err.msg);
    CHECK(!rc && !memcmp(got, want, blk),
          "upload_t %s %lldx%lld (ldd %lld) differs from the CPU's", dd_dtype_name(t),
          (long long)h, (long long)w, (long long)ldd);
    CHECK(!rc && !memcmp(back, band, n * es), "download_t %s %lldx%lld did not turn it back",
          dd_dtype_name(t), (long long)h, (long long)w);
    gpu.ops->free(&gpu, d);
    free(band);
    free(want);
    free(got);
    free(back);
}

static void absmax_case(dd_dtype t, int64_t n, int scale, double plant)
{
    void *h = tm_make(t, 1, n, scale, plant, 21);
    void *d = to_gpu(h, (size_t)n * dd_elsize(t));
    double gm = -1, cm = -2;
    int gnf = -1, cnf = -2;
    dd_err err = {{0}};
    int rc = gpu.ops->absmax(&gpu, t, d, n, &gm, &gnf, &err);
    CHECK(rc == DD_OK, "GPU absmax: %s", err.msg);
    rc = cpu.ops->absmax(&cpu, t, h, n, &cm, &cnf, &err);
    CHECK(rc == DD_OK, "CPU absmax: %s", err.msg);
    CHECK(gm == cm && gnf == cnf, "absmax %s n %lld scale %d plant %g: GPU %.17g/%d, CPU %.17g/%d",
          dd_dtype_name(t), (long long)n, scale, plant, gm, gnf, cm, cnf);
    gpu.ops->free(&gpu, d);
    free(h);
}

/* Same non-finite class, or |a − b| <= rel·scale. */
static int agree(double a, double b, double rel, double scale)
{
    if (!isfinite(a) || !isfinite(b))
        return (isnan(a) && isnan(b)) || a == b;
    return fabs(a - b) <= rel * scale;
}

/* Compare the GPU's out/absrow with the CPU's, row by row. */
static void matvec_compare(dd_dtype t, const void *h, int64_t rows, int64_t cols, const double f[2],
                           const double *v, const double *out[2], const double *abs[2],
                           const char *what)
{
    for (int64_t i = 0; i < rows; i++) {
        double mag = 0; /* Σ_j |m'·v|: the scale of the sums' rounding */
        for (int64_t j = 0; j < cols; j++)
            mag += fabs(tm_get(h, t, i * cols + j) * f[0] * f[1] * v[j]);
        CHECK(agree(out[0][i], out[1][i], 1e-12, mag),
              "%s: out[%lld] GPU %.17g CPU %.17g (scale %g)", what, (long long)i, out[0][i],
              out[1][i], mag);
        if (abs[0])
            CHECK(agree(abs[0][i], abs[1][i], 1e-12, abs[1][i]),
                  "%s: absrow[%lld] GPU %.17g CPU %.17g", what, (long long)i, abs[0][i],
                  abs[1][i]);
    }
}

static void matvec_case(dd_dtype t, int64_t rows, int64_t cols, int scale, double plant,
                        int with_abs)
{
    void *h = tm_make(t, rows, cols, scale, plant, 22);
    void *d = to_gpu(h, (size_t)(rows * cols) * dd_elsize(t));
    double f[2] = {ldexp(1.0, -scale / 2), ldexp(1.0, -(scale - scale / 2))};
    size_t vb = sizeof(double) * (size_t)(cols + 1), rb = sizeof(double) * (size_t)(rows + 1);
    double *v = malloc(vb), *o[2] = {malloc(rb), malloc(rb)}, *a[2] = {NULL, NULL};
    if (with_abs) {
        a[0] = malloc(rb);
        a[1] = malloc(rb);
    }
    rng_fill_block(v, DD_F64, 23, RNG_TAG_X, 0, 1, 0, cols, cols);
    int nf[2] = {-1, -2};
    dd_err err = {{0}};
    char what[160];
    snprintf(what, sizeof what, "matvec %s %lldx%lld scale %d plant %g", dd_dtype_name(t),
             (long long)rows, (long long)cols, scale, plant);
    CHECK(gpu.ops->matvec(&gpu, t, d, rows, cols, f, v, o[0], a[0], &nf[0], &err) == DD_OK,
          "%s: GPU: %s", what, err.msg);
    CHECK(cpu.ops->matvec(&cpu, t, h, rows, cols, f, v, o[1], a[1], &nf[1], &err) == DD_OK,
          "%s: CPU: %s", what, err.msg);
    CHECK(nf[0] == nf[1], "%s: nonfinite GPU %d CPU %d", what, nf[0], nf[1]);
    matvec_compare(t, h, rows, cols, f, v, (const double **)o, (const double **)a, what);
    gpu.ops->free(&gpu, d);
    free(h);
    free(v);
    for (int i = 0; i < 2; i++) {
        free(o[i]);
        free(a[i]);
    }
}

static void all_cases(dd_dtype t)
{
    static const double plants[] = {0, NAN, INFINITY, -INFINITY};
    int big = t == DD_F64 ? 1000 : 100; /* near the top of the type's range */
    fill_case(t, 0, 1, 0, 1, 1, 1);
    fill_case(t, 5, 37, 3, 41, 101, 7);
    fill_case(t, 1000, 129, 77, 257, 10000, 0xfeedfacecafebeefULL);
    fill_case(t, 3, 1000, 0, 1, 5, 9);                    /* one column of many rows */
    fill_case(t, 0, 2, 11, 1100001, 1200000, 10);         /* rows past the grid's x: stride */
    fill_case(t, (int64_t)1 << 33, 3, 5, 7, 1 << 20, 42); /* indices past 2^32 */
    fill_case(t, 70000, 600000, 0, 3, 3, 43);             /* past the grid's y: stride */
    for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
        absmax_case(t, 1, 0, plants[p]);
        absmax_case(t, 1001, 0, plants[p]);
        absmax_case(t, 3000017, big, plants[p]);
        absmax_case(t, 4099, -big, plants[p]);
        matvec_case(t, 1, 1, 0, plants[p], 1);
        matvec_case(t, 37, 29, 0, plants[p], 1);
        matvec_case(t, 5, 100003, big, plants[p], 1); /* few rows, many columns */
        matvec_case(t, 10007, 3, 0, plants[p], 0);    /* many rows, few columns */
        matvec_case(t, 600001, 1, 0, plants[p], 1);   /* past the grid's cap: stride */
        matvec_case(t, 300, 33, -big, plants[p], 1);
        matvec_case(t, 257, 4097, 0, plants[p], 1);
    }
    turn_case(t, 1, 1, 1);
    turn_case(t, 37, 101, 40);     /* partial tiles, a wider block */
    turn_case(t, 512, 4099, 600);  /* a band of many tiles */
    turn_case(t, 70000, 3, 70001); /* past the grid's y cap: strided tiles */
    static const double scales[] = {-0.5, 2.5, 0.1, 1.0 / 3, 1, 0, -1e-300, 1e300};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        scale_case(t, 1, scales[i]);
        scale_case(t, 1000003, scales[i]);
    }
    absmax_case(t, 0, 0, 0);
    matvec_case(t, 0, 5, 0, 0, 1);
    matvec_case(t, 4, 0, 0, 0, 1); /* empty rows: sums 0 */
    matvec_case(t, 3, 5, 0, 0, 1); /* the scratch, grown, still serves small cases */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_engine_cfg cfg = {MPI_COMM_WORLD, MPI_COMM_SELF, DD_F64, NULL, 1};
    dd_err err = {{0}};
    gpu.ops = &dd_engine_cuda;
    int rc = gpu.ops->open(&gpu, &cfg, &err);
    if (rc == DD_EUNSUP) {
        printf("skipped: %s\n", err.msg);
        MPI_Finalize();
        return 77;
    }
    cpu.ops = &dd_engine_cpu;
    if (rc || cpu.ops->open(&cpu, &cfg, &err)) {
        fprintf(stderr, "FAIL: engine open: %s\n", err.msg);
        MPI_Finalize();
        return 1;
    }
    printf("GPU: %s\n", gpu.info.device);
    all_cases(DD_F64);
    all_cases(DD_F32);
    gpu.ops->close(&gpu);
    cpu.ops->close(&cpu);
    MPI_Finalize();
    if (g_fail) {
        fprintf(stderr, "%d g_fail\n", g_fail);
        return 1;
    }
    printf("engine_cuda: fill_random (and transposed) bit for bit, scale, copy and turned copies "
           "bit for bit, absmax and matvec as the CPU engine's\n");
    return 0;
}
