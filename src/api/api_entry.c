/* api_entry.c — the public multiply entry points (dgemm_dist.h): each
 * fills one gemm_call (api_impl.h) and runs it (api_gemm.c). */
#include "api_impl.h"

/* A scalar as (real, imaginary) parts, for block_call and desc_call. */
#define R(x) ((const double[2]){(double)(x), 0})
#define Z(x) ((const double[2]){(double)(x).re, (double)(x).im})

/* dd_gemm and dd_gemm_device, any type: the 2-D block layout. */
static dd_status block_call(dd_context *ctx, dd_dtype t, int device, char transa, char transb,
                            int64_t M, int64_t N, int64_t K, const double alpha[2], const void *A,
                            int64_t lda, const void *B, int64_t ldb, const double beta[2], void *C,
                            int64_t ldc, dd_gemm_info *info)
{
    gemm_call g = {.ctx = ctx,
                   .t = t,
                   .ta = transa,
                   .tb = transb,
                   .M = M,
                   .N = N,
                   .K = K,
                   .alpha = alpha[0],
                   .beta = beta[0],
                   .alpha_im = alpha[1],
                   .beta_im = beta[1],
                   .a = {.p = A, .ld = lda},
                   .b = {.p = B, .ld = ldb},
                   .c = {.p = C, .ld = ldc},
                   .device = device};
    return api_gemm(&g, info);
}

dd_status dd_gemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                  double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                  double beta, double *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F64, 0, transa, transb, M, N, K, R(alpha), A, lda, B, ldb, R(beta), C,
                      ldc, info);
}

dd_status dd_sgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float beta, float *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F32, 0, transa, transb, M, N, K, R(alpha), A, lda, B, ldb, R(beta), C,
                      ldc, info);
}

dd_status dd_gemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                         double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                         double beta, double *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F64, 1, transa, transb, M, N, K, R(alpha), A, lda, B, ldb, R(beta), C,
                      ldc, info);
}

dd_status dd_sgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                          int64_t ldb, float beta, float *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F32, 1, transa, transb, M, N, K, R(alpha), A, lda, B, ldb, R(beta), C,
                      ldc, info);
}

dd_status dd_zgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   dd_complex128 alpha, const dd_complex128 *A, int64_t lda,
                   const dd_complex128 *B, int64_t ldb, dd_complex128 beta, dd_complex128 *C,
                   int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_C128, 0, transa, transb, M, N, K, Z(alpha), A, lda, B, ldb, Z(beta), C,
                      ldc, info);
}

dd_status dd_cgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   dd_complex64 alpha, const dd_complex64 *A, int64_t lda, const dd_complex64 *B,
                   int64_t ldb, dd_complex64 beta, dd_complex64 *C, int64_t ldc,
                   dd_gemm_info *info)
{
    return block_call(ctx, DD_C64, 0, transa, transb, M, N, K, Z(alpha), A, lda, B, ldb, Z(beta), C,
                      ldc, info);
}

dd_status dd_zgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, dd_complex128 alpha, const dd_complex128 *A, int64_t lda,
                          const dd_complex128 *B, int64_t ldb, dd_complex128 beta,
                          dd_complex128 *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_C128, 1, transa, transb, M, N, K, Z(alpha), A, lda, B, ldb, Z(beta), C,
                      ldc, info);
}

dd_status dd_cgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, dd_complex64 alpha, const dd_complex64 *A, int64_t lda,
                          const dd_complex64 *B, int64_t ldb, dd_complex64 beta, dd_complex64 *C,
                          int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_C64, 1, transa, transb, M, N, K, Z(alpha), A, lda, B, ldb, Z(beta), C,
                      ldc, info);
}

/* dd_pgemm, any type: descriptors and offsets. */
static dd_status desc_call(dd_context *ctx, dd_dtype t, int device, char transa, char transb,
                           int64_t M, int64_t N, int64_t K, const double alpha[2], const void *A,
                           int64_t ia, int64_t ja, const dd_matrix_desc *descA, const void *B,
                           int64_t ib, int64_t jb, const dd_matrix_desc *descB,
                           const double beta[2], void *C,
                           int64_t ic, int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    gemm_call g = {.ctx = ctx,
                   .t = t,
                   .ta = transa,
                   .tb = transb,
                   .M = M,
                   .N = N,
                   .K = K,
                   .alpha = alpha[0],
                   .beta = beta[0],
                   .alpha_im = alpha[1],
                   .beta_im = beta[1],
                   .a = {.p = A, .i = ia, .j = ja, .d = descA},
                   .b = {.p = B, .i = ib, .j = jb, .d = descB},
                   .c = {.p = C, .i = ic, .j = jc, .d = descC},
                   .desc = 1,
                   .device = device};
    return api_gemm(&g, info);
}

dd_status dd_pgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   double alpha, const double *A, int64_t ia, int64_t ja,
                   const dd_matrix_desc *descA, const double *B, int64_t ib, int64_t jb,
                   const dd_matrix_desc *descB, double beta, double *C, int64_t ic, int64_t jc,
                   const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F64, 0, transa, transb, M, N, K, R(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, R(beta), C, ic, jc, descC, info);
}

dd_status dd_psgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, float beta, float *C, int64_t ic, int64_t jc,
                    const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F32, 0, transa, transb, M, N, K, R(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, R(beta), C, ic, jc, descC, info);
}

dd_status dd_pgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, double alpha, const double *A, int64_t ia, int64_t ja,
                          const dd_matrix_desc *descA, const double *B, int64_t ib, int64_t jb,
                          const dd_matrix_desc *descB, double beta, double *C, int64_t ic,
                          int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F64, 1, transa, transb, M, N, K, R(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, R(beta), C, ic, jc, descC, info);
}

dd_status dd_psgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t ia, int64_t ja,
                           const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                           const dd_matrix_desc *descB, float beta, float *C, int64_t ic,
                           int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F32, 1, transa, transb, M, N, K, R(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, R(beta), C, ic, jc, descC, info);
}

dd_status dd_pzgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    dd_complex128 alpha, const dd_complex128 *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const dd_complex128 *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, dd_complex128 beta, dd_complex128 *C, int64_t ic,
                    int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_C128, 0, transa, transb, M, N, K, Z(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, Z(beta), C, ic, jc, descC, info);
}

dd_status dd_pcgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    dd_complex64 alpha, const dd_complex64 *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const dd_complex64 *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, dd_complex64 beta, dd_complex64 *C, int64_t ic,
                    int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_C64, 0, transa, transb, M, N, K, Z(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, Z(beta), C, ic, jc, descC, info);
}

dd_status dd_pzgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, dd_complex128 alpha, const dd_complex128 *A, int64_t ia,
                           int64_t ja, const dd_matrix_desc *descA, const dd_complex128 *B,
                           int64_t ib, int64_t jb, const dd_matrix_desc *descB,
                           dd_complex128 beta, dd_complex128 *C, int64_t ic, int64_t jc,
                           const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_C128, 1, transa, transb, M, N, K, Z(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, Z(beta), C, ic, jc, descC, info);
}

dd_status dd_pcgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, dd_complex64 alpha, const dd_complex64 *A, int64_t ia,
                           int64_t ja, const dd_matrix_desc *descA, const dd_complex64 *B,
                           int64_t ib, int64_t jb, const dd_matrix_desc *descB, dd_complex64 beta,
                           dd_complex64 *C, int64_t ic, int64_t jc, const dd_matrix_desc *descC,
                           dd_gemm_info *info)
{
    return desc_call(ctx, DD_C64, 1, transa, transb, M, N, K, Z(alpha), A, ia, ja, descA, B, ib,
                     jb, descB, Z(beta), C, ic, jc, descC, info);
}
