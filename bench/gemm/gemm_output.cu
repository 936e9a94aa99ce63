/* gemm_output.cu — gemm-bench's output (gemm_bench.h): the lines above the
 * table, one line of the table per row, and with --json one JSON record
 * per row (JSON Lines, written with src/base/dd_json.h).  The records'
 * keys are what kernels/ladder_table.py and docs/results' scripts read. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "dd.h" /* DD_CHECK_THRESHOLD */
#include "dd_json.h"
#include "gemm_bench.h"

namespace gb
{

/* Energy per run: the telemetry's energy over the runs it covered (the
 * interleaved rows share one window: no energy of their own). */
static double joules_per_run(const row &r)
{
    return r.tele.available && r.reps > 0 && strcmp(r.mode, "interleaved")
               ? r.tele.energy_j / r.reps
               : NAN;
}

static void print_row(const row &r, const char *dims)
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

static void json_telemetry(FILE *f, const row &r)
{
    fputs(",\"telemetry\":", f);
    dd_tele_json_open(f, &r.tele);
    if (r.tele.available)
        dd_json_kv_num(f, "energy_j_per_run", joules_per_run(r));
    fputc('}', f);
}

/* Six significant digits, as in the recorded results (docs/results/). */
enum { SIG = 6 };

static void json_record(FILE *f, const options &o, const env_info &env, const row &r)
{
    char ts[32], v[16];
    time_t now = time(nullptr);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fputs("{\"tool\":\"gemm-bench\"", f);
    dd_json_kv_str(f, "timestamp", ts);
    dd_json_kv_str(f, "command", o.command.c_str());
    dd_json_kv_str(f, "gpu", env.gpu);
    dd_json_kv_int(f, "sm_count", env.sms);
    snprintf(v, sizeof v, "%d.%d", env.cc_major, env.cc_minor);
    dd_json_kv_str(f, "cc", v);
    snprintf(v, sizeof v, "%d.%d", env.driver / 1000, (env.driver % 1000) / 10);
    dd_json_kv_str(f, "cuda_driver", v);
    snprintf(v, sizeof v, "%d.%d", env.runtime / 1000, (env.runtime % 1000) / 10);
    dd_json_kv_str(f, "cuda_runtime", v);
    dd_json_kv_str(f, "cublas", env.cublas);
    dd_json_kv_str(f, "kernel", r.kernel);
    dd_json_kv_str(f, "dtype", r.dtype);
    dd_json_kv_int(f, "m", r.s.m);
    dd_json_kv_int(f, "n", r.s.n);
    dd_json_kv_int(f, "k", r.s.k);
    dd_json_kv_int(f, "beta", r.beta);
    dd_json_kv_int(f, "reps", r.reps);
    dd_json_kv_int(f, "warmup", o.warmup);
    dd_json_kv_str(f, "mode", r.mode);
    if (!strcmp(r.mode, "sustained"))
        dd_json_kv_num_g(f, "sustain_seconds", r.seconds, SIG);
    dd_json_kv_num_g(f, "ms_median", r.ms_median, SIG);
    dd_json_kv_num_g(f, "ms_min", r.ms_min, SIG);
    dd_json_kv_num_g(f, "tflops", r.tflops, SIG);
    dd_json_kv_num_g(f, "pct_cublas", r.pct, SIG);
    dd_json_kv_num_g(f, "check_err", r.err, SIG);
    dd_json_kv_num_g(f, "check_threshold", DD_CHECK_THRESHOLD, SIG);
    dd_json_kv_str(f, "status", r.status);
    if (!r.note.empty())
        dd_json_kv_str(f, "note", r.note.c_str());
    json_telemetry(f, r);
    fputs("}\n", f);
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
    json_record(f, o, env, r);
    fclose(f);
}

void print_preamble(const options &o, const env_info &env, const char *telemetry)
{
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
    printf("# telemetry: %s; MHz: mean SM clock, W: mean power, J/run: energy per run, then "
           "the clock event reasons seen\n",
           telemetry);
    printf("%-22s %-4s %-19s %4s %-9s %10s %9s %9s %9s %6s %5s %8s  %s\n", "kernel", "type",
           "MxNxK", "beta", "mode", "ms", "TFLOP/s", "%cuBLAS", "check", "MHz", "W", "J/run",
           "status");
}

} // namespace gb
