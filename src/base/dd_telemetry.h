/* dd_telemetry.h — what a GPU did while it computed: SM clock, power,
 * energy, the reasons its clocks were held down, its temperature (NVML).
 *
 * NVML is opened at run time (dlopen of libnvidia-ml.so.1, which the driver
 * installs), so nothing links against it and no nvml.h is needed to build;
 * where it is absent (CPU machines, containers without the driver's
 * libraries, a device NVML cannot find) the sampler says "not available"
 * and every figure is NaN: never an error.
 *
 *     dd_tele_sampler *s = dd_tele_open(pci_bus_id, -1);  // never NULL
 *     dd_tele_start(s);                 // a thread samples every ~20 ms
 *     ... the work ...
 *     dd_telemetry t;
 *     dd_tele_stop(s, &t);              // means, extremes, energy, reasons
 *     dd_tele_close(s);
 *
 * Host C (C11 + POSIX threads); usable from C++ (gemm-bench). */
#ifndef DD_TELEMETRY_H
#define DD_TELEMETRY_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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

typedef struct dd_tele_sampler dd_tele_sampler;

/* The device with this PCI bus id ("0000:3b:00.0", as cudaDeviceGetPCIBusId
 * writes it: the same GPU whatever CUDA_VISIBLE_DEVICES renumbered), or,
 * with pci_bus_id NULL, NVML's device `index`.  Never NULL: a sampler that
 * cannot measure says why in its results. */
dd_tele_sampler *dd_tele_open(const char *pci_bus_id, int index);
void dd_tele_start(dd_tele_sampler *s);
void dd_tele_stop(dd_tele_sampler *s, dd_telemetry *out);
void dd_tele_close(dd_tele_sampler *s);
/* A telemetry record that says "not available: <why>". */
void dd_tele_unavailable(dd_telemetry *t, const char *why);
/* "SW power cap, HW slowdown" (the GPU-idle bit left out, as it says
 * nothing of a busy GPU); "none" when no reason is set. */
const char *dd_tele_reasons(unsigned long long bits, char *buf, size_t len);
/* t as a JSON object, its closing brace left to the caller (who may add
 * fields): {"available":..., "why"} or the figures and "reasons" as an
 * array of names.  The report's record and gemm-bench write this one. */
void dd_tele_json_open(FILE *f, const dd_telemetry *t);
/* The clock-event reasons in bits as a JSON array of names. */
void dd_tele_json_reasons(FILE *f, unsigned long long bits);

#ifdef __cplusplus
}
#endif

#endif
