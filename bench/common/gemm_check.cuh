/* gemm_check.cuh — what gemm-bench and kernel-test share: checked CUDA
 * calls, random matrices made on the device, poisoning, and the comparison
 * of a kernel's C with cuBLAS's, all on the GPU (a 16384² FP64 result is
 * 2 GB: it stays there).
 *
 * The error measure is
 *     err = max|C - Cref| / (eps · (K · max|A| · max|B| + beta · max|C0|))
 * with eps the type's machine epsilon: the componentwise bound of a dot
 * product of length K grows like K·eps·Σ|a||b|, and random-sign rounding
 * errors sit far below it.  For complex matrices the same per component,
 * with 2K for K (each component of C sums 2K products of components) and
 * the maxima over components.  Two correct FP32 kernels that sum in different
 * orders land near 1 at most; a kernel that drops or repeats one term of a
 * sum scores about 1/(K·eps) (thousands for FP32, 1e11 and more for FP64).
 * Passing: err ≤ 16 (DD_CHECK_THRESHOLD, src/base/dd.h), no element left
 * unwritten (C is poisoned with NaN before a beta-0 run) and no element
 * outside the m×n block touched. */
#ifndef DD_GEMM_CHECK_CUH
#define DD_GEMM_CHECK_CUH

#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dd.h"          /* DD_CHECK_THRESHOLD */
#include "dd_splitmix.h" /* dd_splitmix64 */
#include "kernel.h"

/* For the bench and test programs: a failing CUDA call ends the program. */
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ck_e_ = (call);                                                                \
        if (ck_e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                          \
                    cudaGetErrorString(ck_e_));                                                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

namespace ddcheck
{

/* The element types: double and float, and the complex cx<double> and
 * cx<float> ((re, im) pairs, kernel.h).  real: the type of one component;
 * W: components per element.  A complex matrix of rows × cols (ld) is
 * handled as the real one of rows × W·cols (W·ld) it is in memory. */
template <typename R> struct cx {
};
template <typename E> struct type_info;
template <> struct type_info<double> {
    typedef double real;
    static const int W = 1;
    static const char *name() { return "f64"; }
    static double eps() { return DBL_EPSILON; }
    static kernel_dgemm_fn fn(const kernel_desc *d) { return d->dgemm; }
};
template <> struct type_info<float> {
    typedef float real;
    static const int W = 1;
    static const char *name() { return "f32"; }
    static double eps() { return FLT_EPSILON; }
    static kernel_sgemm_fn fn(const kernel_desc *d) { return d->sgemm; }
};
template <> struct type_info<cx<double>> {
    typedef double real;
    static const int W = 2;
    static const char *name() { return "c128"; }
    static double eps() { return DBL_EPSILON; }
    static kernel_zgemm_fn fn(const kernel_desc *d) { return d->zgemm; }
};
template <> struct type_info<cx<float>> {
    typedef float real;
    static const int W = 2;
    static const char *name() { return "c64"; }
    static double eps() { return FLT_EPSILON; }
    static kernel_cgemm_fn fn(const kernel_desc *d) { return d->cgemm; }
};

/* Uniform in [-1, 1), exactly representable in T (24 or 53 random bits). */
template <typename T> __device__ __forceinline__ T uniform_pm1(uint64_t u);
template <> __device__ __forceinline__ double uniform_pm1<double>(uint64_t u)
{
    return (double)(u >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
template <> __device__ __forceinline__ float uniform_pm1<float>(uint64_t u)
{
    return (float)(u >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__global__ void fill_uniform_kernel(T *p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed)
{
    const int64_t total = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / cols, c = i % cols;
        p[r * ld + c] = uniform_pm1<T>(dd_splitmix64(seed * 0xD1B54A32D192ED03ull + (uint64_t)i));
    }
}

/* rows×cols of a matrix with leading dimension ld: fresh uniform [-1, 1). */
template <typename T>
void fill_uniform(T *p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, cudaStream_t s)
{
    if (rows <= 0 || cols <= 0)
        return;
    fill_uniform_kernel<T><<<1024, 256, 0, s>>>(p, rows, cols, ld, seed);
    CK(cudaGetLastError());
}

/* Every byte 0xFF: a NaN in float and double alike. */
template <typename T> void poison(T *p, size_t elems, cudaStream_t s)
{
    CK(cudaMemsetAsync(p, 0xFF, elems * sizeof(T), s));
}

struct reduce_out {
    unsigned long long maxbits; /* bits of a non-negative double: ordered like the values */
    unsigned long long nonfinite;
    unsigned long long touched; /* padding elements no longer poison */
};

__device__ __forceinline__ void warp_max_atomic(double v, unsigned long long *dst)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0 && v > 0)
        atomicMax(dst, (unsigned long long)__double_as_longlong(v));
}

/* max|X - Y| over rows×cols (Y may be NULL: max|X|), counting non-finite X. */
template <typename T>
__global__ void diff_kernel(const T *X, int64_t ldx, const T *Y, int64_t ldy, int64_t rows,
                            int64_t cols, reduce_out *out)
{
    const int64_t total = rows * cols;
    double m = 0;
    unsigned long long bad = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / cols, c = i % cols;
        double x = (double)X[r * ldx + c];
        if (!isfinite(x)) {
            ++bad;
            continue;
        }
        double d = Y ? fabs(x - (double)Y[r * ldy + c]) : fabs(x);
        m = fmax(m, d);
    }
    warp_max_atomic(m, &out->maxbits);
    if (bad)
        atomicAdd(&out->nonfinite, bad);
}

/* Elements in columns [c0, c1) of rows rows that are no longer all-ones bytes. */
template <typename T>
__global__ void touched_kernel(const T *X, int64_t ld, int64_t rows, int64_t c0, int64_t c1,
                               reduce_out *out)
{
    const int64_t w = c1 - c0, total = rows * w;
    unsigned long long n = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / w, c = c0 + i % w;
        const unsigned char *b = reinterpret_cast<const unsigned char *>(X + r * ld + c);
        for (int j = 0; j < (int)sizeof(T); ++j)
            if (b[j] != 0xFF) {
                ++n;
                break;
            }
    }
    if (n)
        atomicAdd(&out->touched, n);
}

struct reducer {
    reduce_out *dev = nullptr;
    void init() { CK(cudaMalloc(&dev, sizeof(reduce_out))); }
    void release()
    {
        if (dev)
            CK(cudaFree(dev));
        dev = nullptr;
    }
    reduce_out fetch(cudaStream_t s)
    {
        reduce_out h;
        CK(cudaStreamSynchronize(s));
        CK(cudaGetLastError());
        CK(cudaMemcpy(&h, dev, sizeof h, cudaMemcpyDeviceToHost));
        return h;
    }
    void clear(cudaStream_t s) { CK(cudaMemsetAsync(dev, 0, sizeof(reduce_out), s)); }
};

static inline double bits_to_double(unsigned long long b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* max|X| or max|X - Y| (with the non-finite count) of a rows×cols block. */
template <typename T>
reduce_out max_diff(reducer &r, const T *X, int64_t ldx, const T *Y, int64_t ldy, int64_t rows,
                    int64_t cols, cudaStream_t s)
{
    r.clear(s);
    if (rows > 0 && cols > 0) {
        diff_kernel<T><<<1024, 256, 0, s>>>(X, ldx, Y, ldy, rows, cols, r.dev);
        CK(cudaGetLastError());
    }
    return r.fetch(s);
}

template <typename T>
unsigned long long touched(reducer &r, const T *X, int64_t ld, int64_t rows, int64_t c0, int64_t c1,
                           cudaStream_t s)
{
    if (rows <= 0 || c1 <= c0)
        return 0;
    r.clear(s);
    touched_kernel<T><<<1024, 256, 0, s>>>(X, ld, rows, c0, c1, r.dev);
    CK(cudaGetLastError());
    return r.fetch(s).touched;
}

/* One multiply to be checked.  C and R are buffers of m rows × ldc; C0 (for
 * beta 1) holds the initial C with the same ld.  Sizes and leading
 * dimensions count elements; w: components per element (2: complex, T its
 * component type; maxA etc. are then the largest |component|). */
template <typename T> struct problem {
    int64_t m, n, k, lda, ldb, ldc;
    int beta;
    const T *A, *B;
    T *C, *R;
    const T *C0;
    double maxA, maxB, maxC0;
    int w = 1;
};

struct verdict {
    int launch_error; /* cudaError_t of the launch, 0 = fine */
    double err;       /* the measure above */
    double maxdiff;
    unsigned long long unwritten; /* non-finite elements of C */
    unsigned long long outside;   /* padding elements written */
    bool passed;
};

/* Poison C (whole m×ldc buffer), set its m×n block to C0 for beta 1. */
template <typename T> void prepare_c(const problem<T> &p, T *C, cudaStream_t s)
{
    const int64_t ldc = p.ldc * p.w, n = p.n * p.w;
    poison(C, (size_t)p.m * ldc, s);
    if (p.beta && p.m > 0 && p.n > 0)
        CK(cudaMemcpy2DAsync(C, ldc * sizeof(T), p.C0, ldc * sizeof(T), n * sizeof(T), p.m,
                             cudaMemcpyDeviceToDevice, s));
}

/* Run fn once on prepared C and compare with R (computed by the caller). */
template <typename T, typename Fn>
verdict run_and_check(Fn fn, const problem<T> &p, reducer &red, cudaStream_t s)
{
    verdict v = {};
    prepare_c(p, p.C, s);
    v.launch_error = fn(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, (void *)s);
    if (v.launch_error != 0) {
        (void)cudaGetLastError();
        return v;
    }
    const int64_t ldc = p.ldc * p.w, n = p.n * p.w;
    reduce_out d = max_diff<T>(red, p.C, ldc, p.R, ldc, p.m, n, s);
    v.maxdiff = bits_to_double(d.maxbits);
    v.unwritten = d.nonfinite;
    v.outside = touched<T>(red, p.C, ldc, p.m, n, ldc, s);
    /* a complex component is a sum of 2k products of components */
    double scale = type_info<T>::eps() *
                   ((double)p.w * p.k * p.maxA * p.maxB + (p.beta ? p.maxC0 : 0.0));
    v.err = scale > 0 ? v.maxdiff / scale : (v.maxdiff > 0 ? INFINITY : 0.0);
    v.passed = v.unwritten == 0 && v.outside == 0 && v.err <= DD_CHECK_THRESHOLD;
    return v;
}

} // namespace ddcheck

#endif
