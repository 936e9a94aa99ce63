/* gen.c — `dgemm-dist gen`: write A (M×K) and B (K×N), and with --with-c C
 * (M×N), from the counter-based generator.  Each rank writes a contiguous
 * band of rows; the values depend only on (seed, matrix, index), so the
 * file is the same for any rank count.  --transa T writes A as K×M (and
 * --transb T B as N×K), the shapes a run with the same flags reads; --order
 * col writes each matrix column-major (its transpose as the dataset), so
 * the same run with --order col multiplies the same values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "grid.h"
#include "io.h"
#include "rng.h"
#include "run.h"
#include "timer.h"

/* One matrix of the file: the generator's rows×cols matrix (values by
 * their row-major index), written as a rows×cols dataset, or with col as its
 * transpose (cols×rows: how a column-major writer's matrix looks). */
typedef struct {
    const char *name;
    uint64_t tag;
    int64_t rows, cols;
} gen_mat;

/* Stored rows [row0, row0 + n) of m: n×(stored columns) into buf. */
static void gen_band(const dd_run_opts *o, const gen_mat *m, void *buf, int64_t row0, int64_t n,
                     int64_t col0, int64_t ncols)
{
    if (o->col)
        rng_fill_block_t(buf, o->dtype, o->seed, m->tag, row0, n, col0, ncols, m->cols);
    else
        rng_fill_block(buf, o->dtype, o->seed, m->tag, row0, n, col0, ncols, m->cols);
}

static int write_matrix(dd_io *io, MPI_Comm world, const dd_run_opts *o, const gen_mat *m,
                        dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int64_t rows = o->col ? m->cols : m->rows, cols = o->col ? m->rows : m->cols; /* stored */
    dd_range r = grid_block(rows, size, rank);
    int overflow = 0;
    size_t bytes = dd_mul3((uint64_t)r.len, (uint64_t)cols, dd_elsize(o->dtype), &overflow);
    void *buf = overflow ? NULL : malloc(bytes ? bytes : 1);
    int rc = buf ? DD_OK
                 : dd_fail(err, overflow ? DD_EUSAGE : DD_ENOMEM,
                           "cannot allocate %.3g GiB to generate %s: use more ranks",
                           overflow ? 1.8e10 : (double)bytes / (1 << 30), m->name);
    if ((rc = dd_agree(world, rc, err))) {
        free(buf);
        return rc;
    }
    gen_band(o, m, buf, r.start, r.len, 0, cols);
    rc = io_write_pieces(io, m->name, o->dtype, r.start, r.len, 0, cols, buf, err);
    free(buf);
    return dd_agree(world, rc, err);
}

/* The file, read back before it takes its name: every rank compares the
 * first and last element of its band of each matrix with the generator. */
static int verify_matrix(dd_io *io, MPI_Comm world, const dd_run_opts *o, const gen_mat *m,
                         int *bad, dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int64_t rows = o->col ? m->cols : m->rows, cols = o->col ? m->rows : m->cols;
    dd_range r = grid_block(rows, size, rank);
    int64_t at[2][2] = {{r.start, 0}, {r.start + r.len - 1, cols - 1}};
    int rc = DD_OK;
    for (int i = 0; i < 2 && r.len && !rc; i++) {
        double got[2] = {0, 0}, want[2] = {0, 0}; /* one element of any type: c128 is 16 bytes */
        gen_band(o, m, want, at[i][0], 1, at[i][1], 1);
        rc = io->ops->read_block(io, m->name, o->dtype, at[i][0], 1, at[i][1], 1, got, err);
        if (!rc && memcmp(got, want, dd_elsize(o->dtype)))
            *bad = 1;
    }
    return rc;
}

static int verify_file(const dd_run_opts *o, MPI_Comm world, const char *path, const gen_mat *m,
                       int n, dd_err *err)
{
    dd_io io = {0};
    io.ops = &dd_io_independent;
    int rc = dd_agree(world, io.ops->open_read(&io, world, path, err), err);
    if (rc)
        return rc;
    int bad = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = verify_matrix(&io, world, o, &m[i], &bad, err);
    rc = io_close_after(&io, rc, err);
    if (!rc && bad)
        rc = dd_fail(err, DD_ECHECK,
                     "%s does not read back as generated: the file system lost data; %s was "
                     "not written",
                     path, o->out);
    return dd_agree(world, rc, err);
}

/* Creates the temporary, writes every matrix and its attributes, closes. */
static int write_file(const dd_io_ops *ops, MPI_Comm world, const dd_run_opts *o, const char *path,
                      const gen_mat *m, int n, dd_err *err)
{
    dd_io io = {0};
    io.ops = ops;
    const char *names[3];
    int64_t dims[3][2];
    for (int i = 0; i < n; i++) {
        names[i] = m[i].name;
        dims[i][0] = o->col ? m[i].cols : m[i].rows;
        dims[i][1] = o->col ? m[i].rows : m[i].cols;
    }
    int rc = dd_agree(
        world, ops->create(&io, world, path, n, names, (const int64_t(*)[2])dims, o->dtype, err),
        err);
    if (rc)
        return rc;
    dd_attr attrs[] = {
        {"generator", DD_ATTR_STR,
         "dgemm-dist " DGEMM_DIST_VERSION_STRING " gen: splitmix64 counter, uniform [-1,1)", 0, 0},
        {"seed", DD_ATTR_I64, NULL, 0, (int64_t)o->seed},
        {"order", DD_ATTR_STR, o->col ? "col" : "row", 0, 0},
    };
    for (int i = 0; i < n && !rc; i++)
        rc = write_matrix(&io, world, o, &m[i], err);
    for (int i = 0; i < n && !rc; i++)
        rc = dd_agree(world, ops->set_attrs(&io, m[i].name, attrs, 3, err), err);
    rc = dd_agree(world, io_close_after(&io, rc, err), err);
    return rc;
}

static void print_done(const dd_run_opts *o, const gen_mat *m, int n, double seconds)
{
    printf("gen: wrote %s:", o->out);
    for (int i = 0; i < n; i++)
        printf("%s %s %lldx%lld", i ? "," : "", m[i].name, (long long)m[i].rows,
               (long long)m[i].cols);
    printf(", %s, seed %llu%s, in %.2f s\n", dd_dtype_name(o->dtype), (unsigned long long)o->seed,
           o->col ? ", column-major (--order col)" : "", seconds);
}

int dd_gen(const dd_run_opts *o)
{
    MPI_Comm world = MPI_COMM_WORLD;
    int rank;
    MPI_Comm_rank(world, &rank);
    dd_err err = {{0}};
    dd_output out;
    memset(&out, 0, sizeof out);
    int rc;
    io_quiet();
    double t0 = dd_now();
    const dd_io_ops *ops = io_select(o->io);
    int64_t M = o->size[0], N = o->size[1], K = o->size[2];
    int ta = o->transa != 'N', tb = o->transb != 'N';
    /* A and B as a run with the same --transa/--transb reads them ('C', the
     * conjugate transpose, stores them as 'T' does) */
    gen_mat m[3] = {{o->a, RNG_TAG_A, ta ? K : M, ta ? M : K},
                    {o->b, RNG_TAG_B, tb ? N : K, tb ? K : N},
                    {"C", RNG_TAG_C, M, N}};
    int n = o->with_c ? 3 : 2;
    if (!ops) {
        rc = dd_fail(&err, DD_EUSAGE,
                     "--io %s is not available in this build: use --io independent", o->io);
        goto fail;
    }
    /* sizes no file system holds are refused before anything is created */
    uint64_t bytes = 64 << 10; /* HDF5's metadata and the attributes */
    for (int i = 0; ops && i < n; i++) {
        int overflow = 0;
        uint64_t b =
            dd_mul3((uint64_t)m[i].rows, (uint64_t)m[i].cols, dd_elsize(o->dtype), &overflow);
        bytes = overflow || bytes > UINT64_MAX - b ? UINT64_MAX : bytes + b;
        if (overflow) {
            rc = dd_fail(&err, DD_EUSAGE,
                         "%s would be %lld×%lld: more than 2^64 bytes; give "
                         "smaller sizes",
                         m[i].name, (long long)m[i].rows, (long long)m[i].cols);
            goto fail;
        }
    }
    if ((rc = io_output_prepare(world, o->out, NULL, o->force, &out, &err)) ||
        (rc = io_output_check_limit(world, o->out, bytes, &err)) ||
        (rc = write_file(ops, world, o, out.tmp, m, n, &err)) ||
        (rc = verify_file(o, world, out.tmp, m, n, &err)) ||
        (rc = io_output_commit(world, &out, &err)))
        goto fail;
    if (rank == 0 && !o->quiet)
        print_done(o, m, n, dd_now() - t0);
    return DD_EXIT_OK;
fail:
    dd_report_error(world, &err);
    if (out.active)
        io_output_abort(world, &out);
    return rc == DD_EUSAGE ? DD_EXIT_USAGE : rc == DD_ECHECK ? DD_EXIT_FAILED : DD_EXIT_ERROR;
}
