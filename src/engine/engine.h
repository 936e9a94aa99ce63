/* engine.h — memory and the local multiply, behind one small ops struct.
 *
 * SUMMA and the check (src/core) and the library's plans and entries
 * (src/api) speak only to this interface; the program (src/driver) never
 * sees it.  Two engines exist: "cpu" (engine_cpu.c, OpenBLAS, host
 * memory) and "cuda" (engine_cuda*.c, device memory, a compute stream and
 * a communication stream).  "Work" memory is where blocks and panels live for
 * the multiply (device memory on CUDA); "host" memory is what HDF5 reads
 * into and writes from (pinned on CUDA).
 *
 * Asynchrony: on CUDA, gemm() and upload_async() only enqueue; phase_end()
 * waits for the multiply phase.  On CPU everything is synchronous.
 *
 * Policy that differs between engines is data in the ops struct (where the
 * work memory lives, the default panel width), so core and the library never
 * compare engine names; engine_select() is the one place that picks an
 * engine. */
#ifndef DD_ENGINE_H
#define DD_ENGINE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "dd.h"
#include "dd_telemetry.h"

typedef struct dd_engine dd_engine;

/* The queues of the pipeline ops (mark, after, download_side_async) and
 * how many marks an engine keeps. */
enum { DD_Q_UP, DD_Q_COMPUTE, DD_Q_DOWN };
#define DD_ENGINE_MARKS 8

/* Called by gemm() while the multiply runs, so that non-blocking
 * communication progresses (CPU: between row chunks; CUDA: once, after the
 * launch, while the GPU computes).  Returns DD_OK or an error. */
typedef int (*dd_progress_fn)(void *arg, dd_err *e);

typedef struct {
    MPI_Comm world;     /* all ranks */
    MPI_Comm node;      /* ranks sharing this host (MPI_Comm_split_type SHARED) */
    dd_dtype type;      /* element type of the run: the kernel is chosen (or refused) at open */
    const char *kernel; /* local-multiply kernel name, NULL = engine default */
    int threads;        /* CPU: BLAS threads, 0 = library default */
} dd_engine_cfg;

typedef struct {
    /* Human description of the device ("NVIDIA H200", "CPU (OpenBLAS 0.3.21, 2 threads)") */
    char device[128];
    char kernel[64];      /* kernel actually used */
    char versions[256];   /* "CUDA 13.0, cuBLAS 13.1" or "OpenBLAS 0.3.21" */
    int device_index;     /* GPU ordinal, -1 on CPU */
    int ranks_per_device; /* max over this node of ranks sharing one GPU (1 = exclusive; CPU: 1) */
    int threads;          /* CPU: BLAS threads per rank (for the performance model); GPU: 0 */
    size_t mem_free, mem_total; /* bytes of work memory, 0 if unknown */
    int64_t panel; /* SUMMA panel the kernel wants when none is given; 0: the engine's */
} dd_engine_info;

typedef struct dd_engine_ops {
    const char *name; /* "cpu", "cuda" */
    /* 1: work memory is host memory (CPU): blocks need no upload, and the
     * host comm backend serves it; 0: device memory (CUDA). */
    int work_is_host;
    /* SUMMA panel width when --panel is not given (measured per engine:
     * docs/results). */
    int64_t default_panel;
    /* Collective over cfg->world: every rank calls it; failure is local
     * (callers agree).  Returns DD_EUNSUP when the engine cannot run here
     * (no GPU), so `--backend auto` can fall back. */
    int (*open)(dd_engine *e, const dd_engine_cfg *cfg, dd_err *err);
    void (*close)(dd_engine *e);
    /* Optional (NULL: nothing to do).  After close, in a program that owns
     * its process and has finalized MPI: hand the device back now (CUDA:
     * the primary context), so that its cost falls in the run's teardown
     * instead of in the exit after the report.  Never from a library. */
    void (*release_device)(dd_engine *e);
    /* Optional (NULL: the engine serves every element type as opened, the
     * CPU).  From now on multiply element type t: the kernel for t (`kernel`
     * forced, or the default of t), so that a library switching between
     * FP64 and FP32 calls keeps its engine, comm and memory instead of
     * reopening them.  Local; on failure the engine is left as it was. */
    int (*retype)(dd_engine *e, dd_dtype t, const char *kernel, dd_err *err);
    int (*alloc)(dd_engine *e, size_t bytes, void **p, dd_err *err);
    void (*free)(dd_engine *e, void *p);
    int (*host_alloc)(dd_engine *e, size_t bytes, void **p, dd_err *err);
    void (*host_free)(dd_engine *e, void *p);
    /* Synchronous copies between host memory and work memory. */
    int (*upload)(dd_engine *e, void *work_dst, const void *host_src, size_t bytes, dd_err *err);
    int (*download)(dd_engine *e, void *host_dst, const void *work_src, size_t bytes, dd_err *err);
    /* Zero `bytes` of work memory (synchronous). */
    int (*zero)(dd_engine *e, void *work, size_t bytes, dd_err *err);
    /* Host to work memory, rows × width_bytes with pitches in bytes,
     * enqueued on the communication stream (CUDA), so that it is ordered
     * before the comm backend's next post() and the panel it makes ready.
     * CPU: a synchronous copy. */
    int (*upload_async)(dd_engine *e, void *work_dst, size_t dpitch, const void *host_src,
                        size_t spitch, size_t width_bytes, int64_t rows, dd_err *err);
    /* Work to host memory, rows × width_bytes with pitches in bytes, enqueued
     * after the multiplies (CUDA: on the compute stream); host memory must
     * be host_alloc'd (pinned) for the copy to overlap.  CPU: synchronous. */
    int (*download_async)(dd_engine *e, void *host_dst, size_t dpitch, const void *work_src,
                          size_t spitch, size_t width_bytes, int64_t rows, dd_err *err);
    /* The same, turning the data on the way (datasets stored transposed:
     * --transa/--transb T, --order col).  upload_t_async: a host band of
     * h×w elements (row-major, contiguous, es bytes each) lands turned in
     * work memory, dst[j·ldd + i] = src[i·w + j], ordered like upload_async;
     * download_t_async: the host band gets the transpose of the w×h work
     * sub-block at src (ld lds), dst[i·w + j] = src[j·lds + i], ordered like
     * download_async.  CUDA: a contiguous copy through a device scratch of
     * h·w·es bytes (kept by the engine) and a transpose kernel; CPU: a
     * synchronous cache-blocked transpose. */
    int (*upload_t_async)(dd_engine *e, void *work_dst, int64_t ldd, const void *host_src,
                          int64_t h, int64_t w, size_t es, dd_err *err);
    int (*download_t_async)(dd_engine *e, void *host_dst, const void *work_src, int64_t lds,
                            int64_t h, int64_t w, size_t es, dd_err *err);
    /* Wait for every upload_async and download_async (and
     * download_side_async) enqueued so far. */
    int (*wait_copies)(dd_engine *e, dd_err *err);
    /* Three queues in flight together, for the library's host pipeline
     * (src/api/api_pipe.c): DD_Q_UP holds upload_async's and
     * upload_t_async's copies, DD_Q_COMPUTE gemm's multiplies and
     * DD_Q_DOWN download_side_async's copies (CUDA: the communication
     * stream, the compute stream and a third one, so that an upload, a
     * multiply and a download run at once, each copy direction on its own
     * copy engine).  mark: mark i (0 <= i < DD_ENGINE_MARKS) at the end of
     * what queue q holds now; after: what queue q is given next waits for
     * mark i; reached: the host waits for mark i.  A mark is reused by
     * marking it again (after and reached see its last mark).  CPU: every
     * copy and multiply is synchronous, so these three do nothing. */
    int (*mark)(dd_engine *e, int q, int i, dd_err *err);
    int (*after)(dd_engine *e, int q, int i, dd_err *err);
    int (*reached)(dd_engine *e, int i, dd_err *err);
    /* download_async on DD_Q_DOWN (CPU: synchronous), host memory pinned. */
    int (*download_side_async)(dd_engine *e, void *host_dst, size_t dpitch, const void *work_src,
                               size_t spitch, size_t width_bytes, int64_t rows, dd_err *err);
    /* C(m×n, ldc) = A(m×k, lda)·B(k×n, ldb) + beta·C, row-major, beta 0 or 1,
     * t the type given at open (complex: interleaved pairs, a complex product) (no transposes and no alpha: the library
     * transposes at load and applies alpha and beta with scale()),
     * enqueued on the compute stream.  Time spent in the multiply itself is
     * accumulated for gemm_seconds().  m, n or k may be 0 (k = 0 with
     * beta = 0 zeroes C). */
    int (*gemm)(dd_engine *e, dd_dtype t, int64_t m, int64_t n, int64_t k, const void *A,
                int64_t lda, const void *B, int64_t ldb, int beta, void *C, int64_t ldc,
                dd_progress_fn progress, void *progress_arg, dd_err *err);
    /* Start / stop the phase clock used for the multiply phase (CUDA: events
     * on the compute stream; CPU: wall clock).  phase_end() waits for the
     * phase's work; gemm_seconds is the sum of the multiplies since
     * reset_timers(). */
    void (*reset_timers)(dd_engine *e);
    int (*phase_begin)(dd_engine *e, dd_err *err);
    int (*phase_end)(dd_engine *e, double *seconds, double *gemm_seconds, dd_err *err);
    /* After phase_end: the multiplies since reset_timers() one by one, in
     * order, their number into *count and the first max durations (seconds)
     * into seconds.  Multiplies of an empty C block (m or n 0) are not timed
     * and not counted. */
    int (*gemm_times)(dd_engine *e, double *seconds, int64_t max, int64_t *count, dd_err *err);
    /* Backend-specific handles for the comm backends that need them (CUDA:
     * cudaStream_t of the communication and compute streams), NULL on CPU. */
    void *(*comm_stream)(dd_engine *e);
    void *(*compute_stream)(dd_engine *e);
    /* The check and generated inputs where the data is (src/core/check.c,
     * --size): synchronous, on work memory, t the element type (any type,
     * not only the one given at open).  CUDA: on the compute stream, so
     * ordered after the multiplies; a small device scratch kept by the
     * engine (grown as needed, freed at close).  Each returns DD_OK or an
     * error (local: the caller agrees). */
    /* *max = max |m| over the finite elements of M[0..n); *nonfinite = 1 if
     * any element is NaN or ±Inf, else 0.  n = 0: *max = 0, *nonfinite = 0.
     * Complex types: |m| is the modulus (CUDA: the largest part, within
     * sqrt 2 of it, which the check's power-of-two scaling allows), an
     * element finite when both parts are. */
    int (*absmax)(dd_engine *e, dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite,
                  dd_err *err);
    /* M is rows×cols, row-major (ld = cols), in work memory; v (cols), out
     * and absrow (rows) are HOST double arrays.  In double, with
     * m' = (m·f[0])·f[1]: out[i] = Σ_j m'[i,j]·v[j] and, when absrow is not
     * NULL, absrow[i] = Σ_j |m'[i,j]|; *nonfinite = 1 if any element of M is
     * NaN or ±Inf.  The order of the sums is the engine's (CPU: j ascending;
     * CUDA: a tree), so engines agree to rounding, not bit for bit.
     * Complex types: v (2·cols doubles) and out (2·rows) are complex,
     * (real, imaginary) pairs, the products complex; absrow sums moduli. */
    int (*matvec)(dd_engine *e, dd_dtype t, const void *M, int64_t rows, int64_t cols,
                  const double f[2], const double *v, double *out, double *absrow, int *nonfinite,
                  dd_err *err);
    /* rng_fill_block's values (rng.h), bit for bit, into work memory:
     * rows×cols, row-major, ld = cols, of a matrix of gcols columns whose
     * top-left element is (row0, col0); with trans, rng_fill_block_t's
     * (a block of the transpose of that matrix: op(A) for --transa T).
     * Complex types: element (i, j)'s real and imaginary parts are the
     * generator's values 2·c and 2·c + 1, c its counter (rng.h). */
    int (*fill_random)(dd_engine *e, dd_dtype t, void *work, uint64_t seed, uint64_t tag,
                       int64_t row0, int64_t rows, int64_t col0, int64_t cols, int64_t gcols,
                       int trans, dd_err *err);
    /* GEMM's alpha and beta, applied where the data is (synchronous):
     * work[i] = work[i]·s for i < n, in the type t (f32: s rounded to float
     * first, then a float multiply, as the reference value is computed);
     * s = 1 leaves the data alone; s = 0 writes zeros without reading, so
     * NaN in the old contents does not survive (BLAS's rule for beta = 0). */
    int (*scale)(dd_engine *e, dd_dtype t, void *work, int64_t n, double s, dd_err *err);
    /* The complex types' scale: work[i] = w·(s[0] + i·s[1]) for i < n
     * elements of type t (DD_C128 or DD_C64; c64: s's parts rounded to float
     * first, then float arithmetic), w = conj(work[i]) when conj is set (op
     * 'C': the conjugate transpose, its transpose made at load), else
     * work[i].  s = 1 without conj leaves the data alone; s = 0 writes zeros
     * without reading, as scale does.  Where s[1] = 0 each part is scaled
     * as scale scales it (then the imaginary part negated for conj). */
    int (*cscale)(dd_engine *e, dd_dtype t, void *work, int64_t n, const double s[2], int conj,
                  dd_err *err);
    /* Work to work memory, `bytes` (synchronous): the saved beta·C that each
     * repetition starts from. */
    int (*copy)(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err);
    /* Optional (NULL: no device to watch, the CPU engine).  The device's SM
     * clock, power and energy between start and stop (dd_telemetry.h):
     * start begins sampling in the background, stop ends it and fills *t,
     * "not available" where NVML is absent.  Local; never fails. */
    void (*telemetry_start)(dd_engine *e);
    void (*telemetry_stop)(dd_engine *e, dd_telemetry *t);
    /* Optional (NULL: nothing to say, the CPU engine).  The kernel's note
     * on the multiplies so far (kernel.h's kernel_note: ozaki2's moduli and
     * fallbacks, ...), "" when none; kept for close, which prints it.
     * Local; synchronises the device. */
    const char *(*note)(dd_engine *e);
    /* Optional (NULL: panels travel in their element type).  Sliced
     * panels, for SUMMA's slice broadcast (summa.h): a kernel that slices
     * its operands (ozaki2 with a fixed or k-given count, FP64) lets the
     * owner of a panel slice it once, and the panel travels as a blob of
     * slices.  A blob holds `vectors` vectors of length k: the rows of a
     * row-major panel of A (side 0, row v at X + v·ld) or the columns of
     * one of B (side 1, element l of column v at X[l·ld + v]); it is
     * position independent (any rank's copy of its bytes is valid).
     * slices_bytes: a blob's size for the kernel in use and type t, 0
     * where slicing is not offered (nondecreasing in vectors and k).
     * slices_make: X's slices into blob (work memory), enqueued on queue q:
     * DD_Q_UP (the communication stream: ordered before the next post(),
     * as upload_async is) or DD_Q_COMPUTE (before the next gemm).
     * slices_gemm: gemm's C = A·B + beta·C from a blob of A's m rows and
     * one of B's n columns (same kernel and k), timed and counted as gemm;
     * where a blob says its panel cannot be emulated (a non-finite value,
     * a range too wide) the product is not made, C becomes beta·C and the
     * call is marked missed.  slices_missed: after the multiplies (it
     * waits for them), missed[i] = 1 for the i-th slices_gemm since
     * reset_timers that was missed, else 0 (the first max), *count the
     * calls.  Local; the caller agrees. */
    size_t (*slices_bytes)(dd_engine *e, dd_dtype t, int64_t vectors, int64_t k);
    int (*slices_make)(dd_engine *e, int q, int side, int64_t vectors, int64_t k, const void *X,
                       int64_t ld, void *blob, dd_err *err);
    int (*slices_gemm)(dd_engine *e, int64_t m, int64_t n, int64_t k, const void *a,
                       const void *b, int beta, void *C, int64_t ldc, dd_progress_fn progress,
                       void *progress_arg, dd_err *err);
    int (*slices_missed)(dd_engine *e, unsigned char *missed, int64_t max, int64_t *count,
                         dd_err *err);
} dd_engine_ops;

struct dd_engine {
    const dd_engine_ops *ops;
    dd_engine_info info;
    void *impl; /* engine-private state */
};

/* The SUMMA panel width when --panel is not given: the kernel's where it
 * has one, else the engine's default. */
static inline int64_t engine_panel(const dd_engine *e)
{
    return e->info.panel ? e->info.panel : e->ops->default_panel;
}

extern const dd_engine_ops dd_engine_cpu;
/* "OpenBLAS 0.3.21 ..." — the CPU BLAS, for reports on any backend. */
const char *engine_cpu_blas_version(void);
#ifdef DD_HAVE_CUDA
extern const dd_engine_ops dd_engine_cuda;
/* engine_prestart's CUDA part (engine_cuda.c): the context of GPU
 * local_rank % count made current and created, its ordinal into *device
 * (-1 where none); and a guessed GPU's context destroyed again. */
void engine_cuda_prestart(int local_rank, int *device);
void engine_cuda_forget(int device);
#endif

/* A program's head start on its GPU (dd_prestart_device): before MPI_Init,
 * create the CUDA context of the GPU local_rank % (visible GPUs) on a
 * thread of its own, as the CUDA engine will pick it, so that it overlaps
 * MPI's start-up.  local_rank < 0 or a build without CUDA: nothing.  The
 * next engine_select (or engine_release_devices) waits for the thread and,
 * where the engine opened is not the CUDA engine on that GPU, destroys the
 * guessed GPU's context again (nothing of it was used). */
void engine_prestart(int local_rank);

/* --backend NAME (auto | cuda | cpu): open the engine on every rank of
 * cfg->world.  auto takes CUDA when every rank has a GPU and falls back to
 * the CPU otherwise; `why` (len bytes) says which and why, for the report.
 * Collective; the result is agreed across ranks. */
int engine_select(const char *name, const dd_engine_cfg *cfg, dd_engine *e, char *why, size_t len,
                  dd_err *err);
/* After every engine is closed and MPI finalized, in a program that owns
 * its process: the release_device of the last device engine opened. */
void engine_release_devices(void);

#endif
