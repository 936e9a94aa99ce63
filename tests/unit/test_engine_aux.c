/* test_engine_aux.c — the CPU engine's absmax, matvec and fill_random
 * (engine.h), the ops the check (src/core/check.c) and --size generation
 * run on: against plain loops written here, on random data of both types
 * with NaN, +Inf and -Inf planted, scaled near the ends of the range,
 * empty shapes; fill_random against rng_fill_block bit for bit and against
 * rng_value element by element at odd offsets, transposed too; scale
 * (GEMM's alpha and beta) and copy against plain loops.  The GPU test
 * (tests/gpu/test_engine_aux_gpu.c) holds the CUDA engine to this one. */
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

/* The plain loops: what absmax and matvec mean. */
static void ref_absmax(const void *M, dd_dtype t, int64_t n, double *mx, int *nf)
{
    *mx = 0;
    *nf = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = tm_get(M, t, i);
        if (!isfinite(m))
            *nf = 1;
        else if (fabs(m) > *mx)
            *mx = fabs(m);
    }
}

/* Same value: equal, or both NaN, or within rel of each other. */
static int close_to(double a, double b, double rel)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static void absmax_case(dd_engine *e, dd_dtype t, int64_t n, int scale, double plant)
{
    void *M = tm_make(t, 1, n, scale, plant, 11);
    double mx = -1, want;
    int nf = -1, wnf;
    dd_err err = {{0}};
    ref_absmax(M, t, n, &want, &wnf);
    int rc = e->ops->absmax(e, t, M, n, &mx, &nf, &err);
    CHECK(rc == DD_OK, "absmax: %s", err.msg);
    CHECK(mx == want && nf == wnf, "absmax %s n %lld scale %d plant %g: %g/%d, want %g/%d",
          dd_dtype_name(t), (long long)n, scale, plant, mx, nf, want, wnf);
    free(M);
}

static void matvec_case(dd_engine *e, dd_dtype t, int64_t rows, int64_t cols, int scale,
                        double plant, int with_abs)
{
    void *M = tm_make(t, rows, cols, scale, plant, 12);
    double f[2] = {ldexp(1.0, -scale / 2), ldexp(1.0, -(scale - scale / 2))};
    double *v = malloc(sizeof(double) * (size_t)(cols + 1));
    double *out = malloc(sizeof(double) * (size_t)(rows + 1));
    double *abs = malloc(sizeof(double) * (size_t)(rows + 1));
    rng_fill_block(v, DD_F64, 13, RNG_TAG_X, 0, 1, 0, cols, cols);
    int nf = -1, wnf = 0;
    dd_err err = {{0}};
    int rc = e->ops->matvec(e, t, M, rows, cols, f, v, out, with_abs ? abs : NULL, &nf, &err);
    CHECK(rc == DD_OK, "matvec: %s", err.msg);
    for (int64_t i = 0; i < rows; i++) {
        double s = 0, a = 0;
        for (int64_t j = 0; j < cols; j++) {
            double m = tm_get(M, t, i * cols + j);
            wnf |= !isfinite(m);
            m = m * f[0] * f[1];
            s += m * v[j];
            a += fabs(m);
        }
        CHECK(close_to(out[i], s, 1e-14),
              "matvec %s %lldx%lld scale %d: out[%lld] = %.17g, want %.17g", dd_dtype_name(t),
              (long long)rows, (long long)cols, scale, (long long)i, out[i], s);
        if (with_abs)
            CHECK(close_to(abs[i], a, 1e-14), "matvec %s: absrow[%lld] = %.17g, want %.17g",
                  dd_dtype_name(t), (long long)i, abs[i], a);
    }
    CHECK(nf == wnf, "matvec %s %lldx%lld plant %g: nonfinite %d, want %d", dd_dtype_name(t),
          (long long)rows, (long long)cols, plant, nf, wnf);
    free(M);
    free(v);
    free(out);
    free(abs);
}

/* fill_random = rng_fill_block bit for bit, and each element is rng_value
 * at (row0 + i)·gcols + col0 + j (rounded to float for f32). */
static void fill_case(dd_engine *e, dd_dtype t, int64_t row0, int64_t rows, int64_t col0,
                      int64_t cols, int64_t gcols, uint64_t seed)
{
    size_t bytes = (size_t)(rows * cols) * dd_elsize(t) + 1;
    void *got = malloc(bytes), *want = malloc(bytes);
    memset(got, 0x5a, bytes);
    memset(want, 0x5a, bytes);
    dd_err err = {{0}};
    int rc =
        e->ops->fill_random(e, t, got, seed, RNG_TAG_B, row0, rows, col0, cols, gcols, 0, &err);
    CHECK(rc == DD_OK, "fill_random: %s", err.msg);
    rng_fill_block(want, t, seed, RNG_TAG_B, row0, rows, col0, cols, gcols);
    CHECK(!memcmp(got, want, bytes),
          "fill_random %s %lldx%lld at (%lld,%lld) of %lld columns "
          "differs from rng_fill_block",
          dd_dtype_name(t), (long long)rows, (long long)cols, (long long)row0, (long long)col0,
          (long long)gcols);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double v = rng_value(seed, RNG_TAG_B, (uint64_t)((row0 + i) * gcols + col0 + j));
            if (t == DD_F32)
                v = (double)(float)v;
            CHECK(tm_get(got, t, i * cols + j) == v && v >= -1 && v < 1,
                  "fill_random %s (%lld,%lld) = %.17g, want %.17g", dd_dtype_name(t), (long long)i,
                  (long long)j, tm_get(got, t, i * cols + j), v);
        }
    free(got);
    free(want);
}

/* trans: each element is rng_value at (col0 + j)·gcols + row0 + i, and the
 * block is rng_fill_block_t's: a block of the generator's matrix turned
 * (op(A) for --transa T). */
static void fill_case_t(dd_engine *e, dd_dtype t, int64_t row0, int64_t rows, int64_t col0,
                        int64_t cols, int64_t gcols, uint64_t seed)
{
    size_t bytes = (size_t)(rows * cols) * dd_elsize(t) + 1;
    void *got = malloc(bytes), *want = malloc(bytes), *plain = malloc(bytes);
    memset(got, 0x5a, bytes);
    memset(want, 0x5a, bytes);
    dd_err err = {{0}};
    int rc =
        e->ops->fill_random(e, t, got, seed, RNG_TAG_C, row0, rows, col0, cols, gcols, 1, &err);
    CHECK(rc == DD_OK, "fill_random trans: %s", err.msg);
    rng_fill_block_t(want, t, seed, RNG_TAG_C, row0, rows, col0, cols, gcols);
    CHECK(!memcmp(got, want, bytes), "fill_random trans differs from rng_fill_block_t");
    /* the same values as the untransposed block at (col0, row0), turned */
    rng_fill_block(plain, t, seed, RNG_TAG_C, col0, cols, row0, rows, gcols);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double v = rng_value(seed, RNG_TAG_C, (uint64_t)((col0 + j) * gcols + row0 + i));
            if (t == DD_F32)
                v = (double)(float)v;
            CHECK(tm_get(got, t, i * cols + j) == v && tm_get(plain, t, j * rows + i) == v,
                  "fill_random trans %s (%lld,%lld) = %.17g, want %.17g", dd_dtype_name(t),
                  (long long)i, (long long)j, tm_get(got, t, i * cols + j), v);
        }
    free(got);
    free(want);
    free(plain);
}

/* scale: one multiply in the element type (f32: by (float)s); 0 writes
 * zeros without reading (NaN planted does not survive); 1 touches nothing. */
static void scale_case(dd_engine *e, dd_dtype t, int64_t n, double s)
{
    void *x = malloc((size_t)n * dd_elsize(t) + 1), *y = malloc((size_t)n * dd_elsize(t) + 1);
    rng_fill_block(x, t, 3, RNG_TAG_A, 0, 1, 0, n, n);
    if (n > 1)
        tm_put(x, t, n / 2, NAN);
    memcpy(y, x, (size_t)n * dd_elsize(t));
    dd_err err = {{0}};
    CHECK(e->ops->scale(e, t, x, n, s, &err) == DD_OK, "scale: %s", err.msg);
    for (int64_t i = 0; i < n; i++) {
        double want =
            t == DD_F64 ? tm_get(y, t, i) * s : (double)((float)tm_get(y, t, i) * (float)s);
        double got = tm_get(x, t, i);
        int ok = s == 1 && isnan(tm_get(y, t, i)) ? isnan(got)
                 : s == 0                         ? got == 0 && !signbit(got)
                 : isnan(want)                    ? isnan(got)
                                                  : got == want;
        CHECK(ok, "scale %s by %g: [%lld] = %.17g, want %.17g", dd_dtype_name(t), s, (long long)i,
              got, s == 0 ? 0.0 : want);
    }
    void *z = malloc((size_t)n * dd_elsize(t) + 1);
    CHECK(e->ops->copy(e, z, x, (size_t)n * dd_elsize(t), &err) == DD_OK &&
               !memcmp(z, x, (size_t)n * dd_elsize(t)),
          "copy of %lld elements", (long long)n);
    free(x);
    free(y);
    free(z);
}

/* upload_t_async / download_t_async on the CPU: dst[j·ldd + i] =
 * src[i·w + j] into a wider block (ldd > h), and back, against loops. */
static void turn_case(dd_engine *e, dd_dtype t, int64_t h, int64_t w, int64_t ldd)
{
    size_t es = dd_elsize(t), n = (size_t)(h * w);
    void *band = malloc(n * es + 1), *block = calloc((size_t)(w * ldd) + 1, es);
    void *back = malloc(n * es + 1);
    rng_fill_block(band, t, 5, RNG_TAG_B, 0, h, 0, w, w);
    dd_err err = {{0}};
    int rc = e->ops->upload_t_async(e, block, ldd, band, h, w, es, &err);
    if (!rc)
        rc = e->ops->download_t_async(e, back, block, ldd, h, w, es, &err);
    CHECK(rc == DD_OK, "turned copies: %s", err.msg);
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++)
            CHECK(tm_get(block, t, j * ldd + i) == tm_get(band, t, i * w + j),
                  "upload_t %lldx%lld: (%lld,%lld)", (long long)h, (long long)w, (long long)i,
                  (long long)j);
    CHECK(!memcmp(back, band, n * es), "download_t %lldx%lld did not turn it back", (long long)h,
          (long long)w);
    free(band);
    free(block);
    free(back);
}

static void all_cases(dd_engine *e, dd_dtype t)
{
    turn_case(e, t, 1, 1, 1);
    turn_case(e, t, 37, 101, 40);
    turn_case(e, t, 64, 33, 64);
    static const double scales[] = {-0.5, 2.5, 0.1, 1.0 / 3, 1, 0, -1e-300};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        scale_case(e, t, 1, scales[i]);
        scale_case(e, t, 1001, scales[i]);
    }
    fill_case_t(e, t, 0, 1, 0, 1, 1, 1);
    fill_case_t(e, t, 5, 37, 3, 41, 101, 7);
    fill_case_t(e, t, (int64_t)1 << 33, 3, 5, 7, 1 << 20, 42);
    static const double plants[] = {0, NAN, INFINITY, -INFINITY};
    int big = t == DD_F64 ? 1000 : 100; /* near the top of the type's range */
    for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
        absmax_case(e, t, 0, 0, plants[p]);
        absmax_case(e, t, 1, 0, plants[p]);
        absmax_case(e, t, 1001, 0, plants[p]);
        absmax_case(e, t, 4099, big, plants[p]);
        matvec_case(e, t, 37, 29, 0, plants[p], 1);
        matvec_case(e, t, 5, 1000, big, plants[p], 1);
        matvec_case(e, t, 300, 3, 0, plants[p], 0);
        matvec_case(e, t, 1, 1, -big, plants[p], 1);
    }
    matvec_case(e, t, 0, 5, 0, 0, 1);
    matvec_case(e, t, 4, 0, 0, 0, 1); /* empty rows: sums 0 */
    fill_case(e, t, 0, 1, 0, 1, 1, 1);
    fill_case(e, t, 5, 37, 3, 41, 101, 7);
    fill_case(e, t, 1000, 129, 77, 257, 10000, 0xfeedfacecafebeefULL);
    fill_case(e, t, (int64_t)1 << 33, 3, 5, 7, 1 << 20, 42); /* indices past 2^32 */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_engine e = {0};
    e.ops = &dd_engine_cpu;
    dd_engine_cfg cfg = {MPI_COMM_WORLD, MPI_COMM_SELF, DD_F64, NULL, 1};
    dd_err err = {{0}};
    CHECK(e.ops->open(&e, &cfg, &err) == DD_OK, "open: %s", err.msg);
    CHECK(e.ops->absmax && e.ops->matvec && e.ops->fill_random && e.ops->scale && e.ops->copy &&
               e.ops->upload_t_async && e.ops->download_t_async,
          "ops missing");
    all_cases(&e, DD_F64);
    all_cases(&e, DD_F32);
    e.ops->close(&e);
    MPI_Finalize();
    if (g_fail) {
        fprintf(stderr, "%d g_fail\n", g_fail);
        return 1;
    }
    printf("engine_cpu: absmax, matvec, fill_random (and transposed), scale, copy and turned "
           "copies ok\n");
    return 0;
}
