/* api_case.h — the frame the MPI tests of the public API share (after
 * dd_check.h with DD_CHECK_MPI, and dgemm_dist.h; dd.h for api_agreed):
 *
 *   api_case(argc, argv, name)  run case name: every case without an
 *                               argument, else only the one named;
 *   api_cpu_context(panel)      a CPU-backend context over MPI_COMM_WORLD
 *                               (panel 0: the library's default), NULL
 *                               with a failure counted;
 *   api_agreed(st, msg)         a call's status and message the same on
 *                               every rank (collective);
 *   api_finish(prog)            every rank's failures together, the summary
 *                               line "<prog>: R ranks, all passed|FAILED"
 *                               (the tests' ctest regexes read it),
 *                               MPI_Finalize; main's exit status. */
#ifndef DD_TESTS_API_CASE_H
#define DD_TESTS_API_CASE_H

#include <string.h>

static inline int api_case(int argc, char **argv, const char *name)
{
    return argc < 2 || strcmp(argv[1], name) == 0;
}

static inline dd_context *api_cpu_context(int panel)
{
    dd_context_options o;
    dd_context_options_init(&o);
    o.backend = "cpu";
    if (panel)
        o.panel = panel;
    dd_context *ctx = NULL;
    char msg[256];
    dd_status st = dd_context_create(MPI_COMM_WORLD, &o, &ctx, msg, sizeof msg);
    CHECK(st == DD_SUCCESS, "create: %s", msg);
    return st == DD_SUCCESS ? ctx : NULL;
}

#ifdef DD_ERRLEN
static inline int api_agreed(dd_status st, const char *msg)
{
    dd_err e;
    snprintf(e.msg, sizeof e.msg, "%s", msg);
    return same_everywhere((int)st, &e);
}
#endif

static inline int api_finish(const char *prog)
{
    int fails = dd_check_total();
    if (g_rank == 0)
        printf("%s: %d rank%s, %s\n", prog, g_size, g_size == 1 ? "" : "s",
               fails ? "FAILED" : "all passed");
    MPI_Finalize();
    return fails != 0;
}

#endif
