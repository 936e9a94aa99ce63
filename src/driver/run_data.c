/* run_data.c — the steps of a run that move or compute data: the read
 * into the library's plan, the timed multiplies, the write (run_ctx.h).
 * Each step ends agreed across ranks: the library's calls are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_fault.h"
#include "run_ctx.h"
#include "timer.h"

void run_note_phase(run_ctx *c, const char *what, double seconds)
{
    if (c->rank == 0 && !c->o->quiet)
        fprintf(stderr, "%s[dgemm-dist] %-9s %.3f s\n", c->tty ? "\r" : "", what, seconds);
}

int run_api(run_ctx *c, dd_status st, dd_err *err)
{
    if (st == DD_SUCCESS)
        return DD_OK;
    return dd_fail(err, dd_code_of(st), "%s", dd_context_last_error(c->ctx));
}

dd_range run_rows(const run_ctx *c, int which)
{
    return (dd_range){c->pi.row0[which], c->pi.rows[which]};
}

dd_range run_cols(const run_ctx *c, int which)
{
    return (dd_range){c->pi.col0[which], c->pi.cols[which]};
}

/* Generated inputs are made where they are used (on the GPU for CUDA), the
 * same values as the host generator's bit for bit, and as gen writes them:
 * A is M×K, or K×M with --transa T (the block of op(A) is then a block of
 * its transpose), B likewise; C's input M×N. */
static int generate_blocks(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    if (!c->alpha0)
        rc = run_api(c, dd_plan_generate(c->plan, DD_OPERAND_A, o->seed, o->transa != 'N'), err);
    if (!rc && !c->alpha0)
        rc = run_api(c, dd_plan_generate(c->plan, DD_OPERAND_B, o->seed, o->transb != 'N'), err);
    if (!rc && c->read_c)
        rc = run_api(c, dd_plan_generate(c->plan, DD_OPERAND_C, o->seed, 0), err);
    return rc;
}

/* op(A), op(B) (unless alpha = 0, both parts: never read) and C's input (beta ≠ 0)
 * into the plan from the file, transposed where the datasets are.  Every
 * matrix's loads are made even after a failure: the reads may be
 * collective; the first failure's message is kept. */
static int load_blocks(run_ctx *c, dd_io *io, dd_err *err)
{
    const dd_run_opts *o = c->o;
    const char *dset[3] = {o->a, o->b, o->c};
    int trans[3] = {c->tA, c->tB, c->tC};
    int want[3] = {!c->alpha0, !c->alpha0, c->read_c}, rc = DD_OK;
    for (int i = 0; i < 3; i++) {
        run_file f = run_file_at(c, io, dset[i], run_rows(c, i), run_cols(c, i), trans[i]);
        if (i == 1 && dd_fault("misread")) /* tests: B read at the wrong offset */
            f.row0 = 0;
        dd_stream st = run_file_stream(&f);
        dd_err e2 = {{0}};
        int rci = want[i] ? run_api(c, dd_plan_load(c->plan, (dd_operand)i, &st), &e2) : DD_OK;
        if (!rc && rci) {
            rc = rci;
            *err = e2;
        }
    }
    return rc;
}

/* Read (or generate), then alpha and beta applied, beta·C_in's part of
 * the check taken and kept for later passes (dd_plan_prepare); beta·C_in
 * in memory checked against the file. */
int run_load_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc;
    if (!o->in) {
        rc = generate_blocks(c, err);
    } else {
        dd_io io = {0};
        io.ops = c->io;
        if ((rc = dd_agree(c->world, io.ops->open_read(&io, c->world, o->in, err), err)))
            return rc;
        rc = load_blocks(c, &io, err);
        rc = io_close_after(&io, rc, err);
        rc = dd_agree(c->world, rc, err);
    }
    if (!rc)
        rc = run_api(c,
                     dd_dtype_complex(c->type)
                         ? dd_plan_prepare_complex(c->plan, (dd_complex128){o->alpha, o->alpha_im},
                                                   (dd_complex128){o->beta, o->beta_im},
                                                   o->transa == 'C', o->transb == 'C', o->check)
                         : dd_plan_prepare(c->plan, o->alpha, o->beta, o->check),
                     err);
    if (!rc && c->read_c && o->check && o->in)
        rc = run_verify_c_input(c, err);
    return rc;
}

int run_write_output(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_io io = {0};
    io.ops = c->io;
    io.durable = o->sync; /* --sync: each rank's writes on disk before its close */
    const char *names[1] = {o->c};
    int64_t dims[1][2] = {{c->tC ? c->N : c->M, c->tC ? c->M : c->N}};
    int rc = dd_agree(c->world,
                      io.ops->create(&io, c->world, c->out.tmp, 1, names, (const int64_t(*)[2])dims,
                                     c->type, err),
                      err);
    if (rc)
        return rc;
    if (dd_fault("slow-write")) /* a window for tests that signal a run mid-write */
        sleep(30);
    run_file f = run_file_at(c, &io, o->c, run_rows(c, 2), run_cols(c, 2), c->tC);
    if (dd_fault("miswrite")) /* tests: C written at the wrong place */
        *(c->tC ? &f.row0 : &f.col0) = 0;
    dd_stream sink = run_file_stream(&f);
    rc = run_api(c, dd_plan_store(c->plan, DD_OPERAND_C, &sink), err);
    if (!rc && dd_fault("write"))
        rc = dd_fail(err, DD_EIO, "injected fault writing C on rank %d", c->rank);
    rc = dd_agree(c->world, rc, err);
    dd_attr attrs[RUN_NATTRS];
    char grid[32];
    int nattrs = run_output_attrs(c, attrs, grid, sizeof grid);
    if (!rc)
        rc = dd_agree(c->world, io.ops->set_attrs(&io, o->c, attrs, nattrs, err), err);
    rc = dd_agree(c->world, io_close_after(&io, rc, err), err);
    if (!rc)
        rc = run_verify_written(c, err);
    if (!rc && c->rank == 0 && dd_fault("race-out")) { /* another run's output appears */
        FILE *f = fopen(o->out, "wx");
        if (f)
            fclose(f);
    }
    if (!rc)
        rc = io_output_commit(c->world, &c->out, err);
    return rc;
}

/* Rank 0's sign of life during the multiplies.  On a terminal a live
 * counter (at most 5 updates a second); in a batch log one line when both
 * --progress seconds and a tenth of the panels have passed since the last,
 * with the rate so far and the time left.  Only where the host sees each
 * panel finish (the CPU backend); a GPU's multiplies are queued ahead, and
 * its repetitions are reported instead. */
static void on_panel(void *arg, int64_t done, int64_t total)
{
    run_ctx *c = arg;
    double now = dd_now(), elapsed = now - c->prog.t0;
    int64_t all = total * c->prog.reps, so_far = total * c->prog.rep + done;
    if (c->tty) {
        if (now - c->prog.last < 0.2 && done < total)
            return;
        fprintf(stderr, "\r[dgemm-dist] multiply  %d/%d  panel %lld/%lld   ", c->prog.rep + 1,
                c->prog.reps, (long long)done, (long long)total);
    } else {
        if (c->o->progress <= 0 || now - c->prog.last < c->o->progress ||
            (so_far - c->prog.last_done) * 10 < all || so_far >= all)
            return;
        double flops = run_flops(c->type, c->M, c->N, c->K) * (double)so_far / total;
        double left = elapsed * (double)(all - so_far) / (double)so_far;
        fprintf(stderr,
                "[dgemm-dist] multiply  %lld of %lld panels (%.0f%%), %.3g GFLOP/s so far, "
                "about %.0f s left\n",
                (long long)so_far, (long long)all, 100.0 * so_far / all, flops / elapsed / 1e9,
                left);
        c->prog.last_done = so_far;
    }
    c->prog.last = now;
}

/* One timed multiply, agreed; a broken broadcast ends every rank. */
static int timed_multiply(run_ctx *c, double *sec, double *gemm, double *slowest, dd_err *err)
{
    dd_plan_times t = {0, 0, 0};
    int rc = run_api(c, dd_plan_multiply(c->plan, &t), err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    *sec = t.seconds;
    *gemm = t.gemm_seconds;
    *slowest = t.slowest;
    return rc;
}

/* Panel times are kept for at most this many repetitions × panels. */
#define PANEL_FIGURES_MAX (1 << 22)

/* Each panel's local multiply in the median repetition (this rank's: row,
 * NULL where none were kept, the same on every rank), fastest and slowest
 * rank into the record. */
static int record_panels(run_ctx *c, const double *row, dd_err *err)
{
    int64_t np = c->pi.panels;
    if (!row || np <= 0)
        return DD_OK;
    c->rec.panel_min = malloc((size_t)np * sizeof(double));
    c->rec.panel_max = malloc((size_t)np * sizeof(double));
    int rc =
        c->rec.panel_min && c->rec.panel_max
            ? DD_OK
            : dd_fail(err, DD_ENOMEM, "out of host memory for %lld panel times", (long long)np);
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    rc = dd_mpi_check(MPI_Allreduce(row, c->rec.panel_min, (int)np, MPI_DOUBLE, MPI_MIN, c->world),
                      "MPI_Allreduce of the panel times", err);
    if (!rc)
        rc = dd_mpi_check(
            MPI_Allreduce(row, c->rec.panel_max, (int)np, MPI_DOUBLE, MPI_MAX, c->world),
            "MPI_Allreduce of the panel times", err);
    if (!(rc = dd_agree(c->world, rc, err)))
        c->rec.npanel = np;
    return rc;
}

/* Per-rank figures of the median repetition (by the slowest rank): the
 * slowest one not above the median, which is the median itself for an odd
 * count and the lower middle one for an even count. */
static int record_median(run_ctx *c, const double *per_rank, const double *exposed,
                         const double *panels, dd_err *err)
{
    c->rec.nrep = c->o->repeat;
    c->rec.M = c->M;
    c->rec.N = c->N;
    c->rec.K = c->K;
    c->rec.alpha = c->o->alpha; /* alpha = 0 multiplies nothing: no rate */
    c->rec.alpha_im = c->o->alpha_im;
    c->rec.type = c->type;      /* complex: 8 flops a multiply-add */
    report_finish(&c->rec);
    const double *t = c->rec.mult_times;
    int med = -1;
    for (int j = 0; j < c->o->repeat; j++)
        if (t[j] <= c->rec.tmed && (med < 0 || t[j] > t[med]))
            med = j;
    c->rec.ph[PH_MULTIPLY] = dd_stat_over(c->world, per_rank[med]);
    c->rec.ph[PH_EXPOSED] = dd_stat_over(c->world, exposed[med]);
    c->rec.have[PH_MULTIPLY] = c->rec.have[PH_EXPOSED] = 1;
    c->rec.exposed_fraction =
        c->rec.ph[PH_MULTIPLY].avg > 0 ? c->rec.ph[PH_EXPOSED].avg / c->rec.ph[PH_MULTIPLY].avg : 0;
    run_note_phase(c, "multiply", c->rec.tmed);
    return record_panels(c, panels ? panels + (size_t)med * (size_t)c->pi.panels : NULL, err);
}

int run_multiply(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int total = o->warmup + o->repeat;
    double *per_rank = calloc((size_t)o->repeat, sizeof(double));
    double *exposed = calloc((size_t)o->repeat, sizeof(double));
    c->rec.mult_times = calloc((size_t)o->repeat, sizeof(double));
    const int64_t np = c->pi.panels;
    const int keep = np > 0 && np <= PANEL_FIGURES_MAX / o->repeat; /* the same on every rank */
    double *panels = keep ? calloc((size_t)(o->repeat * np), sizeof(double)) : NULL;
    int rc = per_rank && exposed && c->rec.mult_times && (panels || !keep)
                 ? DD_OK
                 : dd_fail(err, DD_ENOMEM, "out of host memory for timings");
    rc = dd_agree(c->world, rc, err);
    c->prog.t0 = c->prog.last = dd_now();
    c->prog.reps = total;
    if (c->rank == 0 && !o->quiet && !c->gpu)
        dd_plan_set_progress(c->plan, on_panel, c);
    for (int i = 0; i < total && !rc; i++) {
        double sec = 0, gemm = 0;
        c->prog.rep = i;
        if (i == o->warmup)
            run_telemetry_start(c);
        double slowest = 0;
        if ((rc = timed_multiply(c, &sec, &gemm, &slowest, err)))
            break;
        if (i >= o->warmup) {
            int j = i - o->warmup;
            per_rank[j] = sec;
            exposed[j] = sec > gemm ? sec - gemm : 0;
            c->rec.mult_times[j] = slowest;
            int64_t got = 0;
            if (panels &&
                (rc = dd_agree(
                     c->world,
                     run_api(c, dd_plan_panel_seconds(c->plan, panels + j * np, np, &got), err),
                     err)))
                break;
        }
        if (c->rank == 0 && c->tty && !o->quiet)
            fprintf(stderr, "\r[dgemm-dist] multiply  %d/%d%s", i + 1, total,
                    i < o->warmup ? " (warm-up)" : "          ");
        else if (c->rank == 0 && !o->quiet && total > 1 && c->gpu)
            fprintf(stderr, "[dgemm-dist] multiply  %d/%d done%s\n", i + 1, total,
                    i < o->warmup ? " (warm-up)" : "");
    }
    rc = run_telemetry_stop(c, rc, err);
    if (!rc && c->rank == 0) /* ozaki2's moduli and fallbacks, for the record */
        snprintf(c->names.kernel_note, sizeof c->names.kernel_note, "%s",
                 dd_plan_kernel_note(c->plan));
    if (!rc)
        rc = record_median(c, per_rank, exposed, panels, err);
    dd_plan_set_progress(c->plan, NULL, NULL);
    free(per_rank);
    free(exposed);
    free(panels);
    return rc;
}

/* One pass from host data to host result: A and B go up panel by panel
 * behind the multiply, C comes down after it (dd_plan_host_pass).  Times
 * what a caller holding host data waits for, as cuBLASXt is timed.  It
 * runs after the timed multiplies (warm, like them), on blocks zeroed
 * first, so a slice the streamed upload missed would make C wrong and fail
 * the check that follows. */
int run_host_to_host(run_ctx *c, dd_err *err)
{
    dd_plan_times t = {0, 0, 0};
    double t0 = dd_now();
    int rc = run_api(c, dd_plan_host_pass(c->plan, &t), err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    if (!rc) {
        c->rec.host_to_host = t.slowest;
        c->rec.host_to_host_own = dd_now() - t0;
        run_note_phase(c, "host-to-host", c->rec.host_to_host);
    }
    return rc;
}
