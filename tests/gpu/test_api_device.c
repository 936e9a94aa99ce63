/* test_api_device.c — the library's device-pointer entries on real GPU
 * memory (label gpu; exit 77 where a rank sees no GPU).
 *
 * Every rank builds its blocks of A, B and C in the 2-D block layout
 * (dgemm_dist.h), copies them to cudaMalloc'ed memory on the device the
 * context chose, and calls dd_gemm_device / dd_sgemm_device for
 * C = 1.5·op(A)·op(B) − C with op = N and T, and C = 1.5·op(A)·op(B) over
 * a C whose device memory is all NaN (beta = 0: never read).  Values carry 20 significant
 * bits, so every FP64 product and sum here is exact: C must equal the
 * reference computed on the host bit for bit (FP32: within rounding).
 * Padded leading dimensions are used throughout.  dd_pgemm_device on
 * block-cyclic local arrays (blocks of 16, a column-major grid, sub(C) at
 * an offset) must give bit for bit what dd_pgemm gives on host copies of
 * the same arrays, the elements outside sub(C) untouched, and sub(C) the
 * exact reference. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist.h"

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
            double v =
                trans ? val((uint64_t)tag, c0 + c, r0 + r) : val((uint64_t)tag, r0 + r, c0 + c);
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
static void one_case_beta(dd_context *ctx, char ta, char tb, int single, int64_t M, int64_t N,
                          int64_t K, double beta)
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
    size_t es = single ? sizeof(float) : sizeof(double);
    /* beta = 0: C's device memory all NaN (every byte 0xff), which must not survive */
    if (beta == 0 && cudaMemset(C, 0xff, (size_t)(Mp ? Mp : 1) * (size_t)ldc * es) != cudaSuccess)
        CHECK(0, "cudaMemset of C");
    dd_status st = single ? dd_sgemm_device(ctx, ta, tb, M, N, K, 1.5f, A, lda, B, ldb,
                                            (float)beta, C, ldc, NULL)
                          : dd_gemm_device(ctx, ta, tb, M, N, K, 1.5, A, lda, B, ldb, beta, C,
                                           ldc, NULL);
    CHECK(st == DD_SUCCESS, "%s %c%c beta %g: %s: %s", single ? "sgemm" : "dgemm", ta, tb, beta,
          dd_status_string(st), dd_context_last_error(ctx));
    char *h = malloc((size_t)(Mp ? Mp : 1) * (size_t)ldc * es);
    if (cudaMemcpy(h, C, (size_t)Mp * (size_t)ldc * es, cudaMemcpyDeviceToHost) != cudaSuccess)
        CHECK(0, "cudaMemcpy of C back");
    double worst = 0;
    for (int64_t i = 0; i < Mp; i++)
        for (int64_t j = 0; j < Nq; j++) {
            double ref = beta == 0 ? 0 : beta * C_AT(m0 + i, n0 + j);
            for (int64_t k = 0; k < K; k++)
                ref += 1.5 * A_AT(m0 + i, k) * B_AT(k, n0 + j);
            double got = single ? ((float *)h)[i * ldc + j] : ((double *)h)[i * ldc + j];
            double e = isnan(got) ? INFINITY : fabs(got - ref);
            worst = e > worst ? e : worst;
        }
    double tol = single ? 1e-4 * sqrt((double)K) : 0; /* FP64: exact */
    CHECK(st != DD_SUCCESS || worst <= tol, "%s %c%c: max |C - ref| = %g (tolerance %g)",
          single ? "sgemm" : "dgemm", ta, tb, worst, tol);
    free(h);
    cudaFree(A), cudaFree(B), cudaFree(C);
}

/* C = 1.5·op(A)·op(B) − C, and (beta = 0) C = 1.5·op(A)·op(B) over a NaN C */
static void one_case(dd_context *ctx, char ta, char tb, int single, int64_t M, int64_t N, int64_t K)
{
    one_case_beta(ctx, ta, tb, single, M, N, K, -1.0);
    one_case_beta(ctx, ta, tb, single, M, N, K, 0.0);
}

/* Global (i, j) of local (li, lj) on grid process (pr, pc): blocks of
 * `b`, dealt from process 0. */
static int64_t glob(int64_t l, int64_t b, int p, int np)
{
    return ((l / b) * np + p) * b + l % b;
}

/* A local array, column-major with ld: tag's values at their global places. */
static double *cyclic_local(int tag, int64_t m, int64_t n, int64_t b, int pr, int pc, int np,
                            int nq, int64_t *ld, int64_t *count)
{
    int64_t r = dd_numroc(m, b, pr, 0, np), c = dd_numroc(n, b, pc, 0, nq);
    *ld = (r > 0 ? r : 1) + 2; /* padded */
    *count = (c > 0 ? c : 1) * *ld;
    double *x = calloc((size_t)*count, sizeof(double));
    for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < r; i++)
            x[j * *ld + i] = val((uint64_t)tag, glob(i, b, pr, np), glob(j, b, pc, nq));
    return x;
}

static void cyclic_case(dd_context *ctx, char ta)
{
    int size, np = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nq = size, pr = g_rank % np, pc = g_rank / np; /* column-major grid order */
    const int64_t M = 203, N = 157, K = 119, b = 16, ic = 4, jc = 3;
    int64_t am = ta == 'T' ? K : M, ak = ta == 'T' ? M : K, lda, ldb, ldc, na, nb, nc;
    double *A = cyclic_local(1, am, ak, b, pr, pc, np, nq, &lda, &na);
    double *B = cyclic_local(2, K, N, b, pr, pc, np, nq, &ldb, &nb);
    double *C = cyclic_local(3, M + ic + 2, N + jc, b, pr, pc, np, nq, &ldc, &nc);
    double *Ch = malloc(sizeof(double) * (size_t)nc), *Cd = malloc(sizeof(double) * (size_t)nc);
    memcpy(Ch, C, sizeof(double) * (size_t)nc);
    dd_matrix_desc da, db, dc;
    dd_desc_block_cyclic(&da, am, ak, b, b, 0, 0, np, nq, 'C', lda);
    dd_desc_block_cyclic(&db, K, N, b, b, 0, 0, np, nq, 'C', ldb);
    dd_desc_block_cyclic(&dc, M + ic + 2, N + jc, b, b, 0, 0, np, nq, 'C', ldc);
    dd_status st = dd_pgemm(ctx, ta, 'N', M, N, K, 1.5, A, 1, 1, &da, B, 1, 1, &db, -1.0, Ch, ic,
                            jc, &dc, NULL);
    CHECK(st == DD_SUCCESS, "dd_pgemm: %s", dd_context_last_error(ctx));
    void *dA = NULL, *dB = NULL, *dC = NULL;
    int ok = cudaMalloc(&dA, sizeof(double) * (size_t)na) == cudaSuccess &&
             cudaMalloc(&dB, sizeof(double) * (size_t)nb) == cudaSuccess &&
             cudaMalloc(&dC, sizeof(double) * (size_t)nc) == cudaSuccess &&
             cudaMemcpy(dA, A, sizeof(double) * (size_t)na, cudaMemcpyHostToDevice) == 0 &&
             cudaMemcpy(dB, B, sizeof(double) * (size_t)nb, cudaMemcpyHostToDevice) == 0 &&
             cudaMemcpy(dC, C, sizeof(double) * (size_t)nc, cudaMemcpyHostToDevice) == 0;
    CHECK(ok, "device arrays for the cyclic case");
    st = dd_pgemm_device(ctx, ta, 'N', M, N, K, 1.5, dA, 1, 1, &da, dB, 1, 1, &db, -1.0, dC, ic, jc,
                         &dc, NULL);
    CHECK(st == DD_SUCCESS, "dd_pgemm_device: %s", dd_context_last_error(ctx));
    ok = cudaMemcpy(Cd, dC, sizeof(double) * (size_t)nc, cudaMemcpyDeviceToHost) == cudaSuccess;
    CHECK(ok && !memcmp(Cd, Ch, sizeof(double) * (size_t)nc),
          "pgemm %c: the device result differs from the host path's", ta);
    int64_t r = dd_numroc(M + ic + 2, b, pr, 0, np), c = dd_numroc(N + jc, b, pc, 0, nq);
    double worst = 0;
    for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < r; i++) {
            int64_t gi = glob(i, b, pr, np), gj = glob(j, b, pc, nq);
            int inside = gi >= ic - 1 && gi < ic - 1 + M && gj >= jc - 1 && gj < jc - 1 + N;
            double want = -C[j * ldc + i];
            for (int64_t k = 0; inside && k < K; k++)
                want += 1.5 * (ta == 'T' ? val(1, k, gi - ic + 1) : val(1, gi - ic + 1, k)) *
                        val(2, k, gj - jc + 1);
            double e = fabs(Cd[j * ldc + i] - (inside ? want : C[j * ldc + i]));
            worst = e > worst ? e : worst;
        }
    CHECK(worst == 0, "pgemm %c: sub(C) exact and the rest untouched (worst %g)", ta, worst);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B), free(C), free(Ch), free(Cd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    int ngpu = 0, none = cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0, any_none = 0;
    MPI_Allreduce(&none, &any_none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_none) {
        if (g_rank == 0)
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
        cyclic_case(ctx, 'N');
        cyclic_case(ctx, 'T');
        dd_context_destroy(ctx);
    }
    int all = dd_check_total();
    if (g_rank == 0)
        printf(all ? "%d failure(s)\n" : "device entries: all passed\n", all);
    MPI_Finalize();
    return all != 0;
}
