/* rng.h — a counter-based generator: element i of stream (seed, tag) is a
 * pure function of (seed, tag, i), so a matrix generated in blocks by any
 * number of ranks is the same matrix.  Values are uniform in [-1, 1). */
#ifndef DD_RNG_H
#define DD_RNG_H

#include <stdint.h>

#include "dd.h"

enum { RNG_TAG_A = 0x41, RNG_TAG_B = 0x42, RNG_TAG_X = 0x58 };

double rng_value(uint64_t seed, uint64_t tag, uint64_t index);
/* Fill a rows×cols block (row-major, ld = cols) of a matrix with `gcols`
 * columns whose top-left element is (row0, col0). */
void rng_fill_block(void *buf, dd_dtype t, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows,
                    int64_t col0, int64_t cols, int64_t gcols);

#endif
