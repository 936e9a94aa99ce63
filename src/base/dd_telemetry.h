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

#include "dgemm_dist_telemetry.h" /* src/abi: dd_telemetry, DD_TELE_* */

#ifdef __cplusplus
extern "C" {
#endif

/* The clock event reason bits (DD_TELE_*) and dd_telemetry, the figures
 * themselves, are defined once in src/abi/dgemm_dist_telemetry.h, a leaf
 * that the library's tool header (include/dgemm_dist_tool.h) includes too:
 * the library hands these figures to the dgemm-dist program as they are. */

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
