/* main.c — dgemm-dist: the command line, MPI start-up, dispatch. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "dd_launch.h"
#include "run.h"
#include "timer.h"

/* A command line that needs no run (a refusal, --help, --help-env,
 * --version) in a process no launcher started: answered before MPI, whose
 * singleton start costs more than the answer.  Under a launcher the ranks
 * start MPI first and rank 0 answers after it, as for any other failure:
 * a rank that left at once would have the launcher end the others, rank 0
 * perhaps before it spoke. */
static int answer(const dd_cli *o, int bad, const dd_err *err)
{
    if (bad) {
        fprintf(stderr, "dgemm-dist: error: %s\n", err->msg[0] ? err->msg : "bad command line");
        fflush(stderr);
        return DD_EXIT_USAGE;
    }
    if (o->help)
        cli_usage("dgemm-dist", o->cmd == DD_CMD_GEN);
    else if (o->help_env)
        cli_usage_env();
    else if (o->version)
        printf("dgemm-dist %s\n", DGEMM_DIST_VERSION_STRING);
    return DD_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* A write past the file-size limit (ulimit -f) fails with EFBIG instead
     * of killing the rank without a word: every rank then agrees on the
     * error, says which limit was hit, and removes the temporary. */
    signal(SIGXFSZ, SIG_IGN);
    /* the wall account starts when the launcher (mpirun, srun) did, before MPI */
    double t_main = dd_now();
    double t_start = t_main - dd_launcher_age();
    dd_cli o;
    dd_err err = {{0}};
    int bad = cli_parse(argc, argv, &o, &err), no_run = bad || o.help || o.help_env || o.version;
    if (no_run && dd_launch_singleton())
        return answer(&o, bad, &err);
    /* the GPU's context made while MPI starts (dd_prestart_device) */
    if (!no_run)
        run_head_start(argc, argv);
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "dgemm-dist: error: MPI_Init_thread failed\n");
        return DD_EXIT_ERROR;
    }
    double t_mpi = dd_now();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, status;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (no_run) {
        status = rank == 0 ? answer(&o, bad, &err) : bad ? DD_EXIT_USAGE : DD_EXIT_OK;
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
