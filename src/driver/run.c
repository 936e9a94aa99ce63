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
#include "dd_fault.h"
#include "dd_sysmem.h"
#include "rng.h"
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

static int setup_grid(run_ctx *c, dd_err *err)
{
    int P = c->tune.P, Q = c->tune.Q; /* --grid, or auto (tune.c) */
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
    int rc2 =
        dd_mpi_check(MPI_Comm_split(c->world, c->g.q, c->g.p, &c->col), "MPI_Comm_split", err);
    return rc ? rc : rc2;
}

/* Which datasets hold transposes: op(A) = stored A when tA = 0, its
 * transpose when 1; --order col turns every dataset (a column-major
 * writer's matrix is seen transposed).  Generated inputs have no file
 * layout: op(A) is a block of the generator's A or of its transpose. */
static void gemm_layout(run_ctx *c)
{
    const dd_run_opts *o = c->o;
    int file = o->in != NULL;
    c->tA = (o->transa == 'T') != (file && o->col);
    c->tB = (o->transb == 'T') != (file && o->col);
    c->tC = o->col;
    c->read_c = o->beta != 0;
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
        return DD_OK;
    }
    snprintf(c->input, sizeof c->input, "%s", o->in);
    dd_probe_gemm pg = {o->a, o->b, o->c, o->transa, o->transb, o->col, c->read_c, o->beta};
    return io_probe_gemm(c->world, o->in, &pg, &c->M, &c->N, &c->K, &c->type, err);
}

/* The end of setup part `part` (report.h), on rank 0's clock; passes rc. */
static int mark(run_ctx *c, int part, int rc)
{
    c->rec.setup_at[part + 1] = dd_now();
    return rc;
}

/* Engine (--backend), then the comm backend that serves its memory (--comm). */
static int open_backends(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    dd_engine_cfg ecfg = {c->world, c->node, c->type, o->kernel, o->threads};
    int rc = mark(c, SP_INPUTS, DD_OK); /* the inputs were probed before this */
    rc = mark(c, SP_DEVICES, engine_select(o->backend, &ecfg, &c->eng, c->why, sizeof c->why, err));
    c->eng_open = rc == DD_OK;
    if (!rc && o->host_to_host && c->eng.ops->work_is_host && c->rank == 0 && !o->quiet)
        fprintf(stderr,
                "dgemm-dist: note: --host-to-host times the GPU's streamed pass from host "
                "data; the %s backend keeps its data on the host, so there is no such "
                "pass to time\n",
                c->eng.ops->name);
    return rc;
}

static int open_comm(run_ctx *c, dd_err *err)
{
    dd_engine *e = &c->eng;
    dd_comm_cfg cfg = {c->world,
                       c->row,
                       c->col,
                       c->s.lookahead + 1,
                       e->ops->work_is_host,
                       e->ops->comm_stream(e),
                       e->ops->compute_stream(e),
                       e->info.ranks_per_device};
    int rc = comm_select(c->o->comm, &cfg, &c->comm, err);
    c->comm_open = rc == DD_OK;
    return rc;
}

/* GPU memory: blocks and panel buffers must fit in what the device has free. */
static int gpu_memory_fits(run_ctx *c, size_t work, size_t slots, dd_err *err)
{
    size_t margin = (size_t)512 << 20; /* kernels, cuBLAS workspace, NCCL buffers */
    if (!c->eng.info.mem_free || work + margin <= c->eng.info.mem_free)
        return DD_OK;
    return dd_fail(err, DD_EUSAGE,
                   "rank %d needs %.2f GiB of GPU memory (blocks %.2f GiB + panel buffers "
                   "%.2f GiB + %.2f GiB reserve) but %s has %.2f GiB free: use more ranks "
                   "(GPUs), a smaller --panel or --lookahead",
                   c->rank, (double)(work + margin) / (1 << 30), (double)(work - slots) / (1 << 30),
                   (double)slots / (1 << 30), (double)margin / (1 << 30), c->eng.info.device,
                   (double)c->eng.info.mem_free / (1 << 30));
}

/* Host memory on the CPU backend: what the ranks of this host hold together
 * must fit in what the host (or its cgroup) allows, or the OOM killer ends
 * the run without a word.  Collective over the node. */
static int host_memory_fits(run_ctx *c, size_t work, dd_err *err)
{
    double mine = (double)work, node = 0;
    int ranks = 1;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &node, 1, MPI_DOUBLE, MPI_SUM, c->node),
                          "MPI_Allreduce of host memory", err);
    if (!rc)
        rc = dd_mpi_check(MPI_Comm_size(c->node, &ranks), "MPI_Comm_size", err);
    double have = (double)dd_host_memory_bytes();
    if (rc || have <= 0 || node <= 0.95 * have)
        return rc;
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    return dd_fail(err, DD_EUSAGE,
                   "the %d rank%s on host %s need%s %.2f GiB of memory (%.2f GiB per rank: blocks "
                   "and panel buffers) but it allows %.2f GiB: use more hosts, fewer ranks per "
                   "host, or a smaller problem",
                   ranks, ranks == 1 ? "" : "s", host, ranks == 1 ? "s" : "", node / (1 << 30),
                   mine / (1 << 30), have / (1 << 30));
}

/* Sizes, grid, panels, memory: everything before any data moves.  Every
 * size product is checked for overflow before it is used. */
static int plan(run_ctx *c, size_t *work_bytes, size_t *slot_bytes, dd_err *err)
{
    dd_summa *s = &c->s;
    summa_init(s, &c->eng, &c->comm, c->g, c->type, c->M, c->N, c->K, c->tune.nb, c->tune.L,
               c->read_c);
    int overflow = 0, rc = DD_OK;
    *work_bytes =
        dd_add(summa_work_bytes(s, slot_bytes, &overflow),
               dd_add(run_c0_bytes(c), run_device_scratch_bytes(c), &overflow), &overflow);
    if (overflow)
        rc = dd_fail(err, DD_EUSAGE,
                     "M=%lld N=%lld K=%lld on a %dx%d grid: rank %d's blocks would need more "
                     "than 2^64 bytes; use many more ranks or a smaller problem",
                     (long long)c->M, (long long)c->N, (long long)c->K, c->g.P, c->g.Q, c->rank);
    else if (s->npanels < 0)
        rc = dd_fail(err, DD_EUSAGE, "--panel %lld gives no panel list", (long long)s->nb);
    if (c->eng.ops->work_is_host) {
        int rc2 = host_memory_fits(c, overflow ? SIZE_MAX : *work_bytes + run_ring_bytes(c), err);
        rc = rc ? rc : rc2;
    } else if (!rc) {
        rc = gpu_memory_fits(c, *work_bytes, *slot_bytes, err);
    }
    if (!rc && dd_fault("setup"))
        rc = dd_fail(err, DD_EFAIL, "injected fault at setup on rank %d", c->rank);
    return mark(c, SP_PLAN, dd_agree(c->world, rc, err));
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
    rc = check_product(c->world, c->row, &c->g, &c->eng, c->type, c->M, c->N, c->K, c->s.A, c->s.B,
                       c->s.C, c->read_c ? &c->cin : NULL, c->o->seed + 0x5eed, &c->rec.chk, err);
    c->rec.checked = rc == DD_OK;
    return rc;
}

/* Devices, communicators and memory back; timed as the teardown phase on
 * success, and again harmlessly from cleanup() (everything released is
 * marked so). */
static void release(run_ctx *c)
{
    if (c->comm_open)
        c->comm.ops->close(&c->comm);
    c->comm_open = 0;
    if (!c->eng_open)
        return;
    dd_engine *e = &c->eng;
    if (c->s.panels || c->s.slotA[0] || c->s.slotB[0])
        summa_teardown(&c->s);
    run_ring_close(c);
    void **blocks[] = {&c->s.A, &c->s.B, &c->s.C, &c->C0};
    for (int i = 0; i < 4; i++)
        if (*blocks[i])
            e->ops->free(e, *blocks[i]);
    c->C0 = NULL;
    check_cterm_free(&c->cin);
    void **host[] = {&c->hA, &c->hB, &c->hC};
    for (int i = 0; i < 3; i++)
        if (*host[i])
            e->ops->host_free(e, *host[i]);
    c->s.A = c->s.B = c->s.C = c->hA = c->hB = c->hC = NULL;
    e->ops->close(e);
    c->eng_open = 0;
}

/* The grid's and the node's communicators (those made). */
static void free_comms(run_ctx *c)
{
    MPI_Comm *comms[] = {&c->row, &c->col, &c->node};
    for (int i = 0; i < 3; i++)
        if (*comms[i] != MPI_COMM_NULL)
            MPI_Comm_free(comms[i]);
}

static void cleanup(run_ctx *c)
{
    if (c->out.active)
        io_output_abort(c->world, &c->out);
    release(c);
    free(c->rec.mult_times);
    free(c->rec.hosts);
    free(c->rec.devices);
    free(c->rec.tele);
    free_comms(c);
}

/* Everything before data moves: the launch, the inputs' shape, the
 * backends, the settings (auto ones from the model: tune.c), the grid, the
 * plan; the dry run ends here. */
static int setup(run_ctx *c, size_t *work, size_t *slots, dd_err *err)
{
    int rc;
    if ((rc = dd_agree(c->world, check_launch(c, err), err)) ||
        (rc = dd_agree(c->world, resolve_inputs(c, err), err)) ||
        (rc = dd_agree(c->world,
                       dd_mpi_check(MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank,
                                                        MPI_INFO_NULL, &c->node),
                                    "MPI_Comm_split_type", err),
                       err)) ||
        (rc = open_backends(c, err)) || (rc = tune_run(c, err)) ||
        (rc = dd_agree(c->world, setup_grid(c, err), err)) || (rc = plan(c, work, slots, err)))
        return rc;
    return DD_OK;
}

/* Data in: the output's temporary name, blocks, the read, the upload. */
static int data_in(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc;
    if ((rc = mark(c, SP_COMM, open_comm(c, err))))
        return rc;
    if (o->json && (rc = io_output_check_side(c->world, o->json, "--json", o->in, o->out, err)))
        return rc;
    if (o->out && (rc = io_output_prepare(c->world, o->out, o->in, o->force, &c->out, err)))
        return rc;
    if ((rc = mark(c, SP_MEMORY, run_alloc_blocks(c, err))))
        return rc;
    c->s.hA = c->hA;
    c->s.hB = c->hB;
    rc = summa_warm(&c->s, err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    if ((rc = mark(c, SP_WARM, dd_agree(c->world, rc, err))))
        return rc;
    c->rec.ph[PH_SETUP] = dd_stat_over(c->world, dd_now() - c->t_start);
    c->rec.have[PH_SETUP] = 1;
    run_note_phase(c, "setup", c->rec.ph[PH_SETUP].max);
    TIMED(c, PH_READ, run_load_inputs(c, err));
    return rc;
}

/* Data out: the result down, checked, written; *failed_check when the
 * check said FAILED (then nothing is written). */
static int data_out(run_ctx *c, int *failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    int on_device = !c->eng.ops->work_is_host;
    if ((rc = dd_agree(c->world, run_fault_corrupt_c(c, err), err)))
        return rc;
    if (o->host_to_host && on_device && (rc = run_host_to_host(c, err)))
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
    if (!rc)
        c->rec.multiply_all = dd_stat_over(c->world, dd_now() - t0).max;
    return rc;
}

/* The communicators back, MPI finalized, then the device: every second up
 * to here is in the teardown phase, so the wall in the report leaves out
 * only printing it and exit.  After this no rank talks to another. */
static void finalize(run_ctx *c, double t_release)
{
    free_comms(c);
    dd_stat before = dd_stat_over(c->world, dd_now() - t_release);
    double t0 = dd_now();
    MPI_Finalize();
    c->finalized = 1;
    if (c->eng.ops && c->eng.ops->release_device)
        c->eng.ops->release_device(&c->eng);
    double after = dd_now() - t0; /* this rank's: nothing is gathered any more */
    c->rec.ph[PH_TEARDOWN] = (dd_stat){before.min + after, before.avg + after, before.max + after};
    c->rec.have[PH_TEARDOWN] = 1;
    c->rec.wall = dd_now() - c->t_start;
}

/* Rank 0: the report (or the check line alone with --quiet), the record.
 * Devices, memory and MPI are released first, so the teardown is in them;
 * a failure to write the record is rank 0's alone (nothing agrees after
 * MPI_Finalize; its exit status carries it). */
static int finish(run_ctx *c, int failed_check, dd_err *err)
{
    const dd_run_opts *o = c->o;
    int rc = DD_OK;
    run_fill_record(c);
    if (c->out.active) /* a FAILED check: the temporary goes, the old output stays */
        io_output_abort(c->world, &c->out);
    double t_release = dd_now();
    release(c);
    finalize(c, t_release);
    if (c->rank != 0)
        return DD_OK;
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
    if (failed_check)
        fprintf(stderr,
                "dgemm-dist: error: the check FAILED (scaled residual %.3g >= %g, or not "
                "finite): C is wrong, or the inputs hold NaN or Inf%s%s\n",
                c->rec.chk.residual, DD_CHECK_THRESHOLD, o->out ? "; not written: " : "",
                o->out ? o->out : "");
    return rc;
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
    c.t_start = o->t_start > 0 ? o->t_start : dd_now();
    /* setup parts: launcher until main(), MPI_Init, then dd_run's own */
    c.rec.setup_at[SP_LAUNCH] = c.t_start;
    c.rec.setup_at[SP_MPI] = o->t_main > 0 ? o->t_main : c.t_start;
    c.rec.setup_at[SP_INPUTS] = o->t_mpi > 0 ? o->t_mpi : c.t_start;
    c.tty = isatty(2);
    io_quiet();
    dd_err err = {{0}};
    size_t work = 0, slots = 0;
    int failed_check = 0, status;
    int rc = setup(&c, &work, &slots, &err);
    if (!rc && o->dry_run) {
        run_print_dry_run(&c, work, slots);
    } else if (!rc) {
        if (!(rc = data_in(&c, &err)) && !(rc = multiply_all(&c, &err)) &&
            !(rc = data_out(&c, &failed_check, &err)))
            rc = finish(&c, failed_check, &err);
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
