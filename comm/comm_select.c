/* comm_select.c — the one place that picks a comm backend by name (comm.h). */
#include <stdio.h>
#include <string.h>

#include "agree.h"
#include "comm.h"

static int is_ce(const char *name)
{
    return !strcmp(name, "ce") || !strcmp(name, "cuda-ipc");
}

int comm_known(const char *name)
{
    return !strcmp(name, "auto") || !strcmp(name, "nccl") || !strcmp(name, "mpi") || is_ce(name);
}

const char *comm_gpu_choice(const char *name, int maxshared, int with_ce)
{
    int autoname = !strcmp(name, "auto"), alone = maxshared == 1;
    if (is_ce(name) || (with_ce && autoname && alone))
        return "ce";
    if (!strcmp(name, "nccl") || (autoname && alone))
        return "nccl";
    return "mpi";
}

/* The backend serving cfg's memory that `name` asks for (on GPUs:
 * comm_gpu_choice's), or NULL with a usage error. */
static const dd_comm_ops *pick(const char *name, const dd_comm_cfg *cfg, int maxshared, int with_ce,
                               dd_err *err)
{
    if (cfg->work_is_host) {
        if (!strcmp(name, "nccl") || is_ce(name)) {
            dd_fail(err, DD_EUSAGE,
                    "--comm %s needs the CUDA backend; the CPU backend broadcasts with MPI "
                    "(use --comm mpi or auto)",
                    name);
            return NULL;
        }
        return &dd_comm_mpi_host;
    }
#ifdef DD_HAVE_CUDA
    const char *b = comm_gpu_choice(name, maxshared, with_ce);
    if (!strcmp(b, "ce"))
        return &dd_comm_ce;
#ifdef DD_HAVE_NCCL
    if (!strcmp(b, "nccl"))
        return &dd_comm_nccl;
#else
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
    (void)with_ce;
    dd_fail(err, DD_EUSAGE, "this dgemm-dist was built without CUDA: no comm backend for GPUs");
    return NULL;
#endif
}

/* The copy engines refused here (agreed): auto's next backend, its detail
 * saying why. */
static int fall_back(const dd_comm_cfg *cfg, int maxshared, dd_comm *c, dd_err *err)
{
    char why[DD_ERRLEN];
    snprintf(why, sizeof why, "%s", err->msg);
    dd_err_clear(err);
    memset(c, 0, sizeof *c);
    const dd_comm_ops *ops = pick("auto", cfg, maxshared, 0, err);
    if (!ops)
        return dd_agree(cfg->world, DD_EUSAGE, err);
    c->ops = ops;
    int rc = dd_agree(cfg->world, ops->open(c, cfg, err), err);
    if (rc) {
        c->ops = NULL;
        return rc;
    }
    char detail[sizeof c->detail];
    snprintf(detail, sizeof detail, "%s", c->detail);
    snprintf(c->detail, sizeof c->detail, "%.48s; ce refused: %.95s", detail, why);
    return DD_OK;
}

int comm_select(const char *name, const dd_comm_cfg *cfg, dd_comm *c, dd_err *err)
{
    memset(c, 0, sizeof *c);
    int maxshared = 1;
    int rc = dd_mpi_check(
        MPI_Allreduce(&cfg->ranks_per_device, &maxshared, 1, MPI_INT, MPI_MAX, cfg->world),
        "MPI_Allreduce", err);
    const dd_comm_ops *ops = rc ? NULL : pick(name, cfg, maxshared, 1, err);
    if (!ops)
        return dd_agree(cfg->world, rc ? rc : DD_EUSAGE, err);
    c->ops = ops;
    /* A backend that opened here while another rank failed stays open: its
     * teardown may wait on peers that are leaving; the process exits next. */
    rc = dd_agree(cfg->world, ops->open(c, cfg, err), err);
    if (rc == DD_EUNSUP && is_ce(ops->name))
        return fall_back(cfg, maxshared, c, err);
    if (rc)
        c->ops = NULL;
    return rc;
}
