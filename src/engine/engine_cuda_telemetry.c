/* engine_cuda_telemetry.c — the CUDA engine's telemetry ops (engine.h):
 * NVML's view of this rank's GPU (src/base/telemetry.c), found by its PCI
 * bus id so that the GPU is the same one whatever CUDA_VISIBLE_DEVICES
 * renumbered. */
#include <stdio.h>

#include "engine_cuda_impl.h"

dd_tele_sampler *cuda_telemetry_open(int device)
{
    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return dd_tele_open(NULL, device); /* NVML's numbering: right where nothing renumbers */
    }
    return dd_tele_open(bus, -1);
}

void cuda_telemetry_start(dd_engine *e)
{
    cuda_state *s = e->impl;
    if (s && s->tele)
        dd_tele_start(s->tele);
}

void cuda_telemetry_stop(dd_engine *e, dd_telemetry *t)
{
    cuda_state *s = e->impl;
    if (s && s->tele)
        dd_tele_stop(s->tele, t);
    else
        dd_tele_unavailable(t, "telemetry: the CUDA engine is not open");
}
