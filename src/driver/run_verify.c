/* run_verify.c — the check guards the files, not only the memory
 * (run_ctx.h): the blocks read are compared with the input file through a
 * second path, and the output is read back before it is committed.  Both
 * compare bit for bit; a difference is a failed verification (exit 3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "dd_fault.h"
#include "dd_splitmix.h"
#include "run_ctx.h"

/* ---- the inputs ---------------------------------------------------------------- */

/* Element (i, j) of block `which` in the plan, fetched to the host. */
static int block_element(run_ctx *c, int which, int64_t i, int64_t j, void *val, dd_err *err)
{
    return run_api(c, dd_plan_read(c->plan, (dd_operand)which, i, j, 1, 1, val, 1), err);
}

/* s·v in the file's type, as the engine's scale computes it (f32: s
 * rounded to float, one float multiply); s = 1 leaves v as read. */
static void scale_real(dd_dtype t, void *v, double s)
{
    if (s == 1)
        return;
    if (t == DD_F64) {
        double d;
        memcpy(&d, v, sizeof d);
        d *= s;
        memcpy(v, &d, sizeof d);
    } else {
        float f, fs = (float)s;
        memcpy(&f, v, sizeof f);
        f *= fs;
        memcpy(v, &f, sizeof f);
    }
}

/* (sr + si·i)·v in the file's type, v conjugated first with conj (op 'C'),
 * as the engine's cscale computes it: a real factor scales each part (the
 * imaginary one negated with conj); a complex one takes re·sr - im·si and
 * re·si + im·sr, each product and sum rounded on its own in the type (f32:
 * sr, si rounded to float), the C11 build contracting nothing.  Real
 * types: sr only (si is 0 there, the driver refuses it otherwise). */
static void scale_in_type(dd_dtype t, void *v, double sr, double si, int conj)
{
    if (!dd_dtype_complex(t)) {
        scale_real(t, v, sr);
        return;
    }
    dd_dtype r = dd_dtype_real(t);
    size_t h = dd_elsize(r);
    if (si == 0) {
        scale_real(r, v, sr);
        scale_real(r, (char *)v + h, conj ? -sr : sr);
        return;
    }
    if (t == DD_C128) {
        double x[2];
        memcpy(x, v, sizeof x);
        double re = x[0], im = conj ? -x[1] : x[1];
        x[0] = re * sr - im * si;
        x[1] = re * si + im * sr;
        memcpy(v, x, sizeof x);
    } else {
        float x[2], fr = (float)sr, fi = (float)si;
        memcpy(x, v, sizeof x);
        float re = x[0], im = conj ? -x[1] : x[1];
        x[0] = re * fr - im * fi;
        x[1] = re * fi + im * fr;
        memcpy(v, x, sizeof x);
    }
}

/* Bit for bit, except that two NaNs are the same (a scaled NaN's payload
 * is the engine's: the check reports NaN inputs, not the read-back). */
static int same_value(dd_dtype t, const void *a, const void *b)
{
    if (!memcmp(a, b, dd_elsize(t)))
        return 1;
    if (dd_dtype_complex(t)) {
        dd_dtype r = dd_dtype_real(t);
        size_t h = dd_elsize(r);
        return same_value(r, a, b) && same_value(r, (const char *)a + h, (const char *)b + h);
    }
    if (t == DD_F64) {
        double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return isnan(x) && isnan(y);
    }
    float x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return isnan(x) && isnan(y);
}

/* One block in work memory against the dataset it came from: rows×cols of
 * op(X) scaled by `scale`, whose element (i, j) is stored at (row0 + i,
 * col0 + j), or with trans at (row0 + j, col0 + i) (run_file_source's
 * coordinates). */
typedef struct {
    const char *dset;
    int block; /* 0 op(A), 1 op(B), 2 C */
    int64_t rows, cols, row0, col0;
    int trans;
    double scale[2]; /* re, im */
    int conj;        /* complex op 'C': the imaginary part negated in memory */
    uint64_t salt;
} sample_of;

/* Samples of one block: its four corners, its centre, and eight seeded
 * random elements, each compared bit for bit with scale × the stored value
 * at its place.  A whole block read from the wrong place (or not turned, or
 * not scaled) differs at its corners; one read element wrong is found only
 * if sampled. */
static int sample_block(run_ctx *c, dd_io *io, const sample_of *b, int *bad, dd_err *err)
{
    int64_t rows = b->rows, cols = b->cols;
    if (rows == 0 || cols == 0)
        return DD_OK;
    int64_t pick[13][2] = {
        {0, 0}, {0, cols - 1}, {rows - 1, 0}, {rows - 1, cols - 1}, {rows / 2, cols / 2}};
    for (int s = 5; s < 13; s++) {
        uint64_t h = dd_splitmix64(c->o->seed ^ b->salt ^ ((uint64_t)c->rank << 20) ^ (uint64_t)s);
        pick[s][0] = (int64_t)(h % (uint64_t)rows);
        pick[s][1] = (int64_t)((h >> 32) % (uint64_t)cols);
    }
    int rc = DD_OK;
    for (int s = 0; s < 13 && !rc; s++) {
        double file[2] = {0, 0}, mem[2] = {0, 0}; /* room for any type */
        int64_t i = pick[s][0], j = pick[s][1];
        rc = io->ops->read_block(io, b->dset, c->type, b->row0 + (b->trans ? j : i), 1,
                                 b->col0 + (b->trans ? i : j), 1, file, err);
        scale_in_type(c->type, file, b->scale[0], b->scale[1], b->conj);
        if (!rc)
            rc = block_element(c, b->block, i, j, mem, err);
        if (!rc && !same_value(c->type, file, mem))
            *bad = 1;
    }
    return rc;
}

/* The sampling plan of block `which` of the plan. */
static sample_of sample_plan(run_ctx *c, const char *dset, int which, int trans, double re,
                             double im, uint64_t salt)
{
    dd_range r = run_rows(c, which), k = run_cols(c, which);
    run_file f = run_file_at(c, NULL, dset, r, k, trans);
    const dd_run_opts *o = c->o;
    int conj = dd_dtype_complex(c->type) && (which == 0   ? o->transa == 'C'
                                             : which == 1 ? o->transb == 'C'
                                                          : 0);
    sample_of b = {dset, which, r.len, k.len, f.row0, f.col0, trans, {re, im}, conj, salt};
    return b;
}

/* Opens the input on the path that did not read the blocks, samples n
 * blocks (bad[i] set for a mismatch in block i), closes; not agreed. */
static int sample_input(run_ctx *c, const sample_of *b, int n, int *bad, dd_err *err)
{
    dd_io io = {0};
    io.ops = &dd_io_independent; /* not the path that read the blocks */
    int rc = dd_agree(c->world, io.ops->open_read(&io, c->world, c->o->in, err), err);
    if (rc)
        return rc;
    for (int i = 0; i < n && !rc; i++)
        rc = sample_block(c, &io, &b[i], &bad[i], err);
    rc = io_close_after(&io, rc, err);
    return rc;
}

/* A and B: not read when alpha = 0 (both parts: BLAS's rule), so nothing
 * to compare. */
int run_verify_inputs(run_ctx *c, dd_err *err)
{
    const dd_run_opts *o = c->o;
    if (!o->in || c->alpha0)
        return DD_OK;
    sample_of b[2] = {sample_plan(c, o->a, 0, c->tA, o->alpha, o->alpha_im, 0xA),
                      sample_plan(c, o->b, 1, c->tB, 1, 0, 0xB)};
    int bad[2] = {0, 0};
    int rc = sample_input(c, b, 2, bad, err);
    if (!rc && (bad[0] || bad[1]))
        rc = dd_fail(err, DD_ECHECK,
                     "matrix %s in memory on rank %d differs from %s%s: a block was read from the "
                     "wrong place or damaged on the way; the product would be of the wrong data",
                     bad[0] ? "A" : "B", c->rank, c->o->in,
                     bad[0] && (o->alpha != 1 || o->alpha_im != 0) ? " (times --alpha)" : "");
    return dd_agree(c->world, rc, err);
}

/* beta·C_in, right after the load (the multiply overwrites it). */
int run_verify_c_input(run_ctx *c, dd_err *err)
{
    sample_of b = sample_plan(c, c->o->c, 2, c->tC, c->o->beta, c->o->beta_im, 0xC);
    int bad = 0;
    int rc = sample_input(c, &b, 1, &bad, err);
    if (!rc && bad)
        rc = dd_fail(err, DD_ECHECK,
                     "C's input in memory on rank %d differs from --beta times \"%s\" in %s: it "
                     "was read from the wrong place or damaged on the way; the result would be "
                     "wrong",
                     c->rank, c->o->c, c->o->in);
    return dd_agree(c->world, rc, err);
}

/* Tests: one element of C off by a relative 1e-6, as a wrong kernel would. */
int run_fault_corrupt_c(run_ctx *c, dd_err *err)
{
    if (!dd_fault("corrupt-c") || c->pi.rows[2] == 0 || c->pi.cols[2] == 0)
        return DD_OK;
    double v[2] = {0, 0}; /* room for any type; the real part is changed */
    int rc = block_element(c, 2, 0, 0, v, err);
    if (dd_dtype_real(c->type) == DD_F64)
        v[0] *= 1 + 1e-6;
    else {
        float f;
        memcpy(&f, &v, sizeof f);
        f *= 1 + 1e-3f;
        memcpy(&v, &f, sizeof f);
    }
    if (!rc)
        rc = run_api(c, dd_plan_write(c->plan, DD_OPERAND_C, 0, 0, 1, 1, &v, 1), err);
    return rc;
}

/* ---- the output ------------------------------------------------------------------ */

/* One row (col < 0) or one column (row < 0) of my block, read back from the
 * file into got[] and fetched from C in the plan into want[], compared bit
 * for bit.  *bad set on a mismatch. */
static int read_back(run_ctx *c, dd_io *io, void *got, void *want, int64_t row, int64_t col,
                     int *bad, dd_err *err)
{
    dd_range rm = run_rows(c, 2), rn = run_cols(c, 2);
    size_t es = dd_elsize(c->type);
    int is_row = col < 0;
    int64_t r0 = is_row ? row : rm.start, nr = is_row ? 1 : rm.len;
    int64_t c0 = is_row ? rn.start : col, nc = is_row ? rn.len : 1;
    int rc = c->tC /* the dataset holds Cᵀ: the same run of values, turned */
                 ? io->ops->read_block(io, c->o->c, c->type, c0, nc, r0, nr, got, err)
                 : io->ops->read_block(io, c->o->c, c->type, r0, nr, c0, nc, got, err);
    if (!rc)
        rc = run_api(
            c, dd_plan_read(c->plan, DD_OPERAND_C, r0 - rm.start, c0 - rn.start, nr, nc, want, nc),
            err);
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
    dd_range rm = run_rows(c, 2), rn = run_cols(c, 2);
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
    rc = io_close_after(&io, rc, err);
    if (!rc && bad)
        rc = dd_fail(err, DD_ECHECK,
                     "the output does not read back as computed (rank %d's block differs): the "
                     "file system lost or misplaced data; %s was not written",
                     c->rank, c->o->out);
    free(buf);
    return dd_agree(c->world, rc, err);
}
