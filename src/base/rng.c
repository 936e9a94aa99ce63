/* rng.c — counter-based uniform values (rng.h): splitmix64 of a counter. */
#include "rng.h"

void rng_fill_block(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows,
                    int64_t col0, int64_t cols, int64_t gcols)
{
    if (dd_dtype_complex(t)) { /* pairs: the real matrix of 2·gcols columns */
        rng_fill_block(buf, dd_dtype_real(t), seed, tag, row0, rows, 2 * col0, 2 * cols, 2 * gcols);
        return;
    }
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
    if (dd_dtype_complex(t)) {
        int d = t == DD_C128;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                uint64_t c = 2 * rng_index(col0, j, row0, i, gcols);
                double re = rng_value(seed, tag, c), im = rng_value(seed, tag, c + 1);
                if (d) {
                    ((double *)buf)[2 * (i * cols + j)] = re;
                    ((double *)buf)[2 * (i * cols + j) + 1] = im;
                } else {
                    ((float *)buf)[2 * (i * cols + j)] = (float)re;
                    ((float *)buf)[2 * (i * cols + j) + 1] = (float)im;
                }
            }
        return;
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double v = rng_value(seed, tag, rng_index(col0, j, row0, i, gcols));
            if (t == DD_F64)
                ((double *)buf)[i * cols + j] = v;
            else
                ((float *)buf)[i * cols + j] = (float)v;
        }
}
