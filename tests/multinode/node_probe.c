/* node_probe.c — for the two-node test (tests/multinode/): what each rank
 * of a launch would see when dgemm-dist picks its GPU.  dgemm-dist splits
 * the world by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED, key = world rank)
 * into the ranks of one host (src/driver/run.c) and picks GPU
 * node-rank % GPUs-on-the-host (src/engine/engine_cuda.c, pick_device);
 * this does the same split, without CUDA, and rank 0 prints one line per
 * rank:
 *
 *   rank R host H node_rank L node_size S launcher_local_rank E gpu G
 *
 * E is what the launcher says (OMPI_COMM_WORLD_LOCAL_RANK under mpirun,
 * SLURM_LOCALID under srun, -1 if neither is set); G is the GPU the rank
 * would use on a host of DD_PROBE_GPUS GPUs (default 2). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char host[64];
    int node_rank, node_size, env_local, gpu;
} probe_row;

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);

    probe_row me;
    memset(&me, 0, sizeof me);
    gethostname(me.host, sizeof me.host - 1);
    MPI_Comm_rank(node, &me.node_rank);
    MPI_Comm_size(node, &me.node_size);
    me.env_local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("SLURM_LOCALID", -1));
    int gpus = env_int("DD_PROBE_GPUS", 2);
    me.gpu = me.node_rank % (gpus > 0 ? gpus : 1);

    probe_row *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; all && r < size; r++)
            printf("rank %d host %s node_rank %d node_size %d launcher_local_rank %d gpu %d\n", r,
                   all[r].host, all[r].node_rank, all[r].node_size, all[r].env_local, all[r].gpu);
        fflush(stdout);
    }
    free(all);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
