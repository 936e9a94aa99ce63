/* dd_gemm_device's operands used where they lie (api_gemm.c's inplace):
 * contiguous blocks of the 2-D block layout are SUMMA's blocks, no copy.
 * On the CPU backend (device memory is host memory) at 1..4 ranks, for
 * alpha 1 (A and B in place) and 2 (only C), beta 0 (NaN in C), 1 and
 * 0.5, odd shapes, FP64 and FP32: C is alpha·A·B + beta·C_in within
 * rounding, and A and B are bit for bit what the caller had (never
 * scaled in place), also with the check on; an ld wider than the block
 * (not in place) gives the same C bit for bit as the contiguous call. */
#define DD_CHECK_MPI
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dd_check.h"
#include "dgemm_dist.h"

#include "api/api_case.h"

static double val(uint64_t seed, int64_t i, int64_t j)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(i * 1000003 + j);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    return (double)(x % 2001) / 1000.0 - 1.0;
}

typedef struct {
    int64_t r0, rows, c0, cols;
} blk;

static blk block_of(int64_t R, int64_t S, int P, int Q, int p, int q)
{
    blk b;
    dd_block_range(R, P, p, &b.r0, &b.rows);
    dd_block_range(S, Q, q, &b.c0, &b.cols);
    return b;
}

/* one case; ldpad > 0 gives every block an ld wider than its width */
static void run(dd_context *ctx, int f64, int64_t M, int64_t N, int64_t K, double alpha,
                double beta, int check, int ldpad, double *cout, int64_t *cn)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    blk ba = block_of(M, K, P, Q, p, q), bb = block_of(K, N, P, Q, p, q),
        bc = block_of(M, N, P, Q, p, q);
    size_t es = f64 ? 8 : 4;
    int64_t la = (ba.cols > 0 ? ba.cols : 1) + ldpad, lb = (bb.cols > 0 ? bb.cols : 1) + ldpad,
            lc = (bc.cols > 0 ? bc.cols : 1) + ldpad;
    char *A = calloc((size_t)(ba.rows * la) + 1, es), *B = calloc((size_t)(bb.rows * lb) + 1, es),
         *C = calloc((size_t)(bc.rows * lc) + 1, es), *A0 = calloc((size_t)(ba.rows * la) + 1, es),
         *B0 = calloc((size_t)(bb.rows * lb) + 1, es);
#define PUT(X, ld, i, j, v)                                                                        \
    (f64 ? (void)(((double *)(void *)(X))[(i) * (ld) + (j)] = (v))                                 \
         : (void)(((float *)(void *)(X))[(i) * (ld) + (j)] = (float)(v)))
#define GET(X, ld, i, j)                                                                           \
    (f64 ? ((double *)(void *)(X))[(i) * (ld) + (j)] : (double)((float *)(void *)(X))[(i) * (ld) + (j)])
    for (int64_t i = 0; i < ba.rows; i++)
        for (int64_t j = 0; j < ba.cols; j++)
            PUT(A, la, i, j, val(1, ba.r0 + i, ba.c0 + j));
    for (int64_t i = 0; i < bb.rows; i++)
        for (int64_t j = 0; j < bb.cols; j++)
            PUT(B, lb, i, j, val(2, bb.r0 + i, bb.c0 + j));
    for (int64_t i = 0; i < bc.rows; i++)
        for (int64_t j = 0; j < bc.cols; j++)
            PUT(C, lc, i, j, beta == 0 ? NAN : val(3, bc.r0 + i, bc.c0 + j));
    memcpy(A0, A, (size_t)(ba.rows * la) * es);
    memcpy(B0, B, (size_t)(bb.rows * lb) * es);
    dd_gemm_info info;
    memset(&info, 0, sizeof info);
    info.check = check;
    dd_status st = f64 ? dd_gemm_device(ctx, 'N', 'N', M, N, K, alpha, (double *)(void *)A, la,
                                        (double *)(void *)B, lb, beta, (double *)(void *)C, lc, &info)
                       : dd_sgemm_device(ctx, 'N', 'N', M, N, K, (float)alpha, (float *)(void *)A,
                                         la, (float *)(void *)B, lb, (float)beta,
                                         (float *)(void *)C, lc, &info);
    CHECK(st == DD_SUCCESS, "%s %lldx%lldx%lld alpha %g beta %g: %s", f64 ? "f64" : "f32",
          (long long)M, (long long)N, (long long)K, alpha, beta, dd_context_last_error(ctx));
    CHECK(memcmp(A, A0, (size_t)(ba.rows * la) * es) == 0, "A was written (alpha %g)", alpha);
    CHECK(memcmp(B, B0, (size_t)(bb.rows * lb) * es) == 0, "B was written (alpha %g)", alpha);
    double worst = 0;
    for (int64_t i = 0; i < bc.rows; i++)
        for (int64_t j = 0; j < bc.cols; j++) {
            double ref = beta == 0 ? 0 : beta * val(3, bc.r0 + i, bc.c0 + j), s = 0;
            for (int64_t k = 0; k < K; k++)
                s += val(1, bc.r0 + i, k) * val(2, k, bc.c0 + j);
            ref += alpha * s;
            double got = GET(C, lc, i, j), d = fabs(got - ref);
            if (!(d <= worst))
                worst = d;
            if (cout && *cn < 4096)
                cout[(*cn)++] = got;
        }
    double tol = (f64 ? 1e-12 : 2e-5) * (double)(K + 1) * (fabs(alpha) + 1);
    CHECK(worst <= tol, "%s %lldx%lldx%lld alpha %g beta %g ld+%d: max error %g > %g",
          f64 ? "f64" : "f32", (long long)M, (long long)N, (long long)K, alpha, beta, ldpad, worst,
          tol);
    free(A), free(B), free(C), free(A0), free(B0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    dd_context *ctx = api_cpu_context(0);
    if (ctx) {
        const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 64, 64}};
        const double alphas[] = {1, 2}, betas[] = {0, 1, 0.5};
        for (int f64 = 0; f64 < 2; f64++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (size_t a = 0; a < 2; a++)
                    for (size_t b = 0; b < 3; b++) {
                        double c1[4096], c2[4096];
                        int64_t n1 = 0, n2 = 0;
                        run(ctx, f64, shapes[s][0], shapes[s][1], shapes[s][2], alphas[a],
                            betas[b], (int)(s % 2), 0, c1, &n1);
                        run(ctx, f64, shapes[s][0], shapes[s][1], shapes[s][2], alphas[a],
                            betas[b], 0, 3, c2, &n2);
                        CHECK(n1 == n2 && memcmp(c1, c2, (size_t)n1 * sizeof *c1) == 0,
                              "in place and copied C differ (%lldx%lldx%lld)",
                              (long long)shapes[s][0], (long long)shapes[s][1],
                              (long long)shapes[s][2]);
                    }
        dd_context_destroy(ctx);
    }
    return api_finish("test_inplace");
}
