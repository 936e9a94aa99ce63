/* gemm_modes.cuh — gemm-bench's timing modes, one row or one set of rows
 * each (gemm_bench.h's rows, written by emit):
 *   burst        time_runs/time_kernel: warm-up, then reps runs between
 *                events, the L2 flushed before each (the rows of bench_one
 *                and i8_bench);
 *   sustained    sustain_kernel/sustained: back to back for S seconds, the
 *                last half measured;
 *   interleaved  interleaved: cuBLAS and the kernels alternated run by run,
 *                in carryover_balanced's orders.
 * Templates (on the element type and the run; complex rows count 8 flops
 * a multiply-add, problem::w), so a header: gemm_bench.cu
 * and i8_bench.cu include it. */
#ifndef GEMM_MODES_CUH
#define GEMM_MODES_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "gemm_bench.h"
#include "gemm_check.cuh"

namespace gb
{

inline double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

inline double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The milliseconds between events 2i and 2i + 1, for i < n. */
inline std::vector<double> pair_ms(const cudaEvent_t *ev, int n)
{
    std::vector<double> ms(n);
    for (int i = 0; i < n; ++i) {
        float t;
        CK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms[i] = t;
    }
    return ms;
}

/* Times run(): warm-up, then reps runs between events, L2 flushed before
 * each; telemetry over the timed runs (flushes included). */
template <typename Run>
int time_runs(Run run, int warmup, int reps, void *flush, size_t flush_bytes, cudaStream_t s,
              double *median, double *minimum, dd_telemetry *tele)
{
    for (int i = 0; i < warmup; ++i) {
        int e = run();
        if (e)
            return e;
    }
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto &x : ev)
        CK(cudaEventCreate(&x));
    CK(cudaStreamSynchronize(s));
    dd_tele_start(g_tele);
    for (int i = 0; i < reps; ++i) {
        CK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, s));
        CK(cudaEventRecord(ev[2 * i], s));
        int e = run();
        if (e)
            return e;
        CK(cudaEventRecord(ev[2 * i + 1], s));
    }
    CK(cudaStreamSynchronize(s));
    dd_tele_stop(g_tele, tele);
    CK(cudaGetLastError());
    const std::vector<double> ms = pair_ms(ev.data(), reps);
    for (auto &x : ev)
        CK(cudaEventDestroy(x));
    *minimum = *std::min_element(ms.begin(), ms.end());
    *median = median_of(ms);
    return 0;
}

template <typename T, typename Fn>
int time_kernel(Fn fn, const ddcheck::problem<T> &p, int warmup, int reps, void *flush,
                size_t flush_bytes, cudaStream_t s, double *median, double *minimum,
                dd_telemetry *tele)
{
    return time_runs(
        [&]() { return fn(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, (void *)s); },
        warmup, reps, flush, flush_bytes, s, median, minimum, tele);
}

/* One batch of back-to-back runs, each between consecutive events; their
 * times appended to ms when keep. */
template <typename T, typename Fn>
int sustain_batch(Fn fn, const ddcheck::problem<T> &p, std::vector<cudaEvent_t> &ev, cudaStream_t s,
                  bool keep, std::vector<double> *ms)
{
    int batch = (int)ev.size() - 1;
    CK(cudaEventRecord(ev[0], s));
    for (int i = 0; i < batch; ++i) {
        int e = fn(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, (void *)s);
        if (e)
            return e;
        CK(cudaEventRecord(ev[i + 1], s));
    }
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    for (int i = 0; keep && i < batch; ++i) {
        float t;
        CK(cudaEventElapsedTime(&t, ev[i], ev[i + 1]));
        ms->push_back(t);
    }
    return 0;
}

/* Sustained: fn back to back for `seconds`, in batches of about 100 ms
 * (est_ms: one run's time); the row's figures are those of the last half:
 * median and minimum time, runs, telemetry. */
template <typename T, typename Fn>
int sustain_kernel(Fn fn, const ddcheck::problem<T> &p, double seconds, double est_ms,
                   cudaStream_t s, row *r)
{
    int batch = (int)std::max(1.0, std::min(2000.0, 100.0 / std::max(est_ms, 1e-3)));
    std::vector<cudaEvent_t> ev(batch + 1);
    for (auto &x : ev)
        CK(cudaEventCreate(&x));
    std::vector<double> ms;
    bool second = false;
    double t0 = now_s();
    int e = 0;
    for (double el = 0; !e && (!second || el < seconds); el = now_s() - t0) {
        if (!second && el >= 0.5 * seconds) {
            second = true;
            dd_tele_start(g_tele);
        }
        e = sustain_batch<T>(fn, p, ev, s, second, &ms);
    }
    dd_tele_stop(g_tele, &r->tele);
    r->seconds = now_s() - t0;
    for (auto &x : ev)
        CK(cudaEventDestroy(x));
    if (e || ms.empty())
        return e ? e : (int)cudaErrorUnknown;
    r->reps = (int)ms.size();
    r->ms_min = *std::min_element(ms.begin(), ms.end());
    r->ms_median = median_of(ms);
    return 0;
}

/* The sustained rows of one type and size: cuBLAS first (its median is the
 * 100%), then each kernel that passed, each for o.sustain seconds on the
 * data of the burst rows.  Returns the number of failures. */
template <typename E>
int sustained(const options &o, const env_info &env, const kernel_desc *cublas, const row &cb_burst,
              const std::vector<row> &burst, const std::vector<const kernel_desc *> &descs,
              const ddcheck::problem<typename ddcheck::type_info<E>::real> &p, cudaStream_t s)
{
    typedef ddcheck::type_info<E> TI;
    typedef typename TI::real T;
    double flops = 2.0 * p.w * p.w * p.m * p.n * p.k;
    row cb = cb_burst;
    cb.mode = "sustained";
    int e = sustain_kernel<T>(TI::fn(cublas), p, o.sustain, cb_burst.ms_median, s, &cb);
    if (e) {
        fprintf(stderr, "gemm-bench: cuBLAS failed: %s\n", cudaGetErrorString((cudaError_t)e));
        exit(1);
    }
    cb.tflops = flops / (cb.ms_median * 1e-3) / 1e12;
    int failures = 0;
    for (size_t i = 0; i < burst.size(); ++i) {
        row r = burst[i];
        r.mode = "sustained";
        if ((e = sustain_kernel<T>(TI::fn(descs[i]), p, o.sustain, r.ms_median, s, &r))) {
            r.status = "error";
            r.note = cudaGetErrorString((cudaError_t)e);
            ++failures;
        } else {
            r.tflops = flops / (r.ms_median * 1e-3) / 1e12;
            r.pct = 100.0 * cb.ms_median / r.ms_median;
        }
        emit(o, env, r);
    }
    emit(o, env, cb);
    return failures;
}

/* Position q of round r in a Williams design for nk kernels: over nk
 * rounds (2 nk where nk is odd) each kernel runs right after each other
 * one equally often, so none gains by mostly following a kernel that left
 * the GPU cooler.  What remains is noise: an A/A pair of kernels differed
 * by up to 4% on 40-80 ms shapes and by 1% on shorter ones
 * (docs/results/h200-2026-12-01-interleave/aa). */
inline size_t carryover_balanced(size_t nk, size_t r, size_t q)
{
    const size_t rows = nk % 2 ? 2 * nk : nk, row = r % rows;
    if (row >= nk) /* odd nk: the first nk rows reversed */
        q = nk - 1 - q;
    const size_t first = q == 0 ? 0 : q % 2 ? (q + 1) / 2 : nk - q / 2;
    return (first + row) % nk;
}

/* The interleaved rows: cuBLAS and the kernels that passed, one run of
 * each per round (carryover_balanced's order, L2 flushed before each),
 * after o.warmup rounds; each kernel's median over o.reps rounds and the
 * rounds' shared telemetry (clock and power; no energy per kernel).  Returns
 * the number of failures. */
template <typename E>
int interleaved(const options &o, const env_info &env, const kernel_desc *cublas, const row &cb_burst,
                const std::vector<row> &burst, const std::vector<const kernel_desc *> &descs,
                const ddcheck::problem<typename ddcheck::type_info<E>::real> &p, void *flush,
                size_t flush_bytes, cudaStream_t s)
{
    typedef ddcheck::type_info<E> TI;
    const size_t nk = descs.size() + 1; /* 0: cuBLAS */
    auto run = [&](size_t i) {
        return TI::fn(i ? descs[i - 1] : cublas)(p.m, p.n, p.k, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                 p.ldc, (void *)s);
    };
    int e = 0;
    for (int w = 0; w < o.warmup && !e; ++w)
        for (size_t i = 0; i < nk && !e; ++i)
            e = run(i);
    std::vector<cudaEvent_t> ev(2 * nk * o.reps);
    for (auto &x : ev)
        CK(cudaEventCreate(&x));
    CK(cudaStreamSynchronize(s));
    dd_telemetry tele;
    dd_tele_start(g_tele);
    for (int r = 0; r < o.reps && !e; ++r)
        for (size_t q = 0; q < nk && !e; ++q) {
            const size_t i = carryover_balanced(nk, (size_t)r, q), at = 2 * (i * o.reps + r);
            CK(cudaMemsetAsync(flush, r & 0xFF, flush_bytes, s));
            CK(cudaEventRecord(ev[at], s));
            e = run(i);
            CK(cudaEventRecord(ev[at + 1], s));
        }
    CK(cudaStreamSynchronize(s));
    dd_tele_stop(g_tele, &tele);
    if (e) {
        fprintf(stderr, "gemm-bench: interleaved rows abandoned: %s\n",
                cudaGetErrorString((cudaError_t)e));
        for (auto &x : ev)
            CK(cudaEventDestroy(x));
        return 1;
    }
    CK(cudaGetLastError());
    const double flops = 2.0 * p.w * p.w * p.m * p.n * p.k;
    std::vector<row> rows(nk);
    for (size_t i = 0; i < nk; ++i) {
        const std::vector<double> ms = pair_ms(ev.data() + 2 * i * o.reps, o.reps);
        rows[i] = i ? burst[i - 1] : cb_burst;
        rows[i].mode = "interleaved";
        rows[i].reps = o.reps;
        rows[i].tele = tele;
        rows[i].ms_min = *std::min_element(ms.begin(), ms.end());
        rows[i].ms_median = median_of(ms);
        rows[i].tflops = flops / (rows[i].ms_median * 1e-3) / 1e12;
    }
    for (auto &x : ev)
        CK(cudaEventDestroy(x));
    for (size_t i = 1; i < nk; ++i) {
        rows[i].pct = 100.0 * rows[0].ms_median / rows[i].ms_median;
        emit(o, env, rows[i]);
    }
    emit(o, env, rows[0]);
    return 0;
}

} // namespace gb

#endif
