/* report.h — what a run measured: rank 0's text report and JSON record. */
#ifndef DD_REPORT_H
#define DD_REPORT_H

#include <stdio.h>

#include "dd.h"
#include "dgemm_dist_plan.h" /* dd_check_result */
#include "dd_telemetry.h"
#include "timer.h"

/* The phases of a run, in order.  setup: the launcher's start (mpirun,
 * srun) to the first read (process start, MPI, devices, communicators
 * warmed, allocation); multiply is the median
 * repetition (rates are based on it), the wall account below uses all of
 * them; teardown: releasing devices, communicators and memory. */
enum {
    PH_SETUP,
    PH_READ,
    PH_UPLOAD,
    PH_MULTIPLY,
    PH_EXPOSED,
    PH_DOWNLOAD,
    PH_CHECK,
    PH_WRITE,
    PH_TEARDOWN,
    PH_COUNT
};
extern const char *const dd_phase_names[PH_COUNT];

/* What the setup phase spent, in order, on rank 0: the launcher before the
 * process, MPI_Init, probing the inputs, opening the devices, the plan,
 * the communicators, the output's name and the memory, warming the
 * communicators.  Each part ends at its mark; they add up to the setup. */
enum { SP_LAUNCH, SP_MPI, SP_INPUTS, SP_DEVICES, SP_PLAN, SP_COMM, SP_MEMORY, SP_WARM, SP_COUNT };
extern const char *const dd_setup_part_names[SP_COUNT];

typedef struct {
    const char *cmdline;
    int ranks, P, Q;
    int64_t M, N, K, nb;
    int lookahead, repeat, warmup;
    dd_dtype type;
    char transa, transb; /* GEMM's op(A), op(B): 'N', 'T' or 'C' */
    double alpha, beta;  /* C = alpha·op(A)·op(B) + beta·C */
    /* their imaginary parts (0 for the real types) */
    double alpha_im, beta_im;
    const char *order;   /* "row" or "col": the files' layout */
    const char *input;   /* file name or "generated (seed S)" */
    const char *backend, *backend_why;
    const char *comm, *comm_detail;
    const char *kernel, *io;
    const char *accuracy;     /* --accuracy: "native" or "fp64" */
    const char *accuracy_why; /* fp64: the kernel chosen and why; NULL for native */
    const char *kernel_note;  /* the kernel's note (rank 0), NULL when none */
    int gpus;
    /* per phase over ranks; have[i] = phase ran */
    dd_stat ph[PH_COUNT];
    int have[PH_COUNT];
    /* file to file as one pipeline (src/driver/run_pipe.c): pipeline_bands
     * bands of C (0: the phases ran one after another), and of each phase
     * the seconds hidden behind the others (read and write: the I/O thread's
     * time the multiply did not wait for) */
    int64_t pipeline_bands;
    dd_stat hidden[PH_COUNT];
    double pipeline_wall; /* seconds of the band loop, slowest rank */
    const char *pipeline_slots; /* where the bands lie on the host: "pinned" (the copy
                                 * engines move them), "staged" (copied through the
                                 * plan's staging) or "in place" (host work memory) */
    double pipeline_resident;       /* op(B)'s (and C's input's) load and prepare, slowest rank */
    double pipeline_slots_alloc;    /* the pinned slots' allocation, slowest rank (0: none) */
    uint64_t pipeline_band_bytes;   /* C's bytes in rank 0's largest band */
    double setup_at[SP_COUNT + 1]; /* rank 0: dd_now() at the start, then at each part's end */
    double *mult_times; /* per repetition, slowest rank */
    int nrep;
    /* each panel's local multiply in the median repetition, over ranks:
     * fastest and slowest rank; npanel 0: not kept (too many figures) */
    double *panel_min, *panel_max;
    int64_t npanel;
    double tmin, tmed, tflops, exposed_fraction;
    double host_to_host; /* seconds of the streamed host-to-host pass, slowest rank; 0: not run */
    double multiply_all; /* seconds of every repetition, warm-ups included (slowest rank) */
    double multiply_all_own, host_to_host_own; /* the same on this rank */
    double wall;         /* process start to the report (this rank, rank 0 for the report) */
    const char *output;  /* the output file, or NULL */
    int generated;       /* inputs made by the generator (the read phase is "generate") */
    int checked;
    dd_check_result chk;
    /* rank 0 only: gathered */
    char *hosts;   /* comma-separated distinct hostnames */
    char *devices; /* newline-separated device names per rank */
    const char *v_mpi, *v_hdf5, *v_blas, *v_engine;
    /* rank 0 only: each rank's GPU telemetry over the timed multiplies
     * (dd_telemetry.h), ranks entries; NULL where the engine has none */
    dd_telemetry *tele;
    /* the performance model (src/core/tune.c): the settings' line, the
     * prediction's line, the record's "model" object; NULL: none */
    const char *tune_line, *model_line, *model_json;
} dd_record;

/* re + im·i as --alpha and --beta take it: "2", "0.5i" or "2-0.5i". */
void report_scalar(char *buf, size_t n, double re, double im);
/* "C = A·B", or e.g. "C = -0.5·Aᵀ·B + 2.5·C", "C = (1-2i)·Aᴴ·B + 0.5i·C": the
 * expression a run computes; alpha and beta as {re, im}. */
void report_expr(char *buf, size_t n, char transa, char transb, const double alpha[2],
                 const double beta[2]);
/* Phase i's name in the report and record: "generate" for the read of a
 * generated input, which is made, not read. */
const char *report_phase_name(const dd_record *r, int i);
/* Seconds of setup part i; 0 where a mark is missing (a part skipped). */
double report_setup_part(const dd_record *r, int i);
/* Seconds of the wall clock that no phase accounts for. */
double report_unaccounted(const dd_record *r);
/* Fill tmin/tmed/tflops from mult_times. */
void report_finish(dd_record *r);
void report_print(FILE *f, const dd_record *r);
/* report_telemetry.c: the "GPU" lines of the report (nothing without
 * telemetry) and the record's ,"telemetry":{...} (null without). */
void report_telemetry_print(FILE *f, const dd_record *r);
void report_telemetry_json(FILE *f, const dd_record *r);
/* report_json.c: appends one JSON object on one line, in one write; DD_OK, or DD_EIO
 * with the reason (the file keeps whole lines where it can). */
int report_json(const char *path, const dd_record *r, dd_err *err);

/* Real flops of one multiply: 2·M·N·K, 8·M·N·K for the complex types (a
 * complex multiply-add is four real multiplies and four adds). */
static inline double run_flops(dd_dtype t, int64_t M, int64_t N, int64_t K)
{
    return (dd_dtype_complex(t) ? 8.0 : 2.0) * (double)M * (double)N * (double)K;
}

#endif
