/* rng.c — counter-based uniform values (rng.h): splitmix64 of a counter. */
#include "rng.h"
#include "dd_splitmix.h"

double rng_value(uint64_t seed, uint64_t tag, uint64_t index)
{
    uint64_t key = dd_splitmix64(seed ^ (tag << 56));
    uint64_t r = dd_splitmix64(key + index * 0xd1b54a32d192ed03ULL);
    /* 53 random bits → [0,1) → [-1,1) */
    return (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

void rng_fill_block(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows,
                    int64_t col0, int64_t cols, int64_t gcols)
{
    for (int64_t i = 0; i < rows; i++) {
        uint64_t base = (uint64_t)(row0 + i) * (uint64_t)gcols + (uint64_t)col0;
        if (t == DD_F64) {
            double *row = (double *)buf + i * cols;
            for (int64_t j = 0; j < cols; j++)
                row[j] = rng_value(seed, tag, base + (uint64_t)j);
        } else {
            float *row = (float *)buf + i * cols;
            for (int64_t j = 0; j < cols; j++)
                row[j] = (float)rng_value(seed, tag, base + (uint64_t)j);
        }
    }
}
