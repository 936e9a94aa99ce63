/* run.c — one distributed multiply, start to finish (run.h): a pipeline
 * of named steps over the run's state (run_ctx.h).  The multiply is the
 * library's (dgemm_dist.h: a context and a plan); the run reads and writes
 * the files, checks and reports.
 *
 * Every step ends with dd_agree(): a failure anywhere becomes the same
 * failure everywhere, rank 0 prints the one message, and all ranks leave
 * together.  The output file is written under a temporary name and renamed
 * only when everything, the check included, has succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_fault.h"
#include "run_ctx.h"
#include "timer.h"

/* SLURM started N tasks but MPI sees one: every copy thinks it is rank 0. */
static int check_launch(run_ctx *c, dd_err *err)
{
    const char *st = getenv("SLURM_STEP_NUM_TASKS");
    if (!st || c->size != 1 || getenv("OMPI_COMM_WORLD_SIZE"))
        return DD_OK;
    long n = strtol(st, NULL, 10);
    if (n > 1)
        return dd_fail(err, DD_EUSAGE,
                       "Slurm started %ld tasks but MPI sees a world of 1 rank: each task would "
                       "run alone as rank 0. The MPI library was not told about Slurm's launch: "
                       "use srun --mpi=pmix (see srun --mpi=list) or mpirun",
                       n);
    return DD_OK;
}

/* --grid P×Q must cover the ranks (auto: the library's choice). */
static int check_grid(run_ctx *c, dd_err *err)
{
    int P = c->o->P, Q = c->o->Q;
    if (!P || (int64_t)P * Q == c->size)
        return DD_OK;
    int dP, dQ;
    grid_default(c->size, &dP, &dQ);
    return dd_fail(err, DD_EUSAGE,
                   "--grid %dx%d needs %lld ranks but MPI started %d: change --grid or the "
                   "rank count (or leave --grid out for %dx%d)",
                   P, Q, (long long)P * Q, c->size, dP, dQ);
}

/* Which datasets hold transposes: op(A) = stored A when tA = 0, its
 * transpose when 1; --order col turns every dataset (a column-major
 * writer's matrix is seen transposed).  Generated inputs have no file
 * layout: op(A) is a block of the generator's A or of its transpose. */
static void gemm_layout(run_ctx *c)
{
    const dd_run_opts *o = c->o;
    int file = o->in != NULL;
    c->tA = (o->transa != 'N') != (file && o->col); /* 'C': transposed (and conjugated) */
    c->tB = (o->transb != 'N') != (file && o->col);
    c->tC = o->col;
    c->read_c = o->beta != 0 || o->beta_im != 0;
    c->alpha0 = o->alpha == 0 && o->alpha_im == 0;
}

/* An imaginary part of --alpha or --beta needs complex data: real inputs
 * (--dtype f64|f32, or a real file) have real products only. */
static int check_scalars(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    if (dd_dtype_complex(c->type) || (o->alpha_im == 0 && o->beta_im == 0))
        return DD_OK;
    int a = o->alpha_im != 0;
    char v[64];
    report_scalar(v, sizeof v, a ? o->alpha : o->beta, a ? o->alpha_im : o->beta_im);
    const char *opt = a ? "--alpha" : "--beta";
    if (o->in)
        return dd_fail(err, DD_EUSAGE,
                       "%s %s has an imaginary part, but %s holds real matrices (%s): give %s a "
                       "real value, or multiply complex ones (c128 or c64)",
                       opt, v, o->in, dd_dtype_name(c->type), opt);
    return dd_fail(err, DD_EUSAGE,
                   "%s %s has an imaginary part, but --dtype %s is real: give %s a real value, "
                   "or use --dtype c128 or c64",
                   opt, v, dd_dtype_name(c->type), opt);
}

/* The inputs' shape and type: from the file, or from --size. */
static int resolve_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    gemm_layout(c);
    c->io = io_select(o->io);
    if (!c->io)
        return dd_fail(err, DD_EUSAGE,
                       "--io %s is not available: this build has %s HDF5, so "
                       "use --io independent (or auto)",
                       o->io, strstr(io_library_version(), "parallel") ? "parallel" : "serial");
    if (!o->in) {
        c->M = o->size[0];
        c->N = o->size[1];
        c->K = o->size[2];
        c->type = o->dtype;
        snprintf(c->input, sizeof c->input, "generated, seed %llu", (unsigned long long)o->seed);
        return check_scalars(c, err);
    }
    snprintf(c->input, sizeof c->input, "%s", o->in);
    dd_probe_gemm pg = {o->a,   o->b,      o->c,    o->transa, o->transb,
                        o->col, c->read_c, o->beta, o->beta_im};
    int rc = io_probe_gemm_cx(c->world, o->in, &pg, &c->M, &c->N, &c->K, &c->type, err);
    return rc ? rc : check_scalars(c, err);
}

/* The end of setup part `part` (report.h), on rank 0's clock; passes rc. */
static int mark(run_ctx *c, int part, int rc)
{
    c->rec.setup_at[part + 1] = dd_now();
    return rc;
}

/* --accuracy fp64: "the fastest kernel whose error stays within native
 * FP64's on this input".  For FP32 and complex data the default kernels
 * multiply in FP64 already (sgemm_dmma: exact products, FP64 sums, one
 * rounding to FP32).  For FP64 the only emulation held within native's
 * error on every input class is ozaki2-auto (the accuracy guard of
 * kernels/ozaki2.h), and with its guard paid for it is not faster than
 * native FP64 at the panel widths SUMMA multiplies (docs/ozaki2.md, "The
 * accuracy guard": its measured cost); so fp64 keeps the default kernel
 * everywhere and says why, in the report and in the record.  ozaki2-auto
 * stays a --kernel of its own. */
static void fp64_choice(run_ctx *c, const char *backend)
{
    char *why = c->names.accuracy_why;
    const size_t n = sizeof c->names.accuracy_why;
    if (c->type != DD_F64)
        snprintf(why, n, "the default kernel (%s data: it multiplies in FP64 already)",
                 dd_dtype_name(c->type));
    else if (!strcmp(backend, "cpu"))
        snprintf(why, n, "the default kernel (the CPU backend has no emulation)");
    else
        snprintf(why, n,
                 "the default kernel (native FP64: ozaki2-auto, the emulation within native's "
                 "error, is not faster once its guard is paid for; docs/ozaki2.md)");
}

/* The library's context (--backend, --comm, --kernel, --threads; grid,
 * panel and lookahead auto unless given): the devices open; --accuracy's
 * choice is then named for the backend that opened. */
static int open_context(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_context_options opts;
    dd_context_options_init(&opts);
    opts.backend = o->backend;
    opts.comm = o->comm;
    opts.kernel = o->kernel;
    opts.panel = o->panel;
    opts.lookahead = o->lookahead;
    opts.P = o->P;
    opts.Q = o->Q;
    opts.threads = o->threads;
    opts.type = (int)c->type; /* dd_dtype is dd_type by value (api_impl.h) */
    opts.tune = 1;
    char msg[DD_ERRLEN] = "";
    dd_status st = dd_context_create(c->world, &opts, &c->ctx, msg, sizeof msg);
    if (st != DD_SUCCESS)
        return dd_fail(err, dd_code_of(st), "%s", msg);
    if (o->accuracy == DD_ACC_FP64)
        fp64_choice(c, dd_context_backend(c->ctx));
    c->gpu = strcmp(dd_context_backend(c->ctx), "cpu") != 0;
    if (o->host_to_host && !c->gpu && c->rank == 0 && !o->quiet)
        fprintf(stderr,
                "dgemm-dist: note: --host-to-host times the GPU's streamed pass from host "
                "data; the %s backend keeps its data on the host, so there is no such "
                "pass to time\n",
                dd_context_backend(c->ctx));
    return DD_OK;
}

/* The plan: settings (auto ones from the model), blocks, memory checked;
 * nothing allocated yet (the dry run ends after it). */
static int make_plan(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_plan_params pp = {(int)c->type,
                         c->M,
                         c->N,
                         c->K,
                         c->read_c,
                         o->warmup + o->repeat + (o->host_to_host && c->gpu),
                         c->tA || c->tB || c->tC,
                         o->host_to_host && c->gpu,
                         o->seed + 0x5eed}; /* the check's vector follows --seed, as before */
    int rc = run_api(c, dd_plan_create(c->ctx, &pp, &c->plan), err);
    if (!rc) {
        dd_plan_get_info(c->plan, &c->pi);
        dd_plan_get_tool_info(c->plan, DGEMM_DIST_TOOL_VERSION, &c->ti);
    }
    if (!rc && dd_fault("setup"))
        rc = dd_fail(err, DD_EFAIL, "injected fault at setup on rank %d", c->rank);
    return dd_agree(c->world, rc, err);
}

/* time a step: returns its rc; records min/avg/max over ranks */
#define TIMED(c, phase, call)                                                                      \
    do {                                                                                           \
        double t0_ = dd_now();                                                                     \
        rc = (call);                                                                               \
        double dt_ = dd_now() - t0_;                                                               \
        if (!rc) {                                                                                 \
            (c)->rec.ph[phase] = dd_stat_over((c)->world, dt_);                                    \
            (c)->rec.have[phase] = 1;                                                              \
            run_note_phase((c),                                                                    \
                           phase == PH_READ && !(c)->o->in ? "generate" : dd_phase_names[phase],   \
                           (c)->rec.ph[phase].max);                                                \
        }                                                                                          \
    } while (0)

static int verify(run_ctx *c, dd_err *err)
{
    int rc = dd_agree(c->world, run_verify_inputs(c, err), err);
    if (rc)
        return rc;
    rc = run_api(c, dd_plan_check(c->plan, &c->rec.chk), err);
    c->rec.checked = rc == DD_OK;
    return rc;
}

/* The library's plan and context back (devices, communicators, memory);
 * timed as the teardown phase on success, and again harmlessly from
 * cleanup(). */
static void release(run_ctx *c)
{
    dd_plan_destroy(c->plan);
    c->plan = NULL;
    dd_context_destroy(c->ctx);
    c->ctx = NULL;
}

static void cleanup(run_ctx *c)
{
    if (c->out.active)
        io_output_abort(c->world, &c->out);
    release(c);
    free(c->rec.mult_times);
    free(c->rec.panel_min);
    free(c->rec.panel_max);
    free(c->rec.hosts);
    free(c->rec.devices);
    free(c->rec.tele);
}

/* Everything before data moves: the launch, the inputs' shape, the
 * library's context (the devices) and plan (settings, auto ones from the
 * model; memory checked); the dry run ends here. */
static int setup(run_ctx *c, dd_err *err)
{
    int rc;
    if ((rc = dd_agree(c->world, check_launch(c, err), err)) ||
        (rc = dd_agree(c->world, resolve_inputs(c, err), err)) ||
        (rc = mark(c, SP_INPUTS, dd_agree(c->world, check_grid(c, err), err))) ||
        (rc = mark(c, SP_DEVICES, open_context(c, err))) ||
        (rc = mark(c, SP_PLAN, make_plan(c, err))))
        return rc;
    return DD_OK;
}

/* The output file's size: C's bytes and room for HDF5's metadata and the
 * provenance attributes (a few KiB). */
static uint64_t output_bytes(const run_ctx *c)
{
    int over = 0;
    uint64_t b = dd_mul3((uint64_t)c->M, (uint64_t)c->N, dd_elsize(c->type), &over);
    return over || b > UINT64_MAX - (64 << 10) ? UINT64_MAX : b + (64 << 10);
}

/* A bound on the JSON record's length: its fixed part with the command line,
 * and a figure per repetition, per panel (its fastest and slowest rank) and
 * per rank (host, device, telemetry). */
static uint64_t record_bytes(const run_ctx *c)
{
    const dd_run_opts *o = c->o;
    uint64_t panels = c->pi.panels > 0 ? (uint64_t)c->pi.panels : 0;
    return (16u << 10) + 2 * strlen(o->cmdline ? o->cmdline : "") +
           32 * (uint64_t)(o->repeat + o->warmup) + 64 * panels + 1024 * (uint64_t)c->size;
}

/* Data in: the output's temporary name, the plan's memory and connections,
 * the read, the upload. */
static int data_in(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc;
    if (o->json && ((rc = io_output_check_side(c->world, o->json, "--json", o->in, o->out, err)) ||
                    (rc = io_output_check_side_room(c->world, o->json, "--json",
                                                    record_bytes(c), err))))
        return rc;
    if (o->out && ((rc = io_output_prepare(c->world, o->out, o->in, o->force, &c->out, err)) ||
                   (rc = io_output_check_limit(c->world, o->out, output_bytes(c), err))))
        return rc;
    c->out.sync = o->sync; /* --sync: a durable commit */
    double t0 = dd_now();
    rc = run_api(c, dd_plan_allocate(c->plan), err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    if (rc)
        return rc;
    run_take_names(c); /* the comm backend is known now */
    const double *a = c->ti.allocate_seconds;
    c->rec.setup_at[SP_COMM + 1] = t0 + a[0];
    c->rec.setup_at[SP_MEMORY + 1] = t0 + a[0] + a[1];
    c->rec.setup_at[SP_WARM + 1] = dd_now();
    c->rec.ph[PH_SETUP] = dd_stat_over(c->world, dd_now() - c->t_start);
    c->rec.have[PH_SETUP] = 1;
    run_note_phase(c, "setup", c->rec.ph[PH_SETUP].max);
    if (c->pipe) /* the read is the pipeline's */
        return DD_OK;
    TIMED(c, PH_READ, run_load_inputs(c, err));
    return rc;
}

/* Data out: the result down, checked, written; *failed_check when the
 * check said FAILED (then nothing is written). */
static int data_out(run_ctx *c, int *failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    if ((rc = dd_agree(c->world, run_fault_corrupt_c(c, err), err)))
        return rc;
    if (o->host_to_host && c->gpu && (rc = run_host_to_host(c, err)))
        return rc;
    if (o->check) {
        TIMED(c, PH_CHECK, verify(c, err));
        if (rc)
            return rc;
    }
    *failed_check = o->check && !c->rec.chk.passed;
    if (o->out && !*failed_check)
        TIMED(c, PH_WRITE, run_write_output(c, err));
    return rc;
}

/* All repetitions, warm-ups included, for the wall account. */
static int multiply_all(run_ctx *c, dd_err *err)
{
    double t0 = dd_now();
    int rc = run_multiply(c, err);
    if (!rc) {
        dd_stat all = dd_stat_over(c->world, dd_now() - t0);
        c->rec.multiply_all = all.max;
        c->rec.multiply_all_own = all.own;
    }
    return rc;
}

/* MPI finalized, then the device: every second up
 * to here is in the teardown phase, so the wall in the report leaves out
 * only printing it and exit.  After this no rank talks to another. */
static void finalize(run_ctx *c, double t_release)
{
    dd_stat before = dd_stat_over(c->world, dd_now() - t_release);
    double t0 = dd_now();
    MPI_Finalize();
    c->finalized = 1;
    dd_release_devices();
    double after = dd_now() - t0; /* this rank's: nothing is gathered any more */
    c->rec.ph[PH_TEARDOWN] =
        (dd_stat){before.min + after, before.avg + after, before.max + after, before.own + after};
    c->rec.have[PH_TEARDOWN] = 1;
    c->rec.wall = dd_now() - c->t_start;
}

/* Rank 0: the report (or the check line alone with --quiet), the record,
 * and a FAILED check's error line.  A failure to write the record is rank
 * 0's alone and a warning (the output was committed before). */
static void print_results(run_ctx *c, int failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    if (c->tty && !o->quiet)
        fputc('\n', stderr);
    if (!o->quiet)
        report_print(stdout, &c->rec);
    else if (o->check) {
        char line[256];
        dd_check_line(&c->rec.chk, line, sizeof line);
        printf("%s\n", line);
    }
    /* The record comes last, after the output's commit: one that cannot be
     * written now (the disk filled during the run; its room was checked
     * before the read) is a warning, and the run keeps its status. */
    if (o->json && report_json(o->json, &c->rec, err) != DD_OK)
        fprintf(stderr,
                "dgemm-dist: warning: %s; the run's result stands%s (exit status unchanged)\n",
                err->msg, o->out && !failed_check ? ", its output is committed" : "");
    if (failed_check)
        fprintf(stderr,
                "dgemm-dist: error: the check FAILED (scaled residual %.3g >= %g, or not "
                "finite): C is wrong, or the inputs hold NaN or Inf%s%s\n",
                c->rec.chk.residual, DD_CHECK_THRESHOLD, o->out ? "; not written: " : "",
                o->out ? o->out : "");
    fflush(stdout);
    fflush(stderr);
}

/* Devices, memory and MPI are released first, so the teardown is in them,
 * and rank 0 prints.  A FAILED check is the exception: every rank then
 * exits with status 3, and once one has, mpirun may end rank 0 before it
 * has printed; so rank 0 prints before MPI_Finalize, which holds the other
 * ranks until it arrives, and the teardown shown leaves MPI_Finalize out. */
static int finish(run_ctx *c, int failed_check, dd_err *err)
{
    run_fill_record(c);
    if (c->out.active) /* a FAILED check: the temporary goes, the old output stays */
        io_output_abort(c->world, &c->out);
    double t_release = dd_now();
    release(c);
    if (failed_check) {
        dd_stat before = dd_stat_over(c->world, dd_now() - t_release);
        c->rec.ph[PH_TEARDOWN] = before;
        c->rec.have[PH_TEARDOWN] = 1;
        c->rec.wall = dd_now() - c->t_start;
        if (c->rank == 0)
            print_results(c, failed_check, err);
        MPI_Finalize();
        c->finalized = 1;
        dd_release_devices();
        return DD_OK;
    }
    finalize(c, t_release);
    if (c->rank == 0)
        print_results(c, failed_check, err);
    return DD_OK;
}

int dd_run(const dd_run_opts *o)
{
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.world = MPI_COMM_WORLD;
    MPI_Comm_rank(c.world, &c.rank);
    MPI_Comm_size(c.world, &c.size);
    c.t_start = o->t_start > 0 ? o->t_start : dd_now();
    /* setup parts: launcher until main(), MPI_Init, then dd_run's own */
    c.rec.setup_at[SP_LAUNCH] = c.t_start;
    c.rec.setup_at[SP_MPI] = o->t_main > 0 ? o->t_main : c.t_start;
    c.rec.setup_at[SP_INPUTS] = o->t_mpi > 0 ? o->t_mpi : c.t_start;
    c.tty = isatty(2);
    io_quiet();
    dd_err err = {{0}};
    int failed_check = 0, status;
    int rc = setup(&c, &err);
    if (!rc && o->dry_run) {
        run_print_dry_run(&c);
    } else if (!rc) {
        c.pipe = run_pipeline_eligible(&c);
        if (c.pipe) {
            if (!(rc = data_in(&c, &err)) && !(rc = run_pipeline(&c, &failed_check, &err)))
                rc = finish(&c, failed_check, &err);
        } else if (!(rc = data_in(&c, &err)) && !(rc = multiply_all(&c, &err)) &&
                   !(rc = data_out(&c, &failed_check, &err))) {
            rc = finish(&c, failed_check, &err);
        }
    }
    if (rc && c.finalized) {
        fprintf(stderr, "dgemm-dist: error: %s\n", err.msg);
        status = DD_EXIT_ERROR;
    } else if (rc) {
        dd_report_error(c.world, &err);
        status = rc == DD_EUSAGE ? DD_EXIT_USAGE : rc == DD_ECHECK ? DD_EXIT_FAILED : DD_EXIT_ERROR;
    } else {
        status = failed_check ? DD_EXIT_FAILED : DD_EXIT_OK;
    }
    cleanup(&c); /* after finalize(): only host memory is left to free */
    return status;
}
