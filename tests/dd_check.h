/* dd_check.h — the assertions of every C and CUDA test under tests/.
 *
 *   CHECK(cond, fmt, ...)   when cond is false: counts one failure in g_fail
 *                           and prints where, the condition and why (the
 *                           first DD_CHECK_PRINT_MAX failures of a process;
 *                           every one counts); a test's main returns
 *                           non-zero when g_fail is.
 *
 * Two variants, chosen before the include:
 *   plain (the default): single-process tests, no MPI needed; a failure reads
 *       FAIL file:line: CHECK(cond): why
 *   MPI-aware (#define DD_CHECK_MPI): g_rank and g_size, which the test sets
 *   after MPI_Init (dd_check_init does); a failure names its rank,
 *       FAIL [rank R] file:line: CHECK(cond): why
 *   and dd_check_total() is every rank's failures together (collective).
 *   Where src/base's dd.h is included first, same_everywhere(rc, e) says
 *   whether an error came out the same on every rank (collective).
 *
 * Test matrices (#define DD_CHECK_MATRICES; src/base's dd.h and rng.h):
 * tm_get and tm_put, an FP64 or FP32 block's elements as doubles, and
 * tm_make, a block of the generator's values with values planted, for the
 * tests that hold engines and the check to plain loops.
 *
 * C11 and C++ (the CUDA tests). */
#ifndef DD_TESTS_DD_CHECK_H
#define DD_TESTS_DD_CHECK_H

#include <stdio.h>
#include <string.h>

#ifdef DD_CHECK_MPI
#include <mpi.h>
#endif

#ifndef DD_CHECK_PRINT_MAX
#define DD_CHECK_PRINT_MAX 100
#endif

static int g_fail;
#ifdef DD_CHECK_MPI
static int g_rank __attribute__((unused)), g_size __attribute__((unused));
#define DD_CHECK_WHO_FMT "[rank %d] "
#define DD_CHECK_WHO g_rank
#else
#define DD_CHECK_WHO_FMT "%s"
#define DD_CHECK_WHO ""
#endif

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (g_fail++ < DD_CHECK_PRINT_MAX) {                                                   \
                fprintf(stderr, "FAIL " DD_CHECK_WHO_FMT "%s:%d: CHECK(%s): ", DD_CHECK_WHO,       \
                        __FILE__, __LINE__, #cond);                                                \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#ifdef DD_CHECK_MPI
/* g_rank and g_size of MPI_COMM_WORLD (after MPI_Init). */
static inline void dd_check_init(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

/* Every rank's failures together (collective over MPI_COMM_WORLD). */
static inline int dd_check_total(void)
{
    int all = 0;
    MPI_Allreduce(&g_fail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

#ifdef DD_ERRLEN
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
#endif

#ifdef DD_CHECK_MATRICES
#include <math.h>
#include <stdlib.h>

#include "dd.h"
#include "rng.h"

static inline double tm_get(const void *p, dd_dtype t, int64_t i)
{
    return t == DD_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void tm_put(void *p, dd_dtype t, int64_t i, double v)
{
    if (t == DD_F64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

/* rows×cols of uniform [-1, 1) times 2^scale (the generator's A values of
 * `seed`), with `plant` (NaN, ±Inf; 0: none) at the first and last element
 * and its negation at the middle one. */
static inline void *tm_make(dd_dtype t, int64_t rows, int64_t cols, int scale, double plant,
                            uint64_t seed)
{
    size_t n = (size_t)(rows * cols);
    void *m = malloc((n ? n : 1) * dd_elsize(t));
    rng_fill_block(m, t, seed, RNG_TAG_A, 0, rows, 0, cols, cols);
    for (size_t i = 0; i < n; i++)
        tm_put(m, t, (int64_t)i, ldexp(tm_get(m, t, (int64_t)i), scale));
    if (plant != 0 && n > 0) {
        tm_put(m, t, 0, plant);
        tm_put(m, t, (int64_t)n - 1, plant);
        tm_put(m, t, (int64_t)n / 2, -plant);
    }
    return m;
}
#endif

#endif
