/* run.c — one distributed multiply, start to finish (run.h).
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
#include "comm.h"
#include "engine.h"
#include "grid.h"
#include "io.h"
#include "report.h"
#include "rng.h"
#include "run.h"
#include "summa.h"
#include "timer.h"

typedef struct {
    const dd_opts *o;
    MPI_Comm world, node, row, col;
    int rank, size, tty;
    dd_grid g;
    dd_engine eng;
    int eng_open;
    dd_comm comm;
    int comm_open;
    const dd_io_ops *io;
    dd_dtype type;
    int64_t M, N, K;
    void *hA, *hB, *hC; /* host blocks */
    dd_summa s;         /* work blocks and panels */
    int work_alloc;     /* s.A/B/C allocated separately from host blocks */
    char tmp[4096];
    int have_tmp;
    char why[192], input[512], mpi_version[128];
    dd_record rec;
} run_ctx;

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
    if (P * Q != c->size) {
        int dP, dQ;
        grid_default(c->size, &dP, &dQ);
        return dd_fail(err, DD_EUSAGE,
                       "--grid %dx%d needs %d ranks but MPI started %d: change --grid or the "
                       "rank count (or leave --grid out for %dx%d)",
                       P, Q, P * Q, c->size, dP, dQ);
    }
    c->g = grid_make(P, Q, c->rank);
    int rc = dd_mpi_check(MPI_Comm_split(c->world, c->g.p, c->g.q, &c->row), "MPI_Comm_split", err);
    if (!rc)
        rc = dd_mpi_check(MPI_Comm_split(c->world, c->g.q, c->g.p, &c->col), "MPI_Comm_split", err);
    return rc;
}

/* --backend: open the engine; auto falls back to the CPU unless every rank
 * has a GPU. */
static int open_engine(run_ctx *c, dd_err *err)
{
    const dd_opts *o = c->o;
    dd_engine_cfg cfg = {c->world, c->node, o->kernel, o->threads};
    int want_cuda = strcmp(o->backend, "cpu") != 0;
    if (want_cuda) {
#ifdef DD_HAVE_CUDA
        c->eng.ops = &dd_engine_cuda;
        dd_err local = {{0}};
        int rc = c->eng.ops->open(&c->eng, &cfg, &local);
        int fail = rc != DD_OK, anyfail, unsup = rc == DD_EUNSUP;
        MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_LOR, c->world);
        if (!anyfail) {
            c->eng_open = 1;
            snprintf(c->why, sizeof c->why, "%s",
                     !strcmp(o->backend, "auto") ? "auto: every rank has a GPU" : "--backend cuda");
            return DD_OK;
        }
        if (!fail)
            c->eng.ops->close(&c->eng);
        /* which rank failed, and why */
        int allunsup;
        int u = !fail || unsup;
        MPI_Allreduce(&u, &allunsup, 1, MPI_INT, MPI_LAND, c->world);
        rc = dd_agree(c->world, rc, &local);
        if (!strcmp(o->backend, "cuda") || !allunsup) {
            *err = local;
            return rc ? rc : DD_EFAIL;
        }
        snprintf(c->why, sizeof c->why, "auto: not every rank has a GPU: %.150s", local.msg);
#else
        if (!strcmp(o->backend, "cuda"))
            return dd_fail(err, DD_EUSAGE,
                           "--backend cuda: this dgemm-dist was built without CUDA (no nvcc at "
                           "build time); rebuild with the CUDA toolkit or use --backend cpu");
        snprintf(c->why, sizeof c->why, "auto: built without CUDA");
#endif
    } else {
        snprintf(c->why, sizeof c->why, "--backend cpu");
    }
    c->eng.ops = &dd_engine_cpu;
    int rc = dd_agree(c->world, c->eng.ops->open(&c->eng, &cfg, err), err);
    c->eng_open = rc == DD_OK;
    return rc;
}

static int open_comm(run_ctx *c, dd_err *err)
{
    const char *want = c->o->comm;
    const dd_comm_ops *ops = NULL;
    dd_comm_cfg cfg = {c->world, c->row, c->col, &c->eng, c->o->lookahead + 1};
    if (!strcmp(c->eng.ops->name, "cpu")) {
        if (!strcmp(want, "nccl"))
            return dd_fail(err, DD_EUSAGE,
                           "--comm nccl needs the CUDA backend; the CPU backend "
                           "broadcasts with MPI (use --comm mpi or auto)");
        ops = &dd_comm_mpi_host;
    } else {
#ifdef DD_HAVE_CUDA
        int shared = c->eng.info.ranks_per_device, maxshared;
        MPI_Allreduce(&shared, &maxshared, 1, MPI_INT, MPI_MAX, c->world);
        ops = &dd_comm_mpi_gpu;
#ifdef DD_HAVE_NCCL
        if (!strcmp(want, "nccl") || (!strcmp(want, "auto") && maxshared == 1))
            ops = &dd_comm_nccl;
#else
        if (!strcmp(want, "nccl"))
            return dd_fail(err, DD_EUSAGE,
                           "--comm nccl: this dgemm-dist was built without "
                           "NCCL; use --comm mpi or rebuild with NCCL");
#endif
#endif
    }
    c->comm.ops = ops;
    int rc = dd_agree(c->world, ops->open(&c->comm, &cfg, err), err);
    c->comm_open = rc == DD_OK;
    return rc;
}

static int gather_strings(run_ctx *c, const char *mine, size_t width, char sep, int dedupe,
                          char **out)
{
    char *all = c->rank == 0 ? calloc((size_t)c->size, width) : NULL;
    char *buf = calloc(1, width);
    if (buf)
        snprintf(buf, width, "%s", mine);
    MPI_Gather(buf ? buf : (char[1]){0}, buf ? (int)width : 0, MPI_CHAR, all, (int)width, MPI_CHAR,
               0, c->world);
    free(buf);
    if (c->rank != 0)
        return DD_OK;
    if (!all)
        return DD_ENOMEM;
    char *res = calloc((size_t)c->size, width + 1);
    if (!res) {
        free(all);
        return DD_ENOMEM;
    }
    for (int r = 0; r < c->size; r++) {
        const char *s = all + (size_t)r * width;
        int seen = 0;
        for (int q = 0; dedupe && q < r && !seen; q++)
            seen = !strncmp(s, all + (size_t)q * width, width);
        if (seen)
            continue;
        size_t used = strlen(res);
        if (used)
            res[used++] = sep;
        size_t len = strnlen(s, width);
        memcpy(res + used, s, len);
        res[used + len] = '\0';
    }
    free(all);
    *out = res;
    return DD_OK;
}

static void print_dry_run(run_ctx *c, size_t work, size_t slots)
{
    struct {
        long long rows, cols, ak, bk;
        double work, slots;
    } mine = {(long long)c->s.Mp, (long long)c->s.Nq, (long long)c->s.Kq,
              (long long)c->s.Kp, (double)work,       (double)slots},
      *all = NULL;
    if (c->rank == 0)
        all = calloc((size_t)c->size, sizeof *all);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, c->world);
    if (c->rank != 0 || !all)
        return;
    printf("dry run: C = A·B  %s  M=%lld N=%lld K=%lld on a %dx%d grid, panel %lld, "
           "lookahead %d, %lld panels\n",
           dd_dtype_name(c->type), (long long)c->M, (long long)c->N, (long long)c->K, c->g.P,
           c->g.Q, (long long)c->s.nb, c->s.lookahead, (long long)c->s.npanels);
    printf("backend %s (%s)\n", c->eng.ops->name, c->why);
    printf("%5s %7s %21s %21s %21s %12s %12s\n", "rank", "(p,q)", "C block", "A block", "B block",
           "panels MiB", "total MiB");
    for (int r = 0; r < c->size; r++) {
        char cb[32], ab[32], bb[32];
        snprintf(cb, sizeof cb, "%lldx%lld", all[r].rows, all[r].cols);
        snprintf(ab, sizeof ab, "%lldx%lld", all[r].rows, all[r].ak);
        snprintf(bb, sizeof bb, "%lldx%lld", all[r].bk, all[r].cols);
        printf("%5d   (%d,%d) %21s %21s %21s %12.1f %12.1f\n", r, r / c->g.Q, r % c->g.Q, cb, ab,
               bb, all[r].slots / 1048576.0, all[r].work / 1048576.0);
    }
    free(all);
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
    /* Defaults measured: CPU, OpenBLAS reaches its rate at rank-512 updates;
     * CUDA (H200), 2048 balances C's read-modify-write per panel against the
     * unhidden first broadcast (docs/results/h200x2-2026-11-29-panel-sweep). */
    s->nb = c->o->panel ? c->o->panel : (!strcmp(c->eng.ops->name, "cpu") ? 512 : 2048);
    summa_shape(s);
    s->npanels = summa_panel_count(s);
    *work_bytes = summa_work_bytes(s, slot_bytes);
    int rc = DD_OK;
    if (!c->eng.info.work_is_host && c->eng.info.mem_free) {
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
    if (!rc && e->info.work_is_host) {
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
    const dd_opts *o = c->o;
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
    const dd_opts *o = c->o;
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
    char grid[32];
    snprintf(grid, sizeof grid, "%dx%d", c->g.P, c->g.Q);
    dd_record *r = &c->rec;
    dd_attr attrs[] = {
        {"tool", DD_ATTR_STR, "dgemm-dist " DD_VERSION, 0, 0},
        {"input", DD_ATTR_STR, c->input, 0, 0},
        {"grid", DD_ATTR_STR, grid, 0, 0},
        {"backend", DD_ATTR_STR, c->eng.ops->name, 0, 0},
        {"device", DD_ATTR_STR, c->eng.info.device, 0, 0},
        {"comm", DD_ATTR_STR, c->comm.ops->name, 0, 0},
        {"kernel", DD_ATTR_STR, c->eng.info.kernel, 0, 0},
        {"panel", DD_ATTR_I64, NULL, 0, c->s.nb},
        {"multiply_seconds_median", DD_ATTR_F64, NULL, r->tmed, 0},
        {"tflops", DD_ATTR_F64, NULL, r->tflops, 0},
        {"read_seconds_max", DD_ATTR_F64, NULL, r->ph[PH_READ].max, 0},
        {"residual", DD_ATTR_F64, NULL, r->checked ? r->chk.residual : -1.0, 0},
    };
    if (!rc)
        rc = dd_agree(c->world,
                      io.ops->set_attrs(&io, o->c, attrs, (int)(sizeof attrs / sizeof *attrs), err),
                      err);
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
    const dd_opts *o = c->o;
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

static void fill_record(run_ctx *c)
{
    const dd_opts *o = c->o;
    dd_record *r = &c->rec;
    r->cmdline = o->cmdline;
    r->ranks = c->size;
    r->P = c->g.P;
    r->Q = c->g.Q;
    r->M = c->M;
    r->N = c->N;
    r->K = c->K;
    r->nb = c->s.nb;
    r->lookahead = o->lookahead;
    r->repeat = o->repeat;
    r->warmup = o->warmup;
    r->type = c->type;
    r->input = c->input;
    r->backend = c->eng.ops->name;
    r->backend_why = c->why;
    r->comm = c->comm.ops->name;
    r->comm_detail = c->comm.detail;
    r->kernel = c->eng.info.kernel;
    r->io = o->in || o->out ? c->io->name : NULL;
    r->gpus = c->eng.info.device_index >= 0 ? c->size : 0;
    int len = 0;
    MPI_Get_library_version(c->mpi_version, &len);
    char *nl = strchr(c->mpi_version, '\n');
    if (nl)
        *nl = '\0';
    nl = strchr(c->mpi_version, ',');
    if (nl)
        *nl = '\0';
    r->v_mpi = c->mpi_version;
    r->v_hdf5 = io_library_version();
    r->v_blas = engine_cpu_blas_version();
    r->v_engine = c->eng.info.versions;
    r->v_comm = c->comm.detail;
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    gather_strings(c, host, 64, ',', 1, &r->hosts);
    gather_strings(c, c->eng.info.device, 128, '\n', 0, &r->devices);
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

int dd_run(const dd_opts *o)
{
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.world = MPI_COMM_WORLD;
    c.row = c.col = c.node = MPI_COMM_NULL;
    MPI_Comm_rank(c.world, &c.rank);
    MPI_Comm_size(c.world, &c.size);
    c.tty = isatty(2);
    dd_err err = {{0}};
    int rc, status = DD_EXIT_ERROR;
    io_quiet();

    if ((rc = dd_agree(c.world, check_launch(&c, &err), &err)))
        goto fail;
    c.io = io_select(o->io);
    if (!c.io) {
        rc = dd_fail(&err, DD_EUSAGE,
                     "--io %s is not available: this build has %s HDF5, so "
                     "use --io independent (or auto)",
                     o->io, strstr(io_library_version(), "parallel") ? "parallel" : "serial");
        goto fail;
    }
    if (o->in) {
        rc = io_probe_inputs(c.world, o->in, o->a, o->b, &c.M, &c.N, &c.K, &c.type, &err);
        if (rc)
            goto fail;
        snprintf(c.input, sizeof c.input, "%s", o->in);
    } else {
        c.M = o->size[0];
        c.N = o->size[1];
        c.K = o->size[2];
        c.type = o->dtype;
        snprintf(c.input, sizeof c.input, "generated, seed %llu", (unsigned long long)o->seed);
    }
    if ((rc = dd_agree(c.world, setup_grid(&c, &err), &err)))
        goto fail;
    if ((rc = dd_mpi_check(
             MPI_Comm_split_type(c.world, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &c.node),
             "MPI_Comm_split_type", &err)))
        goto fail;
    if ((rc = open_engine(&c, &err)))
        goto fail;
    size_t work = 0, slots = 0;
    if ((rc = plan(&c, &work, &slots, &err)))
        goto fail;
    if (o->dry_run) {
        print_dry_run(&c, work, slots);
        status = DD_EXIT_OK;
        goto done;
    }
    if ((rc = open_comm(&c, &err)))
        goto fail;
    if (o->out) {
        if ((rc = io_output_prepare(c.world, o->out, o->in, o->force, c.tmp, sizeof c.tmp, &err)))
            goto fail;
        c.have_tmp = 1;
    }
    if ((rc = alloc_blocks(&c, &err)))
        goto fail;
    c.s.hA = c.hA;
    c.s.hB = c.hB;
    TIMED(&c, PH_READ, load_inputs(&c, &err));
    if (rc)
        goto fail;
    if (!c.eng.info.work_is_host) {
        TIMED(&c, PH_UPLOAD, up(&c, &err));
        if (rc)
            goto fail;
    }
    if ((rc = multiply(&c, &err)))
        goto fail;
    if (o->host_to_host && !c.eng.info.work_is_host && (rc = host_to_host(&c, &err)))
        goto fail;
    if (!c.eng.info.work_is_host && (o->out || o->check)) {
        TIMED(&c, PH_DOWNLOAD, down(&c, &err));
        if (rc)
            goto fail;
    }
    if (o->check) {
        TIMED(&c, PH_CHECK, verify(&c, &err));
        if (rc)
            goto fail;
    }
    int failed_check = o->check && !c.rec.chk.passed;
    if (o->out && !failed_check) {
        TIMED(&c, PH_WRITE, write_output(&c, &err));
        if (rc)
            goto fail;
    }
    fill_record(&c);
    if (c.rank == 0) {
        if (c.tty && !o->quiet)
            fputc('\n', stderr);
        if (!o->quiet)
            report_print(stdout, &c.rec);
        else if (o->check) {
            char line[256];
            check_line(&c.rec.chk, line, sizeof line);
            printf("%s\n", line);
        }
        if (o->json)
            rc = report_json(o->json, &c.rec, &err);
    }
    if ((rc = dd_agree(c.world, rc, &err)))
        goto fail;
    if (failed_check && c.rank == 0)
        fprintf(stderr,
                "dgemm-dist: error: the check FAILED (scaled residual %.3g >= %g, or not "
                "finite): C is wrong, or the inputs hold NaN or Inf%s%s\n",
                c.rec.chk.residual, DD_CHECK_THRESHOLD, o->out ? "; not written: " : "",
                o->out ? o->out : "");
    status = failed_check ? DD_EXIT_FAILED : DD_EXIT_OK;
    goto done;
fail:
    dd_report_error(c.world, &err);
    status = rc == DD_EUSAGE ? DD_EXIT_USAGE : DD_EXIT_ERROR;
done:
    cleanup(&c);
    return status;
}
