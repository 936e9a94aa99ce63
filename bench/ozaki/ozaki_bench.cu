/* ozaki-bench — ozaki2 (the Ozaki scheme II on INT8 tensor cores) against
 * native cuBLAS DGEMM and cuBLAS's own FP64 emulation, with accuracy.
 *
 *   ozaki-bench [--types f64|f32] [--sizes LIST] [--kernels LIST] [--classes LIST]
 *               [--reps N] [--samples S] [--json FILE] [--test]
 *
 * Per size (N or MxNxK) and input class, data made on the GPU:
 *   uniform   [-1, 1)
 *   rowcol30  uniform times 2^e, e in [-30, 30] per row of A / column of B
 *   elem30    uniform times 2^e, e in [-30, 30] per element
 *   blocks    A large in the first half of k and 2^-40 in the second, B
 *             the other way round (the range check must fall back)
 *   halves    the same with 2^-10 (issue 34: within the range check's limit,
 *             where rows meet columns at their small values)
 *   lognormal magnitudes exp(4·randn), random signs (issue 34;
 *             FP32: exponents spread inside rows)
 *   phiF      (rand - 0.5)·exp(F·randn), F = 0.5, 1, 2, 3, 4 (GEMMul8's family)
 * cuBLAS DGEMM (native) runs first; then each kernel.  Accuracy on S
 * sampled entries against a double-double dot product computed on the GPU
 * (one warp per entry): cw = max|C - R|/Σ|a||b| (and its median over the
 * samples, cw50), rel = max|C - R|/|R|; and
 * over the whole matrix against native cuBLAS, the project's check
 * (gemm_check.cuh: err = max|C - Cref|/(eps·k·max|A|·max|B|) ≤ 16).
 * Timing: median of --reps runs after one warm-up (no L2 flush: the
 * matrices are far larger than L2 at the sizes that matter).  A kernel's
 * note (ozaki2: fallbacks to native) goes in its row.
 * --test: sizes 1024, 2048 and 1024x1024x16384, kernels ozaki2, ozaki2-16
 * and ozaki2-auto, all classes; exits 1 unless every row passes the check,
 * ozaki2's and ozaki2-16's sampled cw is within 2x native cuBLAS's (or
 * 2^-52) on uniform and rowcol30 and blocks fell back; ozaki2-auto (the
 * accuracy guard, issue 34): where it emulated, sampled cw max ≤ native
 * cuBLAS's (or 2^-52) and median ≤ native's on every class, where it fell
 * back within 2x native's (dgemm_dmma against cuBLAS), and at k ≥ 16384
 * (where up to 20 moduli beat native) uniform, rowcol30 and halves
 * emulated.
 * --slices-test: kernel.h's sliced operands (kernels/ozaki2_slices.cu):
 * for each kernel (default ozaki2, ozaki2-14, ozaki2-16) and shape
 * (default 1, 7x5x3, 33x17x65, 1000x777x4100, 4096x4096x8192), random A
 * and B with lda > k and ldb > n (NaN in the padding, which nothing may
 * read), both blobs made on a second stream, copied into a fresh buffer,
 * the originals overwritten and freed; kernel_slices_gemm at beta 0 and 1
 * must give C bit for bit the launcher's (padding of C included) with
 * missed 0.  A NaN in a row of A, a column of B out of range (half of it
 * times 2^-60) and a header that does not match the multiply must give
 * missed nonzero and beta·C (and the launcher, on the first two, fall
 * back).  Then make A+B, gemm from blobs and the
 * launcher timed at 16384x16384x8192 with ozaki2-14 (median of --reps,
 * events; a "mode":"slices" record with --json).  Exit 1 on any failure.
 * --types f32: ozaki2's FP32 launchers (kernels/ozaki2_s.cu) against
 * cuBLAS SGEMM: the data is made as above in FP64 and rounded to FP32, the
 * reference is the double-double dot product of those FP32 values, the
 * check is against cuBLAS SGEMM (err with FP32's epsilon); classes by
 * default uniform, rowcol30, halves, lognormal; kernels ozaki2.  With
 * --test: every row passes the check, and ozaki2's sampled cw and rel are
 * at most cuBLAS SGEMM's on uniform and rowcol30 with no fallback, and on
 * halves and lognormal too unless it fell back.
 * Exit 77 where no GPU is present. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench_opts.h"
#include "dd_json.h"
#include "gemm_check.cuh"
#include "kernel.h"
#include "ozaki2.h" /* OZ2_KCHUNK */

namespace
{

enum { UNIFORM, ROWCOL30, ELEM30, BLOCKS, HALVES, LOGNORMAL, PHI05, PHI1, PHI2, PHI3, PHI4, NCLASS };
const char *CLASS_NAME[] = {"uniform", "rowcol30", "elem30", "blocks", "halves", "lognormal",
                            "phi0.5",  "phi1",     "phi2",   "phi3",   "phi4"};
__constant__ double c_phi[NCLASS] = {0, 0, 0, 0, 0, 0, 0.5, 1, 2, 3, 4};

__device__ inline uint64_t mix(uint64_t a, uint64_t b)
{
    return dd_splitmix64(a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull));
}
__device__ inline int expo(uint64_t h)
{
    return (int)(h % 61) - 30;
}

/* A (is_b 0, rows×cols = m×k) or B (is_b 1, k×n) of a class, tight;
 * X32 not NULL: each value rounded to FP32, there and (widened) in X. */
__global__ void gen(double *X, int64_t rows, int64_t cols, int cls, int is_b, uint64_t seed,
                    float *X32)
{
    const int64_t total = rows * cols;
    for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total;
         q += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = q / cols, c = q % cols;
        double u = ddcheck::uniform_pm1<double>(mix(seed, (uint64_t)q));
        int e = 0;
        int64_t kidx = is_b ? r : c, kdim = is_b ? rows : cols;
        if (cls == ROWCOL30)
            e = expo(mix(seed ^ 0xABCDull, (uint64_t)(is_b ? c : r)));
        else if (cls == ELEM30)
            e = expo(mix(seed ^ 0x1234ull, (uint64_t)q));
        else if (cls == BLOCKS || cls == HALVES)
            e = (kidx < kdim / 2) == (is_b == 0) ? 0 : cls == BLOCKS ? -40 : -10;
        double x = ldexp(u, e);
        if (cls >= LOGNORMAL) { /* Box-Muller from two more hashes */
            uint64_t h1 = mix(seed ^ 0x5151ull, (uint64_t)q), h2 = mix(seed ^ 0x7373ull, (uint64_t)q);
            double u1 = ((double)(h1 >> 11) + 0.5) * 0x1p-53, u2 = (double)(h2 >> 11) * 0x1p-53;
            double g = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
            x = cls == LOGNORMAL ? copysign(exp(4.0 * g), u) : 0.5 * u * exp(c_phi[cls] * g);
        }
        if (X32)
            X32[q] = (float)x, x = (double)(float)x;
        X[q] = x;
    }
}

/* Double-double dot product of row i of A and column j of B, one warp per
 * sample; out[s] = {value, Σ|a||b|}. */
__global__ void dd_ref(const double *A, const double *B, int64_t n, int64_t k, const int64_t *ij,
                       int samples, double2 *out)
{
    int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (s >= samples)
        return;
    const int64_t i = ij[2 * s], j = ij[2 * s + 1];
    double hi = 0, lo = 0, ab = 0;
    for (int64_t l = lane; l < k; l += 32) {
        double a = A[i * k + l], b = B[l * n + j];
        double p = a * b, pe = fma(a, b, -p);
        double t = hi + p, bp = t - hi, te = (hi - (t - bp)) + (p - bp);
        hi = t, lo += te + pe, ab += fabs(p);
    }
    for (int o = 16; o > 0; o >>= 1) {
        double h2 = __shfl_xor_sync(0xffffffffu, hi, o), l2 = __shfl_xor_sync(0xffffffffu, lo, o);
        ab += __shfl_xor_sync(0xffffffffu, ab, o);
        double t = hi + h2, bp = t - hi, te = (hi - (t - bp)) + (h2 - bp);
        hi = t, lo += l2 + te;
    }
    if (lane == 0)
        out[s] = make_double2(hi + lo, ab);
}

struct dims {
    int64_t m, n, k;
};

struct opts {
    std::vector<dims> sizes;
    std::vector<std::string> kernels, classes;
    int reps = 5, samples = 4096;
    const char *json = nullptr;
    int test = 0;
    int f32 = 0; /* --types f32 */
    int slices = 0; /* --slices-test */
};

std::vector<std::string> split(const char *s)
{
    std::vector<std::string> v;
    std::string cur;
    for (const char *p = s;; ++p) {
        if (*p == ',' || !*p) {
            if (!cur.empty())
                v.push_back(cur);
            cur.clear();
            if (!*p)
                break;
        } else {
            cur += *p;
        }
    }
    return v;
}

struct acc {
    double cw = 0, rel = 0, cw50 = 0; /* cw50: the median of the samples' cw */
};

/* Sampled accuracy of C (tight, ld n) against the dd reference. */
template <typename T>
acc sampled(const T *C, int64_t n, const std::vector<int64_t> &ij, const std::vector<double2> &ref)
{
    acc a;
    std::vector<T> c(ref.size());
    std::vector<double> cws;
    for (size_t s = 0; s < ref.size(); ++s)
        CK(cudaMemcpy(&c[s], C + ij[2 * s] * n + ij[2 * s + 1], sizeof(T),
                      cudaMemcpyDeviceToHost));
    for (size_t s = 0; s < ref.size(); ++s) {
        double d = fabs((double)c[s] - ref[s].x);
        if (ref[s].y > 0)
            a.cw = std::max(a.cw, d / ref[s].y), cws.push_back(d / ref[s].y);
        if (ref[s].x != 0)
            a.rel = std::max(a.rel, d / fabs(ref[s].x));
    }
    if (!cws.empty()) {
        std::nth_element(cws.begin(), cws.begin() + cws.size() / 2, cws.end());
        a.cw50 = cws[cws.size() / 2];
    }
    return a;
}

template <typename T>
double time_ms(int (*fn)(int64_t, int64_t, int64_t, const T *, int64_t, const T *, int64_t, int,
                         T *, int64_t, void *),
               int64_t m, int64_t n, int64_t k, const T *A, const T *B, T *C, int reps,
               cudaStream_t s)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = -1; r < reps; ++r) {
        CK(cudaEventRecord(e0, s));
        int e = fn(m, n, k, A, k, B, n, 0, C, n, (void *)s);
        if (e) { /* a launch refused (emu_cublas where cuBLAS says not supported) */
            fprintf(stderr, "ozaki-bench: launch failed: %s\n", cudaGetErrorString((cudaError_t)e));
            (void)cudaGetLastError();
            CK(cudaStreamSynchronize(s));
            CK(cudaEventDestroy(e0));
            CK(cudaEventDestroy(e1));
            return -1;
        }
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            t.push_back(ms);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int g_fail = 0;

/* One size and class: the data, the sampled reference, native cuBLAS. */
struct case_data {
    int64_t m, n, k;
    int cls;
    double *A, *B, *C, *R;
    float *A32, *B32, *C32, *R32; /* --types f32: the data, C, cuBLAS SGEMM's C */
    bool f32;
    std::vector<int64_t> ij;
    std::vector<double2> ref;
    ddcheck::reducer red;
    double maxA, maxB, ms_native;
    acc native;
};

/* One kernel's row (cuBLAS's own when d is cuBLAS); --test failures
 * counted in g_fail. */
void kernel_row(const opts &o, case_data &cd, const char *name, const kernel_desc *d, FILE *js,
                cudaStream_t s)
{
    const int64_t m = cd.m, n = cd.n, k = cd.k;
    const bool native = !strcmp(d->name, "cublas");
    double ms = native    ? cd.ms_native
                : cd.f32 ? time_ms<float>(d->sgemm, m, n, k, cd.A32, cd.B32, cd.C32, o.reps, s)
                          : time_ms<double>(d->dgemm, m, n, k, cd.A, cd.B, cd.C, o.reps, s);
    if (ms < 0) {
        printf("%-12s: error (see above)\n", name);
        g_fail += o.test;
        return;
    }
    std::string nt = kernel_note();
    acc a = native   ? cd.native
            : cd.f32 ? sampled<float>(cd.C32, n, cd.ij, cd.ref)
                     : sampled<double>(cd.C, n, cd.ij, cd.ref);
    double err = 0;
    if (!native && cd.f32) {
        double md = ddcheck::bits_to_double(
            ddcheck::max_diff<float>(cd.red, cd.C32, n, cd.R32, n, m, n, s).maxbits);
        err = md / (FLT_EPSILON * (double)k * cd.maxA * cd.maxB);
    } else if (!native) {
        double md = ddcheck::bits_to_double(
            ddcheck::max_diff<double>(cd.red, cd.C, n, cd.R, n, m, n, s).maxbits);
        err = md / (DBL_EPSILON * (double)k * cd.maxA * cd.maxB);
    }
    const bool ok = err <= DD_CHECK_THRESHOLD, fell = nt.find("fell back") != std::string::npos;
    const bool guarded = !strcmp(d->name, "ozaki2-auto");
    if (o.test && !native && cd.f32) {
        /* at most cuBLAS SGEMM's error, or a fallback where the class needs it */
        const bool acc_ok = a.cw <= cd.native.cw && a.rel <= cd.native.rel;
        const bool handled = cd.cls == UNIFORM || cd.cls == ROWCOL30;
        if (!ok || (handled && (!acc_ok || fell)) || (!handled && !acc_ok && !fell)) {
            ++g_fail;
            printf("FAIL: ");
        }
    } else if (o.test && !native && !guarded) {
        bool acc_ok = a.cw <= 2 * std::max(cd.native.cw, 0x1p-53);
        if (!ok || ((cd.cls == UNIFORM || cd.cls == ROWCOL30) && (!acc_ok || fell)) ||
            (cd.cls == BLOCKS && !fell)) {
            ++g_fail;
            printf("FAIL: ");
        }
    }
    if (o.test && guarded) {
        /* the note: "ozaki2-auto (GPU d): E of M multiplies emulated, ..." */
        unsigned long long e = 0, tot = 0;
        size_t at = nt.find("ozaki2-auto (GPU ");
        bool parsed = at != std::string::npos &&
                      sscanf(nt.c_str() + at, "ozaki2-auto (GPU %*d): %llu of %llu", &e, &tot) == 2;
        bool emulated = parsed && e == tot && tot > 0, native_all = parsed && e == 0 && fell;
        bool acc_ok = emulated ? a.cw <= std::max(cd.native.cw, 0x1p-52) && a.cw50 <= cd.native.cw50
                               : a.cw <= 2 * std::max(cd.native.cw, 0x1p-52);
        bool must = k >= 16384 && (cd.cls == UNIFORM || cd.cls == ROWCOL30 || cd.cls == HALVES);
        if (!ok || !(emulated || native_all) || !acc_ok || (must && !emulated)) {
            ++g_fail;
            printf("FAIL: ");
        }
    }
    const double flops = 2.0 * m * n * k, tf = flops / (ms * 1e-3) / 1e12;
    const double cwr = a.cw / std::max(cd.native.cw, 1e-300);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    printf("%-20s %-9s %-12s %9.3f %8.2f %6.2f %9.2e %7.2f %9.2e %9.2e %8.2f %5s  %s\n", shape,
           CLASS_NAME[cd.cls], name, ms, tf, cd.ms_native / ms, a.cw, cwr, a.cw50, a.rel, err,
           ok ? "ok" : "FAIL", nt.c_str());
    fflush(stdout);
    if (js) {
        fputs("{\"bench\":\"ozaki\"", js);
        dd_json_kv_int(js, "m", m);
        dd_json_kv_int(js, "n", n);
        dd_json_kv_int(js, "k", k);
        dd_json_kv_str(js, "class", CLASS_NAME[cd.cls]);
        dd_json_kv_str(js, "kernel", name);
        dd_json_kv_str(js, "type", cd.f32 ? "f32" : "f64");
        dd_json_kv_num_g(js, "ms", ms, 6);
        dd_json_kv_num_g(js, "tflops", tf, 6);
        dd_json_kv_num_g(js, "speedup_vs_native", cd.ms_native / ms, 4);
        dd_json_kv_num_g(js, "cw_err", a.cw, 4);
        dd_json_kv_num_g(js, "cw_err_native", cd.native.cw, 4);
        dd_json_kv_num_g(js, "cw_median", a.cw50, 4);
        dd_json_kv_num_g(js, "cw_median_native", cd.native.cw50, 4);
        dd_json_kv_str(js, "note", nt.c_str());
        dd_json_kv_num_g(js, "rel_err", a.rel, 4);
        dd_json_kv_num_g(js, "rel_err_native", cd.native.rel, 4);
        dd_json_kv_num_g(js, "check_err", err, 4);
        dd_json_kv_str(js, "check", ok ? "ok" : "FAIL");
        fprintf(js, ",\"fallback\":%s", fell ? "true" : "false");
        dd_json_kv_int(js, "samples", o.samples);
        fputs("}\n", js);
        fflush(js);
    }
}

/* The data of a class and its dd reference on o.samples sampled entries. */
void prepare(const opts &o, case_data &cd, cudaStream_t s)
{
    const int64_t m = cd.m, n = cd.n, k = cd.k;
    CK(cudaMalloc(&cd.A, sizeof(double) * m * k));
    CK(cudaMalloc(&cd.B, sizeof(double) * k * n));
    CK(cudaMalloc(&cd.C, sizeof(double) * m * n));
    CK(cudaMalloc(&cd.R, sizeof(double) * m * n));
    cd.A32 = cd.B32 = cd.C32 = cd.R32 = nullptr;
    if (cd.f32) {
        CK(cudaMalloc(&cd.A32, sizeof(float) * m * k));
        CK(cudaMalloc(&cd.B32, sizeof(float) * k * n));
        CK(cudaMalloc(&cd.C32, sizeof(float) * m * n));
        CK(cudaMalloc(&cd.R32, sizeof(float) * m * n));
    }
    uint64_t seed = 1000 + 17 * (uint64_t)cd.cls + (uint64_t)m;
    gen<<<1024, 256, 0, s>>>(cd.A, m, k, cd.cls, 0, seed, cd.A32);
    gen<<<1024, 256, 0, s>>>(cd.B, k, n, cd.cls, 1, seed + 1, cd.B32);
    CK(cudaGetLastError());
    cd.ij.resize(2 * (size_t)o.samples);
    uint64_t h = seed;
    for (int q = 0; q < o.samples; ++q) {
        h = dd_splitmix64(h), cd.ij[2 * q] = (int64_t)(h % (uint64_t)m);
        h = dd_splitmix64(h), cd.ij[2 * q + 1] = (int64_t)(h % (uint64_t)n);
    }
    int64_t *dij;
    double2 *dref;
    CK(cudaMalloc(&dij, sizeof(int64_t) * cd.ij.size()));
    CK(cudaMalloc(&dref, sizeof(double2) * o.samples));
    CK(cudaMemcpy(dij, cd.ij.data(), sizeof(int64_t) * cd.ij.size(), cudaMemcpyHostToDevice));
    dd_ref<<<(o.samples * 32 + 255) / 256, 256, 0, s>>>(cd.A, cd.B, n, k, dij, o.samples, dref);
    CK(cudaGetLastError());
    /* s does not synchronize with the legacy default stream that cudaMemcpy
     * uses: without this the reference was read before it was computed */
    CK(cudaStreamSynchronize(s));
    cd.ref.resize(o.samples);
    CK(cudaMemcpy(cd.ref.data(), dref, sizeof(double2) * o.samples, cudaMemcpyDeviceToHost));
    CK(cudaFree(dij));
    CK(cudaFree(dref));
    size_t live = 0; /* a reference of zeros would make every accuracy figure 0 */
    for (const double2 &r : cd.ref)
        live += r.y > 0;
    if (live < cd.ref.size() / 2) {
        fprintf(stderr, "ozaki-bench: only %zu of %zu sampled references are nonzero\n", live,
                cd.ref.size());
        exit(1);
    }
    cd.red.init();
    cd.maxA = ddcheck::bits_to_double(
        ddcheck::max_diff<double>(cd.red, cd.A, k, (const double *)nullptr, 0, m, k, s).maxbits);
    cd.maxB = ddcheck::bits_to_double(
        ddcheck::max_diff<double>(cd.red, cd.B, n, (const double *)nullptr, 0, k, n, s).maxbits);
}

void run_case(const opts &o, int64_t m, int64_t n, int64_t k, int cls, FILE *js, cudaStream_t s)
{
    case_data cd;
    cd.m = m, cd.n = n, cd.k = k, cd.cls = cls, cd.f32 = o.f32 != 0;
    prepare(o, cd, s);
    const kernel_desc *cb = kernel_find("cublas");
    if (cd.f32) {
        cd.ms_native = time_ms<float>(cb->sgemm, m, n, k, cd.A32, cd.B32, cd.R32, o.reps, s);
        cd.native = sampled<float>(cd.R32, n, cd.ij, cd.ref);
    } else {
        cd.ms_native = time_ms<double>(cb->dgemm, m, n, k, cd.A, cd.B, cd.R, o.reps, s);
        cd.native = sampled<double>(cd.R, n, cd.ij, cd.ref);
    }
    kernel_row(o, cd, "cublas", cb, js, s);
    for (const std::string &name : o.kernels) {
        const kernel_desc *d = kernel_find(name.c_str());
        if (!d || !(cd.f32 ? (void *)d->sgemm : (void *)d->dgemm))
            printf("%-12s: unknown kernel or no %s\n", name.c_str(), cd.f32 ? "FP32" : "FP64");
        else
            kernel_row(o, cd, name.c_str(), d, js, s);
    }
    cd.red.release();
    CK(cudaFree(cd.A));
    CK(cudaFree(cd.B));
    CK(cudaFree(cd.C));
    CK(cudaFree(cd.R));
    CK(cudaFree(cd.A32));
    CK(cudaFree(cd.B32));
    CK(cudaFree(cd.C32));
    CK(cudaFree(cd.R32));
}

/* ---- --slices-test: kernel.h's sliced operands (kernels/ozaki2_slices.cu) ---- */

/* rows×cols uniform [-1, 1) at leading dimension ld, the ld - cols columns
 * past the matrix set to pad (NaN: a slicer that read past a row or column
 * would flag the multiply). */
__global__ void fill_strided(double *X, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             double pad)
{
    for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < rows * ld;
         q += (int64_t)gridDim.x * blockDim.x)
        X[q] = q % ld < cols ? ddcheck::uniform_pm1<double>(mix(seed, (uint64_t)q)) : pad;
}

/* Column j of B (k×n, ldb) out of range: its second half times 2^-60. */
__global__ void spread_column(double *B, int64_t k, int64_t ldb, int64_t j)
{
    for (int64_t l = k / 2 + threadIdx.x; l < k; l += blockDim.x)
        B[l * ldb + j] = ldexp(B[l * ldb + j], -60);
}

/* What a case does to the operands: nothing (C bit for bit the launcher's),
 * a NaN in a row of A, a column of B out of range (both: the launcher must
 * fall back), or blobs of m rows given to a multiply of m - 4 (a header
 * that does not match); the last three must report missed and leave
 * beta·C. */
enum { SPOIL_NONE, SPOIL_NAN_A, SPOIL_RANGE_B, SPOIL_MISMATCH };
const char *SPOIL_NAME[] = {"random", "nan-in-A", "range-B", "mismatch"};

int g_slices_fail = 0;

/* One kernel, shape and spoil, beta 0 and 1: both blobs made on their own
 * stream (SUMMA's communication stream), copied into one fresh buffer (B's
 * copy 16 bytes off a 256-byte boundary), the originals overwritten and
 * freed, then kernel_slices_gemm and the kernel's launcher on the same data. */
void slices_case(const char *kname, int64_t m, int64_t n, int64_t k, int spoil, cudaStream_t s,
                 cudaStream_t sc)
{
    const kernel_desc *kd = kernel_find(kname);
    const int nm = kd ? kernel_slices_moduli(kd, k) : 0;
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    if (nm <= 0) {
        printf("FAIL: slices %-10s %-18s: kernel_slices_moduli gives %d\n", kname, shape, nm);
        ++g_slices_fail;
        return;
    }
    const int64_t lda = k + 3, ldb = n + 5, ldc = n + 1;
    const int64_t mm = spoil == SPOIL_MISMATCH ? m - 4 : m; /* the rows multiplied */
    double *A, *B, *C0, *Cs, *Cl;
    unsigned int *dmissed;
    CK(cudaMalloc(&A, sizeof(double) * m * lda));
    CK(cudaMalloc(&B, sizeof(double) * k * ldb));
    CK(cudaMalloc(&C0, sizeof(double) * m * ldc));
    CK(cudaMalloc(&Cs, sizeof(double) * m * ldc));
    CK(cudaMalloc(&Cl, sizeof(double) * m * ldc));
    CK(cudaMalloc(&dmissed, sizeof(unsigned int)));
    const uint64_t seed = 7000 + (uint64_t)(m * 31 + n * 7 + k) + 101 * (uint64_t)spoil;
    fill_strided<<<1024, 256, 0, s>>>(A, m, k, lda, seed, NAN);
    fill_strided<<<1024, 256, 0, s>>>(B, k, n, ldb, seed + 1, NAN);
    fill_strided<<<1024, 256, 0, s>>>(C0, m, ldc, ldc, seed + 2, 0.0);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    if (spoil == SPOIL_NAN_A) {
        const double nan = NAN;
        CK(cudaMemcpy(A + (m > 5 ? 5 : m - 1) * lda + k / 2, &nan, sizeof nan,
                      cudaMemcpyHostToDevice));
    } else if (spoil == SPOIL_RANGE_B) {
        spread_column<<<1, 256, 0, s>>>(B, k, ldb, n > 3 ? 3 : n - 1);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(s));
    }
    const size_t ba = kernel_slices_bytes(nm, m, k), bb = kernel_slices_bytes(nm, n, k);
    const char *bad = nullptr;
    void *oa = nullptr, *ob = nullptr;
    char *copy = nullptr;
    if (!ba || !bb || ba % 256 || bb % 256)
        bad = "kernel_slices_bytes";
    if (!bad) {
        CK(cudaMalloc(&oa, ba));
        CK(cudaMalloc(&ob, bb));
        if (kernel_slices_make(nm, 0, m, k, A, lda, oa, (void *)sc) ||
            kernel_slices_make(nm, 1, n, k, B, ldb, ob, (void *)sc))
            bad = "kernel_slices_make refused";
        CK(cudaStreamSynchronize(sc));
        CK(cudaMalloc(&copy, 256 + ba + 16 + bb));
        CK(cudaMemcpy(copy + 256, oa, ba, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(copy + 256 + ba + 16, ob, bb, cudaMemcpyDeviceToDevice));
        CK(cudaMemset(oa, 0xff, ba));
        CK(cudaMemset(ob, 0xff, bb));
        /* a device-to-device cudaMemcpy may return before it is done */
        CK(cudaDeviceSynchronize());
        CK(cudaFree(oa));
        CK(cudaFree(ob));
    }
    const void *pa = copy ? copy + 256 : nullptr, *pb = copy ? copy + 256 + ba + 16 : nullptr;
    std::vector<double> hs((size_t)(m * ldc)), hl((size_t)(m * ldc)), h0((size_t)(m * ldc));
    CK(cudaMemcpy(h0.data(), C0, sizeof(double) * m * ldc, cudaMemcpyDeviceToHost));
    for (int beta = 0; beta <= 1 && !bad; ++beta) {
        CK(cudaMemcpyAsync(Cs, C0, sizeof(double) * m * ldc, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(Cl, C0, sizeof(double) * m * ldc, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemsetAsync(dmissed, 0xff, sizeof(unsigned int), s));
        if (kernel_slices_gemm(nm, mm, n, k, pa, pb, beta, Cs, ldc, dmissed, (void *)s)) {
            bad = "kernel_slices_gemm refused";
            break;
        }
        if (spoil != SPOIL_MISMATCH &&
            kd->dgemm(m, n, k, A, lda, B, ldb, beta, Cl, ldc, (void *)s)) {
            bad = "the launcher refused";
            break;
        }
        unsigned int missed = 0;
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(&missed, dmissed, sizeof missed, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hs.data(), Cs, sizeof(double) * m * ldc, cudaMemcpyDeviceToHost));
        std::string nt = kernel_note(); /* synchronises; clears the fallbacks counted */
        bool ok;
        if (spoil == SPOIL_NONE) {
            CK(cudaMemcpy(hl.data(), Cl, sizeof(double) * m * ldc, cudaMemcpyDeviceToHost));
            ok = missed == 0 && !memcmp(hs.data(), hl.data(), sizeof(double) * hs.size());
        } else { /* beta·C in the rows multiplied, everything else as it was */
            hl = h0;
            for (int64_t r = 0; r < mm && !beta; ++r)
                for (int64_t c = 0; c < n; ++c)
                    hl[(size_t)(r * ldc + c)] = 0.0;
            ok = missed != 0 && !memcmp(hs.data(), hl.data(), sizeof(double) * hs.size());
            /* the launcher's own range check agrees: it fell back (its note) */
            if (spoil != SPOIL_MISMATCH)
                ok = ok && nt.find("fell back") != std::string::npos;
        }
        int64_t diffs = 0;
        for (size_t q = 0; q < hs.size(); ++q)
            diffs += memcmp(&hs[q], &hl[q], sizeof(double)) != 0;
        printf("%sslices %-10s %-18s %-9s beta %d moduli %2d missed %-2u %s (%lld entries "
               "differ)%s%s\n",
               ok ? "" : "FAIL: ", kname, shape, SPOIL_NAME[spoil], beta, nm, missed,
               ok ? "ok" : "WRONG", (long long)diffs, nt.empty() ? "" : "  ", nt.c_str());
        g_slices_fail += !ok;
    }
    if (bad) {
        printf("FAIL: slices %-10s %-18s %-9s: %s\n", kname, shape, SPOIL_NAME[spoil], bad);
        (void)cudaGetLastError();
        ++g_slices_fail;
    }
    fflush(stdout);
    CK(cudaFree(copy));
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C0));
    CK(cudaFree(Cs));
    CK(cudaFree(Cl));
    CK(cudaFree(dmissed));
}

/* The median of reps timed runs of what() on stream t, after one warm-up. */
template <typename F> double median_ms(int reps, cudaStream_t t, F what)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> v;
    for (int r = -1; r < reps; ++r) {
        CK(cudaEventRecord(e0, t));
        if (what()) {
            fprintf(stderr, "ozaki-bench: a timed call was refused\n");
            exit(1);
        }
        CK(cudaEventRecord(e1, t));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            v.push_back(ms);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* The costs SUMMA's slice broadcast trades: slicing both panels
 * (kernel_slices_make of A and B), the multiply from blobs, and the
 * launcher (which slices and multiplies). */
void slices_timing(const opts &o, const char *kname, int64_t m, int64_t n, int64_t k, FILE *js,
                   cudaStream_t s, cudaStream_t sc)
{
    const kernel_desc *kd = kernel_find(kname);
    const int nm = kd ? kernel_slices_moduli(kd, k) : 0;
    if (nm <= 0) {
        printf("FAIL: slices timing: %s offers no slicing at k = %lld\n", kname, (long long)k);
        ++g_slices_fail;
        return;
    }
    double *A, *B, *C;
    void *ba, *bb;
    unsigned int *dmissed;
    CK(cudaMalloc(&A, sizeof(double) * m * k));
    CK(cudaMalloc(&B, sizeof(double) * k * n));
    CK(cudaMalloc(&C, sizeof(double) * m * n));
    CK(cudaMalloc(&ba, kernel_slices_bytes(nm, m, k)));
    CK(cudaMalloc(&bb, kernel_slices_bytes(nm, n, k)));
    CK(cudaMalloc(&dmissed, sizeof(unsigned int)));
    fill_strided<<<1024, 256, 0, s>>>(A, m, k, k, 99, 0.0);
    fill_strided<<<1024, 256, 0, s>>>(B, k, n, n, 100, 0.0);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    const double ms_make = median_ms(o.reps, sc, [&] {
        return kernel_slices_make(nm, 0, m, k, A, k, ba, (void *)sc) ||
               kernel_slices_make(nm, 1, n, k, B, n, bb, (void *)sc);
    });
    const double ms_gemm = median_ms(o.reps, s, [&] {
        return kernel_slices_gemm(nm, m, n, k, ba, bb, 0, C, n, dmissed, (void *)s);
    });
    unsigned int missed = 0;
    CK(cudaMemcpy(&missed, dmissed, sizeof missed, cudaMemcpyDeviceToHost));
    const double ms_launch =
        median_ms(o.reps, s, [&] { return kd->dgemm(m, n, k, A, k, B, n, 0, C, n, (void *)s); });
    std::string nt = kernel_note();
    const double tf = 2.0 * m * n * k / 1e9;
    printf("%sslices timing %lldx%lldx%lld %s (%d moduli, median of %d): make A+B %.3f ms, "
           "gemm from blobs %.3f ms (%.1f TFLOP/s), sum %.3f ms; launcher %.3f ms (%.1f "
           "TFLOP/s)%s%s\n",
           missed ? "FAIL: " : "", (long long)m, (long long)n, (long long)k, kname, nm, o.reps,
           ms_make, ms_gemm, tf / ms_gemm, ms_make + ms_gemm, ms_launch, tf / ms_launch,
           nt.empty() ? "" : "  ", nt.c_str());
    g_slices_fail += missed != 0;
    if (js) {
        fputs("{\"bench\":\"ozaki\",\"mode\":\"slices\"", js);
        dd_json_kv_int(js, "m", m);
        dd_json_kv_int(js, "n", n);
        dd_json_kv_int(js, "k", k);
        dd_json_kv_str(js, "kernel", kname);
        dd_json_kv_int(js, "moduli", nm);
        dd_json_kv_int(js, "reps", o.reps);
        dd_json_kv_num_g(js, "ms_make_ab", ms_make, 6);
        dd_json_kv_num_g(js, "ms_gemm_slices", ms_gemm, 6);
        dd_json_kv_num_g(js, "ms_launcher", ms_launch, 6);
        dd_json_kv_str(js, "note", nt.c_str());
        fputs("}\n", js);
        fflush(js);
    }
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(ba));
    CK(cudaFree(bb));
    CK(cudaFree(dmissed));
}

/* --slices-test: every kernel of o.kernels (default ozaki2, ozaki2-14,
 * ozaki2-16) on every shape of o.sizes (default below), random operands bit
 * for bit against the launcher; on the shapes with m ≥ 8 and k ≥ 2 a NaN in
 * a row of A, a column of B out of range and (the smallest such shape) a
 * mismatched header, each of which must give missed and beta·C; then the
 * timing.  0 when every case passes, else 1. */
int slices_test(const opts &o, FILE *js)
{
    std::vector<dims> sizes = o.sizes;
    if (sizes.empty())
        sizes = {{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {1000, 777, 4100}, {4096, 4096, 8192}};
    std::vector<std::string> kernels = o.kernels;
    if (kernels.empty())
        kernels = {"ozaki2", "ozaki2-14", "ozaki2-16"};
    cudaStream_t s, sc;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    for (const std::string &kn : kernels) {
        bool mismatch_done = false;
        for (const dims &d : sizes) {
            if (d.k > OZ2_KCHUNK) { /* a blob holds one INT8 chunk */
                printf("slices %-10s %lldx%lldx%lld: skipped (k above %d)\n", kn.c_str(),
                       (long long)d.m, (long long)d.n, (long long)d.k, OZ2_KCHUNK);
                continue;
            }
            slices_case(kn.c_str(), d.m, d.n, d.k, SPOIL_NONE, s, sc);
            if (d.m >= 8 && d.k >= 2 && d.m * d.k <= (int64_t)1 << 23) {
                slices_case(kn.c_str(), d.m, d.n, d.k, SPOIL_NAN_A, s, sc);
                slices_case(kn.c_str(), d.m, d.n, d.k, SPOIL_RANGE_B, s, sc);
                if (!mismatch_done)
                    slices_case(kn.c_str(), d.m, d.n, d.k, SPOIL_MISMATCH, s, sc);
                mismatch_done = true;
            }
        }
    }
    slices_timing(o, "ozaki2-14", 16384, 16384, 8192, js, s, sc);
    CK(cudaStreamDestroy(s));
    CK(cudaStreamDestroy(sc));
    kernel_shutdown();
    printf("ozaki-bench --slices-test: %s\n", g_slices_fail ? "FAILED" : "all passed");
    return g_slices_fail ? 1 : 0;
}

static const char USAGE[] =
    "usage: ozaki-bench [--types f64|f32] [--sizes LIST] [--kernels LIST] [--classes LIST]\n"
    "                   [--reps N] [--samples S] [--json FILE] [--test] [--slices-test]\n"
    "  --types    f64 (default) or f32 (the kernels' FP32 launchers against cuBLAS SGEMM)\n"
    "  --sizes    comma list of N or MxNxK (default 4096; --test: 1024,2048,1024x1024x16384)\n"
    "  --kernels  kernels beside native cuBLAS (default ozaki2,emu_cublas;\n"
    "             --test: ozaki2,ozaki2-16,ozaki2-auto; f32: ozaki2)\n"
    "  --classes  uniform, rowcol30, elem30, blocks, halves, lognormal, phi0.5, phi1,\n"
    "             phi2, phi3, phi4 (default: all; f32: uniform, rowcol30, halves, lognormal)\n"
    "  --test     exit 1 unless every row passes (see the head of bench/ozaki/ozaki_bench.cu)\n"
    "  --slices-test  kernel.h's sliced operands bit for bit against the launchers, their\n"
    "             fallback cases, and their timing (sizes: 1,7x5x3,33x17x65,1000x777x4100,\n"
    "             4096x4096x8192; kernels: ozaki2,ozaki2-14,ozaki2-16; FP64 only)\n";

const char *opt_sizes(const char *v, void *dest)
{
    int64_t d[256][3];
    int n = 0;
    if (bench_shapes(v, d, 256, &n))
        return "N or MxNxK (each 1..2147483647), comma separated";
    std::vector<dims> &out = ((opts *)dest)->sizes;
    out.clear();
    for (int i = 0; i < n; ++i)
        out.push_back({d[i][0], d[i][1], d[i][2]});
    return nullptr;
}

const char *opt_kernels(const char *v, void *dest)
{
    ((opts *)dest)->kernels = split(v);
    return ((opts *)dest)->kernels.empty() ? "kernel names, comma separated" : nullptr;
}

const char *opt_classes(const char *v, void *dest)
{
    std::vector<std::string> c = split(v);
    for (const std::string &x : c)
        if (std::find(CLASS_NAME, CLASS_NAME + NCLASS, x) == CLASS_NAME + NCLASS)
            return "class names (see --help), comma separated";
    ((opts *)dest)->classes = c;
    return c.empty() ? "class names (see --help), comma separated" : nullptr;
}

const char *opt_types(const char *v, void *dest)
{
    if (strcmp(v, "f64") && strcmp(v, "f32"))
        return "f64 or f32";
    ((opts *)dest)->f32 = !strcmp(v, "f32");
    return nullptr;
}

/* argv into o (bench_opts.h's rules) and the defaults; -1 to run, else the
 * exit status. */
int parse(int argc, char **argv, opts *o)
{
    const bench_opt table[] = {
        {"--types", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_types},
        {"--sizes", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_sizes},
        {"--kernels", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_kernels},
        {"--classes", BENCH_CALL, o, 0, 0, 0, 0, nullptr, opt_classes},
        {"--reps", BENCH_INT, &o->reps, 1, 100000, 0, 0, nullptr, nullptr},
        {"--samples", BENCH_INT, &o->samples, 1, 1 << 24, 0, 0, nullptr, nullptr},
        {"--json", BENCH_STRING, &o->json, 0, 0, 0, 0, nullptr, nullptr},
        {"--test", BENCH_FLAG, &o->test, 0, 0, 0, 0, nullptr, nullptr},
        {"--slices-test", BENCH_FLAG, &o->slices, 0, 0, 0, 0, nullptr, nullptr},
        {nullptr, BENCH_FLAG, nullptr, 0, 0, 0, 0, nullptr, nullptr}};
    int rc = bench_parse("ozaki-bench", USAGE, table, argc, argv, stderr);
    if (rc != BENCH_GO)
        return rc;
    if (o->slices) { /* its own defaults (slices_test) */
        if (o->f32 || o->test) {
            fprintf(stderr, "ozaki-bench: --slices-test is FP64 only and runs without --test\n");
            return 2;
        }
        return BENCH_GO;
    }
    if (o->test) {
        if (o->sizes.empty())
            o->sizes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {1024, 1024, 16384}};
        if (o->kernels.empty())
            o->kernels = o->f32 ? std::vector<std::string>{"ozaki2"}
                                : std::vector<std::string>{"ozaki2", "ozaki2-16", "ozaki2-auto"};
    }
    if (o->sizes.empty())
        o->sizes = {{4096, 4096, 4096}};
    if (o->kernels.empty())
        o->kernels = o->f32 ? std::vector<std::string>{"ozaki2"}
                            : std::vector<std::string>{"ozaki2", "emu_cublas"};
    if (o->classes.empty())
        o->classes = o->f32 ? std::vector<std::string>{"uniform", "rowcol30", "halves", "lognormal"}
                            : std::vector<std::string>(CLASS_NAME, CLASS_NAME + NCLASS);
    return BENCH_GO;
}

} // namespace

int main(int argc, char **argv)
{
    opts o;
    if (int e = parse(argc, argv, &o); e != BENCH_GO)
        return e;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("ozaki-bench: no CUDA device present (skipped)\n");
        return 77;
    }
    FILE *js = o.json ? fopen(o.json, "a") : nullptr;
    if (o.json && !js) {
        fprintf(stderr, "ozaki-bench: cannot open %s\n", o.json);
        return 2;
    }
    if (o.slices) {
        const int rc = slices_test(o, js);
        if (js)
            fclose(js);
        return rc;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# ozaki-bench: %s, cuBLAS %s, %s; accuracy on %d sampled entries vs double-double "
           "(cw = max|C-R|/sum|a||b|, rel = max|C-R|/|R|); check = err vs native cuBLAS "
           "(<= %g)\n",
           prop.name, kernel_cublas_version(), o.f32 ? "FP32 (native: cuBLAS SGEMM)" : "FP64",
           o.samples, DD_CHECK_THRESHOLD);
    printf("%-20s %-9s %-12s %9s %8s %6s %9s %7s %9s %9s %8s %5s  %s\n", "MxNxK", "class",
           "kernel", "ms", "TFLOP/s", "xnativ", "cw", "cw/nat", "cw50", "rel", "check", "",
           "note");
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (const dims &sz : o.sizes) {
        for (const std::string &c : o.classes) {
            int cls = (int)(std::find(CLASS_NAME, CLASS_NAME + NCLASS, c) - CLASS_NAME);
            run_case(o, sz.m, sz.n, sz.k, cls, js, s);
        }
    }
    CK(cudaStreamDestroy(s));
    if (js)
        fclose(js);
    kernel_shutdown();
    if (o.test)
        printf("ozaki-bench --test: %s\n", g_fail ? "FAILED" : "all passed");
    return g_fail ? 1 : 0;
}
