/* engine_cuda_kernels.h — the CUDA engine's kernels besides the multiply
 * (engine_cuda_kernels.cu): the check's scans and matrix-vector products,
 * the generator, and GEMM's alpha/beta scaling, where the data is.  Part of
 * the CUDA engine (built with it); not multiplies, so not in
 * kernels/kernels.def.
 *
 * Launchers take device pointers and a cudaStream_t as void *, only enqueue
 * (never synchronise) and return cudaError_t as int (0 = cudaSuccess), like
 * kernel.h's.  The engine (src/engine/engine_cuda_aux.c) owns the scratch,
 * the copies and the synchronisation. */
#ifndef DD_ENGINE_CUDA_KERNELS_H
#define DD_ENGINE_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the scans report, in device memory; the launchers zero it first. */
typedef struct {
    /* the bits of max |m| over finite elements: non-negative doubles order
     * as their bit patterns do, so an integer atomicMax finds the maximum */
    unsigned long long max_bits;
    int nonfinite; /* 1 when some element is NaN or ±Inf */
    int pad;
} dd_aux_flags;

/* flags = max |M[i]| over the finite elements of M[0..n) and whether any is
 * NaN or Inf. */
int dd_aux_absmax(int is_f64, const void *M, int64_t n, dd_aux_flags *flags, void *stream);

/* M rows×cols (row-major, ld = cols); v (cols), out and absrow (rows) device
 * doubles, absrow may be NULL.  With m' = (m·f0)·f1, in double:
 * out[i] = Σ_j m'[i,j]·v[j], absrow[i] = Σ_j |m'[i,j]|; flags->nonfinite = 1
 * when some m is NaN or Inf (flags->max_bits is left 0).  Sums in a fixed
 * tree order: the same launch gives the same bits. */
int dd_aux_matvec(int is_f64, const void *M, int64_t rows, int64_t cols, double f0, double f1,
                  const double *v, double *out, double *absrow, dd_aux_flags *flags, void *stream);

/* rng_fill_block (src/base/rng.h) into device memory, bit for bit: a
 * rows×cols block (ld = cols) of a matrix of gcols columns whose top-left
 * element is (row0, col0); with trans, rng_fill_block_t's block of the
 * transpose (element (i, j) is the matrix's (col0 + j, row0 + i)). */
int dd_aux_fill_random(int is_f64, void *work, uint64_t seed, uint64_t tag, int64_t row0,
                       int64_t rows, int64_t col0, int64_t cols, int64_t gcols, int trans,
                       void *stream);

/* dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols, elements of es
 * bytes (8 or 4): a tiled transpose through shared memory, reads and
 * writes coalesced (the CUDA engine's upload_t_async/download_t_async). */
int dd_aux_transpose(size_t es, const void *src, int64_t lds, void *dst, int64_t ldd, int64_t rows,
                     int64_t cols, void *stream);

/* work[i] *= s for i < n, in the element type (f32: s rounded to float,
 * then one float multiply, rounded to nearest).  The caller handles s = 1
 * (nothing) and s = 0 (a memset: zeros without reading). */
int dd_aux_scale(int is_f64, void *work, int64_t n, double s, void *stream);
/* The complex types (is_f64: complex double, else complex float; pairs):
 * matvec with complex v and out (engine.h), the transposed fill (the
 * plain one is the real fill of 2·cols), and x[i] = w·(sr + i·si), w =
 * conj(x[i]) with conj, else x[i]. */
int dd_aux_matvec_c(int is_f64, const void *M, int64_t rows, int64_t cols, double f0, double f1,
                    const double *v, double *out, double *absrow, dd_aux_flags *flags,
                    void *stream);
int dd_aux_fill_random_c_t(int is_f64, void *work, uint64_t seed, uint64_t tag, int64_t row0,
                           int64_t rows, int64_t col0, int64_t cols, int64_t gcols, void *stream);
int dd_aux_cscale(int is_f64, void *work, int64_t n, double sr, double si, int conj, void *stream);

#ifdef __cplusplus
}
#endif

#endif
