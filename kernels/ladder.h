/* ladder.h — the launchers behind kernel.h's registry (private to kernels/).
 *
 * Each kernels/NN_name.cu defines dd_<id>_dgemm / dd_<id>_sgemm with the
 * signatures of kernel_dgemm_fn / kernel_sgemm_fn (DD_LAUNCHER below);
 * kernels.def lists them, and this header declares those it names. */
#ifndef DD_LADDER_H
#define DD_LADDER_H

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter list of every launcher (kernel_dgemm_fn / kernel_sgemm_fn). */
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
#define DD_DECL_F64(id) int dd_##id##_dgemm(DD_LAUNCHER_ARGS(double));
#define DD_DECL_NO_F64(id)
#define DD_DECL_F32(id) int dd_##id##_sgemm(DD_LAUNCHER_ARGS(float));
#define DD_DECL_NO_F32(id)
#define DD_KERNEL(file, name, id, f64, f32, slow, technique) DD_DECL_##f64(id) DD_DECL_##f32(id)
#include "kernels.def"
#undef DD_KERNEL
#undef DD_DECL_F64
#undef DD_DECL_NO_F64
#undef DD_DECL_F32
#undef DD_DECL_NO_F32

/* 23_dmma_pipe gated on a device word (10_dmma_tma.cu): ozaki2's fallback. */
int dd_k23_dgemm_gated(DD_LAUNCHER_ARGS(double), const unsigned int *gate);

#ifdef __cplusplus
}
#endif

#endif
