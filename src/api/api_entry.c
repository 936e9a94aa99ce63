/* api_entry.c — the public multiply entry points (dgemm_dist.h): each
 * fills one gemm_call (api_impl.h) and runs it (api_gemm.c). */
#include "api_impl.h"

/* dd_gemm and dd_gemm_device, either type: the 2-D block layout. */
static dd_status block_call(dd_context *ctx, dd_dtype t, int device, char transa, char transb,
                            int64_t M, int64_t N, int64_t K, double alpha, const void *A,
                            int64_t lda, const void *B, int64_t ldb, double beta, void *C,
                            int64_t ldc, dd_gemm_info *info)
{
    gemm_call g = {.ctx = ctx,
                   .t = t,
                   .ta = transa,
                   .tb = transb,
                   .M = M,
                   .N = N,
                   .K = K,
                   .alpha = alpha,
                   .beta = beta,
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
    return block_call(ctx, DD_F64, 0, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}

dd_status dd_sgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                   float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                   float beta, float *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F32, 0, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}

dd_status dd_gemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                         double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                         double beta, double *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F64, 1, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}

dd_status dd_sgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, float alpha, const float *A, int64_t lda, const float *B,
                          int64_t ldb, float beta, float *C, int64_t ldc, dd_gemm_info *info)
{
    return block_call(ctx, DD_F32, 1, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                      info);
}

/* dd_pgemm, either type: descriptors and offsets. */
static dd_status desc_call(dd_context *ctx, dd_dtype t, int device, char transa, char transb,
                           int64_t M, int64_t N, int64_t K, double alpha, const void *A, int64_t ia,
                           int64_t ja, const dd_matrix_desc *descA, const void *B, int64_t ib,
                           int64_t jb, const dd_matrix_desc *descB, double beta, void *C,
                           int64_t ic, int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    gemm_call g = {.ctx = ctx,
                   .t = t,
                   .ta = transa,
                   .tb = transb,
                   .M = M,
                   .N = N,
                   .K = K,
                   .alpha = alpha,
                   .beta = beta,
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
    return desc_call(ctx, DD_F64, 0, transa, transb, M, N, K, alpha, A, ia, ja, descA, B, ib, jb,
                     descB, beta, C, ic, jc, descC, info);
}

dd_status dd_psgemm(dd_context *ctx, char transa, char transb, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t ia, int64_t ja,
                    const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                    const dd_matrix_desc *descB, float beta, float *C, int64_t ic, int64_t jc,
                    const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F32, 0, transa, transb, M, N, K, alpha, A, ia, ja, descA, B, ib, jb,
                     descB, beta, C, ic, jc, descC, info);
}

dd_status dd_pgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                          int64_t K, double alpha, const double *A, int64_t ia, int64_t ja,
                          const dd_matrix_desc *descA, const double *B, int64_t ib, int64_t jb,
                          const dd_matrix_desc *descB, double beta, double *C, int64_t ic,
                          int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F64, 1, transa, transb, M, N, K, alpha, A, ia, ja, descA, B, ib, jb,
                     descB, beta, C, ic, jc, descC, info);
}

dd_status dd_psgemm_device(dd_context *ctx, char transa, char transb, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t ia, int64_t ja,
                           const dd_matrix_desc *descA, const float *B, int64_t ib, int64_t jb,
                           const dd_matrix_desc *descB, float beta, float *C, int64_t ic,
                           int64_t jc, const dd_matrix_desc *descC, dd_gemm_info *info)
{
    return desc_call(ctx, DD_F32, 1, transa, transb, M, N, K, alpha, A, ia, ja, descA, B, ib, jb,
                     descB, beta, C, ic, jc, descC, info);
}
