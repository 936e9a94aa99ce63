/* test_api_device.c — the library's device-pointer entries on real GPU
 * memory (label gpu; exit 77 where a rank sees no GPU).
 *
 * Every rank builds its blocks of A, B and C in the 2-D block layout
 * (dgemm_dist.h), copies them to cudaMalloc'ed memory on the device the
 * context chose, and calls dd_gemm_device / dd_sgemm_device for
 * C = 1.5·op(A)·op(B) − C with op = N and T.  Values carry 20 significant
 * bits, so every FP64 product and sum here is exact: C must equal the
 * reference computed on the host bit for bit (FP32: within rounding).
 * Padded leading dimensions are used throughout. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dgemm_dist.h"

static int fails, rank;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: FAILED: ", rank);                                            \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

/* A deterministic value in [-1, 1) with 20 significant bits. */
static double val(uint64_t tag, int64_t i, int64_t j)
{
    uint64_t z = tag * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 0xbf58476d1ce4e5b9ULL +
                 (uint64_t)j * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    z *= 0xd6e8feb86659fd39ULL;
    z ^= z >> 29;
    return ((double)(z >> 44) - 524288.0) / 524288.0;
}
#define A_AT(i, k) val(1, i, k)
#define B_AT(k, j) val(2, k, j)
#define C_AT(i, j) val(3, i, j)

/* rows × cols of f(r0 + r, c0 + c) (or of its transpose's index order)
 * into a padded host buffer, as double or float, then to the device. */
static void *make_block(int tag, int trans, int64_t r0, int64_t rows, int64_t c0, int64_t cols,
                        int64_t ld, int single)
{
    size_t es = single ? sizeof(float) : sizeof(double);
    size_t n = (size_t)(rows ? rows : 1) * (size_t)ld;
    char *h = calloc(n, es);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            double v = trans ? val((uint64_t)tag, c0 + c, r0 + r) : val((uint64_t)tag, r0 + r, c0 + c);
            if (single)
                ((float *)h)[r * ld + c] = (float)v;
            else
                ((double *)h)[r * ld + c] = v;
        }
    void *d = NULL;
    if (cudaMalloc(&d, n * es) != cudaSuccess || cudaMemcpy(d, h, n * es, cudaMemcpyHostToDevice))
        CHECK(0, "cudaMalloc/cudaMemcpy of %zu bytes", n * es);
    free(h);
    return d;
}

/* One call of the device entry for (ta, tb); C checked against the host
 * reference on this rank's block. */
static void one_case(dd_context *ctx, char ta, char tb, int single, int64_t M, int64_t N, int64_t K)
{
    int P, Q, p, q;
    dd_context_grid(ctx, &P, &Q, &p, &q);
    int64_t m0, Mp, n0, Nq, kp0, Kp, kq0, Kq, s0, sl, t0, tl;
    dd_block_range(M, P, p, &m0, &Mp);
    dd_block_range(N, Q, q, &n0, &Nq);
    dd_block_range(K, P, p, &kp0, &Kp);
    dd_block_range(K, Q, q, &kq0, &Kq);
    int tra = ta == 'T', trb = tb == 'T';
    /* stored A: M×K (rows M on P, cols K on Q), or K×M when transposed */
    void *A = tra ? (dd_block_range(K, P, p, &s0, &sl), dd_block_range(M, Q, q, &t0, &tl),
                     make_block(1, 1, s0, sl, t0, tl, tl + 3, single))
                  : make_block(1, 0, m0, Mp, kq0, Kq, Kq + 3, single);
    int64_t lda = tra ? tl + 3 : Kq + 3;
    void *B = trb ? (dd_block_range(N, P, p, &s0, &sl), dd_block_range(K, Q, q, &t0, &tl),
                     make_block(2, 1, s0, sl, t0, tl, tl + 5, single))
                  : make_block(2, 0, kp0, Kp, n0, Nq, Nq + 5, single);
    int64_t ldb = trb ? tl + 5 : Nq + 5;
    int64_t ldc = Nq + 2;
    void *C = make_block(3, 0, m0, Mp, n0, Nq, ldc, single);
    dd_status st = single ? dd_sgemm_device(ctx, ta, tb, M, N, K, 1.5f, A, lda, B, ldb, -1.0f, C,
                                            ldc, NULL)
                          : dd_gemm_device(ctx, ta, tb, M, N, K, 1.5, A, lda, B, ldb, -1.0, C, ldc,
                                           NULL);
    CHECK(st == DD_SUCCESS, "%s %c%c: %s: %s", single ? "sgemm" : "dgemm", ta, tb,
          dd_status_string(st), dd_context_last_error(ctx));
    size_t es = single ? sizeof(float) : sizeof(double);
    char *h = malloc((size_t)(Mp ? Mp : 1) * (size_t)ldc * es);
    if (cudaMemcpy(h, C, (size_t)Mp * (size_t)ldc * es, cudaMemcpyDeviceToHost) != cudaSuccess)
        CHECK(0, "cudaMemcpy of C back");
    double worst = 0;
    for (int64_t i = 0; i < Mp; i++)
        for (int64_t j = 0; j < Nq; j++) {
            double ref = -C_AT(m0 + i, n0 + j);
            for (int64_t k = 0; k < K; k++)
                ref += 1.5 * A_AT(m0 + i, k) * B_AT(k, n0 + j);
            double got = single ? ((float *)h)[i * ldc + j] : ((double *)h)[i * ldc + j];
            double e = fabs(got - ref);
            worst = e > worst ? e : worst;
        }
    double tol = single ? 1e-4 * sqrt((double)K) : 0; /* FP64: exact */
    CHECK(st != DD_SUCCESS || worst <= tol, "%s %c%c: max |C - ref| = %g (tolerance %g)",
          single ? "sgemm" : "dgemm", ta, tb, worst, tol);
    free(h);
    cudaFree(A), cudaFree(B), cudaFree(C);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int ngpu = 0, none = cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0, any_none = 0;
    MPI_Allreduce(&none, &any_none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_none) {
        if (rank == 0)
            printf("SKIP: a rank sees no GPU\n");
        MPI_Finalize();
        return 77;
    }
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cuda";
    o.panel = 96; /* several panels even at these sizes */
    dd_context *ctx = NULL;
    char msg[256] = "";
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_SUCCESS, "dd_context_create: %s", msg);
    if (st == DD_SUCCESS) {
        const char *pairs[] = {"NN", "TN", "NT", "TT"};
        for (int c = 0; c < 4; c++)
            one_case(ctx, pairs[c][0], pairs[c][1], 0, 517, 389, 1031);
        one_case(ctx, 'N', 'N', 1, 300, 277, 515);
        one_case(ctx, 'T', 'N', 1, 300, 277, 515);
        dd_context_destroy(ctx);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "%d failure(s)\n" : "device entries: all passed\n", all);
    MPI_Finalize();
    return all != 0;
}
