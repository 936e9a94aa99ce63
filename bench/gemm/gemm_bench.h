/* gemm_bench.h — what gemm-bench's parts share: the options
 * (gemm_opts.cu), the rows and their output as a table and JSON records
 * (gemm_output.cu), the timing modes (gemm_modes.cuh: burst, interleaved,
 * sustained), the FP64/FP32 and complex rows (gemm_bench.cu) and the INT8 rows
 * (i8_bench.cu).  gemm_bench.cu's head says what the bench does. */
#ifndef GEMM_BENCH_H
#define GEMM_BENCH_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

#include "dd_telemetry.h"
#include "kernel.h"

namespace gb
{

struct shape {
    int64_t m, n, k;
};

struct options {
    std::vector<shape> sizes;
    std::vector<std::string> kernels; /* empty: all */
    bool f64 = true, f32 = true, i8 = false;
    bool c128 = false, c64 = false; /* complex double / float (--types c128,c64) */
    int i8_batch = 1; /* INT8 rows: products per call */
    int reps = 10, warmup = 2;
    int beta = -1; /* -1: auto */
    int64_t slow_limit = 4096;
    double sustain = 0;  /* seconds per kernel in the sustained mode; 0: off */
    int interleave = 0;  /* also time cuBLAS and the kernels in alternation */
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

/* gemm_opts.cu: argv into o (bench_opts.h's rules); -1 to run, else the
 * exit status (0 after --help, 2 after a refusal's one message). */
int parse(int argc, char **argv, options *o);
/* A kernel is selected where an item of --kernels is a prefix of its name
 * or of one of its earlier names (kernel_alias: "23" selects dgemm_dmma). */
bool selected(const options &o, const kernel_desc *kd);

/* gemm_output.cu: the lines above the table (the GPU, the modes, where the
 * telemetry comes from) and the table's header. */
void print_preamble(const options &o, const env_info &env, const char *telemetry);
/* One row: its line of the table, and with --json its record appended (a
 * file that cannot be appended to ends the bench, exit 1). */
void emit(const options &o, const env_info &env, const row &r);

/* gemm_bench.cu: the GPU's sampler (NVML), shared by every row. */
extern dd_tele_sampler *g_tele;

/* i8_bench.cu: the INT8 rows of one size (--types i8); the number of
 * failures.  g_i8_skipped: sizes skipped, no own INT8 GEMM on this GPU. */
int i8_bench(const options &o, const env_info &env, shape sh, void *flush, size_t flush_bytes,
             cudaStream_t s, uint64_t *seed);
extern int g_i8_skipped;

} // namespace gb

#endif
