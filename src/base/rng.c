/* rng.c — counter-based uniform values (rng.h): splitmix64 of a counter. */
#include "rng.h"

void rng_fill_block(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows,
                    int64_t col0, int64_t cols, int64_t gcols)
{
    for (int64_t i = 0; i < rows; i++) {
        uint64_t base = rng_index(row0, i, col0, 0, gcols);
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

void rng_fill_block_t(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0,
                      int64_t rows, int64_t col0, int64_t cols, int64_t gcols)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double v = rng_value(seed, tag, rng_index(col0, j, row0, i, gcols));
            if (t == DD_F64)
                ((double *)buf)[i * cols + j] = v;
            else
                ((float *)buf)[i * cols + j] = (float)v;
        }
}
