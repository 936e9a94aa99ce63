/* ladder.h — the launchers behind kernel.h's registry (private to kernels/).
 *
 * Each kernels/NN_name.cu defines dd_kNN_dgemm / dd_kNN_sgemm with the
 * signatures of kernel_dgemm_fn / kernel_sgemm_fn; registry.cu lists them.
 * Extra configurations of the production kernels (for tuning with
 * `gemm-bench --variants`) are listed by kernel_variants(). */
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

#define DD_DECLARE_LAUNCHERS(nn)                                                                   \
    int dd_k##nn##_dgemm(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,            \
                         const double *B, int64_t ldb, int beta, double *C, int64_t ldc,           \
                         void *stream);                                                            \
    int dd_k##nn##_sgemm(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,             \
                         const float *B, int64_t ldb, int beta, float *C, int64_t ldc,             \
                         void *stream);

DD_DECLARE_LAUNCHERS(01)
DD_DECLARE_LAUNCHERS(02)
DD_DECLARE_LAUNCHERS(03)
DD_DECLARE_LAUNCHERS(04)
DD_DECLARE_LAUNCHERS(05)
DD_DECLARE_LAUNCHERS(06)
DD_DECLARE_LAUNCHERS(07)

/* 08 is FP64 only. */
int dd_k08_dgemm(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
                 int64_t ldb, int beta, double *C, int64_t ldc, void *stream);

int dd_cublas_dgemm(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
                    int64_t ldb, int beta, double *C, int64_t ldc, void *stream);
int dd_cublas_sgemm(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda, const float *B,
                    int64_t ldb, int beta, float *C, int64_t ldc, void *stream);

#ifdef DD_KERNEL_VARIANTS
int dd_k07v_sgemm_bk16s4(DD_LAUNCHER_ARGS(float));
int dd_k07v_sgemm_bk8s4(DD_LAUNCHER_ARGS(float));
int dd_k07v_sgemm_bk32s3(DD_LAUNCHER_ARGS(float));
int dd_k08v_dgemm_bk16s4(DD_LAUNCHER_ARGS(double));
int dd_k08v_dgemm_bk32s3(DD_LAUNCHER_ARGS(double));
int dd_k08v_dgemm_pipe16(DD_LAUNCHER_ARGS(double));
int dd_k08v_dgemm_128x64(DD_LAUNCHER_ARGS(double));
#endif

/* Other configurations of the production kernels, not in kernel_list():
 * named "<kernel>@<config>", for gemm-bench --variants. */
const kernel_desc *kernel_variants(int *count);

#ifdef __cplusplus
}
#endif

#endif
