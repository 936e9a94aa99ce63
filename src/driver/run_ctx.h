/* run_ctx.h — the state of one run, private to the driver (run.c walks the
 * pipeline, run_record.c describes it: dry-run table, record, attributes). */
#ifndef DD_RUN_CTX_H
#define DD_RUN_CTX_H

#include <mpi.h>

#include "check.h"
#include "comm.h"
#include "engine.h"
#include "grid.h"
#include "io.h"
#include "report.h"
#include "run.h"
#include "summa.h"
#include "tune.h"

typedef struct run_ctx run_ctx;
struct run_ctx {
    const dd_run_opts *o;
    MPI_Comm world, node, row, col;
    int rank, size, tty;
    int finalized; /* MPI_Finalize done (the success path, before the report) */
    double t_start; /* process start, for the setup phase and the wall */
    dd_grid g;
    dd_engine eng;
    int eng_open;
    dd_comm comm;
    int comm_open;
    const dd_io_ops *io;
    dd_dtype type;
    int64_t M, N, K;
    /* GEMM: C = alpha·op(A)·op(B) + beta·C.  The blocks in work memory are
     * always op(A), op(B), C, row-major (SUMMA and the kernels see N/N);
     * the datasets hold their transposes where these are set (run.c's
     * gemm_layout: --transa, --transb, --order). */
    int tA, tB, tC;     /* stored transposed: A's, B's, C's dataset (C's: --order col) */
    int read_c;         /* beta ≠ 0: C's input is read (generated with --size) into C */
    void *C0;           /* beta·C_in kept in work memory: each later pass starts from it */
    void *tscratch;     /* CPU: host scratch that transposed bands are turned through */
    check_cterm cin;    /* beta·C_in·x for the check, from the C just loaded */
    void *hA, *hB, *hC; /* host copies of the blocks: --host-to-host on a GPU only */
    void *ring[2];      /* pinned ring slots for streaming blocks (GPU engines) */
    size_t ring_slot;   /* bytes per slot */
    dd_tune tune;       /* grid, panel, lookahead (auto: from the model) and the prediction */
    dd_summa s;         /* work blocks and panels */
    dd_output out;      /* the output's temporary and final names */
    char why[192], input[512], mpi_version[128];
    dd_record rec;
    struct {               /* rank 0's progress lines during the multiplies */
        double t0, last;   /* start of the multiplies, last line */
        int64_t last_done; /* panels done at the last line, over all repetitions */
        int rep, reps;     /* repetition under way (warm-ups included), of */
    } prog;
};

/* run_data.c: the steps that move or compute data, each agreed */
void run_note_phase(run_ctx *c, const char *what, double seconds);
int run_alloc_blocks(run_ctx *c, dd_err *err);
int run_load_inputs(run_ctx *c, dd_err *err); /* read (or generate) and upload, streamed */
int run_multiply(run_ctx *c, dd_err *err);    /* --warmup + --repeat timed multiplies */
size_t run_c0_bytes(const run_ctx *c);        /* work memory of the saved beta·C (0: none) */
int run_host_to_host(run_ctx *c, dd_err *err);
int run_write_output(run_ctx *c, dd_err *err); /* to the temporary name, then commit */

/* run_telemetry.c: the GPUs' clock, power and energy over the timed
 * multiplies (engine telemetry ops; nothing on engines without them).
 * start: local.  stop: local, then with rc == DD_OK gathers every rank's
 * figures into c->rec.tele on rank 0 (collective, agreed); returns rc or
 * the gather's failure. */
void run_telemetry_start(run_ctx *c);
int run_telemetry_stop(run_ctx *c, int rc, dd_err *err);

/* run_verify.c: the check guards the files (agreed; DD_ECHECK on a mismatch) */
int run_verify_inputs(run_ctx *c, dd_err *err);   /* blocks in memory = samples of the input */
int run_verify_c_input(run_ctx *c, dd_err *err);  /* beta·C_in in memory = beta·samples of C */
int run_verify_written(run_ctx *c, dd_err *err);  /* the temporary output = what was computed */
int run_fault_corrupt_c(run_ctx *c, dd_err *err); /* tests only (DD_FAULT=corrupt-c:R) */

/* run_stream.c: blocks between files and work memory in bands through the
 * ring.  A file source or sink is a sub-block of a dataset: rows
 * [row0, row0 + n) (n given to run_stream_*), columns [col0, col0 + cols);
 * bands are its rows: fill() reads rows [r, r+h) of it into buf (h×cols),
 * drain() writes them from buf.  Untransposed, the band is rows [r, r+h)
 * of the work block.  With trans, the work block is the sub-block's
 * transpose: the band is the work block's columns [r, r+h), and the stream
 * has the engine turn it (upload_t_async, download_t_async). */
typedef struct run_source run_source;
struct run_source {
    int (*fill)(const run_source *s, void *buf, int64_t r, int64_t h, dd_err *err);
    run_ctx *c;
    dd_io *io;                /* file sources and sinks */
    const char *dset;         /* their dataset */
    int64_t row0, col0, cols; /* the stored sub-block's place in its dataset, its width */
    int trans;                /* the work block is the stored sub-block's transpose */
};
typedef struct run_sink run_sink;
struct run_sink {
    int (*drain)(const run_sink *s, const void *buf, int64_t r, int64_t h, dd_err *err);
    run_ctx *c;
    dd_io *io;
    const char *dset;
    int64_t row0, col0, cols;
    int trans;
};
/* The file source (sink) of the work block whose rows are `r` and columns
 * `k` of the matrix op(X) held by dataset dset, stored transposed when trans. */
run_source run_file_source(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k,
                           int trans);
run_sink run_file_sink(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k, int trans);
size_t run_ring_bytes(const run_ctx *c); /* host memory the ring (or scratch) takes per rank */
size_t run_device_scratch_bytes(const run_ctx *c); /* GPU: the engine's turning scratch */
int run_ring_open(run_ctx *c, dd_err *err);
void run_ring_close(run_ctx *c);
/* Not agreed (the caller agrees after its last band call).  rows×cols is
 * the work block. */
int run_stream_in(run_ctx *c, const run_source *src, int64_t rows, int64_t cols, void *work,
                  dd_err *err);
int run_stream_out(run_ctx *c, const run_sink *dst, int64_t rows, int64_t cols, const void *work,
                   dd_err *err);

/* run_record.c */
/* Rank 0 prints the decomposition and memory per rank (collective). */
void run_print_dry_run(run_ctx *c, size_t work_bytes, size_t slot_bytes);
/* Fills c->rec with what the run was and where (collective: gathers hosts
 * and devices to rank 0). */
void run_fill_record(run_ctx *c);
/* The provenance attributes written on C: fills attrs (at least
 * RUN_NATTRS entries) from c; grid_buf keeps the grid string alive. */
enum { RUN_NATTRS = 17 };
int run_output_attrs(const run_ctx *c, dd_attr *attrs, char *grid_buf, size_t grid_len);

#endif
