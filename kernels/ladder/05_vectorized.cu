/* 05_vectorized — 128×128 block tiles, 8×8 thread tiles, 16-byte loads, and
 * a shared-memory layout without bank conflicts.
 *
 * What it changes (the block tile's pieces are below; 06 repeats them):
 *  - global loads of A and B are 16-byte vectors (float4 / double2), one
 *    instruction per 4 floats or 2 doubles instead of one per element;
 *  - A is stored transposed in shared memory (sA[k][m]) so that a thread's
 *    8 values of A for one k are read as two (FP32) or four (FP64) 16-byte
 *    loads, like its 8 values of B;
 *  - a thread's 8×8 tile is split into groups of 4 (FP32) / 2 (FP64)
 *    consecutive rows and columns, spaced apart, so that the 16 threads of a
 *    half-warp read 16 consecutive vectors: conflict-free, and the A reads
 *    of a warp are broadcasts;
 *  - the transposed rows of sA are padded by one vector, which makes the
 *    transposing stores conflict-free (without it two threads of a warp
 *    land in each bank).
 * Vector loads need 16-byte aligned rows; a sub-block with an odd ld gets
 * the scalar-load instantiation of the same kernel (chosen at launch).
 *
 * Why it should help: per k a thread issues 4 (FP32) or 8 (FP64) shared
 * loads for 64 FMAs, against 8 loads per 16 FMAs in 04; the 128×128 tile
 * halves global traffic per flop again.  The loop still waits at each
 * __syncthreads for the global loads of the next tile: 06 overlaps them. */
#include "ladder.cuh"

namespace dd
{
namespace
{

/* 16 bytes of T: float4 or double2. */
template <typename T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
};
template <> struct vec16<double> {
    typedef double2 type;
};

/* Store (or accumulate) G contiguous elements of one C row: 16-byte stores
 * when the whole group is inside and C allows vectors, else scalars with a
 * guard per element. */
template <typename T, int G, bool VEC>
__device__ __forceinline__ void store_row_group(T *crow, int col, int N, const T *v, int beta)
{
    constexpr int W = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    if (VEC && G % W == 0 && col + G <= N) {
        typedef typename vec16<T>::type V;
#pragma unroll
        for (int q = 0; q < G / W; ++q) {
            V *p = reinterpret_cast<V *>(crow + col + q * W);
            V out;
            T *o = reinterpret_cast<T *>(&out);
            if (beta)
                out = *p;
#pragma unroll
            for (int e = 0; e < W; ++e)
                o[e] = beta ? o[e] + v[q * W + e] : v[q * W + e];
            *p = out;
        }
    } else {
#pragma unroll
        for (int e = 0; e < G; ++e) {
            if (col + e < N) {
                T x = v[e];
                if (beta)
                    x += crow[col + e];
                crow[col + e] = x;
            }
        }
    }
}

/* The 128×128 block tile with 8×8 thread tiles (05 and 06 share it; each
 * has its own copy).
 * Block: 256 threads as 16×16; tile BM×BN = 128×128, BK = 8.
 * Thread tile: 8×8, made of groups of G = 16/sizeof(T) consecutive rows and
 * columns (4 for float, 2 for double) spaced 128/(8/G) apart, so that one
 * 16-byte shared-memory load fetches a whole group and the 16 threads of a
 * half-warp read 16 consecutive vectors (no bank conflicts).
 * A is stored transposed in shared memory (sA[k][m]) so that a thread's
 * 8 values of A for one k are contiguous too; rows are padded by one vector
 * so that the transposing stores do not conflict. */
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
} // namespace
} // namespace dd

namespace
{

using namespace dd::simt;

template <typename T, bool VEC>
__global__ void __launch_bounds__(THREADS)
    vectorized_kernel(int M, int N, int K, const T *__restrict__ A, int64_t lda,
                      const T *__restrict__ B, int64_t ldb, int beta, T *__restrict__ C,
                      int64_t ldc)
{
    typedef Tile<T> L;
    __shared__ __align__(16) T sA[BK * L::SA];
    __shared__ __align__(16) T sB[BK * BN];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    T acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;

    T ra[L::A_CHUNKS][L::G], rb[L::B_CHUNKS][L::G];
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<T, VEC>(A, lda, B, ldb, M, N, K, m0, n0, k0, ra, rb);
        store_tiles<T>(sA, sB, ra, rb);
        __syncthreads();
        compute_tile<T>(sA, sB, ty, tx, acc);
        __syncthreads();
    }
    store_c<T, VEC>(C, ldc, M, N, m0, n0, ty, tx, beta, acc);
}

template <typename T> int launch(DD_LAUNCHER_ARGS(T))
{
    bool vec = dd::vec16_ok<T>(A, lda) && dd::vec16_ok<T>(B, ldb) && dd::vec16_ok<T>(C, ldc);
    return dd::launch_tiled<T>(vec ? vectorized_kernel<T, true> : vectorized_kernel<T, false>,
                               dim3(THREADS), BM, BN, m, n, k, A, lda, B, ldb, beta, C, ldc,
                               stream);
}

} // namespace

DD_LAUNCHER(dd_05_vectorized_f64, double, launch<double>)
DD_LAUNCHER(dd_05_vectorized_f32, float, launch<float>)
