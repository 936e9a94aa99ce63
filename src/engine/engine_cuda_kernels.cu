/* engine_cuda_kernels.cu — the CUDA engine's kernels besides the multiply
 * (engine_cuda_kernels.h): the check's absmax and matrix-vector products, the
 * generator of --size inputs, and GEMM's alpha/beta scaling, run where the
 * data is.
 *
 * All three are memory-bound streams over a block: grid-stride loops, reads
 * and writes coalesced along rows, sums in double.  The generator calls
 * rng.h's rng_value(), the same inline function the host's rng_fill_block
 * calls, so the device makes the host's bits (rng.h says why no compiler
 * choice can change them). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "engine_cuda_kernels.h"
#include "rng.h" /* rng_value, rng_index: the one definition of an element */

namespace
{

constexpr int THREADS = 256; /* per block, every kernel */
constexpr int WARPS = THREADS / 32;
constexpr unsigned FULL = 0xffffffffu;

template <typename T> __device__ __forceinline__ T from_double(double x);
template <> __device__ __forceinline__ double from_double<double>(double x)
{
    return x;
}
/* round to nearest even, as the host's (float) conversion in rng_fill_block */
template <> __device__ __forceinline__ float from_double<float>(double x)
{
    return __double2float_rn(x);
}

__device__ __forceinline__ double warp_sum(double x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_down_sync(FULL, x, o);
    return x;
}

__device__ __forceinline__ double warp_max(double x)
{
    for (int o = 16; o > 0; o >>= 1)
        x = fmax(x, __shfl_down_sync(FULL, x, o));
    return x;
}

/* Each thread's max over its strided elements, then the warp's, then one
 * atomicMax per warp on the bits (non-negative doubles order as integers). */
template <typename T>
__global__ void __launch_bounds__(THREADS) absmax_kernel(const T *M, int64_t n, dd_aux_flags *flags)
{
    double mx = 0;
    int bad = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double m = (double)M[i];
        if (isfinite(m))
            mx = fmax(mx, fabs(m));
        else
            bad = 1;
    }
    mx = warp_max(mx);
    bad = __any_sync(FULL, bad);
    if ((threadIdx.x & 31) == 0) {
        if (mx > 0)
            atomicMax(&flags->max_bits, (unsigned long long)__double_as_longlong(mx));
        if (bad)
            atomicOr(&flags->nonfinite, 1);
    }
}

/* wpr warps per row (1, 2, 4 or 8): a block takes WARPS/wpr consecutive
 * rows; the warps of a row stride along it together (coalesced), each
 * thread summing in double; shuffles within a warp, then the row's first
 * warp adds its warps' sums in order.  The row loop is the same for every
 * thread of a block, so the barriers are reached by all. */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    matvec_kernel(const T *M, int64_t rows, int64_t cols, double f0, double f1, const double *v,
                  double *out, double *absrow, dd_aux_flags *flags, int wpr)
{
    __shared__ double ss[WARPS], sa[WARPS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rpb = WARPS / wpr, lr = warp / wpr, sub = warp % wpr, tpr = 32 * wpr;
    int bad = 0;
    for (int64_t i0 = (int64_t)blockIdx.x * rpb; i0 < rows; i0 += (int64_t)gridDim.x * rpb) {
        const int64_t i = i0 + lr;
        double s = 0, a = 0;
        if (i < rows) {
            const T *row = M + i * cols;
            for (int64_t j = sub * 32 + lane; j < cols; j += tpr) {
                double m = (double)row[j];
                bad |= !isfinite(m);
                m = m * f0; /* (m·f0)·f1, as the CPU engine: no spurious overflow */
                m = m * f1;
                s += m * v[j];
                a += fabs(m);
            }
        }
        s = warp_sum(s);
        a = warp_sum(a);
        if (lane == 0) {
            ss[warp] = s;
            sa[warp] = a;
        }
        __syncthreads();
        if (sub == 0 && lane == 0 && i < rows) {
            double ts = 0, ta = 0;
            for (int w = 0; w < wpr; w++) {
                ts += ss[warp + w];
                ta += sa[warp + w];
            }
            out[i] = ts;
            if (absrow)
                absrow[i] = ta;
        }
        __syncthreads();
    }
    if (__any_sync(FULL, bad) && lane == 0)
        atomicOr(&flags->nonfinite, 1);
}

/* The complex types' matvec_kernel: M holds (re, im) pairs of T, v and
 * out are complex (pairs of doubles), absrow sums moduli; same layout of
 * warps and the same order of sums as matvec_kernel. */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    matvec_c_kernel(const T *M, int64_t rows, int64_t cols, double f0, double f1, const double *v,
                    double *out, double *absrow, dd_aux_flags *flags, int wpr)
{
    __shared__ double sr[WARPS], si[WARPS], sa[WARPS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rpb = WARPS / wpr, lr = warp / wpr, sub = warp % wpr, tpr = 32 * wpr;
    int bad = 0;
    for (int64_t i0 = (int64_t)blockIdx.x * rpb; i0 < rows; i0 += (int64_t)gridDim.x * rpb) {
        const int64_t i = i0 + lr;
        double r = 0, im = 0, a = 0;
        if (i < rows) {
            const T *row = M + 2 * i * cols;
            for (int64_t j = sub * 32 + lane; j < cols; j += tpr) {
                double x = (double)row[2 * j], y = (double)row[2 * j + 1];
                bad |= !isfinite(x) || !isfinite(y);
                x = x * f0;
                x = x * f1;
                y = y * f0;
                y = y * f1;
                r += x * v[2 * j] - y * v[2 * j + 1];
                im += x * v[2 * j + 1] + y * v[2 * j];
                a += sqrt(x * x + y * y);
            }
        }
        r = warp_sum(r);
        im = warp_sum(im);
        a = warp_sum(a);
        if (lane == 0) {
            sr[warp] = r;
            si[warp] = im;
            sa[warp] = a;
        }
        __syncthreads();
        if (sub == 0 && lane == 0 && i < rows) {
            double tr = 0, ti = 0, ta = 0;
            for (int w = 0; w < wpr; w++) {
                tr += sr[warp + w];
                ti += si[warp + w];
                ta += sa[warp + w];
            }
            out[2 * i] = tr;
            out[2 * i + 1] = ti;
            if (absrow)
                absrow[i] = ta;
        }
        __syncthreads();
    }
    if (__any_sync(FULL, bad) && lane == 0)
        atomicOr(&flags->nonfinite, 1);
}

/* The complex types' transposed fill: element (i, j) of the block takes
 * the pair of counters 2c, 2c + 1 of the matrix's (col0 + j, row0 + i). */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    fill_c_t_kernel(T *out, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows, int64_t col0,
                    int64_t cols, int64_t gcols)
{
    for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < rows;
         i += (int64_t)gridDim.y * blockDim.y) {
        T *row = out + 2 * i * cols;
        for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
             j += (int64_t)gridDim.x * blockDim.x) {
            const uint64_t c = 2 * rng_index(col0, j, row0, i, gcols);
            row[2 * j] = from_double<T>(rng_value(seed, tag, c));
            row[2 * j + 1] = from_double<T>(rng_value(seed, tag, c + 1));
        }
    }
}

/* x[i] = w·(sr + i·si), w = x[i] or its conjugate (g = -1): pairs of T,
 * each product and sum rounded to nearest on its own (no contraction). */
__global__ void __launch_bounds__(THREADS)
    cscale_f64(double *x, int64_t n, double sr, double si, double g)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        double re = x[2 * i], im = __dmul_rn(g, x[2 * i + 1]);
        if (si == 0) { /* a real factor: each part scaled, as the real scale does */
            x[2 * i] = __dmul_rn(re, sr);
            x[2 * i + 1] = __dmul_rn(im, sr);
            continue;
        }
        x[2 * i] = __dadd_rn(__dmul_rn(re, sr), -__dmul_rn(im, si));
        x[2 * i + 1] = __dadd_rn(__dmul_rn(re, si), __dmul_rn(im, sr));
    }
}

__global__ void __launch_bounds__(THREADS)
    cscale_f32(float *x, int64_t n, float sr, float si, float g)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float re = x[2 * i], im = __fmul_rn(g, x[2 * i + 1]);
        if (si == 0) { /* a real factor: each part scaled, as the real scale does */
            x[2 * i] = __fmul_rn(re, sr);
            x[2 * i + 1] = __fmul_rn(im, sr);
            continue;
        }
        x[2 * i] = __fadd_rn(__fmul_rn(re, sr), -__fmul_rn(im, si));
        x[2 * i + 1] = __fadd_rn(__fmul_rn(re, si), __fmul_rn(im, sr));
    }
}

/* blockDim (tx, ty): tx threads along a row, ty rows per block.  trans:
 * element (i, j) takes the counter of the matrix's (col0 + j, row0 + i). */
template <typename T>
__global__ void __launch_bounds__(THREADS)
    fill_kernel(T *out, uint64_t seed, uint64_t tag, int64_t row0, int64_t rows, int64_t col0,
                int64_t cols, int64_t gcols, int trans)
{
    for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < rows;
         i += (int64_t)gridDim.y * blockDim.y) {
        const uint64_t base =
            trans ? rng_index(col0, 0, row0, i, gcols) : rng_index(row0, i, col0, 0, gcols);
        const uint64_t step = trans ? (uint64_t)gcols : 1;
        T *row = out + i * cols;
        for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
             j += (int64_t)gridDim.x * blockDim.x)
            row[j] = from_double<T>(rng_value(seed, tag, base + (uint64_t)j * step));
    }
}

/* 32×32 tiles, 32×8 threads; the tile's column of +1 keeps the shared
 * memory reads of a turned row free of bank conflicts.  Tiles in x along
 * cols, in y along rows (grid-strided beyond the launch's caps). */
constexpr int TILE = 32, TROWS = 8;
template <typename T>
__global__ void __launch_bounds__(TILE *TROWS)
    transpose_kernel(const T *src, int64_t lds, T *dst, int64_t ldd, int64_t rows, int64_t cols)
{
    __shared__ T tile[TILE][TILE + 1];
    for (int64_t by = blockIdx.y; by * TILE < rows; by += gridDim.y)
        for (int64_t bx = blockIdx.x; bx * TILE < cols; bx += gridDim.x) {
            int64_t i0 = by * TILE, j0 = bx * TILE;
            for (int k = threadIdx.y; k < TILE; k += TROWS) {
                int64_t i = i0 + k, j = j0 + threadIdx.x;
                if (i < rows && j < cols)
                    tile[k][threadIdx.x] = src[i * lds + j];
            }
            __syncthreads();
            for (int k = threadIdx.y; k < TILE; k += TROWS) {
                int64_t j = j0 + k, i = i0 + threadIdx.x; /* dst row j, column i */
                if (i < rows && j < cols)
                    dst[j * ldd + i] = tile[threadIdx.x][k];
            }
            __syncthreads();
        }
}

/* x[i] *= s: one IEEE multiply in the element type, rounded to nearest
 * (__dmul_rn / __fmul_rn: never contracted with anything). */
__global__ void __launch_bounds__(THREADS) scale_f64(double *x, int64_t n, double s)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        x[i] = __dmul_rn(x[i], s);
}

__global__ void __launch_bounds__(THREADS) scale_f32(float *x, int64_t n, float s)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        x[i] = __fmul_rn(x[i], s);
}

/* ceil(work / per), at least 1 and at most cap (the loops stride beyond). */
unsigned blocks(int64_t work, int64_t per, int64_t cap)
{
    int64_t b = (work + per - 1) / per;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

/* The smallest power of two >= n, within [32, THREADS]. */
int lanes_for(int64_t n)
{
    int w = 32;
    while (w < THREADS && w < n)
        w *= 2;
    return w;
}

} // namespace

extern "C" int dd_aux_absmax(int is_f64, const void *M, int64_t n, dd_aux_flags *flags,
                             void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t rc = cudaMemsetAsync(flags, 0, sizeof *flags, st);
    if (rc != cudaSuccess || n <= 0)
        return rc;
    unsigned grid = blocks(n, THREADS, 4096);
    if (is_f64)
        absmax_kernel<double><<<grid, THREADS, 0, st>>>((const double *)M, n, flags);
    else
        absmax_kernel<float><<<grid, THREADS, 0, st>>>((const float *)M, n, flags);
    return cudaGetLastError();
}

extern "C" int dd_aux_matvec(int is_f64, const void *M, int64_t rows, int64_t cols, double f0,
                             double f1, const double *v, double *out, double *absrow,
                             dd_aux_flags *flags, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t rc = cudaMemsetAsync(flags, 0, sizeof *flags, st);
    if (rc != cudaSuccess || rows <= 0)
        return rc;
    int wpr = lanes_for(cols) / 32;
    unsigned grid = blocks(rows, WARPS / wpr, 1 << 16);
    if (is_f64)
        matvec_kernel<double><<<grid, THREADS, 0, st>>>((const double *)M, rows, cols, f0, f1, v,
                                                        out, absrow, flags, wpr);
    else
        matvec_kernel<float><<<grid, THREADS, 0, st>>>((const float *)M, rows, cols, f0, f1, v, out,
                                                       absrow, flags, wpr);
    return cudaGetLastError();
}

extern "C" int dd_aux_fill_random(int is_f64, void *work, uint64_t seed, uint64_t tag, int64_t row0,
                                  int64_t rows, int64_t col0, int64_t cols, int64_t gcols,
                                  int trans, void *stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    int tx = lanes_for(cols), ty = THREADS / tx;
    dim3 block((unsigned)tx, (unsigned)ty);
    dim3 grid(blocks(cols, tx, 4096), blocks(rows, ty, 65535));
    if (is_f64)
        fill_kernel<double><<<grid, block, 0, st>>>((double *)work, seed, tag, row0, rows, col0,
                                                    cols, gcols, trans);
    else
        fill_kernel<float><<<grid, block, 0, st>>>((float *)work, seed, tag, row0, rows, col0, cols,
                                                   gcols, trans);
    return cudaGetLastError();
}

extern "C" int dd_aux_scale(int is_f64, void *work, int64_t n, double s, void *stream)
{
    if (n <= 0)
        return cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned grid = blocks(n, THREADS, 4096);
    if (is_f64)
        scale_f64<<<grid, THREADS, 0, st>>>((double *)work, n, s);
    else
        scale_f32<<<grid, THREADS, 0, st>>>((float *)work, n, (float)s);
    return cudaGetLastError();
}

extern "C" int dd_aux_transpose(size_t es, const void *src, int64_t lds, void *dst, int64_t ldd,
                                int64_t rows, int64_t cols, void *stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    dim3 block(TILE, TROWS), grid(blocks(cols, TILE, 65535), blocks(rows, TILE, 65535));
    if (es == 16) /* complex double: a pair moves whole */
        transpose_kernel<double2>
            <<<grid, block, 0, st>>>((const double2 *)src, lds, (double2 *)dst, ldd, rows, cols);
    else if (es == 8)
        transpose_kernel<double>
            <<<grid, block, 0, st>>>((const double *)src, lds, (double *)dst, ldd, rows, cols);
    else
        transpose_kernel<float>
            <<<grid, block, 0, st>>>((const float *)src, lds, (float *)dst, ldd, rows, cols);
    return cudaGetLastError();
}

extern "C" int dd_aux_matvec_c(int is_f64, const void *M, int64_t rows, int64_t cols, double f0,
                               double f1, const double *v, double *out, double *absrow,
                               dd_aux_flags *flags, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t rc = cudaMemsetAsync(flags, 0, sizeof *flags, st);
    if (rc != cudaSuccess || rows <= 0)
        return rc;
    int wpr = lanes_for(cols) / 32;
    unsigned grid = blocks(rows, WARPS / wpr, 1 << 16);
    if (is_f64)
        matvec_c_kernel<double><<<grid, THREADS, 0, st>>>((const double *)M, rows, cols, f0, f1, v,
                                                          out, absrow, flags, wpr);
    else
        matvec_c_kernel<float><<<grid, THREADS, 0, st>>>((const float *)M, rows, cols, f0, f1, v,
                                                         out, absrow, flags, wpr);
    return cudaGetLastError();
}

extern "C" int dd_aux_fill_random_c_t(int is_f64, void *work, uint64_t seed, uint64_t tag,
                                      int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                                      int64_t gcols, void *stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    int tx = lanes_for(cols), ty = THREADS / tx;
    dim3 block((unsigned)tx, (unsigned)ty);
    dim3 grid(blocks(cols, tx, 4096), blocks(rows, ty, 65535));
    if (is_f64)
        fill_c_t_kernel<double>
            <<<grid, block, 0, st>>>((double *)work, seed, tag, row0, rows, col0, cols, gcols);
    else
        fill_c_t_kernel<float>
            <<<grid, block, 0, st>>>((float *)work, seed, tag, row0, rows, col0, cols, gcols);
    return cudaGetLastError();
}

extern "C" int dd_aux_cscale(int is_f64, void *work, int64_t n, double sr, double si, int conj,
                             void *stream)
{
    if (n <= 0)
        return cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned grid = blocks(n, THREADS, 4096);
    if (is_f64)
        cscale_f64<<<grid, THREADS, 0, st>>>((double *)work, n, sr, si, conj ? -1.0 : 1.0);
    else
        cscale_f32<<<grid, THREADS, 0, st>>>((float *)work, n, (float)sr, (float)si,
                                             conj ? -1.0f : 1.0f);
    return cudaGetLastError();
}
