/* gemm-bench — check every kernel against cuBLAS, then time it.
 *
 *   gemm-bench [--sizes LIST] [--kernels LIST] [--types f64,f32,i8] [--i8-batch B]
 *              [--reps N] [--warmup N] [--beta 0|1|auto] [--slow-limit N]
 *              [--sustain SECONDS] [--interleave] [--json FILE] [--quick] [--seed S]
 *              [--device D]
 *
 * For each type and size: fresh uniform [-1,1) data made on the device
 * (new seed per kernel), cuBLAS computes the reference, C is poisoned with
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
 * otherwise. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dd_json.h"
#include "dd_splitmix.h"
#include "dd_telemetry.h"
#include "gemm_check.cuh"
#include "i8gemm.h"
#include "kernel.h"
#include "ozaki2.h"

namespace
{

struct shape {
    int64_t m, n, k;
};

struct options {
    std::vector<shape> sizes;
    std::vector<std::string> kernels; /* empty: all */
    bool f64 = true, f32 = true, i8 = false;
    int i8_batch = 1; /* INT8 rows: products per call */
    int reps = 10, warmup = 2;
    int beta = -1; /* -1: auto */
    int64_t slow_limit = 4096;
    double sustain = 0; /* seconds per kernel in the sustained mode; 0: off */
    bool interleave = false; /* also time cuBLAS and the kernels in alternation */
    const char *json = nullptr;
    uint64_t seed = 20240611;
    int device = 0;
    std::string command;
};

struct env_info {
    char gpu[256];
    int sms, cc_major, cc_minor;
    int driver, runtime;
    const char *cublas;
};

int usage(FILE *f)
{
    fprintf(f, "usage: gemm-bench [--sizes LIST] [--kernels LIST] [--types f64,f32,i8] [--i8-batch B]\n"
               "                  [--reps N] [--warmup N] [--beta 0|1|auto] [--slow-limit N]\n"
               "                  [--sustain SECONDS] [--json FILE] [--quick] [--seed S]\n"
               "                  [--interleave] [--device D]\n"
               "  --sizes     comma list of N or MxNxK (default 1024,2048,4096,8192,16384,\n"
               "              8192x8192x1024,16384x16384x1024)\n"
               "  --kernels   comma list of names or name prefixes (default: all; earlier\n"
               "              names such as 23_dmma_pipe select their kernel); cublas is\n"
               "              always timed, as the reference\n"
               "  --sustain S also run cuBLAS and each kernel back to back for S seconds and\n"
               "              report the median over the last half, with its clock and power\n"
               "  --interleave also time cuBLAS and the kernels that passed in rounds, one run\n"
               "              of each a round (a Williams design of orders), so all see one clock\n"
               "              and temperature; medians per kernel, no per-kernel energy\n"
               "  --types     f64,f32 (default) and/or i8: the own INT8 GEMM (ozaki2's) against\n"
               "              cuBLAS INT8, checked exactly; --i8-batch B products per call\n"
               "  --quick     sizes 1024,2048,4096,4096x4096x1024; 3 reps, 1 warm-up\n"
               "  --json FILE append one JSON object per row (JSON Lines)\n");
    return f == stdout ? 0 : 2;
}

bool parse_sizes(const char *s, std::vector<shape> *out)
{
    out->clear();
    std::string all(s);
    size_t pos = 0;
    while (pos <= all.size()) {
        size_t end = all.find(',', pos);
        if (end == std::string::npos)
            end = all.size();
        std::string item = all.substr(pos, end - pos);
        long long m, n, k;
        char x;
        if (sscanf(item.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &x) == 3) {
        } else if (sscanf(item.c_str(), "%lld%c", &m, &x) == 1) {
            n = k = m;
        } else {
            return false;
        }
        if (m <= 0 || n <= 0 || k <= 0)
            return false;
        out->push_back({m, n, k});
        pos = end + 1;
    }
    return !out->empty();
}

std::vector<std::string> split(const char *s)
{
    std::vector<std::string> v;
    std::string all(s);
    size_t pos = 0;
    while (pos <= all.size()) {
        size_t end = all.find(',', pos);
        if (end == std::string::npos)
            end = all.size();
        if (end > pos)
            v.push_back(all.substr(pos, end - pos));
        pos = end + 1;
    }
    return v;
}

int parse(int argc, char **argv, options *o)
{
    parse_sizes("1024,2048,4096,8192,16384,8192x8192x1024,16384x16384x1024", &o->sizes);
    for (int i = 0; i < argc; ++i) {
        if (i)
            o->command += " ";
        o->command += argv[i];
    }
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&](void) {
            if (!v) {
                fprintf(stderr, "gemm-bench: %s needs a value\n", a);
                exit(2);
            }
            ++i;
            return v;
        };
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            exit(usage(stdout));
        } else if (!strcmp(a, "--sizes")) {
            if (!parse_sizes(need(), &o->sizes)) {
                fprintf(stderr, "gemm-bench: bad --sizes '%s' (N or MxNxK, comma separated)\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--kernels")) {
            o->kernels = split(need());
        } else if (!strcmp(a, "--types")) {
            o->f64 = o->f32 = false;
            for (auto &t : split(need())) {
                if (t == "f64")
                    o->f64 = true;
                else if (t == "f32")
                    o->f32 = true;
                else if (t == "i8")
                    o->i8 = true;
                else {
                    fprintf(stderr, "gemm-bench: unknown type '%s' (f64, f32, i8)\n", t.c_str());
                    return 2;
                }
            }
        } else if (!strcmp(a, "--i8-batch")) {
            o->i8_batch = atoi(need());
            if (o->i8_batch < 1 || o->i8_batch > DD_I8GEMM_MAX_MOD) {
                fprintf(stderr, "gemm-bench: --i8-batch takes 1..%d\n", DD_I8GEMM_MAX_MOD);
                return 2;
            }
        } else if (!strcmp(a, "--reps")) {
            o->reps = atoi(need());
        } else if (!strcmp(a, "--warmup")) {
            o->warmup = atoi(need());
        } else if (!strcmp(a, "--beta")) {
            const char *b = need();
            o->beta = !strcmp(b, "auto") ? -1 : atoi(b);
            if (o->beta < -1 || o->beta > 1) {
                fprintf(stderr, "gemm-bench: --beta takes 0, 1 or auto\n");
                return 2;
            }
        } else if (!strcmp(a, "--slow-limit")) {
            o->slow_limit = atoll(need());
        } else if (!strcmp(a, "--sustain")) {
            o->sustain = atof(need());
            if (!(o->sustain >= 0 && o->sustain <= 3600)) {
                fprintf(stderr, "gemm-bench: --sustain takes seconds, 0..3600\n");
                return 2;
            }
        } else if (!strcmp(a, "--interleave")) {
            o->interleave = true;
        } else if (!strcmp(a, "--json")) {
            o->json = need();
        } else if (!strcmp(a, "--quick")) {
            parse_sizes("1024,2048,4096,4096x4096x1024", &o->sizes);
            o->reps = 3;
            o->warmup = 1;
        } else if (!strcmp(a, "--seed")) {
            o->seed = strtoull(need(), nullptr, 0);
        } else if (!strcmp(a, "--device")) {
            o->device = atoi(need());
        } else {
            fprintf(stderr, "gemm-bench: unknown option '%s'\n", a);
            return usage(stderr);
        }
    }
    if (o->reps < 1 || o->warmup < 0) {
        fprintf(stderr, "gemm-bench: --reps must be >= 1 and --warmup >= 0\n");
        return 2;
    }
    return 0;
}

/* A kernel is selected where an item of --kernels is a prefix of its name
 * or of one of its earlier names (kernel_alias: "23" selects dgemm_dmma). */
bool selected(const options &o, const kernel_desc *kd)
{
    if (o.kernels.empty())
        return true;
    for (auto &k : o.kernels) {
        if (!strncmp(kd->name, k.c_str(), k.size()))
            return true;
        const kernel_desc *to = nullptr;
        for (int i = 0; const char *old = kernel_alias(i, &to); ++i)
            if (to == kd && !strncmp(old, k.c_str(), k.size()))
                return true;
    }
    return false;
}

/* One row of the table. */
struct row {
    const char *kernel;
    const char *dtype;
    shape s;
    int beta;
    int reps;
    double ms_median, ms_min, tflops, pct;
    double err;
    const char *status; /* "ok", "FAILED", "skipped", "error" */
    std::string note;
    const char *mode = "burst"; /* or "sustained", "interleaved" */
    double seconds = 0;         /* sustained: the whole run of the kernel */
    dd_telemetry tele = {};     /* over the timed runs (sustained: the last half) */
};

/* Energy per run: the telemetry's energy over the runs it covered (the
 * interleaved rows share one window: no energy of their own). */
double joules_per_run(const row &r)
{
    return r.tele.available && r.reps > 0 && strcmp(r.mode, "interleaved")
               ? r.tele.energy_j / r.reps
               : NAN;
}

void print_row(const row &r, const char *dims)
{
    char reasons[160] = "", mhz[16] = "-", watts[16] = "-", joules[16] = "-";
    if (r.tele.available) {
        snprintf(mhz, sizeof mhz, "%.0f", r.tele.sm_mhz_mean);
        snprintf(watts, sizeof watts, "%.0f", r.tele.power_w_mean);
        snprintf(joules, sizeof joules, "%.3g", joules_per_run(r));
        dd_tele_reasons(r.tele.reasons, reasons, sizeof reasons);
    }
    printf("%-22s %-4s %-19s %4d %-9s %10.3f %9.2f %8.1f%% %9.2e %6s %5s %8s  ok  %s\n", r.kernel,
           r.dtype, dims, r.beta, r.mode, r.ms_median, r.tflops, r.pct, r.err, mhz, watts, joules,
           r.tele.available && strcmp(reasons, "none") ? reasons : "");
}

void json_telemetry(FILE *f, const row &r)
{
    fputs(",\"telemetry\":", f);
    dd_tele_json_open(f, &r.tele);
    if (r.tele.available)
        dd_json_kv_num(f, "energy_j_per_run", joules_per_run(r));
    fputc('}', f);
}

/* Six significant digits, as in the recorded results (docs/results/), where
 * dd_json_num writes nine. */
void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

void emit(const options &o, const env_info &env, const row &r)
{
    char dims[64];
    snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)r.s.m, (long long)r.s.n,
             (long long)r.s.k);
    if (!strcmp(r.status, "ok"))
        print_row(r, dims);
    else
        printf("%-22s %-4s %-19s %4d %-9s %10s %9s %9s %9s %6s %5s %8s  %s %s\n", r.kernel, r.dtype,
               dims, r.beta, r.mode, "-", "-", "-", "-", "-", "-", "-", r.status, r.note.c_str());
    fflush(stdout);
    if (!o.json)
        return;
    FILE *f = fopen(o.json, "a");
    if (!f) {
        fprintf(stderr, "gemm-bench: cannot append to %s\n", o.json);
        exit(1);
    }
    char ts[32];
    time_t now = time(nullptr);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "{\"tool\":\"gemm-bench\",\"timestamp\":\"%s\",\"command\":", ts);
    dd_json_str(f, o.command.c_str());
    fprintf(f, ",\"gpu\":");
    dd_json_str(f, env.gpu);
    fprintf(f,
            ",\"sm_count\":%d,\"cc\":\"%d.%d\",\"cuda_driver\":\"%d.%d\",\"cuda_runtime\":\"%d.%"
            "d\",\"cublas\":",
            env.sms, env.cc_major, env.cc_minor, env.driver / 1000, (env.driver % 1000) / 10,
            env.runtime / 1000, (env.runtime % 1000) / 10);
    dd_json_str(f, env.cublas);
    fprintf(f, ",\"kernel\":");
    dd_json_str(f, r.kernel);
    fprintf(
        f,
        ",\"dtype\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"beta\":%d,\"reps\":%d,\"warmup\":%d",
        r.dtype, (long long)r.s.m, (long long)r.s.n, (long long)r.s.k, r.beta, r.reps, o.warmup);
    fprintf(f, ",\"mode\":\"%s\"", r.mode);
    if (!strcmp(r.mode, "sustained")) {
        fprintf(f, ",\"sustain_seconds\":");
        json_num(f, r.seconds);
    }
    fprintf(f, ",\"ms_median\":");
    json_num(f, r.ms_median);
    fprintf(f, ",\"ms_min\":");
    json_num(f, r.ms_min);
    fprintf(f, ",\"tflops\":");
    json_num(f, r.tflops);
    fprintf(f, ",\"pct_cublas\":");
    json_num(f, r.pct);
    fprintf(f, ",\"check_err\":");
    json_num(f, r.err);
    fprintf(f, ",\"check_threshold\":%g,\"status\":", DD_CHECK_THRESHOLD);
    dd_json_str(f, r.status);
    if (!r.note.empty()) {
        fprintf(f, ",\"note\":");
        dd_json_str(f, r.note.c_str());
    }
    json_telemetry(f, r);
    fprintf(f, "}\n");
    fclose(f);
}

/* The GPU's sampler (NVML), shared by every row. */
dd_tele_sampler *g_tele;

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The milliseconds between events 2i and 2i + 1, for i < n. */
std::vector<double> pair_ms(const cudaEvent_t *ev, int n)
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
template <typename T>
int sustained(const options &o, const env_info &env, const kernel_desc *cublas, const row &cb_burst,
              const std::vector<row> &burst, const std::vector<const kernel_desc *> &descs,
              const ddcheck::problem<T> &p, cudaStream_t s)
{
    typedef ddcheck::type_info<T> TI;
    double flops = 2.0 * p.m * p.n * p.k;
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
size_t carryover_balanced(size_t nk, size_t r, size_t q)
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
template <typename T>
int interleaved(const options &o, const env_info &env, const kernel_desc *cublas, const row &cb_burst,
                const std::vector<row> &burst, const std::vector<const kernel_desc *> &descs,
                const ddcheck::problem<T> &p, void *flush, size_t flush_bytes, cudaStream_t s)
{
    typedef ddcheck::type_info<T> TI;
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
    const double flops = 2.0 * p.m * p.n * p.k;
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

/* All kernels of one type and size.  Returns the number of failures. */
template <typename T>
int bench_one(const options &o, const env_info &env, const std::vector<const kernel_desc *> &list,
              const kernel_desc *cublas, shape sh, void *flush, size_t flush_bytes, cudaStream_t s,
              uint64_t *seed)
{
    typedef ddcheck::type_info<T> TI;
    const int beta = o.beta >= 0 ? o.beta : (sh.k < sh.m && sh.k < sh.n ? 1 : 0);
    const bool has_any = std::any_of(list.begin(), list.end(),
                                     [](const kernel_desc *d) { return TI::fn(d) != nullptr; });
    if (!has_any)
        return 0;

    ddcheck::problem<T> p = {};
    p.m = sh.m, p.n = sh.n, p.k = sh.k, p.lda = sh.k, p.ldb = sh.n, p.ldc = sh.n, p.beta = beta;
    T *A, *B, *C, *R, *C0 = nullptr;
    size_t mn = (size_t)sh.m * sh.n;
    cudaError_t ae = cudaMalloc(&A, sizeof(T) * sh.m * sh.k);
    if (ae == cudaSuccess)
        ae = cudaMalloc(&B, sizeof(T) * sh.k * sh.n);
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
        ddcheck::fill_uniform<T>(A, sh.m, sh.k, sh.k, *seed * 3 + 0, s);
        ddcheck::fill_uniform<T>(B, sh.k, sh.n, sh.n, *seed * 3 + 1, s);
        if (beta)
            ddcheck::fill_uniform<T>(C0, sh.m, sh.n, sh.n, *seed * 3 + 2, s);
        p.maxA = ddcheck::bits_to_double(
            ddcheck::max_diff<T>(red, A, sh.k, (const T *)nullptr, 0, sh.m, sh.k, s).maxbits);
        p.maxB = ddcheck::bits_to_double(
            ddcheck::max_diff<T>(red, B, sh.n, (const T *)nullptr, 0, sh.k, sh.n, s).maxbits);
        p.maxC0 =
            beta ? ddcheck::bits_to_double(
                       ddcheck::max_diff<T>(red, C0, sh.n, (const T *)nullptr, 0, sh.m, sh.n, s)
                           .maxbits)
                 : 0;
        ddcheck::prepare_c(p, R, s);
        int e = TI::fn(cublas)(sh.m, sh.n, sh.k, A, sh.k, B, sh.n, beta, R, sh.n, (void *)s);
        if (e) {
            fprintf(stderr, "gemm-bench: cuBLAS failed: %s\n", cudaGetErrorString((cudaError_t)e));
            exit(1);
        }
        if (ddcheck::max_diff<T>(red, R, sh.n, (const T *)nullptr, 0, sh.m, sh.n, s).nonfinite) {
            fprintf(stderr, "gemm-bench: cuBLAS reference has non-finite elements\n");
            exit(1);
        }
    };

    int failures = 0;
    double flops = 2.0 * sh.m * sh.n * sh.k;

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
        if (const char *kn = kernel_note(); kn[0]) /* ozaki2: fallbacks to native FP64 */
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
            failures += interleaved<T>(o, env, cublas, cb, fast, fast_desc, p, flush, flush_bytes, s);
    }
    if (o.sustain > 0)
        failures += sustained<T>(o, env, cublas, cb, passed, passed_desc, p, s);

    red.release();
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(R));
    if (C0)
        CK(cudaFree(C0));
    return failures;
}

#include "i8_bench.cuh"

} // namespace

int main(int argc, char **argv)
{
    options o;
    int pe = parse(argc, argv, &o);
    if (pe)
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

    printf("# gemm-bench: %s, %d SMs, cc %d.%d, CUDA driver %d.%d runtime %d.%d, cuBLAS %s\n",
           env.gpu, env.sms, env.cc_major, env.cc_minor, env.driver / 1000,
           (env.driver % 1000) / 10, env.runtime / 1000, (env.runtime % 1000) / 10, env.cublas);
    printf("# burst: median of %d timed runs after %d warm-up, L2 flushed before each; check: "
           "err <= %g vs cuBLAS\n",
           o.reps, o.warmup, DD_CHECK_THRESHOLD);
    if (o.interleave)
        printf("# interleaved: cuBLAS and the kernels that passed in %d rounds of one run each "
               "(orders balanced: each follows each equally often), medians; MHz and W of all "
               "rounds\n",
               o.reps);
    if (o.sustain > 0)
        printf("# sustained: back to back for %g s each, cuBLAS first; median, clock and power "
               "of the last half\n",
               o.sustain);
    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, o.device) != cudaSuccess)
        bus[0] = '\0';
    g_tele = dd_tele_open(bus[0] ? bus : nullptr, o.device);
    dd_telemetry probe;
    dd_tele_start(g_tele);
    dd_tele_stop(g_tele, &probe);
    printf("# telemetry: %s; MHz: mean SM clock, W: mean power, J/run: energy per run, then "
           "the clock event reasons seen\n",
           probe.available ? "NVML" : probe.why);
    printf("%-22s %-4s %-19s %4s %-9s %10s %9s %9s %9s %6s %5s %8s  %s\n", "kernel", "type",
           "MxNxK", "beta", "mode", "ms", "TFLOP/s", "%cuBLAS", "check", "MHz", "W", "J/run",
           "status");

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
    if (o.i8 && !o.f64 && !o.f32 && g_i8_skipped == (int)o.sizes.size()) {
        printf("gemm-bench: the own INT8 GEMM does not run on this GPU; nothing measured "
               "(skipped)\n");
        return 77;
    }
    return 0;
}
