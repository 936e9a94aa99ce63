/* registry — kernel.h's list of kernels, made from kernels.def: the ladder
 * in the order of the seed article's story, the production kernels,
 * ozaki2, cuBLAS last; and the earlier names kept as aliases.  Adding a
 * kernel: one file defining its launchers (DD_LAUNCHER, launchers.h) and
 * one DD_KERNEL line in kernels.def; the registry, the launcher
 * declarations and the build follow from that line. */
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "launchers.h"

namespace
{

#define DD_REG_F64(fn) fn
#define DD_REG_NO_F64 NULL
#define DD_REG_F32(fn) fn
#define DD_REG_NO_F32 NULL
#define DD_KERNEL(file, name, f64, f32, slow, technique)                                           \
    {name, technique, DD_REG_##f64, DD_REG_##f32, slow, NULL, NULL},
#define DD_ALIAS(old, name)

const kernel_desc KERNELS[] = {
#include "kernels.def"
};

#undef DD_ALIAS
#undef DD_KERNEL

struct alias {
    const char *old, *name;
};
#define DD_KERNEL(file, name, f64, f32, slow, technique)
#define DD_ALIAS(old, name) {old, name},

const alias ALIASES[] = {
#include "kernels.def"
    {NULL, NULL}};

#undef DD_ALIAS
#undef DD_KERNEL

const kernel_desc *find_name(const char *name)
{
    int n = 0;
    const kernel_desc *k = kernel_list(&n);
    for (int i = 0; i < n; ++i)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

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
    if (const kernel_desc *kd = find_name(name))
        return kd;
    for (const alias *a = ALIASES; a->old; ++a)
        if (strcmp(a->old, name) == 0)
            return find_name(a->name);
    return NULL;
}

extern "C" const char *kernel_alias(int i, const kernel_desc **kd)
{
    const int n = (int)(sizeof ALIASES / sizeof ALIASES[0]) - 1;
    if (i < 0 || i >= n)
        return NULL;
    if (kd)
        *kd = find_name(ALIASES[i].name);
    return ALIASES[i].old;
}

extern "C" const char *kernel_default(int is_f64)
{
    return is_f64 ? DD_KERNEL_DEFAULT_F64 : DD_KERNEL_DEFAULT_F32;
}

/* ozaki2 slices both panels on every multiply, and deeper INT8 products
 * amortise that: its SUMMA panel is 8192 (kernels/README.md has the
 * measurement). */
extern "C" int64_t kernel_panel(const kernel_desc *kd)
{
    return kd && !strncmp(kd->name, "ozaki2", 6) ? 8192 : 0;
}

extern "C" void kernel_shutdown(void)
{
    kernel_cublas_shutdown();
    dd_emu_cublas_shutdown();
    dd_ozaki2_shutdown();
}

extern "C" const char *kernel_note(void)
{
    static char buf[800];
    const char *oz = dd_ozaki2_note(), *sg = dd_sgemm_dmma_note();
    snprintf(buf, sizeof buf, "%s%s%s", oz, oz[0] && sg[0] ? "; " : "", sg);
    return buf;
}
