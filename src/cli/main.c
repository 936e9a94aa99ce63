/* main.c — dgemm-dist: MPI start-up, the command line, dispatch. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "agree.h"
#include "cli.h"
#include "dd_launch.h"
#include "run.h"
#include "timer.h"

int main(int argc, char **argv)
{
    /* A write past the file-size limit (ulimit -f) fails with EFBIG instead
     * of killing the rank without a word: every rank then agrees on the
     * error, says which limit was hit, and removes the temporary. */
    signal(SIGXFSZ, SIG_IGN);
    /* the wall account starts when the launcher (mpirun, srun) did, before MPI */
    double t_main = dd_now();
    double t_start = t_main - dd_launcher_age();
    /* the GPU's context made while MPI starts (dd_prestart_device) */
    run_head_start(argc, argv);
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "dgemm-dist: error: MPI_Init_thread failed\n");
        return DD_EXIT_ERROR;
    }
    double t_mpi = dd_now();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    dd_cli o;
    dd_err err = {{0}};
    int status;
    if (cli_parse(argc, argv, &o, &err)) {
        dd_report_error(MPI_COMM_WORLD, &err);
        status = DD_EXIT_USAGE;
    } else if (o.help) {
        if (rank == 0)
            cli_usage("dgemm-dist", o.cmd == DD_CMD_GEN);
        status = DD_EXIT_OK;
    } else if (o.help_env) {
        if (rank == 0)
            cli_usage_env();
        status = DD_EXIT_OK;
    } else if (o.version) {
        if (rank == 0)
            printf("dgemm-dist %s\n", DGEMM_DIST_VERSION_STRING);
        status = DD_EXIT_OK;
    } else {
        o.run.t_start = t_start;
        o.run.t_main = t_main;
        o.run.t_mpi = t_mpi;
        status = o.cmd == DD_CMD_GEN ? dd_gen(&o.run) : dd_run(&o.run);
    }
    int done = 0; /* a run finalizes MPI itself, to account for it */
    MPI_Finalized(&done);
    if (!done) {
        MPI_Finalize();
        run_head_end(); /* a head start no run used */
    }
    return status;
}
