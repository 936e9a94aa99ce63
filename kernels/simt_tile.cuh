/* simt_tile.cuh — the 128×128 block tile with 8×8 thread tiles used by
 * 05_vectorized and 06_double_buffer.  The two files differ only in their
 * main loop; the pieces they share live here so that the difference reads
 * as one.
 *
 * Block: 256 threads as 16×16; tile BM×BN = 128×128, BK = 8.
 * Thread tile: 8×8, made of groups of G = 16/sizeof(T) consecutive rows and
 * columns (4 for float, 2 for double) spaced 128/(8/G) apart, so that one
 * 16-byte shared-memory load fetches a whole group and the 16 threads of a
 * half-warp read 16 consecutive vectors (no bank conflicts).
 * A is stored transposed in shared memory (sA[k][m]) so that a thread's
 * 8 values of A for one k are contiguous too; rows are padded by one vector
 * so that the transposing stores do not conflict. */
#ifndef DD_SIMT_TILE_CUH
#define DD_SIMT_TILE_CUH

#include "gemm_common.cuh"

namespace dd
{
namespace simt
{

constexpr int BM = 128, BN = 128, BK = 8, THREADS = 256;

template <typename T> struct Tile {
    static constexpr int G = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    static constexpr int GROUPS = 8 / G;          /* vector groups per thread tile side */
    static constexpr int GSTRIDE_M = BM / GROUPS; /* distance between a thread's groups */
    static constexpr int GSTRIDE_N = BN / GROUPS;
    static constexpr int SA = BM + G;                      /* padded row of sA (elements) */
    static constexpr int A_CHUNKS = BM * BK / G / THREADS; /* vectors of A per thread per tile */
    static constexpr int B_CHUNKS = BK * BN / G / THREADS;
    typedef typename vec16<T>::type V;
};

/* One vector of G elements from a row of a matrix, from column col, where
 * only the first `avail` columns exist (avail may be <= 0: all zero).  VEC:
 * the matrix allows aligned 16-byte loads. */
template <typename T, bool VEC>
__device__ __forceinline__ void load_vec(const T *p, bool row_ok, int avail, T *v)
{
    constexpr int G = Tile<T>::G;
    if (VEC && row_ok && avail >= G) {
        typename Tile<T>::V x = __ldg(reinterpret_cast<const typename Tile<T>::V *>(p));
        const T *xs = reinterpret_cast<const T *>(&x);
#pragma unroll
        for (int e = 0; e < G; ++e)
            v[e] = xs[e];
    } else {
#pragma unroll
        for (int e = 0; e < G; ++e)
            v[e] = (row_ok && e < avail) ? p[e] : T(0);
    }
}

/* Global -> registers: this thread's vectors of the A tile (rows m0.., cols
 * k0..) and of the B tile (rows k0.., cols n0..). */
template <typename T, bool VEC>
__device__ __forceinline__ void
load_tiles(const T *A, int64_t lda, const T *B, int64_t ldb, int M, int N, int K, int m0, int n0,
           int k0, T (&ra)[Tile<T>::A_CHUNKS][Tile<T>::G], T (&rb)[Tile<T>::B_CHUNKS][Tile<T>::G])
{
    typedef Tile<T> L;
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < L::A_CHUNKS; ++l) {
        int c = tid + l * THREADS;
        int r = c / (BK / L::G), kc = (c % (BK / L::G)) * L::G;
        load_vec<T, VEC>(A + (int64_t)(m0 + r) * lda + k0 + kc, m0 + r < M, K - k0 - kc, ra[l]);
    }
#pragma unroll
    for (int l = 0; l < L::B_CHUNKS; ++l) {
        int c = tid + l * THREADS;
        int r = c / (BN / L::G), nc = (c % (BN / L::G)) * L::G;
        load_vec<T, VEC>(B + (int64_t)(k0 + r) * ldb + n0 + nc, k0 + r < K, N - n0 - nc, rb[l]);
    }
}

/* Registers -> shared: A transposed (scalar stores, conflict-free thanks to
 * the padding), B as 16-byte vectors. */
template <typename T>
__device__ __forceinline__ void store_tiles(T *sA, T *sB,
                                            const T (&ra)[Tile<T>::A_CHUNKS][Tile<T>::G],
                                            const T (&rb)[Tile<T>::B_CHUNKS][Tile<T>::G])
{
    typedef Tile<T> L;
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < L::A_CHUNKS; ++l) {
        int c = tid + l * THREADS;
        int r = c / (BK / L::G), kc = (c % (BK / L::G)) * L::G;
#pragma unroll
        for (int e = 0; e < L::G; ++e)
            sA[(kc + e) * L::SA + r] = ra[l][e];
    }
#pragma unroll
    for (int l = 0; l < L::B_CHUNKS; ++l) {
        int c = tid + l * THREADS;
        int r = c / (BN / L::G), nc = (c % (BN / L::G)) * L::G;
        typename L::V x;
        T *xs = reinterpret_cast<T *>(&x);
#pragma unroll
        for (int e = 0; e < L::G; ++e)
            xs[e] = rb[l][e];
        *reinterpret_cast<typename L::V *>(sB + r * BN + nc) = x;
    }
}

/* The 8×8 outer products of one BK step, from shared memory. */
template <typename T>
__device__ __forceinline__ void compute_tile(const T *sA, const T *sB, int ty, int tx,
                                             T (&acc)[8][8])
{
    typedef Tile<T> L;
#pragma unroll
    for (int p = 0; p < BK; ++p) {
        T a[8], b[8];
#pragma unroll
        for (int g = 0; g < L::GROUPS; ++g) {
            typename L::V va = *reinterpret_cast<const typename L::V *>(
                sA + p * L::SA + g * L::GSTRIDE_M + ty * L::G);
            typename L::V vb = *reinterpret_cast<const typename L::V *>(
                sB + p * BN + g * L::GSTRIDE_N + tx * L::G);
#pragma unroll
            for (int e = 0; e < L::G; ++e) {
                a[g * L::G + e] = reinterpret_cast<const T *>(&va)[e];
                b[g * L::G + e] = reinterpret_cast<const T *>(&vb)[e];
            }
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j)
                acc[i][j] += a[i] * b[j];
    }
}

/* acc -> C (or C +=), guarded at the edges, 16-byte stores where allowed. */
template <typename T, bool VEC>
__device__ __forceinline__ void store_c(T *C, int64_t ldc, int M, int N, int m0, int n0, int ty,
                                        int tx, int beta, const T (&acc)[8][8])
{
    typedef Tile<T> L;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        int row = m0 + (i / L::G) * L::GSTRIDE_M + ty * L::G + (i % L::G);
        if (row >= M)
            continue;
        T *crow = C + (int64_t)row * ldc;
#pragma unroll
        for (int g = 0; g < L::GROUPS; ++g)
            store_row_group<T, L::G, VEC>(crow, n0 + g * L::GSTRIDE_N + tx * L::G, N,
                                          &acc[i][g * L::G], beta);
    }
}

} // namespace simt
} // namespace dd

#endif
