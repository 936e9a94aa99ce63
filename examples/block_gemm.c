/* block_gemm.c — dgemm-dist as a library: each rank fills its own blocks
 * of A, B and C in the 2-D block layout (dd_block_range), calls dd_gemm
 * with the check on, and compares its block of C with a direct product.
 *
 *   mpirun -n 4 ./block_gemm [M N K]
 *
 * Prints PASSED (rank 0) and exits 0 when every rank's block is right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <dgemm_dist.h>

/* Global elements: small dyadic values, so every product is exact. */
static double a_elem(int64_t i, int64_t k)
{
    return (double)((i * 7 + k * 3) % 11 - 5) / 8;
}
static double b_elem(int64_t k, int64_t j)
{
    return (double)((k * 5 + j * 2) % 13 - 6) / 8;
}
static double c_elem(int64_t i, int64_t j)
{
    return (double)((i + 2 * j) % 9 - 4) / 4;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fail = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int64_t M = argc > 3 ? atoll(argv[1]) : 37, N = argc > 3 ? atoll(argv[2]) : 29,
            K = argc > 3 ? atoll(argv[3]) : 23;
    double alpha = 1.5, beta = -0.5;

    dd_context *ctx = NULL;
    char msg[512];
    dd_status st = dd_context_create(MPI_COMM_WORLD, NULL, &ctx, msg, sizeof msg);
    if (st != DD_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "block_gemm: %s: %s\n", dd_status_string(st), msg);
        MPI_Finalize();
        return 1;
    }
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t m0, Mp, n0, Nq, kq0, Kq, kp0, Kp; /* my rows and columns of each block */
    dd_block_range(M, P, p, &m0, &Mp);
    dd_block_range(N, Q, q, &n0, &Nq);
    dd_block_range(K, Q, q, &kq0, &Kq);
    dd_block_range(K, P, p, &kp0, &Kp);

    /* padded leading dimensions, to show they are honoured */
    int64_t lda = Kq + 3, ldb = Nq + 1, ldc = Nq + 2;
    double *A = malloc(sizeof(double) * (size_t)(Mp * lda + 1));
    double *B = malloc(sizeof(double) * (size_t)(Kp * ldb + 1));
    double *C = malloc(sizeof(double) * (size_t)(Mp * ldc + 1));
    for (int64_t i = 0; i < Mp; i++)
        for (int64_t k = 0; k < Kq; k++)
            A[i * lda + k] = a_elem(m0 + i, kq0 + k);
    for (int64_t k = 0; k < Kp; k++)
        for (int64_t j = 0; j < Nq; j++)
            B[k * ldb + j] = b_elem(kp0 + k, n0 + j);
    for (int64_t i = 0; i < Mp; i++)
        for (int64_t j = 0; j < Nq; j++)
            C[i * ldc + j] = c_elem(m0 + i, n0 + j);

    dd_gemm_info info = {0};
    info.check = 1;
    st = dd_gemm(ctx, 'N', 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &info);
    if (st != DD_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "block_gemm: dd_gemm: %s: %s\n", dd_status_string(st),
                    dd_context_last_error(ctx));
        fail = 1;
    }
    /* my block of C against a direct computation from the global formulas */
    double maxerr = 0;
    for (int64_t i = 0; i < Mp && !fail; i++)
        for (int64_t j = 0; j < Nq; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += a_elem(m0 + i, k) * b_elem(k, n0 + j);
            double want = alpha * s + beta * c_elem(m0 + i, n0 + j);
            double err = fabs(C[i * ldc + j] - want);
            maxerr = err > maxerr ? err : maxerr;
        }
    if (maxerr > 1e-12 * (double)(K + 1))
        fail = 1;
    int any = 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double worst = 0;
    MPI_Reduce(&maxerr, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int major, minor, patch;
        dd_version(&major, &minor, &patch);
        printf("dgemm-dist %d.%d.%d, %s backend, grid %dx%d: M=%lld N=%lld K=%lld\n", major, minor,
               patch, dd_context_backend(ctx), P, Q, (long long)M, (long long)N, (long long)K);
        printf("check residual %.3g (%s), max |C - direct| = %.3g, %.3g s, %.3g TFLOP/s\n",
               info.check_residual, info.check_passed ? "passed" : "FAILED", worst,
               info.multiply_seconds, info.tflops);
        printf("%s\n", any || !info.check_passed ? "FAILED" : "PASSED");
    }
    dd_context_destroy(ctx);
    free(A);
    free(B);
    free(C);
    MPI_Finalize();
    return any || !info.check_passed;
}
