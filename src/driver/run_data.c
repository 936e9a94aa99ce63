/* run_data.c — the steps of a run that move or compute data: blocks,
 * the read, the upload, the timed multiplies, the download, the write
 * (run_ctx.h).  Each step ends agreed across ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_fault.h"
#include "rng.h"
#include "run_ctx.h"
#include "timer.h"

void run_note_phase(run_ctx *c, const char *what, double seconds)
{
    if (c->rank == 0 && !c->o->quiet)
        fprintf(stderr, "%s[dgemm-dist] %-9s %.3f s\n", c->tty ? "\r" : "", what, seconds);
}

/* Work blocks (device memory on a GPU); host copies only for
 * --host-to-host on a GPU, whose pass streams A and B up from them. */
int run_alloc_blocks(run_ctx *c, dd_err *err)
{
    dd_summa *s = &c->s;
    dd_engine *e = &c->eng;
    size_t es = dd_elsize(c->type);
    size_t a = (size_t)(s->Mp * s->Kq) * es, b = (size_t)(s->Kp * s->Nq) * es,
           cc = (size_t)(s->Mp * s->Nq) * es;
    int rc = e->ops->alloc(e, a, &s->A, err);
    if (!rc)
        rc = e->ops->alloc(e, b, &s->B, err);
    if (!rc)
        rc = e->ops->alloc(e, cc, &s->C, err);
    if (!rc && run_c0_bytes(c))
        rc = e->ops->alloc(e, cc, &c->C0, err);
    if (!rc && c->o->host_to_host && !e->ops->work_is_host) {
        rc = e->ops->host_alloc(e, a, &c->hA, err);
        if (!rc)
            rc = e->ops->host_alloc(e, b, &c->hB, err);
        if (!rc)
            rc = e->ops->host_alloc(e, cc, &c->hC, err);
    }
    if (!rc)
        rc = summa_setup(s, err);
    if (!rc)
        rc = run_ring_open(c, err);
    return dd_agree(c->world, rc, err);
}

/* Generated inputs are made where they are used (on the GPU for CUDA), the
 * same values as the host generator's bit for bit, and as gen writes them:
 * A is M×K, or K×M with --transa T (the block of op(A) is then a block of
 * its transpose), B likewise; C's input M×N. */
static int generate_blocks(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_summa *s = &c->s;
    dd_engine *e = &c->eng;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_range rkq = grid_block(c->K, c->g.Q, c->g.q), rkp = grid_block(c->K, c->g.P, c->g.p);
    int ta = o->transa == 'T', tb = o->transb == 'T', rc = DD_OK;
    if (o->alpha != 0)
        rc = e->ops->fill_random(e, c->type, s->A, o->seed, RNG_TAG_A, rm.start, s->Mp, rkq.start,
                                 s->Kq, ta ? c->M : c->K, ta, err);
    if (!rc && o->alpha != 0)
        rc = e->ops->fill_random(e, c->type, s->B, o->seed, RNG_TAG_B, rkp.start, s->Kp, rn.start,
                                 s->Nq, tb ? c->K : c->N, tb, err);
    if (!rc && c->read_c)
        rc = e->ops->fill_random(e, c->type, s->C, o->seed, RNG_TAG_C, rm.start, s->Mp, rn.start,
                                 s->Nq, c->N, 0, err);
    return rc;
}

/* op(A), op(B) (unless alpha = 0: never read) and C's input (beta ≠ 0)
 * into work memory from the file, transposed where the datasets are.
 * Every matrix's band calls are made even after a failure: the reads may
 * be collective; the first failure's message is kept. */
static int load_blocks(run_ctx *c, dd_io *io, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_summa *s = &c->s;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_range rkq = grid_block(c->K, c->g.Q, c->g.q), rkp = grid_block(c->K, c->g.P, c->g.p);
    run_source src[3] = {run_file_source(c, io, o->a, rm, rkq, c->tA),
                         run_file_source(c, io, o->b, rkp, rn, c->tB),
                         run_file_source(c, io, o->c, rm, rn, c->tC)};
    if (dd_fault("misread")) /* tests: B read at the wrong offset */
        src[1].row0 = 0;
    int64_t rows[3] = {s->Mp, s->Kp, s->Mp}, cols[3] = {s->Kq, s->Nq, s->Nq};
    void *work[3] = {s->A, s->B, s->C};
    int want[3] = {o->alpha != 0, o->alpha != 0, c->read_c}, rc = DD_OK;
    for (int i = 0; i < 3; i++) {
        dd_err e2 = {{0}};
        int rci = want[i] ? run_stream_in(c, &src[i], rows[i], cols[i], work[i], &e2) : DD_OK;
        if (!rc && rci) {
            rc = rci;
            *err = e2;
        }
    }
    return rc;
}

/* --host-to-host keeps host copies of A and B for its streamed pass. */
static int keep_host_copies(run_ctx *c, dd_err *err)
{
    dd_engine *e = &c->eng;
    size_t es = dd_elsize(c->type);
    if (!c->hA)
        return DD_OK;
    int rc = e->ops->download(e, c->hA, c->s.A, (size_t)(c->s.Mp * c->s.Kq) * es, err);
    if (!rc)
        rc = e->ops->download(e, c->hB, c->s.B, (size_t)(c->s.Kp * c->s.Nq) * es, err);
    return rc;
}

/* alpha and beta where the data is: A ← alpha·A (zeros for alpha = 0, with
 * B: neither was read), C ← beta·C_in.  Not agreed. */
static int apply_scalars(run_ctx *c, dd_err *err)
{
    dd_summa *s = &c->s;
    dd_engine *e = &c->eng;
    double alpha = dd_fault("no-alpha") ? 1 : c->o->alpha; /* tests: alpha forgotten */
    int rc = e->ops->scale(e, c->type, s->A, s->Mp * s->Kq, alpha, err);
    if (!rc && c->o->alpha == 0)
        rc = e->ops->scale(e, c->type, s->B, s->Kp * s->Nq, 0, err);
    if (!rc && c->read_c) /* tests: beta forgotten */
        rc = e->ops->scale(e, c->type, s->C, s->Mp * s->Nq, dd_fault("no-beta") ? 1 : c->o->beta,
                           err);
    return rc;
}

/* After the load: alpha and beta applied; beta·C_in checked against the
 * file, its part of the check computed, and saved for later passes. */
static int prepare_operands(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = dd_agree(c->world, apply_scalars(c, err), err);
    if (rc || !c->read_c)
        return rc;
    if (o->check && o->in && (rc = run_verify_c_input(c, err)))
        return rc;
    if (o->check && (rc = check_c_input(c->world, &c->g, &c->eng, c->type, c->M, c->N, c->s.C,
                                        o->seed + 0x5eed, &c->cin, err)))
        return rc;
    if (c->C0)
        rc = c->eng.ops->copy(&c->eng, c->C0, c->s.C,
                              (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
    return dd_agree(c->world, rc, err);
}

int run_load_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc;
    if (!o->in) {
        rc = dd_agree(c->world, generate_blocks(c, err), err);
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
        rc = prepare_operands(c, err);
    if (!rc)
        rc = dd_agree(c->world, keep_host_copies(c, err), err);
    return rc;
}

int run_write_output(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_io io = {0};
    io.ops = c->io;
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
    run_sink sink = run_file_sink(c, &io, o->c, rm, rn, c->tC);
    if (dd_fault("miswrite")) /* tests: C written at the wrong place */
        *(c->tC ? &sink.row0 : &sink.col0) = 0;
    rc = run_stream_out(c, &sink, rm.len, rn.len, c->s.C, err);
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
        double flops = 2.0 * (double)c->M * (double)c->N * (double)c->K * (double)so_far / total;
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

size_t run_c0_bytes(const run_ctx *c)
{
    const dd_run_opts *o = c->o;
    int passes = o->warmup + o->repeat + (o->host_to_host && !c->eng.ops->work_is_host);
    if (!c->read_c || passes < 2)
        return 0;
    int overflow = 0;
    size_t b = dd_mul3((uint64_t)c->s.Mp, (uint64_t)c->s.Nq, dd_elsize(c->type), &overflow);
    return overflow ? SIZE_MAX : b;
}

/* Every pass after the first starts from beta·C_in again (untimed). */
static int restore_c(run_ctx *c, dd_err *err)
{
    if (!c->C0)
        return DD_OK;
    return c->eng.ops->copy(&c->eng, c->s.C, c->C0,
                            (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
}

/* alpha = 0: A and B are not multiplied; C is beta·C_in (already there) or
 * zero.  Nothing to time. */
static int no_multiply(run_ctx *c, double *sec, double *gemm, dd_err *err)
{
    *sec = *gemm = 0;
    if (c->read_c)
        return DD_OK;
    return c->eng.ops->zero(&c->eng, c->s.C, (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
}

/* One timed multiply, agreed; a broken broadcast ends every rank. */
static int timed_multiply(run_ctx *c, int pass, int stream_upload, double *sec, double *gemm,
                          dd_err *err)
{
    int rc = pass > 0 ? restore_c(c, err) : DD_OK;
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    rc = dd_mpi_check(MPI_Barrier(c->world), "MPI_Barrier before a multiply", err);
    if (!rc)
        rc = c->o->alpha == 0 ? no_multiply(c, sec, gemm, err)
                              : summa_multiply(&c->s, stream_upload, sec, gemm, err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    return dd_agree(c->world, rc, err);
}

/* Per-rank figures of the median repetition (by the slowest rank): the
 * slowest one not above the median, which is the median itself for an odd
 * count and the lower middle one for an even count. */
static void record_median(run_ctx *c, const double *per_rank, const double *exposed)
{
    c->rec.nrep = c->o->repeat;
    c->rec.M = c->M;
    c->rec.N = c->N;
    c->rec.K = c->K;
    c->rec.alpha = c->o->alpha; /* alpha = 0 multiplies nothing: no rate */
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
}

int run_multiply(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int total = o->warmup + o->repeat;
    double *per_rank = calloc((size_t)o->repeat, sizeof(double));
    double *exposed = calloc((size_t)o->repeat, sizeof(double));
    c->rec.mult_times = calloc((size_t)o->repeat, sizeof(double));
    int rc = per_rank && exposed && c->rec.mult_times
                 ? DD_OK
                 : dd_fail(err, DD_ENOMEM, "out of host memory for timings");
    rc = dd_agree(c->world, rc, err);
    c->prog.t0 = c->prog.last = dd_now();
    c->prog.reps = total;
    if (c->rank == 0 && !o->quiet && c->eng.ops->work_is_host) {
        c->s.on_panel = on_panel;
        c->s.on_panel_arg = c;
    }
    for (int i = 0; i < total && !rc; i++) {
        double sec = 0, gemm = 0;
        c->prog.rep = i;
        if (i == o->warmup)
            run_telemetry_start(c);
        if ((rc = timed_multiply(c, i, 0, &sec, &gemm, err)))
            break;
        if (i >= o->warmup) {
            int j = i - o->warmup;
            per_rank[j] = sec;
            exposed[j] = sec > gemm ? sec - gemm : 0;
            rc = dd_agree(c->world,
                          dd_mpi_check(MPI_Allreduce(&sec, &c->rec.mult_times[j], 1, MPI_DOUBLE,
                                                     MPI_MAX, c->world),
                                       "MPI_Allreduce of the multiply time", err),
                          err);
        }
        if (c->rank == 0 && c->tty && !o->quiet)
            fprintf(stderr, "\r[dgemm-dist] multiply  %d/%d%s", i + 1, total,
                    i < o->warmup ? " (warm-up)" : "          ");
        else if (c->rank == 0 && !o->quiet && total > 1 && !c->eng.ops->work_is_host)
            fprintf(stderr, "[dgemm-dist] multiply  %d/%d done%s\n", i + 1, total,
                    i < o->warmup ? " (warm-up)" : "");
    }
    rc = run_telemetry_stop(c, rc, err);
    if (!rc)
        record_median(c, per_rank, exposed);
    c->s.on_panel = NULL;
    free(per_rank);
    free(exposed);
    return rc;
}

/* One pass from host data to host result: A and B go up panel by panel
 * behind the multiply (summa_multiply's stream_upload), C comes down after
 * it.  Times what a caller holding host data waits for, as cuBLASXt is
 * timed.  It runs after the timed multiplies (warm, like them), on blocks
 * zeroed first, so a slice the streamed upload missed would make C wrong
 * and fail the check that follows. */
int run_host_to_host(run_ctx *c, dd_err *err)
{
    double sec, gemm, t0;
    size_t es = dd_elsize(c->type);
    int rc = c->eng.ops->zero(&c->eng, c->s.A, (size_t)(c->s.Mp * c->s.Kq) * es, err);
    if (!rc)
        rc = c->eng.ops->zero(&c->eng, c->s.B, (size_t)(c->s.Kp * c->s.Nq) * es, err);
    if (!rc)
        rc = restore_c(c, err);
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    MPI_Barrier(c->world);
    t0 = dd_now();
    rc = c->o->alpha == 0 ? no_multiply(c, &sec, &gemm, err)
                          : summa_multiply(&c->s, 1, &sec, &gemm, err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    if (!rc)
        rc = c->eng.ops->download(&c->eng, c->hC, c->s.C,
                                  (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
    double dt = dd_now() - t0;
    rc = dd_agree(c->world, rc, err);
    if (!rc) {
        MPI_Allreduce(&dt, &c->rec.host_to_host, 1, MPI_DOUBLE, MPI_MAX, c->world);
        run_note_phase(c, "host-to-host", c->rec.host_to_host);
    }
    return rc;
}
