/* dd_splitmix.h — the one splitmix64 finaliser of the project, for host C
 * (the generator, the check's x) and CUDA device code (gemm-bench's data,
 * the CUDA engine's fill_random through rng.h's rng_value).
 * A counter through it gives independent-looking 64-bit values; the
 * generator's values depend on this exact function, so it never changes.
 * DD_HOSTDEV marks a function shared by host and device: a static inline
 * in C, __host__ __device__ inline under nvcc. */
#ifndef DD_SPLITMIX_H
#define DD_SPLITMIX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define DD_HOSTDEV __host__ __device__ __forceinline__
#else
#define DD_HOSTDEV static inline
#endif

DD_HOSTDEV uint64_t dd_splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
