/* test_rng.c — the generator's values are its definition: rng_value
 * against values worked out apart from it (splitmix64 in another language,
 * kept here as decimal literals), so that a file `gen` wrote in one
 * version is the file any other version writes; and every bit of the seed
 * counts (seeds differing only in a high bit give different matrices). */
#include <stdio.h>

#include "dd_check.h"
#include "rng.h"

int main(void)
{
    static const struct {
        uint64_t seed, tag, index;
        double want;
    } golden[] = {
        {42, RNG_TAG_A, 0, -0.5314395978431412},
        {42, RNG_TAG_A, 1, 0.8077283691940411},
        {42, RNG_TAG_B, 12345, -0.9776394481886996},
        {(1ULL << 40) | 42, RNG_TAG_A, 0, -0.9528416835460254},
        {7, RNG_TAG_X, (1ULL << 40) + 3, 0.2502946915741078},
        {0, RNG_TAG_C, 999, -0.30832468221091625},
    };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        double got = rng_value(golden[i].seed, golden[i].tag, golden[i].index);
        CHECK(got == golden[i].want, "rng_value(%llu, 0x%llx, %llu) = %.17g, defined as %.17g",
              (unsigned long long)golden[i].seed, (unsigned long long)golden[i].tag,
              (unsigned long long)golden[i].index, got, golden[i].want);
    }
    /* each bit of the seed, and of the tag, changes the first values */
    for (int b = 0; b < 64; b++) {
        int same = 0;
        for (uint64_t k = 0; k < 4; k++)
            same += rng_value(42, RNG_TAG_A, k) == rng_value(42 ^ (1ULL << b), RNG_TAG_A, k);
        CHECK(same == 0, "seeds 42 and 42 ^ 2^%d give %d equal values of 4", b, same);
    }
    CHECK(rng_value(42, RNG_TAG_A, 5) != rng_value(42, RNG_TAG_B, 5), "tags A and B agree");
    if (g_fail == 0)
        printf("test_rng: passed\n");
    return g_fail != 0;
}
