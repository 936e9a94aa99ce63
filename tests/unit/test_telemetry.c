/* test_telemetry.c — the NVML sampler (dd_telemetry.h): where NVML is
 * absent it says "not available" with NaN figures and never fails; where it
 * is present (a GPU host) it measures something plausible over 0.2 s; the
 * clock event reasons read as names. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "dd_telemetry.h"
#include "dd_check.h"

int main(void)
{
    char buf[160];
    CHECK(!strcmp(dd_tele_reasons(0, buf, sizeof buf), "none"), "no reason: '%s'", buf);
    CHECK(!strcmp(dd_tele_reasons(DD_TELE_IDLE, buf, sizeof buf), "none"), "idle: '%s'", buf);
    dd_tele_reasons(DD_TELE_SW_POWER_CAP | DD_TELE_HW_SLOWDOWN | DD_TELE_HW_THERMAL, buf,
                    sizeof buf);
    CHECK(!strcmp(buf, "SW power cap, HW slowdown, HW thermal"), "reasons: '%s'", buf);
    dd_tele_reasons(~0ull, buf, 8); /* truncated, still terminated */
    CHECK(strlen(buf) < 8, "truncation: '%s'", buf);

    /* a bus id no machine has: not available, never an error */
    dd_telemetry t;
    dd_tele_sampler *s = dd_tele_open("ffff:ff:1f.7", -1);
    dd_tele_start(s);
    dd_tele_stop(s, &t);
    dd_tele_close(s);
    CHECK(!t.available && t.why[0] && isnan(t.energy_j) && isnan(t.sm_mhz_mean),
          "an absent GPU: available %d why '%s'", t.available, t.why);

    /* NVML's first device, where there is one */
    s = dd_tele_open(NULL, 0);
    dd_tele_start(s);
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL);
    dd_tele_stop(s, &t);
    dd_tele_close(s);
    if (!t.available) {
        printf("telemetry not available here: %s\n", t.why);
        CHECK(t.why[0] && isnan(t.power_w_mean), "unavailable without a reason");
    } else {
        printf("telemetry: %d samples over %.3f s, SM %.0f/%.0f/%.0f MHz, %.1f W (max %.1f, "
               "limit %.0f), %.2f J (%s), %.0f C, reasons %s\n",
               t.samples, t.seconds, t.sm_mhz_mean, t.sm_mhz_min, t.sm_mhz_max, t.power_w_mean,
               t.power_w_max, t.power_limit_w, t.energy_j,
               t.energy_from_counter ? "counter" : "estimated", t.temp_c,
               dd_tele_reasons(t.reasons, buf, sizeof buf));
        CHECK(t.samples >= 3 && t.seconds >= 0.19 && t.sm_mhz_min > 0 &&
                   t.sm_mhz_min <= t.sm_mhz_mean && t.sm_mhz_mean <= t.sm_mhz_max &&
                   t.power_w_mean > 0 && t.energy_j >= 0,
              "implausible figures");
    }
    return g_fail != 0;
}
