/* kernel.h — the local multiply on the GPU: one registry of kernels.
 *
 * Every kernel computes, row-major,
 *     C(m×n, ldc) = A(m×k, lda) · B(k×n, ldb) + beta · C,   beta ∈ {0, 1}
 * for any m, n, k >= 0 (k == 0 with beta == 0 zeroes C), on the given
 * stream, with device pointers.  Launchers only enqueue; they return
 * cudaError_t as int (0 = cudaSuccess) from the launch check, and never
 * synchronise.  A kernel that does not support a type has a NULL entry.
 *
 * The production kernels (kernels/<name>.cu) are the default
 * (kernel_default()); the ladder (kernels/ladder/NN_name.cu) is the seed
 * article's story, numbered in its order; "cublas" is the reference.
 * kernels.def lists them all. */
#ifndef DD_KERNEL_H
#define DD_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*kernel_dgemm_fn)(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                               const double *B, int64_t ldb, int beta, double *C, int64_t ldc,
                               void *stream);
typedef int (*kernel_sgemm_fn)(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                               const float *B, int64_t ldb, int beta, float *C, int64_t ldc,
                               void *stream);

/* The complex types: A, B and C hold (real, imaginary) pairs of double
 * (z) or float (c), leading dimensions counted in complex elements; the
 * rest as above (C = A·B + beta·C, beta ∈ {0, 1}, no conjugation: the
 * engine applies op() before). */
typedef int (*kernel_zgemm_fn)(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                               const double *B, int64_t ldb, int beta, double *C, int64_t ldc,
                               void *stream);
typedef int (*kernel_cgemm_fn)(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                               const float *B, int64_t ldb, int beta, float *C, int64_t ldc,
                               void *stream);

typedef struct {
    const char *name;      /* "01_naive", ..., "dgemm_dmma", ..., "cublas" */
    const char *technique; /* one line: what the kernel does */
    kernel_dgemm_fn dgemm; /* NULL: FP64 not offered */
    kernel_sgemm_fn sgemm; /* NULL: FP32 not offered */
    int slow;              /* 1: too slow for the large bench sizes (naive steps) */
    kernel_zgemm_fn zgemm; /* NULL: complex double not offered */
    kernel_cgemm_fn cgemm; /* NULL: complex float not offered */
} kernel_desc;

/* All kernels, the ladder first, cublas last.  *count set. */
const kernel_desc *kernel_list(int *count);
/* The kernel of that name or of that earlier name (an alias, e.g.
 * "23_dmma_pipe" for "dgemm_dmma"); NULL if unknown. */
const kernel_desc *kernel_find(const char *name);
/* Alias i (0, 1, ...): its name, and in *kd (if not NULL) the kernel it
 * names; NULL past the last. */
const char *kernel_alias(int i, const kernel_desc **kd);
/* The SUMMA panel width a kernel wants when none is given; 0: the engine's
 * default.  ozaki2: 8192 (it slices both panels on every multiply, and
 * deeper INT8 products amortise that). */
int64_t kernel_panel(const kernel_desc *kd);
/* Sliced operands, for SUMMA's slice broadcast (src/core/summa.c).  A
 * kernel that slices its operands before multiplying (ozaki2 and
 * ozaki2-N, FP64) lets the rank that owns a panel slice it once; the
 * panel then travels sliced and its receivers only multiply.  A blob holds
 * `vectors` vectors of length k: the rows of a row-major m×k panel of A
 * (side 0, element l of row v at X[v·ld + l]) or the columns of a k×n
 * panel of B (side 1, element l of column v at X[l·ld + v]), sliced, with
 * their scales and the slicer's verdict (in range, or why not).  A blob
 * is position independent: copied byte for byte to another buffer or
 * another GPU it stays valid.
 * kernel_slices_moduli: the moduli kd slices with at inner dimension k;
 * 0 where it offers no slicing (every other kernel, ozaki2-auto, whose
 * count depends on both operands, k of 0 or above one INT8 chunk).
 * kernel_slices_bytes: a blob's size (nondecreasing in vectors and k).
 * kernel_slices_make: enqueue the slicing of X into blob on the stream.
 * kernel_slices_gemm: C(m×n, ldc) = A·B + beta·C, beta 0 or 1, from a blob
 * of A's m rows and one of B's n columns made with the same moduli and k;
 * where either blob's verdict is "out of range" (a non-finite value, a
 * row or column of too wide a range: ozaki2.h), C becomes beta·C and the
 * device word *missed is set nonzero (else zero), so that the caller can
 * multiply that panel natively; enqueued, never synchronising. */
int kernel_slices_moduli(const kernel_desc *kd, int64_t k);
size_t kernel_slices_bytes(int moduli, int64_t vectors, int64_t k);
int kernel_slices_make(int moduli, int side, int64_t vectors, int64_t k, const double *X,
                       int64_t ld, void *blob, void *stream);
int kernel_slices_gemm(int moduli, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                       int beta, double *C, int64_t ldc, unsigned int *missed, void *stream);
/* The production kernel for a type: kernel_default() returns these; tools
 * without the kernels (the performance model's dd-model) name them from
 * here. */
#define DD_KERNEL_DEFAULT_F64 "dgemm_dmma"
#define DD_KERNEL_DEFAULT_F32 "sgemm_dmma"
#define DD_KERNEL_DEFAULT_C128 "zgemm_dmma"
#define DD_KERNEL_DEFAULT_C64 "cgemm_dmma"
const char *kernel_default(int is_f64);
/* cuBLAS needs a handle per device/stream; created lazily, destroyed here. */
void kernel_cublas_shutdown(void);
/* Frees what the kernels keep per device (cuBLAS handles, ozaki2's
 * workspace, the emulation's handles): kernel_cublas_shutdown and more. */
void kernel_shutdown(void);
/* What the kernels have to report about the multiplies since the last call
 * ("" when nothing): ozaki2's fallbacks to native FP64 and why, the calls
 * sgemm_dmma ran on sgemm_simt and those zgemm_dmma / cgemm_dmma ran on
 * their CUDA-core fallback, and why.  Waits for
 * the work queued on the devices used (a synchronising call: once per
 * run or per bench row, never per multiply). */
const char *kernel_note(void);
/* How many moduli the emulated multiplies since the last call used
 * ("" when none): ozaki2's counts given by the kernel's name or by k, and
 * the sliced products'.  For the record, not a warning: kernel_note is
 * what a run prints.  Host counters only, no wait. */
const char *kernel_counts(void);
/* cuBLAS version as "13.1.0", for reports. */
const char *kernel_cublas_version(void);

#ifdef __cplusplus
}
#endif

#endif
