/* launchers.h — the launchers behind kernel.h's registry (private to
 * kernels/): the one signature every launcher has, the macro that defines
 * one, and the declarations of those kernels.def names.
 *
 * Production kernels (kernels/<name>.cu) and ladder rungs
 * (kernels/ladder/NN_name.cu) both define their launchers with DD_LAUNCHER;
 * registry.cu puts them in kernel_list(). */
#ifndef DD_LAUNCHERS_H
#define DD_LAUNCHERS_H

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter list of every launcher (kernel_dgemm_fn / kernel_sgemm_fn;
 * the complex kernel_zgemm_fn / kernel_cgemm_fn have the same, with T the
 * type of one component). */
#define DD_LAUNCHER_ARGS(T)                                                                        \
    int64_t m, int64_t n, int64_t k, const T *A, int64_t lda, const T *B, int64_t ldb, int beta,   \
        T *C, int64_t ldc, void *stream

/* The extern "C" launcher `name` for element type T, forwarding to the
 * C++ launch function given as the remaining arguments (which may hold
 * template commas). */
#define DD_LAUNCHER(name, T, ...)                                                                  \
    extern "C" int name(DD_LAUNCHER_ARGS(T))                                                       \
    {                                                                                              \
        return __VA_ARGS__(m, n, k, A, lda, B, ldb, beta, C, ldc, stream);                         \
    }

/* The declarations of every launcher kernels.def names. */
#define DD_DECL_F64(fn) int fn(DD_LAUNCHER_ARGS(double));
#define DD_DECL_NO_F64
#define DD_DECL_F32(fn) int fn(DD_LAUNCHER_ARGS(float));
#define DD_DECL_NO_F32
#define DD_DECL_Z(fn) int fn(DD_LAUNCHER_ARGS(double));
#define DD_DECL_NO_Z
#define DD_DECL_C(fn) int fn(DD_LAUNCHER_ARGS(float));
#define DD_DECL_NO_C
#define DD_KERNEL(file, name, f64, f32, slow, technique) DD_DECL_##f64 DD_DECL_##f32
#define DD_ALIAS(old, name)
#define DD_COMPLEX(name, z, c) DD_DECL_##z DD_DECL_##c
#include "kernels.def"
#undef DD_COMPLEX
#undef DD_ALIAS
#undef DD_KERNEL
#undef DD_DECL_F64
#undef DD_DECL_NO_F64
#undef DD_DECL_F32
#undef DD_DECL_NO_F32
#undef DD_DECL_Z
#undef DD_DECL_NO_Z
#undef DD_DECL_C
#undef DD_DECL_NO_C

/* dgemm_dmma gated on a device word (dgemm_dmma.cu): ozaki2's native
 * fallback, which multiplies only where the word is nonzero. */
int dd_dgemm_dmma_gated(DD_LAUNCHER_ARGS(double), const unsigned int *gate);
/* sgemm_dmma gated the same way (sgemm_dmma.cu): ozaki2's FP32 fallback
 * (ozaki2_s.cu); cudaErrorNotSupported where it cannot run (no TMA, no
 * workspace for its FP64 copies). */
int dd_sgemm_dmma_gated(DD_LAUNCHER_ARGS(float), const unsigned int *gate);
/* What sgemm_dmma.cu, ozaki2.cu, ozaki2_s.cu and the complex kernels
 * (cx_dmma.cuh) have to say for kernel_note(), and what kernel_shutdown()
 * frees in ozaki2.cu, ozaki2_s.cu and kernel_cublas_emu.cu. */
const char *dd_sgemm_dmma_note(void);
const char *dd_zgemm_dmma_note(void);
const char *dd_cgemm_dmma_note(void);
const char *dd_ozaki2_note(void);
const char *dd_ozaki2_counts(void);
void dd_ozaki2_shutdown(void);
const char *dd_ozaki2_s_note(void);
void dd_ozaki2_s_shutdown(void);
void dd_emu_cublas_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
