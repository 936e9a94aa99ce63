/* test_launch.c — dd_launch_local_rank (src/base/dd_launch.h): the node-local
 * rank each launcher's environment gives, in the header's order, a value
 * that is no whole number >= 0 passed over, 0 for a singleton and -1 where a
 * launcher ran but gave no local rank.  Run without MPI (the variables of
 * ctest's mpirun are cleared first). */
#include <stdio.h>
#include <stdlib.h>

#include "dd_launch.h"

static int g_fail;

static void expect(int want, const char *what)
{
    int got = dd_launch_local_rank();
    if (got != want) {
        fprintf(stderr, "FAIL: %s: %d, expected %d\n", what, got, want);
        g_fail = 1;
    } else {
        printf("ok   %s: %d\n", what, got);
    }
}

int main(void)
{
    const char *all[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                         "PALS_LOCAL_RANKID", "SLURM_LOCALID", "OMPI_COMM_WORLD_SIZE",
                         "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        unsetenv(all[i]);
    expect(0, "singleton");
    setenv("PMIX_RANK", "3", 1);
    expect(-1, "a launcher that gives no local rank");
    setenv("SLURM_LOCALID", "2", 1);
    expect(2, "srun");
    setenv("PMI_LOCAL_RANK", "5", 1);
    expect(5, "PMI before srun's");
    setenv("MPI_LOCALRANKID", "x1", 1);
    expect(5, "not a number: passed over");
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "7", 1);
    expect(7, "Open MPI first");
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "-1", 1);
    expect(5, "a negative rank: passed over");
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "99999999999", 1);
    expect(5, "out of range: passed over");
    return g_fail;
}
