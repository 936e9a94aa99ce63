/* ozaki2_ref.h — the Ozaki scheme II on the host (ozaki2.h): a plain C
 * reference of what the GPU kernel ozaki2 does, INT8 products by integer
 * loops.  For tests; row-major like kernel.h. */
#ifndef DD_OZAKI2_REF_H
#define DD_OZAKI2_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int moduli; /* 0: oz2_auto_moduli(k) */
    int force;  /* 1: never fall back (to measure the emulation out of range) */
    int kchunk; /* 0: OZ2_KCHUNK; smaller to exercise the chunked path */
    int guard;  /* 1: the accuracy guard (ozaki2.h) picks the moduli per chunk
                   (moduli ignored, no range check: the guard bounds the error) */
    int speed;  /* with guard: native where oz2_emulation_pays says no */
} oz2_ref_opts;

typedef struct {
    int moduli;       /* moduli used (guard: of the last chunk emulated; 0 if none) */
    int fallback;     /* 1: the range check or the guard said no; C computed natively */
    char reason[192]; /* why, when fallback (or when force overrode it) */
    int need;         /* guard: the count its bound asks for (last chunk), 0: > 20 */
    double rmax, qmax; /* guard: the maxima of r and q (ozaki2.h), last chunk */
} oz2_ref_result;

/* C(m×n, ldc) = A(m×k, lda)·B(k×n, ldb) + beta·C (beta 0 or 1) through
 * the scheme; out of range inputs (non-finite values, rows or columns of
 * too wide a range) are computed by the native loop instead, unless
 * o->force.  With o->guard the count is the guard's per chunk (native
 * where it asks for more than OZ2_MAX_MODULI, or, with o->speed, where
 * that count would be slower than native; o->force then emulates at the
 * guard's count, OZ2_MAX_MODULI when it asks for more).  Returns 0, or -1 on bad arguments / out of memory. */
int oz2_ref_dgemm(const oz2_ref_opts *o, int64_t m, int64_t n, int64_t k, const double *A,
                  int64_t lda, const double *B, int64_t ldb, int beta, double *C, int64_t ldc,
                  oz2_ref_result *res);

/* The modular pipeline alone on integer matrices (|entries| < 2^62, the
 * caller keeping |A·B| < M/2): residues, INT8 products, Garner.  C is
 * m×n, tight.  Returns 0, or -1 out of memory. */
int oz2_ref_int_product(int moduli, int64_t m, int64_t n, int64_t k, const double *A,
                        const double *B, double *C);

/* Sliced operands on the host: what kernel.h's kernel_slices_* do on the
 * GPU, in this reference's own blob layout (host blobs and GPU blobs never
 * meet).  moduli: OZ2_MIN_MODULI..OZ2_MAX_MODULI; k: 1..OZ2_KCHUNK.
 * side 0: the rows of A (element l of row v at X[v·ld + l]); side 1: the
 * columns of B (element l of column v at X[l·ld + v]).  A blob is
 * position independent (memcpy'd elsewhere it stays valid).
 * oz2_ref_slices_bytes: the size of a blob (0 for bad arguments).
 * oz2_ref_slices_make: scales, the range check of oz2_ref_dgemm (fixed
 * count, no force) and the residues into blob; 0, or -1 on bad arguments.
 * oz2_ref_slices_gemm: C(m×n, ldc) = A·B + beta·C from a blob of A's m
 * rows and one of B's n columns (same moduli and k), bit for bit what
 * oz2_ref_dgemm gives with that count on those operands; where either
 * blob's verdict is out of range, C = beta·C, *missed = 1 and why (when
 * not NULL) says which row or column, else *missed = 0.  0, or -1 on bad
 * arguments (blobs of another count or k). */
size_t oz2_ref_slices_bytes(int moduli, int64_t vectors, int64_t k);
int oz2_ref_slices_make(int moduli, int side, int64_t vectors, int64_t k, const double *X,
                        int64_t ld, void *blob);
int oz2_ref_slices_gemm(int moduli, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                        int beta, double *C, int64_t ldc, int *missed, char *why, size_t len);

/* The native product, a plain triple loop in FP64 (the fallback). */
void oz2_ref_native(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                    const double *B, int64_t ldb, int beta, double *C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
