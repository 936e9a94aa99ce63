/* run_pipe_loop.c — the file-to-file pipeline's band loops on the main
 * thread (run_pipe.h): each band of op(A) put into the plan, multiplied
 * over the whole K and its band of C taken down, every band agreed, the
 * I/O threads (src/driver/run_pipe_io.c) fed and waited for.
 * src/driver/run_pipe.c sets the pipeline up, runs one of these loops and
 * takes its figures. */
#include "agree.h"
#include "dd_fault.h"
#include "run_pipe.h"
#include "timer.h"

/* Band rows [r0, r0 + h) of C multiplied over the whole K, its times
 * added up; a broken broadcast ends the job (no peer may be waiting). */
static int multiply_band(run_ctx *c, int64_t r0, int64_t h, double *mult, double *gemm,
                         double *slowest, dd_err *err)
{
    dd_plan_times t = {0, 0, 0};
    int rc = run_api(c, dd_plan_multiply_rows(c->plan, r0, h, &t), err);
    if (rc == DD_ECOMM)
        dd_abort_all(c->world, err);
    *mult += t.seconds;
    *gemm += t.gemm_seconds;
    *slowest += t.slowest;
    return rc;
}

/* The band loop through the plan's moves (the GPU backend, or
 * DD_FAULT=pipe-slots on the CPU): band i+1 of op(A) is put
 * (dd_plan_put_rows) before band i multiplies, so its upload runs during
 * that multiply, and band i of C is taken down behind its multiply
 * (dd_plan_take_rows, or dd_plan_take_rows_to straight into its slot) and
 * ended after band i+1's multiply, so its download runs during that one.
 *
 * Where the slots are the plan's pinned memory (p->pinned) the copy
 * engines move the bands between the slots and the GPU and the main
 * thread copies nothing: a slot of op(A) is the reader's again once the
 * multiply of its band has returned (three slots, so the read of band i+1
 * runs during band i-1's multiply), a slot of C once its band is written.
 * Otherwise dd_plan_put_rows packs the slot into the context's staging
 * (free on return) and dd_plan_take_rows_end unpacks into it.  Every rank
 * makes the same calls and agrees each band; on any failure every copy
 * in flight is drained before the return. */
int pipe_staged_loop(pipe_t *p, double *mult, double *gemm, double *slowest, double *waits,
                     double *moves, dd_err *err)
{
    run_ctx *c = p->c;
    int64_t r0, h;
    *waits += pipe_wait(p, &p->a_read, 1);
    int rc = pipe_io_failed(p, err);
    double t0 = dd_now();
    band_rows(p, 0, &r0, &h);
    if (!rc)
        rc = run_api(c, dd_plan_put_rows(c->plan, r0, h, p->abuf[0], p->Kq), err);
    moves[0] += dd_now() - t0;
    if (!p->pinned)
        pipe_publish(p, &p->a_used, 1); /* the slot is copied out: the reader may refill it */
    rc = dd_agree(c->world, rc, err);
    for (int64_t i = 0; i < p->nb && !rc; i++) {
        if (i + 1 < p->nb) {
            *waits += pipe_wait(p, &p->a_read, i + 2);
            rc = pipe_io_failed(p, err);
            t0 = dd_now();
            band_rows(p, i + 1, &r0, &h);
            if (!rc)
                rc = run_api(
                    c, dd_plan_put_rows(c->plan, r0, h, p->abuf[(i + 1) % p->na], p->Kq), err);
            moves[0] += dd_now() - t0;
            if (!p->pinned)
                pipe_publish(p, &p->a_used, i + 2);
        }
        if ((rc = dd_agree(c->world, rc, err)))
            break;
        band_rows(p, i, &r0, &h);
        if ((rc = multiply_band(c, r0, h, mult, gemm, slowest, err)))
            break;
        if (p->pinned) /* band i is up and multiplied: its slot is free */
            pipe_publish(p, &p->a_used, i + 1);
        /* band i-1 of C, down during band i's multiply, into (or in) its
         * slot: given to the writer */
        if (i >= 1) {
            if (i >= 3 && !p->pinned) /* the slot is free once band i-3 is written */
                *waits += pipe_wait(p, &p->c_written, i - 2);
            rc = pipe_io_failed(p, err);
            if (!rc && i - 1 == p->nb / 2 && dd_fault("pipe-store"))
                rc = dd_fail(err, DD_EFAIL, "injected fault storing band %lld of C on rank %d",
                             (long long)(i - 1), c->rank);
            t0 = dd_now();
            if (!rc)
                rc = run_api(c, dd_plan_take_rows_end(c->plan, p->cbuf[(i - 1) % 2], p->Nq), err);
            moves[1] += dd_now() - t0;
            if (!rc)
                pipe_publish(p, &p->c_given, i);
        }
        if (!rc && i >= 2 && p->pinned) /* band i lands in band i-2's slot: written first */
            *waits += pipe_wait(p, &p->c_written, i - 1);
        if (!rc)
            rc = pipe_io_failed(p, err);
        t0 = dd_now();
        if (!rc)
            rc = run_api(c,
                         p->pinned ? dd_plan_take_rows_to(c->plan, r0, h, p->cbuf[i % 2], p->Nq)
                                   : dd_plan_take_rows(c->plan, r0, h),
                         err);
        moves[1] += dd_now() - t0;
        rc = dd_agree(c->world, rc, err);
    }
    if (!rc) { /* the last band of C */
        if (p->nb >= 3 && !p->pinned)
            *waits += pipe_wait(p, &p->c_written, p->nb - 2);
        rc = pipe_io_failed(p, err);
        if (!rc && p->nb - 1 == p->nb / 2 && dd_fault("pipe-store"))
            rc = dd_fail(err, DD_EFAIL, "injected fault storing band %lld of C on rank %d",
                         (long long)(p->nb - 1), c->rank);
        t0 = dd_now();
        if (!rc)
            rc = run_api(c, dd_plan_take_rows_end(c->plan, p->cbuf[(p->nb - 1) % 2], p->Nq), err);
        moves[1] += dd_now() - t0;
        if (!rc)
            pipe_publish(p, &p->c_given, p->nb);
        rc = dd_agree(c->world, rc, err);
    }
    if (rc) { /* nothing staged lands after the return */
        dd_err ignored;
        dd_err_clear(&ignored);
        run_api(c, dd_plan_rows_drain(c->plan), &ignored);
    }
    if (!rc) { /* the last bands' writes */
        *waits += pipe_wait(p, &p->c_written, p->nb);
        rc = pipe_io_failed(p, err);
    }
    return dd_agree(c->world, rc, err);
}

/* The band loop over started I/O threads.  Every rank makes the same
 * calls: each band starts with an agreement on every rank's state. */
int pipe_band_loop(pipe_t *p, double *mult, double *gemm, double *slowest, double *waits,
                   double *moves, dd_err *err)
{
    run_ctx *c = p->c;
    int rc = DD_OK;
    for (int64_t i = 0; i < p->nb && !rc; i++) {
        int64_t r0, h;
        band_rows(p, i, &r0, &h);
        *waits += pipe_wait(p, &p->a_read, i + 1);
        rc = pipe_io_failed(p, err);
        double t0 = dd_now();
        if (!rc && !p->hA)
            rc = run_api(c, dd_plan_write(c->plan, DD_OPERAND_A, r0, 0, h, p->Kq, p->abuf[i % 2],
                                          p->Kq),
                         err);
        moves[0] += dd_now() - t0;
        pipe_publish(p, &p->a_used, i + 1);
        if ((rc = dd_agree(c->world, rc, err)))
            break;
        if ((rc = multiply_band(c, r0, h, mult, gemm, slowest, err)))
            break;
        if (i >= 2) /* slot i % 2 is free once band i - 2 is written */
            *waits += pipe_wait(p, &p->c_written, i - 1);
        rc = pipe_io_failed(p, err);
        if (!rc && i == p->nb / 2 && dd_fault("pipe-store"))
            rc = dd_fail(err, DD_EFAIL, "injected fault storing band %lld of C on rank %d",
                         (long long)i, c->rank);
        t0 = dd_now();
        if (!rc && !p->hC)
            rc = run_api(c, dd_plan_read(c->plan, DD_OPERAND_C, r0, 0, h, p->Nq, p->cbuf[i % 2],
                                         p->Nq),
                         err);
        moves[1] += dd_now() - t0;
        if (!rc)
            pipe_publish(p, &p->c_given, i + 1);
        rc = dd_agree(c->world, rc, err);
    }
    if (!rc) { /* the last bands' writes */
        *waits += pipe_wait(p, &p->c_written, p->nb);
        rc = pipe_io_failed(p, err);
    }
    return dd_agree(c->world, rc, err);
}
