/* run_pipe.c — file to file as one pipeline (run_ctx.h): C in bands of
 * rows, K inner.  op(B) (and C's input) is read first and stays; then for
 * each band of this rank's block of C the band of op(A) with the same rows
 * is read from the file ahead of its use, the band is multiplied over the
 * whole K (dd_plan_multiply_rows, SUMMA over the grid) and, final then,
 * written behind the next band's multiply.
 *
 * Three threads per rank.  The main thread owns the library (engine,
 * MPI): it puts each band of op(A) into the plan (dd_plan_put_rows, the
 * band after the one it multiplies next), multiplies, and takes the band
 * of C down behind the next band's multiply: pipe_staged_loop
 * (src/driver/run_pipe_loop.c, with pipe_band_loop).  On a GPU the
 * band slots are the plan's pinned memory (dd_plan_host_alloc), so the
 * copy engines move the bands and no thread copies them; where that
 * memory cannot be had, plain slots go through the plan's staging.  Two
 * I/O threads (src/driver/run_pipe_io.c) own the files, at once: a reader
 * fills the slots of op(A) with its bands, a writer writes bands of C from
 * theirs, through the direct path's pread/pwrite, which makes no MPI call (the run is
 * MPI_THREAD_FUNNELED) and no HDF5 call (the reader's fallback read aside,
 * made while no other thread calls HDF5).  Where the blocks are host
 * memory (the CPU backend, dd_plan_host_block) the bands are read and
 * written in place, rows the multiply of the band under way does not
 * touch, and nothing is copied.  The main thread agrees on every band's
 * state before its multiply, so a failure on one rank (a read, a write,
 * the multiply) ends the loop on every rank at the same band; the I/O
 * threads are joined
 * on every path, and the output, never committed, is removed by the
 * caller's abort as today.
 *
 * The check, the read-back of the file and the commit run after the
 * pipeline as in the phased run (the blocks of op(A), op(B) and C are all
 * in work memory at its end), so the verdict and residual are today's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_fault.h"
#include "dd_knobs.h"
#include "run_pipe.h"
#include "timer.h"

/* Bands: about PIPE_BAND_BYTES of C each, at least PIPE_BANDS_MIN (so the
 * first read and the last write, which nothing hides, are short) and at
 * most PIPE_BANDS_MAX (B's panels are broadcast again for every band). */
#define PIPE_BAND_BYTES ((uint64_t)256 << 20)
#define PIPE_BANDS_MIN 4
#define PIPE_BANDS_MAX 16
#define PIPE_PINNED_BAND_BYTES ((uint64_t)64 << 20)
#define PIPE_PINNED_BAND_ROWS 256
#define PIPE_PINNED_BANDS_MAX 256

/* Whether this run goes through the pipeline: a file in and out, one
 * untimed-repeat pass, the direct I/O path (no MPI in its reads and
 * writes), op(A) and C stored untransposed (their bands are rows of the
 * datasets), alpha not 0, a real type (scale_band scales by a real alpha;
 * complex data, with its complex alpha and beta and conjugations, takes
 * the phased path, where the plan's prepare scales whole blocks) and
 * nothing empty.  Collective. */
int run_pipeline_eligible(const run_ctx *c)
{
    const dd_run_opts *o = c->o;
    int mine = o->in && o->out && o->repeat == 1 && o->warmup == 0 && !o->host_to_host &&
               c->io == &dd_io_direct && !c->tA && !c->tC && !c->alpha0 &&
               !dd_dtype_complex(c->type) && c->M > 0 &&
               c->N > 0 && c->K > 0 && !dd_fault("no-pipeline"),
        all = 0; /* agreed: a test's DD_FAULT=no-pipeline on one rank turns it off on all */
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->world) != MPI_SUCCESS)
        return 0;
    return all;
}

/* The band count: about PIPE_BAND_BYTES of C per band on the rank with
 * the largest block, within [PIPE_BANDS_MIN, PIPE_BANDS_MAX], and no more
 * than the fewest rows any rank has (at least 1).  Where the bands go
 * through pinned slots on a grid of one process row (no panel of op(B) is
 * broadcast again per band) they are PIPE_PINNED_BAND_BYTES but at least
 * PIPE_PINNED_BAND_ROWS rows, up to PIPE_PINNED_BANDS_MAX.  The slots are
 * pinned while op(B) is read and slow that read, so they stay small;
 * narrower bands slow the multiply more than they save
 * (docs/results/h200-2026-12-04-call-o measured both).  DD_PIPE_BAND_MIB,
 * where set, is the bytes per band instead (the same bounds).
 * Collective. */
static int band_count(run_ctx *c, int64_t Mp, int64_t Nq, int pinned, int64_t *nb, dd_err *err)
{
    int small = pinned && c->pi.P == 1;
    uint64_t rows = (uint64_t)PIPE_PINNED_BAND_ROWS * (uint64_t)Nq * dd_elsize(c->type);
    uint64_t per = !small                         ? PIPE_BAND_BYTES
                   : rows > PIPE_PINNED_BAND_BYTES ? rows
                                                   : PIPE_PINNED_BAND_BYTES;
    long long knob = dd_knob_int(DDK_PIPE_BAND_MIB); /* 0: auto; ranks agree on the most bands */
    if (knob > 0)
        per = (uint64_t)knob << 20;
    long long v[2] = {-(long long)Mp,
                      (long long)((uint64_t)Mp * (uint64_t)Nq * dd_elsize(c->type) / per)},
              most[2];
    int rc = dd_mpi_check(MPI_Allreduce(v, most, 2, MPI_LONG_LONG, MPI_MAX, c->world),
                          "MPI_Allreduce of the band count", err);
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    long long fewest = -most[0], n = most[1], top = small ? PIPE_PINNED_BANDS_MAX : PIPE_BANDS_MAX;
    n = n < PIPE_BANDS_MIN ? PIPE_BANDS_MIN : n > top ? top : n;
    n = n > fewest ? fewest : n;
    *nb = n < 1 ? 1 : n;
    return DD_OK;
}

/* The band slots back: the plan's pinned memory where `pinned`, else
 * plain memory. */
static void slots_free(run_ctx *c, pipe_t *p, int pinned)
{
    void **all[5] = {&p->abuf[0], &p->abuf[1], &p->abuf[2], &p->cbuf[0], &p->cbuf[1]};
    for (int k = 0; k < 5; k++) {
        if (pinned)
            dd_plan_host_release(c->plan, *all[k]);
        else
            free(*all[k]);
        *all[k] = NULL;
    }
}

/* The band slots as the plan's pinned memory (dd_plan_host_alloc): three
 * of ab bytes for op(A), two of cb for C, on a thread of the pipeline's
 * own during op(B)'s read (dd_plan_host_alloc may run beside the plan's
 * other calls).  Where that memory cannot be had (ok 0) the main thread
 * gives back what was had and takes plain memory through the staging.  Local: each rank's
 * slots are its own. */
typedef struct {
    run_ctx *c;
    pipe_t *p;
    size_t ab, cb;
    int ok;
    double sec;
} slot_job;

static void *slot_alloc(void *arg)
{
    slot_job *j = arg;
    double t0 = dd_now();
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++)
        ok = dd_plan_host_alloc(j->c->plan, j->ab ? j->ab : 1, &j->p->abuf[k]) == DD_SUCCESS;
    for (int k = 0; k < 2 && ok; k++)
        ok = dd_plan_host_alloc(j->c->plan, j->cb ? j->cb : 1, &j->p->cbuf[k]) == DD_SUCCESS;
    j->ok = ok; /* not ok: the main thread gives back what was had */
    j->sec = dd_now() - t0;
    return NULL;
}

/* Opens the input, creates the output, reads op(B) (and C's input),
 * prepares, runs the bands, and closes the input.  The output stays open
 * in *out for the caller's attributes, close, read-back and commit. */
static int pipeline(run_ctx *c, dd_io *in, dd_io *out, double *t_read, dd_err *err)
{
    const dd_run_opts *o = c->o;
    double t0 = dd_now();
    int rc = dd_agree(c->world, in->ops->open_read(in, c->world, o->in, err), err);
    if (rc)
        return rc;
    pipe_t p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.in = in;
    p.out = out;
    p.adset = o->a;
    p.cdset = o->c;
    p.Mp = c->pi.rows[2];
    p.Kq = c->pi.cols[0];
    p.Nq = c->pi.cols[2];
    p.arow0 = c->pi.row0[0];
    p.acol0 = c->pi.col0[0];
    p.crow0 = c->pi.row0[2];
    p.ccol0 = dd_fault("miswrite") ? 0 : c->pi.col0[2]; /* tests: C written at the wrong place */
    p.es = dd_elsize(c->type);
    p.alpha = dd_fault("no-alpha") ? 1 : o->alpha; /* tests: alpha forgotten */
    int slots = dd_fault("pipe-slots"); /* tests: the GPU's slots on the CPU */
    p.hA = slots ? NULL : dd_plan_host_block(c->plan, DD_OPERAND_A);
    p.hC = slots ? NULL : dd_plan_host_block(c->plan, DD_OPERAND_C);
    int want_pinned = !p.hA && !p.hC && !dd_fault("pipe-pageable");
    rc = band_count(c, p.Mp, p.Nq, want_pinned, &p.nb, err);
    int64_t most = rc ? 0 : (p.Mp + p.nb - 1) / p.nb;
    slot_job job = {c, &p, (size_t)(most * p.Kq) * p.es, (size_t)(most * p.Nq) * p.es, 0, 0};
    /* the pinned slots on a thread of their own while op(B) is read (a
     * bench's DD_FAULT=pipe-slots-first: before, on this thread, to
     * measure the two apart) */
    pthread_t alloc_th;
    int alloc_started = !rc && want_pinned && !dd_fault("pipe-slots-first") &&
                        pthread_create(&alloc_th, NULL, slot_alloc, &job) == 0;
    if (!rc && want_pinned && !alloc_started)
        slot_alloc(&job);

    const char *names[1] = {o->c};
    int64_t dims[1][2] = {{c->M, c->N}};
    double t_create = dd_now();
    if (!rc)
        rc = dd_agree(c->world,
                      out->ops->create(out, c->world, c->out.tmp, 1, names,
                                       (const int64_t(*)[2])dims, c->type, err),
                      err);
    t_create = dd_now() - t_create; /* the output's creation and space: the write's */
    if (!rc && dd_fault("slow-write")) /* a window for tests that signal a run mid-write */
        sleep(30);
    /* op(B) and C's input: whole, first (collective loads, as the phased run's) */
    double t_b0 = dd_now();
    for (int i = 1; i < 3 && !rc; i++) {
        if (i == 2 && !c->read_c)
            break;
        const char *dset = i == 1 ? o->b : o->c;
        run_file f = run_file_at(c, in, dset, run_rows(c, i), run_cols(c, i), i == 1 ? c->tB : 0);
        if (i == 1 && dd_fault("misread")) /* tests: B read at the wrong offset */
            f.row0 = 0;
        dd_stream st = run_file_stream(&f);
        rc = run_api(c, dd_plan_load(c->plan, (dd_operand)i, &st), err);
    }
    /* alpha goes onto each band of op(A) as it is read; the plan scales its
     * (still empty) block of A by 1 */
    if (!rc)
        rc = run_api(c, dd_plan_prepare(c->plan, 1, o->beta, o->check), err);
    if (!rc && c->read_c && o->check)
        rc = run_verify_c_input(c, err);
    double t_resident = dd_now() - t0 - t_create, t_b = dd_now() - t_b0;
    /* joined on every path; what it took beyond op(B)'s read is the upload's */
    double t_join = dd_now();
    if (alloc_started)
        pthread_join(alloc_th, NULL);
    if (want_pinned && !job.ok)
        slots_free(c, &p, 1);
    p.pinned = job.ok;
    p.slots_sec = alloc_started ? dd_now() - t_join : job.sec;
    p.na = p.pinned ? 3 : 2;
    if (!rc) {
        size_t ab = job.ab, cb = job.cb;
        for (int k = 0; k < 2 && !p.pinned; k++) {
            p.abuf[k] = p.hA ? NULL : malloc(ab ? ab : 1);
            p.cbuf[k] = p.hC ? NULL : malloc(cb ? cb : 1);
        }
        p.ops = calloc((size_t)(2 * p.nb), sizeof *p.ops);
        p.waits = calloc((size_t)(2 * p.nb + 2), sizeof *p.waits);
        if ((!p.hA && (!p.abuf[0] || !p.abuf[1])) || (!p.hC && (!p.cbuf[0] || !p.cbuf[1])) ||
            !p.ops || !p.waits)
            rc = dd_fail(err, DD_ENOMEM,
                         "out of host memory for the pipeline's band buffers (%.1f MiB)",
                         2.0 * (double)(ab + cb) / 1048576.0);
        rc = dd_agree(c->world, rc, err);
    }
    int started = 0, inited = !rc;
    if (inited) {
        pthread_mutex_init(&p.mu, NULL);
        pthread_cond_init(&p.cv, NULL);
    }
    pthread_t th[2];
    for (int k = 0; k < 2 && !rc; k++) {
        int e = pthread_create(&th[k], NULL, k ? pipe_writer : pipe_reader, &p);
        started += e == 0;
        if (e)
            rc = dd_fail(err, DD_EFAIL, "cannot start the pipeline's I/O %s thread: %s",
                         k ? "writer" : "reader", strerror(e));
    }
    if (inited)
        rc = dd_agree(c->world, rc, err);
    /* the upload's figure includes the slots' allocation */
    double mult = 0, gemm = 0, slowest = 0, waits = 0, moves[2] = {p.slots_sec, 0},
           t_loop = dd_now();
    if (!rc) {
        c->prog.t0 = c->prog.last = dd_now();
        c->prog.reps = 1;
        rc = (p.hA ? pipe_band_loop : pipe_staged_loop)(&p, &mult, &gemm, &slowest, &waits, moves,
                                                        err);
    }
    if (started) /* joined on every path */
        pipe_publish(&p, &p.stop, 1);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    t_loop = dd_now() - t_loop;
    if (inited) {
        pthread_mutex_destroy(&p.mu);
        pthread_cond_destroy(&p.cv);
    }
    slots_free(c, &p, p.pinned);
    double hid_read = pipe_hidden(&p, 1), hid_write = pipe_hidden(&p, 0);
    free(p.ops);
    free(p.waits);
    rc = dd_agree(c->world, io_close_after(in, rc, err), err);
    if (rc)
        return rc;
    /* The phases' figures.  Read: op(B) and C's input, then the bands of
     * op(A); what the main thread did not wait for was hidden behind the
     * multiply.  Write likewise.  The multiply: the bands' sum. */
    dd_record *r = &c->rec;
    double read = t_resident + p.read_sec, write = t_create + p.write_sec;
    (void)waits;
    r->ph[PH_READ] = dd_stat_over(c->world, read);
    r->have[PH_READ] = 1;
    r->hidden[PH_READ] = dd_stat_over(c->world, hid_read);
    r->ph[PH_WRITE] = dd_stat_over(c->world, write);
    r->have[PH_WRITE] = 1;
    r->hidden[PH_WRITE] = dd_stat_over(c->world, hid_write);
    /* the bands' moves between the host slots and work memory (main thread) */
    r->ph[PH_UPLOAD] = dd_stat_over(c->world, moves[0]);
    r->ph[PH_DOWNLOAD] = dd_stat_over(c->world, moves[1]);
    r->have[PH_UPLOAD] = !p.hA;
    r->have[PH_DOWNLOAD] = !p.hC;
    r->pipeline_bands = p.nb;
    r->pipeline_wall = dd_stat_over(c->world, t_loop).max;
    r->pipeline_slots = p.hA ? "in place" : p.pinned ? "pinned" : "staged";
    r->pipeline_resident = dd_stat_over(c->world, t_b).max;
    r->pipeline_slots_alloc = dd_stat_over(c->world, job.sec).max; /* 0: none pinned */
    r->pipeline_band_bytes = job.cb;
    if (c->rank == 0) /* ozaki2's moduli and fallbacks, the sliced panels, for the record */
        snprintf(c->names.kernel_note, sizeof c->names.kernel_note, "%s",
                 dd_plan_kernel_note(c->plan));
    *t_read = read;
    r->nrep = 1;
    r->M = c->M;
    r->N = c->N;
    r->K = c->K;
    r->alpha = o->alpha;
    r->alpha_im = o->alpha_im;
    r->type = c->type;
    r->mult_times[0] = slowest;
    report_finish(r);
    r->ph[PH_MULTIPLY] = dd_stat_over(c->world, mult);
    r->ph[PH_EXPOSED] = dd_stat_over(c->world, mult > gemm ? mult - gemm : 0);
    r->have[PH_MULTIPLY] = r->have[PH_EXPOSED] = 1;
    r->exposed_fraction = r->ph[PH_MULTIPLY].avg > 0 ? r->ph[PH_EXPOSED].avg / r->ph[PH_MULTIPLY].avg : 0;
    r->multiply_all = dd_stat_over(c->world, mult).max;
    r->multiply_all_own = mult;
    return DD_OK;
}

int run_pipeline(run_ctx *c, int *failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    c->rec.mult_times = calloc(1, sizeof(double));
    int rc = dd_agree(c->world,
                      c->rec.mult_times ? DD_OK
                                        : dd_fail(err, DD_ENOMEM, "out of host memory for timings"),
                      err);
    if (rc)
        return rc;
    dd_io in = {0}, out = {0};
    in.ops = c->io;
    out.ops = c->io;
    out.durable = o->sync; /* --sync: each rank's writes on disk before its close */
    double t_read = 0;
    rc = pipeline(c, &in, &out, &t_read, err);
    if (!rc) {
        run_note_phase(c, "read", c->rec.ph[PH_READ].max);
        run_note_phase(c, "multiply", c->rec.tmed);
        run_note_phase(c, "write", c->rec.ph[PH_WRITE].max);
    }
    if (!rc)
        rc = dd_agree(c->world, run_fault_corrupt_c(c, err), err);
    if (!rc && o->check) {
        double t1 = dd_now();
        rc = dd_agree(c->world, run_verify_inputs(c, err), err);
        if (!rc)
            rc = run_api(c, dd_plan_check(c->plan, &c->rec.chk), err);
        c->rec.checked = rc == DD_OK;
        if (!rc) {
            c->rec.ph[PH_CHECK] = dd_stat_over(c->world, dd_now() - t1);
            c->rec.have[PH_CHECK] = 1;
            run_note_phase(c, "check", c->rec.ph[PH_CHECK].max);
        }
    }
    *failed_check = !rc && o->check && !c->rec.chk.passed;
    /* the file's end: attributes (the residual known now), close, read-back,
     * commit; a FAILED check closes it and leaves the abort to finish() */
    double t2 = dd_now();
    dd_attr attrs[RUN_NATTRS];
    char grid[32];
    int nattrs = run_output_attrs(c, attrs, grid, sizeof grid);
    if (!rc && !*failed_check && dd_fault("write"))
        rc = dd_fail(err, DD_EIO, "injected fault writing C on rank %d", c->rank);
    rc = dd_agree(c->world, rc, err);
    if (!rc && !*failed_check)
        rc = dd_agree(c->world, out.ops->set_attrs(&out, o->c, attrs, nattrs, err), err);
    rc = dd_agree(c->world, io_close_after(&out, rc, err), err);
    if (!rc && !*failed_check)
        rc = run_verify_written(c, err);
    if (!rc && !*failed_check && c->rank == 0 && dd_fault("race-out")) {
        FILE *f = fopen(o->out, "wx"); /* another run's output appears */
        if (f)
            fclose(f);
    }
    if (!rc && !*failed_check)
        rc = io_output_commit(c->world, &c->out, err);
    if (!rc) { /* the write's tail after the pipeline, none of it hidden */
        dd_stat tail = dd_stat_over(c->world, dd_now() - t2);
        c->rec.ph[PH_WRITE].min += tail.min;
        c->rec.ph[PH_WRITE].avg += tail.avg;
        c->rec.ph[PH_WRITE].max += tail.max;
        c->rec.ph[PH_WRITE].own += tail.own;
    }
    return rc;
}
