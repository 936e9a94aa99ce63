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
/* cuBLAS version as "13.1.0", for reports. */
const char *kernel_cublas_version(void);

#ifdef __cplusplus
}
#endif

#endif
