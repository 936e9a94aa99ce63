/* report_telemetry.c — the GPUs' clock, power and energy in the report and
 * the record (report.h): rank 0's figures, and over several ranks the
 * slowest clock, the highest power, the total energy and the joules per
 * TFLOP of the timed multiplies. */
#include <math.h>
#include <string.h>

#include "dd_json.h"
#include "report.h"

typedef struct {
    double mhz_mean_min, mhz_min, power_mean_max, power_max, energy, temp_max, j_per_tflop;
    unsigned long long reasons;
    int available; /* ranks that measured */
} tele_over;

static double fmin_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a < b ? a : b;
}

static double fmax_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

/* Over the ranks that measured; NaN where none did.  Energy per TFLOP of
 * the timed multiplies (each repetition 2·M·N·K flops over all ranks). */
static tele_over over_ranks(const dd_record *r)
{
    tele_over o = {NAN, NAN, NAN, NAN, 0, NAN, NAN, 0, 0};
    for (int i = 0; i < r->ranks; i++) {
        const dd_telemetry *t = &r->tele[i];
        if (!t->available)
            continue;
        o.available++;
        o.mhz_mean_min = fmin_nan(o.mhz_mean_min, t->sm_mhz_mean);
        o.mhz_min = fmin_nan(o.mhz_min, t->sm_mhz_min);
        o.power_mean_max = fmax_nan(o.power_mean_max, t->power_w_mean);
        o.power_max = fmax_nan(o.power_max, t->power_w_max);
        o.temp_max = fmax_nan(o.temp_max, t->temp_c);
        o.energy += isnan(t->energy_j) ? 0 : t->energy_j;
        o.reasons |= t->reasons;
    }
    double tflop = run_flops(r->type, r->M, r->N, r->K) * r->nrep / 1e12;
    if (!o.available)
        o.energy = NAN;
    o.j_per_tflop = o.available == r->ranks && tflop > 0 && (r->alpha != 0 || r->alpha_im != 0)
                        ? o.energy / tflop
                        : NAN;
    return o;
}

void report_telemetry_print(FILE *f, const dd_record *r)
{
    if (!r->tele)
        return;
    const dd_telemetry *t = &r->tele[0];
    tele_over o = over_ranks(r);
    char why[160];
    if (!t->available) {
        fprintf(f, "GPU       telemetry not available on rank 0: %s\n", t->why);
        return;
    }
    fprintf(f,
            "GPU       %sSM clock mean/min/max %.0f/%.0f/%.0f MHz, power mean/max %.0f/%.0f W "
            "(limit %.0f), energy %.4g J%s",
            r->ranks > 1 ? "rank 0: " : "", t->sm_mhz_mean, t->sm_mhz_min, t->sm_mhz_max,
            t->power_w_mean, t->power_w_max, t->power_limit_w, t->energy_j,
            t->energy_from_counter ? "" : " (estimated)");
    if (r->ranks == 1 && !isnan(o.j_per_tflop))
        fprintf(f, ", %.3g J per TFLOP", o.j_per_tflop);
    fprintf(f, ", %.0f C at end; limits seen: %s\n", t->temp_c,
            dd_tele_reasons(t->reasons, why, sizeof why));
    if (r->ranks == 1)
        return;
    fprintf(f,
            "          all %d: SM clock mean %.0f MHz (lowest rank), min %.0f; power max %.0f W; "
            "energy %.4g J",
            r->ranks, o.mhz_mean_min, o.mhz_min, o.power_max, o.energy);
    if (!isnan(o.j_per_tflop))
        fprintf(f, ", %.3g J per TFLOP", o.j_per_tflop);
    fprintf(f, "; limits seen: %s%s\n", dd_tele_reasons(o.reasons, why, sizeof why),
            o.available < r->ranks ? " (some ranks measured nothing)" : "");
}

/* The reasons as an array of names. */
static void json_one(FILE *f, const dd_telemetry *t)
{
    dd_tele_json_open(f, t);
    fputc('}', f);
}

void report_telemetry_json(FILE *f, const dd_record *r)
{
    fputs(",\"telemetry\":", f);
    if (!r->tele) {
        fputs("null", f);
        return;
    }
    tele_over o = over_ranks(r);
    fputs("{\"interval\":\"timed multiplies\",\"ranks\":[", f);
    for (int i = 0; i < r->ranks; i++) {
        if (i)
            fputc(',', f);
        json_one(f, &r->tele[i]);
    }
    fprintf(f, "],\"over_ranks\":{\"measured\":%d", o.available);
    dd_json_kv_num(f, "sm_mhz_mean_min", o.mhz_mean_min);
    dd_json_kv_num(f, "sm_mhz_min", o.mhz_min);
    dd_json_kv_num(f, "power_w_mean_max", o.power_mean_max);
    dd_json_kv_num(f, "power_w_max", o.power_max);
    dd_json_kv_num(f, "temp_c_max", o.temp_max);
    dd_json_kv_num(f, "energy_j", o.energy);
    dd_json_kv_num(f, "j_per_tflop", o.j_per_tflop);
    fputs(",\"reasons\":", f);
    dd_tele_json_reasons(f, o.reasons);
    fputs("}}", f);
}
