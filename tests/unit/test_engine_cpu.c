/* test_engine_cpu.c — the CPU engine's multiply: C = A·B and C += A·B on
 * sub-blocks (ld larger than the width), k = 0 and m = 0, both types, against
 * a naive product; and the progress hook that lets MPI move broadcasts
 * while OpenBLAS computes: called between row chunks, several times for a
 * multiply of >= 128 rows, its error returned. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define DD_CHECK_MPI
#define DD_CHECK_MATRICES
#include "dd_check.h"
#include "engine.h"
#include "rng.h"

static int calls;
static int count_calls(void *arg, dd_err *err)
{
    (void)err;
    calls++;
    return arg ? DD_EFAIL : DD_OK; /* non-NULL arg: fail on the first call */
}

/* C(m×n, ld ldc) = A(m×k, lda)·B(k×n, ldb) + beta·C0 on sub-blocks */
static void one_case(dd_engine *e, dd_dtype t, int64_t m, int64_t n, int64_t k, int beta)
{
    enum { PAD = 3 };
    int64_t lda = k + PAD, ldb = n + PAD, ldc = n + PAD;
    static double bufA[300 * 300], bufB[300 * 300], bufC[300 * 300], C0[300 * 300];
    rng_fill_block(bufA, t, 9, RNG_TAG_A, 0, m, 0, lda, lda);
    rng_fill_block(bufB, t, 9, RNG_TAG_B, 0, k, 0, ldb, ldb);
    rng_fill_block(bufC, t, 9, RNG_TAG_X, 0, m, 0, ldc, ldc);
    memcpy(C0, bufC, sizeof bufC);
    dd_err err = {{0}};
    calls = 0;
    int rc =
        e->ops->gemm(e, t, m, n, k, bufA, lda, bufB, ldb, beta, bufC, ldc, count_calls, NULL, &err);
    CHECK(rc == DD_OK, "gemm %s %lldx%lldx%lld: %s", dd_dtype_name(t), (long long)m, (long long)n,
          (long long)k, err.msg);
    CHECK(calls >= 1, "progress never called");
    if (m >= 128)
        CHECK(calls >= 2, "progress called %d times for %lld rows: no overlap possible", calls,
              (long long)m);
    double u = t == DD_F64 ? 1.2e-16 : 6e-8;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < ldc; j++) {
            double got = tm_get(bufC, t, i * ldc + j), want;
            if (j >= n) { /* padding must be untouched */
                CHECK(got == tm_get(C0, t, i * ldc + j), "padding C[%lld,%lld] changed",
                      (long long)i, (long long)j);
                continue;
            }
            double s = beta ? tm_get(C0, t, i * ldc + j) : 0, mag = fabs(s);
            for (int64_t p = 0; p < k; p++) {
                double x = tm_get(bufA, t, i * lda + p) * tm_get(bufB, t, p * ldb + j);
                s += x;
                mag += fabs(x);
            }
            want = s;
            CHECK(fabs(got - want) <= 2 * (k + 1) * u * mag + 1e-300,
                  "%s C[%lld,%lld] = %g, want %g (m %lld n %lld k %lld beta %d)", dd_dtype_name(t),
                  (long long)i, (long long)j, got, want, (long long)m, (long long)n, (long long)k,
                  beta);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_engine e = {0};
    e.ops = &dd_engine_cpu;
    dd_engine_cfg cfg = {MPI_COMM_WORLD, MPI_COMM_SELF, DD_F64, NULL, 1};
    dd_err err = {{0}};
    CHECK(e.ops->open(&e, &cfg, &err) == DD_OK, "open: %s", err.msg);
    for (int t = 0; t < 2; t++)
        for (int beta = 0; beta < 2; beta++) {
            one_case(&e, (dd_dtype)t, 37, 29, 41, beta);
            one_case(&e, (dd_dtype)t, 200, 17, 64, beta); /* chunked: several progress calls */
            one_case(&e, (dd_dtype)t, 5, 7, 0, beta);     /* k = 0: C = 0 or unchanged */
            one_case(&e, (dd_dtype)t, 0, 7, 3, beta);     /* m = 0: nothing, progress still */
        }
    /* a failing progress hook stops the multiply and its error comes back */
    static double A[256 * 8], B[8 * 8], C[256 * 8];
    calls = 0;
    int rc = e.ops->gemm(&e, DD_F64, 256, 8, 8, A, 8, B, 8, 0, C, 8, count_calls, &e, &err);
    CHECK(rc == DD_EFAIL && calls == 1, "failing progress: rc %d after %d calls", rc, calls);
    /* other kernels are refused by name */
    dd_engine e2 = {0};
    e2.ops = &dd_engine_cpu;
    dd_engine_cfg bad = {MPI_COMM_WORLD, MPI_COMM_SELF, DD_F64, "08_dmma", 1};
    dd_err err2 = {{0}};
    CHECK(e2.ops->open(&e2, &bad, &err2) == DD_EUSAGE && strstr(err2.msg, "08_dmma"),
          "CPU engine accepted kernel 08_dmma: %s", err2.msg);
    e.ops->close(&e);
    MPI_Finalize();
    if (g_fail) {
        fprintf(stderr, "%d g_fail\n", g_fail);
        return 1;
    }
    printf("engine_cpu: multiply and progress hook ok\n");
    return 0;
}
