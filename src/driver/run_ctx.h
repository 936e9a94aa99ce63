/* run_ctx.h — the state of one run, private to the driver (run.c walks the
 * pipeline, run_record.c describes it: dry-run table, record, attributes). */
#ifndef DD_RUN_CTX_H
#define DD_RUN_CTX_H

#include <mpi.h>

#include "dgemm_dist_tool.h"
#include "grid.h"
#include "io.h"
#include "report.h"
#include "run.h"

/* The names a run reports, copied from the library's plan before it is
 * freed (the report is printed after the teardown). */
typedef struct {
    char backend[16], why[192], comm[16], comm_detail[128], kernel[64], device[128], versions[256],
        tune_line[320], model_line[256], model_json[768];
    char accuracy_why[192]; /* --accuracy fp64: the kernel it chose and why ("" native) */
    char kernel_note[1024]; /* rank 0's kernel note after the multiplies ("" none) */
} run_names;

typedef struct run_ctx run_ctx;
struct run_ctx {
    const dd_run_opts *o;
    MPI_Comm world;
    int rank, size, tty;
    int finalized;   /* MPI_Finalize done (the success path, before the report) */
    double t_start;  /* process start, for the setup phase and the wall */
    dd_context *ctx; /* the library: a context and its plan */
    dd_plan *plan;
    dd_plan_info pi;      /* what the plan chose (refreshed after dd_plan_allocate) */
    dd_plan_tool_info ti; /* the report's account of it (dgemm_dist_tool.h), refreshed with pi */
    run_names names;
    const dd_io_ops *io;
    dd_dtype type;
    int64_t M, N, K;
    /* GEMM: C = alpha·op(A)·op(B) + beta·C.  The plan's blocks are always
     * op(A), op(B), C; the datasets hold their transposes where these are
     * set (run.c's gemm_layout: --transa, --transb, --order). */
    int tA, tB, tC; /* stored transposed: A's, B's, C's dataset (C's: --order col) */
    int read_c;     /* beta ≠ 0 (either part): C's input is read (generated with --size) into C */
    int alpha0;     /* alpha = 0 (both parts): A and B are not read, nothing is multiplied */
    int gpu;        /* the backend computes in GPU memory */
    int pipe;       /* file to file through run_pipe.c */
    dd_output out;  /* the output's temporary and final names */
    char input[512], mpi_version[128];
    dd_record rec;
    struct {               /* rank 0's progress lines during the multiplies */
        double t0, last;   /* start of the multiplies, last line */
        int64_t last_done; /* panels done at the last line, over all repetitions */
        int rep, reps;     /* repetition under way (warm-ups included), of */
    } prog;
};

/* A library call's status as the run's code, its message (the library's,
 * agreed) in err.  DD_SUCCESS: DD_OK. */
int run_api(run_ctx *c, dd_status st, dd_err *err);
/* This rank's block (0 op(A), 1 op(B), 2 C) as ranges of the whole. */
dd_range run_rows(const run_ctx *c, int which);
dd_range run_cols(const run_ctx *c, int which);

/* run_data.c: the steps that move or compute data, each agreed */
void run_note_phase(run_ctx *c, const char *what, double seconds);
int run_load_inputs(run_ctx *c, dd_err *err); /* read (or generate) and upload, streamed */
int run_multiply(run_ctx *c, dd_err *err);    /* --warmup + --repeat timed multiplies */
int run_host_to_host(run_ctx *c, dd_err *err);
int run_write_output(run_ctx *c, dd_err *err); /* to the temporary name, then commit */

/* run_pipe.c: file to file as one pipeline (C in bands of rows, op(A) read
 * and C written behind the multiply); eligible: agreed (collective) */
int run_pipeline_eligible(const run_ctx *c);
/* The read, the multiply, the check and the write with its commit, in
 * place of run_load_inputs, run_multiply and data_out's steps; agreed.
 * *failed_check as data_out's (the output then not committed). */
int run_pipeline(run_ctx *c, int *failed_check, dd_err *err);

/* run_telemetry.c: the GPUs' clock, power and energy over the timed
 * multiplies (the plan's telemetry; "not available" on the CPU backend,
 * whose record then has none).  start: local.  stop: local, then with
 * rc == DD_OK gathers every rank's figures into c->rec.tele on rank 0
 * (collective, agreed); returns rc or the gather's failure. */
void run_telemetry_start(run_ctx *c);
int run_telemetry_stop(run_ctx *c, int rc, dd_err *err);

/* run_verify.c: the check guards the files (agreed; DD_ECHECK on a mismatch) */
int run_verify_inputs(run_ctx *c, dd_err *err);   /* blocks in memory = samples of the input */
int run_verify_c_input(run_ctx *c, dd_err *err);  /* beta·C_in in memory = beta·samples of C */
int run_verify_written(run_ctx *c, dd_err *err);  /* the temporary output = what was computed */
int run_fault_corrupt_c(run_ctx *c, dd_err *err); /* tests only (DD_FAULT=corrupt-c:R) */

/* run_stream.c: the file side of the plan's streams (dgemm_dist.h's
 * dd_stream).  A file stream is a sub-block of a dataset: rows
 * [row0, row0 + n), columns [col0, col0 + cols); the bands the library
 * asks for are its rows.  Untransposed, it is the block itself; with trans
 * the dataset holds the block's transpose (rows k, columns r). */
typedef struct {
    run_ctx *c;
    dd_io *io;
    const char *dset;
    int64_t row0, col0, cols; /* the stored sub-block's place in its dataset, its width */
    int trans;
} run_file;
/* The file of the block whose rows are `r` and columns `k` of the matrix
 * op(X) held by dataset dset, stored transposed when trans. */
run_file run_file_at(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k, int trans);
/* A stream reading (fill) and writing (drain) f, which must outlive it. */
dd_stream run_file_stream(run_file *f);

/* run_record.c */
/* Rank 0 prints the decomposition and memory per rank (collective). */
void run_print_dry_run(run_ctx *c);
/* The plan's names into c->names (c->pi refreshed first). */
void run_take_names(run_ctx *c);
/* Fills c->rec with what the run was and where (collective: gathers hosts
 * and devices to rank 0). */
void run_fill_record(run_ctx *c);
/* The provenance attributes written on C: fills attrs (at least
 * RUN_NATTRS entries) from c; grid_buf keeps the grid string alive. */
enum { RUN_NATTRS = 19 };
int run_output_attrs(const run_ctx *c, dd_attr *attrs, char *grid_buf, size_t grid_len);

#endif
