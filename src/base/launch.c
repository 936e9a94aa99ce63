/* launch.c — how long the launcher ran before this process (dd_launch.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dd_launch.h"

/* Field 22 of /proc/PID/stat: the start time in clock ticks since boot. */
static double started_at(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long ticks = 0;
    if (!p || sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                     "%*d %*d %llu",
                     &ticks) != 1)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)ticks / (double)hz : -1;
}

static int is_launcher(long pid)
{
    static const char *const names[] = {"mpirun",        "mpiexec", "orterun",    "prterun",
                                        "orted",         "prted",   "slurmstepd", "hydra_pmi_proxy",
                                        "mpiexec.hydra", NULL};
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fscanf(f, "%63s", comm) == 1;
    fclose(f);
    for (int i = 0; ok && names[i]; i++)
        if (!strcmp(comm, names[i]))
            return 1;
    return 0;
}

/* v as a local rank: a whole number in [0, 2^20), else -1. */
static int local_rank_of(const char *v)
{
    char *end = NULL;
    long r = v && *v ? strtol(v, &end, 10) : -1;
    return v && *v && end && !*end && r >= 0 && r < 1 << 20 ? (int)r : -1;
}

int dd_launch_local_rank(void)
{
    const char *local[] = {getenv("OMPI_COMM_WORLD_LOCAL_RANK"), getenv("MPI_LOCALRANKID"),
                           getenv("PMI_LOCAL_RANK"), getenv("PALS_LOCAL_RANKID"),
                           getenv("SLURM_LOCALID")};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (local_rank_of(local[i]) >= 0)
            return local_rank_of(local[i]);
    return dd_launch_singleton() ? 0 : -1;
}

int dd_launch_singleton(void)
{
    const char *world[] = {getenv("OMPI_COMM_WORLD_SIZE"), getenv("OMPI_COMM_WORLD_RANK"),
                           getenv("OMPI_COMM_WORLD_LOCAL_RANK"), getenv("PMI_SIZE"),
                           getenv("PMI_RANK"), getenv("PMI_LOCAL_RANK"), getenv("PMIX_RANK"),
                           getenv("MPI_LOCALRANKID"), getenv("PALS_LOCAL_RANKID"),
                           getenv("SLURM_PROCID"), getenv("SLURM_LOCALID")};
    for (size_t i = 0; i < sizeof world / sizeof world[0]; i++)
        if (world[i])
            return 0;
    return 1;
}

long dd_launcher_pid(void)
{
    long parent = (long)getppid();
    return is_launcher(parent) ? parent : 0;
}

double dd_launcher_age(void)
{
    long parent = (long)getppid();
    if (!is_launcher(parent))
        return 0;
    double up = -1, start = started_at(parent);
    FILE *f = fopen("/proc/uptime", "r");
    if (f) {
        if (fscanf(f, "%lf", &up) != 1)
            up = -1;
        fclose(f);
    }
    return up > 0 && start >= 0 && up > start ? up - start : 0;
}
