/* engine_cpu_impl.h — what engine_cpu.c, engine_cpu_aux.c and
 * engine_cpu_ozaki2.c share: the CPU engine's state, the check's and the
 * generator's ops, and the ozaki2 kernels of the CPU backend (the host
 * reference of kernels/ozaki2_ref.h, FP64 only: slow, for tests of what the
 * emulation and SUMMA's slice broadcast compute). */
#ifndef DD_ENGINE_CPU_IMPL_H
#define DD_ENGINE_CPU_IMPL_H

#include "engine.h"
#include "ozaki2_ref.h"

typedef struct {
    int on;          /* 1: an ozaki2 kernel multiplies FP64 (else OpenBLAS) */
    int fixed;       /* its moduli: N of ozaki2-N, 0 from k ("ozaki2"), -1 the guard's */
    oz2_ref_opts o;  /* what oz2_ref_dgemm is given */
    unsigned char *missed; /* each slices_gemm since reset_timers: 1 missed */
    int64_t n, cap;        /* in use, allocated */
} cpu_oz;

typedef struct {
    double gemm_acc, t0;
    double *times;       /* each timed multiply's seconds since reset_timers */
    int64_t ntimes, cap; /* in use, allocated */
    cpu_oz oz;
} cpu_state;

/* Room for one more multiply's time in s->times. */
int cpu_time_room(cpu_state *s, dd_err *err);

/* The kernel named at open: NULL or "openblas" (z->on = 0), "ozaki2",
 * "ozaki2-auto", "ozaki2-14/15/16/18"; anything else, or an ozaki2 kernel
 * for a type other than FP64, is refused naming what the backend has. */
int cpu_oz_open(cpu_oz *z, const char *kernel, dd_dtype t, dd_err *err);
/* DD_OK when the kernel serves type t. */
int cpu_oz_type(const cpu_oz *z, dd_dtype t, dd_err *err);
/* C(m×n) = A·B + beta·C through the host reference (the engine's gemm). */
int cpu_oz_gemm(const cpu_oz *z, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                const double *B, int64_t ldb, int beta, double *C, int64_t ldc, dd_err *err);

/* engine_cpu_aux.c: the ops of engine.h's second half on host memory. */
int cpu_absmax(dd_engine *e, dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite,
               dd_err *err);
int cpu_matvec(dd_engine *e, dd_dtype t, const void *M, int64_t rows, int64_t cols,
               const double f[2], const double *v, double *out, double *absrow, int *nonfinite,
               dd_err *err);
int cpu_fill_random(dd_engine *e, dd_dtype t, void *work, uint64_t seed, uint64_t tag, int64_t row0,
                    int64_t rows, int64_t col0, int64_t cols, int64_t gcols, int trans, dd_err *err);
int cpu_scale(dd_engine *e, dd_dtype t, void *work, int64_t n, double s, dd_err *err);
int cpu_cscale(dd_engine *e, dd_dtype t, void *work, int64_t n, const double s[2], int conj,
               dd_err *err);

/* engine.h's slices ops on the CPU engine. */
size_t cpu_slices_bytes(dd_engine *e, dd_dtype t, int64_t vectors, int64_t k);
int cpu_slices_make(dd_engine *e, int q, int side, int64_t vectors, int64_t k, const void *X,
                    int64_t ld, void *blob, dd_err *err);
int cpu_slices_gemm(dd_engine *e, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                    int beta, void *C, int64_t ldc, dd_progress_fn progress, void *parg,
                    dd_err *err);
int cpu_slices_missed(dd_engine *e, unsigned char *missed, int64_t max, int64_t *count,
                      dd_err *err);

#endif
