/* test_rows_slices.c — bands of one multiply from kept slices
 * (dd_plan_multiply_rows on one rank with an emulated kernel:
 * summa_rows_slices): with DD_OZAKI2_PANELS=slices the CPU backend's
 * ozaki2-14 multiplies the bands from blobs and makes B's once for every
 * band (tests/cli/ozaki2_slices.sh checks the note that says so).  Bands
 * in any order give a C that passes the check; B changed between two banded multiplies (regenerated, or
 * a sub-block written) is sliced again: the second multiply passes its
 * check too, which stale slices of the first B would fail; a whole
 * multiply after the bands passes; with DD_OZAKI2_PANELS=fp64 the bands
 * multiply as before.  One rank (the kept slices are for a grid of one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist_tool.h"

enum { M = 70, N = 50, K = 384 };

/* Bands of 20, 20, 20 and 10 rows, the first two swapped; then the check. */
static int bands_pass(dd_context *ctx, dd_plan *plan, const char *what)
{
    const int64_t r0[] = {20, 0, 40, 60}, h[] = {20, 20, 20, 10};
    int ok = 1;
    for (int b = 0; b < 4 && ok; b++)
        ok = dd_plan_multiply_rows(plan, r0[b], h[b], NULL) == DD_SUCCESS;
    dd_check_result chk = {0, 0, NULL};
    ok = ok && dd_plan_check(plan, &chk) == DD_SUCCESS && chk.passed;
    CHECK(ok, "%s: the bands' C passes the check (%g): %s", what, chk.residual,
          dd_context_last_error(ctx));
    return ok;
}

static void run(const char *mode)
{
    setenv("DD_OZAKI2_PANELS", mode, 1);
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    o.kernel = "ozaki2-14";
    o.panel = 64;
    dd_context *ctx = NULL;
    char msg[512];
    CHECK(dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg) == DD_SUCCESS,
          "context: %s", msg);
    if (!ctx)
        return;
    dd_plan_params pp = {DD_FLOAT64, M, N, K, 0, 1, 0, 0, 5};
    dd_plan *plan = NULL;
    CHECK(dd_plan_create(ctx, &pp, &plan) == DD_SUCCESS && dd_plan_allocate(plan) == DD_SUCCESS,
          "plan: %s", dd_context_last_error(ctx));
    if (plan && dd_plan_generate(plan, DD_OPERAND_A, 1, 0) == DD_SUCCESS &&
        dd_plan_generate(plan, DD_OPERAND_B, 2, 0) == DD_SUCCESS &&
        dd_plan_prepare(plan, 1, 0, 1) == DD_SUCCESS) {
        bands_pass(ctx, plan, mode);
        /* B regenerated: sliced again */
        CHECK(dd_plan_generate(plan, DD_OPERAND_B, 3, 0) == DD_SUCCESS &&
                  dd_plan_prepare(plan, 1, 0, 1) == DD_SUCCESS,
              "%s: B again: %s", mode, dd_context_last_error(ctx));
        bands_pass(ctx, plan, "B regenerated");
        /* a sub-block of B written: sliced again */
        double piece[8 * 8];
        for (int i = 0; i < 64; i++)
            piece[i] = (double)((i * 37) % 17 - 8) / 16;
        CHECK(dd_plan_write(plan, DD_OPERAND_B, 100, 10, 8, 8, piece, 8) == DD_SUCCESS &&
                  dd_plan_prepare(plan, 1, 0, 1) == DD_SUCCESS,
              "%s: B's sub-block: %s", mode, dd_context_last_error(ctx));
        bands_pass(ctx, plan, "a sub-block of B written");
        dd_check_result chk = {0, 0, NULL};
        CHECK(dd_plan_multiply(plan, NULL) == DD_SUCCESS &&
                  dd_plan_check(plan, &chk) == DD_SUCCESS && chk.passed,
              "%s: a whole multiply after the bands passes (%g)", mode, chk.residual);
    } else {
        CHECK(0, "%s: inputs: %s", mode, dd_context_last_error(ctx));
    }
    dd_plan_destroy(plan);
    dd_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    run("slices");
    run("fp64");
    if (g_rank == 0)
        printf(g_fail ? "test_rows_slices: %d failure(s)\n" : "test_rows_slices: all passed\n",
               g_fail);
    MPI_Finalize();
    return g_fail ? 1 : 0;
}
