/* gen.c — `dgemm-dist gen`: write A (M×K) and B (K×N) from the counter-based
 * generator.  Each rank writes a contiguous band of rows; the values depend
 * only on (seed, matrix, index), so the file is the same for any rank count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "grid.h"
#include "io.h"
#include "rng.h"
#include "run.h"
#include "timer.h"

static int write_matrix(dd_io *io, MPI_Comm world, const dd_run_opts *o, const char *name, uint64_t tag,
                        int64_t rows, int64_t cols, dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    dd_range r = grid_block(rows, size, rank);
    int overflow = 0;
    size_t bytes = dd_mul3((uint64_t)r.len, (uint64_t)cols, dd_elsize(o->dtype), &overflow);
    void *buf = overflow ? NULL : malloc(bytes ? bytes : 1);
    int rc =
        buf ? DD_OK
            : dd_fail(err, overflow ? DD_EUSAGE : DD_ENOMEM,
                      "cannot allocate %.3g GiB to generate %s: use more ranks",
                      overflow ? 1.8e10 : (double)bytes / (1 << 30), name);
    if ((rc = dd_agree(world, rc, err))) {
        free(buf);
        return rc;
    }
    rng_fill_block(buf, o->dtype, o->seed, tag, r.start, r.len, 0, cols, cols);
    rc = io->ops->write_block(io, name, o->dtype, r.start, r.len, 0, cols, buf, err);
    free(buf);
    return dd_agree(world, rc, err);
}

/* The file, read back before it takes its name: every rank compares the
 * first and last element of its band of each matrix with the generator. */
static int verify_matrix(dd_io *io, MPI_Comm world, const dd_run_opts *o, const char *name,
                         uint64_t tag, int64_t rows, int64_t cols, int *bad, dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    dd_range r = grid_block(rows, size, rank);
    int64_t at[2][2] = {{r.start, 0}, {r.start + r.len - 1, cols - 1}};
    int rc = DD_OK;
    for (int i = 0; i < 2 && r.len && !rc; i++) {
        double got = 0, want = 0;
        rng_fill_block(&want, o->dtype, o->seed, tag, at[i][0], 1, at[i][1], 1, cols);
        rc = io->ops->read_block(io, name, o->dtype, at[i][0], 1, at[i][1], 1, &got, err);
        if (!rc && memcmp(&got, &want, dd_elsize(o->dtype)))
            *bad = 1;
    }
    return rc;
}

static int verify_file(const dd_run_opts *o, MPI_Comm world, const char *path, int64_t M,
                       int64_t N, int64_t K, dd_err *err)
{
    dd_io io = {0};
    io.ops = &dd_io_independent;
    int rc = dd_agree(world, io.ops->open_read(&io, world, path, err), err);
    if (rc)
        return rc;
    int bad = 0;
    rc = verify_matrix(&io, world, o, o->a, RNG_TAG_A, M, K, &bad, err);
    if (!rc)
        rc = verify_matrix(&io, world, o, o->b, RNG_TAG_B, K, N, &bad, err);
    dd_err e2 = {{0}};
    int rc2 = io.ops->close(&io, &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    if (!rc && bad)
        rc = dd_fail(err, DD_ECHECK,
                     "%s does not read back as generated: the file system lost data; %s was "
                     "not written",
                     path, o->out);
    return dd_agree(world, rc, err);
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
    dd_io io = {0};
    if (!ops) {
        rc = dd_fail(&err, DD_EUSAGE,
                     "--io %s is not available in this build: use --io independent", o->io);
        goto fail;
    }
    io.ops = ops;
    if ((rc = io_output_prepare(world, o->out, NULL, o->force, &out, &err)))
        goto fail;
    const char *names[2] = {o->a, o->b};
    int64_t dims[2][2] = {{M, K}, {K, N}};
    if ((rc = dd_agree(
             world,
             ops->create(&io, world, out.tmp, 2, names, (const int64_t(*)[2])dims, o->dtype, &err),
             &err)))
        goto fail;
    rc = write_matrix(&io, world, o, o->a, RNG_TAG_A, M, K, &err);
    if (!rc)
        rc = write_matrix(&io, world, o, o->b, RNG_TAG_B, K, N, &err);
    dd_attr attrs[] = {
        {"generator", DD_ATTR_STR,
         "dgemm-dist " DD_VERSION " gen: splitmix64 counter, uniform [-1,1)", 0, 0},
        {"seed", DD_ATTR_I64, NULL, 0, (int64_t)o->seed},
    };
    if (!rc)
        rc = dd_agree(world, ops->set_attrs(&io, o->a, attrs, 2, &err), &err);
    if (!rc)
        rc = dd_agree(world, ops->set_attrs(&io, o->b, attrs, 2, &err), &err);
    dd_err e2 = {{0}};
    int rc2 = dd_agree(world, ops->close(&io, &e2), &e2);
    if (!rc && rc2) {
        rc = rc2;
        err = e2;
    }
    if (!rc)
        rc = verify_file(o, world, out.tmp, M, N, K, &err);
    if (rc)
        goto fail;
    if ((rc = io_output_commit(world, &out, &err)))
        goto fail;
    if (rank == 0 && !o->quiet)
        printf("gen: wrote %s: A %lldx%lld, B %lldx%lld, %s, seed %llu, in %.2f s\n", o->out,
               (long long)M, (long long)K, (long long)K, (long long)N, dd_dtype_name(o->dtype),
               (unsigned long long)o->seed, dd_now() - t0);
    return DD_EXIT_OK;
fail:
    dd_report_error(world, &err);
    if (out.active)
        io_output_abort(world, &out);
    return rc == DD_EUSAGE ? DD_EXIT_USAGE : rc == DD_ECHECK ? DD_EXIT_FAILED : DD_EXIT_ERROR;
}
