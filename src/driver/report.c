/* report.c — the text report (report.h); the JSON record is report_json.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *const dd_phase_names[PH_COUNT] = {"setup",    "read",         "upload",
                                              "multiply", "exposed_comm", "download",
                                              "check",    "write",        "teardown"};

const char *report_phase_name(const dd_record *r, int i)
{
    return i == PH_READ && r->generated ? "generate" : dd_phase_names[i];
}

const char *const dd_setup_part_names[SP_COUNT] = {"launch",  "mpi",  "inputs", "devices",
                                                   "plan",    "comm", "memory", "warm"};

double report_setup_part(const dd_record *r, int i)
{
    double t0 = r->setup_at[i], t1 = r->setup_at[i + 1];
    return t0 > 0 && t1 >= t0 ? t1 - t0 : 0;
}

/* "  setup: launch 0.31 s · mpi 0.12 s · ..." under the phase table. */
static void print_setup_parts(FILE *f, const dd_record *r)
{
    if (!r->have[PH_SETUP] || r->setup_at[0] <= 0)
        return;
    fprintf(f, "  setup in");
    for (int i = 0; i < SP_COUNT; i++)
        fprintf(f, "%s %s %.3f s", i ? " ·" : "", dd_setup_part_names[i], report_setup_part(r, i));
    fputc('\n', f);
}

double report_unaccounted(const dd_record *r)
{
    /* this rank's own phases, which follow one another in its wall (the
     * maxima over ranks come from different ranks and may add up to more) */
    double sum = r->multiply_all_own + r->host_to_host_own;
    for (int i = 0; i < PH_COUNT; i++)
        if (r->have[i] && i != PH_MULTIPLY && i != PH_EXPOSED)
            sum += r->ph[i].own - (r->pipeline_bands ? r->hidden[i].own : 0);
    return r->wall - sum;
}

void report_scalar(char *buf, size_t n, double re, double im)
{
    if (im == 0)
        snprintf(buf, n, "%g", re);
    else if (re == 0)
        snprintf(buf, n, "%gi", im);
    else
        snprintf(buf, n, "%g%+gi", re, im);
}

void report_expr(char *buf, size_t n, char transa, char transb, const double alpha[2],
                 const double beta[2])
{
    char a[40] = "", b[40] = "", v[32];
    if (alpha[1] != 0 && alpha[0] != 0) { /* both parts: in parentheses */
        report_scalar(v, sizeof v, alpha[0], alpha[1]);
        snprintf(a, sizeof a, "(%s)·", v);
    } else if (alpha[0] != 1 || alpha[1] != 0) {
        report_scalar(v, sizeof v, alpha[0], alpha[1]);
        snprintf(a, sizeof a, "%s·", v);
    }
    if (beta[1] != 0 && beta[0] != 0) {
        report_scalar(v, sizeof v, beta[0], beta[1]);
        snprintf(b, sizeof b, " + (%s)·C", v);
    } else if (beta[1] != 0) { /* pure imaginary: its sign between the terms */
        snprintf(b, sizeof b, " %s %gi·C", beta[1] > 0 ? "+" : "-", fabs(beta[1]));
    } else if (beta[0] == 1 || beta[0] == -1) {
        snprintf(b, sizeof b, " %s C", beta[0] > 0 ? "+" : "-");
    } else if (beta[0] != 0) {
        snprintf(b, sizeof b, " %s %g·C", beta[0] > 0 ? "+" : "-", fabs(beta[0]));
    }
    snprintf(buf, n, "C = %s%s·%s%s", a,
             transa == 'T'   ? "Aᵀ"
             : transa == 'C' ? "Aᴴ"
                             : "A",
             transb == 'T'   ? "Bᵀ"
             : transb == 'C' ? "Bᴴ"
                             : "B",
             b);
}

void report_finish(dd_record *r)
{
    if (r->nrep <= 0)
        return;
    double *s = malloc(sizeof(double) * (size_t)r->nrep);
    if (!s)
        return;
    memcpy(s, r->mult_times, sizeof(double) * (size_t)r->nrep);
    r->tmed = dd_median_sort(s, r->nrep);
    r->tmin = s[0];
    free(s);
    /* alpha = 0 (both parts): nothing is multiplied (BLAS's rule), so no rate */
    double flops = r->alpha == 0 && r->alpha_im == 0 ? 0 : run_flops(r->type, r->M, r->N, r->K);
    r->tflops = r->tmed > 0 ? flops / r->tmed / 1e12 : 0;
}

static const char *human_time(double s, char *buf, size_t n)
{
    if (s < 1e-3)
        snprintf(buf, n, "%8.1f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, n, "%8.2f ms", s * 1e3);
    else
        snprintf(buf, n, "%8.3f s ", s);
    return buf;
}

/* human_time without its padding (for figures inside a sentence). */
static const char *short_time(double s, char *buf, size_t n)
{
    const char *t = human_time(s, buf, n);
    while (*t == ' ')
        t++;
    return t;
}

/* One line: the device name when every rank has the same, else "mixed". */
static void print_devices(FILE *f, const dd_record *r)
{
    const char *d = r->devices;
    fprintf(f, "devices   ");
    char first[160] = "";
    int same = 1;
    const char *nl = strchr(d, '\n');
    size_t l = nl ? (size_t)(nl - d) : strlen(d);
    if (l >= sizeof first)
        l = sizeof first - 1;
    memcpy(first, d, l);
    for (const char *p = d; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len != strlen(first) || strncmp(p, first, len))
            same = 0;
        p = e ? e + 1 : p + len;
    }
    if (same)
        fprintf(f, "%d × %s\n", r->ranks, first);
    else
        fprintf(f, "mixed (see JSON record)\n");
}

/* Each panel's local multiply on its slowest rank: the fastest, median
 * and slowest of those, and how far apart the ranks were on one panel. */
static void print_panels(FILE *f, const dd_record *r)
{
    if (r->npanel <= 0)
        return;
    int64_t slow = 0, fast = 0;
    double spread = 0, med = NAN;
    for (int64_t i = 0; i < r->npanel; i++) {
        slow = r->panel_max[i] > r->panel_max[slow] ? i : slow;
        fast = r->panel_max[i] < r->panel_max[fast] ? i : fast;
        if (r->panel_min[i] > 0 && r->panel_max[i] / r->panel_min[i] - 1 > spread)
            spread = r->panel_max[i] / r->panel_min[i] - 1;
    }
    double *s = malloc((size_t)r->npanel * sizeof *s);
    if (s) { /* without it the line goes without the median (NaN: "?") */
        memcpy(s, r->panel_max, (size_t)r->npanel * sizeof *s);
        med = dd_median_sort(s, (int)r->npanel);
        free(s);
    }
    char a[32], b[32], c[32];
    fprintf(f,
            "panels    %lld, local multiply of each on its slowest rank: fastest %s, median %s, "
            "slowest %s (panel %lld)",
            (long long)r->npanel, short_time(r->panel_max[fast], a, sizeof a),
            isnan(med) ? "?" : short_time(med, b, sizeof b),
            short_time(r->panel_max[slow], c, sizeof c), (long long)slow);
    if (r->ranks > 1)
        fprintf(f, "; ranks up to %.1f%% apart on one panel", 100 * spread);
    fputc('\n', f);
}

void report_print(FILE *f, const dd_record *r)
{
    char a[32], b[32], c[32], d[32], e[32], g[32], expr[96];
    const double alpha[2] = {r->alpha, r->alpha_im}, beta[2] = {r->beta, r->beta_im};
    report_expr(expr, sizeof expr, r->transa, r->transb, alpha, beta);
    fprintf(f, "dgemm-dist %s\n", DGEMM_DIST_VERSION_STRING);
    fprintf(f, "problem   %s  %s  M=%lld N=%lld K=%lld  (%s%s)\n", expr, dd_dtype_name(r->type),
            (long long)r->M, (long long)r->N, (long long)r->K, r->input,
            r->order && !strcmp(r->order, "col") ? "; files column-major: --order col" : "");
    fprintf(f, "grid      %dx%d on %d rank%s   panel %lld   lookahead %d\n", r->P, r->Q, r->ranks,
            r->ranks == 1 ? "" : "s", (long long)r->nb, r->lookahead);
    if (r->output)
        fprintf(f, "output    %s\n", r->output);
    fprintf(f, "backend   %s (%s)\n", r->backend, r->backend_why);
    fprintf(f, "kernel    %s\n", r->kernel);
    if (r->accuracy_why)
        fprintf(f, "accuracy  fp64: %s\n", r->accuracy_why);
    if (r->kernel_note)
        fprintf(f, "kernel    note: %s\n", r->kernel_note);
    fprintf(f, "comm      %s: %s\n", r->comm, r->comm_detail);
    if (r->io)
        fprintf(f, "io        %s\n", r->io);
    fprintf(f, "hosts     %s\n", r->hosts ? r->hosts : "?");
    if (r->devices)
        print_devices(f, r);
    fprintf(f, "versions  MPI: %s | HDF5 %s | %s", r->v_mpi, r->v_hdf5, r->v_blas);
    if (r->v_engine && *r->v_engine && strcmp(r->v_engine, r->v_blas))
        fprintf(f, " | %s", r->v_engine);
    fprintf(f, "\n\n%-14s %11s %11s %11s\n", "phase", "min", "avg", "max");
    for (int i = 0; i < PH_COUNT; i++) {
        if (!r->have[i])
            continue;
        fprintf(f, "%-14s %11s %11s %11s\n", i == PH_EXPOSED ? "  exposed comm" : report_phase_name(r, i),
                human_time(r->ph[i].min, a, sizeof a), human_time(r->ph[i].avg, b, sizeof b),
                human_time(r->ph[i].max, c, sizeof c));
        if (i == PH_SETUP)
            print_setup_parts(f, r);
    }
    if (r->pipeline_bands)
        fprintf(f,
                "pipeline  %lld bands of C: read %s (%s hidden) · multiply %s · write %s (%s "
                "hidden), slowest rank; band loop %s, slots %s\n",
                (long long)r->pipeline_bands, human_time(r->ph[PH_READ].max, a, sizeof a),
                human_time(r->hidden[PH_READ].max, b, sizeof b),
                human_time(r->ph[PH_MULTIPLY].max, c, sizeof c),
                human_time(r->ph[PH_WRITE].max, d, sizeof d),
                human_time(r->hidden[PH_WRITE].max, e, sizeof e),
                human_time(r->pipeline_wall, g, sizeof g),
                r->pipeline_slots ? r->pipeline_slots : "in place");
    fprintf(f, "\nmultiply  %d timed (+%d warm-up): min %s  median %s%s\n", r->nrep, r->warmup,
            human_time(r->tmin, a, sizeof a), human_time(r->tmed, b, sizeof b),
            r->nrep > 1 ? "  (the slowest rank's; the table shows each rank's in the median "
                          "repetition)"
                        : "");
    /* GFLOP/s where TFLOP/s would read 0.00355 (the record keeps TFLOP/s) */
    double scale = r->tflops < 1 ? 1e3 : 1;
    const char *unit = r->tflops < 1 ? "GFLOP/s" : "TFLOP/s";
    fprintf(f, "rate      %.4g %s total, %.4g %s per %s\n", r->tflops * scale, unit,
            r->tflops * scale / r->ranks, unit, r->gpus ? "GPU" : "rank");
    fprintf(f, "exposed   %.1f%% of the multiply phase spent waiting for panels\n",
            100.0 * r->exposed_fraction);
    print_panels(f, r);
    report_telemetry_print(f, r);
    if (r->wall > 0)
        fprintf(f,
                "wall      %s from the launch; %s in all %d multiplies; %s (%.1f%%) in no "
                "phase\n",
                human_time(r->wall, a, sizeof a), human_time(r->multiply_all, b, sizeof b),
                r->nrep + r->warmup, human_time(report_unaccounted(r), c, sizeof c),
                100.0 * report_unaccounted(r) / r->wall);
    if (r->host_to_host > 0)
        fprintf(f,
                "host-to-host %s = %.4g TFLOP/s (A, B streamed up behind the multiply, C down)\n",
                human_time(r->host_to_host, a, sizeof a),
                run_flops(r->type, r->M, r->N, r->K) / r->host_to_host / 1e12);
    if (r->tune_line)
        fprintf(f, "%s\n", r->tune_line);
    if (r->model_line)
        fprintf(f, "model     %s\n", r->model_line);
    if (r->checked) {
        char line[256];
        dd_check_line(&r->chk, line, sizeof line);
        fprintf(f, "%s\n", line);
    }
    fflush(f);
}
