/* run_verify.c — the check guards the files, not only the memory
 * (run_ctx.h): the blocks read are compared with the input file through a
 * second path, and the output is read back before it is committed.  Both
 * compare bit for bit; a difference is a failed verification (exit 3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "dd_fault.h"
#include "dd_splitmix.h"
#include "run_ctx.h"

/* ---- the inputs ---------------------------------------------------------------- */

/* Element (i, j) of a rows×cols block in work memory, fetched to the host. */
static int block_element(run_ctx *c, const void *block, int64_t cols, int64_t i, int64_t j,
                         void *val, dd_err *err)
{
    size_t es = dd_elsize(c->type);
    return c->eng.ops->download(&c->eng, val, (const char *)block + (size_t)(i * cols + j) * es,
                                es, err);
}

/* Samples of one block: its four corners, its centre, and eight seeded
 * random elements.  A whole block read from the wrong place differs at its
 * corners; one read element wrong is found only if sampled. */
static int sample_block(run_ctx *c, dd_io *io, const char *dset, const void *block, int64_t row0,
                        int64_t rows, int64_t col0, int64_t cols, uint64_t salt, int *bad,
                        dd_err *err)
{
    if (rows == 0 || cols == 0)
        return DD_OK;
    int64_t pick[13][2] = {{0, 0},           {0, cols - 1},       {rows - 1, 0},
                           {rows - 1, cols - 1}, {rows / 2, cols / 2}};
    for (int s = 5; s < 13; s++) {
        uint64_t h = dd_splitmix64(c->o->seed ^ salt ^ ((uint64_t)c->rank << 20) ^ (uint64_t)s);
        pick[s][0] = (int64_t)(h % (uint64_t)rows);
        pick[s][1] = (int64_t)((h >> 32) % (uint64_t)cols);
    }
    int rc = DD_OK;
    for (int s = 0; s < 13 && !rc; s++) {
        double file = 0, mem = 0; /* room for either type */
        rc = io->ops->read_block(io, dset, c->type, row0 + pick[s][0], 1, col0 + pick[s][1], 1,
                                 &file, err);
        if (!rc)
            rc = block_element(c, block, cols, pick[s][0], pick[s][1], &mem, err);
        if (!rc && memcmp(&file, &mem, dd_elsize(c->type)))
            *bad = 1;
    }
    return rc;
}

int run_verify_inputs(run_ctx *c, dd_err *err)
{
    if (!c->o->in)
        return DD_OK;
    dd_summa *s = &c->s;
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    dd_range rkq = grid_block(c->K, c->g.Q, c->g.q), rkp = grid_block(c->K, c->g.P, c->g.p);
    dd_io io = {0};
    io.ops = &dd_io_independent; /* not the path that read the blocks */
    int rc = dd_agree(c->world, io.ops->open_read(&io, c->world, c->o->in, err), err);
    if (rc)
        return rc;
    int bad_a = 0, bad_b = 0;
    rc = sample_block(c, &io, c->o->a, s->A, rm.start, s->Mp, rkq.start, s->Kq, 0xA, &bad_a, err);
    if (!rc)
        rc = sample_block(c, &io, c->o->b, s->B, rkp.start, s->Kp, rn.start, s->Nq, 0xB, &bad_b,
                          err);
    dd_err e2 = {{0}};
    int rc2 = io.ops->close(&io, &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    if (!rc && (bad_a || bad_b))
        rc = dd_fail(err, DD_ECHECK,
                     "matrix %s in memory on rank %d differs from %s: a block was read from the "
                     "wrong place or damaged on the way; the product would be of the wrong data",
                     bad_a ? "A" : "B", c->rank, c->o->in);
    return dd_agree(c->world, rc, err);
}

/* Tests: one element of C off by a relative 1e-6, as a wrong kernel would. */
int run_fault_corrupt_c(run_ctx *c, dd_err *err)
{
    if (!dd_fault("corrupt-c") || c->s.Mp == 0 || c->s.Nq == 0)
        return DD_OK;
    double v = 0;
    int rc = block_element(c, c->s.C, c->s.Nq, 0, 0, &v, err);
    if (c->type == DD_F64)
        v *= 1 + 1e-6;
    else {
        float f;
        memcpy(&f, &v, sizeof f);
        f *= 1 + 1e-3f;
        memcpy(&v, &f, sizeof f);
    }
    if (!rc)
        rc = c->eng.ops->upload(&c->eng, c->s.C, &v, dd_elsize(c->type), err);
    return rc;
}

/* ---- the output ------------------------------------------------------------------ */

/* One row (col < 0) or one column (row < 0) of my block, read back from the
 * file into got[] and fetched from C in work memory into want[] (a strided
 * copy for a column), compared bit for bit.  *bad set on a mismatch. */
static int read_back(run_ctx *c, dd_io *io, void *got, void *want, int64_t row, int64_t col,
                     int *bad, dd_err *err)
{
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    size_t es = dd_elsize(c->type), pitch = (size_t)rn.len * es;
    int is_row = col < 0;
    int64_t r0 = is_row ? row : rm.start, nr = is_row ? 1 : rm.len;
    int64_t c0 = is_row ? rn.start : col, nc = is_row ? rn.len : 1;
    int rc = io->ops->read_block(io, c->o->c, c->type, r0, nr, c0, nc, got, err);
    const char *src = (const char *)c->s.C + (is_row ? (size_t)(row - rm.start) * pitch
                                                     : (size_t)(col - rn.start) * es);
    dd_engine *e = &c->eng;
    if (!rc)
        rc = e->ops->download_async(e, want, (size_t)nc * es, src, pitch, (size_t)nc * es, nr,
                                    err);
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    if (!rc && memcmp(got, want, (size_t)(nr * nc) * es))
        *bad = 1;
    return rc;
}

/* The file, not the memory: every rank reads back from the closed
 * temporary the first, last and one middle row and column of its block of C
 * (the reader checks the dataset's shape and type on the way) and compares
 * them bit for bit with what it computed.  This catches a write that failed
 * without a word (MPI-IO on a full disk) or landed in the wrong place; cost:
 * a few rows and columns per rank. */
int run_verify_written(run_ctx *c, dd_err *err)
{
    dd_range rm = grid_block(c->M, c->g.P, c->g.p), rn = grid_block(c->N, c->g.Q, c->g.q);
    int64_t longest = rm.len > rn.len ? rm.len : rn.len;
    size_t len = (size_t)(longest ? longest : 1) * dd_elsize(c->type);
    char *buf = malloc(2 * len);
    dd_io io = {0};
    io.ops = &dd_io_independent;
    int rc = buf ? DD_OK : dd_fail(err, DD_ENOMEM, "out of host memory verifying the output");
    if ((rc = dd_agree(c->world, rc, err)) ||
        (rc = dd_agree(c->world, io.ops->open_read(&io, c->world, c->out.tmp, err), err))) {
        free(buf);
        return rc;
    }
    int bad = 0;
    for (int i = 0; i < 3 && !rc && rm.len && rn.len; i++) {
        int64_t r = rm.start + (i == 0 ? 0 : i == 1 ? rm.len - 1 : rm.len / 2);
        int64_t k = rn.start + (i == 0 ? 0 : i == 1 ? rn.len - 1 : rn.len / 2);
        rc = read_back(c, &io, buf, buf + len, r, -1, &bad, err);
        if (!rc)
            rc = read_back(c, &io, buf, buf + len, -1, k, &bad, err);
    }
    dd_err e2 = {{0}};
    int rc2 = io.ops->close(&io, &e2);
    if (!rc && rc2) {
        rc = rc2;
        *err = e2;
    }
    if (!rc && bad)
        rc = dd_fail(err, DD_ECHECK,
                     "the output written to %s does not read back as computed (rank %d's block "
                     "differs): the file system lost or misplaced data; %s was not written",
                     c->out.tmp, c->rank, c->o->out);
    free(buf);
    return dd_agree(c->world, rc, err);
}

