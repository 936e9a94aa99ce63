/* i8gemm.h — the project's INT8 GEMM on Hopper (i8gemm.cu), the product of
 * ozaki2.  Batched, both operands k-contiguous ("TN"):
 *     C_q(m×n) = A_q(m×k) · B_q(n×k)^T,    q = 0 .. batch-1,
 * A_q = A + q·sa (row i at A_q + i·lda), B_q = B + q·sb (row j at B_q +
 * j·ldb), INT8 in, exact INT32 (k·128² < 2^31: k ≤ 131071).  Enqueues on
 * the stream, never synchronises; returns a cudaError_t as int. */
#ifndef DD_I8GEMM_H
#define DD_I8GEMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most products one fused (residue) call takes. */
#define DD_I8GEMM_MAX_MOD 32

/* 1 when the current device can run it: compute capability 9.0 and a build
 * with sm_90a code (CMake adds it when the architectures include 90). */
int dd_i8gemm_available(void);

/* INT32 out: C_q = C + q·sc, row i at C_q + i·ldc.  Needs k ≥ 1; A, B
 * 16-byte aligned with lda, ldb, sa, sb multiples of 16; C 8-byte aligned
 * with ldc, sc even.  cudaErrorInvalidValue otherwise, cudaErrorNotSupported
 * where dd_i8gemm_available() is 0. */
int dd_i8gemm_s32(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A, int64_t lda,
                  int64_t sa, const int8_t *B, int64_t ldb, int64_t sb, int32_t *C, int64_t ldc,
                  int64_t sc, void *stream);

/* Fused residues: entry (i, j) of product q written as its symmetric residue
 * modulo mod[q] (129 ≤ mod[q] ≤ 255 odd, or 256: [-(m-1)/2, (m-1)/2] resp.
 * [-128, 127], the values of oz2_symmod) into R_q = R + q·sr (INT8, row i
 * at R_q + i·ldr).  batch ≤ DD_I8GEMM_MAX_MOD; mod is host memory.  skip:
 * NULL, or a device word read first: nonzero, and nothing is computed
 * (ozaki2's range check has sent the multiply to native FP64). */
int dd_i8gemm_mod(int batch, int64_t m, int64_t n, int64_t k, const int8_t *A, int64_t lda,
                  int64_t sa, const int8_t *B, int64_t ldb, int64_t sb, const int *mod, int8_t *R,
                  int64_t ldr, int64_t sr, const unsigned int *skip, void *stream);

#ifdef __cplusplus
}
#endif

#endif
