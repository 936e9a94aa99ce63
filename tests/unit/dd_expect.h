/* dd_expect.h — EXPECT for the single-process C tests that need no MPI
 * (dd_test.h has the MPI tests' CHECK and EXPECT): a failed expectation
 * counts in dd_failures and, for the first 20, prints where and why; the
 * test's main returns non-zero when dd_failures is. */
#ifndef DD_EXPECT_H
#define DD_EXPECT_H

#include <stdio.h>

static int dd_failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (dd_failures++ < 20) {                                                              \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#endif
