/* rng.h — a counter-based generator: element i of stream (seed, tag) is a
 * pure function of (seed, tag, i), so a matrix generated in blocks by any
 * number of ranks is the same matrix.  Values are uniform in [-1, 1).
 *
 * rng_value() is the one definition of an element, shared by host C (the
 * generator, the check's x) and CUDA device code (the CUDA engine's
 * fill_random, src/engine/engine_cuda_kernels.cu): DD_HOSTDEV
 * (dd_splitmix.h) makes it a static inline in C and a __host__ __device__
 * inline under nvcc.  Host and device give the same bits:
 *   - the integer part is exact 64-bit arithmetic (wrapping multiply);
 *   - (double)(r >> 11) converts an integer below 2^53: exact;
 *   - k·2^-52 (k < 2^53) is a power-of-two scaling without underflow:
 *     exact, so contracting "k·2^-52 − 1" into one FMA (nvcc does by
 *     default; the host compiler may) rounds the same as two operations;
 *   - k·2^-52 − 1 lies in [-1, 1) and is a multiple of 2^-52: exact too.
 * So the double is the same whatever the compiler does, and the f32 value
 * is that double rounded to nearest (even), by C's conversion on the host
 * (default rounding mode) and by CUDA's default cvt.rn.f32.f64 on the
 * device. */
#ifndef DD_RNG_H
#define DD_RNG_H

#include <stdint.h>

#include "dd.h"
#include "dd_splitmix.h"

enum { RNG_TAG_A = 0x41, RNG_TAG_B = 0x42, RNG_TAG_C = 0x43, RNG_TAG_X = 0x58 };

DD_HOSTDEV double rng_value(uint64_t seed, uint64_t tag, uint64_t index)
{
    uint64_t key = dd_splitmix64(seed ^ (tag << 56));
    uint64_t r = dd_splitmix64(key + index * 0xd1b54a32d192ed03ULL);
    /* 53 random bits → [0,1) → [-1,1); exact in every step (above) */
    return (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* The global index of element (i, j) of a block whose top-left element is
 * (row0, col0) in a matrix of `gcols` columns: rng_fill_block's counter. */
DD_HOSTDEV uint64_t rng_index(int64_t row0, int64_t i, int64_t col0, int64_t j, int64_t gcols)
{
    return (uint64_t)(row0 + i) * (uint64_t)gcols + (uint64_t)col0 + (uint64_t)j;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Fill a rows×cols block (row-major, ld = cols) of a matrix with `gcols`
 * columns whose top-left element is (row0, col0).  Complex types: element
 * (i, j) with counter c is rng_value(2c) + i·rng_value(2c + 1), so the
 * pairs are the real matrix of 2·gcols columns. */
void rng_fill_block(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows,
                    int64_t col0, int64_t cols, int64_t gcols);

/* The same for a block of the transpose: element (i, j) of the rows×cols
 * block (row-major, ld = cols) is element (col0 + j, row0 + i) of the
 * matrix of `gcols` columns, i.e. counter rng_index(col0, j, row0, i, gcols).
 * (A block of Aᵀ when A is what the generator makes.) */
void rng_fill_block_t(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0,
                      int64_t rows, int64_t col0, int64_t cols, int64_t gcols);

#ifdef __cplusplus
}
#endif

#endif
