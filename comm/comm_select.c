/* comm_select.c — the one place that picks a comm backend by name (comm.h). */
#include <string.h>

#include "agree.h"
#include "comm.h"

/* The backend serving cfg's memory that `name` asks for, or NULL with a
 * usage error.  maxshared: most ranks sharing one GPU anywhere. */
static const dd_comm_ops *pick(const char *name, const dd_comm_cfg *cfg, int maxshared, dd_err *err)
{
    if (cfg->work_is_host) {
        if (!strcmp(name, "nccl")) {
            dd_fail(err, DD_EUSAGE,
                    "--comm nccl needs the CUDA backend; the CPU backend broadcasts with MPI "
                    "(use --comm mpi or auto)");
            return NULL;
        }
        return &dd_comm_mpi_host;
    }
#ifdef DD_HAVE_CUDA
#ifdef DD_HAVE_NCCL
    if (!strcmp(name, "nccl") || (!strcmp(name, "auto") && maxshared == 1))
        return &dd_comm_nccl;
#else
    (void)maxshared;
    if (!strcmp(name, "nccl")) {
        dd_fail(err, DD_EUSAGE,
                "--comm nccl: this dgemm-dist was built without NCCL; use --comm mpi or rebuild "
                "with NCCL");
        return NULL;
    }
#endif
    return &dd_comm_mpi_gpu;
#else
    (void)maxshared;
    dd_fail(err, DD_EUSAGE, "this dgemm-dist was built without CUDA: no comm backend for GPUs");
    return NULL;
#endif
}

int comm_select(const char *name, const dd_comm_cfg *cfg, dd_comm *c, dd_err *err)
{
    memset(c, 0, sizeof *c);
    int maxshared = 1;
    int rc = dd_mpi_check(
        MPI_Allreduce(&cfg->ranks_per_device, &maxshared, 1, MPI_INT, MPI_MAX, cfg->world),
        "MPI_Allreduce", err);
    const dd_comm_ops *ops = rc ? NULL : pick(name, cfg, maxshared, err);
    if (!ops)
        return dd_agree(cfg->world, rc ? rc : DD_EUSAGE, err);
    c->ops = ops;
    /* A backend that opened here while another rank failed stays open: its
     * teardown may wait on peers that are leaving; the process exits next. */
    rc = dd_agree(cfg->world, ops->open(c, cfg, err), err);
    if (rc)
        c->ops = NULL;
    return rc;
}
