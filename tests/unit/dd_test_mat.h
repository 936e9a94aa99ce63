/* dd_test_mat.h — elements of an FP64 or FP32 block as doubles, and a block
 * of the generator's values scaled by 2^scale with values planted, for the
 * tests that check engines and the check against plain loops. */
#ifndef DD_TEST_MAT_H
#define DD_TEST_MAT_H

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
