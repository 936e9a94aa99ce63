/* run.c — one distributed multiply, start to finish (run.h): a pipeline
 * of named steps over the run's state (run_ctx.h).
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
#include "check.h"
#include "rng.h"
#include "run_ctx.h"
#include "timer.h"

static void note_phase(run_ctx *c, const char *what, double seconds)
{
    if (c->rank == 0 && !c->o->quiet)
        fprintf(stderr, "%s[dgemm-dist] %-9s %.3f s\n", c->tty ? "\r" : "", what, seconds);
}

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

static int setup_grid(run_ctx *c, dd_err *err)
{
    int P = c->o->P, Q = c->o->Q;
    if (!P)
        grid_default(c->size, &P, &Q);
    if ((int64_t)P * Q != c->size) {
        int dP, dQ;
        grid_default(c->size, &dP, &dQ);
        return dd_fail(err, DD_EUSAGE,
                       "--grid %dx%d needs %lld ranks but MPI started %d: change --grid or the "
                       "rank count (or leave --grid out for %dx%d)",
                       P, Q, (long long)P * Q, c->size, dP, dQ);
    }
    c->g = grid_make(P, Q, c->rank);
    /* both splits are collective: every rank makes both calls */
    int rc = dd_mpi_check(MPI_Comm_split(c->world, c->g.p, c->g.q, &c->row), "MPI_Comm_split", err);
    int rc2 = dd_mpi_check(MPI_Comm_split(c->world, c->g.q, c->g.p, &c->col), "MPI_Comm_split", err);
    return rc ? rc : rc2;
}

/* The inputs' shape and type: from the file, or from --size. */
static int resolve_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
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
        return DD_OK;
    }
    snprintf(c->input, sizeof c->input, "%s", o->in);
    return io_probe_inputs(c->world, o->in, o->a, o->b, &c->M, &c->N, &c->K, &c->type, err);
}

/* Engine (--backend), then the comm backend that serves its memory (--comm). */
static int open_backends(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_engine_cfg ecfg = {c->world, c->node, c->type, o->kernel, o->threads};
    int rc = engine_select(o->backend, &ecfg, &c->eng, c->why, sizeof c->why, err);
    c->eng_open = rc == DD_OK;
    return rc;
}

static int open_comm(run_ctx *c, dd_err *err)
{
    dd_engine *e = &c->eng;
    dd_comm_cfg cfg = {c->world,
                       c->row,
                       c->col,
                       c->o->lookahead + 1,
                       e->ops->work_is_host,
                       e->ops->comm_stream(e),
                       e->ops->compute_stream(e),
                       e->info.ranks_per_device};
    int rc = comm_select(c->o->comm, &cfg, &c->comm, err);
    c->comm_open = rc == DD_OK;
    return rc;
}

/* Sizes, grid, panels, memory: everything before any data moves. */
static int plan(run_ctx *c, size_t *work_bytes, size_t *slot_bytes, dd_err *err)
{
    dd_summa *s = &c->s;
    memset(s, 0, sizeof *s);
    s->engine = &c->eng;
    s->comm = &c->comm;
    s->g = c->g;
    s->type = c->type;
    s->M = c->M;
    s->N = c->N;
    s->K = c->K;
    s->lookahead = c->o->lookahead;
    s->nb = c->o->panel ? c->o->panel : c->eng.ops->default_panel;
    summa_shape(s);
    s->npanels = summa_panel_count(s);
    *work_bytes = summa_work_bytes(s, slot_bytes);
    int rc = DD_OK;
    if (!c->eng.ops->work_is_host && c->eng.info.mem_free) {
        size_t margin = (size_t)512 << 20; /* kernels, cuBLAS workspace, NCCL buffers */
        if (*work_bytes + margin > c->eng.info.mem_free)
            rc = dd_fail(err, DD_ENOMEM,
                         "rank %d needs %.2f GiB of GPU memory (blocks %.2f GiB + panel buffers "
                         "%.2f GiB + %.2f GiB reserve) but %s has %.2f GiB free: use more ranks "
                         "(GPUs), a smaller --panel or --lookahead",
                         c->rank, (double)(*work_bytes + margin) / (1 << 30),
                         (double)(*work_bytes - *slot_bytes) / (1 << 30),
                         (double)*slot_bytes / (1 << 30), (double)margin / (1 << 30),
                         c->eng.info.device, (double)c->eng.info.mem_free / (1 << 30));
    }
    return dd_agree(c->world, rc, err);
}

static int alloc_blocks(run_ctx *c, dd_err *err)
{
    dd_summa *s = &c->s;
    dd_engine *e = &c->eng;
    size_t es = dd_elsize(c->type);
    size_t a = (size_t)(s->Mp * s->Kq) * es, b = (size_t)(s->Kp * s->Nq) * es,
           cc = (size_t)(s->Mp * s->Nq) * es;
    int rc = e->ops->host_alloc(e, a, &c->hA, err);
    if (!rc)
        rc = e->ops->host_alloc(e, b, &c->hB, err);
    if (!rc)
        rc = e->ops->host_alloc(e, cc, &c->hC, err);
    if (!rc && e->ops->work_is_host) {
        s->A = c->hA;
        s->B = c->hB;
        s->C = c->hC;
    } else if (!rc) {
        c->work_alloc = 1;
        rc = e->ops->alloc(e, a, &s->A, err);
        if (!rc)
            rc = e->ops->alloc(e, b, &s->B, err);
        if (!rc)
            rc = e->ops->alloc(e, cc, &s->C, err);
    }
    if (!rc)
        rc = summa_setup(s, err);
    return dd_agree(c->world, rc, err);
}

static int load_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_summa *s = &c->s;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_range rkq = grid_block(c->K, c->g.Q, c->g.q), rkp = grid_block(c->K, c->g.P, c->g.p);
    if (!o->in) {
        rng_fill_block(c->hA, c->type, o->seed, RNG_TAG_A, rm.start, s->Mp, rkq.start, s->Kq, c->K);
        rng_fill_block(c->hB, c->type, o->seed, RNG_TAG_B, rkp.start, s->Kp, rn.start, s->Nq, c->N);
        return DD_OK;
    }
    dd_io io = {0};
    io.ops = c->io;
    int rc = dd_agree(c->world, io.ops->open_read(&io, c->world, o->in, err), err);
    if (rc)
        return rc;
    rc = io.ops->read_block(&io, o->a, c->type, rm.start, s->Mp, rkq.start, s->Kq, c->hA, err);
    /* both reads are collective: B is read even if A failed, then we agree */
    dd_err e2 = {{0}};
    int rc2 = io.ops->read_block(&io, o->b, c->type, rkp.start, s->Kp, rn.start, s->Nq, c->hB, &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    rc2 = io.ops->close(&io, &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    return dd_agree(c->world, rc, err);
}

static int write_output(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_io io = {0};
    io.ops = c->io;
    const char *names[1] = {o->c};
    int64_t dims[1][2] = {{c->M, c->N}};
    int rc = dd_agree(
        c->world,
        io.ops->create(&io, c->world, c->tmp, 1, names, (const int64_t(*)[2])dims, c->type, err),
        err);
    if (rc)
        return rc;
    rc = io.ops->write_block(&io, o->c, c->type, rm.start, rm.len, rn.start, rn.len, c->hC, err);
    rc = dd_agree(c->world, rc, err);
    dd_attr attrs[RUN_NATTRS];
    char grid[32];
    int nattrs = run_output_attrs(c, attrs, grid, sizeof grid);
    if (!rc)
        rc = dd_agree(c->world, io.ops->set_attrs(&io, o->c, attrs, nattrs, err), err);
    dd_err e2 = {{0}};
    int rc2 = dd_agree(c->world, io.ops->close(&io, &e2), &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    if (!rc)
        rc = io_output_commit(c->world, c->tmp, o->out, err);
    if (!rc)
        c->have_tmp = 0;
    return rc;
}

static int multiply(run_ctx *c, dd_err *err)
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
    for (int i = 0; i < total && !rc; i++) {
        double sec = 0, gemm = 0;
        MPI_Barrier(c->world);
        rc = dd_agree(c->world, summa_multiply(&c->s, 0, &sec, &gemm, err), err);
        if (rc)
            break;
        if (i >= o->warmup) {
            int j = i - o->warmup;
            per_rank[j] = sec;
            exposed[j] = sec > gemm ? sec - gemm : 0;
            MPI_Allreduce(&sec, &c->rec.mult_times[j], 1, MPI_DOUBLE, MPI_MAX, c->world);
        }
        if (c->rank == 0 && c->tty && !o->quiet)
            fprintf(stderr, "\r[dgemm-dist] multiply  %d/%d%s", i + 1, total,
                    i < o->warmup ? " (warm-up)" : "          ");
    }
    if (!rc) {
        c->rec.nrep = o->repeat;
        c->rec.M = c->M;
        c->rec.N = c->N;
        c->rec.K = c->K;
        report_finish(&c->rec);
        /* per-rank figures of the median repetition (by the slowest rank):
         * the slowest one not above the median, which is the median itself
         * for an odd count and the lower middle one for an even count */
        const double *t = c->rec.mult_times;
        int med = -1;
        for (int j = 0; j < o->repeat; j++)
            if (t[j] <= c->rec.tmed && (med < 0 || t[j] > t[med]))
                med = j;
        c->rec.ph[PH_MULTIPLY] = dd_stat_over(c->world, per_rank[med]);
        c->rec.ph[PH_EXPOSED] = dd_stat_over(c->world, exposed[med]);
        c->rec.have[PH_MULTIPLY] = c->rec.have[PH_EXPOSED] = 1;
        c->rec.exposed_fraction = c->rec.ph[PH_MULTIPLY].avg > 0
                                      ? c->rec.ph[PH_EXPOSED].avg / c->rec.ph[PH_MULTIPLY].avg
                                      : 0;
        note_phase(c, "multiply", c->rec.tmed);
    }
    free(per_rank);
    free(exposed);
    return rc;
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
            note_phase((c), dd_phase_names[phase], (c)->rec.ph[phase].max);                        \
        }                                                                                          \
    } while (0)

/* One pass from host data to host result: A and B go up panel by panel
 * behind the multiply (summa_multiply's stream_upload), C comes down after
 * it.  Times what a caller holding host data waits for, as cuBLASXt is
 * timed.  It runs after the timed multiplies (warm, like them), on blocks
 * zeroed first, so a slice the streamed upload missed would make C wrong
 * and fail the check that follows. */
static int host_to_host(run_ctx *c, dd_err *err)
{
    double sec, gemm, t0;
    size_t es = dd_elsize(c->type);
    int rc = c->eng.ops->zero(&c->eng, c->s.A, (size_t)(c->s.Mp * c->s.Kq) * es, err);
    if (!rc)
        rc = c->eng.ops->zero(&c->eng, c->s.B, (size_t)(c->s.Kp * c->s.Nq) * es, err);
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    MPI_Barrier(c->world);
    t0 = dd_now();
    rc = summa_multiply(&c->s, 1, &sec, &gemm, err);
    if (!rc)
        rc = c->eng.ops->download(&c->eng, c->hC, c->s.C,
                                  (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
    double dt = dd_now() - t0;
    rc = dd_agree(c->world, rc, err);
    if (!rc) {
        MPI_Allreduce(&dt, &c->rec.host_to_host, 1, MPI_DOUBLE, MPI_MAX, c->world);
        note_phase(c, "host-to-host", c->rec.host_to_host);
    }
    return rc;
}

static int up(run_ctx *c, dd_err *err)
{
    dd_engine *e = &c->eng;
    size_t es = dd_elsize(c->type);
    int rc = e->ops->upload(e, c->s.A, c->hA, (size_t)(c->s.Mp * c->s.Kq) * es, err);
    if (!rc)
        rc = e->ops->upload(e, c->s.B, c->hB, (size_t)(c->s.Kp * c->s.Nq) * es, err);
    return dd_agree(c->world, rc, err);
}

static int down(run_ctx *c, dd_err *err)
{
    dd_engine *e = &c->eng;
    int rc =
        e->ops->download(e, c->hC, c->s.C, (size_t)(c->s.Mp * c->s.Nq) * dd_elsize(c->type), err);
    return dd_agree(c->world, rc, err);
}

static int verify(run_ctx *c, dd_err *err)
{
    int rc = check_product(c->world, c->row, &c->g, c->type, c->M, c->N, c->K, c->hA, c->hB, c->hC,
                           c->o->seed + 0x5eed, &c->rec.chk, err);
    c->rec.checked = rc == DD_OK;
    return rc;
}

static void cleanup(run_ctx *c)
{
    if (c->have_tmp)
        io_output_abort(c->world, c->tmp);
    if (c->comm_open)
        c->comm.ops->close(&c->comm);
    if (c->eng_open) {
        dd_engine *e = &c->eng;
        if (c->s.panels || c->s.slotA[0] || c->s.slotB[0])
            summa_teardown(&c->s);
        if (c->work_alloc) {
            if (c->s.A)
                e->ops->free(e, c->s.A);
            if (c->s.B)
                e->ops->free(e, c->s.B);
            if (c->s.C)
                e->ops->free(e, c->s.C);
        }
        if (c->hA)
            e->ops->host_free(e, c->hA);
        if (c->hB)
            e->ops->host_free(e, c->hB);
        if (c->hC)
            e->ops->host_free(e, c->hC);
        e->ops->close(e);
    }
    free(c->rec.mult_times);
    free(c->rec.hosts);
    free(c->rec.devices);
    if (c->row != MPI_COMM_NULL)
        MPI_Comm_free(&c->row);
    if (c->col != MPI_COMM_NULL)
        MPI_Comm_free(&c->col);
    if (c->node != MPI_COMM_NULL)
        MPI_Comm_free(&c->node);
}

/* Everything before data moves: the launch, the inputs' shape, the grid,
 * the backends, the plan; the dry run ends here. */
static int setup(run_ctx *c, size_t *work, size_t *slots, dd_err *err)
{
    int rc;
    if ((rc = dd_agree(c->world, check_launch(c, err), err)) ||
        (rc = dd_agree(c->world, resolve_inputs(c, err), err)) ||
        (rc = dd_agree(c->world, setup_grid(c, err), err)) ||
        (rc = dd_agree(c->world,
                       dd_mpi_check(MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank,
                                                        MPI_INFO_NULL, &c->node),
                                    "MPI_Comm_split_type", err),
                       err)) ||
        (rc = open_backends(c, err)) || (rc = plan(c, work, slots, err)))
        return rc;
    return DD_OK;
}

/* Data in: the output's temporary name, blocks, the read, the upload. */
static int data_in(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc;
    if ((rc = open_comm(c, err)))
        return rc;
    if (o->out) {
        if ((rc = io_output_prepare(c->world, o->out, o->in, o->force, c->tmp, sizeof c->tmp, err)))
            return rc;
        c->have_tmp = 1;
    }
    if ((rc = alloc_blocks(c, err)))
        return rc;
    c->s.hA = c->hA;
    c->s.hB = c->hB;
    TIMED(c, PH_READ, load_inputs(c, err));
    if (!rc && !c->eng.ops->work_is_host)
        TIMED(c, PH_UPLOAD, up(c, err));
    return rc;
}

/* Data out: the result down, checked, written; *failed_check when the
 * check said FAILED (then nothing is written). */
static int data_out(run_ctx *c, int *failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    int on_device = !c->eng.ops->work_is_host;
    if (o->host_to_host && on_device && (rc = host_to_host(c, err)))
        return rc;
    if (on_device && (o->out || o->check)) {
        TIMED(c, PH_DOWNLOAD, down(c, err));
        if (rc)
            return rc;
    }
    if (o->check) {
        TIMED(c, PH_CHECK, verify(c, err));
        if (rc)
            return rc;
    }
    *failed_check = o->check && !c->rec.chk.passed;
    if (o->out && !*failed_check)
        TIMED(c, PH_WRITE, write_output(c, err));
    return rc;
}

/* Rank 0: the report (or the check line alone with --quiet), the record. */
static int finish(run_ctx *c, int failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    run_fill_record(c);
    if (c->rank == 0) {
        if (c->tty && !o->quiet)
            fputc('\n', stderr);
        if (!o->quiet)
            report_print(stdout, &c->rec);
        else if (o->check) {
            char line[256];
            check_line(&c->rec.chk, line, sizeof line);
            printf("%s\n", line);
        }
        if (o->json)
            rc = report_json(o->json, &c->rec, err);
    }
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    if (failed_check && c->rank == 0)
        fprintf(stderr,
                "dgemm-dist: error: the check FAILED (scaled residual %.3g >= %g, or not "
                "finite): C is wrong, or the inputs hold NaN or Inf%s%s\n",
                c->rec.chk.residual, DD_CHECK_THRESHOLD, o->out ? "; not written: " : "",
                o->out ? o->out : "");
    return DD_OK;
}

int dd_run(const dd_run_opts *o)
{
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.world = MPI_COMM_WORLD;
    c.row = c.col = c.node = MPI_COMM_NULL;
    MPI_Comm_rank(c.world, &c.rank);
    MPI_Comm_size(c.world, &c.size);
    c.tty = isatty(2);
    io_quiet();
    dd_err err = {{0}};
    size_t work = 0, slots = 0;
    int failed_check = 0, status;
    int rc = setup(&c, &work, &slots, &err);
    if (!rc && o->dry_run) {
        run_print_dry_run(&c, work, slots);
    } else if (!rc) {
        if (!(rc = data_in(&c, &err)) && !(rc = multiply(&c, &err)) &&
            !(rc = data_out(&c, &failed_check, &err)))
            rc = finish(&c, failed_check, &err);
    }
    if (rc) {
        dd_report_error(c.world, &err);
        status = rc == DD_EUSAGE ? DD_EXIT_USAGE : DD_EXIT_ERROR;
    } else {
        status = failed_check ? DD_EXIT_FAILED : DD_EXIT_OK;
    }
    cleanup(&c);
    return status;
}
