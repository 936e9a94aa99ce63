/* plan_stream.c — dgemm-dist as a library, for data that is not in memory
 * in one piece: a plan holds the operands in the library's memory (the
 * GPU's on the CUDA backend), and the program streams them in band by band
 * through callbacks, as a reader of files would, multiplies three times,
 * checks, and streams C out, comparing each band with the exact product.
 *
 *   mpirun -n 4 ./plan_stream [M N K]
 *
 * Prints PASSED (rank 0) and exits 0 when every rank's C is right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dgemm_dist_plan.h>

/* Global elements: small dyadic values, so every product is exact. */
static double a_elem(int64_t i, int64_t k)
{
    return (double)((i * 7 + k * 3) % 11 - 5) / 8;
}
static double b_elem(int64_t k, int64_t j)
{
    return (double)((k * 5 + j * 2) % 13 - 6) / 8;
}

/* One block of a matrix made by f, the way a file reader would see it:
 * rows [row0 + r, row0 + r + h), columns [col0, col0 + cols). */
typedef struct {
    double (*f)(int64_t, int64_t);
    int64_t row0, col0, cols, K;
    int bad; /* drain: elements that differ from the exact C */
} source;

static dd_status fill(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len)
{
    const source *src = s->arg;
    double *out = band;
    (void)msg, (void)len;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < src->cols; j++)
            out[i * src->cols + j] = src->f(src->row0 + r + i, src->col0 + j);
    return DD_SUCCESS;
}

static dd_status drain(const dd_stream *s, const void *band, int64_t r, int64_t h, char *msg,
                       size_t len)
{
    source *c = s->arg;
    const double *in = band;
    (void)msg, (void)len;
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < c->cols; j++) {
            double want = 0;
            for (int64_t k = 0; k < c->K; k++)
                want += a_elem(c->row0 + r + i, k) * b_elem(k, c->col0 + j);
            c->bad += in[i * c->cols + j] != want;
        }
    return DD_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, fail = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int64_t M = argc > 3 ? atoll(argv[1]) : 300, N = argc > 3 ? atoll(argv[2]) : 200,
            K = argc > 3 ? atoll(argv[3]) : 150;
    dd_context_options o;
    dd_context_options_init(&o);
    o.tune = 1; /* grid, panel and lookahead from the performance model */
    dd_context *ctx = NULL;
    char msg[512];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    if (st != DD_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "plan_stream: %s\n", msg);
        MPI_Finalize();
        return 1;
    }
    dd_plan_params pp = {DD_FLOAT64, M, N, K, 0, 3, 0, 0, 0};
    dd_plan *plan = NULL;
    dd_plan_info in;
    memset(&in, 0, sizeof in);
    st = dd_plan_create(ctx, &pp, &plan);
    if (st == DD_SUCCESS)
        st = dd_plan_get_info(plan, &in);
    if (st == DD_SUCCESS)
        st = dd_plan_allocate(plan);
    source a = {a_elem, 0, 0, 0, K, 0}, b = {b_elem, 0, 0, 0, K, 0}, c = {NULL, 0, 0, 0, K, 0};
    if (st == DD_SUCCESS) {
        a = (source){a_elem, in.row0[0], in.col0[0], in.cols[0], K, 0};
        b = (source){b_elem, in.row0[1], in.col0[1], in.cols[1], K, 0};
        c = (source){NULL, in.row0[2], in.col0[2], in.cols[2], K, 0};
        dd_stream sa = {fill, NULL, &a, 0}, sb = {fill, NULL, &b, 0};
        st = dd_plan_load(plan, DD_OPERAND_A, &sa);
        if (st == DD_SUCCESS)
            st = dd_plan_load(plan, DD_OPERAND_B, &sb);
    }
    if (st == DD_SUCCESS)
        st = dd_plan_prepare(plan, 1.0, 0.0, 1);
    dd_plan_times t = {0, 0, 0};
    for (int pass = 0; pass < 3 && st == DD_SUCCESS; pass++)
        st = dd_plan_multiply(plan, &t);
    dd_check_result chk = {0, 0, NULL};
    if (st == DD_SUCCESS)
        st = dd_plan_check(plan, &chk);
    if (st == DD_SUCCESS) {
        dd_stream sc = {NULL, drain, &c, 0};
        st = dd_plan_store(plan, DD_OPERAND_C, &sc);
    }
    if (st != DD_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "plan_stream: %s: %s\n", dd_status_string(st),
                    dd_context_last_error(ctx));
        fail = 1;
    }
    fail |= c.bad != 0 || !chk.passed;
    int any = 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        char line[256];
        dd_check_line(&chk, line, sizeof line);
        printf("C = A·B, %lld x %lld x %lld on %s, grid %dx%d, panel %lld: last multiply %.3g s\n"
               "%s\n%s\n",
               (long long)M, (long long)N, (long long)K, in.backend ? in.backend : "-", in.P, in.Q,
               (long long)in.panel, t.slowest, line, any ? "FAILED" : "PASSED");
    }
    dd_plan_destroy(plan);
    dd_context_destroy(ctx);
    MPI_Finalize();
    return any;
}
