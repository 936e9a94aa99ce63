/* gemm-bench — check every kernel against cuBLAS, then time it.
 *
 *   gemm-bench [--sizes LIST] [--kernels LIST] [--types f64,f32,c128,c64,i8] [--i8-batch B]
 *              [--reps N] [--warmup N] [--beta 0|1|auto] [--slow-limit N]
 *              [--sustain SECONDS] [--interleave] [--json FILE] [--quick] [--seed S]
 *              [--device D]
 *
 * For each type and size (f64, f32, the complex c128 and c64 against cuBLAS
 * ZGEMM / CGEMM, whose rows count 8 flops a complex multiply-add; i8 is
 * i8_bench.cu's): fresh uniform [-1,1) data made on the device (each
 * component of a complex value; new seed per kernel), cuBLAS computes the
 * reference, C is poisoned with
 * NaN (or set to a random C0 for beta 1), the kernel runs once and is
 * compared (gemm_check.cuh: err ≤ 16, every element written, nothing
 * outside the block touched).  A kernel that fails is reported FAILED and
 * not timed; the exit status is then 1.  Timing: warm-up runs, then reps
 * runs each between two CUDA events, with the L2 flushed (a 256 MiB
 * memset) before each; the median is reported, and the % of cuBLAS
 * measured the same way in the same run.  Slow kernels (the first rungs of
 * the ladder) are skipped above --slow-limit (any of M, N, K).
 * Exit 77 when no GPU is present.
 *
 * Telemetry: every row carries the GPU's mean SM clock, mean power, the
 * energy per run and the clock event reasons seen while it was timed
 * (NVML, dd_telemetry.h; "-" where NVML is absent).  Burst rows are short
 * (a cool GPU runs at its highest clock); the sustained mode measures
 * what a GPU holds at its power cap.
 *
 * Sustained mode (--sustain S): after the burst rows of a size, cuBLAS and
 * then each kernel that passed run back to back (no flush) for S seconds
 * each; the row gives the median over the runs of the last half, and the
 * clock, power and energy sampled over that half, so all are compared in
 * the steady thermal state of a GPU that has been busy for S/2 seconds.
 *
 * Sizes: N (square) or MxNxK.  Default: 1024, 2048, 4096, 8192, 16384 and
 * the SUMMA panel shapes 8192x8192x1024, 16384x16384x1024.  Beta "auto" is
 * 1 for panel shapes (K smaller than M and N: SUMMA accumulates) and 0
 * otherwise.
 *
 * The parts: gemm_opts.cu (the options), gemm_modes.cuh (the timing modes:
 * burst, interleaved, sustained), gemm_output.cu (the table and the JSON
 * records), i8_bench.cu (--types i8); this file: the FP64, FP32 and
 * complex rows of a size (check, then time) and main. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dd.h"
#include "gemm_bench.h"
#include "gemm_check.cuh"
#include "gemm_modes.cuh"
#include "kernel.h"

namespace gb
{

dd_tele_sampler *g_tele;

/* All kernels of one type and size (E: gemm_check.cuh's element types,
 * complex ones included).  Returns the number of failures. */
template <typename E>
int bench_one(const options &o, const env_info &env, const std::vector<const kernel_desc *> &list,
              const kernel_desc *cublas, shape sh, void *flush, size_t flush_bytes, cudaStream_t s,
              uint64_t *seed)
{
    typedef ddcheck::type_info<E> TI;
    typedef typename TI::real T;
    const int64_t W = TI::W; /* components per element: sizes below count components */
    const int beta = o.beta >= 0 ? o.beta : (sh.k < sh.m && sh.k < sh.n ? 1 : 0);
    const bool has_any = std::any_of(list.begin(), list.end(),
                                     [](const kernel_desc *d) { return TI::fn(d) != nullptr; });
    if (!has_any)
        return 0;

    ddcheck::problem<T> p = {};
    p.m = sh.m, p.n = sh.n, p.k = sh.k, p.lda = sh.k, p.ldb = sh.n, p.ldc = sh.n, p.beta = beta;
    p.w = (int)W;
    T *A, *B, *C, *R, *C0 = nullptr;
    size_t mn = (size_t)sh.m * sh.n * W;
    cudaError_t ae = cudaMalloc(&A, sizeof(T) * sh.m * sh.k * W);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&B, sizeof(T) * sh.k * sh.n * W);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&C, sizeof(T) * mn);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&R, sizeof(T) * mn);
    if (ae == cudaSuccess && beta)
        ae = cudaMalloc(&C0, sizeof(T) * mn);
    if (ae != cudaSuccess) {
        fprintf(stderr, "gemm-bench: %s %lldx%lldx%lld: %s; size skipped\n", TI::name(),
                (long long)sh.m, (long long)sh.n, (long long)sh.k, cudaGetErrorString(ae));
        (void)cudaGetLastError();
        return 1;
    }
    p.A = A, p.B = B, p.C = C, p.R = R, p.C0 = C0;
    ddcheck::reducer red;
    red.init();

    /* Fresh data, and cuBLAS's answer for it. */
    auto fresh = [&](void) {
        ++*seed;
        const int64_t kw = sh.k * W, nw = sh.n * W; /* row widths in components */
        ddcheck::fill_uniform<T>(A, sh.m, kw, kw, *seed * 3 + 0, s);
        ddcheck::fill_uniform<T>(B, sh.k, nw, nw, *seed * 3 + 1, s);
        if (beta)
            ddcheck::fill_uniform<T>(C0, sh.m, nw, nw, *seed * 3 + 2, s);
        p.maxA = ddcheck::bits_to_double(
            ddcheck::max_diff<T>(red, A, kw, (const T *)nullptr, 0, sh.m, kw, s).maxbits);
        p.maxB = ddcheck::bits_to_double(
            ddcheck::max_diff<T>(red, B, nw, (const T *)nullptr, 0, sh.k, nw, s).maxbits);
        p.maxC0 =
            beta ? ddcheck::bits_to_double(
                       ddcheck::max_diff<T>(red, C0, nw, (const T *)nullptr, 0, sh.m, nw, s)
                           .maxbits)
                 : 0;
        ddcheck::prepare_c(p, R, s);
        int e = TI::fn(cublas)(sh.m, sh.n, sh.k, A, sh.k, B, sh.n, beta, R, sh.n, (void *)s);
        if (e) {
            fprintf(stderr, "gemm-bench: cuBLAS failed: %s\n", cudaGetErrorString((cudaError_t)e));
            exit(1);
        }
        if (ddcheck::max_diff<T>(red, R, nw, (const T *)nullptr, 0, sh.m, nw, s).nonfinite) {
            fprintf(stderr, "gemm-bench: cuBLAS reference has non-finite elements\n");
            exit(1);
        }
    };

    int failures = 0;
    /* a complex multiply-add is 8 flops (4 multiplies, 4 adds) */
    double flops = 2.0 * W * W * sh.m * sh.n * sh.k;

    /* cuBLAS first: its time is the 100% of this size. */
    fresh();
    row cb = {"cublas", TI::name(), sh, beta, o.reps, NAN, NAN, NAN, 100.0, 0.0, "ok", ""};
    {
        int e = time_kernel<T>(TI::fn(cublas), p, o.warmup, o.reps, flush, flush_bytes, s,
                               &cb.ms_median, &cb.ms_min, &cb.tele);
        if (e) {
            fprintf(stderr, "gemm-bench: cuBLAS failed: %s\n", cudaGetErrorString((cudaError_t)e));
            exit(1);
        }
        cb.tflops = flops / (cb.ms_median * 1e-3) / 1e12;
    }

    std::vector<row> passed; /* timed: the sustained mode runs them again */
    std::vector<const kernel_desc *> passed_desc;
    for (const kernel_desc *d : list) {
        auto fn = TI::fn(d);
        if (!fn || d == cublas)
            continue;
        row r = {d->name, TI::name(), sh,  beta, d->slow ? std::min(o.reps, 3) : o.reps,
                 NAN,     NAN,        NAN, NAN,  NAN,
                 "ok",    ""};
        int64_t big = std::max(sh.m, std::max(sh.n, sh.k));
        if (d->slow && big > o.slow_limit) {
            r.status = "skipped";
            char buf[96];
            snprintf(buf, sizeof buf, "(slow kernel; above --slow-limit %lld)",
                     (long long)o.slow_limit);
            r.note = buf;
            emit(o, env, r);
            continue;
        }
        fresh();
        ddcheck::verdict v = ddcheck::run_and_check<T>(fn, p, red, s);
        r.err = v.err;
        if (v.launch_error) {
            r.status = "error";
            r.note = cudaGetErrorString((cudaError_t)v.launch_error);
            ++failures;
            emit(o, env, r);
            continue;
        }
        if (!v.passed) {
            r.status = "FAILED";
            char buf[160];
            snprintf(buf, sizeof buf, "(err %.3g > %g or unwritten %llu or outside %llu)", v.err,
                     DD_CHECK_THRESHOLD, v.unwritten, v.outside);
            r.note = buf;
            ++failures;
            emit(o, env, r);
            continue;
        }
        int e = time_kernel<T>(fn, p, o.warmup, r.reps, flush, flush_bytes, s, &r.ms_median,
                               &r.ms_min, &r.tele);
        if (e) {
            r.status = "error";
            r.note = cudaGetErrorString((cudaError_t)e);
            ++failures;
        } else {
            r.tflops = flops / (r.ms_median * 1e-3) / 1e12;
            r.pct = 100.0 * cb.ms_median / r.ms_median;
            passed.push_back(r);
            passed_desc.push_back(d);
        }
        if (const char *kn = kernel_note(); kn[0]) /* fallbacks (ozaki2, the FP32 and complex ones) */
            r.note = kn;
        emit(o, env, r);
    }
    emit(o, env, cb);
    if (o.interleave && !passed.empty()) {
        std::vector<row> fast; /* slow kernels stay out of the rounds */
        std::vector<const kernel_desc *> fast_desc;
        for (size_t i = 0; i < passed.size(); ++i)
            if (!passed_desc[i]->slow)
                fast.push_back(passed[i]), fast_desc.push_back(passed_desc[i]);
        if (!fast.empty())
            failures += interleaved<E>(o, env, cublas, cb, fast, fast_desc, p, flush, flush_bytes, s);
    }
    if (o.sustain > 0)
        failures += sustained<E>(o, env, cublas, cb, passed, passed_desc, p, s);

    red.release();
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(R));
    if (C0)
        CK(cudaFree(C0));
    return failures;
}

} // namespace gb

int main(int argc, char **argv)
{
    using namespace gb;
    options o;
    int pe = parse(argc, argv, &o);
    if (pe >= 0)
        return pe;

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("gemm-bench: no CUDA device present; nothing to measure (skipped)\n");
        return 77;
    }
    if (o.device < 0 || o.device >= ndev) {
        fprintf(stderr, "gemm-bench: --device %d: this host has %d device(s)\n", o.device, ndev);
        return 2;
    }
    CK(cudaSetDevice(o.device));

    env_info env = {};
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, o.device));
    snprintf(env.gpu, sizeof env.gpu, "%s", prop.name);
    env.sms = prop.multiProcessorCount;
    env.cc_major = prop.major, env.cc_minor = prop.minor;
    CK(cudaDriverGetVersion(&env.driver));
    CK(cudaRuntimeGetVersion(&env.runtime));
    env.cublas = kernel_cublas_version();

    std::vector<const kernel_desc *> list;
    const kernel_desc *cublas = kernel_find("cublas");
    int n = 0;
    const kernel_desc *all = kernel_list(&n);
    for (int i = 0; i < n; ++i)
        if (selected(o, &all[i]) && &all[i] != cublas)
            list.push_back(&all[i]);

    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, o.device) != cudaSuccess)
        bus[0] = '\0';
    g_tele = dd_tele_open(bus[0] ? bus : nullptr, o.device);
    dd_telemetry probe;
    dd_tele_start(g_tele);
    dd_tele_stop(g_tele, &probe);
    print_preamble(o, env, probe.available ? "NVML" : probe.why);

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t flush_bytes = (size_t)256 << 20;
    void *flush;
    CK(cudaMalloc(&flush, flush_bytes));

    uint64_t seed = o.seed;
    int failures = 0;
    for (const shape &sh : o.sizes) {
        if (o.f64)
            failures += bench_one<double>(o, env, list, cublas, sh, flush, flush_bytes, s, &seed);
        if (o.f32)
            failures += bench_one<float>(o, env, list, cublas, sh, flush, flush_bytes, s, &seed);
        if (o.c128)
            failures += bench_one<ddcheck::cx<double>>(o, env, list, cublas, sh, flush, flush_bytes,
                                                       s, &seed);
        if (o.c64)
            failures += bench_one<ddcheck::cx<float>>(o, env, list, cublas, sh, flush, flush_bytes,
                                                      s, &seed);
        if (o.i8)
            failures += i8_bench(o, env, sh, flush, flush_bytes, s, &seed);
    }

    CK(cudaFree(flush));
    CK(cudaStreamDestroy(s));
    dd_tele_close(g_tele);
    kernel_cublas_shutdown();
    if (failures) {
        printf("gemm-bench: %d FAILED or errored row(s)\n", failures);
        return 1;
    }
    if (o.i8 && !o.f64 && !o.f32 && !o.c128 && !o.c64 && g_i8_skipped == (int)o.sizes.size()) {
        printf("gemm-bench: the own INT8 GEMM does not run on this GPU; nothing measured "
               "(skipped)\n");
        return 77;
    }
    return 0;
}
