/* registry — kernel.h's list of kernels, made from kernels.def: the ladder
 * in the order of the seed article's story, the production kernels,
 * ozaki2, cuBLAS last; and the earlier names kept as aliases.  Adding a
 * kernel: one file defining its launchers (DD_LAUNCHER, launchers.h) and
 * one DD_KERNEL line in kernels.def (and a DD_COMPLEX line for its complex
 * launchers); the registry, the launcher declarations and the build follow
 * from those lines. */
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
#define DD_REG_Z(fn) fn
#define DD_REG_NO_Z nullptr
#define DD_REG_C(fn) fn
#define DD_REG_NO_C nullptr

/* The DD_COMPLEX lines: a kernel's complex launchers, by its name. */
struct complex_entry {
    const char *name;
    kernel_zgemm_fn z;
    kernel_cgemm_fn c;
};
#define DD_KERNEL(file, name, f64, f32, slow, technique)
#define DD_ALIAS(old, name)
#define DD_COMPLEX(name, z, c) {name, DD_REG_##z, DD_REG_##c},
constexpr complex_entry COMPLEX[] = {
#include "kernels.def"
    {nullptr, nullptr, nullptr}};
#undef DD_COMPLEX
#undef DD_ALIAS
#undef DD_KERNEL

constexpr bool same(const char *a, const char *b)
{
    return *a == *b && (*a == '\0' || same(a + 1, b + 1));
}
/* The DD_COMPLEX line of kernel `name`: its index in COMPLEX, or the
 * terminator's where it has none. */
constexpr int complex_of(const char *name, int i = 0)
{
    return !COMPLEX[i].name || same(COMPLEX[i].name, name) ? i : complex_of(name, i + 1);
}

#define DD_KERNEL(file, name, f64, f32, slow, technique)                                           \
    {name,         technique, DD_REG_##f64, DD_REG_##f32, slow, COMPLEX[complex_of(name)].z,      \
     COMPLEX[complex_of(name)].c},
#define DD_ALIAS(old, name)
#define DD_COMPLEX(name, z, c)

const kernel_desc KERNELS[] = {
#include "kernels.def"
};

#undef DD_COMPLEX
#undef DD_ALIAS
#undef DD_KERNEL

/* Every DD_COMPLEX line names a kernel of a DD_KERNEL line, once. */
constexpr int complex_lines(const char *name, int i = 0)
{
    return !COMPLEX[i].name ? 0 : same(COMPLEX[i].name, name) + complex_lines(name, i + 1);
}
#define DD_KERNEL(file, name, f64, f32, slow, technique) same(name, n) ? true:
#define DD_ALIAS(old, name)
#define DD_COMPLEX(name, z, c)
constexpr bool is_kernel(const char *n)
{
    return
#include "kernels.def"
        false;
}
#undef DD_COMPLEX
#undef DD_KERNEL
#define DD_KERNEL(file, name, f64, f32, slow, technique)
#define DD_COMPLEX(name, z, c)                                                                     \
    static_assert(is_kernel(name), "kernels.def: DD_COMPLEX(" name ") names no DD_KERNEL line");   \
    static_assert(complex_lines(name) == 1, "kernels.def: more than one DD_COMPLEX line for " name);
#include "kernels.def"
#undef DD_COMPLEX
#undef DD_ALIAS
#undef DD_KERNEL

struct alias {
    const char *old, *name;
};
#define DD_KERNEL(file, name, f64, f32, slow, technique)
#define DD_ALIAS(old, name) {old, name},
#define DD_COMPLEX(name, z, c)

const alias ALIASES[] = {
#include "kernels.def"
    {NULL, NULL}};

#undef DD_COMPLEX
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
    dd_ozaki2_s_shutdown();
}

extern "C" const char *kernel_counts(void)
{
    return dd_ozaki2_counts();
}

extern "C" const char *kernel_note(void)
{
    static char buf[1200];
    const char *part[] = {dd_ozaki2_note(), dd_ozaki2_s_note(), dd_sgemm_dmma_note(),
                          dd_zgemm_dmma_note(), dd_cgemm_dmma_note()};
    size_t len = 0;
    buf[0] = '\0';
    for (const char *p : part)
        if (p[0] && len < sizeof buf) {
            const int w = snprintf(buf + len, sizeof buf - len, "%s%s", len ? "; " : "", p);
            len += w > 0 ? (size_t)w : 0;
        }
    return buf;
}
