/* oz_rng.h — the random helpers of the Ozaki unit tests (test_ozaki2*.c):
 * a splitmix64 stream (dd_splitmix64 of a Weyl counter stepped by the golden
 * ratio) in the file-static state g_rng, which starts at OZ_RNG_SEED, a
 * constant the including test defines first (each test keeps its own seed);
 * next_u64 its next value, uni a double uniform in [-1, 1) on the 2^-52
 * grid, irange an int in [lo, hi].  The tests' fixed expectations depend on
 * these exact sequences, so the algorithm and the seeds never change. */
#ifndef OZ_RNG_H
#define OZ_RNG_H

#include <stdint.h>

#include "dd_splitmix.h"

#ifndef OZ_RNG_SEED
#error "define OZ_RNG_SEED (the test's seed) before including oz_rng.h"
#endif

static uint64_t g_rng = OZ_RNG_SEED;

static inline uint64_t next_u64(void)
{
    uint64_t z = dd_splitmix64(g_rng);
    g_rng += 0x9E3779B97F4A7C15ull;
    return z;
}

static inline double uni(void) /* [-1, 1) */
{
    return (double)(next_u64() >> 11) * 0x1p-52 - 1.0;
}

static inline int irange(int lo, int hi) /* [lo, hi] */
{
    return lo + (int)(next_u64() % (uint64_t)(hi - lo + 1));
}

#endif
