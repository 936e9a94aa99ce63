/* dgemm_dist_telemetry.h — what a GPU did while it computed: SM clock,
 * power, energy, the reasons its clock was held down, its temperature,
 * read through NVML where the driver provides it.
 *
 * A leaf: plain C data, no includes, no MPI.  It is the one definition
 * that two sides share byte for byte: base's sampler fills it
 * (src/base/dd_telemetry.h, which includes it), and the library hands it
 * to the dgemm-dist program through the tool-facing header
 * (include/dgemm_dist_tool.h, dd_plan_telemetry_stop), which includes it
 * too.  It lives in src/abi, not include/, so that base includes nothing
 * of the public headers; it is installed with them. */
#ifndef DGEMM_DIST_TELEMETRY_H
#define DGEMM_DIST_TELEMETRY_H

/* NVML's clock event reasons (nvmlClocksEventReason*), the bits of
 * dd_telemetry.reasons that say why the SM clock was below its maximum. */
#define DD_TELE_IDLE 0x1ull
#define DD_TELE_APP_CLOCKS 0x2ull
#define DD_TELE_SW_POWER_CAP 0x4ull
#define DD_TELE_HW_SLOWDOWN 0x8ull
#define DD_TELE_SYNC_BOOST 0x10ull
#define DD_TELE_SW_THERMAL 0x20ull
#define DD_TELE_HW_THERMAL 0x40ull
#define DD_TELE_HW_POWER_BRAKE 0x80ull
#define DD_TELE_DISPLAY_CLOCKS 0x100ull

/* Figures between start and stop.  available = 0: nothing was measured
 * (why says so) and every number is NaN.  A figure NVML refuses on this
 * device (e.g. the energy counter before Volta) is NaN alone. */
typedef struct {
    int available;
    char why[120];
    int samples;                                /* clock/power samples taken */
    double seconds;                             /* start to stop */
    double sm_mhz_mean, sm_mhz_min, sm_mhz_max; /* SM clock */
    double power_w_mean, power_w_max;           /* board power */
    double energy_j;         /* energy counter's difference (or mean power × seconds where none) */
    int energy_from_counter; /* 1: the counter; 0: estimated from the samples */
    double power_limit_w;    /* enforced power limit */
    double temp_c;           /* GPU temperature at stop */
    unsigned long long reasons; /* union of the clock event reasons seen */
} dd_telemetry;

#endif
