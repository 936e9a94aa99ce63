/* api_exchange.c — the all-to-all exchange of a redistribution
 * (api_redist.h) with 64-bit counts: MPI_Alltoallv when everything fits
 * in MPI's int, else rounds of MPI_Alltoallw whose per-peer datatypes carry
 * 64-bit byte displacements (MPI_Aint) and at most rd_count_limit()
 * elements each. */
#include <stdlib.h>

#include "agree.h"
#include "api_redist.h"
#include "dd_fault.h"
#include "dd_knobs.h"

/* DD_REDIST_LIMIT (a test hook, dd_knobs.h: 1..INT_MAX, default INT_MAX). */
int64_t rd_count_limit(void)
{
    return dd_knob_int(DDK_REDIST_LIMIT);
}

static int one_call(MPI_Comm comm, MPI_Datatype dt, int size, const void *sbuf,
                    const int64_t *scount, const int64_t *sdisp, void *rbuf, const int64_t *rcount,
                    const int64_t *rdisp, dd_err *err)
{
    /* DD_FAULT=exchange-alloc:<rank>: that rank's buffers are not had (tests) */
    int *v = dd_fault("exchange-alloc") ? NULL : malloc(sizeof *v * 4 * (size_t)size);
    /* a rank short of memory says so to all, not only by leaving the call */
    int rc = dd_agree(
        comm, v ? DD_OK : dd_fail(err, DD_ENOMEM, "out of host memory for an exchange's counts"),
        err);
    if (rc) {
        free(v);
        return rc;
    }
    for (int r = 0; r < size; r++) {
        v[r] = (int)scount[r];
        v[size + r] = (int)sdisp[r];
        v[2 * size + r] = (int)rcount[r];
        v[3 * size + r] = (int)rdisp[r];
    }
    rc = dd_mpi_check(
        MPI_Alltoallv(sbuf, v, v + size, dt, rbuf, v + 2 * size, v + 3 * size, dt, comm),
        "MPI_Alltoallv (a redistribution)", err);
    free(v);
    return rc;
}

/* Round `round`'s part of each peer's slice: count in [0, limit] at
 * element offset disp + round·limit, as a datatype of one block at that
 * byte offset (types[r] = dt and counts[r] = 0 when nothing is left). */
static int round_types(MPI_Datatype dt, size_t es, int size, const int64_t *count,
                       const int64_t *disp, int64_t round, int64_t limit, int *counts,
                       MPI_Datatype *types, dd_err *err)
{
    int rc = DD_OK;
    for (int r = 0; r < size; r++) {
        int64_t left = count[r] - round * limit;
        types[r] = dt;
        counts[r] = 0;
        if (left <= 0 || rc)
            continue;
        int len = (int)(left < limit ? left : limit);
        MPI_Aint at = (MPI_Aint)((disp[r] + round * limit) * (int64_t)es);
        rc = dd_mpi_check(MPI_Type_create_hindexed(1, &len, &at, dt, &types[r]),
                          "MPI_Type_create_hindexed", err);
        if (!rc)
            rc = dd_mpi_check(MPI_Type_commit(&types[r]), "MPI_Type_commit", err);
        if (rc)
            types[r] = dt;
        else
            counts[r] = 1;
    }
    return rc;
}

static void free_types(int size, MPI_Datatype dt, MPI_Datatype *types)
{
    for (int r = 0; r < size; r++)
        if (types[r] != dt)
            MPI_Type_free(&types[r]);
}

static int rounds(MPI_Comm comm, MPI_Datatype dt, size_t es, int size, const void *sbuf,
                  const int64_t *scount, const int64_t *sdisp, void *rbuf, const int64_t *rcount,
                  const int64_t *rdisp, int64_t limit, int64_t nround, dd_err *err)
{
    int *v = dd_fault("exchange-alloc") ? NULL : calloc(4 * (size_t)size, sizeof *v);
    MPI_Datatype *ty = malloc(sizeof *ty * 2 * (size_t)size);
    /* the buffers, each round's types and each round's exchange agreed: a
     * rank that stops stops with every rank, not alone between rounds */
    int rc = dd_agree(
        comm,
        v && ty ? DD_OK : dd_fail(err, DD_ENOMEM, "out of host memory for an exchange's datatypes"),
        err);
    if (rc) {
        free(v);
        free(ty);
        return rc;
    }
    int *sc = v, *sd = v + size, *rcn = v + 2 * size, *rd = v + 3 * size; /* sd, rd stay 0 */
    for (int64_t t = 0; t < nround && !rc; t++) {
        int r1 = round_types(dt, es, size, scount, sdisp, t, limit, sc, ty, err);
        int r2 = round_types(dt, es, size, rcount, rdisp, t, limit, rcn, ty + size, err);
        /* a failed type creation is local: agreed before the collective */
        if (!(rc = dd_agree(comm, r1 ? r1 : r2, err)))
            rc = dd_agree(
                comm,
                dd_mpi_check(MPI_Alltoallw(sbuf, sc, sd, ty, rbuf, rcn, rd, ty + size, comm),
                             "MPI_Alltoallw (a redistribution, in rounds)", err),
                err);
        free_types(size, dt, ty);
        free_types(size, dt, ty + size);
    }
    free(v);
    free(ty);
    return rc;
}

int rd_exchange(MPI_Comm comm, MPI_Datatype dt, size_t es, const void *sbuf, const int64_t *scount,
                const int64_t *sdisp, void *rbuf, const int64_t *rcount, const int64_t *rdisp,
                dd_err *err)
{
    int size;
    MPI_Comm_size(comm, &size);
    int64_t limit = rd_count_limit(), big = 0; /* the largest count or end, and pair count */
    int64_t mine[2] = {0, 0}, all[2];
    for (int r = 0; r < size; r++) {
        int64_t e = sdisp[r] + scount[r] > rdisp[r] + rcount[r] ? sdisp[r] + scount[r]
                                                                : rdisp[r] + rcount[r];
        mine[0] = e > mine[0] ? e : mine[0];
        big = scount[r] > rcount[r] ? scount[r] : rcount[r];
        mine[1] = big > mine[1] ? big : mine[1];
    }
    /* every rank takes the same road, or none: a failed reduction here is
     * agreed before any rank goes on to the exchange */
    int rc = dd_agree(comm,
                      dd_mpi_check(MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, comm),
                                   "MPI_Allreduce (a redistribution's sizes)", err),
                      err);
    if (rc)
        return rc;
    if (all[0] <= limit)
        return one_call(comm, dt, size, sbuf, scount, sdisp, rbuf, rcount, rdisp, err);
    return rounds(comm, dt, es, size, sbuf, scount, sdisp, rbuf, rcount, rdisp, limit,
                  (all[1] + limit - 1) / limit, err);
}
