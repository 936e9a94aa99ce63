/* run.h — the driver's two commands: a distributed multiply, and gen.
 *
 * The driver takes these options, filled by any front end (the command
 * line today); it never sees argv. */
#ifndef DD_RUN_H
#define DD_RUN_H

#include <stdint.h>

#include "dd.h"
#include "dgemm_dist.h"

/* Exit statuses. */
enum { DD_EXIT_OK = 0, DD_EXIT_ERROR = 1, DD_EXIT_USAGE = 2, DD_EXIT_FAILED = 3 };
/* --accuracy: native (the default) or fp64 (run.c's choose_kernel) */
enum { DD_ACC_NATIVE = 0, DD_ACC_FP64 = 1 };

typedef struct {
    /* inputs */
    const char *in;        /* HDF5 file with A and B, or NULL: generated */
    int64_t size[3];       /* M, N, K of generated inputs (and of gen's output) */
    dd_dtype dtype;        /* type of generated inputs */
    uint64_t seed;         /* generator seed */
    const char *a, *b, *c; /* dataset names */
    /* GEMM: C = alpha·op(A)·op(B) + beta·C, op(X) = X ('N'), Xᵀ ('T') or Xᴴ ('C') */
    char transa, transb;
    double alpha, beta; /* finite; beta != 0: C's input is read (dataset c) */
    /* their imaginary parts: 0 but for complex types (the driver refuses
     * them on real data); alpha = 0 and beta = 0 mean both parts 0 (BLAS) */
    double alpha_im, beta_im;
    int col;            /* --order col: datasets hold the transpose (column-major writers) */
    int with_c;         /* gen: also write C (M×N) */
    /* outputs */
    const char *out;  /* HDF5 file for C, or NULL */
    int force;        /* replace an existing out */
    int sync;         /* out's data and directory entry fsync'ed before success */
    const char *json; /* JSON Lines record file, or NULL */
    /* decomposition and backends */
    int P, Q;            /* grid, 0 = default */
    int64_t panel;       /* panel width, 0 = the engine's default */
    int lookahead;       /* 1..DGEMM_DIST_LOOKAHEAD_MAX */
    const char *backend; /* auto | cuda | cpu */
    const char *comm;    /* auto | nccl | mpi */
    const char *kernel;  /* NULL = engine default */
    int accuracy;        /* DD_ACC_NATIVE (the default kernel) or DD_ACC_FP64 (run.c: the
                            fastest kernel within native FP64's error on this input) */
    const char *io;      /* auto | collective | independent */
    int threads;         /* CPU BLAS threads, 0 = default */
    int repeat, warmup;
    int check, dry_run, quiet;
    int host_to_host;    /* also time one streamed host-to-host pass */
    int progress;        /* seconds between progress lines in a batch log (0: none) */
    const char *cmdline; /* for records */
    double t_start; /* dd_now() at process start (0: at dd_run's start), for the wall account */
    double t_main, t_mpi; /* dd_now() at main()'s start and when MPI_Init returned (0: unknown) */
} dd_run_opts;

/* Both are collective over MPI_COMM_WORLD and return an exit status that is
 * the same on every rank. */
int dd_run(const dd_run_opts *o);
/* run_head.c.  Before MPI_Init: where the command line is a run that opens
 * the GPU (not gen, help, versions, a dry run or --backend cpu, read
 * loosely: cli_parse is the judge after MPI_Init), the GPU's context
 * started on a thread of its own (dd_prestart_device), so that it overlaps
 * MPI's start-up; DD_FAULT=no-prestart:* turns it off.  run_head_end: after
 * MPI_Finalize on the paths that ran nothing, the head start given back. */
void run_head_start(int argc, char **argv);
void run_head_end(void);
int dd_gen(const dd_run_opts *o);

#endif
