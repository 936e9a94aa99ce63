/* dd_test.h — the assertions every C test uses: CHECK (multi-rank tests: it
 * names the rank), EXPECT (single-process tests), and same_everywhere() for
 * errors that must be agreed.  Each failed assertion prints where and why and
 * counts in g_fail; a test's main returns non-zero when g_fail is. */
#ifndef DD_TEST_H
#define DD_TEST_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "dd.h"

static int g_rank __attribute__((unused)), g_size __attribute__((unused));
static int g_fail;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            g_fail++;                                                                              \
            fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", g_rank, __FILE__, __LINE__,     \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            g_fail++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* 1 when rc and message are the same on every rank (collective: call it
 * unconditionally). */
static inline int same_everywhere(int rc, const dd_err *e)
{
    char mine[DD_ERRLEN + 32], r0[DD_ERRLEN + 32];
    snprintf(mine, sizeof mine, "%d %s", rc, rc == DD_OK ? "" : e->msg);
    memcpy(r0, mine, sizeof r0);
    MPI_Bcast(r0, (int)sizeof r0, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(r0, mine) == 0, all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

#endif
