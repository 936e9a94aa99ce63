/* registry — kernel.h's list of kernels, made from kernels.def: the ladder
 * in the order of the seed article's story, cuBLAS last.  Adding a kernel:
 * one file kernels/NN_name.cu defining its launchers (DD_LAUNCHER, ladder.h)
 * and one DD_KERNEL line in kernels.def; the registry, the launcher
 * declarations, the build and kernels/run-gpu.sh all follow from that line. */
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "ladder.h"

namespace
{

#define DD_REG_F64(id) dd_##id##_dgemm
#define DD_REG_NO_F64(id) NULL
#define DD_REG_F32(id) dd_##id##_sgemm
#define DD_REG_NO_F32(id) NULL
#define DD_KERNEL(file, name, id, f64, f32, slow, technique)                                       \
    {name, technique, DD_REG_##f64(id), DD_REG_##f32(id), slow},

const kernel_desc KERNELS[] = {
#include "kernels.def"
};

#undef DD_KERNEL

} // namespace

extern "C" const kernel_desc *kernel_list(int *count)
{
    if (count)
        *count = (int)(sizeof KERNELS / sizeof KERNELS[0]);
    return KERNELS;
}

extern "C" const kernel_desc *kernel_find(const char *name)
{
    if (!name)
        return NULL;
    int n = 0;
    const kernel_desc *k = kernel_list(&n);
    for (int i = 0; i < n; ++i)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

extern "C" const char *kernel_default(int is_f64)
{
    return is_f64 ? DD_KERNEL_DEFAULT_F64 : DD_KERNEL_DEFAULT_F32;
}

/* ozaki2 at n = 32768 on one H200: panel 8192 took 1.09 s, 2048 1.82 s
 * (docs/results/h200-2026-12-01-ozaki2-i8). */
extern "C" int64_t kernel_panel(const kernel_desc *kd)
{
    return kd && !strncmp(kd->name, "ozaki2", 6) ? 8192 : 0;
}

/* ozaki2.cu and kernel_cublas_emu.cu */
extern "C" const char *dd_ozaki2_note(void);
extern "C" const char *dd_k24_note(void); /* 24_sgemm_dmma.cu */
extern "C" void dd_ozaki2_shutdown(void);
extern "C" void dd_emu_cublas_shutdown(void);

extern "C" void kernel_shutdown(void)
{
    kernel_cublas_shutdown();
    dd_emu_cublas_shutdown();
    dd_ozaki2_shutdown();
}

extern "C" const char *kernel_note(void)
{
    static char buf[800];
    const char *oz = dd_ozaki2_note(), *k24 = dd_k24_note();
    snprintf(buf, sizeof buf, "%s%s%s", oz, oz[0] && k24[0] ? "; " : "", k24);
    return buf;
}
