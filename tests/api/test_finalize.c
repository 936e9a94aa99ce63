/* test_finalize.c — dd_context_destroy after MPI_Finalize, as a C++
 * destructor or an atexit handler calls it (dgemm_dist.h, "What the
 * library promises": no abort).  Each rank makes a context that has
 * multiplied (its comm backend open) and holds an allocated plan, and a
 * second one that has only been made; then MPI_Finalize; then both
 * contexts are destroyed: the calls return (no MPI call after finalize,
 * which would abort the job) and the process exits 0.  Every rank prints
 * its own verdict (no MPI to gather them after finalize).  Run at 1 and 2
 * ranks. */
#include <stdio.h>
#include <stdlib.h>

#define DD_CHECK_MPI
#include "dd_check.h"
#include "dgemm_dist_plan.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dd_check_init();
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    dd_context *used = NULL, *fresh = NULL;
    char msg[256];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &used, msg, sizeof msg);
    CHECK(st == DD_SUCCESS, "create: %s", msg);
    st = dd_context_create(MPI_COMM_WORLD, &o, &fresh, msg, sizeof msg);
    CHECK(st == DD_SUCCESS, "create: %s", msg);
    if (used) {
        int P, Q, p, q;
        dd_context_grid(used, &P, &Q, &p, &q);
        double A[16], B[16], C[16];
        for (int i = 0; i < 16; i++)
            A[i] = B[i] = 1, C[i] = 0;
        /* 4x4 on the grid: every block at most 4x4, ld 4 */
        st = dd_gemm(used, 'N', 'N', 4, 4, 4, 1, A, 4, B, 4, 0, C, 4, NULL);
        CHECK(st == DD_SUCCESS, "dd_gemm: %s", dd_context_last_error(used));
        dd_plan_params pp = {.type = DD_FLOAT64, .M = 4, .N = 4, .K = 4, .passes = 1};
        dd_plan *plan = NULL;
        st = dd_plan_create(used, &pp, &plan);
        if (st == DD_SUCCESS)
            st = dd_plan_allocate(plan);
        CHECK(st == DD_SUCCESS, "plan: %s", dd_context_last_error(used));
        /* the plan stays with the context: dd_context_destroy frees it */
    }
    MPI_Finalize();
    int fin = 0;
    MPI_Finalized(&fin);
    CHECK(fin, "MPI_Finalized after MPI_Finalize");
    dd_context_destroy(used);
    dd_context_destroy(fresh);
    printf("test-finalize: rank %d of %d: %s\n", g_rank, g_size,
           g_fail ? "FAILED" : "all passed");
    return g_fail != 0;
}
