/* ozaki2_s_ref.h — the FP32 Ozaki scheme II on the host (ozaki2_s.h): a
 * plain C reference of what the GPU kernel's FP32 launchers (ozaki2_s.cu)
 * do, the modular products by ozaki2_ref.c's integer pipeline.  For tests;
 * row-major like kernel.h. */
#ifndef DD_OZAKI2_S_REF_H
#define DD_OZAKI2_S_REF_H

#include <stdint.h>

#include "ozaki2_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C(m×n, ldc) = A(m×k, lda)·B(k×n, ldb) + beta·C (beta 0 or 1), FP32 in
 * and out, through the scheme with o->moduli (0: oz2s_auto_moduli(k);
 * else OZ2S_MIN_MODULI..OZ2S_MAX_MODULI); k in chunks of o->kchunk (0:
 * OZ2_KCHUNK).  Out of range inputs (non-finite values, rows or columns of
 * too wide a range) are computed by oz2s_ref_native_wide instead, unless
 * o->force.  Returns 0, or -1 on bad arguments / out of memory. */
int oz2s_ref_sgemm(const oz2_ref_opts *o, int64_t m, int64_t n, int64_t k, const float *A,
                   int64_t lda, const float *B, int64_t ldb, int beta, float *C, int64_t ldc,
                   oz2_ref_result *res);

/* The fallback, what the GPU's sgemm_dmma computes: products and sums in
 * FP64, each C value (with C's old value for beta 1) rounded to FP32 once. */
void oz2s_ref_native_wide(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                          const float *B, int64_t ldb, int beta, float *C, int64_t ldc);

/* SGEMM's arithmetic: a triple loop accumulating in FP32 (the accuracy
 * the emulation is held to). */
void oz2s_ref_native_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                         const float *B, int64_t ldb, int beta, float *C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
